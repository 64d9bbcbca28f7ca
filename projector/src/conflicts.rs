//! The conflict queue: every conflict with its sides, reasons, resolution and reverts.
//!
//! Table `conflicts`: `c ‖ conflict_id` → [`ConflictRecord`].

use bincode::{Decode, Encode};
use memledger_ledger::store::Store;
use memledger_schemas::*;
use serde::Serialize;

use crate::error::ProjectError;
use crate::framework::{Projector, ViewTxn};
use crate::keys::key;

pub const TABLE: &str = "conflicts";
/// 2: an erasure blanks the reasons and rationales of the conflicts it names. 3: merge
/// proposals, with their text. 4: the kind of conflict, the authority it needs, and the
/// principals who opened, resolved and reverted it.
const VERSION: u32 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConflictStatus {
    Pending,
    Resolved,
}

impl ConflictStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictStatus::Pending => "pending",
            ConflictStatus::Resolved => "resolved",
        }
    }
}

/// A resolution as the queue remembers it.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ResolutionRecord {
    pub seq: u64,
    pub action: ResolutionAction,
    pub by: String,
    pub actor: String,
    /// The principal that resolved it (before format 5: the store's owner).
    pub principal: String,
    pub rationale: Option<String>,
    pub resolved_at: Timestamp,
    pub effects: Vec<Effect>,
}

/// A revert as the queue remembers it.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RevertRecord {
    pub seq: u64,
    pub resolution_seq: u64,
    pub actor: String,
    pub principal: String,
    pub reverted_at: Timestamp,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ConflictRecord {
    pub conflict_id: ConflictId,
    pub status: ConflictStatus,
    pub incoming: MemoryId,
    pub candidates: Vec<ConflictSide>,
    pub opened_at: Timestamp,
    pub opened_seq: u64,
    /// The resolution in force (None while pending).
    pub resolution: Option<ResolutionRecord>,
    /// Every resolution ever made, oldest first, including reverted ones.
    pub resolutions: Vec<ResolutionRecord>,
    pub reverts: Vec<RevertRecord>,
    /// Set when the entry is a model's proposed merge of co-enrichments (`merge_proposed`), not
    /// a contradiction.
    pub proposal: Option<ProposalRecord>,
    /// Why it opened: a contradiction, a save that would have superseded a belief of higher
    /// authority, or a principal's proposal.
    pub opened_as: ConflictKind,
    /// The authority a resolution needs (docs/design.md §13).
    pub needs_authority: Authority,
    /// The principal whose command opened it (for a proposal: who proposed).
    pub opened_by: String,
}

/// A merge a model proposed, as the queue remembers it.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ProposalRecord {
    /// The proposed text; `conflicts resolve --merge` with it accepts the proposal.
    pub text: String,
    /// The version every side enriches.
    pub revision: MemoryId,
    pub model: String,
    pub reason: Option<String>,
}

impl ConflictRecord {
    /// `merge_proposal` for a model's proposed merge, else what opened it: `contradiction`,
    /// `authority` or `proposal`.
    pub fn kind(&self) -> &'static str {
        if self.proposal.is_some() { "merge_proposal" } else { self.opened_as.as_str() }
    }

    /// The principal that proposed the incoming memory, when the entry is a proposal.
    pub fn proposed_by(&self) -> Option<&str> {
        (self.opened_as == ConflictKind::Proposal).then_some(self.opened_by.as_str())
    }
}

/// The principal of an event (before format 5: the store's owner).
fn principal_of(event: &Event) -> String {
    event.principal.clone().unwrap_or_else(|| OWNER.to_string())
}

pub struct ConflictsProjector;

/// A pending entry opened by `event`.
fn opened(
    event: &Event,
    conflict_id: ConflictId,
    incoming: MemoryId,
    candidates: &[ConflictSide],
    proposal: Option<ProposalRecord>,
    (opened_as, needs_authority): (ConflictKind, Authority),
) -> ConflictRecord {
    ConflictRecord {
        conflict_id,
        status: ConflictStatus::Pending,
        incoming,
        candidates: candidates.to_vec(),
        opened_at: event.recorded_at,
        opened_seq: event.seq,
        resolution: None,
        resolutions: Vec::new(),
        reverts: Vec::new(),
        proposal,
        opened_as,
        needs_authority,
        opened_by: principal_of(event),
    }
}

fn ckey(id: ConflictId) -> Vec<u8> {
    key(b'c', &[&id.to_bytes()])
}

