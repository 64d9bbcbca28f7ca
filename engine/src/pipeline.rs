//! The save pipeline (docs/design.md §4): exact duplicate → fact-key identity → candidates →
//! classification of every candidate → decision. A `Planner` only plans events, reading the
//! store; the caller appends them in one atomic write against the head the plan was made on,
//! and `summarize` says what the appended events amount to.

use std::collections::HashMap;
use std::sync::Arc;

use memledger_ledger::NewEvent;
use memledger_projector::beliefs::MemoryRecord;
use memledger_schemas::chain::content_hash;
use memledger_schemas::*;
use serde::Serialize;

use crate::analysis_cache::AnalysisCache;
use crate::candidates::CandidateSearch;
use crate::classify::{Classification, classify_lexical_admitted, lexical};
use crate::co_enrich::{self, CoEnrichment};
use crate::config::EngineConfig;
use crate::error::{Conflict, EngineError};
use crate::index::Index;
use crate::input::{DeclaredRelation, SaveRequest, ValidSave};
use crate::models::{Models, embed};
use crate::reads::Reader;
use crate::recall::{cosine_share, lexical_share};

/// What a save did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Added,
    Merged,
    Versioned,
    Conflict,
    Historical,
    /// Recorded as a proposal: not current until someone who may write accepts it.
    Proposed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Added => "added",
            Outcome::Merged => "merged",
            Outcome::Versioned => "versioned",
            Outcome::Conflict => "conflict",
            Outcome::Historical => "historical",
            Outcome::Proposed => "proposed",
        }
    }
}

/// The result of `save`, as docs/cli.md names it.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SaveResult {
    pub outcome: Outcome,
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    pub conflict_id: Option<ConflictId>,
    pub replayed: bool,
    pub seqs: Vec<u64>,
    /// The conflict was opened and settled at once by effective time.
    pub settled_by_effective_time: bool,
    /// How many `<private>…</private>` spans were removed before anything was stored or hashed.
    pub private_spans_removed: u32,
    /// Memories that, like this one, each add a detail of their own to one earlier version:
    /// linked `co_enriches`, both kept (docs/adr/0021-co-enrichments.md).
    pub co_enriches: Vec<MemoryId>,
    /// The conflict-queue entry proposing one text for them, when a chat model proposed it.
    pub merge_proposal: Option<ConflictId>,
    /// The authority the memory was saved with (its `source`).
    pub source: Authority,
    /// The authority that can settle the conflict the save opened, if it opened one.
    pub needs_authority: Option<Authority>,
    /// The principal that saved it.
    pub principal: String,
    /// Lower-authority memories it restates, superseded at once (each by a conflict settled
    /// `by: authority`).
    pub supersedes: Vec<MemoryId>,
    /// The memories of the scope it was compared with and left standing, best first (at most
    /// [`RELATED_MAX`]): what rules could not decide, for the caller to judge and, if it knows
    /// better, declare (`--replaces`, `--contradicts`; docs/design.md §15).
    pub related: Vec<Related>,
    /// When the memory the save left current stops being true unless renewed; null: never.
    pub expires_at: Option<Timestamp>,
}

/// Most memories a save's answer names as `related`.
pub const RELATED_MAX: usize = 5;

/// A memory a save was compared with and left standing.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Related {
    pub memory_id: MemoryId,
    pub text: String,
    pub recorded_at: Timestamp,
    /// The lexical similarity in [0, 1].
    pub score: f64,
    /// The embedder's cosine, when one is configured.
    pub cosine: Option<f64>,
    /// The rule that decided the pair, and what the pair is (`complementary`, `unrelated`, or a
    /// near miss across kinds).
    pub gate: String,
    pub relation: Relation,
}

/// How a save's decision may act, given who saves: the authority its memory carries, and
/// whether it may only propose (its principal may propose but not write in the scope).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stance {
    pub(crate) authority: Authority,
    pub(crate) propose: bool,
}

/// A save validated, hashed and analysed: all of its work that reads nothing from the store.
/// `save --from` prepares the next lines on a thread of its own while this one saves.
pub struct PreparedSave {
    pub(crate) save: ValidSave,
    pub(crate) hash: Hash,
    /// The text's analysis, made ahead off the write lock (none for a save without dedup).
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

    /// Validate `request` and hash its text.
    fn validated(request: SaveRequest) -> Result<PreparedSave, EngineError> {
        let save = request.validate()?;
        let hash = content_hash(&save.text);
        Ok(PreparedSave { save, hash, analysis: None })
    }
}

/// A candidate and what the classifier said of it.
struct Examined {
    candidate: MemoryRecord,
    class: Classification,
    outcome: PairOutcome,
    /// The chat model's answer, when it was asked (crate::models).
    model: Option<ModelVerdict>,
}

/// What planning a save reads: the views, the text index and term cache, the analyses, the
/// models, the settings.
pub(crate) struct Planner<'a> {
    pub(crate) reader: Reader<'a>,
    pub(crate) index: &'a Index,
    pub(crate) analyses: &'a AnalysisCache,
    pub(crate) models: &'a Models,
    pub(crate) config: &'a EngineConfig,
}

