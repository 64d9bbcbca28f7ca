//! The save pipeline's term postings: per scope and index term, the active memories holding it,
//! kept in memory for the life of an open store and exact after every commit, so that a save
//! sees the memories saved a moment before it (earlier lines of the same `save --from`) without
//! waiting for an index commit.
//!
//! The record is the text index (`projector/src/text_index.rs`), whose `terms` field holds every
//! active memory's candidate terms; the cache loads a term from the index's last *commit* the
//! first time it is asked about it. That load is right only if no uncommitted change touched the
//! term, so the cache keeps one invariant (docs/adr/0010-candidate-terms-in-the-text-index.md):
//!
//! > every term whose holders changed since the text index's last commit is in the cache.
//!
//! [`TermCache::changed`], which `Index::follow` (engine/src/index.rs) calls for every memory
//! whose activeness a command changed, loads a term it does not hold before changing it, and the cache
//! is emptied only together with a commit of the text index (`Index::reset`):
//! after a rebuild, an import, a failed commit, or when it grows past its bound. Only one process
//! writes a store at a time (RocksDB's lock), so nothing else moves the index under it.

use hashbrown::hash_map::EntryRef;
use rustc_hash::FxBuildHasher;

use memledger_projector::TextIndex;
use memledger_schemas::MemoryId;

use crate::error::EngineError;

/// A map by string whose lookups by `&str` hash once, and copy the key only to insert it.
type ByName<V> = hashbrown::HashMap<String, V, FxBuildHasher>;

/// Per scope, per term: the active memories holding it, in id order.
#[derive(Debug, Default)]
pub(crate) struct TermCache {
    scopes: ByName<ByName<Holders>>,
    /// Ids held over all terms.
    ids: usize,
    /// A reset failed (or was due and has not happened): nothing may be read until one succeeds.
    stale: bool,
}

impl TermCache {
    fn entry(&mut self, text: &TextIndex, scope: &str, term: &str) -> Result<&mut Holders, EngineError> {
        if self.stale {
            return Err(EngineError::StaleTermCache);
        }
        let terms = self.scopes.entry_ref(scope).or_default();
        match terms.entry_ref(term) {
            EntryRef::Occupied(held) => Ok(held.into_mut()),
            EntryRef::Vacant(missing) => {
                let ids = Holders::from_ids(text.holders(scope, term)?);
                self.ids += ids.len();
                Ok(missing.insert(ids))
            }
        }
    }

    /// How many active memories in `scope` hold `term`.
    pub(crate) fn count(&mut self, text: &TextIndex, scope: &str, term: &str) -> Result<u32, EngineError> {
        Ok(self.entry(text, scope, term)?.len().min(u32::MAX as usize) as u32)
    }

    /// The first `cap` active memories (in id order) of `scope` holding `term`.
    pub(crate) fn holders(
        &mut self,
        text: &TextIndex,
        scope: &str,
        term: &str,
        cap: usize,
    ) -> Result<impl Iterator<Item = MemoryId> + '_, EngineError> {
        Ok(self.entry(text, scope, term)?.iter().take(cap).copied())
    }

    /// A memory started (`on`) or stopped being active; `terms` are its index terms. A term not
    /// held yet is loaded first (from the last commit, which this change is not part of).
    pub(crate) fn changed(
        &mut self,
        text: &TextIndex,
        scope: &str,
        terms: &[String],
        id: MemoryId,
        on: bool,
    ) -> Result<(), EngineError> {
        for term in terms {
            let ids = self.entry(text, scope, term)?;
            let moved = if on { ids.insert(id) } else { ids.remove(id) };
            if moved {
                if on {
                    self.ids += 1;
                } else {
                    self.ids -= 1;
                }
            }
        }
        Ok(())
    }

    /// Whether the cache must be emptied (with a commit of the text index) before more use:
    /// after a failed reset, or once it holds more than `max_ids` ids (`EngineConfig::
    /// term_cache_max_ids`, a bound on memory, not on correctness).
    pub(crate) fn needs_reset(&self, max_ids: usize) -> bool {
        self.stale || self.ids > max_ids
    }

    /// The cache can no longer be trusted: until [`TermCache::clear`], every read is an error.
    pub(crate) fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// Every held term checked against `truth` (a term's holders in id order): `None` when all
    /// agree, else the first disagreement (for tests).
    pub(crate) fn disagreement(&self, truth: &dyn Fn(&str, &str) -> Vec<MemoryId>) -> Option<String> {
        for (scope, terms) in &self.scopes {
            for (term, ids) in terms {
                let expected = truth(scope, term);
                if !expected.iter().eq(ids.iter()) {
                    return Some(format!(
                        "scope {scope:?} term {term:?}: {} ids cached, {} active memories hold it",
                        ids.len(),
                        expected.len()
                    ));
                }
            }
        }
        None
    }

    /// Forget everything. Only once the text index holds every change the cache held (a commit).
    pub(crate) fn clear(&mut self) {
        self.scopes.clear();
        self.ids = 0;
        self.stale = false;
    }
}

