//! `recall`: BM25 over the active memories (the text index, `projector/src/text_index.rs`),
//! filtered by type and scope, with the conflict notice of docs/design.md §6. A question's terms
//! are weighted by how rare they are, its names weigh more, a memory holding the question's words
//! close together and in its order ranks higher, and a question about time prefers memories that
//! say when. With an embedder and vectors of its model, BM25 is fused with a cosine ranking of
//! vectors centred on the scope's mean by normalised score fusion (docs/quality.md has the
//! measurements that chose each). With a reranker, the first results of that ranking are
//! reordered by the model's relevance of each to the question.

use std::collections::HashMap;
use std::sync::Arc;

use memledger_projector::TextIndex;
use memledger_projector::text_index::{Scopes, analyze, analyze_in_order};
use memledger_schemas::*;
use serde::Serialize;

use crate::classify::lexical::analyse;
use crate::co_enrich;
use crate::error::{BadInput, EngineError};
use crate::models::embed::{cosine, mean_vector, minus};
use crate::models::{EmbedSide, Models};
use crate::reads::Reader;
use crate::validity::{self, ReadStatus, ScheduledChange};

/// The share of the cosine in the fused score: `(1 - w) · bm25 / best bm25 + w · (cos - lowest) /
/// (highest - lowest)`, both over the rankings read ([`RANKING_DEPTH`]). Chosen on LoCoMo among
/// 0.5–0.8 and against weighted reciprocal-rank fusion (docs/quality.md).
pub const COSINE_WEIGHT: f64 = 0.6;
/// A query term's BM25 score is multiplied by its inverse document frequency to this power, so
/// that the rare words a question is about outweigh its frame ("go", "like", "plan") more than
/// BM25 alone makes them.
pub const IDF_POWER: f32 = 0.5;
/// The further factor of a name's terms (a word written capitalised inside the question).
pub const NAME_WEIGHT: f32 = 2.0;
/// Two of the question's terms at most this many terms apart in it, found in a memory in the same
/// order at most this many terms apart, are a close pair (stop words take no place).
pub const PROXIMITY_WINDOW: usize = 3;
/// Each close pair multiplies the memory's BM25 by `1 +` this times the two terms' idf summed.
pub const PROXIMITY_WEIGHT: f32 = 0.04;
/// A question about time multiplies the score of a memory that says when (an effective time, or
/// a date, weekday, month, year or span in its text) by `1 +` this.
pub const TIME_BONUS: f64 = 0.5;
/// The most results a recall returns.
pub const MAX_LIMIT: usize = 100_000;

/// How deep each ranking is read before the close pairs, fusion and the time preference reorder
/// it, with an embedder or for a question about time (at least `limit`).
pub const RANKING_DEPTH: usize = 50;
/// How deep the BM25 ranking is read when only the close pairs reorder it (no embedder, not a
/// question about time; at least `limit`): a memory ranked below it gains too little from close
/// pairs to reach the first results (on LoCoMo any depth from 10 to 50 gives the same recall),
/// and each memory read costs a record read and an analysis.
pub const CLOSE_PAIRS_DEPTH: usize = 20;
/// The cosine below which a memory is not in the cosine ranking at all, so that a query that
/// matches nothing does not return arbitrary memories merely because they have vectors.
pub const RECALL_COSINE_MIN: f64 = 0.3;
/// From this many vectors in the type and scope on, the cosine ranking compares the query and the
/// memories centred on the memories' mean vector, so that what every memory of the scope shares
/// (its people, its register) stops filling the cosine; below it, a mean is mostly the few
/// memories themselves and the raw vectors are compared.
pub const CENTRE_MIN_VECTORS: usize = 32;

/// With a reranker, the first this many results are sent to it and reordered by its relevance
/// to the question; a larger `limit`'s further results follow them in the first ranking's order.
pub const RERANK_DEPTH: usize = 20;

