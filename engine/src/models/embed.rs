//! Embeddings: an extra candidate source for the save pipeline (cosine ≥ 0.5, fused with the term
//! candidates), and the vector cache.
//!
//! Vectors are cached by (vector space, content hash) in a RocksDB column family of their own,
//! `embeddings` ([ADR 0004](../../../docs/adr/0004-models.md)). It is not a projection: `rebuild`
//! never clears it and replay never calls the embedder. The vector space is the model and its
//! document prompt (`Models::embed_space`, `models::prompts`): a vector is only ever compared with
//! vectors of the same space, so a changed embedding model or document prompt finds none of the
//! old vectors; the store says so at open and `Memledger::embed_missing` re-embeds.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use memledger_ledger::store::{Batch, Store};
use memledger_projector::beliefs::MemoryRecord;
use memledger_schemas::chain::{Hash, content_hash};
use memledger_schemas::{MemoryId, Method, Relation, Status};
use serde::Serialize;

use super::{EmbedSide, Models};
use crate::classify::Classification;
use crate::error::{BadInput, EngineError, ModelError};
use crate::input::ValidSave;
use crate::reads::Reader;
use crate::recall::CENTRE_MIN_VECTORS;

/// How many more memories than a save compares are read closer, by the centred cosine, from
/// those nearest by the raw one.
const RERANK_POOL: usize = 10;

/// The column family of the vector cache.
pub const EMBED_TABLE: &str = "embeddings";
/// The cosine at or above which a stored memory is a candidate (memloom's threshold).
pub const COSINE_MIN: f64 = 0.5;
const MODEL_KEY: &[u8] = b"model";
/// How many times vectors were forgotten (a little-endian u64): what tells [`HeldVectors`] that
/// the vectors it holds may include forgotten ones.
const FORGOTTEN_KEY: &[u8] = b"forgotten";

fn space_digest(space: &str) -> [u8; 16] {
    let h = blake3::hash(space.as_bytes());
    h.as_bytes()[..16].try_into().unwrap_or_default()
}

fn vkey(space: &str, hash: &Hash) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + 16 + 32);
    k.push(b'v');
    k.extend_from_slice(&space_digest(space));
    k.extend_from_slice(&hash.0);
    k
}

fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode(b: &[u8]) -> Option<Vec<f32>> {
    (b.len().is_multiple_of(4) && !b.is_empty())
        .then(|| b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Cosine similarity; 0 for vectors of different lengths or no length.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (*x as f64, *y as f64);
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { (dot / (na.sqrt() * nb.sqrt())).clamp(-1.0, 1.0) }
}

/// The vector cache in the store. A `space` is what `Models::embed_space` names: the model, and
/// the document prompt when there is one.
pub struct VectorCache<'a> {
    store: &'a Store,
}

impl<'a> VectorCache<'a> {
    pub fn new(store: &'a Store) -> Self {
        VectorCache { store }
    }

    pub fn get(&self, space: &str, hash: &Hash) -> Result<Option<Vec<f32>>, EngineError> {
        Ok(self.store.get(EMBED_TABLE, &vkey(space, hash))?.and_then(|b| decode(&b)))
    }

    /// Store vectors and mark `space` as the store's embedding space.
    pub fn put_all(&self, space: &str, items: &[(Hash, Vec<f32>)]) -> Result<(), EngineError> {
        let mut batch = Batch::default();
        for (hash, v) in items {
            batch.put(EMBED_TABLE, vkey(space, hash), encode(v));
        }
        batch.put(EMBED_TABLE, MODEL_KEY, space.as_bytes());
        // A cache: lost on a crash it is fetched again, so no sync.
        Ok(self.store.write(batch, false)?)
    }

