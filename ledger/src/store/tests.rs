//! The store with its read cache and its write-behind queue: every read answers what a plain
//! store that wrote each batch at once would answer.

/// Point reads of a cached table (crate::read_cache) through the store.
mod read_cache {
    use std::time::Duration;

    use proptest::prelude::*;

    use crate::batch::Batch;
    use crate::read_cache::LARGE_BATCH;
    use crate::store::Store;

    const TABLE: &str = "records";

    fn open(dir: &std::path::Path) -> Store {
        Store::open(dir, &[TABLE.into()], true, Duration::from_secs(1)).unwrap()
    }

    #[derive(Clone, Debug)]
    enum Op {
        Put(u8, Vec<u8>),
        Delete(u8),
        Clear,
        Get(u8),
        /// Several writes in one batch.
        Batch(Vec<(u8, Option<Vec<u8>>)>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let key = 0u8..6;
        let value = proptest::collection::vec(any::<u8>(), 0..40);
        prop_oneof![
            4 => (key.clone(), value.clone()).prop_map(|(k, v)| Op::Put(k, v)),
            2 => key.clone().prop_map(Op::Delete),
            1 => Just(Op::Clear),
            6 => key.clone().prop_map(Op::Get),
            2 => proptest::collection::vec((key, proptest::option::of(value)), 1..5).prop_map(Op::Batch),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// A store whose table is cached answers every read as the same store without the cache
        /// does, whatever sequence of puts, deletes, clears and batches came before; and the
        /// cache is really used (a value read or written is held afterwards).
        #[test]
        fn a_cached_table_reads_as_the_store_holds_it(ops in proptest::collection::vec(op(), 1..60)) {
            let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let (cached, plain) = (open(a.path()), open(b.path()));
            cached.cache_point_reads(TABLE);
            for op in ops {
                let mut batches = [Batch::default(), Batch::default()];
                match &op {
                    Op::Get(k) => {
                        let got = cached.get(TABLE, &[*k]).unwrap();
                        prop_assert_eq!(&got, &plain.get(TABLE, &[*k]).unwrap(), "key {}", k);
                        // Held after the read, as its value or as absent.
                        prop_assert!(cached.cache.holds(TABLE, &[*k]));
                        continue;
                    }
                    Op::Put(k, v) => batches.iter_mut().for_each(|b| b.put(TABLE, [*k], v)),
                    Op::Delete(k) => batches.iter_mut().for_each(|b| b.delete(TABLE, [*k])),
                    Op::Clear => batches.iter_mut().for_each(|b| b.clear(TABLE)),
                    Op::Batch(writes) => {
                        for (k, v) in writes {
                            for b in batches.iter_mut() {
                                match v {
                                    Some(v) => b.put(TABLE, [*k], v),
                                    None => b.delete(TABLE, [*k]),
                                }
                            }
                        }
                    }
                }
                let [x, y] = batches;
                cached.write(x, false).unwrap();
                plain.write(y, false).unwrap();
                if let Op::Put(k, _) | Op::Delete(k) = op {
                    prop_assert!(cached.cache.holds(TABLE, &[k]), "a key just written is held");
                }
            }
            for k in 0..6u8 {
                prop_assert_eq!(cached.get(TABLE, &[k]).unwrap(), plain.get(TABLE, &[k]).unwrap());
            }
        }
    }

    /// A batch of more than `LARGE_BATCH` writes to a cached table (a rebuild's chunk) empties
    /// the cache, and reads after it answer what the store holds.
    #[test]
    fn a_large_batch_empties_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        store.cache_point_reads(TABLE);
        let mut small = Batch::default();
        small.put(TABLE, b"k", b"old");
        store.write(small, false).unwrap();
        assert!(store.cache.holds(TABLE, b"k"));
        let mut large = Batch::default();
        for i in 0..=LARGE_BATCH as u32 {
            large.put(TABLE, i.to_be_bytes(), b"v");
        }
        large.put(TABLE, b"k", b"new");
        store.write(large, false).unwrap();
        assert!(!store.cache.holds(TABLE, b"k") && !store.cache.holds(TABLE, &0u32.to_be_bytes()));
        assert_eq!(store.cache.held_bytes(), 0);
        assert_eq!(store.get(TABLE, b"k").unwrap().as_deref(), Some(&b"new"[..]));
        assert!(store.cache.holds(TABLE, b"k"), "a read fills it again");
    }
}

/// Unsynced writes queued for the writer thread (crate::write_behind).
mod write_behind {
    use std::time::Duration;

    use proptest::prelude::*;

    use crate::batch::Batch;
    use crate::store::{Row, Store};
    use crate::write_behind::{MAX_PENDING, WriteBehind};

    /// A table the read cache answers for, and one it does not.
    const CACHED: &str = "cached";
    const PLAIN: &str = "plain";

    fn open(dir: &std::path::Path, behind: bool) -> Store {
        let store = Store::open(dir, &[CACHED.into(), PLAIN.into()], true, Duration::from_secs(1)).unwrap();
        store.cache_point_reads(CACHED);
        if behind {
            store.write_behind();
        }
        store
    }

