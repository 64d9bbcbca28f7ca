//! `memledger classify`: the classifier as a dry run; writes nothing, needs no store.

use std::io::BufRead;

use memledger_engine::EngineConfig;
use memledger_engine::classify::classify_lexical;
use memledger_engine::input::{parse_type, validate_text};
use serde::Deserialize;
use serde_json::json;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Classify a pair of texts (or every pair in a JSON Lines file) without writing anything.
///
/// Example: memledger classify "deploy on Tuesday" "do not deploy on Tuesday"
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The incoming text.
    #[arg(required_unless_present = "pairs", conflicts_with = "pairs")]
    pub a: Option<String>,
    /// The stored text.
    #[arg(required_unless_present = "pairs")]
    pub b: Option<String>,
    #[arg(long, value_name = "TYPE")]
    pub type_a: Option<String>,
    #[arg(long, value_name = "TYPE")]
    pub type_b: Option<String>,
    /// JSON Lines of {"id", "a", "b"[, "type_a", "type_b"]}; prints one JSON line per pair.
    #[arg(long, value_name = "FILE")]
    pub pairs: Option<String>,
}

#[derive(Deserialize)]
struct Pair {
    id: serde_json::Value,
    a: String,
    b: String,
    type_a: Option<String>,
    type_b: Option<String>,
}

pub fn run(_ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let config = EngineConfig::default();
    if let Some(path) = &args.pairs {
        let reader: Box<dyn BufRead> = if path == "-" {
            Box::new(std::io::BufReader::new(std::io::stdin()))
        } else {
            Box::new(std::io::BufReader::new(
                std::fs::File::open(path).map_err(|e| CliError::bad_input(format!("cannot read {path}: {e}")))?,
            ))
        };
        for (i, line) in reader.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let pair: Pair = serde_json::from_str(&line)
                .map_err(|e| CliError::bad_input(format!("line {}: not a pair: {e}", i + 1)))?;
            let ta = pair.type_a.as_deref().map(parse_type).transpose()?;
            let tb = pair.type_b.as_deref().map(parse_type).transpose()?;
            let c = classify_lexical(pair.a.trim(), pair.b.trim(), ta, tb, &config);
            out.json_line(&json!({
                "id": pair.id, "relation": c.relation, "score": c.score, "method": c.method,
                "gate": c.gate, "reason": c.reason,
            }))?;
        }
        return Ok(());
    }
    let a = validate_text(&super::text_arg(args.a.as_deref().unwrap_or_default())?)?;
    let b = validate_text(args.b.as_deref().unwrap_or_default())?;
    let ta = args.type_a.as_deref().map(parse_type).transpose()?;
    let tb = args.type_b.as_deref().map(parse_type).transpose()?;
    let c = classify_lexical(&a, &b, ta, tb, &config);
    if out.json {
        return out.json_line(&c);
    }
    out.line(format!("{}  (score {:.3}, {} gate {})", c.relation, c.score, c.method, c.gate))?;
    out.line(format!("  {}", c.reason))
}