impl Planner<'_> {
    fn candidates(&self) -> CandidateSearch<'_> {
        CandidateSearch {
            reader: self.reader,
            index: self.index,
            top_k: self.config.top_k,
            budget: self.config.candidate_budget,
        }
    }

    /// Plan the events of one save, made against ledger head `head`, as `stance` allows.
    pub(crate) fn plan_save(
        &self,
        prepared: &PreparedSave,
        head: u64,
        stance: Stance,
    ) -> Result<Vec<NewEvent>, EngineError> {
        let save = &prepared.save;
        let memory_id = MemoryId::random();
        let hash = prepared.hash;
        let mut events: Vec<NewEvent> = vec![
            EventBody::MemoryObserved(MemoryObserved {
                memory_id,
                text: save.text.clone(),
                memory_type: save.memory_type,
                scope: save.scope.clone(),
                source: Some(stance.authority.as_str().to_string()),
                fact_key: save.fact_key.clone(),
                effective_at: save.effective_at,
                content_hash: hash,
                dedup: save.dedup,
                evidence: save.evidence.clone(),
                origin: save.origin.clone(),
                expires_at: save.expiry.of_new().0,
                ttl_seconds: save.expiry.of_new().1,
            })
            .into(),
        ];
        if !save.dedup {
            if stance.propose {
                events.extend(self.propose(memory_id, stance, &mut [], &[]));
            } else {
                events.push(EventBody::BeliefAdded(BeliefAdded { memory_id }).into());
            }
            return Ok(events);
        }

        // 3. An exact duplicate among the scope's active memories of at least its authority:
        // provenance only. (A higher-authority restatement is the belief's next version.)
        let mut dup = None;
        for id in self.reader.beliefs().active_by_hash(&save.scope, &hash)? {
            if self.reader.beliefs().get(id)?.is_some_and(|r| r.authority >= stance.authority) {
                dup = Some(id);
                break;
            }
        }
        if let (Some(dup), Some(declared)) = (dup, &save.declared) {
            // The text is held already: the caller declares how that memory stands to another.
            events.extend(self.plan_declared_restatement(memory_id, dup, declared, stance, head)?);
            return Ok(events);
        }
        if let Some(dup) = dup {
            let held = self.reader.record(dup)?;
            let change = save.expiry.against((held.expires_at, held.ttl_seconds), save.now);
            if change.changes(held.expires_at) && !stance.propose && stance.authority >= held.authority {
                // The same text with another expiry (or said again after its expiry): extending,
                // renewing or clearing it is an update.
                if let EventBody::MemoryObserved(observed) = &mut events[0].body {
                    (observed.expires_at, observed.ttl_seconds) =
                        change.applied_to((held.expires_at, held.ttl_seconds));
                }
                events.extend(self.expiry_changed(memory_id, &held)?);
            } else {
                events.extend(exact_duplicate(memory_id, dup));
            }
            return Ok(events);
        }

        // 4–6. Candidates (fact-key matches first, then by terms and, with an embedder, by
        // cosine), each classified lexically and, with a chat model, by the model (crate::models).
        let incoming = prepared.analysis.clone().unwrap_or_else(|| Arc::new(lexical::analyse(&save.text)));
        // The new memory's analysis serves the term cache after the commit and later saves that
        // meet it as a candidate.
        self.analyses.remember(memory_id, incoming.clone());
        let candidates_span = tracing::info_span!(
            "memledger.save.candidates",
            memledger.candidates = tracing::field::Empty,
            memledger.embedding = self.models.embedder().is_some(),
        );
        let (candidates, embedding) = candidates_span.in_scope(|| {
            let mut candidates = self.candidates().find(save, &incoming, None)?;
            let embedding = embed::embedding_candidates(
                self.models,
                self.reader,
                self.config.embedding_top_k,
                save,
                &mut candidates,
            )?;
            Ok::<_, EngineError>((candidates, embedding))
        })?;
        candidates_span.record("memledger.candidates", candidates.len() as i64);
        let classify_span = tracing::info_span!(
            "memledger.save.classify",
            memledger.pairs = candidates.len() as i64,
            memledger.model = self.models.llm().map_or("", |e| e.model.as_str()),
        );
        let _classifying = classify_span.enter();
        let (records, same_keys): (Vec<MemoryRecord>, Vec<bool>) = candidates.into_iter().unzip();
        // With an embedder, a pair its cosine admits is compared by the rules of change whatever
        // its lexical similarity (docs/design.md §15).
        let related_min = self.models.related_cosine_min();
        let mut classes: Vec<Classification> = records
            .iter()
            .map(|c| {
                let analysis = self.analyses.of(c);
                let admission = related_min.and_then(|min| {
                    embedding.cosines.get(&c.memory_id).map(|&cosine| lexical::Admission { cosine, min })
                });
                classify_lexical_admitted(
                    &incoming,
                    &analysis,
                    Some(save.memory_type),
                    Some(c.memory_type),
                    self.config,
                    admission,
                )
            })
            .collect();
        let ids: Vec<MemoryId> = records.iter().map(|r| r.memory_id).collect();
        one_fact_changes_one_fact(&ids, &mut classes, &embedding.cosines);
        let models = self.models.classify_candidates(self.reader, save, &records, &mut classes, &embedding)?;
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

        drop(_classifying);

        // Co-enrichments: candidates that, like this memory, add a detail of their own to one
        // earlier version. Neither replaces the other, whatever a classifier called the pair.
        let finder = co_enrich::Finder { reader: self.reader, analyses: self.analyses, config: self.config };
        let pairs: Vec<(&MemoryRecord, &Classification)> = examined.iter().map(|e| (&e.candidate, &e.class)).collect();
        let links = finder.find(&incoming, save.memory_type, &pairs)?;
        for link in &links {
            let e = &mut examined[link.candidate];
            e.outcome = PairOutcome::CoEnrichment;
            e.class.reason = format!(
                "{}; both add a detail of their own to {} (version {} of {}), which this memory builds on ({} by {}): \
                 co-enrichments, both kept",
                e.class.reason,
                link.revision.memory_id,
                link.revision.version,
                link.revision.root_id,
                link.builds.relation,
                link.builds.gate
            );
        }
        let linked = |i: usize| links.iter().any(|l| l.candidate == i);

        // 7. Decide, as far as the authority of the incoming memory allows: it never supersedes a
        // belief of higher authority (docs/design.md §13).
        let best = |rel: Relation, pred: &dyn Fn(&Examined) -> bool| -> Option<usize> {
            examined
                .iter()
                .enumerate()
                .filter(|(i, e)| !linked(*i) && e.class.relation == rel && pred(e))
                .max_by(|a, b| a.1.class.score.total_cmp(&b.1.class.score))
                .map(|(i, _)| i)
        };
        // A restatement adds nothing to a belief that says at least as much (or says it in the
        // same words) with at least its authority: provenance only, so no qualifier is ever lost.
        let restatement = best(Relation::Identical, &|e| {
            let c = &e.class;
            e.candidate.authority >= stance.authority
                && !c.incoming_adds
                && (c.candidate_adds || c.gate == "exact_text")
        })
        .or_else(|| {
            best(Relation::Complementary, &|e| {
                e.candidate.authority >= stance.authority && e.class.gate == "restatement" && !e.class.near_miss
            })
        });
        let contradicting: Vec<usize> =
            (0..examined.len()).filter(|&i| examined[i].class.relation == Relation::Contradictory).collect();
        let identical = best(Relation::Identical, &|_| true);
        // The one contradiction is a change the incoming memory announces ("we moved CI to
        // GitLab" against "our CI runs on GitHub Actions"): the belief's next version, unless the
        // change is older than the belief by explicit effective times (then the conflict path
        // settles it by time).
        let announced = match contradicting[..] {
            [i] if examined[i].class.gate == "announced_change" && !linked(i) => {
                let older =
                    matches!((save.effective_at, examined[i].candidate.effective_at), (Some(a), Some(b)) if a < b);
                (!older).then_some(i)
            }
            _ => None,
        };

        // A relation the caller declared decides over the rules: its pair is recorded as
        // classified by that caller (method `declared`), within what its authority allows.
        let declared = match &save.declared {
            Some(d) => Some((d.relation, self.declared_pair(d, &incoming, save, &mut examined)?)),
            None => None,
        };

        let mut decision: Vec<NewEvent> = Vec::new();
        if let Some((relation, i)) = declared {
            if stance.propose {
                decision.extend(self.propose(memory_id, stance, &mut examined, &[i]));
            } else if relation == DeclaredRelation::Contradicts {
                decision.extend(self.plan_conflict(
                    save,
                    memory_id,
                    stance,
                    &mut examined,
                    &[i],
                    head,
                    events.len(),
                )?);
            } else if stance.authority < examined[i].candidate.authority {
                decision.extend(self.plan_authority_conflict(memory_id, stance, &mut examined, i));
            } else {
                decision.push(self.supersede(memory_id, &mut examined[i], VersionCause::Declared)?);
            }
        } else if let Some(i) = restatement {
            examined[i].outcome = PairOutcome::Merged;
            let into = examined[i].candidate.memory_id;
            decision
                .push(EventBody::BeliefMerged(BeliefMerged { memory_id, into, kind: MergeKind::Restatement }).into());
        } else if let Some(i) = announced {
            if stance.propose {
                decision.extend(self.propose(memory_id, stance, &mut examined, &[i]));
            } else if stance.authority < examined[i].candidate.authority {
                // A change announced by a lower authority than the belief's: both kept, the belief
                // stays current, and a conflict only its authority can settle opens instead.
                decision.extend(self.plan_authority_conflict(memory_id, stance, &mut examined, i));
            } else {
                decision.push(self.supersede(memory_id, &mut examined[i], VersionCause::AnnouncedChange)?);
            }
        } else if !contradicting.is_empty() {
            if stance.propose {
                decision.extend(self.propose(memory_id, stance, &mut examined, &contradicting));
            } else {
                decision.extend(self.plan_conflict(
                    save,
                    memory_id,
                    stance,
                    &mut examined,
                    &contradicting,
                    head,
                    events.len(),
                )?);
            }
        } else if let Some(i) = identical {
            let (current, root, current_effective) =
                (examined[i].candidate.memory_id, examined[i].candidate.root_id, examined[i].candidate.effective_at);
            let version = self.reader.next_version(root)?;
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
            } else if stance.propose {
                decision.extend(self.propose(memory_id, stance, &mut examined, &[i]));
            } else if stance.authority < examined[i].candidate.authority {
                // It would supersede a belief of higher authority: both kept, the higher stays
                // current, and a conflict that only that authority can settle opens instead.
                decision.extend(self.plan_authority_conflict(memory_id, stance, &mut examined, i));
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
                // The next version of a belief beside memories it co-enriches: the proposal opens
                // on one of those that is a belief of its own, this memory a side as it now stands.
                let placed = Placed::Version { root_id: root, version };
                if let Some(proposal) = self.propose_merge(save, memory_id, placed, &mut examined, &links)? {
                    decision.push(proposal);
                }
            }
        } else if stance.propose {
            decision.extend(self.propose(memory_id, stance, &mut examined, &[]));
        } else {
            decision.push(EventBody::BeliefAdded(BeliefAdded { memory_id }).into());
            // A belief of its own beside the memories it co-enriches: with a chat model, one text
            // for them is proposed through the conflict queue, and nothing more is written.
            if let Some(proposal) = self.propose_merge(save, memory_id, Placed::Belief, &mut examined, &links)? {
                decision.push(proposal);
            }
        }

        // A memory of higher authority that restates others of lower authority (saying at
        // least as much) supersedes them too, beside whatever else it did: each is settled at once
        // `by: authority`, an ordinary, revertible resolution.
        let withdrawn = decision
            .iter()
            .any(|e| matches!(&e.body, EventBody::ConflictResolved(b) if b.action != ResolutionAction::KeepNew));
        let current =
            decision.iter().any(|e| matches!(&e.body, EventBody::BeliefAdded(_) | EventBody::BeliefVersioned(_)));
        if current && !withdrawn && !stance.propose && declared.is_none() {
            let touched: Vec<MemoryId> = decision.iter().flat_map(|e| e.body.memory_ids()).collect();
            let absorbed: Vec<usize> = (0..examined.len())
                .filter(|&i| {
                    let e = &examined[i];
                    e.class.relation == Relation::Identical
                        && !e.class.candidate_adds
                        && e.candidate.authority < stance.authority
                        && !linked(i)
                        && e.outcome == PairOutcome::NoEffect
                        && !touched.contains(&e.candidate.memory_id)
                })
                .collect();
            for i in absorbed {
                // The events so far: the observation, one classification per candidate, the decision.
                let opened_seq = head + 1 + examined.len() as u64 + decision.len() as u64 + 1;
                decision.extend(self.plan_absorb(memory_id, stance, &mut examined, i, opened_seq));
            }
        }

        // A restatement without an expiry of its own keeps the one of the version it restates.
        let restated = decision.iter().find_map(|e| match &e.body {
            EventBody::BeliefVersioned(b) if matches!(b.cause, VersionCause::Reworded | VersionCause::Enriched) => {
                Some(b.replaces)
            }
            _ => None,
        });
        if let Some(old) = restated.and_then(|id| examined.iter().find(|e| e.candidate.memory_id == id))
            && let EventBody::MemoryObserved(observed) = &mut events[0].body
        {
            let held = (old.candidate.expires_at, old.candidate.ttl_seconds);
            (observed.expires_at, observed.ttl_seconds) = save.expiry.against(held, save.now).applied_to(held);
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

    /// The incoming memory as the next version of the belief `pair` examined, replacing its
    /// current version for `cause` (a change the text announced, or the caller declared).
    fn supersede(
        &self,
        memory_id: MemoryId,
        pair: &mut Examined,
        cause: VersionCause,
    ) -> Result<NewEvent, EngineError> {
        let (current, root) = (pair.candidate.memory_id, pair.candidate.root_id);
        let version = self.reader.next_version(root)?;
        pair.outcome = PairOutcome::Versioned;
        Ok(EventBody::BeliefVersioned(BeliefVersioned { memory_id, root_id: root, version, replaces: current, cause })
            .into())
    }

    /// A declared relation in a save of a text the scope already holds (an agent's second call,
    /// after reading `related`): the observation merges into the memory that holds it, and that
    /// memory stands to the declared one as declared — a conflict between them, settled at once
    /// (`by: declared`, the memory becoming the next version of the declared one's belief) when
    /// it replaces it, the caller's authority allows, and the memory is a belief of its own;
    /// else left for who may settle it.
    fn plan_declared_restatement(
        &self,
        memory_id: MemoryId,
        dup: MemoryId,
        declared: &crate::input::Declared,
        stance: Stance,
        head: u64,
    ) -> Result<Vec<NewEvent>, EngineError> {
        let id = match declared.id {
            Some(id) => id,
            None => self.reader.resolve_memory_id(&declared.target)?,
        };
        let target = self.reader.current_of(id)?;
        let held = self.reader.record(dup)?;
        if target.root_id == held.root_id {
            // Of itself: nothing to declare.
            return Ok(exact_duplicate(memory_id, dup).into());
        }
        let (verb, gate) = declared_words(declared.relation);
        let settle = declared.relation == DeclaredRelation::Replaces
            && !stance.propose
            && stance.authority >= target.authority
            && held.version == 1
            && held.root_id == held.memory_id;
        let needs_authority = target.authority.max(stance.authority);
        let kind =
            if stance.authority < target.authority { ConflictKind::Authority } else { ConflictKind::Contradiction };
        let reason = format!("the caller declared that {} {verb} it", held.memory_id.short());
        let mut events: Vec<NewEvent> = exact_duplicate(memory_id, dup).into();
        events.push(
            EventBody::PairClassified(PairClassified {
                incoming: memory_id,
                candidate: target.memory_id,
                method: Method::Declared,
                relation: Relation::Contradictory,
                gate: gate.into(),
                reason: reason.clone(),
                scores: Vec::new(),
                thresholds: Vec::new(),
                model: None,
                outcome: if settle { PairOutcome::ConflictSettled } else { PairOutcome::ConflictOpened },
            })
            .into(),
        );
        let conflict_id = ConflictId::random();
        events.push(
            EventBody::ConflictOpened(ConflictOpened {
                conflict_id,
                incoming: dup,
                candidates: vec![ConflictSide {
                    memory_id: target.memory_id,
                    root_id: target.root_id,
                    version: target.version,
                    reason,
                }],
                kind,
                needs_authority,
            })
            .into(),
        );
        if settle {
            // The events before: the observation, and the three above.
            let opened_seq = head + 1 + events.len() as u64;
            let to_version = self.reader.next_version(target.root_id)?;
            events.push(NewEvent {
                body: EventBody::ConflictResolved(ConflictResolved {
                    conflict_id,
                    action: ResolutionAction::KeepNew,
                    by: "declared".into(),
                    rationale: Some(format!("the caller declared that it {verb} the current version")),
                    effects: vec![
                        Effect::Reparented {
                            memory_id: dup,
                            from_root: dup,
                            from_version: 1,
                            to_root: target.root_id,
                            to_version,
                        },
                        Effect::MadeStale { memory_id: target.memory_id },
                        Effect::EdgeAdded { edge: Edge { kind: EdgeKind::Replaces, from: dup, to: target.memory_id } },
                    ],
                }),
                causation: Some(opened_seq),
            });
        }
        Ok(events)
    }

    /// The pair a declared relation names, among the examined candidates (added when candidate
    /// search did not find it: it is classified lexically for the record), its classification
    /// laid over by the caller's: its index in `examined`. The declared memory is the current
    /// version of the lineage the caller named.
    fn declared_pair(
        &self,
        declared: &crate::input::Declared,
        incoming: &lexical::Analysis,
        save: &ValidSave,
        examined: &mut Vec<Examined>,
    ) -> Result<usize, EngineError> {
        let id = match declared.id {
            Some(id) => id,
            None => self.reader.resolve_memory_id(&declared.target)?,
        };
        let target = self.reader.current_of(id)?;
        let i = match examined.iter().position(|e| e.candidate.memory_id == target.memory_id) {
            Some(i) => i,
            None => {
                let analysis = self.analyses.of(&target);
                let class = classify_lexical_admitted(
                    incoming,
                    &analysis,
                    Some(save.memory_type),
                    Some(target.memory_type),
                    self.config,
                    None,
                );
                examined.push(Examined { candidate: target, class, outcome: PairOutcome::NoEffect, model: None });
                examined.len() - 1
            }
        };
        let class = &mut examined[i].class;
        let (verb, gate) = declared_words(declared.relation);
        class.reason = format!(
            "the caller declared that this memory {verb} it (the rules said {} by {}: {})",
            class.relation, class.gate, class.reason
        );
        class.method = Method::Declared;
        class.relation = Relation::Contradictory;
        class.gate = gate.into();
        class.near_miss = false;
        Ok(i)
    }

    /// With a chat model, a `merge_proposed` entry for the incoming memory and the candidates that
    /// co-enrich the first link's version with it. The entry opens on a belief of its own (the
    /// queue's compare-and-set wants a first version there): the incoming memory when it is one,
    /// else the first linked candidate that is, the incoming memory then a side. A failed or
    /// unusable answer proposes nothing and says why in those pairs' reasons.
    fn propose_merge(
        &self,
        save: &ValidSave,
        memory_id: MemoryId,
        placed: Placed,
        examined: &mut [Examined],
        links: &[CoEnrichment],
    ) -> Result<Option<NewEvent>, EngineError> {
        let (Some(first), Some(endpoint)) = (links.first(), self.models.llm()) else { return Ok(None) };
        let revision = &first.revision;
        let mut sides: Vec<usize> =
            links.iter().filter(|l| l.revision.memory_id == revision.memory_id).map(|l| l.candidate).collect();
        let opens_on = match placed {
            Placed::Belief => None,
            Placed::Version { .. } => {
                let own = |i: &usize| {
                    let c = &examined[*i].candidate;
                    c.version == 1 && c.root_id == c.memory_id
                };
                let Some(at) = sides.iter().position(own) else { return Ok(None) };
                Some(sides.remove(at))
            }
        };
        let mut texts = vec![save.text.as_str()];
        texts.extend(opens_on.iter().chain(&sides).map(|&i| examined[i].candidate.text.as_str()));
        let Some(answer) = self.models.propose_merge(&revision.text, &texts) else { return Ok(None) };
        let model = answer.record(&endpoint.model);
        let text = match answer.result {
            Ok(a) => a.text,
            Err(e) => {
                for &i in opens_on.iter().chain(&sides) {
                    examined[i].class.reason.push_str(&format!(" [no merge proposed: {} {e}]", endpoint.model));
                }
                return Ok(None);
            }
        };
        let reason = format!(
            "each adds a detail of its own to {} (version {}); {} proposed one text for both",
            revision.memory_id, revision.version, endpoint.model
        );
        let mut candidates: Vec<ConflictSide> = sides
            .iter()
            .map(|&i| ConflictSide {
                memory_id: examined[i].candidate.memory_id,
                root_id: examined[i].candidate.root_id,
                version: examined[i].candidate.version,
                reason: reason.clone(),
            })
            .collect();
        let incoming = match (placed, opens_on) {
            (Placed::Version { root_id, version }, Some(i)) => {
                candidates.insert(0, ConflictSide { memory_id, root_id, version, reason });
                examined[i].candidate.memory_id
            }
            _ => memory_id,
        };
        Ok(Some(
            EventBody::MergeProposed(MergeProposed {
                conflict_id: ConflictId::random(),
                incoming,
                candidates,
                revision: revision.memory_id,
                text,
                model,
            })
            .into(),
        ))
    }

    /// A contradiction: the incoming memory becomes a belief of its own and a conflict opens
    /// against every contradicting candidate. When both sides carry explicit, different effective
    /// times, the later-effective side is current and the conflict is settled at once
    /// `by: effective_time` — an ordinary, revertible resolution.
    #[allow(clippy::too_many_arguments)]
    fn plan_conflict(
        &self,
        save: &ValidSave,
        memory_id: MemoryId,
        stance: Stance,
        examined: &mut [Examined],
        contradicting: &[usize],
        head: u64,
        events_before: usize,
    ) -> Result<Vec<NewEvent>, EngineError> {
        let conflict_id = ConflictId::random();
        let mut ordered = contradicting.to_vec();
        ordered.sort_by(|&a, &b| examined[b].class.score.total_cmp(&examined[a].class.score));
        let sides = sides_of(examined, &ordered);
        let needs_authority = ordered.iter().map(|&i| examined[i].candidate.authority).fold(stance.authority, Ord::max);
        let mut out: Vec<NewEvent> = vec![
            EventBody::BeliefAdded(BeliefAdded { memory_id }).into(),
            EventBody::ConflictOpened(ConflictOpened {
                conflict_id,
                incoming: memory_id,
                candidates: sides,
                kind: ConflictKind::Contradiction,
                needs_authority,
            })
            .into(),
        ];
        // The seq the conflict_opened event will get: the plan is made against `head`, and the
        // pair_classified events come before the decision.
        let opened_seq = head + events_before as u64 + examined.len() as u64 + 2;

        let times: Option<Vec<Timestamp>> = ordered.iter().map(|&i| examined[i].candidate.effective_at).collect();
        // Effective time settles it only for a winner of at least the losers' authority: a later
        // claim of lower authority is for a principal of the higher one to settle.
        let theirs_outrank = ordered.iter().all(|&i| examined[i].candidate.authority >= stance.authority);
        let mine_outranks = ordered.iter().all(|&i| stance.authority >= examined[i].candidate.authority);
        let settled = match (save.effective_at, times) {
            (Some(mine), Some(theirs)) if mine_outranks && theirs.iter().all(|t| *t < mine) => {
                Some(ResolutionAction::KeepNew)
            }
            (Some(mine), Some(theirs)) if theirs_outrank && theirs.iter().all(|t| *t > mine) => {
                Some(ResolutionAction::KeepExisting)
            }
            _ => None,
        };
        for &i in &ordered {
            examined[i].outcome =
                if settled.is_some() { PairOutcome::ConflictSettled } else { PairOutcome::ConflictOpened };
        }
        if let Some(action) = settled {
            let first = &examined[ordered[0]].candidate;
            let to_version = self.reader.next_version(first.root_id)?;
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

/// How closely an identity gate's pair speaks of one fact: the share of the stored fact the two
/// share, then the lexical similarity; where the two share no word of what the fact is about,
/// the embedder's cosine first (their lexical similarity is then made of cue words, "Correction:"
/// / "Correction:"). In a crowded scope the cosine lies close for every neighbour, so it never
/// outweighs shared words.
fn identity_strength(c: &Classification, cosine: Option<f64>) -> (f64, f64, f64) {
    let score = |name: &str| c.scores.iter().find(|(n, _)| n.as_str() == name).map_or(0.0, |(_, v)| *v);
    let (coverage, cosine) = (score("identity_coverage"), cosine.unwrap_or(0.0));
    if coverage > 0.0 { (coverage, c.score, cosine) } else { (coverage, cosine, c.score) }
}

/// One fact changes one fact: of the candidates an identity gate
/// (`classify::lexical::IDENTITY_GATES`) called contradictory, only the one it identifies best
/// keeps that verdict, and none does when a word-by-word gate found the change in another
/// candidate (a value changed while the rest agrees is stronger evidence of which fact this is);
/// the others stay related, and their reasons say which memory it speaks of. In a scope of many
/// memories a change statement shares a word or a cosine with several.
fn one_fact_changes_one_fact(ids: &[MemoryId], classes: &mut [Classification], cosines: &HashMap<MemoryId, f64>) {
    let identity = |c: &Classification| {
        c.relation == Relation::Contradictory && lexical::IDENTITY_GATES.contains(&c.gate.as_str())
    };
    let worded = (0..classes.len()).find(|&i| classes[i].relation == Relation::Contradictory && !identity(&classes[i]));
    let strength = |i: usize| identity_strength(&classes[i], cosines.get(&ids[i]).copied());
    let Some(best) = worded.or_else(|| {
        (0..classes.len())
            .filter(|&i| identity(&classes[i]))
            .max_by(|&x, &y| strength(x).partial_cmp(&strength(y)).unwrap_or(std::cmp::Ordering::Equal))
    }) else {
        return;
    };
    let chosen = ids[best];
    for (i, c) in classes.iter_mut().enumerate() {
        if i != best && identity(c) {
            c.reason = format!("{}; but it speaks of {} more closely: related here", c.reason, chosen.short());
            c.relation = Relation::Complementary;
            c.gate = "identity_elsewhere".into();
        }
    }
}

/// The sides of a conflict-queue entry: the candidates at `at`, as they stand, with the
/// classifier's reasons.
fn sides_of(examined: &[Examined], at: &[usize]) -> Vec<ConflictSide> {
    at.iter()
        .map(|&i| ConflictSide {
            memory_id: examined[i].candidate.memory_id,
            root_id: examined[i].candidate.root_id,
            version: examined[i].candidate.version,
            reason: examined[i].class.reason.clone(),
        })
        .collect()
}

impl Planner<'_> {
    /// A save that would supersede candidate `i`, a belief of higher authority: the incoming
    /// memory becomes a belief of its own, the candidate stays current, and a conflict opens
    /// that needs the candidate's authority to settle.
    fn plan_authority_conflict(
        &self,
        memory_id: MemoryId,
        stance: Stance,
        examined: &mut [Examined],
        i: usize,
    ) -> Vec<NewEvent> {
        let needs = examined[i].candidate.authority;
        examined[i].outcome = PairOutcome::ConflictOpened;
        examined[i].class.reason = format!(
            "{}; this {} memory would supersede a {needs} belief, which only {needs} authority can do: both kept, \
             the {needs} one stays current",
            examined[i].class.reason, stance.authority
        );
        vec![
            EventBody::BeliefAdded(BeliefAdded { memory_id }).into(),
            EventBody::ConflictOpened(ConflictOpened {
                conflict_id: ConflictId::random(),
                incoming: memory_id,
                candidates: sides_of(examined, &[i]),
                kind: ConflictKind::Authority,
                needs_authority: needs,
            })
            .into(),
        ]
    }

    /// Candidate `i`, a lower-authority belief the incoming memory restates, superseded at once:
    /// a conflict opened and settled `by: authority` (the candidate stale, replaced by the
    /// incoming memory), whose `conflict_opened` event gets `opened_seq`.
    fn plan_absorb(
        &self,
        memory_id: MemoryId,
        stance: Stance,
        examined: &mut [Examined],
        i: usize,
        opened_seq: u64,
    ) -> Vec<NewEvent> {
        let old = examined[i].candidate.memory_id;
        examined[i].outcome = PairOutcome::ConflictSettled;
        examined[i].class.reason = format!(
            "{}; this {} memory restates a {} one: it supersedes it",
            examined[i].class.reason, stance.authority, examined[i].candidate.authority
        );
        let conflict_id = ConflictId::random();
        vec![
            EventBody::ConflictOpened(ConflictOpened {
                conflict_id,
                incoming: memory_id,
                candidates: sides_of(examined, &[i]),
                kind: ConflictKind::Authority,
                needs_authority: stance.authority,
            })
            .into(),
            NewEvent {
                body: EventBody::ConflictResolved(ConflictResolved {
                    conflict_id,
                    action: ResolutionAction::KeepNew,
                    by: "authority".into(),
                    rationale: Some(format!(
                        "a {} memory restates a {} one: the higher authority is current",
                        stance.authority, examined[i].candidate.authority
                    )),
                    effects: vec![
                        Effect::MadeStale { memory_id: old },
                        Effect::EdgeAdded { edge: Edge { kind: EdgeKind::Replaces, from: memory_id, to: old } },
                    ],
                }),
                causation: Some(opened_seq),
            },
        ]
    }

    /// A save by a principal that may propose but not write: the memory becomes a proposal, and
    /// an entry of the conflict queue holds it against the candidates at `targets` (what
    /// accepting it would version or contradict), for someone who may write to accept or reject.
    fn propose(
        &self,
        memory_id: MemoryId,
        stance: Stance,
        examined: &mut [Examined],
        targets: &[usize],
    ) -> Vec<NewEvent> {
        let needs_authority = targets.iter().map(|&i| examined[i].candidate.authority).fold(stance.authority, Ord::max);
        for &i in targets {
            examined[i].outcome = PairOutcome::Proposed;
        }
        vec![
            EventBody::BeliefProposed(BeliefProposed { memory_id }).into(),
            EventBody::ConflictOpened(ConflictOpened {
                conflict_id: ConflictId::random(),
                incoming: memory_id,
                candidates: sides_of(examined, targets),
                kind: ConflictKind::Proposal,
                needs_authority,
            })
            .into(),
        ]
    }
}

/// The save result a save's events amount to (`replayed`: they were appended before, under the
/// same idempotency key).
pub(crate) fn summarize(reader: Reader<'_>, events: &[Event], replayed: bool) -> Result<SaveResult, EngineError> {
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    let (observed, source, principal, expires_at) = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::MemoryObserved(b) => Some((
                b.memory_id,
                b.authority(e.format),
                e.principal.clone().unwrap_or_else(|| OWNER.to_string()),
                b.expires_at,
            )),
            _ => None,
        })
        .ok_or(Conflict::KeyOfAnotherCommand)?;
    let mut result = SaveResult {
        outcome: Outcome::Added,
        memory_id: observed,
        root_id: observed,
        version: 1,
        conflict_id: None,
        replayed,
        seqs,
        settled_by_effective_time: false,
        private_spans_removed: 0,
        co_enriches: Vec::new(),
        merge_proposal: None,
        source,
        needs_authority: None,
        principal,
        supersedes: Vec::new(),
        related: Vec::new(),
        expires_at,
    };
    let mut compared: Vec<Compared> = Vec::new();
    // Restatements of lower authority superseded beside the save's own decision.
    let absorbed: Vec<ConflictId> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ConflictResolved(b) if b.by == "authority" => Some(b.conflict_id),
            _ => None,
        })
        .collect();
    for e in events {
        match &e.body {
            EventBody::ConflictOpened(b) if absorbed.contains(&b.conflict_id) => {
                result.supersedes.extend(b.candidates.iter().map(|c| c.memory_id));
            }
            EventBody::ConflictResolved(b) if absorbed.contains(&b.conflict_id) => {}
            EventBody::BeliefMerged(b) => {
                result.outcome = Outcome::Merged;
                result.memory_id = b.into;
                if let Some(r) = reader.beliefs().get(b.into)? {
                    result.root_id = r.root_id;
                    result.version = r.version;
                    result.expires_at = r.expires_at;
                }
            }
            EventBody::BeliefVersioned(b) => {
                result.outcome = Outcome::Versioned;
                result.root_id = b.root_id;
                result.version = b.version;
            }
            EventBody::BeliefHistorical(b) => {
                result.outcome = Outcome::Historical;
                result.root_id = b.root_id;
                result.version = b.version;
            }
            EventBody::BeliefProposed(_) => result.outcome = Outcome::Proposed,
            EventBody::ConflictOpened(b) => {
                if b.kind != ConflictKind::Proposal {
                    result.outcome = Outcome::Conflict;
                }
                result.conflict_id = Some(b.conflict_id);
                result.needs_authority = Some(b.needs_authority);
            }
            EventBody::PairClassified(b) if b.outcome == PairOutcome::CoEnrichment => {
                result.co_enriches.push(b.candidate);
            }
            EventBody::MergeProposed(b) => result.merge_proposal = Some(b.conflict_id),
            EventBody::PairClassified(b) if matches!(b.outcome, PairOutcome::NoEffect | PairOutcome::NearMiss) => {
                let score = |name: &str| b.scores.iter().find(|(n, _)| n.as_str() == name).map(|(_, v)| *v);
                compared.push(Compared {
                    memory_id: b.candidate,
                    score: score("score").unwrap_or(0.0),
                    cosine: score("cosine"),
                    ranked_cosine: score("cosine_centred").or(score("cosine")),
                    gate: &b.gate,
                    relation: b.relation,
                });
            }
            EventBody::ConflictResolved(b) => {
                result.settled_by_effective_time = b.by == "effective_time";
                result.outcome = match b.action {
                    ResolutionAction::KeepNew => Outcome::Versioned,
                    _ => Outcome::Historical,
                };
                for effect in &b.effects {
                    if let Effect::Reparented { memory_id, to_root, to_version, .. } = effect
                        && (*memory_id == observed || *memory_id == result.memory_id)
                    {
                        result.root_id = *to_root;
                        result.version = *to_version;
                    }
                }
            }
            _ => {}
        }
    }
    result.related = best_related(compared, |c| {
        let Some(record) = reader.beliefs().get(c.memory_id)? else { return Ok(None) };
        if record.status != Status::Active {
            return Ok(None);
        }
        Ok(Some(c.related(record.text, record.recorded_at)))
    })?;
    Ok(result)
}

