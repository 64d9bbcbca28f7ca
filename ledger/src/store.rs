//! The storage module: the one place that touches RocksDB. Everything above it speaks in
//! tables (column families) and batches.
//!
//! Options are chosen on purpose: paranoid checks on, so a corrupt file fails loudly at open;
//! WAL recovery that tolerates only an incomplete trailing record (the one write that was never
//! acknowledged), so synced writes survive a crash and a torn tail does not block reopening.
//! The write-ahead log is buffered in the process until a synced write, [`Store::sync_wal`],
//! [`Store::write_log_buffer`] or close: nothing memledger acknowledges was written unsynced
//! (ADR 0009). Once [`Store::write_behind`] is on (the engine turns it on at every open), an
//! unsynced write is queued for a writer thread instead, and every read sees it at once
//! (crate::write_behind, ADR 0012).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rocksdb::{ColumnFamilyDescriptor, DB, DBRecoveryMode, Direction, IteratorMode, Options, WriteBatch, WriteOptions};

pub use crate::batch::{Batch, ViewBatch};
use crate::batch::{Value, Write};
use crate::error::{LedgerError, OpenError};
use crate::log_sync::LogFiles;
use crate::read_cache::{Lookup, ReadCache};
use crate::write_behind::WriteBehind;

/// The ledger's own column families.
pub const CF_EVENTS: &str = "events";
pub const CF_IDEMPOTENCY: &str = "idempotency";
pub const CF_META: &str = "meta";
const LEDGER_CFS: &[&str] = &[CF_EVENTS, CF_IDEMPOTENCY, CF_META];

/// A stored `(key, value)`, as scans yield it.
pub type Row = (Box<[u8]>, Box<[u8]>);

/// A handle on the RocksDB database: cheap to clone.
#[derive(Clone)]
pub struct Store {
    db: Arc<DB>,
    path: PathBuf,
    /// Point reads of the tables named by [`Store::cache_point_reads`] (crate::read_cache).
    pub(crate) cache: Arc<ReadCache>,
    /// The writer thread of unsynced writes, once [`Store::write_behind`] started it
    /// (crate::write_behind). Declared after `db`: the last handle's drop writes what is queued
    /// and stops the thread, which holds the database open until then.
    pub(crate) behind: Arc<OnceLock<WriteBehind>>,
    /// The write-ahead log's files, synced from this process so that syncs overlap
    /// (crate::log_sync).
    pub(crate) logs: Arc<LogFiles>,
}

fn db_options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.set_paranoid_checks(true);
    opts.set_wal_recovery_mode(DBRecoveryMode::TolerateCorruptedTailRecords);
    opts.set_track_and_verify_wals_in_manifest(true);
    opts.set_compression_type(rocksdb::DBCompressionType::Lz4);
    opts.set_keep_log_file_num(4);
    // Unsynced writes (a group commit's appends before its one sync, view updates) stay in
    // RocksDB's log buffer instead of costing a write(2) each; a synced write, a WAL sync and
    // close write the buffer out, and RocksDB writes it before switching memtables, so a flushed
    // table never holds what the log lost. See docs/adr/0009-wal-buffer.md.
    opts.set_manual_wal_flush(true);
    // One process writes, under one lock; an unsorted memtable (Reads::Rarely) cannot take
    // concurrent inserts, and RocksDB refuses to open a table with one unless this is off.
    opts.set_allow_concurrent_memtable_write(false);
    opts
}

