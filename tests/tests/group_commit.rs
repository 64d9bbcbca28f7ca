//! Group commit on a shared ledger (a real PostgreSQL from scripts/services.sh): the saves one
//! process makes at once reach the ledger in shared transactions, none acknowledged before its
//! transaction commits, and a group whose transaction fails is acknowledged to none of its saves
//! and forgotten by the views (engine/src/group_commit.rs).

use memledger_engine::{Durability, EngineError, Memledger, SaveRequest};
use memledger_tests::services::{PrivatePostgres, create_database, fresh_pg_database, query_i64, run_sql};

use crate::{assert_machines_agree, open_machine};

fn request(text: String, key: Option<String>) -> SaveRequest {
    SaveRequest { text, idempotency_key: key, ..SaveRequest::default() }
}

/// The transactions that inserted the ledger's events.
fn transactions(url: &str) -> i64 {
    query_i64(url, "SELECT count(DISTINCT xmin::text)::bigint FROM memledger_events")
}

#[test]
fn many_saves_of_one_process_at_once_are_each_acknowledged_once() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (open_machine(&url, &root.path().join("a")), open_machine(&url, &root.path().join("b")));
    const SAVES: usize = 20;
    let writers = [(&a, 8usize), (&b, 4usize)];
    let acked: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = writers
            .iter()
            .enumerate()
            .flat_map(|(m, &(ml, threads))| {
                (0..threads).map(move |t| {
                    scope.spawn(move || {
                        (0..SAVES)
                            .map(|i| {
                                let text = format!("rig m{m} t{t} logs buoy q{} drifting at mark {i}", t * 100 + i);
                                let saved = ml.save(request(text, Some(format!("m{m}-t{t}-{i}"))), "test:group");
                                saved
                                    .unwrap_or_else(|e| panic!("machine {m}, thread {t}, save {i}: {e}"))
                                    .memory_id
                                    .hex()
                            })
                            .collect::<Vec<_>>()
                    })
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(acked.len(), 12 * SAVES);
    assert_machines_agree(&[&a, &b]);
    for id in &acked {
        assert!(b.show(id.parse().unwrap()).is_ok() && a.show(id.parse().unwrap()).is_ok(), "{id}");
    }
    let keys = query_i64(&url, "SELECT count(*) FROM memledger_idempotency");
    assert_eq!(keys, 12 * SAVES as i64, "every save's key once");
    eprintln!("group commit: {} saves in {} transactions", acked.len(), transactions(&url));
}

#[test]
fn deferred_saves_reach_the_shared_ledger_together_at_sync_and_not_before() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (open_machine(&url, &root.path().join("a")), open_machine(&url, &root.path().join("b")));
    let log = memledger_engine::connect_shared_ledger(&url).unwrap();
    let ids: Vec<_> = (0..40)
        .map(|i| {
            let text = format!("the depot at gate {i} stocks {} crates of pears", i * 7 + 3);
            a.save_with(request(text, None), "test:group", Durability::Deferred).unwrap().memory_id
        })
        .collect();
    // Staged, decided on one another, visible here: not in the shared ledger yet.
    assert_eq!(log.head().unwrap().seq, 0);
    assert!(a.show(ids[39]).is_ok());
    a.sync().unwrap();
    assert_eq!(transactions(&url), 1, "forty saves, one transaction");
    b.catch_up().unwrap();
    for id in &ids {
        assert!(b.show(*id).is_ok());
    }
    assert_machines_agree(&[&a, &b]);
}

#[test]
fn a_group_whose_transaction_fails_is_acknowledged_to_none_and_forgotten() {
    let Some(pg) = PrivatePostgres::start() else { return };
    let url = create_database(&pg.admin_url());
    let root = tempfile::tempdir().unwrap();
    let a = open_machine(&url, &root.path().join("a"));
    let kept = a.save(request("the ferry leaves pier two at noon".into(), None), "test:group").unwrap();
    let save_all = |ml: &Memledger| {
        (0..5)
            .map(|i| {
                let text = format!("locker {i} holds the spare oars, row {}", i + 11);
                ml.save_with(request(text, Some(format!("oars-{i}"))), "test:group", Durability::Deferred)
                    .unwrap()
                    .memory_id
            })
            .collect::<Vec<_>>()
    };
    let staged = save_all(&a);
    pg.stop();
    let err = a.sync().unwrap_err();
    assert!(matches!(err, EngineError::Storage(_)) && err.to_string().contains("not acknowledged"), "{err}");
    pg.start_again();
    // The copy and the views are back at what the shared ledger holds.
    for id in &staged {
        assert!(a.show(*id).is_err(), "a save of the failed group is gone");
    }
    assert!(a.show(kept.memory_id).is_ok());
    let b = open_machine(&url, &root.path().join("b"));
    assert_machines_agree(&[&a, &b]);
    // Tried again with their keys: each once.
    save_all(&a);
    a.sync().unwrap();
    assert_eq!(query_i64(&url, "SELECT count(*) FROM memledger_idempotency WHERE key LIKE 'oars-%'"), 5);
    b.catch_up().unwrap();
    assert_machines_agree(&[&a, &b]);
}

#[test]
fn a_group_that_lost_its_turn_is_refused_as_a_moved_head_and_forgotten() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (open_machine(&url, &root.path().join("a")), open_machine(&url, &root.path().join("b")));
    let staged = a
        .save_with(request("the kiln in shed four fires at dawn".into(), None), "test:group", Durability::Deferred)
        .unwrap();
    // The session holding the exclusive turn is cut: another machine may append again.
    run_sql(
        &url,
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' AND granted",
    );
    let other = b.save(request("the glaze room opens at nine".into(), None), "test:group").unwrap();
    let err = a.sync().unwrap_err();
    assert!(err.to_string().contains("ledger moved"), "{err}");
    assert!(a.show(staged.memory_id).is_err());
    a.catch_up().unwrap();
    assert!(a.show(other.memory_id).is_ok());
    assert_machines_agree(&[&a, &b]);
}
