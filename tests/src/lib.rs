//! Cross-crate end-to-end tests live in tests/tests/. This library is what every crate's test
//! binary shares: where its package is, the check that no test file is left out of it, and the
//! servers the shared-ledger tests use ([`services`]).

pub mod services;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The directory of the package under test, read when the test runs (cargo sets it) rather than
/// baked in at compile time: a build cache shared between checkouts must not send a test to
/// another tree. `compiled` (the caller's `env!("CARGO_MANIFEST_DIR")`) is the fallback for a
/// test binary run by hand.
pub fn manifest_dir(compiled: &str) -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from(compiled), PathBuf::from)
}

/// Every crate has one integration-test binary, `tests/main.rs`, whose `mod` lines name the test
/// files beside it: cargo builds no other file there, so a file that no `mod` names would never
/// run. Panics, naming them, when `tests_dir` holds such files.
pub fn assert_no_forgotten_test_files(tests_dir: &Path) {
    let main = std::fs::read_to_string(tests_dir.join("main.rs"))
        .unwrap_or_else(|e| panic!("{}: {e}", tests_dir.join("main.rs").display()));
    let declared: BTreeSet<&str> =
        main.lines().filter_map(|line| line.trim().strip_prefix("mod ")?.strip_suffix(';')).map(str::trim).collect();
    let entries =
        std::fs::read_dir(tests_dir).unwrap_or_else(|e| panic!("{}: {e}", tests_dir.display())).map(|e| e.unwrap());
    let forgotten: Vec<String> = entries
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|x| x == "rs"))
        .filter_map(|path| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|stem| stem != "main" && !declared.contains(stem.as_str()))
        .collect();
    assert!(
        forgotten.is_empty(),
        "{}/main.rs declares no module for {forgotten:?}: add `mod …;` lines, or the tests never run",
        tests_dir.display()
    );
}
