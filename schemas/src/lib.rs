//! The vocabulary every other memledger crate speaks: ids, timestamps, the event envelope and
//! body, the hash-chain rule and the one codec that turns events into bytes.
//!
//! Nothing here touches storage. Everything that is written to the ledger is defined in this
//! crate, so a change to the on-disk format is a change to this crate and its golden fixtures.

pub mod chain;
pub mod codec;
pub mod effects;
pub mod event;
pub mod ids;
pub mod json_schema;
pub mod kinds;
pub mod name;
pub mod samples;
pub mod time;

pub use chain::{Hash, chain_hash};
pub use codec::{CURRENT_FORMAT, CodecError};
pub use effects::{Edge, EdgeKind, Effect};
pub use event::*;
pub use ids::{ConflictId, CorrelationId, EventId, IdParseError, MemoryId};
pub use kinds::*;
pub use name::Name;
pub use time::{TimeParseError, Timestamp};
