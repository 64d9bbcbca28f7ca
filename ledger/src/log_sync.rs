//! Syncing RocksDB's write-ahead log from this process, so that syncs run side by side.
//!
//! RocksDB syncs its log one sync at a time: a write made while a sync runs waits for that sync
//! to end before its own can start. The operating system has no such rule: several `fdatasync`s
//! of one file may run together, each covering what was written to the file before it began.
//! The group commit of a store's synced saves (docs/adr/0040-group-commit-through-the-server.md)
//! lets syncs overlap this way.
//!
//! The rules:
//! - The log buffer is first handed to the operating system (`flush_wal(false)`): every write
//!   so far is then in one of the live log files (`NNNNNN.log` in the store's directory, the
//!   name RocksDB gives them when no other log directory is set).
//! - A live log file longer than a finished sync of it found it is synced with `fdatasync`; its
//!   length is read before the sync begins, so the sync covers at least that much.
//! - A log file not seen before is synced by RocksDB (`flush_wal(true)`), which syncs every live
//!   log and the directory that names the new one; RocksDB creates a log when it switches
//!   memtables, rarely.
//! - A log file gone from the directory was obsolete: RocksDB deletes a log only once the tables
//!   its writes went to are synced.
//! - Each sync opens the log files afresh. Linux reports a failed write-back to each open file
//!   once: syncs sharing one descriptor would let one of two overlapping syncs see the failure
//!   and the other report success. A file opened before anyone has seen a failure reports it; one
//!   opened after a sync saw it does not.
//! - A failed `fdatasync` fails every later sync of the store: the system may have dropped the
//!   pages it could not write, and a later sync would then report success without them.
//! - So syncs end in the order they opened their files. A sync opens its files and takes its
//!   place in that order under one lock (RocksDB's sync takes its place before it starts, its
//!   descriptor being older than any), and reports success only once every sync placed before
//!   it has ended, none of them failed. A sync whose files were opened after another sync saw a
//!   failure is placed after that sync, so it learns of the failure from it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use rocksdb::DB;

use crate::error::LedgerError;

/// The live log files of one store, each with the length a finished sync covered.
pub(crate) struct LogFiles {
    dir: PathBuf,
    /// A log file's number, and the length through which a finished sync covered it.
    files: Mutex<BTreeMap<u64, u64>>,
    /// The first failed `fdatasync`: once set, every sync fails with it.
    failed: OnceLock<Arc<io::Error>>,
    /// The places of the syncs running, in the order they opened their files.
    order: Mutex<Order>,
    /// Signalled when a sync leaves the order.
    ended: Condvar,
    /// Tests make the next `fdatasync` fail, or hold it until they send its result.
    #[cfg(test)]
    fail_next: std::sync::atomic::AtomicBool,
    #[cfg(test)]
    hold_next: Mutex<Option<Hold>>,
    #[cfg(test)]
    waiting: std::sync::atomic::AtomicUsize,
}

/// A held `fdatasync`: it says it is held, then returns the result it is sent.
#[cfg(test)]
type Hold = (std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<io::Result<()>>);

#[derive(Default)]
struct Order {
    next: u64,
    running: BTreeSet<u64>,
}

/// A sync's place in the order; leaving it (on drop, so a panic leaves too) wakes later syncs.
struct Place<'a> {
    logs: &'a LogFiles,
    number: u64,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.logs.order_lock().running.remove(&self.number);
        self.logs.ended.notify_all();
    }
}

impl LogFiles {
    pub(crate) fn new(dir: &Path) -> LogFiles {
        LogFiles {
            dir: dir.into(),
            files: Mutex::new(BTreeMap::new()),
            failed: OnceLock::new(),
            order: Mutex::default(),
            ended: Condvar::new(),
            #[cfg(test)]
            fail_next: Default::default(),
            #[cfg(test)]
            hold_next: Mutex::default(),
            #[cfg(test)]
            waiting: Default::default(),
        }
    }