/// How many ids a chunk of [`Holders`] takes before it is split in two.
const CHUNK_MAX: usize = 512;

/// One term's holders in id order, kept in sorted chunks of at most [`CHUNK_MAX`] ids.
///
/// Candidate search reads up to a thousand holders of a common term in id order for every save.
/// In a B-tree set, each step to the next node misses the processor's cache. Chunks are read
/// straight through, and an insert or a removal moves at most one chunk's ids.
///
/// Invariant: no chunk is empty, each is sorted, and every id of a chunk is below every id of
/// the next.
#[derive(Debug, Default)]
struct Holders {
    chunks: Vec<Vec<MemoryId>>,
    len: usize,
}

impl Holders {
    /// From ids in any order (duplicates count once).
    fn from_ids(mut ids: Vec<MemoryId>) -> Holders {
        ids.sort_unstable();
        ids.dedup();
        let len = ids.len();
        Holders { chunks: ids.chunks(CHUNK_MAX / 2).map(<[MemoryId]>::to_vec).collect(), len }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// The chunk that holds `id`, or where it belongs: the first whose last id is not below
    /// it, else the last chunk. `None` when there are no chunks.
    fn chunk_for(&self, id: MemoryId) -> Option<usize> {
        let first_not_below = self.chunks.partition_point(|c| c.last().is_some_and(|last| *last < id));
        (!self.chunks.is_empty()).then(|| first_not_below.min(self.chunks.len() - 1))
    }

    /// Add `id`; whether it was new.
    fn insert(&mut self, id: MemoryId) -> bool {
        let Some(i) = self.chunk_for(id) else {
            self.chunks.push(vec![id]);
            self.len = 1;
            return true;
        };
        let chunk = &mut self.chunks[i];
        let Err(at) = chunk.binary_search(&id) else { return false };
        chunk.insert(at, id);
        if chunk.len() > CHUNK_MAX {
            let upper = chunk.split_off(CHUNK_MAX / 2);
            self.chunks.insert(i + 1, upper);
        }
        self.len += 1;
        true
    }

    /// Take `id` out; whether it was there.
    fn remove(&mut self, id: MemoryId) -> bool {
        let Some(i) = self.chunk_for(id) else { return false };
        let chunk = &mut self.chunks[i];
        let Ok(at) = chunk.binary_search(&id) else { return false };
        chunk.remove(at);
        if chunk.is_empty() {
            self.chunks.remove(i);
        }
        self.len -= 1;
        true
    }

    /// Every id, in order.
    fn iter(&self) -> impl Iterator<Item = &MemoryId> {
        self.chunks.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Holders behave as a sorted set: the same answers as a `BTreeSet` after any sequence
        /// of inserts and removals, over chunk splits and emptied chunks, and the chunks keep
        /// their invariant.
        #[test]
        fn holders_are_a_sorted_set(
            start in proptest::collection::vec(0u128..3000, 0..1500),
            ops in proptest::collection::vec((any::<bool>(), 0u128..3000), 0..3000),
        ) {
            let mut model: BTreeSet<MemoryId> = start.iter().map(|n| MemoryId(*n)).collect();
            let mut holders = Holders::from_ids(start.into_iter().map(MemoryId).collect());
            for (insert, n) in ops {
                let id = MemoryId(n);
                let (got, want) = if insert { (holders.insert(id), model.insert(id)) } else { (holders.remove(id), model.remove(&id)) };
                prop_assert_eq!(got, want);
                prop_assert_eq!(holders.len(), model.len());
            }
            prop_assert!(holders.iter().eq(model.iter()));
            prop_assert!(holders.chunks.iter().all(|c| !c.is_empty() && c.len() <= CHUNK_MAX && c.is_sorted()));
            prop_assert!(holders.chunks.windows(2).all(|w| w[0].last() < w[1].first()));
        }
    }
}
