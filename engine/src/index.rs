//! The text index of an open store and, in front of it, the cache of candidate terms
//! ([`TermCache`]), kept in step with the belief view by every command.
//!
//! The text index (`projector/src/text_index.rs`) follows the belief view after each command
//! and commits lazily; the term cache holds every term changed since its last commit
//! (engine/src/term_cache.rs). Both move only under the store's write lock: [`Index::follow`]
//! after a command's events applied, [`Index::reset`] (a commit, then an empty cache) after a
//! rebuild, an import, a failure, or when the cache outgrows its bound.

use std::sync::{Mutex, MutexGuard};

use memledger_ledger::Ledger;
use memledger_projector::beliefs::{self, BeliefReader};
use memledger_projector::{Checkpoint, TextIndex};
use memledger_schemas::*;
use rustc_hash::FxHashMap;

use crate::analysis_cache::AnalysisCache;
use crate::classify::{INDEX_TERMS_VERSION, index_terms};
use crate::error::EngineError;
use crate::term_cache::TermCache;

/// Per (scope, index term): the active memories whose text gives the term, in id order.
type TermHolders = FxHashMap<(String, String), Vec<MemoryId>>;

/// The text index and the term cache of one open store.
pub(crate) struct Index {
    text: TextIndex,
    terms: Mutex<TermCache>,
}

impl Index {
    /// Open the text index of `ledger`'s store and bring it up to the belief view (which must
    /// have caught up already); notes for the user, as [`TextIndex::open`] gives them.
    pub(crate) fn open(ledger: &Ledger) -> Result<(Index, Vec<String>), EngineError> {
        let (text, notes) = TextIndex::open(ledger, index_terms, INDEX_TERMS_VERSION)?;
        Ok((Index { text, terms: Mutex::new(TermCache::default()) }, notes))
    }

    pub(crate) fn text(&self) -> &TextIndex {
        &self.text
    }