/// A table's options: the database's, plus, for view tables, the counter merge operator. No view
/// writes counters any more (a belief view of version 4 did: a term's count of active memories,
/// written as deltas), but the files of such a store name the operator and may hold its operands
/// until the view's rebuild has been compacted away, so it stays registered. The ledger's own
/// tables never merge, so their files do not name an operator.
fn table_options(name: &str, reads: Reads) -> Options {
    let mut opts = db_options();
    if !LEDGER_CFS.contains(&name) {
        opts.set_merge_operator_associative(COUNTER_MERGE, add_counters);
    }
    match reads {
        Reads::Rarely => opts.set_memtable_factory(rocksdb::MemtableFactory::Vector),
        // Most point reads of a save ask a view for a key that does not exist (a new text's
        // content hash): bloom filters answer those without searching the memtable's skip list
        // or a file's blocks. Not for the ledger's own tables (ADR 0006): a view found wrong is
        // rebuilt from the ledger, and `verify` compares every view with a replay.
        Reads::Often if !LEDGER_CFS.contains(&name) => {
            // A view's keys arrive in random order (memory ids, content hashes), and inserting
            // one walks the memtable's skip list from the top: small memtables keep that walk
            // short and the memory held low, for more (and smaller) files to flush and read.
            opts.set_write_buffer_size(8 << 20);
            opts.set_memtable_prefix_bloom_ratio(0.02);
            opts.set_memtable_whole_key_filtering(true);
            let mut blocks = rocksdb::BlockBasedOptions::default();
            blocks.set_bloom_filter(10.0, false);
            opts.set_block_based_table_factory(&blocks);
        }
        Reads::Often => {}
    }
    opts
}

/// A view's table as the store opens it: its name and how it is read, which decides how RocksDB
/// holds its recent writes in memory (docs/adr/0011-unsorted-memtable-for-the-audit-index.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    pub name: &'static str,
    pub reads: Reads,
}

impl From<&'static str> for Table {
    /// A table read while commands run.
    fn from(name: &'static str) -> Table {
        Table { name, reads: Reads::Often }
    }
}

/// How a table is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// By point reads and prefix scans while commands run: RocksDB's sorted (skip list) memtable,
    /// and for a view's table bloom filters over whole keys in the memtable and in its files.
    Often,
    /// Only by scans outside the save path (`why`, `verify`): an unsorted (vector) memtable,
    /// appended to on each write and sorted once when flushed (or copied and sorted for a read
    /// before that). A sorted memtable would insert each save's keys at random places of a skip
    /// list, for a table nothing on the save path reads.
    Rarely,
}

/// The name RocksDB records for [`add_counters`]; it must never change meaning.
const COUNTER_MERGE: &str = "memledger.add_i64_be";

/// Merge operator of counters: a counter is an `i64` in 8 big-endian bytes (absent is 0), and
/// each operand is a delta in the same form. A value of another length fails the merge (RocksDB
/// then reports corruption) rather than being guessed at.
fn add_counters(_key: &[u8], existing: Option<&[u8]>, operands: &rocksdb::MergeOperands) -> Option<Vec<u8>> {
    let read = |b: &[u8]| b.try_into().ok().map(i64::from_be_bytes);
    let mut total = match existing {
        Some(b) => read(b)?,
        None => 0,
    };
    for op in operands.iter() {
        total = total.checked_add(read(op)?)?;
    }
    Some(total.to_be_bytes().to_vec())
}

fn is_lock_error(e: &rocksdb::Error) -> bool {
    let s = e.as_ref().to_ascii_lowercase();
    s.contains("lock")
        && (s.contains("resource temporarily unavailable") || s.contains("lock hold") || s.contains("locked"))
}

/// RocksDB reports a damaged write-ahead log record at open as a bare "Corruption: checksum
/// mismatch"; the file it was replaying is only in its info log (`<store>/LOG`, a line
/// "<file>: dropping N bytes; Corruption: ..."). Name that file, when the error names none.
fn corrupt_file_from_info_log(path: &Path, reason: &str) -> Option<String> {
    if !reason.contains("Corruption")
        || reason.contains(".sst")
        || reason.contains("MANIFEST")
        || reason.contains(".log")
    {
        return None;
    }
    let log = std::fs::read_to_string(path.join("LOG")).ok()?;
    let line = log.lines().rev().find(|l| l.contains(": dropping ") && l.contains("Corruption"))?;
    let before = &line[..line.find(": dropping ")?];
    let file = before.rsplit(|c: char| c.is_whitespace() || c == ']').next()?;
    (file.ends_with(".log")).then(|| format!("the write-ahead log {file}"))
}