/// Said with results when any of them is in a pending conflict with another active memory.
pub const CONFLICT_NOTICE: &str =
    "Some of these memories conflict with each other. Ask the user which is current instead of asserting either.";

/// Said after [`CONFLICT_NOTICE`] when a returned memory is an unconfirmed claim.
pub const UNCONFIRMED_NOTICE: &str = "Those marked unconfirmed are lower-authority claims against a higher-authority \
    memory returned before them: state the higher-authority one, and mention the claim only as unconfirmed.";

/// An unconfirmed claim ranked above the higher-authority memory it conflicts with moves to just
/// after it: a tie on score (or a newer agent's inference) never puts a guess before a person's
/// rule. The rest keeps its order.
fn confirmed_first(results: &mut Vec<RecallHit>) {
    let mut i = 0;
    while i < results.len() {
        let hit = &results[i];
        let above = hit.unconfirmed.then(|| {
            results
                .iter()
                .enumerate()
                .skip(i + 1)
                .filter(|(_, o)| hit.conflicts_with.contains(&o.memory_id) && o.authority > hit.authority)
                .map(|(k, _)| k)
                .max()
        });
        match above.flatten() {
            Some(k) => {
                let moved = results.remove(i);
                results.insert(k, moved);
            }
            None => i += 1,
        }
    }
}

/// One memory `recall` returns (docs/cli.md).
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RecallHit {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    /// Its version in its lineage (from 1).
    pub version: u32,
    pub text: String,
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    pub scope: String,
    /// The fact key it was saved with, if any (a LangGraph store's item key).
    pub fact_key: Option<String>,
    /// What the first ranking orders by: the weighted BM25 score times the close pairs' factor
    /// ([`PROXIMITY_WEIGHT`]) when it is BM25's, the fused score when it is fused with the
    /// cosine, times [`TIME_BONUS`] for a memory that says when asked when; comparable only
    /// within one answer. Reranked results are ordered by `rerank` instead.
    pub score: f32,
    /// The BM25 score (its terms weighted as the question's), when the text index matched this
    /// memory among the rankings read.
    pub bm25: Option<f32>,
    /// The cosine with the query (of the vectors as embedded, not centred), when this memory has
    /// a vector of the configured embedder.
    pub cosine: Option<f64>,
    /// The reranker's relevance of this memory to the question, when it reordered the results
    /// (the first [`RERANK_DEPTH`]); those results are ordered by it, not by `score`.
    pub rerank: Option<f64>,
    pub asserted_at: Timestamp,
    /// Active memories this one is in a pending conflict with.
    pub conflicts_with: Vec<MemoryId>,
    /// The authority it was saved with (docs/design.md §13).
    pub authority: Authority,
    /// An unconfirmed claim: it is in a pending conflict with a memory of higher authority (an
    /// agent's inference against a person's rule), which ranks before it; only that authority
    /// can settle it.
    pub unconfirmed: bool,
    /// `active`: true at the time asked about; `scheduled`: nothing of this belief is true then,
    /// and this version takes effect later.
    pub status: ReadStatus,
    pub valid_from: Timestamp,
    pub valid_to: Option<Timestamp>,
    /// When it stops being true unless renewed; null: never. A recall at a later time leaves
    /// it out.
    pub expires_at: Option<Timestamp>,
    /// The time to live its expiry was given as, in seconds (what a refresh renews it by).
    pub ttl_seconds: Option<u64>,
    /// Versions of this belief that take effect after the time asked about, soonest first.
    pub scheduled: Vec<ScheduledChange>,
    /// Active memories that each add, like this one, a detail of their own to one earlier
    /// version (linked `co_enriches`): returned beside it, as they hold together.
    pub co_enrichments: Vec<CoEnrichedMemory>,
}

/// A co-enrichment beside a recall hit.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CoEnrichedMemory {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub text: String,
}