    /// The space (model and document prompt) the cached vectors were last made in.
    pub fn recorded_space(&self) -> Result<Option<String>, EngineError> {
        Ok(self.store.get(EMBED_TABLE, MODEL_KEY)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
    }
}

/// How many times [`forget_vectors`] forgot any.
fn forgotten(store: &Store) -> Result<u64, EngineError> {
    let count = store.get(EMBED_TABLE, FORGOTTEN_KEY)?;
    Ok(count.and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok()).map_or(0, u64::from_le_bytes))
}

/// Delete the cached vectors of these contents, whatever model made them (an erasure), synced;
/// counted, so that vectors held in memory ([`HeldVectors`]) are dropped at their next use.
pub(crate) fn forget_vectors(store: &Store, hashes: &[Hash]) -> Result<(), EngineError> {
    let mut batch = Batch::default();
    for item in store.scan_from(EMBED_TABLE, &[])? {
        let (key, _) = item?;
        if key.len() >= 32 && hashes.iter().any(|h| key.ends_with(&h.0)) {
            batch.delete(EMBED_TABLE, key);
        }
    }
    if !batch.is_empty() {
        batch.put(EMBED_TABLE, FORGOTTEN_KEY, (forgotten(store)? + 1).to_le_bytes());
        store.write(batch, true)?;
    }
    Ok(())
}

/// The cached vectors recall has compared, held in memory by memory id so that a recall reads
/// from the store only the vectors it has not seen (a memory's content never changes, and a vector
/// of one space is made once). Everything held is dropped when the space changes, when any vector
/// was forgotten since (an erasure must not outlive itself in memory), and when it holds more
/// than twice the memories there are (retired ones accumulate).
#[derive(Default)]
pub struct HeldVectors {
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    space: String,
    forgotten: u64,
    vectors: HashMap<MemoryId, Arc<[f32]>>,
}

/// The least number of vectors [`HeldVectors`] may hold before it counts them against the store.
const HELD_FLOOR: usize = 1024;

impl HeldVectors {
    /// The vectors of `space` of the memories `ids` (of `active` memories in all), each `None`
    /// when it has no cached vector; held ones from memory, the others read from `store` (by the
    /// content hash `hash_of` gives) and then held.
    pub(crate) fn get(
        &self,
        store: &Store,
        hash_of: impl Fn(MemoryId) -> Result<Hash, EngineError>,
        space: &str,
        ids: &[MemoryId],
        active: usize,
    ) -> Result<Vec<Option<Arc<[f32]>>>, EngineError> {
        let forgotten = forgotten(store)?;
        let mut found = {
            let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            if held.space != space || held.forgotten != forgotten || held.vectors.len() > HELD_FLOOR.max(2 * active) {
                *held = Held { space: space.to_string(), forgotten, vectors: HashMap::new() };
            }
            ids.iter().map(|id| held.vectors.get(id).cloned()).collect::<Vec<_>>()
        };
        let cache = VectorCache::new(store);
        let mut read = Vec::new();
        for (id, slot) in ids.iter().zip(found.iter_mut()) {
            if slot.is_none()
                && let Some(v) = cache.get(space, &hash_of(*id)?)?
            {
                let v: Arc<[f32]> = v.into();
                read.push((*id, v.clone()));
                *slot = Some(v);
            }
        }
        if !read.is_empty() {
            let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            // Held only if nothing was forgotten or changed meanwhile.
            if held.space == space && held.forgotten == forgotten {
                held.vectors.extend(read);
            }
        }
        Ok(found)
    }
}

/// The note said at open when the embedding space (model and document prompt) is not the one
/// the cache was made in.
pub fn model_change_note(store: &Store, configured: Option<&str>) -> Option<String> {
    let configured = configured?;
    let recorded = VectorCache::new(store).recorded_space().ok()??;
    (recorded != configured).then(|| {
        format!(
            "the embedding model changed from {recorded:?} to {configured:?}: vectors of different models or \
             document prompts are never compared, so memories embedded with the old one are neither embedding \
             candidates nor found by recall's cosine ranking until re-embedded (memledger embed)"
        )
    })
}

