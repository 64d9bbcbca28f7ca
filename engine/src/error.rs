//! The engine's error: each variant maps to one exit code of the CLI contract.

use memledger_ledger::{AppendError, ImportError, LedgerError, OpenError};
use memledger_projector::ProjectError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Bad input or usage: nothing was written (exit 2).
    #[error("{0}")]
    BadInput(String),
    /// The state is not what the caller expected: nothing was written (exit 3).
    #[error("{0}")]
    Conflict(String),
    /// No such memory or conflict (exit 4).
    #[error("{0}")]
    NotFound(String),
    /// A model was needed and could not be used (exit 1).
    #[error("{0}")]
    Model(String),
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Storage(#[from] LedgerError),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Import(#[from] ImportError),
}

impl From<AppendError> for EngineError {
    fn from(e: AppendError) -> Self {
        match e {
            AppendError::Conflict { expected, actual } => EngineError::Conflict(format!(
                "the ledger moved while deciding (expected head {expected}, found {actual}); nothing was written, try again"
            )),
            AppendError::Storage(s) => EngineError::Storage(s),
        }
    }
}

impl EngineError {
    /// The exit code of docs/cli.md.
    pub fn exit_code(&self) -> i32 {
        match self {
            EngineError::BadInput(_) => 2,
            EngineError::Conflict(_) => 3,
            EngineError::NotFound(_) => 4,
            EngineError::Import(
                ImportError::Parse { .. } | ImportError::Chain { .. } | ImportError::Diverged { .. },
            ) => 2,
            _ => 1,
        }
    }
}
