//! The contradiction scan, `conflicts scan` (the PLUR seed's `plur_tensions scan`): contradictions
//! among memories that are already stored — pairs that slipped past the save-time check, for
//! instance because they were saved with `--no-dedup` or before a model was configured.
//!
//! Pairs come from the term index within a scope (the candidate search of the save pipeline, run
//! from each active memory). A pair that already has a record — a conflict in any state, a
//! `distinct` edge — is skipped. Each remaining pair is classified (the chat model when
//! configured, else the lexical rules; the lexical scores always) and a contradiction opens an
//! ordinary conflict: the same `pair_classified` + `conflict_opened` events as a save.

use std::collections::{HashMap, HashSet};

use memledger_ledger::NewEvent;
use memledger_projector::beliefs::MemoryRecord;
use memledger_schemas::*;
use serde::Serialize;

use crate::candidates::CandidateSearch;
use crate::classify::{Classification, classify_lexical};
use crate::config::EngineConfig;
use crate::error::EngineError;
use crate::input::ValidSave;
use crate::models::{Models, facts_of, llm};
use crate::reads::Reader;

/// How a scan runs.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Pairs classified at most (the most similar first).
    pub max_pairs: usize,
    /// A detection opens a conflict only at this confidence or above: the model's stated
    /// confidence (1.0 when it gave none), or the lexical similarity score.
    pub min_confidence: f64,
    /// Classify and report, write nothing.
    pub dry_run: bool,
    /// Only this scope (all scopes when `None`).
    pub scope: Option<String>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions { max_pairs: 50, min_confidence: 0.5, dry_run: false, scope: None }
    }
}

/// One examined pair.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ScannedPair {
    /// The side that would be "new" in a conflict (the later first version).
    pub incoming: MemoryId,
    pub candidate: MemoryId,
    /// What each side says (both are in scopes the caller may read: it scans only those).
    pub incoming_text: String,
    pub candidate_text: String,
    pub scope: String,
    pub similarity: f64,
    pub method: Method,
    pub relation: Relation,
    pub gate: String,
    pub reason: String,
    pub confidence: f64,
    pub model: Option<ModelVerdict>,
    /// `opened`, `would_open` (dry run), `not_contradictory`, `below_confidence`, `unresolvable`
    /// (neither side is a first version, so no resolution could apply) or `changed` (the pair
    /// changed while the scan ran).
    pub outcome: String,
    pub conflict_id: Option<ConflictId>,
    pub seqs: Vec<u64>,
}

/// What a scan found.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ScanReport {
    pub dry_run: bool,
    /// `llm` when a chat model was asked, else `lexical`.
    pub method: Method,
    pub model: Option<String>,
    /// Active memories looked at.
    pub memories: usize,
    /// Candidate pairs found, before the limit.
    pub candidate_pairs: usize,
    /// Pairs skipped because they already have a record (a conflict, a `distinct` edge).
    pub skipped_recorded: usize,
    pub examined: usize,
    pub detected: usize,
    pub opened: usize,
    pub pairs: Vec<ScannedPair>,
}

/// An unordered pair key.
fn pair(a: MemoryId, b: MemoryId) -> (MemoryId, MemoryId) {
    if a <= b { (a, b) } else { (b, a) }
}

/// A side a conflict can be opened for: a lone first version (what a resolution can reparent).
fn first_version(r: &MemoryRecord) -> bool {
    r.root_id == r.memory_id && r.version == 1
}

/// Pairs already recorded: every pair of a conflict in any state, by memory and by lineage.
fn recorded_pairs(reader: Reader<'_>) -> Result<HashSet<(MemoryId, MemoryId)>, EngineError> {
    let mut out = HashSet::new();
    for c in reader.conflict_queue().list(None)? {
        let incoming_root = reader.beliefs().get(c.incoming)?.map_or(c.incoming, |r| r.root_id);
        for side in &c.candidates {
            out.insert(pair(c.incoming, side.memory_id));
            out.insert(pair(incoming_root, side.root_id));
        }
    }
    Ok(out)
}

fn is_recorded(
    reader: Reader<'_>,
    recorded: &HashSet<(MemoryId, MemoryId)>,
    a: &MemoryRecord,
    b: &MemoryRecord,
) -> Result<bool, EngineError> {
    Ok(recorded.contains(&pair(a.memory_id, b.memory_id))
        || recorded.contains(&pair(a.root_id, b.root_id))
        || reader.edges().joined(a.memory_id, b.memory_id, EdgeKind::Distinct)?)
}

