//! `recall`: BM25 over the active memories (the text index, `projector/src/text_index.rs`),
//! filtered by type and scope, with the conflict notice of docs/design.md §6. With an embedder and
//! vectors of its model, BM25 is fused with a cosine ranking by reciprocal-rank fusion.

use std::collections::HashMap;

use memledger_projector::TextIndex;
use memledger_projector::beliefs;
use memledger_schemas::*;
use serde::Serialize;

use crate::error::{BadInput, EngineError};
use crate::models::Models;
use crate::models::embed::{VectorCache, cosine};
use crate::reads::Reader;
use crate::validity::{self, ReadStatus, ScheduledChange};

/// The constant of reciprocal-rank fusion: a hit at rank `r` (from 1) of a ranking adds
/// `1 / (RRF_K + r)` (Cormack, Clarke and Büttcher 2009).
pub const RRF_K: f64 = 60.0;
/// The most results a recall returns.
pub const MAX_LIMIT: usize = 100_000;

/// How deep each ranking is read before fusion (at least `limit`).
pub const FUSION_DEPTH: usize = 50;
/// The cosine below which a memory is not in the cosine ranking at all, so that a query that
/// matches nothing does not return arbitrary memories merely because they have vectors.
pub const RECALL_COSINE_MIN: f64 = 0.3;

/// Said with results when any of them is in a pending conflict with another active memory.
pub const CONFLICT_NOTICE: &str =
    "Some of these memories conflict with each other. Ask the user which is current instead of asserting either.";

/// One memory `recall` returns (docs/cli.md).
#[derive(Clone, Debug, Serialize)]
pub struct RecallHit {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub text: String,
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    pub scope: String,
    /// What the results are ordered by: BM25 when `ranking` is `bm25`, the fused
    /// reciprocal-rank score when it is `bm25+cosine`; comparable only within one answer.
    pub score: f32,
    /// The BM25 score, when the text index matched this memory.
    pub bm25: Option<f32>,
    /// The cosine with the query, when this memory was in the cosine ranking.
    pub cosine: Option<f64>,
    pub asserted_at: Timestamp,
    /// Active memories this one is in a pending conflict with.
    pub conflicts_with: Vec<MemoryId>,
    /// `active`: true at the time asked about; `scheduled`: nothing of this belief is true then,
    /// and this version takes effect later.
    pub status: ReadStatus,
    pub valid_from: Timestamp,
    pub valid_to: Option<Timestamp>,
    /// Versions of this belief that take effect after the time asked about, soonest first.
    pub scheduled: Vec<ScheduledChange>,
}

/// What `recall` answers.
#[derive(Clone, Debug, Serialize)]
pub struct RecallResult {
    /// Best first: score, then newest, then memory id.
    pub results: Vec<RecallHit>,
    /// [`CONFLICT_NOTICE`] when a returned memory has a pending conflict, else null.
    pub notice: Option<String>,
    /// The rankings that contributed: [`RANKING_BM25`] or [`RANKING_FUSED`].
    pub ranking: &'static str,
    /// Why the cosine ranking was not used although an embedder is configured (the query could
    /// not be embedded), else null.
    pub embedding_error: Option<String>,
}

/// `ranking` when only BM25 ranked the results.
pub const RANKING_BM25: &str = "bm25";
/// `ranking` when BM25 and the cosine ranking were fused.
pub const RANKING_FUSED: &str = "bm25+cosine";

/// The cosine ranking of one query: best first, at most the fusion depth.
#[derive(Default)]
struct CosineRanking {
    ranked: Vec<(MemoryId, f64)>,
    error: Option<String>,
}

/// What `recall` is asked: some words, and optionally a memory type and a scope.
#[derive(Clone, Copy)]
pub(crate) struct Query<'a> {
    pub(crate) text: &'a str,
    pub(crate) memory_type: Option<MemoryType>,
    pub(crate) scope: Option<&'a str>,
    /// The valid time the answer is about (engine/src/validity.rs).
    pub(crate) valid_at: Timestamp,
}

