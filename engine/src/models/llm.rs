//! LLM pair classification: the prompt, the parsing of the answer, and how a verdict is laid
//! over the lexical classification (whose scores are always kept).

use memledger_schemas::{Method, Relation};
use serde_json::Value;

use super::MemoryFacts;
use crate::classify::Classification;

pub const CLASSIFY_SYSTEM: &str = "You compare two short memories that an assistant keeps about a \
user and their work, and say how the NEW memory relates to the STORED one.\n\
Answer with one JSON object and nothing else:\n\
{\"relation\": \"identical|complementary|contradictory\", \"reason\": \"one short sentence\", \"confidence\": 0.0-1.0}\n\
- identical: the same fact restated, in other words or with more detail.\n\
- complementary: both can be true at the same time, related or not.\n\
- contradictory: they cannot both be true at the same time (a changed value, a negation, another \
choice for the same thing).\n\
Judge the claims as stated. Do not decide which one is current: different effective times make a \
change of state, which is still contradictory. Facts about different subjects, environments or \
places are complementary.";

/// The user message: both memories with their types and times.
pub fn classify_prompt(incoming: &MemoryFacts, stored: &MemoryFacts) -> String {
    format!("NEW memory:\n{}\n\nSTORED memory:\n{}\n", incoming.describe(), stored.describe())
}

/// What a model said about one pair.
#[derive(Clone, Debug, PartialEq)]
pub struct PairVerdict {
    pub relation: Relation,
    pub reason: Option<String>,
    /// The model's own confidence in [0, 1], when it gave one.
    pub confidence: Option<f64>,
}

/// The JSON object in an answer: tolerates code fences and text around it.
pub fn json_object(raw: &str) -> Result<serde_json::Map<String, Value>, String> {
    let (Some(start), Some(end)) = (raw.find('{'), raw.rfind('}')) else {
        return Err("the answer holds no JSON object".into());
    };
    if end < start {
        return Err("the answer holds no JSON object".into());
    }
    match serde_json::from_str::<Value>(&raw[start..=end]) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("the answer is not a JSON object".into()),
        Err(e) => Err(format!("the answer is not valid JSON: {e}")),
    }
}

/// A string field, trimmed and lowercased for matching.
pub fn word(map: &serde_json::Map<String, Value>, field: &str) -> Option<String> {
    map.get(field).and_then(Value::as_str).map(|s| s.trim().to_ascii_lowercase())
}

pub fn reason_of(map: &serde_json::Map<String, Value>) -> Option<String> {
    map.get("reason").and_then(Value::as_str).map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

pub fn confidence_of(map: &serde_json::Map<String, Value>) -> Option<f64> {
    let c = map.get("confidence")?;
    let x = c.as_f64().or_else(|| c.as_str().and_then(|s| s.trim().parse().ok()))?;
    (x.is_finite() && (0.0..=1.0).contains(&x)).then_some(x)
}

/// Parse a classification answer.
pub fn parse_pair_verdict(raw: &str) -> Result<PairVerdict, String> {
    let map = json_object(raw)?;
    let relation = match word(&map, "relation").as_deref() {
        Some("identical") => Relation::Identical,
        Some("complementary") => Relation::Complementary,
        Some("contradictory") => Relation::Contradictory,
        Some("unrelated") => Relation::Unrelated,
        Some(other) => return Err(format!("unknown relation {other:?}")),
        None => return Err("the answer has no \"relation\" string".into()),
    };
    Ok(PairVerdict { relation, reason: reason_of(&map), confidence: confidence_of(&map) })
}

/// Whether a lexically classified pair is worth asking a model about: the lexical rules alone
/// decide equal texts and pairs of different declared kinds (a near miss is never flagged).
pub fn worth_asking(class: &Classification) -> bool {
    !class.near_miss && class.gate != "exact_text" && class.gate != "kind_mismatch"
}

/// Lay a model's verdict over the lexical classification: the relation, method and reason become
/// the model's; the lexical scores stay, and the lexical verdict is kept in the reason.
pub fn apply(class: &mut Classification, verdict: &PairVerdict, model: &str) {
    let lexical = format!("lexical: {} by {}", class.relation, class.gate);
    class.relation = verdict.relation;
    class.method = Method::Llm;
    class.gate = "llm".into();
    class.reason = match &verdict.reason {
        Some(r) => format!("{r} ({model}; {lexical})"),
        None => format!("{model} said {} without a reason ({lexical})", verdict.relation),
    };
    if let Some(c) = verdict.confidence {
        class.scores.push(("llm_confidence".into(), c));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_fenced_and_chatty_answers() {
        let v = parse_pair_verdict(r#"{"relation": "contradictory", "reason": "the port changed"}"#).unwrap();
        assert_eq!(v.relation, Relation::Contradictory);
        assert_eq!(v.reason.as_deref(), Some("the port changed"));
        let v = parse_pair_verdict("```json\n{\"relation\":\"Identical\",\"reason\":\"same\",\"confidence\":0.9}\n```")
            .unwrap();
        assert_eq!((v.relation, v.confidence), (Relation::Identical, Some(0.9)));
        let v = parse_pair_verdict("Sure! {\"relation\": \"complementary\"} Hope that helps.").unwrap();
        assert_eq!((v.relation, v.reason), (Relation::Complementary, None));
    }

    #[test]
    fn refuses_garbage() {
        for raw in ["", "contradictory", "{\"relation\": 3}", "{\"relation\": \"maybe\"}", "[1]", "} {"] {
            assert!(parse_pair_verdict(raw).is_err(), "{raw:?}");
        }
    }
}
