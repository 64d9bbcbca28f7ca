//! The ledger's promises: a hash chain that `verify` walks, idempotency across reopen, a
//! conflict value on a moved head, and all-or-nothing import.

use std::io::Cursor;
use std::time::Duration;

use memledger_ledger::*;
use memledger_schemas::samples::sample_bodies;
use memledger_schemas::*;

fn open(dir: &std::path::Path) -> Ledger {
    Ledger::open(dir, &OpenOptions::default(), &[]).unwrap()
}

fn bodies(n: usize) -> Vec<NewEvent> {
    sample_bodies().into_iter().cycle().take(n).map(NewEvent::from).collect()
}

fn committed(a: Appended) -> Vec<Event> {
    match a {
        Appended::Committed(e) => e,
        Appended::Replayed(r) => panic!("unexpected replay of {r:?}"),
    }
}

#[test]
fn appends_chain_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    assert_eq!(ledger.head(), Head::EMPTY);
    let first = committed(ledger.append(0, &CommandMeta::new("cli:test"), bodies(3)).unwrap());
    let second = committed(ledger.append(3, &CommandMeta::new("cli:test"), bodies(2)).unwrap());
    let seqs: Vec<u64> = first.iter().chain(&second).map(|e| e.seq).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4, 5], "gap-free seqs");
    assert_eq!(second[0].prev_hash, first[2].hash, "each event links to the one before");
    assert!(first.iter().chain(&second).all(|e| e.hash_is_valid()));
    assert!(first.iter().all(|e| e.correlation_id == first[0].correlation_id));
    assert_ne!(first[0].correlation_id, second[0].correlation_id);
    let report = ledger.verify().unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!((report.events, report.head_seq, report.head_hash), (5, 5, second[1].hash));
    let stored: Vec<Event> = ledger.scan(1).unwrap().map(|e| e.unwrap()).collect();
    assert_eq!(stored, first.iter().chain(&second).cloned().collect::<Vec<_>>());
    assert_eq!(ledger.range(SeqRange { first: 2, last: 4 }).unwrap().len(), 3);
}

#[test]
fn a_moved_head_is_a_conflict_value_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    ledger.append(0, &CommandMeta::new("a"), bodies(2)).unwrap();
    match ledger.append(0, &CommandMeta::new("b"), bodies(1)) {
        Err(AppendError::Conflict { expected, actual }) => assert_eq!((expected, actual), (0, 2)),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(ledger.head().seq, 2);
    assert!(ledger.verify().unwrap().ok);
}

#[test]
fn idempotency_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut meta = CommandMeta::new("agent:test");
    meta.idempotency_key = Some("extraction-42".into());
    {
        let ledger = open(dir.path());
        let events = committed(ledger.append(0, &meta, bodies(2)).unwrap());
        assert_eq!(events[0].idempotency_key.as_deref(), Some("extraction-42"));
        assert_eq!(events[1].idempotency_key, None);
    }
    let ledger = open(dir.path());
    assert_eq!(ledger.idempotent("extraction-42").unwrap(), Some(SeqRange { first: 1, last: 2 }));
    // The same key again, even with a fresh correlation: the committed range, nothing written.
    meta.correlation_id = CorrelationId::random();
    match ledger.append(2, &meta, bodies(2)).unwrap() {
        Appended::Replayed(r) => assert_eq!(r, SeqRange { first: 1, last: 2 }),
        other => panic!("expected a replay, got {other:?}"),
    }
    assert_eq!(ledger.head().seq, 2);
}

#[test]
fn group_commit_keeps_each_commands_key() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let cmd = |key: &str| {
        let mut m = CommandMeta::new("bulk");
        m.idempotency_key = Some(key.into());
        m
    };
    let out = ledger
        .append_group(0, vec![(cmd("a"), bodies(2)), (cmd("b"), bodies(1)), (cmd("a"), bodies(3))], true)
        .unwrap();
    assert!(matches!(&out[0], Appended::Committed(e) if e.len() == 2));
    assert!(matches!(&out[1], Appended::Committed(e) if e.len() == 1));
    assert!(matches!(out[2], Appended::Replayed(SeqRange { first: 1, last: 2 })));
    assert_eq!(ledger.head().seq, 3);
    assert_eq!(ledger.idempotent("b").unwrap(), Some(SeqRange { first: 3, last: 3 }));
}