    /// Make every write to `db` so far durable. Calls from several threads sync side by side.
    pub(crate) fn sync(&self, db: &DB) -> Result<(), LedgerError> {
        self.check()?;
        db.flush_wal(false)?;
        let live = live_logs(&self.dir)?;
        let (unseen, known): (Vec<u64>, Vec<(u64, u64)>) = {
            let mut files = self.lock();
            files.retain(|number, _| live.contains(number));
            let unseen = live.iter().copied().filter(|number| !files.contains_key(number)).collect();
            (unseen, files.iter().map(|(&number, &synced)| (number, synced)).collect())
        };
        if live.is_empty() || !unseen.is_empty() {
            return self.sync_through_rocksdb(db, &unseen);
        }
        // The files to sync, opened in the sync's place in the order.
        let (opened, place) = {
            let mut order = self.order_lock();
            let mut opened = Vec::with_capacity(known.len());
            for (number, synced_len) in known {
                let Some(file) = open_log(&self.dir, number)? else { continue };
                let len = file.metadata()?.len();
                if len > synced_len {
                    opened.push((number, file, len));
                }
            }
            (opened, self.take_place(&mut order))
        };
        for (_, file, _) in &opened {
            if let Err(e) = self.sync_data(file) {
                let _ = self.failed.set(Arc::new(e));
                return self.check();
            }
        }
        self.end_after_earlier(place)?;
        let mut files = self.lock();
        for (number, _, len) in opened {
            if let Some(synced_len) = files.get_mut(&number) {
                *synced_len = (*synced_len).max(len);
            }
        }
        Ok(())
    }

    /// The next place in the order, for a sync whose files are open.
    fn take_place(&self, order: &mut Order) -> Place<'_> {
        let number = order.next;
        order.next += 1;
        order.running.insert(number);
        Place { logs: self, number }
    }

    /// Wait for every sync placed before `place` to end, then fail if any sync failed: an
    /// earlier sync may have seen a failure of pages this one covers, which this one's files,
    /// opened after, would not report.
    fn end_after_earlier(&self, place: Place<'_>) -> Result<(), LedgerError> {
        let mut order = self.order_lock();
        while order.running.range(..place.number).next().is_some() {
            #[cfg(test)]
            self.waiting.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            order = self.ended.wait(order).unwrap_or_else(|p| p.into_inner());
        }
        drop(order);
        self.check()
    }

    /// RocksDB's own sync, for log files this process has not synced yet: it syncs the directory
    /// too. Their lengths are read before it, so the lengths are covered.
    fn sync_through_rocksdb(&self, db: &DB, unseen: &[u64]) -> Result<(), LedgerError> {
        let mut lengths = Vec::with_capacity(unseen.len());
        for &number in unseen {
            if let Some(file) = open_log(&self.dir, number)? {
                lengths.push((number, file.metadata()?.len()));
            }
        }
        let place = self.take_place(&mut self.order_lock());
        if let Err(e) = db.flush_wal(true) {
            // RocksDB's descriptor saw the failure: one opened later would not.
            let _ = self.failed.set(Arc::new(io::Error::other(e.into_string())));
            return self.check();
        }
        self.end_after_earlier(place)?;
        let mut files = self.lock();
        for (number, len) in lengths {
            let synced_len = files.entry(number).or_default();
            *synced_len = (*synced_len).max(len);
        }
        Ok(())
    }

    fn sync_data(&self, file: &File) -> io::Result<()> {
        #[cfg(test)]
        let hold = self.hold_next.lock().unwrap().take();
        #[cfg(test)]
        if let Some((held, result)) = hold {
            held.send(()).unwrap();
            return result.recv().unwrap();
        }
        #[cfg(test)]
        if self.fail_next.swap(false, std::sync::atomic::Ordering::SeqCst) {
            return Err(io::Error::other("injected fdatasync failure"));
        }
        file.sync_data()
    }

    fn check(&self) -> Result<(), LedgerError> {
        match self.failed.get() {
            None => Ok(()),
            Some(cause) => Err(LedgerError::LogSyncFailed(cause.clone())),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, u64>> {
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn order_lock(&self) -> MutexGuard<'_, Order> {
        self.order.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The numbers of the log files in `dir`, by RocksDB's naming (`000123.log`).
fn live_logs(dir: &Path) -> Result<Vec<u64>, LedgerError> {
    let mut numbers = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".log")) else { continue };
        if !stem.is_empty()
            && stem.bytes().all(|b| b.is_ascii_digit())
            && let Ok(number) = stem.parse()
        {
            numbers.push(number);
        }
    }
    Ok(numbers)
}

