//! Candidate search: the active memories of a save's scope worth comparing with it — those
//! sharing its fact key, then the best `top_k` by shared index terms, rarer terms weighing more,
//! within a budget of postings read per save so that the cost stays flat as the store grows.

use memledger_projector::beliefs::MemoryRecord;
use memledger_schemas::MemoryId;

use crate::classify::lexical;
use crate::error::EngineError;
use crate::index::Index;
use crate::input::ValidSave;
use crate::reads::Reader;

/// Candidate search over one store's belief view and term cache.
pub(crate) struct CandidateSearch<'a> {
    pub(crate) reader: Reader<'a>,
    pub(crate) index: &'a Index,
    /// Candidates by shared terms, at most (`EngineConfig::top_k`).
    pub(crate) top_k: usize,
    /// Postings read per save, at most (`EngineConfig::candidate_budget`).
    pub(crate) budget: usize,
}

thread_local! {
    /// Candidate search's weights per memory, kept between saves: it takes up to the whole
    /// budget of postings per save, so it is allocated once rather than for every save. Ids
    /// are random, so a fast non-keyed hash is enough.
    static CANDIDATE_WEIGHTS: std::cell::RefCell<rustc_hash::FxHashMap<MemoryId, f64>> = Default::default();
}

/// How much more a term of what a change statement changes (or of a role named) weighs than
/// another term: enough that a belief sharing only it ranks beside one sharing three others.
const SUBJECT_WEIGHT: f64 = 3.0;

impl CandidateSearch<'_> {
    /// The candidates of `save`, whose text is analysed here; `exclude` is never one.
    /// `true` marks a candidate found by its fact key.
    pub(crate) fn of_text(
        &self,
        save: &ValidSave,
        exclude: Option<MemoryId>,
    ) -> Result<Vec<(MemoryRecord, bool)>, EngineError> {
        self.find(save, &lexical::analyse(&save.text), exclude)
    }

    /// [`CandidateSearch::of_text`] for a text already analysed.
    pub(crate) fn find(
        &self,
        save: &ValidSave,
        analysis: &lexical::Analysis,
        exclude: Option<MemoryId>,
    ) -> Result<Vec<(MemoryRecord, bool)>, EngineError> {
        let beliefs = self.reader.beliefs();
        let mut out: Vec<(MemoryRecord, bool)> = Vec::new();
        if let Some(fk) = &save.fact_key {
            for id in beliefs.active_by_fact_key(&save.scope, fk)? {
                if Some(id) == exclude {
                    continue;
                }
                if let Some(r) = beliefs.get(id)? {
                    out.push((r, true));
                }
            }
        }
        // Rarest terms first: they say most about identity, and reading postings in that order
        // within a fixed budget keeps the cost flat as the store grows.
        let mut terms: Vec<&str> = analysis.index_terms().iter().map(String::as_str).collect();
        terms.sort_unstable();
        terms.dedup();
        // What a change statement changes, or the role it names a holder of: its beliefs are found
        // first and weigh more, however little else they share ("We moved CI to GitLab" / "Our CI
        // runs on GitHub Actions"). The same budget bounds the postings read.
        let subject = lexical::subject_terms(analysis);
        let text = self.index.text();
        let mut cache = self.index.terms();
        let mut by_rarity = Vec::with_capacity(terms.len());
        for term in terms {
            let count = cache.count(text, &save.scope, term)?;
            if count > 0 {
                let about = subject.iter().any(|s| s == term);
                by_rarity.push((!about, count, term));
            }
        }
        by_rarity.sort();
        let ranked: Vec<(MemoryId, f64)> = CANDIDATE_WEIGHTS.with_borrow_mut(|weights| {
            weights.clear();
            weights.reserve(self.budget);
            let mut budget = self.budget;
            for (other, count, term) in by_rarity {
                if budget == 0 {
                    break;
                }
                let weight = if other { 1.0 } else { SUBJECT_WEIGHT } / (1.0 + (count as f64).ln());
                for id in cache.holders(text, &save.scope, term, budget)? {
                    budget -= 1;
                    *weights.entry(id).or_default() += weight;
                }
            }
            let keep = |id: MemoryId| Some(id) != exclude && !out.iter().any(|(r, _)| r.memory_id == id);
            Ok::<_, EngineError>(best_weighed(weights.iter().map(|(id, w)| (*id, *w)), self.top_k, keep))
        })?;
        drop(cache);
        for (id, _) in ranked {
            if let Some(r) = beliefs.get(id)? {
                out.push((r, false));
            }
        }
        // An empty or short list of term matches does not prove novelty: a scope that holds no
        // more memories than a save compares is compared whole ("Docs moved over to Mintlify"
        // shares no term with "Documentation: Docusaurus").
        if out.len() < self.top_k
            && let Some(ids) = beliefs.active_in_scope_up_to(&save.scope, self.top_k)?
        {
            for id in ids {
                if Some(id) != exclude
                    && !out.iter().any(|(r, _)| r.memory_id == id)
                    && let Some(r) = beliefs.get(id)?
                {
                    out.push((r, false));
                }
            }
        }
        Ok(out)
    }
}

/// The best `k` of `weighed` that `keep` accepts, best first: highest weight, ties by id.
///
/// Only they are wanted, out of up to a budget's worth of weighed memories per save: they are
/// kept in a short list, in order, while the weights are read, rather than every weighed memory
/// collected and selected from.
fn best_weighed(
    weighed: impl Iterator<Item = (MemoryId, f64)>,
    k: usize,
    keep: impl Fn(MemoryId) -> bool,
) -> Vec<(MemoryId, f64)> {
    let best_first = |a: &(MemoryId, f64), b: &(MemoryId, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut best: Vec<(MemoryId, f64)> = Vec::with_capacity(k.min(64) + 1);
    if k == 0 {
        return best;
    }
    for candidate in weighed {
        if best.len() == k && best_first(&candidate, &best[k - 1]).is_ge() {
            continue;
        }
        if !keep(candidate.0) {
            continue;
        }
        let at = best.partition_point(|b| best_first(b, &candidate).is_lt());
        best.insert(at, candidate);
        best.truncate(k);
    }
    best
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The short list gives what sorting every kept memory best first and taking `k` gives,
        /// ties (equal weights, which sums of the same term weights often are) by id included.
        #[test]
        fn best_weighed_is_the_first_k_of_a_full_sort(
            weighed in proptest::collection::vec((0u128..400, 0u8..12), 0..300),
            k in 0usize..12,
            dropped in 0u128..8,
        ) {
            let mut seen = std::collections::HashSet::new();
            let weighed: Vec<(MemoryId, f64)> = weighed
                .into_iter()
                .filter(|(id, _)| seen.insert(*id))
                .map(|(id, w)| (MemoryId(id), f64::from(w) / 4.0))
                .collect();
            let keep = |id: MemoryId| id.0 % 8 != dropped;
            let mut sorted: Vec<(MemoryId, f64)> = weighed.iter().copied().filter(|(id, _)| keep(*id)).collect();
            sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            sorted.truncate(k);
            prop_assert_eq!(best_weighed(weighed.into_iter(), k, keep), sorted);
        }
    }
}