    fn writer(store: &Store) -> &WriteBehind {
        store.behind.get().expect("write-behind is on")
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Unsynced writes, in one batch: (table, key, value or delete).
        Write(Vec<(bool, u8, Option<Vec<u8>>)>),
        Clear(bool),
        Synced(bool, u8, Vec<u8>),
        Get(bool, u8),
        Scan(bool),
        /// Hold the writer (queued batches stay queued) or let it go.
        Hold(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        let key = 0u8..5;
        let value = proptest::collection::vec(any::<u8>(), 0..24);
        prop_oneof![
            6 => proptest::collection::vec((any::<bool>(), key.clone(), proptest::option::of(value.clone())), 1..5)
                .prop_map(Op::Write),
            1 => any::<bool>().prop_map(Op::Clear),
            1 => (any::<bool>(), key.clone(), value).prop_map(|(t, k, v)| Op::Synced(t, k, v)),
            6 => (any::<bool>(), key).prop_map(|(t, k)| Op::Get(t, k)),
            1 => any::<bool>().prop_map(Op::Scan),
            2 => any::<bool>().prop_map(Op::Hold),
        ]
    }

    fn table(cached: bool) -> &'static str {
        if cached { CACHED } else { PLAIN }
    }

    fn scan(store: &Store, table: &str) -> Vec<Row> {
        store.scan_prefix(table, &[]).unwrap().map(Result::unwrap).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// (Fewer ops than `MAX_PENDING`: a held writer never fills the queue.)
        /// A store whose unsynced writes go to the writer thread answers every point read and
        /// scan as a store that writes them at once, whether the writer is held (the writes still
        /// queued) or not; and a held writer really leaves them queued.
        #[test]
        fn queued_writes_read_as_written(ops in proptest::collection::vec(op(), 1..60)) {
            let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let (behind, plain) = (open(a.path(), true), open(b.path(), false));
            let mut held = false;
            for op in ops {
                match op {
                    Op::Write(writes) => {
                        let mut batches = [Batch::default(), Batch::default()];
                        for (cached, k, v) in &writes {
                            for batch in batches.iter_mut() {
                                match v {
                                    Some(v) => batch.put(table(*cached), [*k], v),
                                    None => batch.delete(table(*cached), [*k]),
                                }
                            }
                        }
                        let [x, y] = batches;
                        behind.write(x, false).unwrap();
                        plain.write(y, false).unwrap();
                        if held {
                            let (cached, k, v) = writes.last().unwrap();
                            prop_assert_eq!(writer(&behind).pending_value(table(*cached), &[*k]), Some(v.clone()));
                        }
                    }
                    Op::Clear(cached) => {
                        for store in [&behind, &plain] {
                            let mut batch = Batch::default();
                            batch.clear(table(cached));
                            store.write(batch, false).unwrap();
                        }
                    }
                    Op::Get(cached, k) => {
                        prop_assert_eq!(behind.get(table(cached), &[k]).unwrap(), plain.get(table(cached), &[k]).unwrap());
                    }
                    // A scan or a synced write waits for the writer: let it go first.
                    Op::Scan(cached) => {
                        writer(&behind).hold(false);
                        prop_assert_eq!(scan(&behind, table(cached)), scan(&plain, table(cached)));
                        prop_assert_eq!(writer(&behind).pending_len(), 0);
                        writer(&behind).hold(held);
                    }
                    Op::Synced(cached, k, v) => {
                        writer(&behind).hold(false);
                        for store in [&behind, &plain] {
                            let mut batch = Batch::default();
                            batch.put(table(cached), [k], &v);
                            store.write(batch, true).unwrap();
                        }
                        writer(&behind).hold(held);
                    }
                    Op::Hold(hold) => {
                        held = hold;
                        writer(&behind).hold(hold);
                    }
                }
            }
            writer(&behind).hold(false);
            for cached in [true, false] {
                for k in 0..5u8 {
                    prop_assert_eq!(behind.get(table(cached), &[k]).unwrap(), plain.get(table(cached), &[k]).unwrap());
                }
                prop_assert_eq!(scan(&behind, table(cached)), scan(&plain, table(cached)));
            }
        }
    }