/// Log file `number`, opened; `None` when it is gone (obsolete, see the module's rules).
fn open_log(dir: &Path, number: u64) -> Result<Option<File>, LedgerError> {
    match File::open(log_path(dir, number)) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn log_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.log"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::store::{Batch, CF_META, Store};

    /// Write `key` unsynced, with a value of 300 bytes (so a log file grows visibly).
    fn put(store: &Store, key: &[u8]) {
        let mut batch = Batch::default();
        batch.put(CF_META, key, [7u8; 300]);
        store.write(batch, false).unwrap();
    }

    /// After each sync every live log file is known, synced through its length: the first
    /// through RocksDB, the next by hand, and the log RocksDB starts when memtables are flushed
    /// through RocksDB again.
    #[test]
    fn a_sync_covers_every_live_log_and_takes_up_a_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &[], true, Duration::ZERO).unwrap();
        let all_synced = |when: &str| {
            let files = store.logs.lock();
            let live = live_logs(dir.path()).unwrap();
            assert!(!live.is_empty());
            for number in live {
                let synced = files.get(&number).unwrap_or_else(|| panic!("{when}: log {number} unknown"));
                let len = std::fs::metadata(log_path(dir.path(), number)).unwrap().len();
                assert!(len > 0 && *synced >= len, "{when}: log {number} synced through {synced} of {len}");
            }
        };
        put(&store, b"a");
        store.sync_wal().unwrap();
        all_synced("first sync");
        let first = store.logs.lock().keys().copied().max();
        put(&store, b"b");
        store.sync_wal().unwrap();
        all_synced("second sync");
        store.flush().unwrap();
        put(&store, b"c");
        store.sync_wal().unwrap();
        all_synced("after a memtable flush");
        assert!(store.logs.lock().keys().copied().max() > first, "a new log was taken up");
        drop(store);
        let store = Store::open(dir.path(), &[], false, Duration::ZERO).unwrap();
        for key in [b"a", b"b", b"c"] {
            assert!(store.get(CF_META, key).unwrap().is_some());
        }
    }

    /// A failed `fdatasync` fails that sync and every later one, though the disk is fine again.
    #[test]
    fn a_failed_sync_fails_every_later_sync() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &[], true, Duration::ZERO).unwrap();
        put(&store, b"a");
        store.sync_wal().unwrap();
        put(&store, b"b");
        store.logs.fail_next.store(true, std::sync::atomic::Ordering::SeqCst);
        let first = store.sync_wal().unwrap_err().to_string();
        assert!(first.contains("injected fdatasync failure") && first.contains("open the store again"), "{first}");
        put(&store, b"c");
        let later = store.sync_wal().unwrap_err().to_string();
        assert_eq!(later, first);
    }

    /// Two syncs, the earlier held in its `fdatasync` until the later one waits for it, then
    /// given `result`: their results.
    fn earlier_held_then(result: io::Result<()>) -> [Result<(), LedgerError>; 2] {
        use std::sync::atomic::Ordering::SeqCst;
        use std::sync::mpsc::channel;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &[], true, Duration::ZERO).unwrap();
        put(&store, b"a");
        store.sync_wal().unwrap();
        let results = std::thread::scope(|s| {
            // Made in the scope, so a failed assertion drops `release` and the held sync ends.
            let (held_tx, held) = channel();
            let (release, result_rx) = channel();
            *store.logs.hold_next.lock().unwrap() = Some((held_tx, result_rx));
            put(&store, b"b");
            let earlier = s.spawn(|| store.sync_wal());
            held.recv().unwrap();
            put(&store, b"c");
            let later = s.spawn(|| store.sync_wal());
            while store.logs.waiting.load(SeqCst) == 0 && !later.is_finished() {
                std::thread::yield_now();
            }
            assert!(!later.is_finished(), "the later sync waits for the earlier one");
            release.send(result).unwrap();
            [earlier.join().unwrap(), later.join().unwrap()]
        });
        assert!(store.logs.order_lock().running.is_empty());
        results
    }

    /// A sync whose own `fdatasync` succeeded does not report success while a sync placed before
    /// it runs, and fails when that one fails: the earlier one may have seen the failure of pages
    /// the later one covers.
    #[test]
    fn a_sync_ends_after_earlier_ones_and_fails_with_them() {
        let [earlier, later] = earlier_held_then(Err(io::Error::other("held fdatasync failed")));
        let earlier = earlier.unwrap_err().to_string();
        assert!(earlier.contains("held fdatasync failed"), "{earlier}");
        assert_eq!(later.unwrap_err().to_string(), earlier);
    }

    /// When the earlier sync succeeds, the later one does too.
    #[test]
    fn a_sync_placed_after_a_successful_one_succeeds() {
        let [earlier, later] = earlier_held_then(Ok(()));
        earlier.unwrap();
        later.unwrap();
    }

    #[test]
    fn only_rocksdb_log_names_are_logs() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["000007.log", "000012.log", "LOG", "LOG.old.1", "x.log", ".log", "000003.sst"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let mut numbers = live_logs(dir.path()).unwrap();
        numbers.sort();
        assert_eq!(numbers, vec![7, 12]);
        assert_eq!(log_path(dir.path(), 7), dir.path().join("000007.log"));
    }
}