/// What `recall` answers.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RecallResult {
    /// Best first: score, then newest, then memory id; the reranked ones by `rerank`, ahead of
    /// the rest.
    pub results: Vec<RecallHit>,
    /// [`CONFLICT_NOTICE`] when a returned memory has a pending conflict, else null.
    pub notice: Option<String>,
    /// The rankings that contributed: [`RANKING_BM25`] or [`RANKING_FUSED`], or
    /// [`RANKING_BM25_RERANKED`] or [`RANKING_FUSED_RERANKED`] when a reranker reordered the
    /// first results.
    pub ranking: std::borrow::Cow<'static, str>,
    /// Why the cosine ranking was not used although an embedder is configured (the query could
    /// not be embedded), else null.
    pub embedding_error: Option<String>,
    /// Why the results were not reranked although a reranker is configured (it failed or
    /// answered nonsense: the first ranking stands), else null.
    pub rerank_error: Option<String>,
}

/// `ranking` when only BM25 ranked the results.
pub const RANKING_BM25: &str = "bm25";
/// `ranking` when BM25 and the cosine ranking were fused.
pub const RANKING_FUSED: &str = "bm25+cosine";
/// `ranking` when the reranker reordered BM25's first results.
pub const RANKING_BM25_RERANKED: &str = "bm25+rerank";
/// `ranking` when the reranker reordered the fused ranking's first results.
pub const RANKING_FUSED_RERANKED: &str = "bm25+cosine+rerank";

/// The cosine ranking of one query: best first, at most the ranking depth, each with the cosine
/// it is ranked by (of the centred vectors from [`CENTRE_MIN_VECTORS`] on).
#[derive(Default)]
struct CosineRanking {
    ranked: Vec<(MemoryId, f64)>,
    /// The cosine (not centred) of every memory of the type and scope that has a vector.
    all: HashMap<MemoryId, f64>,
    error: Option<String>,
}

/// What `recall` is asked: some words, and optionally a memory type and the scopes to look in
/// (one the caller named, or those it may read).
#[derive(Clone, Copy)]
pub(crate) struct Query<'a> {
    pub(crate) text: &'a str,
    pub(crate) memory_type: Option<MemoryType>,
    pub(crate) scopes: Scopes<'a>,
    /// The valid time the answer is about (engine/src/validity.rs).
    pub(crate) valid_at: Timestamp,
}

impl Query<'_> {
    /// Whether a memory of this type and scope is one the query asks about.
    fn admits(&self, memory_type: MemoryType, scope: &str) -> bool {
        self.memory_type.is_none_or(|t| memory_type == t) && self.scopes.covers(scope)
    }
}

/// Refuse what no recall can answer: an empty query, a limit of 0 or above [`MAX_LIMIT`].
pub(crate) fn check(query: &Query<'_>, limit: usize) -> Result<(), EngineError> {
    if query.text.trim().is_empty() {
        return Err(BadInput::EmptyQuery.into());
    }
    if limit == 0 {
        return Err(BadInput::ZeroLimit.into());
    }
    // The ranking reserves room for `limit` hits: a limit past any store's size is refused
    // rather than allocated.
    if limit > MAX_LIMIT {
        return Err(BadInput::LimitTooLarge(MAX_LIMIT).into());
    }
    Ok(())
}

/// What a question is about, read from its text once: its analysed terms, each weighted, its
/// pairs of close terms, and whether it asks when.
struct Question {
    terms: Vec<(String, f32)>,
    /// Pairs of terms at most [`PROXIMITY_WINDOW`] apart in the question, first to last, each
    /// with the two terms' idf summed.
    close_pairs: Vec<(String, String, f32)>,
    about_time: bool,
}

impl Question {
    fn of(text: &TextIndex, query: &str) -> Result<Question, EngineError> {
        let names = name_terms(query);
        let mut idf = HashMap::new();
        let mut terms = Vec::new();
        for term in analyze(query) {
            let rarity = text.idf(&term)?.max(0.0);
            idf.insert(term.clone(), rarity);
            let mut weight = rarity.powf(IDF_POWER);
            if names.contains(&term) {
                weight *= NAME_WEIGHT;
            }
            terms.push((term, weight));
        }
        let close_pairs = close_pairs(&analyze_in_order(query), |term| idf.get(term).copied().unwrap_or(0.0));
        Ok(Question { terms, close_pairs, about_time: asks_when(query) })
    }