    /// A queued write that fails fails every later operation of the store, drops what was queued
    /// after it and empties the read cache; a fresh open finds what was written before it.
    #[test]
    fn a_failed_queued_write_fails_what_comes_after() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = open(dir.path(), true);
            let mut batch = Batch::default();
            batch.put(CACHED, b"k", b"before");
            store.write(batch, false).unwrap();
            store.sync_wal().unwrap();
            writer(&store).hold(true);
            writer(&store).fail_next();
            for (key, value) in [(&b"k"[..], &b"failed"[..]), (b"j", b"after it")] {
                let mut batch = Batch::default();
                batch.put(CACHED, key, value);
                store.write(batch, false).expect("queued: the failure is not known yet");
            }
            assert_eq!(store.get(CACHED, b"k").unwrap().as_deref(), Some(&b"failed"[..]), "read as queued");
            writer(&store).hold(false);
            let error = store.sync_wal().unwrap_err().to_string();
            assert!(error.contains("injected failure") && error.contains("open the store again"), "{error}");
            assert!(store.get(CACHED, b"k").is_err());
            assert!(store.write(Batch::default(), false).is_err());
            assert!(store.write(Batch::default(), true).is_err());
            assert!(store.scan_prefix(CACHED, b"").is_err());
            assert!(!store.cache.holds(CACHED, b"k") && !store.cache.holds(CACHED, b"j"));
        }
        let store = open(dir.path(), false);
        assert_eq!(store.get(CACHED, b"k").unwrap().as_deref(), Some(&b"before"[..]));
        assert_eq!(store.get(CACHED, b"j").unwrap(), None, "queued after the failure: dropped");
    }

    /// A vouching value ([`Batch::put_vouching`]) is made once, by whoever needs it first: not
    /// by the thread that queues its batch, by a read that finds the batch queued, else by the
    /// writer; and of the batches written as one, only the last one's is needed.
    #[test]
    fn a_vouching_value_is_made_once_and_only_where_needed() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), true);
        let made = Arc::new(AtomicUsize::new(0));
        let vouching = |key: &'static [u8], cached_too: bool| {
            let made = made.clone();
            let mut batch = Batch::default();
            batch.put(PLAIN, [key, b"-held"].concat(), b"held");
            if cached_too {
                batch.put(CACHED, key, b"cached");
            }
            batch.put_vouching(PLAIN, key, move || {
                made.fetch_add(1, Ordering::SeqCst);
                key.to_vec()
            });
            batch
        };
        for cached_too in [false, true] {
            made.store(0, Ordering::SeqCst);
            writer(&store).hold(true);
            let [read, skipped, last]: [&[u8]; 3] =
                if cached_too { [b"c-read", b"c-skipped", b"c-last"] } else { [b"read", b"skipped", b"last"] };
            for key in [read, skipped, last] {
                store.write(vouching(key, cached_too), false).unwrap();
            }
            assert_eq!(made.load(Ordering::SeqCst), 0, "queueing makes nothing (cached table too: {cached_too})");
            assert_eq!(store.get(PLAIN, read).unwrap().as_deref(), Some(read), "made by the read");
            assert_eq!(made.load(Ordering::SeqCst), 1);
            writer(&store).hold(false);
            store.sync_wal().unwrap();
            assert_eq!(made.load(Ordering::SeqCst), 2, "the last made by the writer, the read's not again");
            assert_eq!(store.get(PLAIN, read).unwrap().as_deref(), Some(read), "asked for: written");
            assert_eq!(store.get(PLAIN, skipped).unwrap(), None, "the last vouches for it: left out");
            assert_eq!(store.get(PLAIN, last).unwrap().as_deref(), Some(last));
            assert!(store.get(PLAIN, &[skipped, b"-held"].concat()).unwrap().is_some(), "its other writes are not");
        }
        store.write(vouching(b"synced", false), true).unwrap();
        assert_eq!(store.get(PLAIN, b"synced").unwrap().as_deref(), Some(&b"synced"[..]), "a synced write makes it");
    }

    /// A batch naming a table the store lacks is refused when it is written, not later.
    #[test]
    fn a_batch_for_a_missing_table_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), true);
        let mut batch = Batch::default();
        batch.put("nowhere", b"k", b"v");
        assert!(store.write(batch, false).unwrap_err().to_string().contains("missing table nowhere"));
        store.sync_wal().expect("nothing failed");
    }

    /// The queue holds at most `MAX_PENDING` batches (a writer waits for room), and the last
    /// handle's drop writes what is queued before the store closes.
    #[test]
    fn the_queue_is_bounded_and_written_on_close() {
        let dir = tempfile::tempdir().unwrap();
        let count = MAX_PENDING as u32 + 40;
        {
            let store = open(dir.path(), true);
            writer(&store).hold(true);
            let clone = store.clone();
            let filler = std::thread::spawn(move || {
                for i in 0..count {
                    let mut batch = Batch::default();
                    batch.put(PLAIN, i.to_be_bytes(), b"v");
                    clone.write(batch, false).unwrap();
                }
            });
            while writer(&store).pending_len() < MAX_PENDING {
                std::thread::yield_now();
            }
            // The filler has more to write, and the queue stays at its bound while held.
            assert_eq!(writer(&store).pending_len(), MAX_PENDING);
            writer(&store).hold(false);
            filler.join().unwrap();
            // The filler's last batches may still fill the queue: held with a full queue, the
            // next write would wait for room forever.
            writer(&store).settle().unwrap();
            // Held again: only closing the store writes this one.
            writer(&store).hold(true);
            let mut batch = Batch::default();
            batch.put(PLAIN, b"last", b"v");
            store.write(batch, false).unwrap();
        }
        let store = open(dir.path(), false);
        for i in 0..count {
            assert!(store.get(PLAIN, &i.to_be_bytes()).unwrap().is_some(), "batch {i}");
        }
        assert!(store.get(PLAIN, b"last").unwrap().is_some(), "queued when the store closed");
    }
}
