//! The ledger: memledger's only source of truth, an append-only, hash-chained event log in
//! RocksDB, or shared by many machines on PostgreSQL (`shared`, `postgres`), and mirrored to an outside
//! stream (`sink`, `nats`).
//!
//! Appends are one synced `WriteBatch` (events, idempotency key, head) made against an expected
//! head; a moved head is a `Conflict` value, never a lost write. The same store holds the column
//! families of the projections, which the `projector` crate reads and writes through
//! [`store::ViewBatch`] — this crate is the only one that talks to RocksDB.

mod batch;
pub mod error;
pub mod exchange;
pub mod ledger;
mod log_sync;
pub mod nats;
mod pg_signing;
pub mod pg_tls;
pub mod postgres;
mod read_cache;
pub mod shared;
pub mod signing;
pub mod sink;
mod staging;
pub mod store;
pub mod tables;
pub mod verify;
pub mod witness;
pub mod witness_place;
mod write_behind;

pub use error::{AppendError, ImportError, LedgerError, OpenError};
pub use exchange::{ImportReport, Stream, read_stream};
pub use ledger::{Acceptance, Appended, CommandMeta, Head, Ledger, NewEvent, OpenOptions, SeqRange};
pub use shared::{CopyReport, EventLog};
pub use sink::{EventSink, SinkError};
pub use verify::VerifyReport;
