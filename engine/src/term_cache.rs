//! The save pipeline's view of the belief view's term postings, kept in memory for the life of
//! an open store so that candidate search reads RocksDB once per term rather than once per save.
//!
//! The belief view (`projector/src/beliefs.rs`) stays the record: per scope and term, a count of
//! the active memories holding the term and their ids in id order. This cache holds, per term it
//! was asked about, that count and a *prefix* of the id list (the first ids in id order, or all of
//! them). It is kept in step by [`TermCache::changed`], which `Memledger::commit_with` calls for
//! every memory whose activeness a command changed; anything else that rewrites the views
//! (rebuild, import, an error mid-commit) empties it. Only one process writes a store at a time
//! (RocksDB's lock), so nothing else can move the view under it.
//!
//! Why a prefix: candidate search reads a term's holders in id order within a budget, so only
//! the first `budget` ids of a common term are ever needed. A prefix stays a true prefix when an
//! id is removed (it just gets shorter) and when an id is inserted (it goes in if it sorts before
//! the prefix's end); a read that needs more than the prefix holds reloads it.

use rustc_hash::FxHashMap;

use memledger_projector::beliefs::BeliefReader;
use memledger_schemas::MemoryId;

use crate::error::EngineError;

/// Ids loaded per term at least, so that small budgets do not reload often.
const MIN_PREFIX: usize = 256;
/// A prefix (or a complete list) grown by inserts past this many times its load size is cut
/// back to a prefix of the load size.
const MAX_GROWTH: usize = 2;
/// Past this many cached terms the cache is emptied (a bound on memory, not on correctness).
const MAX_TERMS: usize = 400_000;

/// One term's count of active holders and a prefix of their ids.
#[derive(Debug)]
struct Postings {
    count: u32,
    /// The first ids holding the term, ascending. All of them when `complete`.
    ids: Vec<MemoryId>,
    complete: bool,
    /// How many ids the last load asked for.
    loaded: usize,
}

/// Per scope, per term: what the belief view says, as far as it has been read.
#[derive(Debug, Default)]
pub(crate) struct TermCache {
    scopes: FxHashMap<String, FxHashMap<String, Postings>>,
    terms: usize,
}

impl TermCache {
    /// How many active memories in `scope` hold `term`.
    pub(crate) fn count(&mut self, reader: &BeliefReader<'_>, scope: &str, term: &str) -> Result<u32, EngineError> {
        if let Some(p) = self.scopes.get(scope).and_then(|terms| terms.get(term)) {
            return Ok(p.count);
        }
        let count = reader.term_count(scope, term)?;
        if self.terms >= MAX_TERMS {
            self.clear();
        }
        self.terms += 1;
        let complete = count == 0;
        self.scopes
            .entry(scope.to_string())
            .or_default()
            .insert(term.to_string(), Postings { count, ids: Vec::new(), complete, loaded: 0 });
        Ok(count)
    }

    /// The first `cap` active memories (in id order) of `scope` holding `term`: exactly what
    /// [`BeliefReader::active_by_term`] returns.
    pub(crate) fn holders(
        &mut self,
        reader: &BeliefReader<'_>,
        scope: &str,
        term: &str,
        cap: usize,
    ) -> Result<&[MemoryId], EngineError> {
        self.count(reader, scope, term)?;
        let p = self.scopes.get_mut(scope).and_then(|terms| terms.get_mut(term)).expect("entry made by count");
        if !p.complete && p.ids.len() < cap {
            let want = cap.max(MIN_PREFIX);
            p.ids = reader.active_by_term(scope, term, want)?;
            p.complete = p.ids.len() < want;
            p.loaded = want;
        }
        Ok(&p.ids[..cap.min(p.ids.len())])
    }

    /// A memory started (`on`) or stopped being active; `terms` are its index terms.
    pub(crate) fn changed(&mut self, scope: &str, terms: &[String], id: MemoryId, on: bool) {
        let Some(cached) = self.scopes.get_mut(scope) else { return };
        for term in terms {
            let Some(p) = cached.get_mut(term.as_str()) else { continue };
            let at = p.ids.binary_search(&id);
            if on {
                p.count += 1;
                if let Err(i) = at {
                    // Beyond the end of an incomplete prefix, the id is not part of it.
                    if p.complete || i < p.ids.len() {
                        p.ids.insert(i, id);
                    }
                }
                // Bound the memory a growing term takes: keep the prefix a read last asked for.
                if p.ids.len() > p.loaded.max(MIN_PREFIX) * MAX_GROWTH {
                    p.ids.truncate(p.loaded.max(MIN_PREFIX));
                    p.complete = false;
                }
            } else {
                p.count = p.count.saturating_sub(1);
                if let Ok(i) = at {
                    p.ids.remove(i);
                }
            }
        }
    }

    /// Every cached entry checked against the belief view: `None` when all agree, else the
    /// first disagreement (for tests).
    pub(crate) fn disagreement(&self, reader: &BeliefReader<'_>) -> Result<Option<String>, EngineError> {
        for (scope, terms) in &self.scopes {
            for (term, p) in terms {
                let count = reader.term_count(scope, term)?;
                let stored = reader.active_by_term(scope, term, usize::MAX)?;
                let prefix_ok = if p.complete { stored == p.ids } else { stored.starts_with(&p.ids) };
                if count != p.count || stored.len() != count as usize || !prefix_ok {
                    return Ok(Some(format!(
                        "scope {scope:?} term {term:?}: cached count {} and {} ids (complete: {}), stored count {count} and {} ids",
                        p.count,
                        p.ids.len(),
                        p.complete,
                        stored.len()
                    )));
                }
            }
        }
        Ok(None)
    }

    /// Forget everything: the views were rewritten by something other than a commit.
    pub(crate) fn clear(&mut self) {
        self.scopes.clear();
        self.terms = 0;
    }
}
