//! Point reads of the tables read most, answered from memory.
//!
//! A belief-view record is read several times per save: as a candidate, when its status
//! changes, by the projector that updates it, for the save's result. RocksDB answers each read by
//! searching its memtable's skip list and then its files; a hash map answers without either.
//!
//! The cache is never a second source of truth. The store has one write path, and it writes
//! every batch through the cache under the cache's lock (an unsynced batch when it is
//! queued for the writer thread, crate::write_behind): a put replaces the value, a delete removes
//! it, a cleared table is emptied, and a failed write empties everything. A
//! read that missed fills the cache only if no write to a cached table came in between. It
//! checks this with a generation counter, so it never stores a value that a later write
//! replaced. A key found absent is held as absent too (the save pipeline asks for index
//! entries that mostly do not exist yet: a new text's content hash), and a delete leaves its key
//! held as absent.
//! The cache holds at most [`READ_CACHE_BYTES`]; when a fill would pass that, the cache is
//! emptied and starts again. A batch of more than [`LARGE_BATCH`] writes to cached tables (a
//! rebuild's) empties the cache instead of passing through it.

use std::sync::{Mutex, MutexGuard};

use rustc_hash::FxHashMap;

use crate::batch::{Batch, Write};

/// The most key and value bytes the cache holds (with a fixed allowance per entry for the map).
pub const READ_CACHE_BYTES: usize = 64 << 20;
const ENTRY_OVERHEAD: usize = 48;

/// What an entry counts against [`READ_CACHE_BYTES`].
fn entry_size(key: &[u8], value: Option<&[u8]>) -> usize {
    key.len() + value.map_or(0, <[u8]>::len) + ENTRY_OVERHEAD
}
/// A batch with more writes to cached tables than this (a rebuild's chunk, thousands of records)
/// empties them instead of being copied in: a command writes a few dozen keys, while a rebuild
/// writes every record once, and copying those would only slow it down.
pub(crate) const LARGE_BATCH: usize = 1024;

/// What a lookup found.
pub(crate) enum Lookup {
    /// The table is not cached: read the store.
    NotCached,
    /// The stored value.
    Hit(Vec<u8>),
    /// The key is known to be absent.
    Absent,
    /// Not in the cache: read the store, then offer the value to [`ReadCache::fill`] with this
    /// generation.
    Miss(u64),
}

pub(crate) struct ReadCache {
    state: Mutex<State>,
}

impl Default for ReadCache {
    fn default() -> Self {
        ReadCache::with_bound(READ_CACHE_BYTES)
    }
}

/// One cached table's values by key; `None` for a key known to be absent.
type Values = FxHashMap<Box<[u8]>, Option<Box<[u8]>>>;

pub(crate) struct State {
    tables: Vec<(&'static str, Values)>,
    bytes: usize,
    max_bytes: usize,
    /// Moves on with every write to a cached table.
    generation: u64,
}

impl ReadCache {
    /// A cache of at most `max_bytes` ([`READ_CACHE_BYTES`] by default).
    pub(crate) fn with_bound(max_bytes: usize) -> ReadCache {
        ReadCache { state: Mutex::new(State { tables: Vec::new(), bytes: 0, max_bytes, generation: 0 }) }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Cache point reads of `table` from now on.
    pub(crate) fn enable(&self, table: &'static str) {
        let mut state = self.state();
        if state.cached(table).is_none() {
            state.tables.push((table, Values::default()));
        }
    }

    pub(crate) fn lookup(&self, table: &str, key: &[u8]) -> Lookup {
        let state = self.state();
        match state.cached(table) {
            None => Lookup::NotCached,
            Some(index) => match state.tables[index].1.get(key) {
                Some(Some(value)) => Lookup::Hit(value.to_vec()),
                Some(None) => Lookup::Absent,
                None => Lookup::Miss(state.generation),
            },
        }
    }

    /// Keep `value` (`None`: absent), read from the store for `key` after a [`Lookup::Miss`] of
    /// `generation`, unless a write has come since.
    pub(crate) fn fill(&self, table: &str, key: &[u8], value: Option<&[u8]>, generation: u64) {
        let mut state = self.state();
        if state.generation != generation {
            return;
        }
        let Some(index) = state.cached(table) else { return };
        let size = entry_size(key, value);
        if state.bytes + size > state.max_bytes {
            state.empty();
        }
        if state.tables[index].1.insert(key.into(), value.map(Into::into)).is_none() {
            state.bytes += size;
        }
    }

    /// Forget everything: what the store holds is no longer known here (a queued write failed).
    pub(crate) fn forget_all(&self) {
        let mut state = self.state();
        state.generation += 1;
        state.empty();
    }

    /// Whether `key` of `table` is held, as a value or as absent (for tests).
    #[cfg(test)]
    pub(crate) fn holds(&self, table: &str, key: &[u8]) -> bool {
        let state = self.state();
        state.cached(table).is_some_and(|index| state.tables[index].1.contains_key(key))
    }

    #[cfg(test)]
    pub(crate) fn held_bytes(&self) -> usize {
        self.state().bytes()
    }

    /// Lock the cache for a write of `batch` when the batch writes a cached table: the caller
    /// writes the store, then calls [`State::written`] with the outcome before unlocking.
    pub(crate) fn lock_for(&self, batch: &Batch) -> Option<MutexGuard<'_, State>> {
        let state = self.state();
        if state.tables.is_empty() {
            return None;
        }
        let touches = batch.writes().any(|w| state.cached(w.table()).is_some());
        touches.then_some(state)
    }
}

impl State {
    /// The position of `table` among the cached tables, if it is cached.
    fn cached(&self, table: &str) -> Option<usize> {
        self.tables.iter().position(|(name, _)| *name == table)
    }

