//! The CLI's end-to-end tests, one binary: each module runs `memledger` as a process on a
//! temporary store (docs/cli.md is the contract they check); `support` is what they share.

mod support;

mod bad_input;
mod cli;
mod concurrency;
mod crash;
mod crash_commands;
mod mcp;
mod models;
mod recall;

/// Every file in cli/tests/ is one of the modules above.
#[test]
fn no_test_file_is_forgotten() {
    memledger_tests::assert_no_forgotten_test_files(&support::manifest_dir().join("tests"));
}