/// RocksDB reports a table file whose properties it cannot read at open with the corruption
/// alone ("Corruption: properties unsorted", "Corruption: block checksum mismatch: …"), at times
/// blaming the MANIFEST, which only lists the table. Name the table: each `.sst` of the store is
/// ingested, alone, into a scratch database, and the one whose ingestion fails with the same
/// corruption is it (a sound table fails otherwise, or not at all). Only for a refused open
/// that names no table.
fn damaged_table(path: &Path, reason: &str) -> Option<String> {
    let corruption = reason.split_once("Corruption: ")?.1.split("  ").next()?.trim();
    if corruption.is_empty() || reason.contains(".sst") {
        return None;
    }
    let mut tables: Vec<PathBuf> = std::fs::read_dir(path)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    tables.sort();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let scratch = std::env::temp_dir().join(format!("memledger-damaged-table-{}-{nanos}", std::process::id()));
    let found = (|| {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let db = DB::open(&opts, &scratch).ok()?;
        tables.iter().find_map(|table| match db.ingest_external_file(vec![table]) {
            Err(e) if e.as_ref().contains(corruption) => {
                table.file_name().map(|n| format!("the table file {}", n.to_string_lossy()))
            }
            _ => None,
        })
    })();
    let _ = DB::destroy(&Options::default(), &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    found
}

/// The file in a store directory that processes creating the store lock (never removed: a
/// process may be waiting on it).
pub const CREATION_LOCK: &str = "create.lock";

/// Take the exclusive lock on the store directory's [`CREATION_LOCK`], waiting for a process
/// that holds it. Creating a store is many files (RocksDB's `LOCK`, its log, `CURRENT` last):
/// without the lock a second process starting at the same moment sees a directory that is not
/// empty and holds no store yet. The lock is held until the store is open, so a process that
/// waited finds `CURRENT` and opens the store as any other, waiting for RocksDB's lock.
fn creation_lock(path: &Path) -> Result<std::fs::File, OpenError> {
    let unusable =
        |e: std::io::Error| OpenError::Unusable { path: path.into(), reason: format!("cannot lock it: {e}") };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path.join(CREATION_LOCK))
        .map_err(unusable)?;
    file.lock().map_err(unusable)?;
    Ok(file)
}

/// The file in a store directory naming the process that last opened the store (its pid and
/// the time it opened it). A process waiting for the store's lock waits `--wait` per holder:
/// while holders come and go, processes queued behind them are making progress, and only a
/// holder that keeps the store longer than the wait ends the wait.
pub const HOLDER: &str = "holder";

/// Record this process as the store's holder: best effort (a read-only directory leaves the
/// waiting processes with one wait in all, as before).
fn record_holder(path: &Path) {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let _ = std::fs::write(path.join(HOLDER), format!("{} {nanos}\n", std::process::id()));
}

/// Whether the directory holds anything but the creation lock.
fn holds_other_files(path: &Path) -> bool {
    std::fs::read_dir(path).map(|d| d.flatten().any(|entry| entry.file_name() != CREATION_LOCK)).unwrap_or(false)
}

