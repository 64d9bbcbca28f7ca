//! The exports a store made: when, and which seqs each copied out. An export is the user's file,
//! beyond an erasure's reach; `erase --dry-run` names the ones made since the erased events.
//!
//! Table `exports`: `through seq (u64 BE) ‖ at (i64 BE micros)` → `at` (i64 BE) ‖ `since` (u64 BE)
//! ‖ `through` (u64 BE).

use memledger_ledger::store::{Batch, Store};
use memledger_schemas::Timestamp;
use serde::Serialize;

use crate::error::EngineError;

pub const EXPORTS_TABLE: &str = "exports";

/// One export.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ExportRecord {
    pub at: Timestamp,
    /// The first seq asked for.
    pub since: u64,
    /// The last seq written.
    pub through: u64,
}

/// Remember an export, durably.
pub(crate) fn record(store: &Store, export: &ExportRecord) -> Result<(), EngineError> {
    let mut key = export.through.to_be_bytes().to_vec();
    key.extend_from_slice(&export.at.0.to_be_bytes());
    let mut batch = Batch::default();
    let mut value = export.at.0.to_be_bytes().to_vec();
    value.extend_from_slice(&export.since.to_be_bytes());
    value.extend_from_slice(&export.through.to_be_bytes());
    batch.put(EXPORTS_TABLE, key, value);
    Ok(store.write(batch, true)?)
}

/// The exports that copied out a seq from `first` on, oldest first.
pub(crate) fn since(store: &Store, first: u64) -> Result<Vec<ExportRecord>, EngineError> {
    let mut out = Vec::new();
    for item in store.scan_from(EXPORTS_TABLE, &first.to_be_bytes())? {
        let (_, value) = item?;
        let field = |at: usize| value.get(at..at + 8).and_then(|b| b.try_into().ok());
        let (Some(at), Some(since), Some(through), 24) = (field(0), field(8), field(16), value.len()) else {
            return Err(EngineError::Storage(memledger_ledger::LedgerError::Inconsistent(format!(
                "an export record of {} bytes",
                value.len()
            ))));
        };
        let record = ExportRecord {
            at: Timestamp(i64::from_be_bytes(at)),
            since: u64::from_be_bytes(since),
            through: u64::from_be_bytes(through),
        };
        out.push(record);
    }
    out.sort_by_key(|r| r.at);
    Ok(out)
}
