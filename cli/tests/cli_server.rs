//! The CLI contract tests of `cli.rs` again, each store's commands through a server: the first
//! command after a store is created starts one (`MEMLEDGER_AUTOSTART=1`), and the rest go
//! through it. Same output, same exit codes (docs/adr/0014-one-server-per-store.md).

/// The helpers `cli.rs` runs `memledger` with.
use crate::support::server as path;

// Loaded twice on purpose: `main.rs` declares it too, with the direct route's helpers.
#[allow(clippy::duplicate_mod)]
#[path = "cli.rs"]
mod cli;
