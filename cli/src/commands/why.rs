//! `memledger why`: every classification that touched a memory or a pair.

use serde_json::json;

use memledger_engine::Memledger;
use memledger_server::api::{Call, WhyQuery};

use crate::app::Context;
use crate::output::{CliError, Output};

/// Explain every decision about a memory (or a pair): flagged pairs and dropped ones, with
/// method, scores, thresholds, gate, relation, reason and outcome.
///
/// Example: memledger why 43c1a0 9f2e11
#[derive(clap::Args, Debug)]
pub struct Args {
    pub id: String,
    /// Only the classifications of this pair.
    pub other: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Why(WhyQuery { id: args.id, other: args.other }), out)
}

pub fn execute(ml: &Memledger, q: &WhyQuery, out: &mut Output) -> Result<(), CliError> {
    let id = ml.resolve_memory_id(&q.id)?;
    let other = q.other.as_deref().map(|o| ml.resolve_memory_id(o)).transpose()?;
    let decisions = ml.why(id, other)?;
    if out.json {
        return out.json_line(&json!({ "decisions": decisions }));
    }
    if decisions.is_empty() {
        out.line("no classification involved this memory (it was saved with nothing similar in its scope, or with --no-dedup)")?;
    }
    for d in &decisions {
        let scores: Vec<String> = d.scores.iter().map(|(k, v)| format!("{k}={}", v)).collect();
        out.line(format!(
            "seq {}  {} → {}  {} ({}, gate {})  outcome {}",
            d.seq,
            d.incoming.short(),
            d.candidate.short(),
            d.relation,
            d.method,
            d.gate,
            d.outcome
        ))?;
        out.line(format!("  {}", d.reason))?;
        out.line(format!("  scores: {}", scores.join(" ")))?;
        if let Some(m) = &d.model {
            match (&m.error, m.relation) {
                (Some(e), _) => out.line(format!("  model {}: not used ({e})", m.model))?,
                (None, Some(r)) => {
                    out.line(format!("  model {}: {r}: {}", m.model, m.reason.as_deref().unwrap_or("(no reason)")))?
                }
                (None, None) => out.line(format!("  model {}: no verdict", m.model))?,
            }
        }
    }
    Ok(())
}
