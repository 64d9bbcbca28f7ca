//! The projector contract and the machinery around it: transactions over a view table,
//! checkpoints, catch-up, rebuild.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use memledger_ledger::store::{Batch, Reads, Store, Table};
use memledger_ledger::{Ledger, LedgerError};
use memledger_schemas::{Event, EventBody};

use crate::error::ProjectError;
use crate::keys::CHECKPOINT_KEY;

/// A view derived from the ledger. `apply` must be a pure function of the event and the view's
/// own table: no clock, no model, no other view.
pub trait Projector: Send + Sync {
    /// The view's name, which is also its table (column family) name.
    fn name(&self) -> &'static str;
    /// Bumped whenever the view's layout or meaning changes: an old view is then rebuilt.
    fn version(&self) -> u32;
    fn apply(&self, event: &Event, txn: &mut ViewTxn<'_>) -> Result<(), ProjectError>;
    /// Whether `apply` does nothing with events of this type ([`EventBody::type_name`]): a
    /// replay of views that all ignore a type does not decode its events. Rebuilding each view
    /// alone is tested to equal the incremental view.
    fn ignores(&self, _event_type: &str) -> bool {
        false
    }
    /// How the view's table is read: [`Reads::Rarely`] when nothing on the save path reads it.
    fn reads(&self) -> Reads {
        Reads::Often
    }
}

/// Where a view stands: its code version and the last seq it applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub version: u32,
    pub seq: u64,
}

impl Checkpoint {
    fn encode(self) -> Vec<u8> {
        let mut v = self.version.to_be_bytes().to_vec();
        v.extend_from_slice(&self.seq.to_be_bytes());
        v
    }

    fn decode(bytes: &[u8]) -> Option<Checkpoint> {
        if bytes.len() != 12 {
            return None;
        }
        Some(Checkpoint {
            version: u32::from_be_bytes(bytes[..4].try_into().ok()?),
            seq: u64::from_be_bytes(bytes[4..].try_into().ok()?),
        })
    }

    /// Read a view's checkpoint from its table.
    pub fn read(store: &Store, table: &str) -> Result<Option<Checkpoint>, LedgerError> {
        Ok(store.get(table, CHECKPOINT_KEY)?.and_then(|b| Checkpoint::decode(&b)))
    }
}

/// A transaction's writes: each key's new value, or `None` once deleted.
type Overlay = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// Reads and writes of one view while applying events: writes are buffered (and visible to
/// later reads in the same transaction) until the batch is written.
pub struct ViewTxn<'a> {
    store: &'a Store,
    table: &'static str,
    overlay: Overlay,
    /// The previous transaction's writes, when its batch may still be on its way into the store
    /// (a rebuild applies one chunk while the one before is written): read before the store.
    previous: Option<&'a Overlay>,
    /// Set when the table was cleared in this transaction: reads must not fall through.
    cleared: bool,
}

impl<'a> ViewTxn<'a> {
    pub fn new(store: &'a Store, table: &'static str) -> Self {
        ViewTxn { store, table, overlay: BTreeMap::new(), previous: None, cleared: false }
    }

    pub fn table(&self) -> &'static str {
        self.table
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, ProjectError> {
        if let Some(v) = self.overlay.get(key) {
            return Ok(v.clone());
        }
        if self.cleared {
            return Ok(None);
        }
        match self.previous.and_then(|previous| previous.get(key)) {
            Some(v) => Ok(v.clone()),
            None => Ok(self.store.get(self.table, key)?),
        }
    }

    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.overlay.insert(key, Some(value));
    }

    pub fn delete(&mut self, key: Vec<u8>) {
        self.overlay.insert(key, None);
    }

    /// Decode a record of this view.
    pub fn get_record<T: bincode::Decode<()>>(&self, key: &[u8]) -> Result<Option<T>, ProjectError> {
        match self.get(key)? {
            None => Ok(None),
            Some(bytes) => memledger_schemas::codec::decode(&bytes)
                .map(Some)
                .map_err(|source| ProjectError::Codec { view: self.table, source }),
        }
    }

    pub fn put_record<T: bincode::Encode>(&mut self, key: Vec<u8>, value: &T) {
        self.put(key, memledger_schemas::codec::encode(value));
    }

    /// Add the transaction's writes and `checkpoint` to `batch`; returns what it wrote, for a
    /// next transaction to read while the batch is being written.
    fn into_batch(self, batch: &mut Batch, checkpoint: Checkpoint) -> Overlay {
        if self.cleared {
            batch.clear(self.table);
        }
        for (k, v) in &self.overlay {
            match v {
                Some(v) => batch.put(self.table, k, v),
                None if self.cleared => {}
                None => batch.delete(self.table, k),
            }
        }
        batch.put(self.table, CHECKPOINT_KEY, checkpoint.encode());
        self.overlay
    }
}