    /// What a memory's BM25 is multiplied by for the question's close pairs it holds: `1 +`
    /// [`PROXIMITY_WEIGHT`] times the idf of every close pair found in `text` in the question's
    /// order, at most [`PROXIMITY_WINDOW`] terms apart: of two memories with the question's words,
    /// one that keeps them together as the question does ("career fair") ranks above one that has
    /// them apart ("the fair … about his career").
    fn proximity(&self, text: &str) -> f32 {
        if self.close_pairs.is_empty() {
            return 1.0;
        }
        let mut positions: HashMap<String, Vec<usize>> = HashMap::new();
        for (at, term) in analyze_in_order(text).into_iter().enumerate() {
            positions.entry(term).or_default().push(at);
        }
        let close = |first: &str, second: &str| -> bool {
            let (Some(firsts), Some(seconds)) = (positions.get(first), positions.get(second)) else { return false };
            firsts.iter().any(|a| seconds.iter().any(|b| *b > *a && *b - *a <= PROXIMITY_WINDOW))
        };
        let found: f32 = self.close_pairs.iter().filter(|(a, b, _)| close(a, b)).map(|(_, _, idf)| idf).sum();
        1.0 + PROXIMITY_WEIGHT * found
    }
}

/// The pairs of terms of `sequence` (a question's, in order) at most [`PROXIMITY_WINDOW`] apart,
/// first to last, each with the two terms' `idf` summed.
fn close_pairs(sequence: &[String], idf: impl Fn(&str) -> f32) -> Vec<(String, String, f32)> {
    let mut pairs = Vec::new();
    for (i, first) in sequence.iter().enumerate() {
        for second in sequence.iter().skip(i + 1).take(PROXIMITY_WINDOW) {
            pairs.push((first.clone(), second.clone(), idf(first) + idf(second)));
        }
    }
    pairs
}

/// One memory of the BM25 ranking: its BM25 and what it is ranked by (BM25 times the close
/// pairs' factor).
struct LexicalHit {
    memory_id: MemoryId,
    bm25: f32,
    score: f64,
}

/// The analysed terms of the names in `query`: words written capitalised that do not begin a
/// sentence (and are not "I").
fn name_terms(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut sentence_start = true;
    for word in query.split_whitespace() {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        if !sentence_start && bare != "I" && bare.chars().next().is_some_and(char::is_uppercase) {
            out.extend(analyze(bare));
        }
        sentence_start = word.ends_with(['.', '?', '!', ':']) || (sentence_start && bare.is_empty());
    }
    out
}

/// Whether `query` asks when something happened or how long it lasted: it opens with "when",
/// "how long", "since when", "what/which year, month, week, day, date or time", or "how many
/// years, months, weeks or days" (after an optional "in", "on", "at" or "by").
fn asks_when(query: &str) -> bool {
    const UNITS: [&str; 8] = ["year", "years", "month", "months", "week", "weeks", "day", "days"];
    let lower = query.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).take(4).collect();
    let words = match words.first() {
        Some(&("in" | "on" | "at" | "by")) => &words[1..],
        _ => &words[..],
    };
    match words {
        ["when", ..] | ["since", "when", ..] | ["how", "long", ..] => true,
        ["what" | "which", next, ..] => UNITS.contains(next) || matches!(*next, "date" | "time"),
        ["how", "many", next, ..] => UNITS.contains(next),
        _ => false,
    }
}

