//! The audit index: for each memory, and each pair, the seqs of every classification that
//! examined it — flagged or dropped — so `why` never scans the whole ledger.
//!
//! Table `audit`: `a ‖ memory_id ‖ seq` → () and `p ‖ low id ‖ high id ‖ seq` → ().

use memledger_ledger::store::Store;
use memledger_schemas::*;

use crate::error::ProjectError;
use crate::framework::{Projector, ViewTxn};
use crate::keys::key;

pub const TABLE: &str = "audit";
const VERSION: u32 = 1;

pub struct AuditProjector;

fn pair(a: MemoryId, b: MemoryId) -> (MemoryId, MemoryId) {
    if a <= b { (a, b) } else { (b, a) }
}

impl Projector for AuditProjector {
    fn name(&self) -> &'static str {
        TABLE
    }

    fn version(&self) -> u32 {
        VERSION
    }

    fn apply(&self, event: &Event, txn: &mut ViewTxn<'_>) -> Result<(), ProjectError> {
        if let EventBody::PairClassified(b) = &event.body {
            let seq = event.seq.to_be_bytes();
            txn.put(key(b'a', &[&b.incoming.to_bytes(), &seq]), Vec::new());
            txn.put(key(b'a', &[&b.candidate.to_bytes(), &seq]), Vec::new());
            let (lo, hi) = pair(b.incoming, b.candidate);
            txn.put(key(b'p', &[&lo.to_bytes(), &hi.to_bytes(), &seq]), Vec::new());
        }
        Ok(())
    }
}

/// Read queries over the audit index.
pub struct AuditReader<'a> {
    store: &'a Store,
}

impl<'a> AuditReader<'a> {
    pub fn new(store: &'a Store) -> Self {
        AuditReader { store }
    }

    /// Seqs of the classifications that involved `id`, or the pair `id`–`other`.
    pub fn seqs(&self, id: MemoryId, other: Option<MemoryId>) -> Result<Vec<u64>, ProjectError> {
        let prefix = match other {
            None => key(b'a', &[&id.to_bytes()]),
            Some(o) => {
                let (lo, hi) = pair(id, o);
                key(b'p', &[&lo.to_bytes(), &hi.to_bytes()])
            }
        };
        let mut out = Vec::new();
        for item in self.store.scan_prefix(TABLE, &prefix)? {
            let (k, _) = item?;
            if let Some(seq) = k.get(prefix.len()..).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes) {
                out.push(seq);
            }
        }
        Ok(out)
    }
}
