//! As-of reads: the answer at a seq (or time) equals the answer of a store that stopped there.

use std::io::Cursor;

use memledger_engine::*;
use memledger_schemas::*;

use crate::support::save;

/// Everything a reader can ask, as JSON, for comparison.
fn answers(ml: &Memledger) -> serde_json::Value {
    let memories = ml.list(None, None, None, usize::MAX).unwrap();
    let histories: Vec<_> = memories.iter().map(|m| ml.history(m.memory_id).unwrap()).collect();
    let conflicts = ml.conflicts(None).unwrap();
    serde_json::json!({
        "memories": memories,
        "histories": histories,
        "conflicts": conflicts.iter().map(|c| serde_json::json!({
            "id": c.conflict_id, "status": c.status.as_str(), "resolution": c.resolution.as_ref().map(|r| r.action),
        })).collect::<Vec<_>>(),
    })
}

#[test]
fn as_of_a_seq_equals_a_store_that_stopped_there() {
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    let mut checkpoints = vec![0u64];
    save(&ml, "The billing service runs on Postgres 16");
    checkpoints.push(ml.ledger().head().seq);
    let c = save(&ml, "The billing service runs on Postgres 17");
    checkpoints.push(ml.ledger().head().seq);
    ml.resolve(c.conflict_id.unwrap(), ResolutionAction::KeepNew, None, None, "cli:test").unwrap();
    checkpoints.push(ml.ledger().head().seq);
    save(&ml, "deploy Tuesday");
    save(&ml, "deploy Tuesday after integration tests pass");
    checkpoints.push(ml.ledger().head().seq);
    ml.revert(c.conflict_id.unwrap(), "cli:test").unwrap();
    let mut stream = Vec::new();
    ml.export(1, &mut stream).unwrap();
    let lines: Vec<&str> = std::str::from_utf8(&stream).unwrap().lines().collect();

    for &seq in &checkpoints {
        let snapshot = ml.as_of(Some(AsOf::Seq(seq))).unwrap();
        assert_eq!(snapshot.seq(), seq);
        let stopped_dir = tempfile::tempdir().unwrap();
        let stopped = Memledger::open(stopped_dir.path(), &OpenOptions::default()).unwrap();
        stopped.import(&mut Cursor::new(lines[..seq as usize].join("\n"))).unwrap();
        assert_eq!(answers(&snapshot), answers(&stopped), "as of seq {seq}");
    }
    // The live store is untouched, and the head is the live store itself.
    assert!(matches!(ml.as_of(Some(AsOf::Seq(u64::MAX))).unwrap(), Snapshot::Live(_)));
    assert_eq!(ml.list(None, None, Some(Status::Active), 10).unwrap().len(), 3);
}

#[test]
fn as_of_a_time_names_the_last_event_recorded_by_then() {
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    save(&ml, "Hana has a dog called Mochi");
    save(&ml, "The warehouse keeps raw events for 13 months");
    let events: Vec<Event> = ml.ledger().scan(1).unwrap().map(|e| e.unwrap()).collect();
    for e in &events {
        let seq = ml.seq_as_of(AsOf::Time(e.recorded_at)).unwrap();
        // Every event recorded at the same instant or earlier is included.
        let expected = events.iter().filter(|x| x.recorded_at <= e.recorded_at).map(|x| x.seq).max().unwrap();
        assert_eq!(seq, expected);
    }
    assert_eq!(ml.seq_as_of(AsOf::Time(Timestamp(0))).unwrap(), 0);
    assert!("yesterday".parse::<AsOf>().is_err());
    assert_eq!("12".parse::<AsOf>().unwrap(), AsOf::Seq(12));
}
