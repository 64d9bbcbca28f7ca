//! Cross-crate: a store rebuilt elsewhere from its exported stream has the same views, byte for
//! byte, and a prefix import followed by the rest converges too.

use std::io::Cursor;

use memledger_engine::{Memledger, OpenOptions, SaveRequest};
use memledger_schemas::ResolutionAction;

use crate::manifest_dir;

fn open(dir: &std::path::Path) -> Memledger {
    Memledger::open(dir, &OpenOptions::default()).unwrap()
}

fn dumps(ml: &Memledger) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
    ml.views().names().iter().map(|n| ml.views().dump(ml.ledger(), n).unwrap()).collect()
}

#[test]
fn an_imported_stream_reproduces_every_view() {
    let a = tempfile::tempdir().unwrap();
    let src = open(a.path());
    let path = &format!("{}/fixtures/consistent_stream.jsonl", manifest_dir().display());
    for line in std::fs::read_to_string(path).unwrap().lines().take(120) {
        let req: SaveRequest = serde_json::from_str(line).unwrap();
        src.save(req, "agent:replay").unwrap();
    }
    let s = |t: &str| SaveRequest { text: t.into(), ..SaveRequest::default() };
    src.save(s("The billing service runs on Postgres 16"), "cli:x").unwrap();
    let c = src.save(s("The billing service runs on Postgres 17"), "cli:x").unwrap();
    let cid = c.conflict_id.unwrap();
    src.resolve(cid, ResolutionAction::KeepNew, None, None, "cli:x").unwrap();
    src.revert(cid, "cli:x").unwrap();

    let mut stream = Vec::new();
    src.export(1, &mut stream).unwrap();
    let half = String::from_utf8(stream.clone()).unwrap().lines().take(100).collect::<Vec<_>>().join("\n");

    let b = tempfile::tempdir().unwrap();
    let dst = open(b.path());
    assert_eq!(dst.import(&mut Cursor::new(half)).unwrap().appended, 100);
    let report = dst.import(&mut Cursor::new(stream)).unwrap();
    assert_eq!(report.already_present, 100);
    assert_eq!(dst.ledger().head(), src.ledger().head());
    assert!(dumps(&dst) == dumps(&src), "views are byte-identical");
    assert!(dst.verify().unwrap().views_consistent);
}