/// The related band of an embedding model family (`models::prompts` names the families): the
/// cosine at or above which two texts speak of one thing by that family's measure, so that a pair
/// is compared by the rules of change whatever its lexical similarity. Families' cosines live in
/// different ranges: E5's rarely fall below 0.7 for any two English sentences; models without a
/// known family get memloom's candidate threshold raised a little. Calibrated as
/// docs/quality.md says (scripts/eval/written_updates.py and the consistent sets).
pub fn related_band(family: &str) -> f64 {
    match family {
        "e5" | "e5-instruct" => E5_RELATED_BAND,
        _ => DEFAULT_RELATED_BAND,
    }
}

/// [`related_band`] of the E5 family.
pub const E5_RELATED_BAND: f64 = 0.85;
/// [`related_band`] of a model of no known family.
pub const DEFAULT_RELATED_BAND: f64 = 0.6;

/// The cosine gate for `identical`: a lexical identical verdict (other than equal texts) stands
/// only when the embedder agrees that the texts say nearly the same, at cosine `min` or above;
/// below it the pair is kept distinct (`complementary`, gate `cosine_below_identical`). The gate
/// never makes a pair identical or contradictory, so it cannot add a false merge; a model's
/// verdict is not gated. Records `cosine_identical_min` in the thresholds.
pub fn gate_identical(class: &mut Classification, cosine: f64, min: f64, model: &str) {
    class.thresholds.push(("cosine_identical_min".into(), min));
    if class.relation == Relation::Identical
        && class.method == Method::Lexical
        && class.gate != "exact_text"
        && cosine < min
    {
        class.reason = format!(
            "lexically identical by {} ({}), but cosine {cosine:.3} < {min} by {model}: kept distinct",
            class.gate, class.reason
        );
        class.relation = Relation::Complementary;
        class.gate = "cosine_below_identical".into();
    }
}

/// What `Memledger::embed_missing` did.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EmbedReport {
    /// The configured embedding model.
    pub model: String,
    /// What is put before each memory's text (empty: nothing; `models::prompts`).
    pub document_prompt: String,
    /// What is put before each recall query's text.
    pub query_prompt: String,
    /// Whether `input_type` is sent with each request.
    pub input_type: bool,
    /// Nothing was embedded or written: `embedded` stays 0.
    pub dry_run: bool,
    /// Active memories.
    pub active: usize,
    /// Active memories that already had a vector of `model`.
    pub already: usize,
    /// Active memories without one.
    pub missing: usize,
    /// Distinct texts among them (memories with equal texts share a vector).
    pub texts: usize,
    /// Texts embedded and cached.
    pub embedded: usize,
}

/// Candidates from the embedder for one save.
pub(crate) struct EmbeddingCandidates {
    /// Cosine with the incoming text, for every candidate with a vector of the same model.
    pub cosines: HashMap<MemoryId, f64>,
    /// The cosine of the vectors centred on the scope's mean (from [`CENTRE_MIN_VECTORS`]
    /// vectors on), for every candidate compared that has a vector: what ranks `related`.
    pub centred: HashMap<MemoryId, f64>,
    pub model: Option<String>,
    /// Why the embedder was not used, when it failed.
    pub error: Option<String>,
}

/// The vector of `text` from the cache, else from the embedder (then cached).
fn vector_of(models: &Models, store: &Store, space: &str, text: &str) -> Result<Result<Vec<f32>, String>, EngineError> {
    let hash = content_hash(text);
    let cache = VectorCache::new(store);
    if let Some(v) = cache.get(space, &hash)? {
        return Ok(Ok(v));
    }
    match models.embed_texts(&[text.to_string()], EmbedSide::Document) {
        Some(Ok(mut vs)) if vs.len() == 1 => {
            let v = vs.remove(0);
            cache.put_all(space, &[(hash, v.clone())])?;
            Ok(Ok(v))
        }
        Some(Ok(_)) => Ok(Err("the embedder answered the wrong number of vectors".into())),
        Some(Err(e)) => Ok(Err(e.to_string())),
        None => Ok(Err("no embedder is configured".into())),
    }
}