    /// Bring the cache in line with a write of `batch` to the store: its values when the write
    /// succeeded, nothing at all when it failed (what the store holds is then not known here).
    pub(crate) fn written(&mut self, batch: &Batch, ok: bool) {
        self.generation += 1;
        if !ok || batch.writes().filter(|w| self.cached(w.table()).is_some()).nth(LARGE_BATCH).is_some() {
            self.empty();
            return;
        }
        for write in batch.writes() {
            let Some(index) = self.cached(write.table()) else { continue };
            let map = &mut self.tables[index].1;
            match write {
                // Replaced in place, or kept: a key just written is likely read soon.
                Write::Put { key, value, .. } => self.bytes = set(map, self.bytes, key, Some(value.bytes())),
                Write::Delete { key, .. } => self.bytes = set(map, self.bytes, key, None),
                Write::Clear { .. } => {
                    let freed: usize = map.iter().map(|(k, v)| entry_size(k, v.as_deref())).sum();
                    map.clear();
                    self.bytes -= freed;
                }
            }
        }
        if self.bytes > self.max_bytes {
            self.empty();
        }
    }

    /// How many key and value bytes are held (with the per-entry allowance), for tests.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    fn empty(&mut self) {
        for (_, map) in &mut self.tables {
            *map = Values::default();
        }
        self.bytes = 0;
    }
}

/// Hold `value` (`None`: absent) for `key` in `map`; returns the new byte count from `bytes`.
fn set(map: &mut Values, bytes: usize, key: &[u8], value: Option<&[u8]>) -> usize {
    match map.get_mut(key) {
        Some(old) => {
            let bytes = bytes + entry_size(key, value) - entry_size(key, old.as_deref());
            *old = value.map(Into::into);
            bytes
        }
        None => {
            map.insert(key.into(), value.map(Into::into));
            bytes + entry_size(key, value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "records";

    /// A read that missed does not fill the cache with what it read when a write came between
    /// the miss and the fill: the value it read may be the one that write replaced. (The write
    /// here is to another key, so that the cache does not hold `k` from the write itself.)
    #[test]
    fn a_fill_after_a_write_is_dropped() {
        let cache = ReadCache::default();
        cache.enable(TABLE);
        let Lookup::Miss(generation) = cache.lookup(TABLE, b"k") else { panic!("an empty cache misses") };
        let mut batch = Batch::default();
        batch.delete(TABLE, b"j");
        cache.lock_for(&batch).expect("the batch writes a cached table").written(&batch, true);
        cache.fill(TABLE, b"k", Some(b"what the store held before the write"), generation);
        assert!(!cache.holds(TABLE, b"k"));
        assert!(matches!(cache.lookup(TABLE, b"j"), Lookup::Absent), "a deleted key is held as absent");
        let Lookup::Miss(now) = cache.lookup(TABLE, b"k") else { panic!("still a miss") };
        cache.fill(TABLE, b"k", Some(b"v"), now);
        assert!(cache.holds(TABLE, b"k"));
    }

    /// A failed write leaves nothing cached; batches that write no cached table take no lock.
    #[test]
    fn a_failed_write_empties_the_cache() {
        let cache = ReadCache::default();
        cache.enable(TABLE);
        let mut batch = Batch::default();
        batch.put(TABLE, b"k", b"v");
        cache.lock_for(&batch).unwrap().written(&batch, true);
        assert!(cache.holds(TABLE, b"k"));
        let mut other = Batch::default();
        other.put("elsewhere", b"k", b"v");
        assert!(cache.lock_for(&other).is_none());
        let mut failed = Batch::default();
        failed.put(TABLE, b"j", b"w");
        cache.lock_for(&failed).unwrap().written(&failed, false);
        assert!(!cache.holds(TABLE, b"k") && !cache.holds(TABLE, b"j"));
        assert_eq!(cache.held_bytes(), 0);
    }

    /// The cache never holds more than its bound: a fill or a write past it starts it again.
    #[test]
    fn the_cache_stays_within_its_bound() {
        let bound = 10 * (ENTRY_OVERHEAD + 2 + 20);
        let cache = ReadCache::with_bound(bound);
        cache.enable(TABLE);
        for i in 0..100u16 {
            let key = i.to_be_bytes();
            if let Lookup::Miss(generation) = cache.lookup(TABLE, &key) {
                cache.fill(TABLE, &key, Some(&[7u8; 20]), generation);
            }
            assert!(cache.held_bytes() <= bound, "{} bytes held after {i} fills", cache.held_bytes());
            assert!(cache.holds(TABLE, &key), "the latest fill is held");
            let mut batch = Batch::default();
            batch.put(TABLE, (i + 1000).to_be_bytes(), [1u8; 20]);
            cache.lock_for(&batch).unwrap().written(&batch, true);
            assert!(cache.held_bytes() <= bound);
        }
    }
}
