//! The CLI's end-to-end tests, one binary: each module runs `memledger` as a process on a
//! temporary store (docs/cli.md is the contract they check); `support` is what they share. The
//! contract tests of `cli.rs` run twice, directly (`cli`) and through a server
//! (`cli_server::cli`); `server`, `schemathesis` and `ui` run a real `memledger serve`; `shared`
//! runs machines on one shared ledger on a real PostgreSQL; `stream` mirrors a ledger to a real
//! NATS JetStream and follows it with `export --follow`; `tamper` forges stores without the
//! signing key and runs agent-memory-integrity's attacks; `traces` sends spans to a real OTLP/HTTP
//! receiver.

mod support;

/// The helpers `cli.rs` runs `memledger` with: here the direct route; `cli_server.rs` includes
/// it again with the server's.
use support::direct as path;

mod bad_input;
mod cli;
mod cli_server;
mod concurrency;
mod crash;
mod crash_commands;
mod erase;
mod import;
mod mcp;
mod mcp_context;
mod mcp_suites;
mod models;
mod principals;
mod recall;
mod schemathesis;
mod secrets;
mod server;
mod shared;
mod stream;
mod tamper;
mod traces;
mod ui;

/// Every file in cli/tests/ is one of the modules above.
#[test]
fn no_test_file_is_forgotten() {
    memledger_tests::assert_no_forgotten_test_files(&support::manifest_dir().join("tests"));
}
