//! Projections: every view memledger reads is rebuilt from the ledger by a [`Projector`].
//!
//! A projection has a name (its table), a version and a checkpoint (the last seq it applied),
//! stored in its table in the same write as its data. On open, views catch up with the ledger;
//! a view whose version differs from the code's is rebuilt. Rebuilding from scratch gives the
//! same bytes as the incrementally maintained view.

pub mod audit;
pub mod beliefs;
pub mod conflicts;
pub mod edges;
pub mod error;
pub mod framework;
pub mod keys;
pub mod principals;
pub mod text_index;
mod top_hits;
pub mod transcripts;

pub use error::ProjectError;
pub use framework::{Checkpoint, Projector, ViewTxn, Views};
pub use text_index::TextIndex;
