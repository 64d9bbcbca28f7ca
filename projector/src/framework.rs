//! The projector contract and the machinery around it: transactions over a view table,
//! checkpoints, catch-up, rebuild.

use std::collections::BTreeMap;
use std::sync::Mutex;

use memledger_ledger::store::{Batch, Store};
use memledger_ledger::{Ledger, LedgerError};
use memledger_schemas::Event;

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

/// Reads and writes of one view while applying events: writes are buffered (and visible to
/// later reads in the same transaction) until the batch is written.
pub struct ViewTxn<'a> {
    store: &'a Store,
    table: &'static str,
    overlay: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Counter deltas not yet written (a key is either in `overlay` or here, never both).
    counters: BTreeMap<Vec<u8>, i64>,
    /// Set when the table was cleared in this transaction: reads must not fall through.
    cleared: bool,
}

impl<'a> ViewTxn<'a> {
    pub fn new(store: &'a Store, table: &'static str) -> Self {
        ViewTxn { store, table, overlay: BTreeMap::new(), counters: BTreeMap::new(), cleared: false }
    }

    pub fn table(&self) -> &'static str {
        self.table
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, ProjectError> {
        match self.overlay.get(key) {
            Some(v) => Ok(v.clone()),
            None if self.cleared => Ok(None),
            None => Ok(self.store.get(self.table, key)?),
        }
    }

    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.overlay.insert(key, Some(value));
    }

    pub fn delete(&mut self, key: Vec<u8>) {
        self.overlay.insert(key, None);
    }

    /// Add `delta` to the counter at `key` (an `i64`, absent is 0) without reading it.
    pub fn add(&mut self, key: Vec<u8>, delta: i64) {
        debug_assert!(!self.overlay.contains_key(&key), "a key is a counter or a value, not both");
        *self.counters.entry(key).or_default() += delta;
    }

    /// A counter's value, pending deltas included.
    pub fn counter(&self, key: &[u8]) -> Result<i64, ProjectError> {
        let stored = match self.cleared {
            true => None,
            false => self.store.get(self.table, key)?,
        };
        let base = stored.as_deref().and_then(memledger_ledger::store::decode_counter).unwrap_or(0);
        Ok(base + self.counters.get(key).copied().unwrap_or(0))
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

    fn into_batch(self, batch: &mut Batch, checkpoint: Checkpoint) {
        if self.cleared {
            batch.clear(self.table);
        }
        for (k, v) in self.overlay {
            match v {
                Some(v) => batch.put(self.table, k, v),
                None if self.cleared => {}
                None => batch.delete(self.table, k),
            }
        }
        // Even a zero delta is written: a counter exists once any event touched it, however the
        // events were grouped into transactions (so a rebuild equals the incremental view).
        for (k, delta) in self.counters {
            batch.add(self.table, k, delta);
        }
        batch.put(self.table, CHECKPOINT_KEY.to_vec(), checkpoint.encode());
    }
}

/// How many events a rebuild applies per write.
const REBUILD_CHUNK: usize = 4096;

/// The set of views over one ledger.
pub struct Views {
    projectors: Vec<Box<dyn Projector>>,
    /// The seq each view's checkpoint in the ledger's own store stands at, as last written by
    /// `apply` (so a save does not read four checkpoints back); emptied by anything else that
    /// writes checkpoints there.
    applied: Mutex<Option<Vec<u64>>>,
}

impl Views {
    pub fn new(projectors: Vec<Box<dyn Projector>>) -> Self {
        Views { projectors, applied: Mutex::new(None) }
    }

    fn applied(&self) -> std::sync::MutexGuard<'_, Option<Vec<u64>>> {
        self.applied.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The table names, for opening the store.
    pub fn tables(&self) -> Vec<&'static str> {
        self.projectors.iter().map(|p| p.name()).collect()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tables()
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
                    fresh.put(p.name(), CHECKPOINT_KEY.to_vec(), Checkpoint { version: p.version(), seq: 0 }.encode());
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
            let mut chunk = Vec::with_capacity(REBUILD_CHUNK);
            for event in ledger.scan(lowest + 1)? {
                chunk.push(event?);
                if chunk.len() == REBUILD_CHUNK {
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
        let mut batch = Batch::default();
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
        // a thread of its own. Every view writes its chunk with its own checkpoint, so a crash
        // leaves each view at some chunk boundary, and catch-up resumes from there. The chunks
        // skip the write-ahead log (half the bytes a rebuild writes) and are flushed at the end.
        let (send, receive) = std::sync::mpsc::sync_channel::<Result<Vec<Event>, ProjectError>>(2);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let read = || -> Result<(), ProjectError> {
                    let mut chunk: Vec<Event> = Vec::with_capacity(REBUILD_CHUNK);
                    for event in ledger.scan(1)? {
                        let event = event?;
                        if event.seq > head {
                            break;
                        }
                        chunk.push(event);
                        if chunk.len() == REBUILD_CHUNK {
                            let full = std::mem::replace(&mut chunk, Vec::with_capacity(REBUILD_CHUNK));
                            if send.send(Ok(full)).is_err() {
                                return Ok(());
                            }
                        }
                    }
                    if !chunk.is_empty() {
                        let _ = send.send(Ok(chunk));
                    }
                    Ok(())
                };
                if let Err(e) = read() {
                    let _ = send.send(Err(e));
                }
            });
            let mut replayed = 0u64;
            for chunk in receive {
                let chunk = chunk?;
                let Some(last) = chunk.last() else { continue };
                let apply = |p: &dyn Projector| -> Result<(), ProjectError> {
                    let mut txn = ViewTxn::new(store, p.name());
                    for event in &chunk {
                        p.apply(event, &mut txn)?;
                    }
                    let mut batch = Batch::default();
                    txn.into_batch(&mut batch, Checkpoint { version: p.version(), seq: last.seq });
                    // Unlogged: the tables are flushed before the rebuild returns, and a crash
                    // before that leaves each view at a flushed chunk (or cleared), never ahead
                    // of its checkpoint.
                    Ok(store.write_unlogged(batch)?)
                };
                let (first, rest) = chosen.split_first().expect("at least one view");
                std::thread::scope(|views| -> Result<(), ProjectError> {
                    let others: Vec<_> = rest.iter().map(|&p| views.spawn(move || apply(p))).collect();
                    apply(*first)?;
                    others.into_iter().try_for_each(|h| h.join().expect("a view's replay panicked"))
                })?;
                replayed += chunk.len() as u64;
                progress(last.seq);
            }
            let names: Vec<&str> = chosen.iter().map(|p| p.name()).collect();
            store.flush_tables(&names)?;
            Ok(replayed)
        })
    }

    /// Every `(key, value)` of a view's table, checkpoint included: for comparing an
    /// incremental view with a rebuilt one byte for byte.
    pub fn dump(&self, ledger: &Ledger, table: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>, ProjectError> {
        self.dump_store(ledger.store(), table)
    }

    /// [`Views::dump`] of any store holding the view tables.
    pub fn dump_store(&self, store: &Store, table: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>, ProjectError> {
        let mut out = Vec::new();
        for item in store.scan_from(table, &[])? {
            let (k, v) = item?;
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }
}
