//! `memledger why`: every classification that touched a memory or a pair.

use memledger_commands::answer::WhyDoc;
use memledger_server::api::{Call, WhyQuery};

use super::Render;
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

/// The scores human output shows, in order, with their labels; counts are shown whole, the
/// rest to two places.
const KEY_SCORES: &[(&str, &str, bool)] = &[
    ("score", "similarity", false),
    ("agreements", "words agreeing", true),
    ("rest_jaccard", "rest alike", false),
    ("cosine", "cosine", false),
    ("llm_confidence", "model confidence", false),
];

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Why(WhyQuery { id: args.id, other: args.other }), out)
}

/// The decisions that involved a memory, for people.
impl Render for WhyDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        let WhyDoc { memory_id: id, decisions, expires_at, expired } = self;
        let (expires_at, expired) = (*expires_at, *expired);
        if decisions.is_empty() {
            out.line("no classification involved this memory (it was saved with nothing similar in its scope, or with --no-dedup)")?;
        }
        if let Some(t) = expires_at {
            let verb = if expired { "expired" } else { "expires" };
            out.line(format!(
                "{} {verb} {}: saved with that expiry, it reads as expired from then on (no event is written when the time \
                 comes; `update {} --ttl` or `--no-expiry` renews or clears it)",
                id.short(),
                t.to_human(),
                id.short()
            ))?;
        }
        for d in decisions {
            // The gate and its reason first, then the few scores a person weighs; --json has them all.
            out.line(format!(
                "{} → {}  {}  gate {}  ({}, outcome {}, seq {}, by {})",
                d.incoming.short(),
                d.candidate.short(),
                d.relation,
                d.gate,
                d.method,
                d.outcome,
                d.seq,
                d.principal
            ))?;
            match &d.erased {
                Some(mark) => out.line(format!("  {}", mark.describe()))?,
                None => out.line(format!("  {}", d.reason))?,
            }
            let key: Vec<String> = KEY_SCORES
                .iter()
                .filter_map(|&(name, label, count)| Some((label, count, d.scores.get(name)?.as_f64()?)))
                .map(|(label, count, v)| if count { format!("{label} {v:.0}") } else { format!("{label} {v:.2}") })
                .collect();
            if !key.is_empty() {
                out.line(format!("  {}", key.join(" · ")))?;
            }
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
}
