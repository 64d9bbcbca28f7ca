//! The shared ledger on a real PostgreSQL (scripts/services.sh starts one; each test makes its
//! own database): gap-free seqs through the locked head row, the chain, idempotency keys, the
//! moved-head conflict, group commit (and commands staged ahead of the log), the refused
//! UPDATE/DELETE, the schema version and its
//! migration, erasure, stores that copy the log, and copying a store's ledger into it.

use std::sync::Arc;

use memledger_ledger::postgres::PgLedger;
use memledger_ledger::*;
use memledger_schemas::samples::sample_bodies;
use memledger_schemas::*;
use memledger_tests::services::{bytea, fresh_pg_database, overwrite_events_sql, run_sql, try_sql};

fn bodies(n: usize) -> Vec<NewEvent> {
    sample_bodies().into_iter().cycle().take(n).map(NewEvent::from).collect()
}

fn committed(a: Appended) -> Vec<Event> {
    match a {
        Appended::Committed(e) => e,
        Appended::Replayed(r) => panic!("unexpected replay of {r:?}"),
    }
}

fn keyed(key: &str) -> CommandMeta {
    let mut meta = CommandMeta::new("cli:test");
    meta.idempotency_key = Some(key.into());
    meta
}

fn shared_store(dir: &std::path::Path, log: &Arc<dyn EventLog>) -> Ledger {
    let options = OpenOptions { shared: Some(log.clone()), ..OpenOptions::default() };
    Ledger::open(dir, &options, &[]).unwrap()
}

#[test]
fn appends_are_gap_free_chained_and_idempotent() {
    let Some(url) = fresh_pg_database() else { return };
    let pg = PgLedger::connect(&url).unwrap();
    assert_eq!(pg.head().unwrap(), Head::EMPTY);
    let first = committed(pg.append_group(0, vec![(keyed("k1"), bodies(3))]).unwrap().remove(0));
    let second = committed(pg.append_group(3, vec![(CommandMeta::new("b"), bodies(2))]).unwrap().remove(0));
    let seqs: Vec<u64> = first.iter().chain(&second).map(|e| e.seq).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4, 5]);
    assert_eq!(second[0].prev_hash, first[2].hash);
    assert!(first.iter().chain(&second).all(|e| e.hash_is_valid()));
    // A moved head is the same conflict value as the local ledger's, and writes nothing.
    match pg.append_group(3, vec![(CommandMeta::new("c"), bodies(1))]) {
        Err(AppendError::Conflict { expected, actual }) => assert_eq!((expected, actual), (3, 5)),
        other => panic!("expected a conflict, got {other:?}"),
    }
    // A repeated key returns its committed range, from another connection too.
    let again = PgLedger::connect(&url).unwrap();
    assert_eq!(again.log_id().unwrap(), pg.log_id().unwrap());
    match again.append_group(5, vec![(keyed("k1"), bodies(2))]).unwrap().remove(0) {
        Appended::Replayed(range) => assert_eq!(range, SeqRange { first: 1, last: 3 }),
        other => panic!("expected a replay, got {other:?}"),
    }
    assert_eq!(again.idempotent("k1").unwrap(), Some(SeqRange { first: 1, last: 3 }));
    let stored = again.read(1, 100).unwrap();
    assert_eq!(stored, first.iter().chain(&second).cloned().collect::<Vec<_>>());
    let report = again.verify().unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!((report.events, report.head_hash), (5, second[1].hash));
}

#[test]
fn a_group_commits_in_one_transaction_each_command_checked_on_its_own() {
    let Some(url) = fresh_pg_database() else { return };
    let pg = PgLedger::connect(&url).unwrap();
    pg.append_group(0, vec![(keyed("old"), bodies(1))]).unwrap();
    let results = pg
        .append_group(
            1,
            vec![(keyed("a"), bodies(2)), (keyed("old"), bodies(1)), (keyed("a"), bodies(1)), (keyed("b"), bodies(1))],
        )
        .unwrap();
    assert_eq!(committed(results[0].clone()).iter().map(|e| e.seq).collect::<Vec<_>>(), vec![2, 3]);
    assert!(matches!(results[1], Appended::Replayed(SeqRange { first: 1, last: 1 })));
    assert!(matches!(results[2], Appended::Replayed(SeqRange { first: 2, last: 3 })), "{:?}", results[2]);
    assert_eq!(committed(results[3].clone())[0].seq, 4);
    assert_eq!(pg.head().unwrap().seq, 4);
    assert_eq!(pg.idempotent("b").unwrap(), Some(SeqRange { first: 4, last: 4 }));
}

