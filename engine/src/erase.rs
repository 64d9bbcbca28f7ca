//! `erase`: what an erasure of a memory (or its whole lineage) touches, found before anything is
//! written, so `--dry-run` and the erasure itself list the same things (docs/adr/0017-erasure.md).
//!
//! The memories are the one named (every version of its lineage with `lineage`), or, for a
//! retention policy, every version that stopped being the belief (stale or retired) before a
//! date, and the observations merged into them; the conflicts are those any of them is part of; the events are
//! every one with texts that names one of those memories or conflicts and is not erased yet.

use std::collections::BTreeSet;

use memledger_ledger::Ledger;
use memledger_projector::beliefs::BeliefReader;
use memledger_projector::edges::EdgeReader;
use memledger_schemas::{ConflictId, Edge, EventBody, Hash, MemoryErased, MemoryId, Status, Timestamp};
use serde::Serialize;

use crate::error::{BadInput, EngineError, NotFound};

/// What an erasure removes (or, with `--dry-run`, would remove).
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EraseResult {
    pub dry_run: bool,
    /// The seq of the `memory_erased` event (none for a dry run).
    pub erasure_seq: Option<u64>,
    pub memories: Vec<MemoryId>,
    pub content_hashes: Vec<Hash>,
    pub conflicts: Vec<ConflictId>,
    /// The edges that join the memories to others (they stay: ids only).
    pub edges: Vec<Edge>,
    /// The seqs of the events whose texts go.
    pub events: Vec<u64>,
    /// The exports this store made since the first of those events: copies outside the store,
    /// which the erasure cannot reach.
    pub exports_since: Vec<ExportRecord>,
}

/// An export, as the store remembers it (`engine/src/exports.rs`).
pub use crate::exports::ExportRecord;

/// Find what erasing `id` (with `lineage`, every version of its lineage) touches.
pub(crate) fn plan_erase(ledger: &Ledger, id: MemoryId, lineage: bool) -> Result<EraseResult, EngineError> {
    let beliefs = BeliefReader::new(ledger.store());
    let mut memories: BTreeSet<MemoryId> = BTreeSet::new();
    match beliefs.get(id)? {
        Some(record) if record.erased.is_some() => return Err(BadInput::AlreadyErased(id.hex()).into()),
        Some(record) if lineage => {
            memories.extend(beliefs.lineage(record.root_id)?.into_iter().map(|r| r.memory_id));
        }
        Some(_) => {
            memories.insert(id);
        }
        None => match beliefs.observation(id)? {
            Some(obs) if obs.erased.is_some() => return Err(BadInput::AlreadyErased(id.hex()).into()),
            Some(_) => {
                memories.insert(id);
            }
            None => return Err(NotFound::Memory(id).into()),
        },
    }
    plan_memories(ledger, memories)
}

/// The date of `erase --retired-before`: `YYYY-MM-DD` (its midnight, UTC) or an RFC 3339 time.
pub fn parse_retired_before(text: &str) -> Result<Timestamp, EngineError> {
    let text = text.trim();
    let full = if text.len() == 10 { format!("{text}T00:00:00Z") } else { text.to_string() };
    Timestamp::parse_rfc3339(&full).map_err(|_| BadInput::RetiredBefore(text.to_string()).into())
}

/// Find what erasing every version that stopped being the belief (went stale or was retired)
/// before `before` touches: a retention policy's erasure. Active versions are never chosen.
pub(crate) fn plan_retired_before(ledger: &Ledger, before: Timestamp) -> Result<EraseResult, EngineError> {
    let gone_before = |r: &memledger_projector::beliefs::MemoryRecord| {
        r.erased.is_none() && r.status != Status::Active && r.stale_since.is_some_and(|t| t < before)
    };
    let records = BeliefReader::new(ledger.store()).scan(gone_before, usize::MAX)?;
    plan_memories(ledger, records.into_iter().map(|r| r.memory_id).collect())
}

/// What erasing `memories` touches: with them, the observations merged into them.
fn plan_memories(ledger: &Ledger, mut memories: BTreeSet<MemoryId>) -> Result<EraseResult, EngineError> {
    // First pass: the observations merged into them, and the conflicts they are part of (or
    // whose resolution names them).
    let mut conflicts: BTreeSet<ConflictId> = BTreeSet::new();
    for event in ledger.scan(1)? {
        let event = event?;
        let named = event.body.memory_ids().iter().any(|m| memories.contains(m));
        match &event.body {
            EventBody::BeliefMerged(b) if memories.contains(&b.into) => {
                memories.insert(b.memory_id);
            }
            EventBody::ConflictOpened(b) if named => {
                conflicts.insert(b.conflict_id);
            }
            EventBody::ConflictResolved(b) if named => {
                conflicts.insert(b.conflict_id);
            }
            EventBody::MergeProposed(b) if named => {
                conflicts.insert(b.conflict_id);
            }
            _ => {}
        }
    }
    // Second pass: the events holding their texts.
    let mut events = Vec::new();
    let mut hashes = Vec::new();
    for event in ledger.scan(1)? {
        let mut event = event?;
        if let EventBody::MemoryObserved(b) = &event.body
            && memories.contains(&b.memory_id)
        {
            hashes.push((b.memory_id, b.content_hash));
        }
        let conflict = match &event.body {
            EventBody::ConflictOpened(b) => Some(b.conflict_id),
            EventBody::ConflictResolved(b) => Some(b.conflict_id),
            EventBody::MergeProposed(b) => Some(b.conflict_id),
            _ => None,
        };
        let named = event.body.memory_ids().iter().any(|m| memories.contains(m))
            || conflict.is_some_and(|c| conflicts.contains(&c));
        if named && event.erased.is_none() && !event.body.texts_mut().is_empty() {
            events.push(event.seq);
        }
    }
    hashes.sort();
    let edges = memories
        .iter()
        .map(|m| EdgeReader::new(ledger.store()).touching(*m))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .map(|r| r.edge)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let first = events.first().copied().unwrap_or(u64::MAX);
    Ok(EraseResult {
        dry_run: true,
        erasure_seq: None,
        memories: hashes.iter().map(|(m, _)| *m).collect(),
        content_hashes: hashes.iter().map(|(_, h)| *h).collect(),
        conflicts: conflicts.into_iter().collect(),
        edges,
        events,
        exports_since: crate::exports::since(ledger.store(), first)?,
    })
}

impl EraseResult {
    /// The body of the erasure event.
    pub(crate) fn body(&self, reason: Option<String>) -> MemoryErased {
        MemoryErased {
            memory_ids: self.memories.clone(),
            content_hashes: self.content_hashes.clone(),
            conflicts: self.conflicts.clone(),
            events: self.events.clone(),
            reason,
        }
    }
}
