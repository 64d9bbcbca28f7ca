//! The projection boundary's error.

use std::path::PathBuf;

use memledger_ledger::LedgerError;
use memledger_schemas::CodecError;

#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Storage(#[from] LedgerError),
    #[error("view {view}: undecodable record: {source}")]
    Codec { view: &'static str, source: CodecError },
    /// A record whose bytes have the wrong shape for its key (a corrupt table).
    #[error("view {view}: malformed record: {reason}")]
    Malformed { view: &'static str, reason: String },
    /// An event that does not fit the view (a bug or a corrupt ledger): the seq and the reason.
    #[error("view {view} cannot apply seq {seq}: {reason}")]
    Inapplicable { view: &'static str, seq: u64, reason: String },
    /// The text index (tantivy) failed.
    #[error("text index: {0}")]
    TextIndex(#[from] tantivy::TantivyError),
    /// Reading the text index's files failed.
    #[error("text index: {0}")]
    TextIndexIo(#[from] std::io::Error),
    /// The text index's directory could not be prepared.
    #[error("text index: cannot {action} {}: {source}", path.display())]
    TextIndexDir { action: &'static str, path: PathBuf, source: std::io::Error },
    /// The text index holds what this build never writes: another schema, a document without
    /// its memory id.
    #[error("text index: {0}")]
    TextIndexUnreadable(&'static str),
}