impl Projector for ConflictsProjector {
    fn name(&self) -> &'static str {
        TABLE
    }

    fn version(&self) -> u32 {
        VERSION
    }

    fn apply(&self, event: &Event, txn: &mut ViewTxn<'_>) -> Result<(), ProjectError> {
        let missing = |id: ConflictId| ProjectError::Inapplicable {
            view: TABLE,
            seq: event.seq,
            reason: format!("conflict {id} was never opened"),
        };
        match &event.body {
            EventBody::ConflictOpened(b) => {
                let record = opened(event, b.conflict_id, b.incoming, &b.candidates, None, (b.kind, b.needs_authority));
                txn.put_record(ckey(b.conflict_id), &record);
            }
            EventBody::MergeProposed(b) => {
                let proposal = ProposalRecord {
                    text: b.text.clone(),
                    revision: b.revision,
                    model: b.model.model.clone(),
                    reason: b.model.reason.clone(),
                };
                let kind = (ConflictKind::Contradiction, Authority::Stated);
                let record = opened(event, b.conflict_id, b.incoming, &b.candidates, Some(proposal), kind);
                txn.put_record(ckey(b.conflict_id), &record);
            }
            EventBody::ConflictResolved(b) => {
                let mut r: ConflictRecord =
                    txn.get_record(&ckey(b.conflict_id))?.ok_or_else(|| missing(b.conflict_id))?;
                let resolution = ResolutionRecord {
                    seq: event.seq,
                    action: b.action,
                    by: b.by.clone(),
                    actor: event.actor.clone(),
                    principal: principal_of(event),
                    rationale: b.rationale.clone(),
                    resolved_at: event.recorded_at,
                    effects: b.effects.clone(),
                };
                r.status = ConflictStatus::Resolved;
                r.resolutions.push(resolution.clone());
                r.resolution = Some(resolution);
                txn.put_record(ckey(b.conflict_id), &r);
            }
            EventBody::ResolutionReverted(b) => {
                let mut r: ConflictRecord =
                    txn.get_record(&ckey(b.conflict_id))?.ok_or_else(|| missing(b.conflict_id))?;
                r.status = ConflictStatus::Pending;
                r.resolution = None;
                r.reverts.push(RevertRecord {
                    seq: event.seq,
                    resolution_seq: b.resolution_seq,
                    actor: event.actor.clone(),
                    principal: principal_of(event),
                    reverted_at: event.recorded_at,
                });
                txn.put_record(ckey(b.conflict_id), &r);
            }
            EventBody::MemoryErased(b) => {
                for &id in &b.conflicts {
                    let mut r: ConflictRecord = txn.get_record(&ckey(id))?.ok_or_else(|| missing(id))?;
                    for side in &mut r.candidates {
                        side.reason.clear();
                    }
                    for resolution in r.resolution.iter_mut().chain(r.resolutions.iter_mut()) {
                        if let Some(rationale) = &mut resolution.rationale {
                            rationale.clear();
                        }
                    }
                    if let Some(proposal) = &mut r.proposal {
                        proposal.text.clear();
                        proposal.reason = proposal.reason.as_ref().map(|_| String::new());
                    }
                    txn.put_record(ckey(id), &r);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn ignores(&self, event_type: &str) -> bool {
        !matches!(
            event_type,
            "conflict_opened" | "conflict_resolved" | "resolution_reverted" | "memory_erased" | "merge_proposed"
        )
    }
}

/// Read queries over the conflict queue.
pub struct ConflictReader<'a> {
    store: &'a Store,
}

impl<'a> ConflictReader<'a> {
    pub fn new(store: &'a Store) -> Self {
        ConflictReader { store }
    }

    pub fn get(&self, id: ConflictId) -> Result<Option<ConflictRecord>, ProjectError> {
        self.store
            .get(TABLE, &ckey(id))?
            .map(|b| memledger_schemas::codec::decode(&b).map_err(|source| ProjectError::Codec { view: TABLE, source }))
            .transpose()
    }

    /// Every conflict (optionally only those with `status`), oldest first.
    pub fn list(&self, status: Option<ConflictStatus>) -> Result<Vec<ConflictRecord>, ProjectError> {
        let mut out = Vec::new();
        for item in self.store.scan_prefix(TABLE, b"c")? {
            let (_, v) = item?;
            let r: ConflictRecord =
                memledger_schemas::codec::decode(&v).map_err(|source| ProjectError::Codec { view: TABLE, source })?;
            if status.is_none_or(|s| s == r.status) {
                out.push(r);
            }
        }
        out.sort_by_key(|r| r.opened_seq);
        Ok(out)
    }

    /// Conflict ids starting with the hex digits `prefix`.
    pub fn ids_with_prefix(&self, prefix: &str) -> Result<Vec<ConflictId>, ProjectError> {
        Ok(self.list(None)?.into_iter().map(|r| r.conflict_id).filter(|id| id.hex().starts_with(prefix)).collect())
    }
}
