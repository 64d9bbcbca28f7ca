//! The audit index: for each memory, and each pair, the seqs of every classification that
//! examined it — flagged or dropped — so `why` never scans the whole ledger.
//!
//! Table `audit`: `a ‖ memory_id ‖ seq` → (), for both memories of every classification; a
//! pair's classifications are the seqs its two memories' lists share.

use memledger_ledger::store::{Reads, Store};
use memledger_schemas::*;

use crate::error::ProjectError;
use crate::framework::{Projector, ViewTxn};
use crate::keys::key;

pub const TABLE: &str = "audit";
const VERSION: u32 = 2;

pub struct AuditProjector;

impl Projector for AuditProjector {
    fn name(&self) -> &'static str {
        TABLE
    }

    fn version(&self) -> u32 {
        VERSION
    }

    /// Only `why` and `verify` read the index, by scans; every save writes a dozen keys to it.
    fn reads(&self) -> Reads {
        Reads::Rarely
    }

    fn apply(&self, event: &Event, txn: &mut ViewTxn<'_>) -> Result<(), ProjectError> {
        if let EventBody::PairClassified(b) = &event.body {
            let seq = event.seq.to_be_bytes();
            txn.put(key(b'a', &[&b.incoming.to_bytes(), &seq]), Vec::new());
            txn.put(key(b'a', &[&b.candidate.to_bytes(), &seq]), Vec::new());
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
        let mine = self.seqs_of(id)?;
        match other {
            None => Ok(mine),
            // Every classification is listed under both its memories: a pair's are the seqs
            // the two lists share.
            Some(o) => {
                let theirs = self.seqs_of(o)?;
                Ok(mine.into_iter().filter(|s| theirs.binary_search(s).is_ok()).collect())
            }
        }
    }

    /// Seqs (ascending) of the classifications that involved `id`.
    fn seqs_of(&self, id: MemoryId) -> Result<Vec<u64>, ProjectError> {
        let prefix = key(b'a', &[&id.to_bytes()]);
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
