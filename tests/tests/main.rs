//! The cross-crate tests, one binary: the saved fuzz corpus replayed (`fuzz_corpus`), recall's
//! quality figure (`recall_quality`), a ledger replicated by export and import
//! (`replication`), many machines saving at once on a shared ledger (`contention`), machines following each
//! other's appends on one (`following`), and one process's saves sent to it together
//! (`group_commit`), what the setup scripts install on machines made up for the test (`setup`), and the reference
//! pages' length (`reference_pages`).

use std::path::{Path, PathBuf};

use memledger_engine::{Memledger, OpenOptions};

mod contention;
mod following;
mod fuzz_corpus;
mod group_commit;
mod recall_quality;
mod reference_pages;
mod replication;
mod setup;

/// This package's directory, tests/ (`memledger_tests::manifest_dir`).
fn manifest_dir() -> PathBuf {
    memledger_tests::manifest_dir(env!("CARGO_MANIFEST_DIR"))
}

/// A machine of the shared ledger at `url`: a store of its own at `dir` that copies it.
fn open_machine(url: &str, dir: &Path) -> Memledger {
    let log = memledger_engine::connect_shared_ledger(url).unwrap();
    Memledger::open(dir, &OpenOptions { create: true, shared: Some(log), ..OpenOptions::default() }).unwrap()
}

/// Every machine's chain verifies, its views equal a fresh replay, its term cache agrees with its
/// belief view, and all stand at one head.
fn assert_machines_agree(machines: &[&Memledger]) {
    let heads: Vec<_> = machines
        .iter()
        .map(|ml| {
            let report = ml.verify().unwrap();
            assert!(report.ledger.ok && report.views_consistent, "{report:?}");
            assert_eq!(ml.term_cache_disagreement().unwrap(), None);
            ml.ledger().head()
        })
        .collect();
    assert!(heads.iter().all(|h| *h == heads[0]), "{heads:?}");
}

/// Every file in tests/tests/ is one of the modules above.
#[test]
fn no_test_file_is_forgotten() {
    memledger_tests::assert_no_forgotten_test_files(&manifest_dir().join("tests"));
}
