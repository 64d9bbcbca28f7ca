//! Many machines saving at once on one shared ledger (a real PostgreSQL from
//! scripts/services.sh): a save that keeps losing the race to the others decides holding the
//! ledger's exclusive turn, so every save is acknowledged — none gives up after its bounded
//! re-decisions — and the machines end at one head with views equal to a fresh replay; an
//! erasure among them takes the turn too, so it is never overtaken.

use memledger_engine::{Memledger, SaveRequest};
use memledger_tests::services::fresh_pg_database;

use crate::{assert_machines_agree, open_machine};

const MACHINES: usize = 16;
const SAVES: usize = 15;

#[test]
fn sixteen_machines_saving_at_once_all_get_their_saves_acknowledged() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let open = |m: usize| open_machine(&url, &root.path().join(format!("machine-{m}")));
    let machines: Vec<Memledger> = (0..MACHINES).map(open).collect();
    let start = std::sync::Barrier::new(MACHINES);
    let acked: Vec<String> = std::thread::scope(|scope| {
        let writers: Vec<_> = machines
            .iter()
            .enumerate()
            .map(|(m, ml)| {
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    (0..SAVES)
                        .map(|i| {
                            let text = format!("surveyor m{m} logs the tide gauge q{} at pier {i}", m * 100 + i);
                            let saved = ml.save(SaveRequest { text, ..SaveRequest::default() }, "test:contention");
                            saved.unwrap_or_else(|e| panic!("machine {m}, save {i}: {e}")).memory_id.hex()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        writers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(acked.len(), MACHINES * SAVES);
    assert_machines_agree(&machines.iter().collect::<Vec<_>>());
    for id in &acked {
        assert!(machines[0].show(id.parse().unwrap()).is_ok(), "{id} is on every machine");
    }
}

#[test]
fn erasures_while_other_machines_save_are_never_overtaken() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let open = |m: usize| open_machine(&url, &root.path().join(format!("machine-{m}")));
    let (eraser, savers) = (open(0), [open(1), open(2), open(3)]);
    let doomed: Vec<_> = (0..10)
        .map(|i| {
            let text = format!("courier {i} keeps the spare key under mat {}", i * 3 + 1);
            eraser.save(SaveRequest { text, ..SaveRequest::default() }, "test:contention").unwrap().memory_id
        })
        .collect();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for (m, ml) in savers.iter().enumerate() {
            let stop = &stop;
            scope.spawn(move || {
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let text = format!("tally m{m} counts crate q{} at bay {i}", m * 1000 + i);
                    ml.save(SaveRequest { text, ..SaveRequest::default() }, "test:contention").unwrap();
                    i += 1;
                }
            });
        }
        for id in &doomed {
            // Each erasure decides and appends holding the turn: never a moved head.
            eraser.erase(*id, false, None, false, "test:contention").unwrap_or_else(|e| panic!("erase: {e}"));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let machines: Vec<&Memledger> = savers.iter().chain([&eraser]).collect();
    assert_machines_agree(&machines);
    for ml in machines {
        for id in &doomed {
            let shown = ml.show(*id).unwrap();
            assert!(shown.erased.is_some() && shown.text.is_empty(), "erased on every machine: {shown:?}");
        }
    }
}
