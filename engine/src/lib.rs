//! The belief pipeline and memledger's public library API.
//!
//! [`Memledger`] turns commands (save, update, forget, resolve, revert) into events — candidates
//! → classification → decision → one atomic append — and answers reads from the projections.
//! Storage belongs to `ledger`, views to `projector`, presentation to the CLI: the decision logic
//! lives here alone.

pub mod asof;
pub mod classify;
pub mod config;
pub mod error;
pub mod input;
pub mod memledger;
pub mod models;
pub mod pipeline;
pub mod reads;
pub mod recall;
pub mod resolve;
pub mod scan;
mod term_cache;

pub use asof::{AsOf, Snapshot};
pub use classify::Classification;
pub use config::EngineConfig;
pub use error::EngineError;
pub use input::{SaveRequest, ValidSave};
pub use memledger::{Durability, Memledger, Outcome, SaveResult};
pub use memledger_ledger::OpenOptions;
pub use memledger_ledger::{OpenError, Stream, read_stream};
pub use memledger_projector::conflicts::{ConflictRecord, ConflictStatus};
pub use pipeline::PreparedSave;
pub use recall::{CONFLICT_NOTICE, RecallHit, RecallResult};