    pub(crate) fn terms(&self) -> MutexGuard<'_, TermCache> {
        self.terms.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Catch the text index up when the views moved without it (an import, the scratch store of
    /// an as-of read) and commit what earlier commands applied. Under the write lock.
    pub(crate) fn sync(&self, ledger: &Ledger) -> Result<(), EngineError> {
        let beliefs_at = Checkpoint::read(ledger.store(), beliefs::TABLE)?.map_or(0, |c| c.seq);
        if self.text.uncommitted() == Some(beliefs_at) {
            // Applied by earlier commands, waiting for a commit: make it searchable.
            self.text.flush()?;
        } else if self.text.seq()? != beliefs_at {
            self.text.catch_up(ledger)?;
        }
        Ok(())
    }

    /// Bring the text index up to the belief view and commit it, then empty the term cache
    /// (whose invariant needs the commit). Under the write lock. When the index cannot be
    /// committed, the cache stays unusable (every candidate search an error) until a later
    /// reset succeeds.
    pub(crate) fn reset(&self, ledger: &Ledger) -> Result<(), EngineError> {
        let mut cache = self.terms();
        cache.mark_stale();
        self.sync(ledger)?;
        cache.clear();
        Ok(())
    }

    /// Whether the term cache must be reset before more use ([`TermCache::needs_reset`]).
    pub(crate) fn needs_reset(&self, max_ids: usize) -> bool {
        self.terms().needs_reset(max_ids)
    }

    /// Tell the term cache about every memory whose activeness the applied command changed
    /// (`before`: [`activeness_of`] its events), and drop the analyses of memories that are no
    /// longer active.
    pub(crate) fn follow(
        &self,
        beliefs: &BeliefReader<'_>,
        analyses: &AnalysisCache,
        before: Vec<(MemoryId, bool)>,
    ) -> Result<(), EngineError> {
        for (id, was) in before {
            let Some(r) = beliefs.get(id)? else { continue };
            let now = r.status == Status::Active;
            if now != was {
                let analysis = analyses.of(&r);
                self.terms().changed(&self.text, &r.scope, analysis.index_terms(), id, now)?;
            }
            if !now {
                analyses.forget(id);
            }
        }
        Ok(())
    }

    /// Whether the text index, brought up to the belief view, holds one document per active
    /// memory and, for every (scope, term) the active memories' texts give, exactly those
    /// memories as the term's holders: what candidate search would load from it. Under the
    /// write lock.
    pub(crate) fn consistent(&self, ledger: &Ledger) -> Result<bool, EngineError> {
        self.sync(ledger)?;
        let (truth, active) = candidate_terms_of_beliefs(&BeliefReader::new(ledger.store()))?;
        if self.text.num_docs() != active {
            return Ok(false);
        }
        for ((scope, term), ids) in &truth {
            if self.text.holders(scope, term)? != *ids {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether the term cache agrees with the belief view (`None`), or the first place it does
    /// not (for tests; reads every memory). Commits nothing, so a cache entry loaded from a
    /// stale commit of the text index shows.
    pub(crate) fn disagreement(&self, beliefs: &BeliefReader<'_>) -> Result<Option<String>, EngineError> {
        let (truth, _) = candidate_terms_of_beliefs(beliefs)?;
        let truth =
            |scope: &str, term: &str| truth.get(&(scope.to_string(), term.to_string())).cloned().unwrap_or_default();
        Ok(self.terms().disagreement(&truth))
    }

    /// The term cache, leaving it empty (a store being closed frees it elsewhere).
    pub(crate) fn take_terms(&mut self) -> TermCache {
        std::mem::take(self.terms.get_mut().unwrap_or_else(|p| p.into_inner()))
    }
}

/// What candidate search should find, from the belief view alone: per (scope, index term), the
/// active memories whose text gives the term, in id order; and how many are active.
fn candidate_terms_of_beliefs(beliefs: &BeliefReader<'_>) -> Result<(TermHolders, u64), EngineError> {
    let mut truth = TermHolders::default();
    let mut active = 0u64;
    for r in beliefs.scan(|r| r.status == Status::Active, usize::MAX)? {
        active += 1;
        for term in index_terms(&r.text) {
            truth.entry((r.scope.clone(), term)).or_default().push(r.memory_id);
        }
    }
    Ok((truth, active))
}

/// Whether each memory the events with these `bodies` may make active or inactive is an active
/// belief now (before they apply), for [`Index::follow`]: one command's events, or the events
/// copied from a shared ledger. A memory observed among them is not a belief yet: no read.
pub(crate) fn activeness_of(
    beliefs: &BeliefReader<'_>,
    bodies: &[&EventBody],
) -> Result<Vec<(MemoryId, bool)>, EngineError> {
    let observed = |id: MemoryId| bodies.iter().any(|b| matches!(b, EventBody::MemoryObserved(o) if o.memory_id == id));
    touched_memories(bodies)
        .into_iter()
        .map(|id| {
            let active = !observed(id) && beliefs.get(id)?.is_some_and(|r| r.status == Status::Active);
            Ok((id, active))
        })
        .collect()
}

/// The memories a command's events may make active or inactive: every subject of a belief
/// event or of a resolution's effect. Must cover every status change `BeliefsProjector` makes.
fn touched_memories(bodies: &[&EventBody]) -> Vec<MemoryId> {
    let mut out = Vec::new();
    let effects = |effects: &[Effect], out: &mut Vec<MemoryId>| {
        for effect in effects {
            match *effect {
                Effect::MadeStale { memory_id }
                | Effect::Introduced { memory_id, .. }
                | Effect::Accepted { memory_id }
                | Effect::Rejected { memory_id } => out.push(memory_id),
                Effect::Reparented { .. } | Effect::EdgeAdded { .. } => {}
            }
        }
    };
    for body in bodies {
        match body {
            EventBody::BeliefAdded(b) => out.push(b.memory_id),
            EventBody::BeliefVersioned(b) => out.extend([b.memory_id, b.replaces]),
            EventBody::BeliefEdited(b) => out.extend([b.memory_id, b.replaces]),
            EventBody::BeliefHistorical(b) => out.push(b.memory_id),
            EventBody::BeliefRetired(b) => out.push(b.memory_id),
            EventBody::ConflictResolved(b) => effects(&b.effects, &mut out),
            EventBody::ResolutionReverted(b) => effects(&b.undone, &mut out),
            EventBody::MemoryErased(b) => out.extend(&b.memory_ids),
            EventBody::MemoryObserved(_)
            | EventBody::PairClassified(_)
            | EventBody::MergeProposed(_)
            | EventBody::BeliefMerged(_)
            | EventBody::ConflictOpened(_)
            | EventBody::BeliefProposed(_)
            | EventBody::PrincipalAdded(_)
            | EventBody::PrincipalGranted(_)
            | EventBody::GrantRevoked(_)
            | EventBody::PrincipalRevoked(_)
            | EventBody::PrincipalRotated(_)
            | EventBody::TranscriptProgressed(_)
            | EventBody::HeadAccepted(_) => {}
        }
    }
    out.sort();
    out.dedup();
    out
}