impl Store {
    /// Open (creating when `create`) the store at `path` with the ledger's tables and `views`.
    /// A store locked by another process is retried until `wait` has passed with one holder
    /// keeping it ([`HOLDER`]).
    pub fn open(path: &Path, views: &[Table], create: bool, wait: Duration) -> Result<Store, OpenError> {
        if path.exists() && !path.is_dir() {
            return Err(OpenError::Unusable { path: path.into(), reason: "it is a file, not a directory".into() });
        }
        let mut is_store = path.join("CURRENT").exists();
        // Held while this process creates the store: see `creation_lock`.
        let mut _creating = None;
        if !is_store {
            if !create {
                return Err(OpenError::Missing { path: path.into() });
            }
            // Files but no lock file: not a store being created (its creator makes the lock file
            // first), someone else's directory. Refused without adding a file to it. The files
            // are looked for before the lock file: a creator starting in between makes its lock
            // file before any other, so files seen imply a lock file seen after them.
            if holds_other_files(path) && !path.join(CREATION_LOCK).exists() {
                return Err(OpenError::Unusable {
                    path: path.into(),
                    reason: "the directory is not empty and holds no store".into(),
                });
            }
            std::fs::create_dir_all(path)
                .map_err(|e| OpenError::Unusable { path: path.into(), reason: format!("cannot create it: {e}") })?;
            _creating = Some(creation_lock(path)?);
            // Another process may have created it while this one waited for the lock.
            is_store = path.join("CURRENT").exists();
            if is_store {
                _creating = None;
            } else if holds_other_files(path) {
                return Err(OpenError::Unusable {
                    path: path.into(),
                    reason: "the directory is not empty and holds no store".into(),
                });
            }
        }
        let opts = db_options();
        let mut names: Vec<String> =
            LEDGER_CFS.iter().chain(views.iter().map(|t| &t.name)).map(|s| s.to_string()).collect();
        let reads = |name: &str| views.iter().find(|t| t.name == name).map_or(Reads::Often, |t| t.reads);
        if is_store {
            // RocksDB must be told every existing family, including views this build no longer has.
            if let Ok(existing) = DB::list_cf(&opts, path) {
                for name in existing {
                    if name != "default" && !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
        }
        let first = Instant::now();
        let mut started = first;
        let mut backoff = Duration::from_millis(1);
        let mut holder = std::fs::read(path.join(HOLDER)).ok();
        loop {
            let descriptors: Vec<ColumnFamilyDescriptor> =
                names.iter().map(|n| ColumnFamilyDescriptor::new(n, table_options(n, reads(n)))).collect();
            match DB::open_cf_descriptors(&opts, path, descriptors) {
                Ok(db) => {
                    record_holder(path);
                    return Ok(Store {
                        db: Arc::new(db),
                        path: path.into(),
                        cache: Default::default(),
                        behind: Default::default(),
                        logs: Arc::new(LogFiles::new(path)),
                    });
                }
                Err(e) if is_lock_error(&e) => {
                    let now_held_by = std::fs::read(path.join(HOLDER)).ok();
                    if now_held_by != holder {
                        holder = now_held_by;
                        started = Instant::now();
                    }
                    if started.elapsed() >= wait {
                        return Err(OpenError::Locked { path: path.into(), waited: first.elapsed() });
                    }
                    // Short at first (a command holds the store for milliseconds), then 25 ms.
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_millis(25));
                }
                Err(e) => {
                    let file = corrupt_file_from_info_log(path, e.as_ref()).or_else(|| damaged_table(path, e.as_ref()));
                    return Err(OpenError::Refused { path: path.into(), source: e, file });
                }
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn cf(&self, table: &str) -> Result<&rocksdb::ColumnFamily, LedgerError> {
        cf_of(&self.db, table)
    }

    /// Answer point reads of `table` from memory from now on, for this store and its clones
    /// (crate::read_cache): for a table whose records are read again and again.
    pub fn cache_point_reads(&self, table: &'static str) {
        self.cache.enable(table);
    }

    /// Hand unsynced writes to a writer thread from now on, for this store and its clones
    /// (crate::write_behind): [`Store::write`] without `sync` queues the batch and returns.
    pub fn write_behind(&self) {
        self.behind.get_or_init(|| {
            let (db, cache) = (self.db.clone(), self.cache.clone());
            WriteBehind::start(
                move |batches| Ok(db.write_opt(rocks_batch(&db, batches)?, &WriteOptions::default())?),
                move || cache.forget_all(),
            )
        });
    }

    /// Wait until every queued unsynced write is in RocksDB (crate::write_behind); fail if one
    /// failed. Whatever reads or writes RocksDB other than by a point read calls this first.
    fn settle(&self) -> Result<(), LedgerError> {
        match self.behind.get() {
            Some(behind) => behind.settle(),
            None => Ok(()),
        }
    }

    /// The value a queued write gives `key` of `table`, if one does.
    fn pending(&self, table: &str, key: &[u8]) -> Option<Option<Vec<u8>>> {
        self.behind.get().and_then(|behind| behind.pending_value(table, key))
    }

    /// Read one value: from the read cache, else from the queue of unsynced writes, else from
    /// RocksDB.
    pub fn get(&self, table: &str, key: &[u8]) -> Result<Option<Vec<u8>>, LedgerError> {
        if let Some(behind) = self.behind.get() {
            behind.check()?;
        }
        match self.cache.lookup(table, key) {
            Lookup::Hit(value) => Ok(Some(value)),
            Lookup::Absent => Ok(None),
            Lookup::NotCached => match self.pending(table, key) {
                Some(value) => Ok(value),
                None => Ok(self.db.get_cf(self.cf(table)?, key)?),
            },
            Lookup::Miss(generation) => {
                if let Some(value) = self.pending(table, key) {
                    return Ok(value);
                }
                let value = self.db.get_cf(self.cf(table)?, key)?;
                self.cache.fill(table, key, value.as_deref(), generation);
                Ok(value)
            }
        }
    }

    /// Every `(key, value)` whose key starts with `prefix`, in key order.
    pub fn scan_prefix<'a>(
        &'a self,
        table: &str,
        prefix: &'a [u8],
    ) -> Result<impl Iterator<Item = Result<Row, LedgerError>> + use<'a>, LedgerError> {
        self.settle()?;
        let iter = self.db.iterator_cf(self.cf(table)?, IteratorMode::From(prefix, Direction::Forward));
        Ok(iter.map(|item| item.map_err(LedgerError::from)).take_while(move |item| match item {
            Ok((k, _)) => k.starts_with(prefix),
            Err(_) => true,
        }))
    }

    /// Every `(key, value)` from `start` on, in key order.
    pub fn scan_from<'a>(
        &'a self,
        table: &str,
        start: &[u8],
    ) -> Result<impl Iterator<Item = Result<Row, LedgerError>> + use<'a>, LedgerError> {
        self.settle()?;
        let iter = self.db.iterator_cf(self.cf(table)?, IteratorMode::From(start, Direction::Forward));
        Ok(iter.map(|item| item.map_err(LedgerError::from)))
    }