fn exported(ledger: &Ledger) -> String {
    let mut buf = Vec::new();
    ledger.export(1, &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn export_import_round_trip_and_reimport_writes_nothing() {
    let src_dir = tempfile::tempdir().unwrap();
    let src = open(src_dir.path());
    let mut meta = CommandMeta::new("cli:x");
    meta.idempotency_key = Some("k1".into());
    src.append(0, &meta, bodies(4)).unwrap();
    src.append(4, &CommandMeta::new("cli:x"), bodies(3)).unwrap();
    let stream = exported(&src);
    assert_eq!(stream.lines().count(), 7);

    let dst_dir = tempfile::tempdir().unwrap();
    let dst = open(dst_dir.path());
    let report = dst.import(&mut Cursor::new(stream.clone())).unwrap();
    assert_eq!((report.read, report.appended, report.already_present), (7, 7, 0));
    assert_eq!(exported(&dst), stream, "byte-identical stream");
    assert_eq!(dst.idempotent("k1").unwrap(), Some(SeqRange { first: 1, last: 4 }));
    assert!(dst.verify().unwrap().ok);

    let again = dst.import(&mut Cursor::new(stream.clone())).unwrap();
    assert_eq!((again.appended, again.already_present), (0, 7));

    // A stream that shares the prefix appends only what is new.
    src.append(7, &CommandMeta::new("cli:x"), bodies(2)).unwrap();
    let longer = dst.import(&mut Cursor::new(exported(&src))).unwrap();
    assert_eq!((longer.appended, longer.already_present, longer.head_seq), (2, 7, 9));
    assert_eq!(exported(&dst), exported(&src));
}

fn assert_refused(stream: &str, expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    ledger.append(0, &CommandMeta::new("local"), bodies(1)).unwrap();
    let before = exported(&ledger);
    let err = ledger.import(&mut Cursor::new(stream.to_string())).unwrap_err().to_string();
    assert!(err.contains(expect), "{err:?} should mention {expect:?}");
    assert_eq!(exported(&ledger), before, "nothing written");
}

fn fresh_stream() -> String {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    ledger.append(0, &CommandMeta::new("cli:x"), bodies(5)).unwrap();
    exported(&ledger)
}

#[test]
fn import_refuses_tampered_reordered_and_diverging_streams() {
    let stream = fresh_stream();
    let lines: Vec<&str> = stream.lines().collect();

    // Tampered: one character of one line's text changed.
    let tampered = stream.replacen("Postgres 17", "Postgres 18", 1);
    assert_ne!(tampered, stream);
    let empty = tempfile::tempdir().unwrap();
    let ledger = open(empty.path());
    let err = ledger.import(&mut Cursor::new(tampered)).unwrap_err().to_string();
    assert!(err.contains("tampered"), "{err}");
    assert_eq!(ledger.head().seq, 0, "nothing written");

    // Reordered lines.
    let mut swapped = lines.clone();
    swapped.swap(2, 3);
    let err = ledger.import(&mut Cursor::new(swapped.join("\n"))).unwrap_err().to_string();
    assert!(err.contains("out of order") || err.contains("expected seq"), "{err}");
    assert_eq!(ledger.head().seq, 0);

    // A missing line.
    let mut gap = lines.clone();
    gap.remove(2);
    assert!(ledger.import(&mut Cursor::new(gap.join("\n"))).is_err());

    // A truncated last line.
    let truncated = &stream[..stream.len() - 20];
    let err = ledger.import(&mut Cursor::new(truncated.to_string())).unwrap_err().to_string();
    assert!(err.contains("line 5"), "{err}");
    assert_eq!(ledger.head().seq, 0);

    // A store with a different history: the stream diverges at seq 1.
    assert_refused(&stream, "diverges");
}

#[test]
fn verify_names_the_first_bad_seq_after_raw_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    ledger.append(0, &CommandMeta::new("x"), bodies(6)).unwrap();
    // Rewrite seq 4 with a modified (but well-formed) event, as an attacker with write access could.
    let mut event = ledger.get(4).unwrap().unwrap();
    event.actor = "someone else".into();
    let mut batch = memledger_ledger::store::Batch::default();
    memledger_ledger::tables::EventsTable::put(&mut batch, &event);
    ledger.store().write(batch, true).unwrap();
    let report = ledger.verify().unwrap();
    assert!(!report.ok);
    assert_eq!(report.first_bad_seq, Some(4));

    // Resealing it moves the break to seq 5, whose prev_hash no longer links.
    event.seal();
    let mut batch = memledger_ledger::store::Batch::default();
    memledger_ledger::tables::EventsTable::put(&mut batch, &event);
    ledger.store().write(batch, true).unwrap();
    assert_eq!(ledger.verify().unwrap().first_bad_seq, Some(5));
}

#[test]
fn a_second_opener_waits_then_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let _held = open(dir.path());
    let options =
        OpenOptions { create: true, wait: Duration::from_millis(200), shared: None, ..OpenOptions::default() };
    match Ledger::open(dir.path(), &options, &[]) {
        Err(OpenError::Locked { .. }) => {}
        Err(other) => panic!("expected Locked, got {other}"),
        Ok(_) => panic!("expected Locked, got a second handle"),
    }
    let err = Ledger::open(dir.path(), &options, &[]).err().unwrap().to_string();
    assert!(err.contains("another memledger process holds the store"), "{err}");
}

