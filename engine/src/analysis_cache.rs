//! Analyses of stored memories' texts, kept between saves: a save classifies its text against
//! each of its candidates, and a candidate's analysis is made once per open store rather than
//! once per save that meets it.
//!
//! A memory's text never changes (a new version is a new memory), so an entry never goes stale.
//! A memory that stops being active (or, a merged save, never becomes active) leaves the cache,
//! as no save meets it as a candidate again; past [`ANALYSIS_CACHE_ENTRIES`] the cache is emptied
//! at once.

use std::sync::{Arc, Mutex, MutexGuard};

use memledger_projector::beliefs::MemoryRecord;
use memledger_schemas::MemoryId;
use rustc_hash::FxHashMap;

use crate::classify::lexical::{self, Analysis};

/// How many analyses of active memories the cache keeps (about 2.3 KB each).
///
/// A save's candidates are spread over the whole store, so a cache smaller than the active
/// memories misses often, and every miss analyses a candidate again (and a full cache is
/// emptied, all at once). Up to this many active memories are never analysed twice.
const ANALYSIS_CACHE_ENTRIES: usize = 120_000;

/// What the cache holds: an analysis per memory id.
pub(crate) type Analyses = FxHashMap<MemoryId, Arc<Analysis>>;

/// The analyses of one open store, shared by its saves.
#[derive(Default)]
pub(crate) struct AnalysisCache {
    map: Mutex<Analyses>,
}

impl AnalysisCache {
    fn map(&self) -> MutexGuard<'_, Analyses> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A stored memory's analysis, from the cache when it is there.
    pub(crate) fn of(&self, r: &MemoryRecord) -> Arc<Analysis> {
        let mut map = self.map();
        if let Some(a) = map.get(&r.memory_id) {
            return a.clone();
        }
        if map.len() >= ANALYSIS_CACHE_ENTRIES {
            map.clear();
        }
        let a = Arc::new(lexical::analyse(&r.text));
        map.insert(r.memory_id, a.clone());
        a
    }

    /// Keep the analysis of a memory being saved: it serves the term cache after the commit and
    /// the later saves that meet the memory as a candidate.
    pub(crate) fn remember(&self, id: MemoryId, analysis: Arc<Analysis>) {
        let mut map = self.map();
        if map.len() >= ANALYSIS_CACHE_ENTRIES {
            map.clear();
        }
        map.insert(id, analysis);
    }

    /// Drop a memory's analysis: it stopped being active (or never became active).
    pub(crate) fn forget(&self, id: MemoryId) {
        self.map().remove(&id);
    }

    /// The index terms of a memory whose analysis is in the cache; `None` (never an analysis)
    /// when it is not.
    pub(crate) fn index_terms(&self, id: MemoryId) -> Option<Vec<String>> {
        self.map().get(&id).map(|a| a.index_terms().to_vec())
    }

    /// Everything held, leaving the cache empty (a store being closed frees it elsewhere).
    pub(crate) fn take(&mut self) -> Analyses {
        std::mem::take(self.map.get_mut().unwrap_or_else(|p| p.into_inner()))
    }
}