/// A pair a save compared and left standing, as its classification recorded it: all that
/// `related` is ranked by, before anything about the memory is read.
struct Compared<'a> {
    memory_id: MemoryId,
    score: f64,
    cosine: Option<f64>,
    /// The cosine it is ranked by: the centred one where the pair recorded it.
    ranked_cosine: Option<f64>,
    gate: &'a str,
    relation: Relation,
}

impl Compared<'_> {
    fn related(&self, text: String, recorded_at: Timestamp) -> Related {
        Related {
            memory_id: self.memory_id,
            text,
            recorded_at,
            score: self.score,
            cosine: self.cosine,
            gate: self.gate.to_string(),
            relation: self.relation,
        }
    }
}

/// The memories a save left standing, best first, at most [`RELATED_MAX`]: ranked as recall
/// fuses its two rankings ([`lexical_share`], [`cosine_share`]), by the lexical score over the
/// best of the pairs and the cosine they are ranked by stretched from the lowest of them to the
/// highest; ties to the newer. `read` gives a pair's memory, `None` when it no longer stands; it
/// is called for the best pairs only (and every pair tied with one), not for all of them.
fn best_related<'a>(
    compared: Vec<Compared<'a>>,
    mut read: impl FnMut(&Compared<'a>) -> Result<Option<Related>, EngineError>,
) -> Result<Vec<Related>, EngineError> {
    let best_score = compared.iter().map(|c| c.score).fold(f64::MIN_POSITIVE, f64::max);
    let cosines = || compared.iter().filter_map(|c| c.ranked_cosine);
    let (high, low) = (cosines().fold(f64::MIN, f64::max), cosines().fold(f64::MAX, f64::min));
    let fused =
        |c: &Compared| lexical_share(c.score, best_score) + c.ranked_cosine.map_or(0.0, |c| cosine_share(c, low, high));
    let scores: Vec<f64> = compared.iter().map(fused).collect();
    let mut ranked: Vec<(f64, Compared)> = scores.into_iter().zip(compared).collect();
    ranked.sort_by(|x, y| y.0.total_cmp(&x.0));
    let mut out = Vec::with_capacity(RELATED_MAX);
    let mut rest = &ranked[..];
    while out.len() < RELATED_MAX
        && let Some((first, _)) = rest.first()
    {
        // Pairs of the same fused score are read together, to put the newer first.
        let tied = rest.iter().take_while(|(f, _)| f.total_cmp(first).is_eq()).count();
        let mut group = Vec::with_capacity(tied);
        for (_, c) in &rest[..tied] {
            group.extend(read(c)?);
        }
        group.sort_by_key(|r| std::cmp::Reverse(r.recorded_at));
        out.extend(group.into_iter().take(RELATED_MAX - out.len()));
        rest = &rest[tied..];
    }
    Ok(out)
}

