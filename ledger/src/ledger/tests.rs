//! The ledger's signing of unsynced appends with the write-behind thread held, to put a sync
//! and the appends around it in a chosen order.

use std::sync::Arc;

use memledger_schemas::samples::sample_bodies;

use super::*;
use crate::signing::Signer;
use crate::witness::witness_path;

/// A sync's head whose checkpoint was left out, because an append queued after it and written
/// with it vouches for both: the witness the sync moves is that append's checkpoint, durable
/// by the same sync, and the store opens against it.
#[test]
fn a_sync_whose_head_a_later_append_vouches_for_moves_the_witness_to_that_append() {
    let dir = tempfile::tempdir().unwrap();
    let (path, witnesses) = (dir.path().join("store"), dir.path().join("witnesses"));
    let signer = Arc::new(Signer::create(&dir.path().join("signing.key")).unwrap());
    let options = OpenOptions { signer: Some(signer), witness_dir: Some(witnesses.clone()), ..OpenOptions::default() };
    let one = || vec![NewEvent::from(sample_bodies().remove(0))];
    let meta = CommandMeta::new("cli:test");
    {
        let ledger = Ledger::open(&path, &options, &[]).unwrap();
        ledger.store().write_behind();
        let writer = ledger.store().behind.get().expect("write-behind is on");
        ledger.append_with(0, &meta, one(), true).unwrap();
        writer.hold(true);
        ledger.append_with(1, &meta, one(), false).unwrap();
        std::thread::scope(|s| {
            let syncing = s.spawn(|| ledger.sync());
            // The sync has recorded head 2 and waits for the writer to write it.
            while writer.waiting() == 0 {
                std::thread::yield_now();
            }
            ledger.append_with(2, &meta, one(), false).unwrap();
            writer.hold(false);
            syncing.join().expect("the sync ends").expect("the sync succeeds");
        });
        assert!(CheckpointsTable::signature(&ledger.store, 2).unwrap().is_none(), "seq 3's vouches for it");
        assert!(CheckpointsTable::signature(&ledger.store, 3).unwrap().is_some());
        let report = ledger.verify().unwrap();
        assert!(report.ok && report.signed_through == Some(3), "{report:?}");
    }
    let witness = WitnessRecord::read(&witness_path(&witnesses, &path)).unwrap();
    assert_eq!(witness.seq, 3, "the checkpoint written with the synced head");
    let ledger = Ledger::open(&path, &options, &[]).expect("the store agrees with its witness");
    assert_eq!(ledger.head().seq, 3);
}