    /// Make every write so far durable (writes made with `sync = false` included): syncing the
    /// WAL covers all earlier writes. Calls from several threads sync side by side
    /// (crate::log_sync).
    pub fn sync_wal(&self) -> Result<(), LedgerError> {
        self.settle()?;
        self.logs.sync(&self.db)
    }

    /// Hand the log buffer to the operating system without syncing: from here on a killed process
    /// no longer loses the unsynced writes made so far (a machine crash still may). For state kept
    /// outside RocksDB, such as the text index, which must not commit a checkpoint its events
    /// could lose to a killed process.
    pub fn write_log_buffer(&self) -> Result<(), LedgerError> {
        self.settle()?;
        Ok(self.db.flush_wal(false)?)
    }

    /// Flush every table's memtable to SST files (and so retire the WAL they came from). Writes
    /// are durable without it; tests use it to put data in SST files.
    pub fn flush(&self) -> Result<(), LedgerError> {
        self.settle()?;
        for name in &self.table_names() {
            if let Some(cf) = self.db.cf_handle(name) {
                self.db.flush_cf(cf)?;
            }
        }
        Ok(())
    }

    /// Every table of the store: the ledger's, then the others it holds.
    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = LEDGER_CFS.iter().map(|s| s.to_string()).collect();
        if let Ok(existing) = DB::list_cf(&Options::default(), &self.path) {
            for name in existing {
                if name != "default" && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// Rewrite every table's files so that no value overwritten or deleted so far survives in
    /// them (an erasure): flush every memtable, which retires the write-ahead logs that held the
    /// old values, then compact each table's whole key range through its last level, which
    /// drops the old values and deletes the files that held them.
    pub fn purge(&self) -> Result<(), LedgerError> {
        self.flush()?;
        let mut options = rocksdb::CompactOptions::default();
        options.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
        options.set_exclusive_manual_compaction(true);
        for name in &self.table_names() {
            if let Some(cf) = self.db.cf_handle(name) {
                self.db.compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &options);
            }
        }
        Ok(())
    }

    /// Apply a batch atomically. `sync` makes it durable before returning. Without `sync`, once
    /// [`Store::write_behind`] has been called, the batch is queued for the writer thread and
    /// visible to every read of this store at once; an error of that write is returned by a later
    /// operation (crate::write_behind).
    pub fn write(&self, batch: Batch, sync: bool) -> Result<(), LedgerError> {
        if !sync && let Some(behind) = self.behind.get() {
            behind.wait_for_room()?;
            // A batch naming a table the store lacks is refused here, not by the writer.
            let mut checked: Vec<&str> = Vec::with_capacity(4);
            for write in batch.writes() {
                if !checked.contains(&write.table()) {
                    self.cf(write.table())?;
                    checked.push(write.table());
                }
            }
            let batch = Arc::new(batch);
            // The queue gets the batch and the cache takes it under the cache's lock, so that no
            // read finds a key in neither (a batch the queue refused empties the cache).
            let cache = self.cache.lock_for(&batch);
            let queued = behind.push(batch.clone());
            if let Some(mut cache) = cache {
                cache.written(&batch, queued.is_ok());
            }
            return queued;
        }
        self.settle()?;
        let mut wo = WriteOptions::default();
        wo.set_sync(sync);
        self.write_with(batch, &wo)
    }

    /// Apply a batch without logging it: it survives a crash only once its tables are flushed
    /// ([`Store::flush_tables`]), so the caller must flush them before anything else writes to
    /// them. For rebuilding derived tables, where a crash just restarts the rebuild.
    pub fn write_unlogged(&self, batch: Batch) -> Result<(), LedgerError> {
        self.settle()?;
        let mut wo = WriteOptions::default();
        wo.disable_wal(true);
        self.write_with(batch, &wo)
    }

    /// Flush these tables' memtables to files and wait (after [`Store::write_unlogged`]).
    pub fn flush_tables(&self, tables: &[&str]) -> Result<(), LedgerError> {
        self.settle()?;
        for table in tables {
            self.db.flush_cf(self.cf(table)?)?;
        }
        Ok(())
    }

    fn write_with(&self, batch: Batch, wo: &WriteOptions) -> Result<(), LedgerError> {
        let wb = rocks_batch(&self.db, std::slice::from_ref(&batch))?;
        // A batch that writes a cached table is written under the cache's lock, and the cache
        // follows what was written (or forgets everything when the write failed).
        let cache = self.cache.lock_for(&batch);
        let written = self.db.write_opt(wb, wo);
        if let Some(mut cache) = cache {
            cache.written(&batch, written.is_ok());
        }
        Ok(written?)
    }
}

/// The handle of `table` in `db`; a table the store was not opened with is an error.
fn cf_of<'a>(db: &'a DB, table: &str) -> Result<&'a rocksdb::ColumnFamily, LedgerError> {
    db.cf_handle(table).ok_or_else(|| LedgerError::Inconsistent(format!("missing table {table}")))
}

