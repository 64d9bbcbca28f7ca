//! Engine settings: the thresholds and limits in force, all in one place.

use crate::classify::lexical::LexicalConfig;

#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Candidates examined per save.
    pub top_k: usize,
    /// Postings read per term when gathering candidates: a term held by more memories than this
    /// says little about identity.
    pub term_cap: usize,
    pub lexical: LexicalConfig,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig { top_k: 5, term_cap: 2000, lexical: LexicalConfig::default() }
    }
}