/// The mean of the vectors of length `len` (others are left out: they are of no comparison).
pub(crate) fn mean_vector<'v>(vectors: impl Iterator<Item = &'v [f32]>, len: usize) -> Vec<f32> {
    let mut sum = vec![0.0f64; len];
    let mut n = 0usize;
    for v in vectors.filter(|v| v.len() == len) {
        n += 1;
        for (s, x) in sum.iter_mut().zip(v) {
            *s += *x as f64;
        }
    }
    sum.into_iter().map(|s| if n == 0 { 0.0 } else { (s / n as f64) as f32 }).collect()
}

/// `a - b`, element by element.
pub(crate) fn minus(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

/// Fuse embedding candidates with the term candidates: every active memory of the scope whose
/// cached vector (same model) has cosine ≥ [`COSINE_MIN`] with the incoming text, best `top_k`
/// of them (by the centred cosine in a scope of [`CENTRE_MIN_VECTORS`] vectors or more), added
/// after the term candidates. Without an embedder: unchanged.
pub(crate) fn embedding_candidates(
    models: &Models,
    reader: Reader<'_>,
    top_k: usize,
    save: &ValidSave,
    candidates: &mut Vec<(MemoryRecord, bool)>,
) -> Result<EmbeddingCandidates, EngineError> {
    let mut out = EmbeddingCandidates { cosines: HashMap::new(), centred: HashMap::new(), model: None, error: None };
    let (Some(endpoint), Some(space)) = (models.embedder(), models.embed_space()) else { return Ok(out) };
    let model = endpoint.model.clone();
    out.model = Some(model.clone());
    let incoming = match vector_of(models, reader.store(), &space, &save.text)? {
        Ok(v) => v,
        Err(e) => {
            out.error = Some(format!("embedder {model} failed: {e}; term candidates only"));
            return Ok(out);
        }
    };
    let cache = VectorCache::new(reader.store());
    // Every vector of the scope is read once: its cosine is kept, it adds to the scope's sum, and
    // the nearest `top_k * RERANK_POOL` by cosine are held for the ranking below.
    let mut sum = vec![0.0f64; incoming.len()];
    let mut n = 0usize;
    let mut pool: Vec<(f64, Vec<f32>, MemoryRecord)> = Vec::new();
    let pool_max = top_k * RERANK_POOL;
    for r in reader.beliefs().scan(|r| r.status == Status::Active && r.scope == save.scope, usize::MAX)? {
        if let Some(v) = cache.get(&space, &r.content_hash)? {
            let c = cosine(&incoming, &v);
            out.cosines.insert(r.memory_id, c);
            if v.len() == sum.len() {
                n += 1;
                sum.iter_mut().zip(&v).for_each(|(s, x)| *s += f64::from(*x));
            }
            if c >= COSINE_MIN {
                pool.push((c, v, r));
                if pool.len() >= 2 * pool_max.max(1) {
                    pool.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.memory_id.cmp(&b.2.memory_id)));
                    pool.truncate(pool_max);
                }
            }
        }
    }
    // Ranked as recall ranks (docs/quality.md): from CENTRE_MIN_VECTORS vectors on, by the cosine
    // of the vectors centred on the scope's mean, so that what every memory of a crowded scope
    // shares (its register, its people) stops filling the cosine; the raw cosine still admits a
    // pair (`related_band` is calibrated on it) and makes a candidate at all (`COSINE_MIN`).
    let mean: Option<Vec<f32>> = (n >= CENTRE_MIN_VECTORS).then(|| sum.iter().map(|s| (s / n as f64) as f32).collect());
    let query = mean.as_ref().map(|m| minus(&incoming, m));
    pool.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.memory_id.cmp(&b.2.memory_id)));
    pool.truncate(pool_max);
    let mut scored: Vec<(f64, MemoryRecord)> = pool
        .into_iter()
        .map(|(c, v, r)| match (&mean, &query) {
            (Some(mean), Some(query)) if v.len() == mean.len() => (cosine(query, &minus(&v, mean)), r),
            _ => (c, r),
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.memory_id.cmp(&b.1.memory_id)));
    for (_, r) in scored.into_iter().take(top_k) {
        if !candidates.iter().any(|(c, _)| c.memory_id == r.memory_id) {
            candidates.push((r, false));
        }
    }
    if let (Some(mean), Some(query)) = (&mean, &query) {
        for (r, _) in candidates.iter() {
            if let Some(v) = cache.get(&space, &r.content_hash)?.filter(|v| v.len() == mean.len()) {
                out.centred.insert(r.memory_id, cosine(query, &minus(&v, mean)));
            }
        }
    }
    Ok(out)
}

