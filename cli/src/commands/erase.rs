//! `memledger erase`: remove a memory's text from the store for good, keeping the proof that it
//! was there (docs/adr/0017-erasure.md).

use memledger_engine::erase::{EraseResult, parse_retired_before};

use memledger_server::api::{Call, EraseBody};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};

/// Erase a memory's text (every version's with --lineage) from every event, view, index and cache
/// and from the store's files; an erasure event records who, when, why and what (ids and content
/// hashes), never the text. `verify` still proves the chain. Exports already made are not
/// reached: --dry-run lists them, with everything else the erasure would touch.
///
/// With --retired-before DATE instead of an id, erase every version that went stale or was
/// retired (forgotten) before DATE, for a store with a retention policy; active versions stay.
///
/// Example: memledger erase 43c1a0 --lineage --reason "saved a customer's address" --dry-run
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A memory id or a unique prefix of 6+ digits.
    #[arg(required_unless_present = "retired_before")]
    pub id: Option<String>,
    /// Erase every version of the memory's lineage.
    #[arg(long)]
    pub lineage: bool,
    /// Erase every version stale or retired before this date (YYYY-MM-DD, midnight UTC, or an
    /// RFC 3339 time), instead of one memory.
    #[arg(long, value_name = "DATE", conflicts_with_all = ["id", "lineage"])]
    pub retired_before: Option<String>,
    /// Why (recorded on the erasure event).
    #[arg(long)]
    pub reason: Option<String>,
    /// List what would be erased; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    // A bad date is refused before the store is opened.
    if let Some(date) = &args.retired_before {
        parse_retired_before(date)?;
    }
    let body = EraseBody {
        id: args.id.unwrap_or_default(),
        retired_before: args.retired_before,
        lineage: args.lineage,
        reason: args.reason,
        dry_run: args.dry_run,
    };
    ctx.run(Call::Erase(body), out)
}

impl Render for EraseResult {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        if self.memories.is_empty() {
            return out.line("nothing went stale or was retired before that date: nothing to erase");
        }
        print(out, self)
    }
}

fn print(out: &mut Output, r: &EraseResult) -> Result<(), CliError> {
    let verb = if r.dry_run { "would erase" } else { "erased" };
    let ids: Vec<String> = r.memories.iter().map(|m| m.short()).collect();
    out.line(format!("{verb}  {} memor{}: {}", ids.len(), if ids.len() == 1 { "y" } else { "ies" }, ids.join(", ")))?;
    out.line(format!("  texts in {} events", r.events.len()))?;
    if !r.conflicts.is_empty() {
        let ids: Vec<String> = r.conflicts.iter().map(|c| c.short()).collect();
        out.line(format!("  reasons of {} conflict(s): {}", ids.len(), ids.join(", ")))?;
    }
    if !r.edges.is_empty() {
        out.line(format!("  {} edge(s) stay (ids only)", r.edges.len()))?;
    }
    for export in &r.exports_since {
        out.line(format!(
            "  exported {} (seqs {}–{}): that copy is outside the store and keeps the text",
            export.at.to_human(),
            export.since,
            export.through
        ))?;
    }
    if let Some(seq) = r.erasure_seq {
        out.line(format!("  recorded at seq {seq}; the store's files were rewritten without the texts"))?;
    }
    Ok(())
}