impl Query<'_> {
    /// Whether a memory of this type and scope is one the query asks about.
    fn admits(&self, memory_type: MemoryType, scope: &str) -> bool {
        self.memory_type.is_none_or(|t| memory_type == t) && self.scope.is_none_or(|s| scope == s)
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
    let depth = if models.embedder().is_some() { limit.max(FUSION_DEPTH) } else { limit };
    let bm25 = text.search(query.text, query.memory_type, query.scope, depth)?;
    let cosines = cosine_ranking(reader, models, query, depth)?;
    let ranking = if cosines.ranked.is_empty() { RANKING_BM25 } else { RANKING_FUSED };
    // (memory id, ranking score, BM25, cosine); BM25 alone keeps the text index's order.
    let scored: Vec<(MemoryId, f64, Option<f32>, Option<f64>)> = if ranking == RANKING_BM25 {
        bm25.iter().take(limit).map(|h| (h.memory_id, h.score as f64, Some(h.score), None)).collect()
    } else {
        let mut fused: HashMap<MemoryId, (f64, Option<f32>, Option<f64>)> = HashMap::new();
        for (rank, hit) in bm25.iter().enumerate() {
            let e = fused.entry(hit.memory_id).or_default();
            e.0 += 1.0 / (RRF_K + (rank + 1) as f64);
            e.1 = Some(hit.score);
        }
        for (rank, (id, c)) in cosines.ranked.iter().enumerate() {
            let e = fused.entry(*id).or_default();
            e.0 += 1.0 / (RRF_K + (rank + 1) as f64);
            e.2 = Some(*c);
        }
        fused.into_iter().map(|(id, (s, b, c))| (id, s, b, c)).collect()
    };
    let mut results = Vec::new();
    let mut beliefs = std::collections::HashSet::new();
    for (id, score, bm25, cosine) in scored {
        let m = reader.show(id, validity::END_OF_TIME)?;
        if m.status != ReadStatus::Active || m.memory_id != id || !query.admits(m.memory_type, &m.scope) {
            // The index is committed with the views and the cosine ranking reads only active
            // memories of the scope and type; this would be a bug, never an answer.
            continue;
        }
        // The belief as it stands at the time asked about, its scheduled changes beside it.
        let Some((m, scheduled)) = validity::in_time(reader, m, query.valid_at)? else { continue };
        if !beliefs.insert(m.root_id) {
            continue;
        }
        results.push(RecallHit {
            status: m.status,
            valid_from: m.valid_from,
            valid_to: m.valid_to,
            scheduled,
            memory_id: m.memory_id,
            root_id: m.root_id,
            text: m.text,
            memory_type: m.memory_type,
            scope: m.scope,
            score: score as f32,
            bm25,
            cosine,
            asserted_at: m.asserted_at,
            conflicts_with: m.conflicts_with,
        });
    }
    if ranking == RANKING_FUSED {
        // Best first: fused score, then newest, then the smaller id.
        results.sort_by(|a, b| {
            b.score.total_cmp(&a.score).then(b.asserted_at.cmp(&a.asserted_at)).then(a.memory_id.cmp(&b.memory_id))
        });
        results.truncate(limit);
    }
    let notice = results.iter().any(|r| !r.conflicts_with.is_empty()).then(|| CONFLICT_NOTICE.to_string());
    Ok(RecallResult { results, notice, ranking, embedding_error: cosines.error })
}

/// The active memories of the type and scope that have a vector of the configured embedding
/// model, by cosine with `query` (at least [`RECALL_COSINE_MIN`]), best `depth`. The query
/// is embedded once, and only when such vectors exist; it is not cached (recall writes
/// nothing). Without an embedder, or when the embedder fails: empty (the error is kept).
fn cosine_ranking(
    reader: Reader<'_>,
    models: &Models,
    query: &Query<'_>,
    depth: usize,
) -> Result<CosineRanking, EngineError> {
    let Some(endpoint) = models.embedder() else { return Ok(CosineRanking::default()) };
    let model = endpoint.model.clone();
    let cache = VectorCache::new(reader.store());
    let mut vectors = Vec::new();
    let keep = |r: &beliefs::MemoryRecord| r.status == Status::Active && query.admits(r.memory_type, &r.scope);
    for r in reader.beliefs().scan(keep, usize::MAX)? {
        // Only vectors of the configured model: the model is part of the cache key.
        if let Some(v) = cache.get(&model, &r.content_hash)? {
            vectors.push((r.memory_id, r.asserted_at, v));
        }
    }
    if vectors.is_empty() {
        return Ok(CosineRanking::default());
    }
    let q = match models.embed_texts(&[query.text.to_string()]) {
        Some(Ok(mut vs)) if vs.len() == 1 => vs.remove(0),
        Some(Ok(_)) => {
            let error = format!("embedder {model} answered the wrong number of vectors; BM25 only");
            return Ok(CosineRanking { ranked: Vec::new(), error: Some(error) });
        }
        Some(Err(e)) => {
            let error = format!("embedder {model} failed: {e}; BM25 only");
            return Ok(CosineRanking { ranked: Vec::new(), error: Some(error) });
        }
        None => return Ok(CosineRanking::default()),
    };
    let mut ranked: Vec<(f64, Timestamp, MemoryId)> = vectors
        .into_iter()
        .map(|(id, at, v)| (cosine(&q, &v), at, id))
        .filter(|(c, _, _)| *c >= RECALL_COSINE_MIN)
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    ranked.truncate(depth);
    Ok(CosineRanking { ranked: ranked.into_iter().map(|(c, _, id)| (id, c)).collect(), error: None })
}