/// The stored memories most like `m` in its scope: the save pipeline's candidate search.
fn neighbours(search: &CandidateSearch<'_>, m: &MemoryRecord) -> Result<Vec<MemoryId>, EngineError> {
    let query = ValidSave {
        text: m.text.clone(),
        memory_type: m.memory_type,
        scope: m.scope.clone(),
        scope_named: true,
        authority: Some(m.authority),
        origin: None,
        evidence: None,
        effective_at: m.effective_at,
        fact_key: m.fact_key.clone(),
        idempotency_key: None,
        dedup: true,
        private_spans: 0,
        declared: None,
        expiry: crate::expiry::ExpiryChange::Keep,
        now: m.asserted_at,
    };
    Ok(search.of_text(&query, Some(m.memory_id))?.into_iter().map(|(r, _)| r.memory_id).collect())
}

/// What opens a conflict for a scanned pair (incoming, candidate, classification, the model's
/// record): the conflict and the seqs appended, or `None` when the pair changed meanwhile.
pub(crate) type OpenScanned<'a> = dyn FnMut(
        &MemoryRecord,
        &MemoryRecord,
        &Classification,
        Option<ModelVerdict>,
    ) -> Result<Option<(ConflictId, Vec<u64>)>, EngineError>
    + 'a;

/// Look for contradictions among stored active memories, and open conflicts for new ones through
/// `open` (unless `options.dry_run`).
pub(crate) fn scan_conflicts(
    search: &CandidateSearch<'_>,
    models: &Models,
    config: &EngineConfig,
    options: &ScanOptions,
    open: &mut OpenScanned<'_>,
) -> Result<ScanReport, EngineError> {
    let reader = search.reader;
    let actives = reader
        .beliefs()
        .scan(|r| r.status == Status::Active && options.scope.as_deref().is_none_or(|s| r.scope == s), usize::MAX)?;
    let recorded = recorded_pairs(reader)?;
    let mut seen: HashSet<(MemoryId, MemoryId)> = HashSet::new();
    let mut skipped_recorded = 0usize;
    // (incoming, candidate, lexical classification)
    let mut found: Vec<(MemoryRecord, MemoryRecord, Classification)> = Vec::new();
    let by_id: HashMap<MemoryId, &MemoryRecord> = actives.iter().map(|r| (r.memory_id, r)).collect();
    for m in &actives {
        for other_id in neighbours(search, m)? {
            let Some(other) = by_id.get(&other_id).copied() else { continue };
            if other.root_id == m.root_id
                || other.memory_type != m.memory_type
                || !seen.insert(pair(m.memory_id, other_id))
            {
                continue;
            }
            if is_recorded(reader, &recorded, m, other)? {
                skipped_recorded += 1;
                continue;
            }
            // The later first version is "new": that is the side a resolution can move.
            let (incoming, candidate) = match (first_version(m), first_version(other)) {
                (true, false) => (m, other),
                (false, true) => (other, m),
                _ if m.observed_seq >= other.observed_seq => (m, other),
                _ => (other, m),
            };
            let class = classify_lexical(
                &incoming.text,
                &candidate.text,
                Some(incoming.memory_type),
                Some(candidate.memory_type),
                config,
            );
            found.push((incoming.clone(), candidate.clone(), class));
        }
    }
    let candidate_pairs = found.len();
    found.sort_by(|a, b| {
        b.2.score.total_cmp(&a.2.score).then(a.0.memory_id.cmp(&b.0.memory_id)).then(a.1.memory_id.cmp(&b.1.memory_id))
    });
    found.truncate(options.max_pairs);

    // Ask the model about every pair worth asking, concurrently.
    let asked: Vec<usize> = (0..found.len()).filter(|&i| llm::worth_asking(&found[i].2)).collect();
    let model = models.llm().map(|e| e.model.clone());
    let mut verdicts: HashMap<usize, ModelVerdict> = HashMap::new();
    if let Some(model_name) = &model {
        let mut pairs = Vec::with_capacity(asked.len());
        for &i in &asked {
            pairs.push((facts_of(reader, found[i].0.memory_id)?, facts_of(reader, found[i].1.memory_id)?));
        }
        if let Some(answers) = models.classify_pairs(&pairs) {
            for (&i, answer) in asked.iter().zip(answers) {
                let class = &mut found[i].2;
                if let Ok(v) = &answer.result {
                    llm::apply(class, v, model_name);
                }
                verdicts.insert(i, answer.record(model_name));
            }
        }
    }

    let mut report = ScanReport {
        dry_run: options.dry_run,
        method: if model.is_some() { Method::Llm } else { Method::Lexical },
        model,
        memories: actives.len(),
        candidate_pairs,
        skipped_recorded,
        examined: found.len(),
        detected: 0,
        opened: 0,
        pairs: Vec::new(),
    };
    for (i, (incoming, candidate, class)) in found.into_iter().enumerate() {
        let confidence = if class.method == Method::Llm {
            class.scores.iter().find(|(k, _)| k == "llm_confidence").map_or(1.0, |(_, c)| *c)
        } else {
            class.score
        };
        let mut item = ScannedPair {
            incoming: incoming.memory_id,
            candidate: candidate.memory_id,
            incoming_text: incoming.text.clone(),
            candidate_text: candidate.text.clone(),
            scope: incoming.scope.clone(),
            similarity: class.score,
            method: class.method,
            relation: class.relation,
            gate: class.gate.to_string(),
            reason: class.reason.clone(),
            confidence,
            model: verdicts.remove(&i),
            outcome: "not_contradictory".into(),
            conflict_id: None,
            seqs: Vec::new(),
        };
        if class.relation == Relation::Contradictory && !class.near_miss {
            report.detected += 1;
            item.outcome = if confidence < options.min_confidence {
                "below_confidence".into()
            } else if !first_version(&incoming) {
                "unresolvable".into()
            } else if options.dry_run {
                "would_open".into()
            } else {
                match open(&incoming, &candidate, &class, item.model.clone())? {
                    Some((cid, seqs)) => {
                        report.opened += 1;
                        item.conflict_id = Some(cid);
                        item.seqs = seqs;
                        "opened".into()
                    }
                    None => "changed".into(),
                }
            };
        }
        report.pairs.push(item);
    }
    Ok(report)
}