/// The active memories that best match `query` (BM25 over the analyzer's terms, OR-ed: any text
/// is a valid query), at most `limit`; `text` must be current with the belief view, and the
/// query [`check`]ed.
pub(crate) fn recall(
    text: &TextIndex,
    reader: Reader<'_>,
    models: &Models,
    query: &Query<'_>,
    limit: usize,
) -> Result<RecallResult, EngineError> {
    // Recall's span and its stages' (docs/adr/0039-traces.md): counts and the ranking, never the
    // query or a memory's text.
    let span = tracing::info_span!(
        "memledger.recall",
        memledger.limit = limit as i64,
        memledger.results = tracing::field::Empty,
        memledger.ranking = tracing::field::Empty,
    );
    let _entered = span.enter();
    let question = Question::of(text, query.text)?;
    // The results the first ranking chooses: those the reranker reorders too, with one.
    let chosen = if models.reranker().is_some() { limit.max(RERANK_DEPTH) } else { limit };
    let depth = if models.embedder().is_some() || question.about_time { RANKING_DEPTH } else { CLOSE_PAIRS_DEPTH };
    let depth = chosen.max(depth);
    let mut bm25 = Vec::new();
    // The records read for the close pairs, kept for the results.
    let mut records = HashMap::new();
    let lexical = tracing::info_span!("memledger.recall.lexical", memledger.hits = tracing::field::Empty);
    lexical.in_scope(|| {
        for hit in text.search_weighted(&question.terms, query.memory_type, query.scopes, depth)? {
            let record = reader.record(hit.memory_id)?;
            let proximity = question.proximity(&record.text);
            bm25.push(LexicalHit { memory_id: hit.memory_id, bm25: hit.score, score: (hit.score * proximity) as f64 });
            records.insert(hit.memory_id, record);
        }
        Ok::<_, EngineError>(())
    })?;
    lexical.record("memledger.hits", bm25.len() as i64);
    let cosines = if models.embedder().is_some() {
        tracing::info_span!("memledger.recall.cosine")
            .in_scope(|| cosine_ranking(text, reader, models, query, depth))?
    } else {
        cosine_ranking(text, reader, models, query, depth)?
    };
    let fused = !cosines.ranked.is_empty();
    // (memory id, ranking score, BM25, cosine).
    let mut scored: Vec<(MemoryId, f64, Option<f32>, Option<f64>)> = if !fused {
        bm25.iter().map(|h| (h.memory_id, h.score, Some(h.bm25), None)).collect()
    } else {
        fuse(&bm25, &cosines)
    };
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    // What the time preference can multiply a score by at most: a memory scored below the
    // limit-th result by more than that cannot enter the results.
    let most = if question.about_time { 1.0 + TIME_BONUS } else { 1.0 };
    let mut results: Vec<RecallHit> = Vec::new();
    let mut beliefs = std::collections::HashSet::new();
    for (id, mut score, bm25, cosine) in scored {
        if results.len() >= chosen && ((score * most) as f32) < limit_th_best(&results, chosen) {
            break;
        }
        let r = match records.remove(&id) {
            Some(r) => r,
            None => reader.record(id)?,
        };
        let lineage = reader.beliefs().lineage(r.root_id)?;
        if validity::head(&lineage).map(|v| v.memory_id) != Some(id)
            || r.status != Status::Active
            || !query.admits(r.memory_type, &r.scope)
        {
            // The index is committed with the views and the cosine ranking reads only active
            // memories of the scope and type; this would be a bug, never an answer.
            continue;
        }
        if !beliefs.insert(r.root_id) {
            continue;
        }
        // The belief as it stands at the time asked about, its scheduled changes beside it.
        let authority = r.authority;
        let Some((m, scheduled)) = validity::in_time(reader, &lineage, r, query.valid_at)? else { continue };
        let mut unconfirmed = false;
        for other in &m.conflicts_with {
            if reader.beliefs().get(*other)?.is_some_and(|o| o.status == Status::Active && o.authority > authority) {
                unconfirmed = true;
            }
        }
        if question.about_time && (m.effective_at.is_some() || analyse(&m.text).states_time()) {
            score *= 1.0 + TIME_BONUS;
        }
        results.push(RecallHit {
            status: m.status,
            valid_from: m.valid_from,
            valid_to: m.valid_to,
            expires_at: m.expires_at,
            ttl_seconds: m.ttl_seconds,
            scheduled,
            memory_id: m.memory_id,
            root_id: m.root_id,
            version: m.version,
            text: m.text,
            memory_type: m.memory_type,
            scope: m.scope,
            fact_key: m.fact_key,
            score: score as f32,
            bm25,
            cosine,
            rerank: None,
            asserted_at: m.asserted_at,
            conflicts_with: m.conflicts_with,
            authority,
            unconfirmed,
            co_enrichments: Vec::new(),
        });
    }
    // Best first: score, then newest, then the smaller id (the text index's own order for BM25).
    results.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then(b.asserted_at.cmp(&a.asserted_at)).then(a.memory_id.cmp(&b.memory_id))
    });
    confirmed_first(&mut results);
    results.truncate(chosen);
    let first = results.len().min(RERANK_DEPTH);
    let rerank_error = if models.reranker().is_some() {
        tracing::info_span!("memledger.recall.rerank", memledger.reranked = first as i64)
            .in_scope(|| rerank(models, query.text, &mut results[..first]).err())
    } else {
        None
    };
    let reranked = results.first().is_some_and(|r| r.rerank.is_some());
    results.truncate(limit);
    for hit in &mut results {
        hit.co_enrichments = co_enrich::siblings(reader, hit.memory_id)?
            .into_iter()
            .map(|r| CoEnrichedMemory { memory_id: r.memory_id, root_id: r.root_id, text: r.text })
            .collect();
    }
    confirmed_first(&mut results);
    let notice = results.iter().any(|r| !r.conflicts_with.is_empty()).then(|| {
        if results.iter().any(|r| r.unconfirmed) {
            format!("{CONFLICT_NOTICE} {UNCONFIRMED_NOTICE}")
        } else {
            CONFLICT_NOTICE.to_string()
        }
    });
    let ranking = match (fused, reranked) {
        (false, false) => RANKING_BM25,
        (true, false) => RANKING_FUSED,
        (false, true) => RANKING_BM25_RERANKED,
        (true, true) => RANKING_FUSED_RERANKED,
    };
    span.record("memledger.results", results.len() as i64);
    span.record("memledger.ranking", ranking);
    Ok(RecallResult { results, notice, ranking: ranking.into(), embedding_error: cosines.error, rerank_error })
}