/// Unsynced appends wait in RocksDB's log buffer (ADR 0009). What must hold: close writes them
/// out, and after [`Store::write_log_buffer`] or a sync they survive the process dying without
/// closing. The dying process is this test binary run again, which aborts (no destructors run,
/// as with SIGKILL).
#[test]
fn unsynced_appends_survive_close_and_a_written_log_buffer_survives_abort() {
    const CHILD: &str = "MEMLEDGER_TEST_ABORT_CHILD";
    if let Ok(spec) = std::env::var(CHILD) {
        let (dir, how) = spec.split_once('|').unwrap();
        let ledger = open(std::path::Path::new(dir));
        let head = ledger.head().seq;
        ledger.append_with(head, &CommandMeta::new("child"), bodies(3), false).unwrap();
        match how {
            "write" => ledger.store().write_log_buffer().unwrap(),
            "sync" => ledger.sync().unwrap(),
            other => panic!("unknown child mode {other}"),
        }
        std::process::abort();
    }
    let dir = tempfile::tempdir().unwrap();
    {
        let ledger = open(dir.path());
        ledger.append_with(0, &CommandMeta::new("t"), bodies(2), false).unwrap();
    }
    assert_eq!(open(dir.path()).head().seq, 2, "close writes unsynced appends out");
    let mut expected = 2;
    // The test's name in this binary: its module path without the crate's name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::unsynced_appends_survive_close_and_a_written_log_buffer_survives_abort");
    for how in ["write", "sync"] {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &name])
            .env(CHILD, format!("{}|{how}", dir.path().display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!status.success(), "the child aborts");
        expected += 3;
        let ledger = open(dir.path());
        assert_eq!(ledger.head().seq, expected, "after {how} and abort");
        assert!(ledger.verify().unwrap().ok);
    }
}

/// The head record is written with synced writes, by `sync` and on close, not with each unsynced
/// append; open follows the events after it, and refuses one that does not link.
#[test]
fn open_follows_events_after_the_head_record_and_refuses_one_that_does_not_link() {
    let dir = tempfile::tempdir().unwrap();
    {
        let ledger = open(dir.path());
        ledger.append(0, &CommandMeta::new("t"), bodies(2)).unwrap();
        ledger.append_with(2, &CommandMeta::new("t"), bodies(2), false).unwrap();
        assert_eq!(tables::MetaTable::head(ledger.store()).unwrap().seq, 2, "no record per unsynced append");
        assert!(ledger.verify().unwrap().ok, "a record behind the head is not damage");
        ledger.sync().unwrap();
        assert_eq!(tables::MetaTable::head(ledger.store()).unwrap().seq, 4, "sync writes the record");
        ledger.append_with(4, &CommandMeta::new("t"), bodies(1), false).unwrap();
    }
    let ledger = open(dir.path());
    assert_eq!(ledger.head().seq, 5);
    assert_eq!(tables::MetaTable::head(ledger.store()).unwrap().seq, 5, "close writes the record");
    // Damage after the record: an event at seq 6 that does not link to seq 5.
    let mut stray = ledger.get(2).unwrap().unwrap();
    stray.seq = 6;
    stray.seal();
    let mut batch = store::Batch::default();
    tables::EventsTable::put(&mut batch, &stray);
    ledger.store().write(batch, true).unwrap();
    drop(ledger);
    match Ledger::open(dir.path(), &OpenOptions::default(), &[]) {
        Err(OpenError::Unusable { reason, .. }) => assert!(reason.contains("after seq 5"), "{reason}"),
        Err(other) => panic!("expected an unusable store, got {other}"),
        Ok(_) => panic!("a stray event after the head record was accepted"),
    }
}

/// Unsynced appends handed to the write-behind thread are signed there, and of those written
/// as one, only the last needs its checkpoint: every synced head is vouched for, `verify` passes,
/// and the witness each sync moves matches the store when it is opened again.
#[test]
fn unsynced_appends_written_together_are_vouched_for_by_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let (store, witnesses) = (dir.path().join("store"), dir.path().join("witnesses"));
    let signer = std::sync::Arc::new(signing::Signer::create(&dir.path().join("signing.key")).unwrap());
    let options = OpenOptions { signer: Some(signer), witness_dir: Some(witnesses.clone()), ..OpenOptions::default() };
    let appends = 300u64;
    {
        let ledger = Ledger::open(&store, &options, &[]).unwrap();
        ledger.store().write_behind();
        for i in 0..appends {
            ledger.append_with(i, &CommandMeta::new("cli:test"), bodies(1), false).unwrap();
            if i % 100 == 99 {
                ledger.sync().unwrap();
            }
        }
        let report = ledger.verify().unwrap();
        assert!(report.ok, "{report:?}");
        assert_eq!(report.signed_through, Some(appends), "the head is signed");
        assert!((1..=appends).contains(&report.checkpoints), "{} checkpoints", report.checkpoints);
        let checkpoint = ledger.checkpoint().unwrap().expect("signed");
        assert_eq!(checkpoint.seq, appends);
    }
    let witness = witness::WitnessRecord::read(&witness::witness_path(&witnesses, &store)).unwrap();
    assert_eq!(witness.seq, appends, "the last sync's head");
    let ledger = Ledger::open(&store, &options, &[]).expect("the store agrees with its witness");
    assert!(ledger.verify().unwrap().ok);
}
