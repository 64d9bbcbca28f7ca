//! The storage module: the one place that touches RocksDB. Everything above it speaks in
//! tables (column families) and batches.
//!
//! Options are chosen on purpose: paranoid checks on, so a corrupt file fails loudly at open;
//! WAL recovery that tolerates only an incomplete trailing record (the one write that was never
//! acknowledged), so synced writes survive a crash and a torn tail does not block reopening.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rocksdb::{ColumnFamilyDescriptor, DB, DBRecoveryMode, Direction, IteratorMode, Options, WriteBatch, WriteOptions};

use crate::error::{LedgerError, OpenError};

/// The ledger's own column families.
pub const CF_EVENTS: &str = "events";
pub const CF_IDEMPOTENCY: &str = "idempotency";
pub const CF_META: &str = "meta";
const LEDGER_CFS: &[&str] = &[CF_EVENTS, CF_IDEMPOTENCY, CF_META];

/// A handle on the RocksDB database: cheap to clone.
#[derive(Clone)]
pub struct Store {
    db: Arc<DB>,
    path: PathBuf,
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
    opts
}

/// A table's options: the database's, plus, for view tables, the counter merge operator (view
/// counters, such as a term's count of active memories, are written as deltas, so a save need
/// not read a count to change it). The ledger's own tables never merge, so their files do not
/// name an operator.
fn table_options(name: &str) -> Options {
    let mut opts = db_options();
    if !LEDGER_CFS.contains(&name) {
        opts.set_merge_operator_associative(COUNTER_MERGE, add_counters);
    }
    opts
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

/// Decode a counter written through [`Batch::add`].
pub fn decode_counter(bytes: &[u8]) -> Option<i64> {
    bytes.try_into().ok().map(i64::from_be_bytes)
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

impl Store {
    /// Open (creating when `create`) the store at `path` with the ledger's tables and `views`.
    /// A store locked by another process is retried until `wait` has passed.
    pub fn open(path: &Path, views: &[&str], create: bool, wait: Duration) -> Result<Store, OpenError> {
        if path.exists() && !path.is_dir() {
            return Err(OpenError::Unusable { path: path.into(), reason: "it is a file, not a directory".into() });
        }
        let is_store = path.join("CURRENT").exists();
        if !is_store {
            if !create {
                return Err(OpenError::Missing { path: path.into() });
            }
            if path.exists() && std::fs::read_dir(path).map(|mut d| d.next().is_some()).unwrap_or(false) {
                return Err(OpenError::Unusable {
                    path: path.into(),
                    reason: "the directory is not empty and holds no store".into(),
                });
            }
            std::fs::create_dir_all(path)
                .map_err(|e| OpenError::Unusable { path: path.into(), reason: format!("cannot create it: {e}") })?;
        }
        let opts = db_options();
        let mut names: Vec<String> = LEDGER_CFS.iter().chain(views).map(|s| s.to_string()).collect();
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
        let started = Instant::now();
        loop {
            let descriptors: Vec<ColumnFamilyDescriptor> =
                names.iter().map(|n| ColumnFamilyDescriptor::new(n, table_options(n))).collect();
            match DB::open_cf_descriptors(&opts, path, descriptors) {
                Ok(db) => return Ok(Store { db: Arc::new(db), path: path.into() }),
                Err(e) if is_lock_error(&e) => {
                    if started.elapsed() >= wait {
                        return Err(OpenError::Locked { path: path.into(), waited: started.elapsed() });
                    }
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(e) => {
                    let mut reason = e.into_string();
                    if let Some(file) = corrupt_file_from_info_log(path, &reason) {
                        reason.push_str(&format!(" (in {file})"));
                    }
                    return Err(OpenError::Unusable { path: path.into(), reason });
                }
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn cf(&self, table: &str) -> Result<&rocksdb::ColumnFamily, LedgerError> {
        self.db.cf_handle(table).ok_or_else(|| LedgerError::Inconsistent(format!("missing table {table}")))
    }

    /// Read one value.
    pub fn get(&self, table: &str, key: &[u8]) -> Result<Option<Vec<u8>>, LedgerError> {
        Ok(self.db.get_cf(self.cf(table)?, key)?)
    }

    /// Every `(key, value)` whose key starts with `prefix`, in key order.
    pub fn scan_prefix<'a>(
        &'a self,
        table: &str,
        prefix: &'a [u8],
    ) -> Result<impl Iterator<Item = Result<(Box<[u8]>, Box<[u8]>), LedgerError>> + use<'a>, LedgerError> {
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
    ) -> Result<impl Iterator<Item = Result<(Box<[u8]>, Box<[u8]>), LedgerError>> + use<'a>, LedgerError> {
        let iter = self.db.iterator_cf(self.cf(table)?, IteratorMode::From(start, Direction::Forward));
        Ok(iter.map(|item| item.map_err(LedgerError::from)))
    }

    /// Make every write so far durable (writes made with `sync = false` included): the WAL is
    /// sequential, so syncing it covers all earlier writes.
    pub fn sync_wal(&self) -> Result<(), LedgerError> {
        Ok(self.db.flush_wal(true)?)
    }

    /// Flush every table's memtable to SST files (and so retire the WAL they came from). Writes
    /// are durable without it; tests use it to put data in SST files.
    pub fn flush(&self) -> Result<(), LedgerError> {
        let mut names: Vec<String> = LEDGER_CFS.iter().map(|s| s.to_string()).collect();
        if let Ok(existing) = DB::list_cf(&Options::default(), &self.path) {
            for name in existing {
                if name != "default" && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        for name in &names {
            if let Some(cf) = self.db.cf_handle(name) {
                self.db.flush_cf(cf)?;
            }
        }
        Ok(())
    }

    /// Apply a batch atomically. `sync` makes it durable before returning.
    pub fn write(&self, batch: Batch, sync: bool) -> Result<(), LedgerError> {
        let mut wo = WriteOptions::default();
        wo.set_sync(sync);
        self.write_with(batch, &wo)
    }

    /// Apply a batch without logging it: it survives a crash only once its tables are flushed
    /// ([`Store::flush_tables`]), so the caller must flush them before anything else writes to
    /// them. For rebuilding derived tables, where a crash just restarts the rebuild.
    pub fn write_unlogged(&self, batch: Batch) -> Result<(), LedgerError> {
        let mut wo = WriteOptions::default();
        wo.disable_wal(true);
        self.write_with(batch, &wo)
    }

    /// Flush these tables' memtables to files and wait (after [`Store::write_unlogged`]).
    pub fn flush_tables(&self, tables: &[&str]) -> Result<(), LedgerError> {
        for table in tables {
            self.db.flush_cf(self.cf(table)?)?;
        }
        Ok(())
    }

    fn write_with(&self, batch: Batch, wo: &WriteOptions) -> Result<(), LedgerError> {
        let mut wb = WriteBatch::default();
        for op in batch.ops {
            match op {
                Op::Put(table, k, v) => wb.put_cf(self.cf(table)?, k, v),
                Op::Delete(table, k) => wb.delete_cf(self.cf(table)?, k),
                Op::Add(table, k, delta) => wb.merge_cf(self.cf(table)?, k, delta.to_be_bytes()),
                Op::Clear(table) => {
                    // Every key memledger writes is shorter than 4 KiB of 0xff bytes.
                    wb.delete_range_cf(self.cf(table)?, Vec::<u8>::new(), vec![0xffu8; 4096])
                }
            }
        }
        Ok(self.db.write_opt(wb, wo)?)
    }
}

enum Op {
    Put(&'static str, Vec<u8>, Vec<u8>),
    Delete(&'static str, Vec<u8>),
    /// Add to a counter (see [`decode_counter`]).
    Add(&'static str, Vec<u8>, i64),
    Clear(&'static str),
}

/// Writes to several tables, applied atomically by [`Store::write`].
#[derive(Default)]
pub struct Batch {
    ops: Vec<Op>,
}

impl Batch {
    pub fn put(&mut self, table: &'static str, key: Vec<u8>, value: Vec<u8>) {
        self.ops.push(Op::Put(table, key, value));
    }
    pub fn delete(&mut self, table: &'static str, key: Vec<u8>) {
        self.ops.push(Op::Delete(table, key));
    }
    /// Add `delta` to the counter at `key` without reading it (see [`decode_counter`]).
    pub fn add(&mut self, table: &'static str, key: Vec<u8>, delta: i64) {
        self.ops.push(Op::Add(table, key, delta));
    }
    /// Remove every key of a table (a view being rebuilt).
    pub fn clear(&mut self, table: &'static str) {
        self.ops.push(Op::Clear(table));
    }
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// The name of the batch type projections write with.
pub type ViewBatch = Batch;
