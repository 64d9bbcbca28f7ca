//! The belief pipeline and memledger's public library API.
//!
//! [`Memledger`] turns commands (save, update, forget, resolve, revert) into events — candidates
//! → classification → decision → one atomic append — and answers reads from the projections.
//! Storage belongs to `ledger`, views to `projector`, presentation to the CLI: the decision logic
//! lives here alone.
//!
//! `Memledger` (memledger.rs) holds an open store's parts and its one write path; each concept
//! has a module of its own that reads what it needs and never names `Memledger`: the save
//! pipeline's planning (`pipeline`), candidate search (`candidates`), the analysis cache
//! (`analysis_cache`), the text index with its term cache (`index`, `term_cache`), the commands
//! on a person's word (`resolve`), reads (`reads`), valid time (`validity`) and `expiry`, `recall`, the
//! contradiction scan (`scan`), the credential rules a stored text is checked against
//! (`secrets`), transcripts read as evidence for `import sessions` (`transcripts`), as-of points
//! (`asof`), the review page's reads (`review`) and the models over HTTP (`models`).

pub mod access;
mod analysis_cache;
pub mod asof;
mod candidates;
pub mod classify;
pub mod co_enrich;
pub mod config;
mod durable;
pub mod erase;
pub mod error;
pub mod expiry;
mod exports;
mod group_commit;
mod index;
pub mod input;
pub mod memledger;
pub mod models;
pub mod pipeline;
pub mod principals;
pub mod reads;
pub mod recall;
pub mod resolve;
pub mod review;
pub mod scan;
pub mod secrets;
mod term_cache;
pub mod transcripts;
pub mod usage;
pub mod validity;

pub use access::{Caller, NotPermitted, Principal};
pub use asof::AsOf;
pub use classify::Classification;
pub use config::EngineConfig;
pub use error::{EngineError, Exit};
pub use input::{EvidenceRequest, SaveRequest, ValidSave};
pub use memledger::{Durability, Memledger, Snapshot};
pub use memledger_ledger::OpenOptions;
pub use memledger_ledger::ledger::machine_name;
pub use memledger_ledger::shared::{READ_CHUNK, connect as connect_shared_ledger};
pub use memledger_ledger::signing::{self, Signer};
pub use memledger_ledger::sink::{EventSink, SinkError, connect as connect_sink};
pub use memledger_ledger::tables::LastVerify;
pub use memledger_ledger::witness::WitnessRecord;
pub use memledger_ledger::witness_place::WitnessPlace;
pub use memledger_ledger::{CommandMeta, CopyReport, EventLog, Head};
pub use memledger_ledger::{ImportReport, OpenError, Stream, read_stream};
pub use memledger_projector::conflicts::{
    ConflictRecord, ConflictStatus, ProposalRecord, ResolutionRecord, RevertRecord,
};
pub use memledger_projector::transcripts::FileProgress;
pub use pipeline::{Outcome, PreparedSave, SaveResult};
pub use recall::{CONFLICT_NOTICE, RecallHit, RecallResult};
