//! Commands that change beliefs on a person's word: explicit edits, forgetting, conflict
//! resolutions and their reverts. Each is compare-and-set against the state it was asked about:
//! a mismatch writes nothing and says what the state is now.
//!
//! Each function here plans one command from what a `Reader` finds (with its input already
//! validated): the events to append and the command's result, whose `seqs` the caller fills in
//! once they are appended against the head the plan was made on.

use memledger_ledger::NewEvent;
use memledger_projector::conflicts::ConflictStatus;
use memledger_schemas::chain::content_hash;
use memledger_schemas::*;
use serde::Serialize;

use crate::error::{BadInput, Conflict, EngineError};
use crate::expiry::ExpiryChange;
use crate::reads::Reader;

/// The result of `update`.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct UpdateResult {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    pub replaces: MemoryId,
    pub seqs: Vec<u64>,
}

/// The result of `forget`.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ForgetResult {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub seqs: Vec<u64>,
}

/// The result of a resolution or a revert.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ResolveResult {
    pub conflict_id: ConflictId,
    pub status: String,
    pub action: Option<ResolutionAction>,
    pub effects: Vec<Effect>,
    /// The memory a `merge` introduced.
    pub merged_memory_id: Option<MemoryId>,
    pub seqs: Vec<u64>,
}

/// An explicit edit: a new version of the belief, unconditionally, optionally only if the
/// current version is `expect_version`.
///
/// Without a new text the text stays and only the expiry changes; an expiry not mentioned
/// (`ExpiryChange::Keep`) is the current version's.
pub(crate) fn plan_update(
    reader: Reader<'_>,
    id: MemoryId,
    text: Option<String>,
    expect_version: Option<u32>,
    authority: Authority,
    expiry: ExpiryChange,
) -> Result<(Vec<NewEvent>, UpdateResult), EngineError> {
    let current = reader.current_of(id)?;
    if let Some(expected) = expect_version
        && expected != current.version
    {
        return Err(Conflict::VersionMoved { expected, current: current.version, memory_id: current.memory_id }.into());
    }
    if text.is_none() && expiry == ExpiryChange::Keep {
        return Err(BadInput::UpdateChangesNothing.into());
    }
    if text.is_none() && current.erased.is_some() {
        return Err(BadInput::AlreadyErased(current.memory_id.to_string()).into());
    }
    let text = text.unwrap_or_else(|| current.text.clone());
    let held = (current.expires_at, current.ttl_seconds);
    let (expires_at, ttl_seconds) = expiry.against(held, Timestamp::now()).applied_to(held);
    let memory_id = MemoryId::random();
    let version = reader.next_version(current.root_id)?;
    let events: Vec<NewEvent> = vec![
        EventBody::MemoryObserved(MemoryObserved {
            memory_id,
            content_hash: content_hash(&text),
            text,
            memory_type: current.memory_type,
            scope: current.scope.clone(),
            source: Some(authority.as_str().to_string()),
            fact_key: current.fact_key.clone(),
            effective_at: None,
            dedup: false,
            evidence: None,
            origin: None,
            expires_at,
            ttl_seconds,
        })
        .into(),
        EventBody::BeliefEdited(BeliefEdited {
            memory_id,
            root_id: current.root_id,
            version,
            replaces: current.memory_id,
            expected_version: expect_version,
        })
        .into(),
    ];
    let result =
        UpdateResult { memory_id, root_id: current.root_id, version, replaces: current.memory_id, seqs: Vec::new() };
    Ok((events, result))
}

/// Retire a belief: out of recall and dedup, kept in history.
pub(crate) fn plan_forget(
    reader: Reader<'_>,
    id: MemoryId,
    reason: Option<String>,
) -> Result<(Vec<NewEvent>, ForgetResult), EngineError> {
    let record = reader.record(id)?;
    let target = if record.status == Status::Active { record } else { reader.current_of(id)? };
    let events = vec![EventBody::BeliefRetired(BeliefRetired { memory_id: target.memory_id, reason }).into()];
    Ok((events, ForgetResult { memory_id: target.memory_id, root_id: target.root_id, seqs: Vec::new() }))
}

