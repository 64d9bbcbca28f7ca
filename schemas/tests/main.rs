//! The vocabulary's tests, one binary: the frozen formats and the generated export schema
//! (`golden`), and the codec's properties (`props`).

use std::path::PathBuf;

mod golden;
mod props;

/// This package's directory (`memledger_tests::manifest_dir`).
fn manifest_dir() -> PathBuf {
    memledger_tests::manifest_dir(env!("CARGO_MANIFEST_DIR"))
}

/// Every file in schemas/tests/ is one of the modules above.
#[test]
fn no_test_file_is_forgotten() {
    memledger_tests::assert_no_forgotten_test_files(&manifest_dir().join("tests"));
}
