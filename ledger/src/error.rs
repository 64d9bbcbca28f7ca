//! One error enum per boundary, all wrapping the shared storage error.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use memledger_schemas::CodecError;

/// A failure of the storage engine or of the bytes it returned.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("storage error: {0}")]
    Rocks(#[from] rocksdb::Error),
    /// A write queued for the writer thread failed (crate::write_behind): every operation after
    /// it fails until the store is opened again.
    #[error("storage error: an earlier write failed ({0}); nothing after it was written: open the store again")]
    EarlierWriteFailed(#[source] Arc<LedgerError>),
    /// A sync of the write-ahead log failed (crate::log_sync). Writes since an earlier sync may
    /// be lost whatever a later sync reports (the system may drop the pages it failed to write),
    /// so every sync after it fails too, until the store is opened again and reads its log back.
    #[error(
        "storage error: a sync of the write-ahead log failed ({0}); writes since the last sync may be lost: open the store again"
    )]
    LogSyncFailed(Arc<std::io::Error>),
    #[error("corrupt record in {table} at {key}: {source}")]
    Corrupt { table: &'static str, key: String, source: CodecError },
    #[error("ledger is inconsistent: {0}")]
    Inconsistent(String),
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The shared ledger (crate::shared) failed or could not be reached; for an append, nothing
    /// was acknowledged.
    #[error("shared ledger at {location}: {message}")]
    Shared { location: String, message: String },
    /// An event read does not match its hash: the store was altered (`memledger verify` says
    /// more). Nothing of it is served.
    #[error("the event at seq {seq} does not match its hash: the ledger was altered; run `memledger verify`")]
    Tampered { seq: u64 },
    /// A witness kept elsewhere (crate::witness_place) could not be read or kept.
    #[error("witness at {location}: {message}")]
    WitnessPlace { location: String, message: String },
    /// This machine may not append to a signed store (crate::signing).
    #[error("{0}")]
    Unsigned(String),
}

/// Opening a store failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(
        "another memledger process holds the store at {} (waited {:.1}s); try again when it is done, or pass --wait SECONDS",
        path.display(), waited.as_secs_f64()
    )]
    Locked { path: PathBuf, waited: Duration },
    #[error("no memledger store at {}", path.display())]
    Missing { path: PathBuf },
    #[error("{} is not a usable memledger store: {reason}", path.display())]
    Unusable { path: PathBuf, reason: String },
    /// RocksDB refused to open the store; `file` is the damaged file when its info log names one.
    #[error("{} is not a usable memledger store: {source}{}", path.display(), in_file(file))]
    Refused { path: PathBuf, source: rocksdb::Error, file: Option<String> },
    /// The shared ledger's URL or its tables cannot be used.
    #[error("shared ledger at {location}: {reason}")]
    Shared { location: String, reason: String },
    /// The store disagrees with its witness (crate::witness): restored from an older copy,
    /// truncated, replaced or rewritten.
    #[error("{} disagrees with its witness: {reason}. If this copy is meant (a restore from backup), `memledger checkpoint --accept REASON` takes it, recording who did", path.display())]
    Witness { path: PathBuf, reason: String },
    #[error(transparent)]
    Storage(#[from] LedgerError),
}

/// Appending failed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// The head moved since the caller decided: recompute and try again.
    #[error("the ledger head moved: expected seq {expected}, found {actual}")]
    Conflict { expected: u64, actual: u64 },
    #[error(transparent)]
    Storage(#[from] LedgerError),
}

/// Importing a stream failed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("line {line}: not an event: {message}")]
    Parse { line: usize, message: String },
    #[error("line {line} (seq {seq}): {message}")]
    Chain { line: usize, seq: u64, message: String },
    #[error("the stream diverges from this store at seq {seq}: {message}")]
    Diverged { seq: u64, message: String },
    #[error("i/o error reading the stream: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Storage(#[from] LedgerError),
}

/// " (in <file>)", or nothing.
fn in_file(file: &Option<String>) -> String {
    file.as_ref().map(|f| format!(" (in {f})")).unwrap_or_default()
}
