//! The engine's integration tests, one binary: the library API on real stores in temporary
//! directories, lower-level than the CLI's end-to-end tests; `support` is what they share.

mod support;

mod announced;
mod asof;
mod co_enrich;
mod declared;
mod expiry;
mod models;
mod principals;
mod properties;
mod recall;
mod scenarios;
mod valid_time;
mod views;

/// Every file in engine/tests/ is one of the modules above.
#[test]
fn no_test_file_is_forgotten() {
    memledger_tests::assert_no_forgotten_test_files(&support::manifest_dir().join("tests"));
}
