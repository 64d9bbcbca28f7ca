//! The edge graph: `replaces`, `distinct`, `conflicts`, `near_miss`, `derived_from`,
//! `co_enriches` (two memories that each add a detail of their own to one earlier version).
//!
//! Table `edges`: `f ‖ from ‖ kind (u8) ‖ to` → created seq (u64 BE), and the reverse
//! `r ‖ to ‖ kind ‖ from` → created seq, so both directions are one prefix scan.

use memledger_ledger::store::Store;
use memledger_schemas::*;
use serde::Serialize;

use crate::error::ProjectError;
use crate::framework::{Projector, ViewTxn};
use crate::keys::key;

pub const TABLE: &str = "edges";
const VERSION: u32 = 1;

pub struct EdgesProjector;

fn kind_byte(kind: EdgeKind) -> u8 {
    EdgeKind::ALL.iter().position(|k| *k == kind).unwrap_or(0) as u8
}

fn fkey(e: &Edge) -> Vec<u8> {
    key(b'f', &[&e.from.to_bytes(), &[kind_byte(e.kind)], &e.to.to_bytes()])
}
fn rkey(e: &Edge) -> Vec<u8> {
    key(b'r', &[&e.to.to_bytes(), &[kind_byte(e.kind)], &e.from.to_bytes()])
}

fn add(txn: &mut ViewTxn<'_>, e: Edge, seq: u64) {
    txn.put(fkey(&e), seq.to_be_bytes().to_vec());
    txn.put(rkey(&e), seq.to_be_bytes().to_vec());
}

fn remove(txn: &mut ViewTxn<'_>, e: Edge) {
    txn.delete(fkey(&e));
    txn.delete(rkey(&e));
}

impl Projector for EdgesProjector {
    fn name(&self) -> &'static str {
        TABLE
    }

    fn version(&self) -> u32 {
        VERSION
    }

    fn apply(&self, event: &Event, txn: &mut ViewTxn<'_>) -> Result<(), ProjectError> {
        let seq = event.seq;
        match &event.body {
            EventBody::BeliefVersioned(b) => {
                add(txn, Edge { kind: EdgeKind::Replaces, from: b.memory_id, to: b.replaces }, seq)
            }
            EventBody::BeliefEdited(b) => {
                add(txn, Edge { kind: EdgeKind::Replaces, from: b.memory_id, to: b.replaces }, seq)
            }
            EventBody::BeliefHistorical(b) => {
                add(txn, Edge { kind: EdgeKind::Replaces, from: b.current, to: b.memory_id }, seq)
            }
            EventBody::PairClassified(b) if b.outcome == PairOutcome::NearMiss => {
                add(txn, Edge { kind: EdgeKind::NearMiss, from: b.incoming, to: b.candidate }, seq)
            }
            EventBody::PairClassified(b) if b.outcome == PairOutcome::CoEnrichment => {
                add(txn, Edge { kind: EdgeKind::CoEnriches, from: b.incoming, to: b.candidate }, seq)
            }
            EventBody::ConflictOpened(b) => {
                for c in &b.candidates {
                    add(txn, Edge { kind: EdgeKind::Conflicts, from: b.incoming, to: c.memory_id }, seq);
                }
            }
            EventBody::ConflictResolved(b) => {
                for effect in &b.effects {
                    if let Effect::EdgeAdded { edge } = effect {
                        add(txn, *edge, seq);
                    }
                }
            }
            EventBody::ResolutionReverted(b) => {
                for effect in &b.undone {
                    if let Effect::EdgeAdded { edge } = effect {
                        remove(txn, *edge);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// An edge as read back, with the seq that created it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EdgeRecord {
    #[serde(flatten)]
    pub edge: Edge,
    pub seq: u64,
}

/// Read queries over the edge graph.
pub struct EdgeReader<'a> {
    store: &'a Store,
}

impl<'a> EdgeReader<'a> {
    pub fn new(store: &'a Store) -> Self {
        EdgeReader { store }
    }

    /// Edges leaving or entering `id`.
    pub fn touching(&self, id: MemoryId) -> Result<Vec<EdgeRecord>, ProjectError> {
        let mut out = Vec::new();
        for tag in [b'f', b'r'] {
            let prefix = key(tag, &[&id.to_bytes()]);
            for item in self.store.scan_prefix(TABLE, &prefix)? {
                let (k, v) = item?;
                if k.len() != 34 {
                    continue;
                }
                let kind = EdgeKind::ALL.get(k[17] as usize).copied().unwrap_or(EdgeKind::Replaces);
                let other = MemoryId::from_bytes(k[18..34].try_into().unwrap_or_default());
                let seq = v.as_ref().try_into().map(u64::from_be_bytes).unwrap_or(0);
                let edge =
                    if tag == b'f' { Edge { kind, from: id, to: other } } else { Edge { kind, from: other, to: id } };
                out.push(EdgeRecord { edge, seq });
            }
        }
        Ok(out)
    }

    /// The memories joined to `id` by an edge of `kind`, in either direction (one seek each way).
    pub fn linked(&self, id: MemoryId, kind: EdgeKind) -> Result<Vec<MemoryId>, ProjectError> {
        let mut out = Vec::new();
        for tag in [b'f', b'r'] {
            let prefix = key(tag, &[&id.to_bytes(), &[kind_byte(kind)]]);
            for item in self.store.scan_prefix(TABLE, &prefix)? {
                let (k, _) = item?;
                if let Some(other) = k.get(18..34).and_then(|b| <[u8; 16]>::try_from(b).ok()) {
                    let other = MemoryId::from_bytes(other);
                    if !out.contains(&other) {
                        out.push(other);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Whether an edge of `kind` joins `a` and `b` in either direction.
    pub fn joined(&self, a: MemoryId, b: MemoryId, kind: EdgeKind) -> Result<bool, ProjectError> {
        for (from, to) in [(a, b), (b, a)] {
            if self.store.get(TABLE, &fkey(&Edge { kind, from, to }))?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
