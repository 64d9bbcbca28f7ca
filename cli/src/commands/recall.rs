//! `memledger recall`: the active memories that answer a question.

use memledger_commands::answer::RecallDoc;
use memledger_server::api::{Call, RecallBody};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output, clip};

/// Find the active memories that best match a query (BM25 over words; stale and retired
/// memories are never returned). Any text is a query: there is no query syntax.
///
/// A `!` marks a memory in a pending conflict; the notice then says to ask the user which one
/// is current. Each result is what is true at the --valid-at time (default: the --as-of time,
/// else now); a change of it scheduled after that time is printed beneath it ("from
/// 2027-01-10: ..."), and a belief with nothing true yet is marked `>` (scheduled). With an
/// embedder configured (docs/models.md) and vectors of its model, BM25 is fused with cosine
/// similarity to the query (normalised score fusion), so a paraphrase that
/// shares no word with the query can be found too.
///
/// Example: memledger recall "which postgres version does billing run?" --scope team:payments
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to look for: a question or some words (`-` reads stdin).
    pub query: String,
    /// Only memories of this type (fact, preference, episode, procedure).
    #[arg(long = "type", value_name = "TYPE")]
    pub memory_type: Option<String>,
    /// Only memories in this scope.
    #[arg(long)]
    pub scope: Option<String>,
    /// At most this many results (1 to 100000).
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    #[arg(long, value_name = "SEQ|RFC3339")]
    pub as_of: Option<String>,
    /// What was (or will be) true at this time; default: the --as-of time, else now.
    #[arg(long, value_name = "RFC3339")]
    pub valid_at: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let query = super::text_arg(&args.query)?;
    let b = RecallBody {
        query,
        memory_type: args.memory_type,
        scope: args.scope,
        limit: args.limit,
        as_of: args.as_of,
        valid_at: args.valid_at,
    };
    memledger_commands::memories::check_recall(&b)?;
    ctx.run(Call::Recall(b), out)
}

/// Recall's results for people.
impl Render for RecallDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        let found = &self.found;
        for e in found.embedding_error.iter().chain(&found.rerank_error) {
            out.note(format!("memledger: {e}"));
        }
        // A fused score is at most 1 (about 1.5 with the time bonus), a reranker's relevance often
        // too: print more digits.
        let digits = if found.ranking == memledger_engine::recall::RANKING_BM25 { 2 } else { 3 };
        let type_width = found.results.iter().map(|r| r.memory_type.as_str().len()).max().unwrap_or(0);
        let scope_width = found.results.iter().map(|r| r.scope.chars().count()).max().unwrap_or(0);
        for r in &found.results {
            let flag = if !r.conflicts_with.is_empty() {
                "!"
            } else if r.status == memledger_engine::validity::ReadStatus::Scheduled {
                ">"
            } else {
                " "
            };
            out.line(format!(
                "{flag} {}  {:>6.digits$}  {:<type_width$}  {:<scope_width$}  {}",
                r.memory_id.short(),
                // What the results are ordered by.
                r.rerank.unwrap_or(r.score as f64),
                r.memory_type.as_str(),
                r.scope,
                clip(&r.text, 80)
            ))?;
            if r.status == memledger_engine::validity::ReadStatus::Scheduled {
                out.line(format!("    scheduled from {}", r.valid_from.to_human()))?;
            }
            if let Some(t) = r.expires_at {
                out.line(format!("    expires {}", t.to_human()))?;
            }
            for s in &r.scheduled {
                out.line(format!("    from {}: {}", s.valid_from.to_human(), clip(&s.text, 80)))?;
            }
            for c in &r.co_enrichments {
                out.line(format!("    with {}: {}", c.memory_id.short(), clip(&c.text, 80)))?;
            }
        }
        if found.results.is_empty() {
            out.line("no memories match")?;
        }
        if let Some(notice) = &found.notice {
            out.line(format!("\nnotice: {notice}"))?;
        }
        Ok(())
    }
}