/// With a reranker, `hits` reordered by its relevance of each to `question`, best first (equal
/// relevances keep their order), each hit's `rerank` set. Without one nothing changes; when it
/// fails, nothing changes and the error says why.
fn rerank(models: &Models, question: &str, hits: &mut [RecallHit]) -> Result<(), String> {
    let Some(endpoint) = models.reranker() else { return Ok(()) };
    let texts: Vec<String> = hits.iter().map(|h| h.text.clone()).collect();
    let relevances = match models.rerank(question, &texts) {
        None => return Ok(()),
        Some(Ok(r)) => r,
        Some(Err(e)) => return Err(format!("reranker {} failed: {e}; not reranked", endpoint.model)),
    };
    for (hit, relevance) in hits.iter_mut().zip(relevances) {
        hit.rerank = Some(relevance);
    }
    hits.sort_by(|a, b| b.rerank.unwrap_or(f64::MIN).total_cmp(&a.rerank.unwrap_or(f64::MIN)));
    Ok(())
}

/// The `limit`-th best score of `results` (at least `limit` of them).
fn limit_th_best(results: &[RecallHit], limit: usize) -> f32 {
    let mut scores: Vec<f32> = results.iter().map(|r| r.score).collect();
    scores.sort_by(|a, b| b.total_cmp(a));
    scores[limit - 1]
}

/// A lexical score's share of a fused score: over the best of its ranking, from 0 to
/// 1 − [`COSINE_WEIGHT`]. A save's `related` is ranked by the same fusion.
pub(crate) fn lexical_share(score: f64, best: f64) -> f64 {
    (1.0 - COSINE_WEIGHT) * score / best
}

