//! The save pipeline (docs/design.md §4): exact duplicate → fact-key identity → candidates →
//! classification of every candidate → decision. It only plans events; `Memledger::save`
//! appends them in one atomic write against the head the plan was made on.

use std::sync::Arc;

use memledger_ledger::NewEvent;
use memledger_projector::beliefs::MemoryRecord;
use memledger_schemas::chain::content_hash;
use memledger_schemas::*;

use crate::classify::{Classification, classify_lexical_analysed, lexical};
use crate::error::EngineError;
use crate::input::{SaveRequest, ValidSave};
use crate::memledger::Memledger;

/// A save validated, hashed and analysed: all of its work that reads nothing from the store.
/// `save --from` prepares the next lines on a thread of its own while this one saves.
pub struct PreparedSave {
    pub(crate) save: ValidSave,
    pub(crate) hash: Hash,
    /// The text's analysis, when it was made ahead; otherwise made when first needed (a single
    /// save that turns out to be an exact duplicate never needs it).
    pub(crate) analysis: Option<Arc<lexical::Analysis>>,
}

impl PreparedSave {
    /// Validate `request`, then hash and analyse its text.
    pub fn new(request: SaveRequest) -> Result<PreparedSave, EngineError> {
        let mut prepared = PreparedSave::validated(request)?;
        if prepared.save.dedup {
            let analysis = lexical::analyse(&prepared.save.text);
            // Its index terms too, here rather than on the saving thread (they are kept in it).
            analysis.index_terms();
            prepared.analysis = Some(Arc::new(analysis));
        }
        Ok(prepared)
    }

    /// Validate `request` and hash its text; the analysis waits until it is needed.
    pub(crate) fn validated(request: SaveRequest) -> Result<PreparedSave, EngineError> {
        let save = request.validate()?;
        let hash = content_hash(&save.text);
        Ok(PreparedSave { save, hash, analysis: None })
    }
}

/// How many analyses of active memories the pipeline keeps in memory (about 2.3 KB each).
///
/// A save's candidates are spread over the whole store, so a cache smaller than the active
/// memories misses often, and every miss analyses a candidate again (and a full cache is
/// emptied, all at once). A memory that stops being active leaves it
/// (`Memledger::forget_analysis`), so up to this many active memories are never analysed twice.
const ANALYSIS_CACHE_ENTRIES: usize = 120_000;

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

thread_local! {
    /// Candidate search's weights per memory, kept between saves: it takes up to the whole
    /// budget of postings per save, so it is allocated once rather than for every save. Ids
    /// are random, so a fast non-keyed hash is enough.
    static CANDIDATE_WEIGHTS: std::cell::RefCell<rustc_hash::FxHashMap<MemoryId, f64>> = Default::default();
}

/// A candidate and what the classifier said of it.
struct Examined {
    candidate: MemoryRecord,
    class: Classification,
    outcome: PairOutcome,
    /// The chat model's answer, when it was asked (crate::models).
    model: Option<ModelVerdict>,
}

impl Memledger {
    /// Active memories of the same scope worth comparing with `save`: those sharing its fact key,
    /// then the best `top_k` by shared index terms (rarer terms weigh more).
    pub(crate) fn candidates(
        &self,
        save: &ValidSave,
        exclude: Option<MemoryId>,
    ) -> Result<Vec<(MemoryRecord, bool)>, EngineError> {
        self.candidates_for(save, &lexical::analyse(&save.text), exclude)
    }

    /// [`Memledger::candidates`] for a text already analysed.
    pub(crate) fn candidates_for(
        &self,
        save: &ValidSave,
        analysis: &lexical::Analysis,
        exclude: Option<MemoryId>,
    ) -> Result<Vec<(MemoryRecord, bool)>, EngineError> {
        let beliefs = self.beliefs();
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
        let mut cache = self.term_cache();
        let mut by_rarity = Vec::with_capacity(terms.len());
        for term in terms {
            let count = cache.count(&self.text, &save.scope, term)?;
            if count > 0 {
                by_rarity.push((count, term));
            }
        }
        by_rarity.sort();
        let ranked: Vec<(MemoryId, f64)> = CANDIDATE_WEIGHTS.with_borrow_mut(|weights| {
            weights.clear();
            weights.reserve(self.config.candidate_budget);
            let mut budget = self.config.candidate_budget;
            for (count, term) in by_rarity {
                if budget == 0 {
                    break;
                }
                let weight = 1.0 / (1.0 + (count as f64).ln());
                for id in cache.holders(&self.text, &save.scope, term, budget)? {
                    budget -= 1;
                    *weights.entry(id).or_default() += weight;
                }
            }
            let keep = |id: MemoryId| Some(id) != exclude && !out.iter().any(|(r, _)| r.memory_id == id);
            Ok::<_, EngineError>(best_weighed(weights.iter().map(|(id, w)| (*id, *w)), self.config.top_k, keep))
        })?;
        drop(cache);
        for (id, _) in ranked {
            if let Some(r) = beliefs.get(id)? {
                out.push((r, false));
            }
        }
        Ok(out)
    }

