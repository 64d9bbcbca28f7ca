//! Pair classification: how an incoming memory relates to a stored one.
//!
//! The lexical classifier ([`lexical`]) always runs and its scores are always recorded; a model
//! (when configured) may give the verdict instead. The result is recorded in a
//! `pair_classified` event whether the pair was flagged or dropped.

pub mod lexical;

use memledger_schemas::{MemoryType, Method, Name, Relation};
use serde::Serialize;

use crate::config::EngineConfig;

/// What the classifier said about one pair.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Classification {
    pub relation: Relation,
    pub method: Method,
    /// The rule that decided or dropped the pair.
    pub gate: Name,
    pub reason: String,
    /// The similarity in [0, 1].
    pub score: f64,
    pub scores: Vec<(Name, f64)>,
    pub thresholds: Vec<(Name, f64)>,
    /// The incoming text has content the candidate lacks.
    pub incoming_adds: bool,
    /// The candidate has content the incoming text lacks.
    pub candidate_adds: bool,
    /// Related, but of different declared kinds: recorded, never flagged.
    pub near_miss: bool,
}

fn relation_of(r: lexical::Relation) -> Relation {
    match r {
        lexical::Relation::Identical => Relation::Identical,
        lexical::Relation::Complementary => Relation::Complementary,
        lexical::Relation::Contradictory => Relation::Contradictory,
        lexical::Relation::Unrelated => Relation::Unrelated,
    }
}

/// Classify `incoming` against `candidate` with the offline lexical rules.
pub fn classify_lexical(
    incoming: &str,
    candidate: &str,
    incoming_type: Option<MemoryType>,
    candidate_type: Option<MemoryType>,
    config: &EngineConfig,
) -> Classification {
    classify_lexical_analysed(
        &lexical::analyse(incoming),
        &lexical::analyse(candidate),
        incoming_type,
        candidate_type,
        config,
    )
}

/// [`classify_lexical`] on texts analysed once ([`lexical::analyse`]): the pipeline analyses the
/// incoming text once for all its candidates and keeps candidates' analyses in a cache.
pub fn classify_lexical_analysed(
    incoming: &lexical::Analysis,
    candidate: &lexical::Analysis,
    incoming_type: Option<MemoryType>,
    candidate_type: Option<MemoryType>,
    config: &EngineConfig,
) -> Classification {
    classify_lexical_admitted(incoming, candidate, incoming_type, candidate_type, config, None)
}

/// [`classify_lexical_analysed`] with the embedder's cosine of the pair and its model family's
/// related band: a pair the cosine admits is compared by the rules of change even when its
/// lexical similarity is below the band (docs/design.md §15). The band is recorded with the
/// thresholds.
pub fn classify_lexical_admitted(
    incoming: &lexical::Analysis,
    candidate: &lexical::Analysis,
    incoming_type: Option<MemoryType>,
    candidate_type: Option<MemoryType>,
    config: &EngineConfig,
    admission: Option<lexical::Admission>,
) -> Classification {
    let v = lexical::classify_admitted(
        incoming,
        candidate,
        incoming_type.map(|t| t.as_str()),
        candidate_type.map(|t| t.as_str()),
        &config.lexical,
        admission,
    );
    let mut thresholds = recorded_thresholds(config);
    if let Some(a) = admission {
        thresholds.push(("cosine_related_min".into(), a.min));
    }
    Classification {
        relation: relation_of(v.relation),
        method: Method::Lexical,
        gate: v.gate.as_str().into(),
        reason: v.reason,
        score: sanitize(v.score),
        scores: v.scores.into_iter().map(|(k, s)| (Name::from(k), sanitize(s))).collect(),
        thresholds,
        incoming_adds: v.incoming_adds,
        candidate_adds: v.candidate_adds,
        near_miss: v.near_miss,
    }
}

/// The thresholds in force, as recorded in every classification event.
pub fn recorded_thresholds(config: &EngineConfig) -> Vec<(Name, f64)> {
    let mut t: Vec<(Name, f64)> = config.lexical.recorded().into_iter().map(|(k, v)| (Name::from(k), v)).collect();
    t.push(("top_k".into(), config.top_k as f64));
    t
}

/// Scores go into JSON and hashes: never NaN or infinite.
fn sanitize(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

/// The terms the candidate index holds for a text.
pub fn index_terms(text: &str) -> Vec<String> {
    lexical::index_terms(text)
}

/// Bump when [`index_terms`] changes what it returns: the belief view is then rebuilt.
pub const INDEX_TERMS_VERSION: u32 = 9;
