//! The lexical classifier's thresholds, all recorded in every classification event.

/// Every threshold of the lexical classifier. Recorded in each classification event via
/// [`LexicalConfig::recorded`].
#[derive(Clone, Debug, PartialEq)]
pub struct LexicalConfig {
    /// score at or above which two facts are one fact (Ankita's DEFAULT_DEDUP_THRESHOLD).
    pub merge_threshold: f64,
    /// score at or above which two facts are related (complementary rather than unrelated).
    pub related_threshold: f64,
    /// a contradiction needs at least this many meaningful tokens on the longer side
    /// (content words, values, qualifiers and negation cues).
    pub min_conflict_words: usize,
    /// a contradiction needs at least this many agreeing tokens besides the changed one.
    pub min_agreements: usize,
    /// a contradiction needs this Jaccard over the tokens that are not the changed evidence.
    pub min_conflict_jaccard: f64,
    /// two words match when the shorter is a prefix of the longer and at least this long.
    pub prefix_min_len: usize,
    /// changed value / antonym: at most this many substituted words in the rest
    /// (a word on each side that the other lacks means a different subject or action).
    pub max_value_substitutions: usize,
    /// negation: at most this many substituted words in the rest.
    pub max_negation_substitutions: usize,
    /// negation: at least this share of the content words under the negation must appear on
    /// the other side (the negated clause is about the same thing).
    pub min_negation_scope_match: f64,
    /// containment fires only when the shorter fact has at least this many tokens.
    pub min_containment_words: usize,
    /// facts with at most this many tokens are "short": one shared token links them.
    pub short_fact_words: usize,
    /// the score given to two short facts linked by one shared token.
    pub short_link_score: f64,
}

impl Default for LexicalConfig {
    fn default() -> Self {
        LexicalConfig {
            merge_threshold: 0.85,
            related_threshold: 0.55,
            min_conflict_words: 3,
            min_agreements: 2,
            min_conflict_jaccard: 0.5,
            prefix_min_len: 4,
            max_value_substitutions: 0,
            max_negation_substitutions: 0,
            min_negation_scope_match: 1.0,
            min_containment_words: 2,
            short_fact_words: 2,
            short_link_score: 0.6,
        }
    }
}

impl LexicalConfig {
    /// Every threshold as (name, value); counts are given as f64.
    pub fn recorded(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("merge_threshold", self.merge_threshold),
            ("related_threshold", self.related_threshold),
            ("min_conflict_words", self.min_conflict_words as f64),
            ("min_agreements", self.min_agreements as f64),
            ("min_conflict_jaccard", self.min_conflict_jaccard),
            ("prefix_min_len", self.prefix_min_len as f64),
            ("max_value_substitutions", self.max_value_substitutions as f64),
            ("max_negation_substitutions", self.max_negation_substitutions as f64),
            ("min_negation_scope_match", self.min_negation_scope_match),
            ("min_containment_words", self.min_containment_words as f64),
            ("short_fact_words", self.short_fact_words as f64),
            ("short_link_score", self.short_link_score),
        ]
    }
}