    /// A stored memory's analysis, from the cache when it is there. A memory's text never changes
    /// (a new version is a new memory), so entries never go stale; the cache is simply emptied
    /// when it grows past its bound.
    pub(crate) fn analysis_of(&self, r: &MemoryRecord) -> Arc<lexical::Analysis> {
        let mut cache = self.analyses.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(a) = cache.get(&r.memory_id) {
            return a.clone();
        }
        if cache.len() >= ANALYSIS_CACHE_ENTRIES {
            cache.clear();
        }
        let a = Arc::new(lexical::analyse(&r.text));
        cache.insert(r.memory_id, a.clone());
        a
    }

    /// Drop a memory's analysis: it stopped being active (or, a merged save, never became
    /// active), so no save will meet it as a candidate.
    pub(crate) fn forget_analysis(&self, id: MemoryId) {
        self.analyses.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }

    /// The index terms of a memory whose analysis is in the cache; `None` (never an analysis)
    /// when it is not.
    pub(crate) fn known_index_terms(&self, id: MemoryId) -> Option<Vec<String>> {
        let cache = self.analyses.lock().unwrap_or_else(|p| p.into_inner());
        cache.get(&id).map(|a| a.index_terms().to_vec())
    }

    fn remember_analysis(&self, id: MemoryId, analysis: Arc<lexical::Analysis>) {
        let mut cache = self.analyses.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= ANALYSIS_CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(id, analysis);
    }

    /// The next free version number of a lineage.
    pub(crate) fn next_version(&self, root: MemoryId) -> Result<u32, EngineError> {
        Ok(self.beliefs().lineage(root)?.iter().map(|r| r.version).max().unwrap_or(0) + 1)
    }