#[test]
fn concurrent_appenders_get_gap_free_seqs_in_commit_order() {
    let Some(url) = fresh_pg_database() else { return };
    PgLedger::connect(&url).unwrap();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let url = url.clone();
            std::thread::spawn(move || {
                let pg = PgLedger::connect(&url).unwrap();
                let mut conflicts = 0;
                for i in 0..25 {
                    loop {
                        let head = pg.head().unwrap().seq;
                        match pg.append_group(head, vec![(keyed(&format!("w{w}-{i}")), bodies(2))]) {
                            Ok(_) => break,
                            Err(AppendError::Conflict { .. }) => conflicts += 1,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
                conflicts
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let pg = PgLedger::connect(&url).unwrap();
    let report = pg.verify().unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.events, 200, "every append once, two events each");
    for w in 0..4 {
        for i in 0..25 {
            let range = pg.idempotent(&format!("w{w}-{i}")).unwrap().expect("every key committed");
            assert_eq!(range.last - range.first, 1);
        }
    }
}

#[test]
fn the_database_refuses_update_delete_and_truncate_of_events() {
    let Some(url) = fresh_pg_database() else { return };
    let pg = PgLedger::connect(&url).unwrap();
    pg.append_group(0, vec![(keyed("k"), bodies(2))]).unwrap();
    for sql in [
        "UPDATE memledger_events SET event = event",
        "DELETE FROM memledger_events WHERE seq = 2",
        "TRUNCATE memledger_events",
        "DELETE FROM memledger_idempotency",
    ] {
        let refused = try_sql(&url, sql).expect_err(sql);
        assert!(refused.contains("append-only"), "{sql}: {refused}");
    }
    assert!(pg.verify().unwrap().ok);
    assert_eq!(pg.head().unwrap().seq, 2);
}

fn erasure_of(seqs: &[u64]) -> MemoryErased {
    MemoryErased { memory_ids: vec![], content_hashes: vec![], conflicts: vec![], events: seqs.to_vec(), reason: None }
}

#[test]
fn a_version_1_database_is_migrated_on_connect_and_then_erases() {
    let Some(url) = fresh_pg_database() else { return };
    let pg = PgLedger::connect(&url).unwrap();
    pg.append_group(0, vec![(keyed("k"), bodies(3))]).unwrap();
    drop(pg);
    // Back to version 1's tables: no erasure columns, a trigger refusing every update, no keys
    // or checkpoints.
    run_sql(
        &url,
        "DROP TABLE memledger_keys, memledger_checkpoints; \
         DROP TRIGGER memledger_events_append_only ON memledger_events; \
         DROP FUNCTION memledger_events_guard(); \
         ALTER TABLE memledger_events DROP COLUMN erases, DROP COLUMN erased_by; \
         CREATE TRIGGER memledger_events_append_only BEFORE UPDATE OR DELETE ON memledger_events \
             FOR EACH ROW EXECUTE FUNCTION memledger_append_only(); \
         UPDATE memledger_meta SET value = '1' WHERE key = 'schema_version'",
    );
    let pg = PgLedger::connect(&url).unwrap();
    run_sql(
        &url,
        "DO $$ BEGIN IF (SELECT value FROM memledger_meta WHERE key = 'schema_version') <> '3' \
         THEN RAISE EXCEPTION 'not migrated'; END IF; END $$",
    );
    let before = pg.read(1, 1).unwrap().remove(0);
    let erasure = pg.append_erasure(3, &CommandMeta::new("cli:test"), erasure_of(&[1])).unwrap();
    assert_eq!(erasure.seq, 4);
    let after = pg.read(1, 1).unwrap().remove(0);
    let mut expected = before.clone();
    expected.redact(4, erasure.recorded_at, "cli:test");
    assert_eq!(after, expected, "the row holds the erased form");
    assert!(pg.verify().unwrap().ok);
    // Erased once only; a moved head is the conflict; every direct change is still refused.
    assert!(pg.append_erasure(4, &CommandMeta::new("cli:test"), erasure_of(&[1])).is_err());
    match pg.append_erasure(3, &CommandMeta::new("cli:test"), erasure_of(&[2])) {
        Err(AppendError::Conflict { expected, actual }) => assert_eq!((expected, actual), (3, 4)),
        other => panic!("expected a conflict, got {other:?}"),
    }
    for sql in [
        "UPDATE memledger_events SET event = event WHERE seq = 2",
        "UPDATE memledger_events SET erased_by = 4 WHERE seq = 2",
        "UPDATE memledger_events SET event = event, erased_by = NULL WHERE seq = 1",
    ] {
        let refused = try_sql(&url, sql).expect_err(sql);
        assert!(refused.contains("append-only"), "{sql}: {refused}");
    }
    assert_eq!(pg.head().unwrap().seq, 4);
}

#[test]
fn a_newer_schema_is_refused_with_a_clear_message() {
    let Some(url) = fresh_pg_database() else { return };
    PgLedger::connect(&url).unwrap();
    run_sql(&url, "UPDATE memledger_meta SET value = '99' WHERE key = 'schema_version'");
    let message = PgLedger::connect(&url).err().expect("refused").to_string();
    assert!(message.contains("version 99") && message.contains("upgrade memledger"), "{message}");
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    // Port 1 on loopback: nothing listens there.
    let message = PgLedger::connect("postgres://postgres@127.0.0.1:1/none").err().expect("refused").to_string();
    assert!(message.starts_with("shared ledger at postgres://postgres@127.0.0.1:1/none"), "{message}");
    assert!(message.to_lowercase().contains("connect"), "{message}");
}

#[test]
fn stores_copy_the_shared_log_and_a_stale_one_gets_the_conflict() {
    let Some(url) = fresh_pg_database() else { return };
    let log: Arc<dyn EventLog> = Arc::new(PgLedger::connect(&url).unwrap());
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = shared_store(a_dir.path(), &log);
    let b = shared_store(b_dir.path(), &log);
    a.append(0, &keyed("a1"), bodies(3)).unwrap();
    // b has not caught up: its append against its own head is the moved-head conflict.
    match b.append(0, &CommandMeta::new("b"), bodies(1)) {
        Err(AppendError::Conflict { expected, actual }) => assert_eq!((expected, actual), (0, 3)),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(b.catch_up_shared().unwrap(), 3);
    b.append(3, &CommandMeta::new("b"), bodies(2)).unwrap();
    // A key another machine committed is answered by the log, and its events copied.
    assert_eq!(a.idempotent("a1").unwrap(), Some(SeqRange { first: 1, last: 3 }));
    a.catch_up_shared().unwrap();
    assert_eq!(a.head(), b.head());
    assert_eq!(a.head(), log.head().unwrap());
    assert!(a.verify().unwrap().ok && b.verify().unwrap().ok);
    // Reopened, the store checks it copies this log and follows it.
    drop(a);
    b.append(5, &CommandMeta::new("b"), bodies(1)).unwrap();
    let a = shared_store(a_dir.path(), &log);
    assert_eq!(a.head(), log.head().unwrap());
    let mut exported = Vec::new();
    let mut from_log = Vec::new();
    a.export(1, &mut exported).unwrap();
    log.export(1, &mut from_log).unwrap();
    assert_eq!(exported, from_log, "export reads the same stream from either");
}

#[test]
fn a_store_of_its_own_is_not_opened_as_a_copy() {
    let Some(url) = fresh_pg_database() else { return };
    let log: Arc<dyn EventLog> = Arc::new(PgLedger::connect(&url).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let local = Ledger::open(dir.path(), &OpenOptions::default(), &[]).unwrap();
    local.append(0, &CommandMeta::new("a"), bodies(2)).unwrap();
    drop(local);
    let options = OpenOptions { shared: Some(log), ..OpenOptions::default() };
    let message = Ledger::open(dir.path(), &options, &[]).err().expect("refused").to_string();
    assert!(message.contains("migrate --to"), "{message}");
}

#[test]
fn copying_into_the_shared_log_is_checked_resumable_and_idempotent() {
    let Some(url) = fresh_pg_database() else { return };
    let log: Arc<dyn EventLog> = Arc::new(PgLedger::connect(&url).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let local = Ledger::open(dir.path(), &OpenOptions::default(), &[]).unwrap();
    let mut head = 0;
    for i in 0..40 {
        let meta = if i % 3 == 0 { keyed(&format!("k{i}")) } else { CommandMeta::new("a") };
        head = committed(local.append(head, &meta, bodies(1 + i % 4)).unwrap()).last().unwrap().seq;
    }
    // A copy that stopped part way: the log holds a prefix.
    let prefix = Stream::from_events(local.range(SeqRange { first: 1, last: 17 }).unwrap()).unwrap();
    log.import_stream(prefix).unwrap();
    let report = local.copy_to(log.as_ref()).unwrap();
    assert_eq!((report.already_present, report.copied, report.head_seq), (17, head - 17, head));
    assert_eq!(log.head().unwrap(), local.head());
    let again = local.copy_to(log.as_ref()).unwrap();
    assert_eq!((again.already_present, again.copied), (head, 0));
    for i in (0..40).step_by(3) {
        assert_eq!(log.idempotent(&format!("k{i}")).unwrap(), local.idempotent(&format!("k{i}")).unwrap());
    }
    // Once adopted the store opens as a copy of the log.
    local.adopt(log.as_ref()).unwrap();
    drop(local);
    let copy = shared_store(dir.path(), &log);
    assert!(copy.verify().unwrap().ok);
    // Another ledger's events diverge: refused, nothing written.
    let other_dir = tempfile::tempdir().unwrap();
    let other = Ledger::open(other_dir.path(), &OpenOptions::default(), &[]).unwrap();
    other.append(0, &CommandMeta::new("x"), bodies(head as usize + 2)).unwrap();
    assert!(matches!(other.copy_to(log.as_ref()), Err(ImportError::Diverged { .. })));
    assert_eq!(log.head().unwrap().seq, head);
}

#[test]
fn staged_commands_reach_the_log_in_one_flush_or_are_rewound_on_open() {
    let Some(url) = fresh_pg_database() else { return };
    let log: Arc<dyn EventLog> = Arc::new(PgLedger::connect(&url).unwrap());
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("store");
    {
        let store = shared_store(&dir, &log);
        let _turn = log.exclusive_turn().unwrap();
        let first = committed(store.stage(0, &keyed("s1"), bodies(3)).unwrap());
        committed(store.stage(3, &CommandMeta::new("b"), bodies(2)).unwrap());
        // Staged: in the copy, a key already staged is a replay, the log holds nothing yet.
        assert_eq!((store.head().seq, log.head().unwrap().seq), (5, 0));
        assert_eq!(store.idempotent("s1").unwrap(), Some(SeqRange { first: 1, last: 3 }));
        assert!(matches!(store.stage(5, &keyed("s1"), bodies(1)).unwrap(), Appended::Replayed(_)));
        store.flush_staged().unwrap();
        assert!(!store.has_staged());
        assert_eq!(log.head().unwrap(), store.head());
        assert_eq!(log.read(1, 10).unwrap()[..3], first[..]);
        assert_eq!(log.idempotent("s1").unwrap(), Some(SeqRange { first: 1, last: 3 }));
        // Staged again, and the store closed before a flush (as a killed process leaves it).
        committed(store.stage(5, &keyed("s2"), bodies(4)).unwrap());
        assert_eq!(store.head().seq, 9);
    }
    let store = shared_store(&dir, &log);
    assert!(store.rewound_on_open());
    assert_eq!(store.head(), log.head().unwrap());
    assert_eq!(store.head().seq, 5);
    assert!(store.get(6).unwrap().is_none());
    assert_eq!(store.idempotent("s2").unwrap(), None);
    assert!(store.verify().unwrap().ok);
    // A flush against a head that moved is the conflict, and rewinds the copy.
    let _turn = log.exclusive_turn().unwrap();
    committed(store.stage(5, &CommandMeta::new("c"), bodies(2)).unwrap());
    let other = PgLedger::connect(&url).unwrap();
    drop(_turn);
    other.append_group(5, vec![(CommandMeta::new("d"), bodies(1))]).unwrap();
    assert!(matches!(store.flush_staged(), Err(AppendError::Conflict { expected: 5, actual: 6 })));
    assert_eq!(store.head().seq, 5);
    assert_eq!(store.catch_up_shared().unwrap(), 1);
    assert_eq!(store.head(), log.head().unwrap());
}

/// A key file of its own for one "machine".
fn machine_key(dir: &std::path::Path, name: &str) -> Arc<memledger_ledger::signing::Signer> {
    Arc::new(memledger_ledger::signing::Signer::create(&dir.join(format!("{name}.key"))).unwrap())
}

#[test]
fn each_machine_signs_with_its_own_key_once_an_administrator_registers_it() {
    let Some(url) = fresh_pg_database() else { return };
    let keys = tempfile::tempdir().unwrap();
    let (a, b) = (machine_key(keys.path(), "a"), machine_key(keys.path(), "b"));
    let pa = PgLedger::connect(&url).unwrap();
    pa.sign_with(a.clone(), "machine-a").unwrap();
    pa.append_group(0, vec![(keyed("k1"), bodies(2))]).unwrap();

    // Another machine's key reads but may not append until it is registered; nothing is written.
    let pb = PgLedger::connect(&url).unwrap();
    pb.sign_with(b.clone(), "machine-b").unwrap();
    let refused = pb.append_group(2, vec![(keyed("k2"), bodies(1))]).unwrap_err().to_string();
    assert!(refused.contains("not registered") && refused.contains("--register-key"), "{refused}");
    assert!(refused.contains(&memledger_ledger::signing::hex(&b.public())), "names the key to register: {refused}");
    // A process with no key at all may not append to a signed log either.
    let unsigned = PgLedger::connect(&url).unwrap();
    let refused = unsigned.append_group(2, vec![(keyed("k2"), bodies(1))]).unwrap_err().to_string();
    assert!(refused.contains("no signing key"), "{refused}");
    assert_eq!(pa.head().unwrap().seq, 2);
    assert_eq!(pb.read(1, 10).unwrap().len(), 2, "it reads");

    // Registered by machine a (from the next seq on), b signs its own appends.
    let record = pa.register_key(b.public(), "machine-b", "owner").unwrap();
    assert_eq!((record.from_seq, record.endorsed_by), (3, a.id()));
    assert_eq!(pa.register_key(b.public(), "machine-b", "owner").unwrap(), record, "registered once");
    pb.append_group(2, vec![(keyed("k2"), bodies(1))]).unwrap();
    pb.append_erasure(3, &CommandMeta::new("cli:test"), erasure_of(&[1])).unwrap();
    pa.append_group(4, vec![(keyed("k3"), bodies(2))]).unwrap();
    let report = pb.verify().unwrap();
    assert!(report.ok && report.signed, "{report:?}");
    assert_eq!((report.checkpoints, report.signed_through, report.keys.len()), (4, Some(6), 2), "{report:?}");
    let s = pa.signatures(u64::MAX).unwrap().unwrap();
    let signers: Vec<_> = s.checkpoints.iter().map(|c| c.as_ref().unwrap().key).collect();
    assert_eq!(signers, [a.id(), b.id(), b.id(), a.id()], "each commit is signed by the machine that made it");
    for sql in
        ["DELETE FROM memledger_checkpoints", "UPDATE memledger_keys SET retires = true", "TRUNCATE memledger_keys"]
    {
        assert!(try_sql(&url, sql).expect_err(sql).contains("append-only"), "{sql}");
    }
}

#[test]
fn a_forger_with_the_database_but_no_key_is_caught_and_not_signed_over() {
    let Some(url) = fresh_pg_database() else { return };
    let keys = tempfile::tempdir().unwrap();
    let a = machine_key(keys.path(), "a");
    let pg = PgLedger::connect(&url).unwrap();
    pg.sign_with(a.clone(), "machine-a").unwrap();
    for i in 0..3u64 {
        pg.append_group(i * 2, vec![(keyed(&format!("k{i}")), bodies(2))]).unwrap();
    }
    assert!(pg.verify().unwrap().ok);

    // Forger 1: rewrite seq 2 and recompute every later hash and the head, triggers off.
    let mut events = pg.read(1, 100).unwrap();
    events[1].actor = "cli:forger".into();
    for i in 1..events.len() {
        events[i].prev_hash = events[i - 1].hash;
        events[i].seal();
    }
    let original = pg.read(1, 100).unwrap();
    run_sql(&url, &overwrite_events_sql(&events[1..]));
    let report = pg.verify().unwrap();
    assert!(!report.ok, "{report:?}");
    assert_eq!(report.first_bad_seq, Some(1), "seq 2 was signed only by the checkpoint at 2: {report:?}");
    assert!(report.problem.as_deref().unwrap().contains("no valid signature covers"), "{report:?}");
    // The owner signs nothing on top of it.
    let refused = pg.append_group(6, vec![(keyed("k9"), bodies(1))]).unwrap_err().to_string();
    assert!(refused.contains("not signed by a registered key"), "{refused}");

    // Forger 2, on the history put back: a validly chained event after the head, no checkpoint.
    run_sql(&url, &overwrite_events_sql(&original));
    let mut tail = original.last().unwrap().clone();
    tail.seq += 1;
    tail.prev_hash = original.last().unwrap().hash;
    tail.seal();
    let sql = format!(
        "INSERT INTO memledger_events (seq, hash, prev_hash, event) VALUES ({}, {}, {}, {}); \
         UPDATE memledger_head SET seq = {}, hash = {};",
        tail.seq,
        bytea(&tail.hash.0),
        bytea(&tail.prev_hash.0),
        bytea(&memledger_schemas::codec::encode_event(&tail)),
        tail.seq,
        bytea(&tail.hash.0)
    );
    run_sql(&url, &sql);
    let report = pg.verify().unwrap();
    assert_eq!(report.first_bad_seq, Some(7), "{report:?}");
    assert!(report.problem.as_deref().unwrap().contains("unsigned tail"), "{report:?}");
    let refused = pg.append_group(7, vec![(keyed("k9"), bodies(1))]).unwrap_err().to_string();
    assert!(refused.contains("not signed by a registered key"), "{refused}");

    // A key the forger makes and endorses itself counts for nothing.
    let forged = machine_key(keys.path(), "forger");
    let endorsement = forged.endorse(pg.signatures(0).unwrap().unwrap().store_id, &forged.public(), 7);
    run_sql(
        &url,
        &format!(
            "INSERT INTO memledger_keys (id, public, from_seq, endorsed_by, endorsement, retires, machine, \
             registered_by, registered_at) VALUES ({}, {}, 7, {}, {}, false, 'forger', 'forger', 0)",
            bytea(&forged.id().0),
            bytea(&forged.public()),
            bytea(&forged.id().0),
            bytea(&endorsement)
        ),
    );
    // Nor does a checkpoint it signs over the forged tail: verify fails and no machine signs on.
    let store_id = pg.signatures(0).unwrap().unwrap().store_id;
    let head = Head { seq: tail.seq, hash: tail.hash };
    run_sql(
        &url,
        &format!(
            "INSERT INTO memledger_checkpoints (seq, key_id, signature) VALUES ({}, {}, {})",
            tail.seq,
            bytea(&forged.id().0),
            bytea(&forged.sign_checkpoint(store_id, head))
        ),
    );
    let report = pg.verify().unwrap();
    assert!(report.problem.as_deref().unwrap().contains("is not endorsed by a key"), "{report:?}");
    let refused = pg.append_group(7, vec![(keyed("k9"), bodies(1))]).unwrap_err().to_string();
    assert!(refused.contains("signing keys do not verify"), "{refused}");

    // Removing every key and checkpoint does not make it an unsigned ledger to sign afresh: a
    // machine that opens it is not enrolled, and its appends are refused.
    run_sql(
        &url,
        "ALTER TABLE memledger_keys DISABLE TRIGGER USER; ALTER TABLE memledger_checkpoints DISABLE TRIGGER USER; \
         DELETE FROM memledger_keys; DELETE FROM memledger_checkpoints;",
    );
    let newcomer = PgLedger::connect(&url).unwrap();
    assert_eq!(newcomer.sign_with(machine_key(keys.path(), "newcomer"), "newcomer").unwrap(), None);
    let refused = newcomer.append_group(7, vec![(keyed("k9"), bodies(1))]).unwrap_err().to_string();
    assert!(refused.contains("no signing keys"), "{refused}");
}
