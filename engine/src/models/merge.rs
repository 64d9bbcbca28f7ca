//! The merge proposal for co-enrichments (engine/src/co_enrich.rs): the chat model is asked for
//! one text that keeps every detail of each memory and invents none. Its answer is only a
//! proposal: the save records it as an entry of the conflict queue, and a person accepts it with
//! `conflicts resolve --merge`.

use memledger_schemas::ModelVerdict;

use super::llm::{json_object, reason_of};
use super::{Answer, Models};
use crate::input::validate_text;

pub const MERGE_SYSTEM: &str = "You merge short memories that an assistant keeps about a user and \
their work. Each of the MEMORIES adds its own detail to the same ORIGINAL statement. Write ONE \
statement that says everything the original says and every detail each memory adds, in plain words, \
keeping negations, names, numbers, dates and conditions exactly. Add nothing that none of them says.\n\
Answer with one JSON object and nothing else:\n\
{\"text\": \"the merged statement\", \"reason\": \"one short sentence\"}";

/// The user message: the original and each memory's text.
pub fn merge_prompt(original: &str, memories: &[&str]) -> String {
    let quote = |t: &str| serde_json::to_string(t).unwrap_or_default();
    let mut text = format!("ORIGINAL: {}\n\nMEMORIES:\n", quote(original));
    for (i, m) in memories.iter().enumerate() {
        text.push_str(&format!("{}. {}\n", i + 1, quote(m)));
    }
    text
}

/// A usable answer: the merged text (valid as a memory's text) and the model's reason.
#[derive(Clone, Debug, PartialEq)]
pub struct MergeAnswer {
    pub text: String,
    pub reason: Option<String>,
}

/// Parse a merge answer.
pub fn parse_merge(raw: &str) -> Result<MergeAnswer, String> {
    let map = json_object(raw)?;
    let Some(text) = map.get("text").and_then(serde_json::Value::as_str) else {
        return Err("the answer has no \"text\" string".into());
    };
    let text = validate_text(text).map_err(|e| format!("the merged text is not a memory's text: {e}"))?;
    Ok(MergeAnswer { text, reason: reason_of(&map) })
}

impl Answer<MergeAnswer> {
    /// The record of a proposal's model answer (the relation is not asked).
    pub fn record(&self, model: &str) -> ModelVerdict {
        ModelVerdict {
            model: model.to_string(),
            raw: self.raw.clone(),
            relation: None,
            reason: self.result.as_ref().ok().and_then(|a| a.reason.clone()),
            error: self.result.as_ref().err().cloned(),
        }
    }
}

impl Models {
    /// Ask the chat model for one text merging `memories`, each an enrichment of `original`.
    /// Without a chat model: `None`.
    pub fn propose_merge(&self, original: &str, memories: &[&str]) -> Option<Answer<MergeAnswer>> {
        let prompt = (MERGE_SYSTEM.to_string(), merge_prompt(original, memories));
        self.ask_all(vec![prompt], parse_merge).and_then(|mut answers| answers.pop())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_merged_text_and_refuses_what_is_no_text() {
        let a =
            parse_merge(r#"{"text": " Ana works at Acme in Lisbon as a data engineer ", "reason": "both"}"#).unwrap();
        assert_eq!(a.text, "Ana works at Acme in Lisbon as a data engineer");
        assert_eq!(a.reason.as_deref(), Some("both"));
        for raw in ["", "{\"text\": \"\"}", "{\"text\": 3}", "{\"reason\": \"none\"}", "plain words"] {
            assert!(parse_merge(raw).is_err(), "{raw:?}");
        }
    }
}
