//! Shared by the engine's tests: a scripted model server, and the few helpers every module
//! wants.

use std::path::{Path, PathBuf};

use memledger_engine::{Memledger, OpenOptions, SaveRequest, SaveResult};

pub mod mock_http;

/// This package's directory (`memledger_tests::manifest_dir`).
pub fn manifest_dir() -> PathBuf {
    memledger_tests::manifest_dir(env!("CARGO_MANIFEST_DIR"))
}

/// The store at `dir`, created if need be, without models.
pub fn open(dir: &Path) -> Memledger {
    Memledger::open(dir, &OpenOptions::default()).unwrap()
}

/// A save of `text` with every other field left to its default.
pub fn req(text: &str) -> SaveRequest {
    SaveRequest { text: text.into(), ..SaveRequest::default() }
}

/// Save `text` as `cli:test`.
pub fn save(ml: &Memledger, text: &str) -> SaveResult {
    ml.save(req(text), "cli:test").unwrap()
}

/// Every view's content, in the views' order.
pub fn dumps(ml: &Memledger) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
    ml.views().names().iter().map(|n| ml.views().dump(ml.ledger(), n).unwrap()).collect()
}

/// A full rebuild gives the views the incremental projection holds, and the store verifies.
pub fn assert_rebuild_equal_and_verified(ml: &Memledger) {
    let before = dumps(ml);
    ml.rebuild(None, &mut |_| {}).unwrap();
    assert_eq!(dumps(ml), before, "rebuilt views equal the incremental ones");
    let v = ml.verify().unwrap();
    assert!(v.ledger.ok && v.views_consistent, "{v:?}");
}
