//! Engine settings: the thresholds and limits in force, all in one place.

use crate::classify::lexical::LexicalConfig;

#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Candidates examined per save by their terms.
    pub top_k: usize,
    /// Candidates examined per save by the embedder's cosine, besides those: an update agents
    /// write in other words shares few terms with what it updates, and in a crowded scope the
    /// cosine ranks it lower than the terms would (docs/quality.md, "in a crowd").
    pub embedding_top_k: usize,
    /// Postings read per save when gathering candidates, rarest terms first: bounds the cost of
    /// candidate search whatever the store's size.
    pub candidate_budget: usize,
    /// Term postings the save pipeline holds in memory at most (~40 bytes each) before it
    /// commits the text index and starts its cache again (engine/src/term_cache.rs).
    pub term_cache_max_ids: usize,
    pub lexical: LexicalConfig,
    /// Models over HTTP (none by default: the offline lexical path; see docs/models.md).
    pub models: crate::models::ModelConfig,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            top_k: 5,
            embedding_top_k: 10,
            candidate_budget: 1000,
            term_cache_max_ids: 8_000_000,
            lexical: LexicalConfig::default(),
            models: Default::default(),
        }
    }
}