/// `batches`, in order, as one RocksDB write batch (applied atomically).
fn rocks_batch(db: &DB, batches: &[impl std::borrow::Borrow<Batch>]) -> Result<WriteBatch, LedgerError> {
    // RocksDB's batch holds each key and value with a few bytes of framing: size it once.
    let bytes: usize = batches.iter().map(|b| b.borrow().bytes_len() + 16 * b.borrow().len()).sum();
    let mut wb = WriteBatch::with_capacity_bytes(bytes + 12);
    // Batches name a handful of tables; look each one's handle up once.
    let mut handles: Vec<(&'static str, &rocksdb::ColumnFamily)> = Vec::with_capacity(8);
    // Of the values that vouch for the writes before them, the last one vouches for the lot.
    let last_vouching = batches.iter().rposition(|b| b.borrow().vouches());
    let writes = batches.iter().enumerate().flat_map(|(i, b)| {
        let vouched_after = last_vouching.is_some_and(|last| i < last);
        b.borrow()
            .writes()
            .filter(move |w| !matches!(w, Write::Put { value: Value::Later(l), .. } if l.may_skip(vouched_after)))
    });
    for write in writes {
        let table = write.table();
        let cf = match handles.iter().find(|(name, _)| *name == table) {
            Some((_, cf)) => *cf,
            None => {
                let cf = cf_of(db, table)?;
                handles.push((table, cf));
                cf
            }
        };
        match write {
            Write::Put { key, value, .. } => wb.put_cf(cf, key, value.bytes()),
            Write::Delete { key, .. } => wb.delete_cf(cf, key),
            // Every key memledger writes is shorter than 4 KiB of 0xff bytes.
            Write::Clear { .. } => wb.delete_range_cf(cf, Vec::<u8>::new(), vec![0xffu8; 4096]),
        }
    }
    Ok(wb)
}

#[cfg(test)]
mod tests;