/// Every `(key, value)` of a view's table, in key order ([`Views::dump`]).
pub type ViewDump = Vec<(Vec<u8>, Vec<u8>)>;

/// How many events a rebuild (or catch-up) applies per write.
const REBUILD_CHUNK: usize = 4096;

/// The set of views over one ledger.
pub struct Views {
    projectors: Vec<Box<dyn Projector>>,
    /// The seq each view's checkpoint in the ledger's own store stands at, as last written by
    /// `apply` (so a save does not read every view's checkpoint back); emptied by anything else that
    /// writes checkpoints there.
    applied: Mutex<Option<Vec<u64>>>,
    /// Events per chunk of a rebuild or catch-up ([`REBUILD_CHUNK`] unless a test sets it).
    chunk: AtomicUsize,
}

impl Views {
    pub fn new(projectors: Vec<Box<dyn Projector>>) -> Self {
        Views { projectors, applied: Mutex::new(None), chunk: AtomicUsize::new(REBUILD_CHUNK) }
    }

    /// Rebuild and catch up in chunks of `events` (at least 1): tests use tiny chunks so that
    /// records cross chunk boundaries, where a chunk reads what the one before wrote.
    pub fn set_rebuild_chunk(&self, events: usize) {
        self.chunk.store(events.max(1), Ordering::Relaxed);
    }

    fn applied(&self) -> std::sync::MutexGuard<'_, Option<Vec<u64>>> {
        self.applied.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The tables, for opening the store.
    pub fn tables(&self) -> Vec<Table> {
        self.projectors.iter().map(|p| Table { name: p.name(), reads: p.reads() }).collect()
    }