    /// Plan the events of one save, made against ledger head `head`.
    pub(crate) fn plan_save(&self, prepared: &PreparedSave, head: u64) -> Result<Vec<NewEvent>, EngineError> {
        let save = &prepared.save;
        let memory_id = MemoryId::random();
        let hash = prepared.hash;
        let mut events: Vec<NewEvent> = vec![
            EventBody::MemoryObserved(MemoryObserved {
                memory_id,
                text: save.text.clone(),
                memory_type: save.memory_type,
                scope: save.scope.clone(),
                source: save.source.clone(),
                fact_key: save.fact_key.clone(),
                effective_at: save.effective_at,
                content_hash: hash,
                dedup: save.dedup,
            })
            .into(),
        ];
        if !save.dedup {
            events.push(EventBody::BeliefAdded(BeliefAdded { memory_id }).into());
            return Ok(events);
        }

        // 3. An exact duplicate among the scope's active memories: provenance only.
        if let Some(&dup) = self.beliefs().active_by_hash(&save.scope, &hash)?.first() {
            events.push(
                EventBody::PairClassified(PairClassified {
                    incoming: memory_id,
                    candidate: dup,
                    method: Method::Exact,
                    relation: Relation::Identical,
                    gate: "content_hash".into(),
                    reason: "the same text is already an active memory in this scope".into(),
                    scores: vec![("exact".into(), 1.0)],
                    thresholds: Vec::new(),
                    model: None,
                    outcome: PairOutcome::Merged,
                })
                .into(),
            );
            events.push(
                EventBody::BeliefMerged(BeliefMerged { memory_id, into: dup, kind: MergeKind::ExactDuplicate }).into(),
            );
            return Ok(events);
        }

        // 4–6. Candidates (fact-key matches first, then by terms and, with an embedder, by
        // cosine), each classified lexically and, with a chat model, by the model (crate::models).
        let incoming = prepared.analysis.clone().unwrap_or_else(|| Arc::new(lexical::analyse(&save.text)));
        // The new memory's analysis serves the term cache after the commit and later saves that
        // meet it as a candidate.
        self.remember_analysis(memory_id, incoming.clone());
        let mut candidates = self.candidates_for(save, &incoming, None)?;
        let embedding = self.embedding_candidates(save, &mut candidates)?;
        let (records, same_keys): (Vec<MemoryRecord>, Vec<bool>) = candidates.into_iter().unzip();
        let mut classes: Vec<Classification> = records
            .iter()
            .map(|c| {
                let analysis = self.analysis_of(c);
                classify_lexical_analysed(
                    &incoming,
                    &analysis,
                    Some(save.memory_type),
                    Some(c.memory_type),
                    &self.config,
                )
            })
            .collect();
        let models = self.classify_with_models(save, &records, &mut classes, &embedding)?;
        let mut examined: Vec<Examined> = Vec::new();
        for (((candidate, same_key), mut class), model) in records.into_iter().zip(same_keys).zip(classes).zip(models) {
            if same_key && matches!(class.relation, Relation::Complementary | Relation::Unrelated) && !class.near_miss {
                // The caller said these are one fact: a different text is a different value.
                class.relation = Relation::Contradictory;
                class.gate = "fact_key_value_changed".into();
                class.reason = format!(
                    "same fact key {:?} with a different value ({})",
                    save.fact_key.as_deref().unwrap_or_default(),
                    class.reason
                );
            }
            let outcome = if class.near_miss { PairOutcome::NearMiss } else { PairOutcome::NoEffect };
            examined.push(Examined { candidate, class, outcome, model });
        }

        // 7. Decide.
        let best = |rel: Relation, pred: &dyn Fn(&Classification) -> bool| -> Option<usize> {
            examined
                .iter()
                .enumerate()
                .filter(|(_, e)| e.class.relation == rel && pred(&e.class))
                .max_by(|a, b| a.1.class.score.total_cmp(&b.1.class.score))
                .map(|(i, _)| i)
        };
        // A restatement adds nothing to a belief that says at least as much (or says it in the
        // same words): provenance only, so no qualifier is ever lost.
        let restatement =
            best(Relation::Identical, &|c| !c.incoming_adds && (c.candidate_adds || c.gate == "exact_text"))
                .or_else(|| best(Relation::Complementary, &|c| c.gate == "restatement" && !c.near_miss));
        let contradicting: Vec<usize> =
            (0..examined.len()).filter(|&i| examined[i].class.relation == Relation::Contradictory).collect();
        let identical = best(Relation::Identical, &|_| true);

        let mut decision: Vec<NewEvent> = Vec::new();
        if let Some(i) = restatement {
            examined[i].outcome = PairOutcome::Merged;
            let into = examined[i].candidate.memory_id;
            decision
                .push(EventBody::BeliefMerged(BeliefMerged { memory_id, into, kind: MergeKind::Restatement }).into());
        } else if !contradicting.is_empty() {
            decision.extend(self.plan_conflict(save, memory_id, &mut examined, &contradicting, head, events.len())?);
        } else if let Some(i) = identical {
            let (current, root, current_effective) =
                (examined[i].candidate.memory_id, examined[i].candidate.root_id, examined[i].candidate.effective_at);
            let version = self.next_version(root)?;
            // Enriched: the incoming text says more, so it is current whatever its time.
            // Reworded: other words for the same fact; the later-effective wording is current.
            let enriched = examined[i].class.incoming_adds && !examined[i].class.candidate_adds;
            let older = matches!((save.effective_at, current_effective), (Some(a), Some(b)) if a < b);
            if !enriched && older {
                // A rewording that is older than the current belief: history, no reversal.
                examined[i].outcome = PairOutcome::Historical;
                decision.push(
                    EventBody::BeliefHistorical(BeliefHistorical { memory_id, root_id: root, version, current }).into(),
                );
            } else {
                examined[i].outcome = PairOutcome::Versioned;
                decision.push(
                    EventBody::BeliefVersioned(BeliefVersioned {
                        memory_id,
                        root_id: root,
                        version,
                        replaces: current,
                        cause: if enriched { VersionCause::Enriched } else { VersionCause::Reworded },
                    })
                    .into(),
                );
            }
        } else {
            decision.push(EventBody::BeliefAdded(BeliefAdded { memory_id }).into());
        }

        for e in examined {
            events.push(
                EventBody::PairClassified(PairClassified {
                    incoming: memory_id,
                    candidate: e.candidate.memory_id,
                    method: e.class.method,
                    relation: e.class.relation,
                    gate: e.class.gate,
                    reason: e.class.reason,
                    scores: e.class.scores,
                    thresholds: e.class.thresholds,
                    model: e.model,
                    outcome: e.outcome,
                })
                .into(),
            );
        }
        events.extend(decision);
        Ok(events)
    }

