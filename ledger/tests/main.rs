//! The ledger's tests, one binary: appends, idempotency, export and import (`ledger`), what a
//! damaged store reports (`corruption`), processes racing to create one store (`create_race`),
//! the shared ledger on a real PostgreSQL (`postgres`) and TLS to it (`tls`).

mod corruption;
mod create_race;
mod ledger;
mod postgres;
mod tls;

/// Every file in ledger/tests/ is one of the modules above.
#[test]
fn no_test_file_is_forgotten() {
    let dir = memledger_tests::manifest_dir(env!("CARGO_MANIFEST_DIR"));
    memledger_tests::assert_no_forgotten_test_files(&dir.join("tests"));
}