/// Where a save's memory lands, for [`Planner::propose_merge`].
#[derive(Clone, Copy)]
enum Placed {
    /// A belief of its own (its first version).
    Belief,
    /// The next version of another belief.
    Version { root_id: MemoryId, version: u32 },
}

/// A save of a text the scope holds already: its pair with the held memory (identical by its
/// content hash) and its merge into it.
fn exact_duplicate(memory_id: MemoryId, dup: MemoryId) -> [NewEvent; 2] {
    [
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
        EventBody::BeliefMerged(BeliefMerged { memory_id, into: dup, kind: MergeKind::ExactDuplicate }).into(),
    ]
}

/// A save of a text the scope holds already, with another expiry: the held memory's pair and the
/// save as its next version (extending or clearing an expiry is an update).
impl Planner<'_> {
    fn expiry_changed(&self, memory_id: MemoryId, held: &MemoryRecord) -> Result<[NewEvent; 2], EngineError> {
        let version = self.reader.next_version(held.root_id)?;
        let was = held.expires_at.map_or_else(|| "no expiry".to_string(), |t| format!("expiry {}", t.to_rfc3339()));
        Ok([
            EventBody::PairClassified(PairClassified {
                incoming: memory_id,
                candidate: held.memory_id,
                method: Method::Exact,
                relation: Relation::Identical,
                gate: "expiry_changed".into(),
                reason: format!(
                    "the same text is already an active memory in this scope, with {was}: this save gives it another, \
                     as its next version"
                ),
                scores: vec![("exact".into(), 1.0)],
                thresholds: Vec::new(),
                model: None,
                outcome: PairOutcome::Versioned,
            })
            .into(),
            EventBody::BeliefVersioned(BeliefVersioned {
                memory_id,
                root_id: held.root_id,
                version,
                replaces: held.memory_id,
                cause: VersionCause::Expiry,
            })
            .into(),
        ])
    }
}