    /// The views' (and their tables') names.
    pub fn names(&self) -> Vec<&'static str> {
        self.projectors.iter().map(|p| p.name()).collect()
    }

    /// Bring every view up to the ledger head: rebuild a view whose version differs (returning a
    /// note for each), then apply what each has not seen.
    pub fn catch_up(&self, ledger: &Ledger) -> Result<Vec<String>, ProjectError> {
        *self.applied() = None;
        let mut notes = Vec::new();
        let mut stale = Vec::new();
        let mut fresh = Batch::default();
        for p in &self.projectors {
            match Checkpoint::read(ledger.store(), p.name())? {
                None => {
                    // A view never written: it stands at seq 0 of this version.
                    fresh.put(p.name(), CHECKPOINT_KEY, Checkpoint { version: p.version(), seq: 0 }.encode());
                }
                Some(c) if c.version != p.version() => {
                    notes.push(format!(
                        "view {} is at version {} and this build writes version {}: reindexing…",
                        p.name(),
                        c.version,
                        p.version()
                    ));
                    stale.push(p.name());
                }
                _ => {}
            }
        }
        if !fresh.is_empty() {
            ledger.store().write(fresh, false)?;
        }
        if !stale.is_empty() {
            self.rebuild(ledger, Some(&stale))?;
        }
        let head = ledger.head().seq;
        let lowest = self
            .projectors
            .iter()
            .map(|p| Checkpoint::read(ledger.store(), p.name()).map(|c| c.map(|c| c.seq).unwrap_or(0)))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .min()
            .unwrap_or(head);
        if lowest < head {
            let size = self.chunk.load(Ordering::Relaxed);
            let mut chunk = Vec::with_capacity(size);
            for event in ledger.scan(lowest + 1)? {
                chunk.push(event?);
                if chunk.len() == size {
                    self.apply(ledger, &chunk)?;
                    chunk.clear();
                }
            }
            self.apply(ledger, &chunk)?;
        }
        Ok(notes)
    }

    /// Apply newly appended events to every view that has not seen them, in one write.
    pub fn apply(&self, ledger: &Ledger, events: &[Event]) -> Result<(), ProjectError> {
        let Some(last) = events.last() else { return Ok(()) };
        let store = ledger.store();
        let mut applied = self.applied();
        let known = match applied.take() {
            Some(seqs) => seqs,
            None => self
                .projectors
                .iter()
                .map(|p| Checkpoint::read(store, p.name()).map(|c| c.map_or(0, |c| c.seq)))
                .collect::<Result<Vec<_>, _>>()?,
        };
        // About what a save's events write to the views, so that the batch is allocated
        // once instead of growing as the views add their keys.
        let mut batch = Batch::with_capacity(events.len() * 128 + 256);
        for (p, &from) in self.projectors.iter().zip(&known) {
            if last.seq <= from {
                continue;
            }
            if events[0].seq > from + 1 {
                return Err(ProjectError::Inapplicable {
                    view: p.name(),
                    seq: events[0].seq,
                    reason: format!("the view stands at seq {from}: catch up first"),
                });
            }
            let mut txn = ViewTxn::new(store, p.name());
            for event in events.iter().filter(|e| e.seq > from) {
                p.apply(event, &mut txn)?;
            }
            txn.into_batch(&mut batch, Checkpoint { version: p.version(), seq: last.seq });
        }
        if !batch.is_empty() {
            // Views are derived: no sync. A lost view write loses its checkpoint with it, and
            // catch-up redoes it on the next open.
            store.write(batch, false)?;
        }
        *applied = Some(known.iter().map(|&from| from.max(last.seq)).collect());
        Ok(())
    }

    /// Drop and replay the named views (all when `None`). Returns the events replayed.
    pub fn rebuild(&self, ledger: &Ledger, only: Option<&[&str]>) -> Result<u64, ProjectError> {
        self.rebuild_with_progress(ledger, only, &mut |_| {})
    }

    /// As [`Views::rebuild`], calling `progress` with the seq reached after each chunk.
    pub fn rebuild_with_progress(
        &self,
        ledger: &Ledger,
        only: Option<&[&str]>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<u64, ProjectError> {
        self.replay(ledger, ledger.store(), only, progress)
    }

    /// Replay the whole ledger into the view tables of another store (a scratch copy, to
    /// compare with the live views).
    pub fn replay_into(&self, ledger: &Ledger, target: &Store) -> Result<u64, ProjectError> {
        self.replay(ledger, target, None, &mut |_| {})
    }

    fn replay(
        &self,
        ledger: &Ledger,
        store: &Store,
        only: Option<&[&str]>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<u64, ProjectError> {
        *self.applied() = None;
        let chosen: Vec<&dyn Projector> = self
            .projectors
            .iter()
            .filter(|p| only.is_none_or(|names| names.contains(&p.name())))
            .map(|p| p.as_ref())
            .collect();
        if chosen.is_empty() {
            return Ok(0);
        }
        let head = ledger.head().seq;
        // One clearing write per view, with a checkpoint at 0: a crash mid-rebuild resumes by catch-up.
        let mut batch = Batch::default();
        for p in &chosen {
            let mut txn = ViewTxn::new(store, p.name());
            txn.cleared = true;
            txn.into_batch(&mut batch, Checkpoint { version: p.version(), seq: 0 });
        }
        store.write(batch, false)?;
        // One thread reads and decodes the ledger while this one applies the chunks, each view on
        // a thread of its own, and each view's chunks are written by a writer thread of its own:
        // while chunk k is inserted into RocksDB's memtables, chunk k+1 is applied, reading chunk
        // k's writes from its overlay (so a read never depends on whether that write has landed).
        // Before chunk k+2 is applied, chunk k's write has finished. Every view writes each chunk
        // with its own checkpoint, so a crash leaves each view at some chunk boundary, and
        // catch-up resumes from there. The chunks skip the write-ahead log (half the bytes a
        // rebuild writes) and are flushed at the end.
        let size = self.chunk.load(Ordering::Relaxed);
        // Event types no chosen view acts on are not decoded at all (for the belief view alone,
        // the classified pairs: most of the ledger).
        let skip: Vec<&str> =
            EventBody::TYPE_NAMES.iter().copied().filter(|t| chosen.iter().all(|p| p.ignores(t))).collect();
        let skip = skip.as_slice();
        let (send, receive) = std::sync::mpsc::sync_channel::<Result<Chunk, ProjectError>>(2);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let read = || -> Result<(), ProjectError> {
                    let mut chunk = Chunk::with_capacity(size);
                    for item in ledger.scan_skipping(1, skip)? {
                        let (seq, event) = item?;
                        if seq > head {
                            break;
                        }
                        chunk.last_seq = seq;
                        chunk.covered += 1;
                        chunk.events.extend(event);
                        if chunk.events.len() == size {
                            let full = std::mem::replace(&mut chunk, Chunk::with_capacity(size));
                            if send.send(Ok(full)).is_err() {
                                return Ok(());
                            }
                        }
                    }
                    if chunk.covered > 0 {
                        let _ = send.send(Ok(chunk));
                    }
                    Ok(())
                };
                if let Err(e) = read() {
                    let _ = send.send(Err(e));
                }
            });
            let mut replays: Vec<ChunkWriter> = chosen.iter().map(|_| ChunkWriter::spawn(scope, store)).collect();
            let mut replayed = 0u64;
            for chunk in receive {
                let chunk = chunk?;
                let apply = |p: &dyn Projector, writer: &mut ChunkWriter| -> Result<(), ProjectError> {
                    let mut txn = ViewTxn::new(store, p.name());
                    txn.previous = writer.in_flight.as_ref();
                    for event in &chunk.events {
                        p.apply(event, &mut txn)?;
                    }
                    let mut batch = Batch::default();
                    let written = txn.into_batch(&mut batch, Checkpoint { version: p.version(), seq: chunk.last_seq });
                    // Unlogged: the tables are flushed before the rebuild returns, and a crash
                    // before that leaves each view at a flushed chunk (or cleared), never ahead
                    // of its checkpoint.
                    writer.write(batch, written)
                };
                let mut pairs = chosen.iter().zip(replays.iter_mut());
                let (first, first_writer) = pairs.next().expect("at least one view");
                std::thread::scope(|views| -> Result<(), ProjectError> {
                    let others: Vec<_> = pairs.map(|(&p, w)| views.spawn(move || apply(p, w))).collect();
                    apply(*first, first_writer)?;
                    others.into_iter().try_for_each(|h| h.join().expect("a view's replay panicked"))
                })?;
                replayed += chunk.covered;
                progress(chunk.last_seq);
            }
            for writer in &mut replays {
                writer.finish()?;
            }
            let names: Vec<&str> = chosen.iter().map(|p| p.name()).collect();
            store.flush_tables(&names)?;
            Ok(replayed)
        })
    }

    /// Every `(key, value)` of a view's table, checkpoint included: for comparing an
    /// incremental view with a rebuilt one byte for byte.
    pub fn dump(&self, ledger: &Ledger, table: &str) -> Result<ViewDump, ProjectError> {
        self.dump_store(ledger.store(), table)
    }

    /// [`Views::dump`] of any store holding the view tables.
    pub fn dump_store(&self, store: &Store, table: &str) -> Result<ViewDump, ProjectError> {
        let mut out = Vec::new();
        for item in store.scan_from(table, &[])? {
            let (k, v) = item?;
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }
}