/// Resolve a pending conflict, on behalf of `by` (`person:<actor>`, `judge:<model>`).
/// `merge_text` (validated) is the reconciled text of a `merge`, saved with `authority`.
///
/// A principal's proposal is an entry like any other, its incoming memory not yet current:
/// `keep_new` accepts it (as the next version of the belief it would replace, if any),
/// `keep_both` accepts it beside the others, `keep_existing` rejects it, `merge` rejects it for
/// the merged text.
pub(crate) fn plan_resolve(
    reader: Reader<'_>,
    id: ConflictId,
    action: ResolutionAction,
    merge_text: Option<String>,
    note: Option<String>,
    by: String,
    authority: Authority,
) -> Result<(Vec<NewEvent>, ResolveResult), EngineError> {
    let conflict = reader.conflict(id)?;
    if conflict.status != ConflictStatus::Pending {
        let resolution = conflict.resolution.map(|r| (r.action, r.by));
        return Err(Conflict::AlreadyResolved { conflict: id, resolution }.into());
    }
    let proposal = conflict.opened_as == ConflictKind::Proposal;
    // Compare-and-set: the sides must be as they were when the conflict opened.
    let incoming = reader.record(conflict.incoming)?;
    let expected = if proposal { Status::Proposed } else { Status::Active };
    if incoming.status != expected || incoming.root_id != incoming.memory_id || incoming.version != 1 {
        let (memory, status, version) = (incoming.memory_id, incoming.status, incoming.version);
        return Err(Conflict::IncomingChanged { memory, status, version }.into());
    }
    let mut sides = Vec::new();
    for side in &conflict.candidates {
        let r = reader.record(side.memory_id)?;
        if r.status != Status::Active || r.root_id != side.root_id || r.version != side.version {
            return Err(Conflict::SideChanged { memory: r.memory_id, status: r.status, version: r.version }.into());
        }
        sides.push(r);
    }
    if sides.is_empty() && !proposal {
        return Err(Conflict::NoCandidates.into());
    }
    let first = sides.first();
    let mut events: Vec<NewEvent> = Vec::new();
    let mut effects = Vec::new();
    if proposal && matches!(action, ResolutionAction::KeepNew | ResolutionAction::KeepBoth) {
        effects.push(Effect::Accepted { memory_id: incoming.memory_id });
    }
    // The incoming memory withdrawn: a proposal rejected, else a belief gone stale.
    let withdrawn = if proposal {
        Effect::Rejected { memory_id: incoming.memory_id }
    } else {
        Effect::MadeStale { memory_id: incoming.memory_id }
    };
    let mut merged_memory_id = None;
    match action {
        ResolutionAction::KeepNew => {
            if let Some(first) = first {
                effects.push(Effect::Reparented {
                    memory_id: incoming.memory_id,
                    from_root: incoming.memory_id,
                    from_version: 1,
                    to_root: first.root_id,
                    to_version: reader.next_version(first.root_id)?,
                });
            }
            for side in &sides {
                effects.push(Effect::MadeStale { memory_id: side.memory_id });
                effects.push(Effect::EdgeAdded {
                    edge: Edge { kind: EdgeKind::Replaces, from: incoming.memory_id, to: side.memory_id },
                });
            }
        }
        ResolutionAction::KeepExisting => effects.push(withdrawn),
        ResolutionAction::KeepBoth => {
            for side in &sides {
                effects.push(Effect::EdgeAdded {
                    edge: Edge { kind: EdgeKind::Distinct, from: incoming.memory_id, to: side.memory_id },
                });
            }
        }
        ResolutionAction::Merge => {
            let text = merge_text.unwrap_or_default();
            let merged = MemoryId::random();
            merged_memory_id = Some(merged);
            // The merged text continues the first side's lineage, or (a proposal with no other
            // side) starts one of its own.
            let base = first.unwrap_or(&incoming);
            let (root_id, version) = match first {
                Some(f) => (f.root_id, reader.next_version(f.root_id)?),
                None => (merged, 1),
            };
            events.push(
                EventBody::MemoryObserved(MemoryObserved {
                    memory_id: merged,
                    content_hash: content_hash(&text),
                    text,
                    memory_type: base.memory_type,
                    scope: base.scope.clone(),
                    source: Some(authority.as_str().to_string()),
                    fact_key: base.fact_key.clone(),
                    effective_at: None,
                    dedup: false,
                    evidence: None,
                    origin: None,
                    expires_at: None,
                    ttl_seconds: None,
                })
                .into(),
            );
            effects.push(Effect::Introduced { memory_id: merged, root_id, version });
            effects.push(withdrawn);
            effects.push(Effect::EdgeAdded {
                edge: Edge { kind: EdgeKind::DerivedFrom, from: merged, to: incoming.memory_id },
            });
            for side in &sides {
                effects.push(Effect::MadeStale { memory_id: side.memory_id });
                effects.push(Effect::EdgeAdded {
                    edge: Edge { kind: EdgeKind::Replaces, from: merged, to: side.memory_id },
                });
            }
        }
    }
    events.push(NewEvent {
        body: EventBody::ConflictResolved(ConflictResolved {
            conflict_id: id,
            action,
            by,
            rationale: note,
            effects: effects.clone(),
        }),
        causation: Some(conflict.opened_seq),
    });
    let result = ResolveResult {
        conflict_id: id,
        status: "resolved".into(),
        action: Some(action),
        effects,
        merged_memory_id,
        seqs: Vec::new(),
    };
    Ok((events, result))
}

/// Revert a conflict's resolution: a compensating event that undoes its exact effects and puts
/// the conflict back in the queue.
pub(crate) fn plan_revert(reader: Reader<'_>, id: ConflictId) -> Result<(Vec<NewEvent>, ResolveResult), EngineError> {
    let conflict = reader.conflict(id)?;
    let Some(resolution) = conflict.resolution.clone() else {
        return Err(Conflict::NothingToRevert(id).into());
    };
    // Compare-and-set: every effect must still hold, or undoing it would be wrong.
    for effect in &resolution.effects {
        let holds = match *effect {
            Effect::MadeStale { memory_id } => reader.record(memory_id)?.status == Status::Stale,
            Effect::Reparented { memory_id, to_root, to_version, .. } => {
                let r = reader.record(memory_id)?;
                r.root_id == to_root && r.version == to_version
            }
            Effect::EdgeAdded { edge } => reader.edges().joined(edge.from, edge.to, edge.kind)?,
            Effect::Introduced { memory_id, .. } | Effect::Accepted { memory_id } => {
                reader.record(memory_id)?.status == Status::Active
            }
            Effect::Rejected { memory_id } => reader.record(memory_id)?.status == Status::Stale,
        };
        if !holds {
            return Err(Conflict::EffectNoLongerHolds(effect.clone()).into());
        }
    }
    let events = vec![NewEvent {
        body: EventBody::ResolutionReverted(ResolutionReverted {
            conflict_id: id,
            resolution_seq: resolution.seq,
            undone: resolution.effects.clone(),
        }),
        causation: Some(resolution.seq),
    }];
    let result = ResolveResult {
        conflict_id: id,
        status: "pending".into(),
        action: None,
        effects: resolution.effects,
        merged_memory_id: None,
        seqs: Vec::new(),
    };
    Ok((events, result))
}