/// A cosine's share of a fused score: stretched from the lowest cosine of its ranking to the
/// highest, from 0 to [`COSINE_WEIGHT`] (all of it when they are one).
pub(crate) fn cosine_share(cosine: f64, low: f64, high: f64) -> f64 {
    COSINE_WEIGHT * if high > low { (cosine - low) / (high - low) } else { 1.0 }
}

/// Normalised score fusion of the BM25 hits and the cosine ranking: per memory, `(id, fused
/// score, BM25, cosine)`. The BM25 ranking's score is divided by its best of the answer, the
/// cosine stretched from the lowest to the highest cosine of the ranking, so each contributes
/// from 0 to its weight ([`COSINE_WEIGHT`]); a memory only one ranking found gets nothing from
/// the other.
fn fuse(bm25: &[LexicalHit], cosines: &CosineRanking) -> Vec<(MemoryId, f64, Option<f32>, Option<f64>)> {
    let best = bm25.iter().map(|h| h.score).fold(f64::MIN_POSITIVE, f64::max);
    let (high, low) = (cosines.ranked.first().map_or(1.0, |c| c.1), cosines.ranked.last().map_or(0.0, |c| c.1));
    let mut fused: HashMap<MemoryId, (f64, Option<f32>)> = HashMap::new();
    for hit in bm25 {
        let e = fused.entry(hit.memory_id).or_default();
        e.0 += lexical_share(hit.score, best);
        e.1 = Some(hit.bm25);
    }
    for (id, c) in &cosines.ranked {
        fused.entry(*id).or_default().0 += cosine_share(*c, low, high);
    }
    fused.into_iter().map(|(id, (s, b))| (id, s, b, cosines.all.get(&id).copied())).collect()
}