/// Copy the cached vectors (configured model) in `from`'s store of `past`'s active memories into
/// `past`'s cache: the scratch store of an as-of read starts with none, and vectors are keyed by
/// content, so they hold in any past. No embedder call.
pub(crate) fn lend_vectors(models: &Models, from: Reader<'_>, past: Reader<'_>) -> Result<(), EngineError> {
    let Some(space) = models.embed_space() else { return Ok(()) };
    let cache = VectorCache::new(from.store());
    let mut items = Vec::new();
    for r in past.beliefs().scan(|r| r.status == Status::Active, usize::MAX)? {
        if let Some(v) = cache.get(&space, &r.content_hash)? {
            items.push((r.content_hash, v));
        }
    }
    if !items.is_empty() {
        VectorCache::new(past.store()).put_all(&space, &items)?;
    }
    Ok(())
}

/// Embed every active memory that has no vector of the configured model yet (after the model
/// changed, or for memories saved before an embedder was configured); with `dry_run`, only count
/// what would be embedded (no call, no write). Writes only the vector cache, never the ledger.
pub(crate) fn embed_missing(models: &Models, reader: Reader<'_>, dry_run: bool) -> Result<EmbedReport, EngineError> {
    let (Some(endpoint), Some(space)) = (models.embedder(), models.embed_space()) else {
        return Err(BadInput::NoEmbedder.into());
    };
    let model = endpoint.model.clone();
    let prompts = models.embed_prompts();
    let cache = VectorCache::new(reader.store());
    let active = reader.beliefs().scan(|r| r.status == Status::Active, usize::MAX)?;
    let mut missing: Vec<(Hash, String)> = Vec::new();
    let mut seen = HashSet::new();
    let mut missing_memories = 0;
    for r in &active {
        if cache.get(&space, &r.content_hash)?.is_none() {
            missing_memories += 1;
            if seen.insert(r.content_hash) {
                missing.push((r.content_hash, r.text.clone()));
            }
        }
    }
    let mut report = EmbedReport {
        model,
        document_prompt: prompts.document.clone(),
        query_prompt: prompts.query.clone(),
        input_type: prompts.input_type,
        dry_run,
        active: active.len(),
        already: active.len() - missing_memories,
        missing: missing_memories,
        texts: missing.len(),
        embedded: 0,
    };
    if dry_run {
        return Ok(report);
    }
    for chunk in missing.chunks(64) {
        let texts: Vec<String> = chunk.iter().map(|(_, t)| t.clone()).collect();
        match models.embed_texts(&texts, EmbedSide::Document) {
            Some(Ok(vs)) if vs.len() == texts.len() => {
                let items: Vec<(Hash, Vec<f32>)> = chunk.iter().map(|(h, _)| *h).zip(vs).collect();
                cache.put_all(&space, &items)?;
                report.embedded += items.len();
            }
            Some(Ok(_)) => {
                return Err(ModelError::WrongVectorCount { embedded: report.embedded, texts: report.texts }.into());
            }
            Some(Err(source)) => {
                return Err(ModelError::Embedder { source, embedded: report.embedded, texts: report.texts }.into());
            }
            None => break,
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held vectors answer without the store, new vectors are read when first asked for, and a
    /// forgotten vector is not answered from memory.
    #[test]
    fn held_vectors_never_outlive_a_forgotten_vector() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &[EMBED_TABLE.into()], true, std::time::Duration::from_secs(1)).unwrap();
        let (a, b) = (MemoryId::from_bytes([1; 16]), MemoryId::from_bytes([2; 16]));
        let hash = |id: MemoryId| Hash([id.to_bytes()[0]; 32]);
        let hash_of = |id: MemoryId| Ok(hash(id));
        let held = HeldVectors::default();
        let cache = VectorCache::new(&store);
        cache.put_all("m", &[(hash(a), vec![1.0, 0.0])]).unwrap();
        let got = held.get(&store, hash_of, "m", &[a, b], 2).unwrap();
        assert_eq!(
            got.iter().map(|v| v.as_deref().map(<[f32]>::to_vec)).collect::<Vec<_>>(),
            [Some(vec![1.0, 0.0]), None]
        );
        cache.put_all("m", &[(hash(b), vec![0.0, 1.0])]).unwrap();
        let got = held.get(&store, hash_of, "m", &[a, b], 2).unwrap();
        assert!(got.iter().all(Option::is_some), "a vector cached later is read");
        assert!(held.get(&store, hash_of, "other", &[a], 2).unwrap()[0].is_none(), "another space has none");
        held.get(&store, hash_of, "m", &[a, b], 2).unwrap();
        forget_vectors(&store, &[hash(a)]).unwrap();
        let got = held.get(&store, hash_of, "m", &[a, b], 2).unwrap();
        assert!(got[0].is_none() && got[1].is_some(), "the forgotten vector is gone from memory too");
    }

    #[test]
    fn cosine_and_codec() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-9);
        assert!(cosine(&[1.0, 0.0], &[0.0, 1.0]).abs() < 1e-9);
        assert_eq!(cosine(&[1.0], &[1.0, 2.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 2.0]), 0.0);
        let v = vec![0.25f32, -1.5, 3.0];
        assert_eq!(decode(&encode(&v)).unwrap(), v);
        assert_ne!(vkey("a", &Hash([0; 32])), vkey("b", &Hash([0; 32])));
    }

    fn class(relation: Relation, gate: &str) -> Classification {
        Classification {
            relation,
            method: Method::Lexical,
            gate: gate.to_string().into(),
            reason: "r".into(),
            score: 0.9,
            scores: Vec::new(),
            thresholds: Vec::new(),
            incoming_adds: false,
            candidate_adds: false,
            near_miss: false,
        }
    }

    #[test]
    fn the_identical_gate_only_ever_keeps_pairs_apart() {
        let mut c = class(Relation::Identical, "merge_band");
        gate_identical(&mut c, 0.95, 0.97, "e5");
        assert_eq!((c.relation, c.gate.as_str()), (Relation::Complementary, "cosine_below_identical"));
        assert!(c.reason.contains("cosine 0.950 < 0.97 by e5"), "{}", c.reason);
        assert_eq!(c.thresholds, vec![("cosine_identical_min".into(), 0.97)]);
        let mut c = class(Relation::Identical, "merge_band");
        gate_identical(&mut c, 0.98, 0.97, "e5");
        assert_eq!(c.relation, Relation::Identical, "the embedder agrees");
        let mut c = class(Relation::Identical, "exact_text");
        gate_identical(&mut c, 0.1, 0.97, "e5");
        assert_eq!(c.relation, Relation::Identical, "equal texts are equal");
        for r in [Relation::Complementary, Relation::Contradictory, Relation::Unrelated] {
            let mut c = class(r, "related_band");
            gate_identical(&mut c, 1.0, 0.97, "e5");
            assert_eq!(c.relation, r, "never promoted");
        }
    }
}