/// How a declared relation is said in a reason, and the gate its pair is recorded under.
fn declared_words(relation: DeclaredRelation) -> (&'static str, &'static str) {
    match relation {
        DeclaredRelation::Replaces => ("replaces", "declared_replaces"),
        DeclaredRelation::Contradicts => ("contradicts", "declared_contradicts"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::lexical::analyse;

    fn classified(incoming: &str, stored: &str) -> Classification {
        classify_lexical_admitted(&analyse(incoming), &analyse(stored), None, None, &EngineConfig::default(), None)
    }

    /// A change that a word-by-word gate finds in one candidate is which fact changed: an
    /// identity gate's verdict on another candidate of the same save stays related.
    #[test]
    fn an_identity_verdict_yields_to_a_change_found_word_by_word() {
        let incoming = "Standup moved to 10:15 now.";
        let mut classes =
            vec![classified(incoming, "Standup notes are due at 9:00."), classified(incoming, "Standup is at 9:30.")];
        assert!(lexical::IDENTITY_GATES.contains(&classes[0].gate.as_str()), "{:?}", classes[0]);
        assert!(!lexical::IDENTITY_GATES.contains(&classes[1].gate.as_str()), "{:?}", classes[1]);
        assert!(classes.iter().all(|c| c.relation == Relation::Contradictory), "{classes:?}");
        let ids = [MemoryId::random(), MemoryId::random()];
        one_fact_changes_one_fact(&ids, &mut classes, &HashMap::new());
        assert_eq!(classes[0].relation, Relation::Complementary, "{}", classes[0].reason);
        assert_eq!(classes[0].gate.as_str(), "identity_elsewhere");
        assert!(classes[0].reason.contains(&ids[1].short()), "{}", classes[0].reason);
        assert_eq!(classes[1].relation, Relation::Contradictory);
    }

    /// Two identity verdicts sharing no word of what the fact is about: the nearer by the
    /// embedder's cosine keeps its verdict, whatever cue words lift the other's similarity.
    #[test]
    fn without_shared_words_the_cosine_chooses_among_identity_verdicts() {
        let mut classes = vec![
            Classification {
                score: 0.4,
                ..classified("Standup moved to 10:15 now.", "Standup notes are due at 9:00.")
            },
            Classification {
                score: 0.1,
                ..classified("Standup moved to 10:15 now.", "Standup notes are due at 9:00.")
            },
        ];
        for c in &mut classes {
            c.scores.retain(|(n, _)| n.as_str() != "identity_coverage");
        }
        let ids = [MemoryId::random(), MemoryId::random()];
        let cosines = HashMap::from([(ids[0], 0.86), (ids[1], 0.88)]);
        one_fact_changes_one_fact(&ids, &mut classes, &cosines);
        assert_eq!(classes[0].gate.as_str(), "identity_elsewhere", "{}", classes[0].reason);
        assert_eq!(classes[1].relation, Relation::Contradictory);
    }

    fn related(text: &str, score: f64, cosine: Option<f64>, recorded_at: i64) -> Related {
        Related {
            memory_id: MemoryId::random(),
            text: text.into(),
            recorded_at: Timestamp(recorded_at),
            score,
            cosine,
            gate: "below_band".into(),
            relation: Relation::Unrelated,
        }
    }

    /// `best_related` of these memories, each compared with its score and cosine; those in
    /// `gone` no longer stand. Returns the texts ranked and how many memories were read.
    fn ranked(memories: &[Related], gone: &[&str]) -> (Vec<String>, usize) {
        let compared = memories
            .iter()
            .map(|r| Compared {
                memory_id: r.memory_id,
                score: r.score,
                cosine: r.cosine,
                ranked_cosine: r.cosine,
                gate: "below_band",
                relation: Relation::Unrelated,
            })
            .collect();
        let mut reads = 0;
        let ranked = best_related(compared, |c| {
            reads += 1;
            let r = memories.iter().find(|r| r.memory_id == c.memory_id).unwrap();
            Ok((!gone.contains(&r.text.as_str())).then(|| c.related(r.text.clone(), r.recorded_at)))
        })
        .unwrap();
        (ranked.into_iter().map(|r| r.text).collect(), reads)
    }

    /// `related` is ranked by the lexical score and the cosine it is given (centred, in a crowded
    /// scope) together: a memory near by the cosine alone ranks above one sharing words but far
    /// by the cosine, and one a little near by both between them.
    #[test]
    fn related_is_ranked_by_the_score_and_the_cosine_together() {
        let words = related("shares words, far by cosine", 0.5, Some(0.10), 1);
        let near = related("no shared word, nearest by cosine", 0.0, Some(0.60), 2);
        let middling = related("a little of both", 0.2, Some(0.35), 3);
        let far = related("nothing of either", 0.05, Some(0.12), 4);
        let (texts, _) = ranked(&[far.clone(), words.clone(), middling.clone(), near.clone()], &[]);
        assert_eq!(texts, [near.text, middling.text, words.text, far.text]);

        // Without an embedder: by the lexical score, ties to the newer, at most RELATED_MAX.
        let lexical: Vec<_> = (0..7).map(|i| related(&format!("m{i}"), f64::from(i % 3), None, i64::from(i))).collect();
        assert_eq!(ranked(&lexical, &[]).0, ["m5", "m2", "m4", "m1", "m6"]);
        // One no longer standing gives its place to the next.
        assert_eq!(ranked(&lexical, &["m2"]).0, ["m5", "m4", "m1", "m6", "m3"]);
    }

    /// Only the best pairs' memories are read, with every pair tied with one of them (to put
    /// the newer first), and past one that no longer stands, the next.
    #[test]
    fn related_reads_only_the_memories_it_may_name() {
        let many: Vec<_> = (0..40).map(|i| related(&format!("m{i}"), f64::from(i) / 40.0, None, 0)).collect();
        assert_eq!(ranked(&many, &[]), (vec!["m39".into(), "m38".into(), "m37".into(), "m36".into(), "m35".into()], 5));
        assert_eq!(ranked(&many, &["m38"]).1, 6);
        let tied: Vec<_> = (0..40).map(|i| related(&format!("m{i}"), f64::from(i % 2), None, i64::from(i))).collect();
        assert_eq!(
            ranked(&tied, &[]),
            (vec!["m39".into(), "m37".into(), "m35".into(), "m33".into(), "m31".into()], 20)
        );
    }
}