/// The active memories of the type and scope that have a vector of the configured embedding
/// model, by cosine with `query` (at least [`RECALL_COSINE_MIN`]; ranked by the cosine of the
/// vectors centred on their mean from [`CENTRE_MIN_VECTORS`] on), best `depth`. The memories are
/// the text index's (it holds the active ones), their vectors held in memory after the first
/// read (`HeldVectors`). The query is embedded once, and only when such vectors exist; it is not
/// cached (recall writes nothing). Without an embedder, or when the embedder fails: empty (the
/// error is kept).
fn cosine_ranking(
    text: &TextIndex,
    reader: Reader<'_>,
    models: &Models,
    query: &Query<'_>,
    depth: usize,
) -> Result<CosineRanking, EngineError> {
    let (Some(endpoint), Some(space)) = (models.embedder(), models.embed_space()) else {
        return Ok(CosineRanking::default());
    };
    let model = endpoint.model.clone();
    let admitted = text.admitted(query.memory_type, query.scopes)?;
    let ids: Vec<MemoryId> = admitted.iter().map(|h| h.memory_id).collect();
    // Only vectors of the configured model and document prompt: both are in the cache key.
    let hash_of = |id| Ok(reader.record(id)?.content_hash);
    let found = models.held_vectors().get(reader.store(), hash_of, &space, &ids, text.num_docs() as usize)?;
    let vectors: Vec<(MemoryId, Timestamp, Arc<[f32]>)> =
        admitted.iter().zip(found).filter_map(|(h, v)| Some((h.memory_id, h.asserted_at, v?))).collect();
    if vectors.is_empty() {
        return Ok(CosineRanking::default());
    }
    let q = match models.embed_texts(&[query.text.to_string()], EmbedSide::Query) {
        Some(Ok(mut vs)) if vs.len() == 1 => vs.remove(0),
        Some(Ok(_)) => {
            let error = format!("embedder {model} answered the wrong number of vectors; BM25 only");
            return Ok(CosineRanking { error: Some(error), ..CosineRanking::default() });
        }
        Some(Err(e)) => {
            let error = format!("embedder {model} failed: {e}; BM25 only");
            return Ok(CosineRanking { error: Some(error), ..CosineRanking::default() });
        }
        None => return Ok(CosineRanking::default()),
    };
    // The query centred, and the mean to centre each memory's vector on.
    let centring = (vectors.len() >= CENTRE_MIN_VECTORS).then(|| {
        let mean = mean_vector(vectors.iter().map(|v| &*v.2), q.len());
        (minus(&q, &mean), mean)
    });
    let mut centred = Vec::with_capacity(q.len());
    let mut all = HashMap::with_capacity(vectors.len());
    let mut ranked: Vec<(f64, Timestamp, MemoryId)> = Vec::new();
    for (id, at, v) in vectors {
        let c = cosine(&q, &v);
        all.insert(id, c);
        if c >= RECALL_COSINE_MIN {
            let rank_by = match &centring {
                Some((query, mean)) if v.len() == mean.len() => {
                    centred.clear();
                    centred.extend(v.iter().zip(mean).map(|(x, y)| x - y));
                    cosine(query, &centred)
                }
                _ => c,
            };
            ranked.push((rank_by, at, id));
        }
    }
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    ranked.truncate(depth);
    Ok(CosineRanking { ranked: ranked.into_iter().map(|(c, _, id)| (id, c)).collect(), all, error: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_capitalised_words_inside_a_sentence() {
        assert_eq!(name_terms("When did Caroline go to the LGBTQ support group?"), vec!["carolin", "lgbtq"]);
        assert_eq!(name_terms("What did I tell Ann? Bob said no."), vec!["ann"], "sentence starts and I are not names");
        assert!(name_terms("which service deploys on tuesday").is_empty());
    }

    #[test]
    fn close_pairs_count_in_the_questions_order_within_the_window() {
        let question = |q: &str| Question {
            terms: Vec::new(),
            close_pairs: close_pairs(&analyze_in_order(q), |_| 1.0),
            about_time: false,
        };
        let q = question("Which event did John volunteer at: the career fair?");
        // Stop words take no place: "career fair" and "fair at the career" differ by order only.
        let together = q.proximity("John volunteered at a career fair at a local school.");
        let apart = q.proximity("At the school fair John talked to volunteers about his career.");
        let reversed = q.proximity("The fair for a career.");
        assert!(together > apart && together > reversed, "{together} {apart} {reversed}");
        assert_eq!(q.proximity("Nothing of the question here."), 1.0);
        // Each pair found adds its terms' idf (1 + 1 here) times the weight.
        assert_eq!(question("career fair").proximity("a career fair"), 1.0 + 2.0 * PROXIMITY_WEIGHT);
        assert_eq!(
            question("career, and then lots of other things before a fair").proximity("career fair"),
            1.0,
            "apart in the question"
        );
        assert_eq!(question("fair").proximity("fair fair"), 1.0, "one term is no pair");
    }

    #[test]
    fn the_mean_leaves_out_vectors_of_another_length() {
        let vectors: Vec<Vec<f32>> = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![5.0, 5.0, 5.0]];
        assert_eq!(mean_vector(vectors.iter().map(|v| &v[..]), 2), vec![0.5, 0.5]);
        assert_eq!(mean_vector(std::iter::empty(), 2), vec![0.0, 0.0]);
        assert_eq!(minus(&[1.0, 2.0], &[0.5, 0.5]), vec![0.5, 1.5]);
    }

    #[test]
    fn questions_about_time() {
        for q in [
            "When did Melanie paint a sunrise?",
            "How long has Caroline had her current group of friends for?",
            "In what year did John move?",
            "Which month is the launch?",
            "how many weeks did the migration take",
            "Since when is billing on v2?",
        ] {
            assert!(asks_when(q), "{q}");
        }
        for q in ["What did Caroline research?", "Where did Caroline move from?", "what is the time zone of the db"] {
            assert!(!asks_when(q), "{q}");
        }
    }
}
