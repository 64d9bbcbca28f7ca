//! The cross-crate tests, one binary: the saved fuzz corpus replayed (`fuzz_corpus`), recall's
//! quality figure (`recall_quality`), a ledger replicated by export and import
//! (`replication`), many machines saving at once on a shared ledger (`contention`), machines following each
//! other's appends on one (`following`), and one process's saves sent to it together
//! (`group_commit`).

use std::path::PathBuf;

mod contention;
mod following;
mod fuzz_corpus;
mod group_commit;
mod recall_quality;
mod replication;

/// This package's directory, tests/ (`memledger_tests::manifest_dir`).
fn manifest_dir() -> PathBuf {
    memledger_tests::manifest_dir(env!("CARGO_MANIFEST_DIR"))
}

/// Every file in tests/tests/ is one of the modules above.
#[test]
fn no_test_file_is_forgotten() {
    memledger_tests::assert_no_forgotten_test_files(&manifest_dir().join("tests"));
}