/// A run of the ledger a rebuild applies in one write per view.
struct Chunk {
    /// The decoded events (those of skipped types are not here).
    events: Vec<Event>,
    /// How many seqs the chunk covers, skipped ones included, and the last of them.
    covered: u64,
    last_seq: u64,
}

impl Chunk {
    fn with_capacity(events: usize) -> Chunk {
        Chunk { events: Vec::with_capacity(events), covered: 0, last_seq: 0 }
    }
}

/// A rebuild's writer of one view's chunks, on a thread of its own, one chunk in flight at a
/// time: handing it chunk k waits until chunk k-1 is in the store.
struct ChunkWriter {
    batches: Option<std::sync::mpsc::SyncSender<Batch>>,
    done: std::sync::mpsc::Receiver<Result<(), LedgerError>>,
    /// The writes of the chunk being written, for the next chunk's reads.
    in_flight: Option<Overlay>,
}

impl ChunkWriter {
    fn spawn<'scope>(scope: &'scope std::thread::Scope<'scope, '_>, store: &'scope Store) -> ChunkWriter {
        let (batches, to_write) = std::sync::mpsc::sync_channel::<Batch>(1);
        let (report, done) = std::sync::mpsc::channel();
        scope.spawn(move || {
            for batch in to_write {
                // After a failed write, no later chunk may land (its checkpoint would skip it).
                let result = store.write_unlogged(batch);
                let failed = result.is_err();
                if report.send(result).is_err() || failed {
                    return;
                }
            }
        });
        ChunkWriter { batches: Some(batches), done, in_flight: None }
    }

    /// Hand over the next chunk's batch (and the writes it holds); returns once the chunk before
    /// it is written.
    fn write(&mut self, batch: Batch, writes: Overlay) -> Result<(), ProjectError> {
        let sender = self.batches.as_ref().expect("a finished writer is not written to");
        let earlier = self.in_flight.is_some();
        if sender.send(batch).is_err() {
            // The thread ends only after a failed write, whose report is not read yet.
            self.wait()?;
            return Err(Self::stopped());
        }
        if earlier {
            self.wait()?;
        }
        self.in_flight = Some(writes);
        Ok(())
    }

    fn wait(&mut self) -> Result<(), ProjectError> {
        match self.done.recv() {
            Ok(result) => Ok(result?),
            Err(_) => Err(Self::stopped()),
        }
    }

    fn stopped() -> ProjectError {
        ProjectError::from(LedgerError::Inconsistent("a rebuild's writer stopped".into()))
    }

    /// Wait for the last chunk, and end the thread.
    fn finish(&mut self) -> Result<(), ProjectError> {
        self.batches = None;
        if self.in_flight.take().is_some() {
            self.wait()?;
        }
        Ok(())
    }
}
