//! Many machines saving at once on one shared ledger (a real PostgreSQL from
//! scripts/services.sh): a save that keeps losing the race to the others decides holding the
//! ledger's exclusive turn, so every save is acknowledged — none gives up after its bounded
//! re-decisions — and the machines end at one head with views equal to a fresh replay.

use memledger_engine::{Memledger, OpenOptions, SaveRequest};
use memledger_tests::services::fresh_pg_database;

const MACHINES: usize = 16;
const SAVES: usize = 15;

#[test]
fn sixteen_machines_saving_at_once_all_get_their_saves_acknowledged() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let open = |m: usize| {
        let log = memledger_engine::connect_shared_ledger(&url).unwrap();
        let options = OpenOptions { create: true, shared: Some(log), ..OpenOptions::default() };
        Memledger::open(&root.path().join(format!("machine-{m}")), &options).unwrap()
    };
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
    let heads: Vec<_> = machines
        .iter()
        .map(|ml| {
            let report = ml.verify().unwrap();
            assert!(report.ledger.ok && report.views_consistent, "{report:?}");
            ml.ledger().head()
        })
        .collect();
    assert!(heads.iter().all(|h| *h == heads[0]), "{heads:?}");
    for id in &acked {
        assert!(machines[0].show(id.parse().unwrap()).is_ok(), "{id} is on every machine");
    }
}