    /// A contradiction: the incoming memory becomes a belief of its own and a conflict opens
    /// against every contradicting candidate. When both sides carry explicit, different effective
    /// times, the later-effective side is current and the conflict is settled at once
    /// `by: effective_time` — an ordinary, revertible resolution.
    fn plan_conflict(
        &self,
        save: &ValidSave,
        memory_id: MemoryId,
        examined: &mut [Examined],
        contradicting: &[usize],
        head: u64,
        events_before: usize,
    ) -> Result<Vec<NewEvent>, EngineError> {
        let conflict_id = ConflictId::random();
        let mut ordered = contradicting.to_vec();
        ordered.sort_by(|&a, &b| examined[b].class.score.total_cmp(&examined[a].class.score));
        let sides: Vec<ConflictSide> = ordered
            .iter()
            .map(|&i| ConflictSide {
                memory_id: examined[i].candidate.memory_id,
                root_id: examined[i].candidate.root_id,
                version: examined[i].candidate.version,
                reason: examined[i].class.reason.clone(),
            })
            .collect();
        let mut out: Vec<NewEvent> = vec![
            EventBody::BeliefAdded(BeliefAdded { memory_id }).into(),
            EventBody::ConflictOpened(ConflictOpened { conflict_id, incoming: memory_id, candidates: sides }).into(),
        ];
        // The seq the conflict_opened event will get: the plan is made against `head`, and the
        // pair_classified events come before the decision.
        let opened_seq = head + events_before as u64 + examined.len() as u64 + 2;

        let times: Option<Vec<Timestamp>> = ordered.iter().map(|&i| examined[i].candidate.effective_at).collect();
        let settled = match (save.effective_at, times) {
            (Some(mine), Some(theirs)) if theirs.iter().all(|t| *t < mine) => Some(ResolutionAction::KeepNew),
            (Some(mine), Some(theirs)) if theirs.iter().all(|t| *t > mine) => Some(ResolutionAction::KeepExisting),
            _ => None,
        };
        for &i in &ordered {
            examined[i].outcome =
                if settled.is_some() { PairOutcome::ConflictSettled } else { PairOutcome::ConflictOpened };
        }
        if let Some(action) = settled {
            let first = &examined[ordered[0]].candidate;
            let to_version = self.next_version(first.root_id)?;
            let mut effects = vec![Effect::Reparented {
                memory_id,
                from_root: memory_id,
                from_version: 1,
                to_root: first.root_id,
                to_version,
            }];
            match action {
                ResolutionAction::KeepNew => {
                    for &i in &ordered {
                        let old = examined[i].candidate.memory_id;
                        effects.push(Effect::MadeStale { memory_id: old });
                        effects.push(Effect::EdgeAdded {
                            edge: Edge { kind: EdgeKind::Replaces, from: memory_id, to: old },
                        });
                    }
                }
                _ => {
                    effects.push(Effect::MadeStale { memory_id });
                    effects.push(Effect::EdgeAdded {
                        edge: Edge { kind: EdgeKind::Replaces, from: first.memory_id, to: memory_id },
                    });
                }
            }
            out.push(NewEvent {
                body: EventBody::ConflictResolved(ConflictResolved {
                    conflict_id,
                    action,
                    by: "effective_time".into(),
                    rationale: Some(
                        "both claims carry explicit effective times; the later-effective one is current".into(),
                    ),
                    effects,
                }),
                causation: Some(opened_seq),
            });
        }
        Ok(out)
    }
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