/// The events that open a conflict for a scanned pair, if both sides are still as they were and
/// the pair has gained no record meanwhile (with the conflict's id). `None` when the pair changed.
/// `found_by` leads the recorded reason (`found by conflicts scan`, `opened by hand`).
pub(crate) fn plan_open_scanned(
    reader: Reader<'_>,
    incoming: &MemoryRecord,
    candidate: &MemoryRecord,
    class: &Classification,
    model: Option<ModelVerdict>,
    found_by: &str,
) -> Result<Option<(ConflictId, Vec<NewEvent>)>, EngineError> {
    let now_in = reader.beliefs().get(incoming.memory_id)?;
    let now_c = reader.beliefs().get(candidate.memory_id)?;
    let (Some(now_in), Some(now_c)) = (now_in, now_c) else { return Ok(None) };
    if now_in.status != Status::Active
        || !first_version(&now_in)
        || now_c.status != Status::Active
        || now_c.root_id != candidate.root_id
        || now_c.version != candidate.version
        || is_recorded(reader, &recorded_pairs(reader)?, &now_in, &now_c)?
    {
        return Ok(None);
    }
    let conflict_id = ConflictId::random();
    let events: Vec<NewEvent> = vec![
        EventBody::PairClassified(PairClassified {
            incoming: incoming.memory_id,
            candidate: candidate.memory_id,
            method: class.method,
            relation: class.relation,
            gate: class.gate.clone(),
            reason: format!("{found_by}: {}", class.reason),
            scores: class.scores.clone(),
            thresholds: class.thresholds.clone(),
            model,
            outcome: PairOutcome::ConflictOpened,
        })
        .into(),
        EventBody::ConflictOpened(ConflictOpened {
            conflict_id,
            incoming: incoming.memory_id,
            candidates: vec![ConflictSide {
                memory_id: candidate.memory_id,
                root_id: candidate.root_id,
                version: candidate.version,
                reason: class.reason.clone(),
            }],
            kind: ConflictKind::Contradiction,
            needs_authority: incoming.authority.max(candidate.authority),
        })
        .into(),
    ];
    Ok(Some((conflict_id, events)))
}
