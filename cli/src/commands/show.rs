//! `memledger show`: one memory.

use memledger_engine::reads::MemoryView;

use memledger_server::api::{Call, ShowQuery};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};

/// Show one memory: its text, lineage position, status and conflicts.
///
/// Example: memledger show 43c1a0
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A memory id or a unique prefix of 6+ digits.
    pub id: String,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    #[arg(long, value_name = "SEQ|RFC3339")]
    pub as_of: Option<String>,
    /// Its status at this time (what was, or will be, true then); default: the --as-of time,
    /// else now.
    #[arg(long, value_name = "RFC3339")]
    pub valid_at: Option<String>,
}

/// A memory's human text.
impl Render for MemoryView {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        out.line(format!(
            "{}  v{}  {}  {}  {}",
            self.memory_id, self.version, self.status, self.memory_type, self.scope
        ))?;
        match &self.erased {
            Some(mark) => out.line(format!("  {}", mark.describe()))?,
            None => out.line(format!("  {}", self.text.replace('\n', "\n  ")))?,
        }
        out.line(format!(
            "  root {}  asserted {} by {} ({})  cause {}",
            self.root_id.short(),
            self.asserted_at.to_human(),
            self.principal,
            self.authority,
            self.cause
        ))?;
        if let Some(e) = &self.evidence {
            let when = e.observed_at.map(|t| format!(", said {}", t.to_human())).unwrap_or_default();
            out.line(format!("  from {} lines {}-{} ({}{when})", e.file, e.first_line, e.last_line, e.agent))?;
        }
        if let Some(t) = self.effective_at {
            out.line(format!("  effective {}", t.to_human()))?;
        }
        out.line(format!("  valid {}", interval(self.valid_from, self.valid_to)))?;
        if let Some(t) = self.expires_at {
            let verb =
                if self.status == memledger_engine::validity::ReadStatus::Expired { "expired" } else { "expires" };
            let ttl = self.ttl_seconds.map(|s| format!(" (time to live {})", ttl_words(s))).unwrap_or_default();
            out.line(format!("  {verb} {}{ttl}", t.to_human()))?;
        }
        let sources = if self.sources.is_empty() { String::new() } else { format!(" ({})", self.sources.join(", ")) };
        out.line(format!(
            "  independent sources {}{sources}  merged observations {}",
            self.independent_sources, self.merged_count
        ))?;
        if let Some(t) = self.stale_since {
            out.line(format!("  stale since {}", t.to_human()))?;
        }
        if !self.conflicts_with.is_empty() {
            let ids: Vec<String> = self.conflicts_with.iter().map(|i| i.short()).collect();
            out.line(format!("  conflicts with {}", ids.join(", ")))?;
        }
        if !self.co_enriches.is_empty() {
            let ids: Vec<String> = self.co_enriches.iter().map(|i| i.short()).collect();
            out.line(format!("  co-enriches {} (each adds its own detail to one earlier version)", ids.join(", ")))?;
        }
        Ok(())
    }
}

/// A time to live for people: `7d`, `12h`, `90m`, `45s` (the largest unit that divides it).
pub fn ttl_words(seconds: u64) -> String {
    for (unit, size) in [("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60)] {
        if seconds.is_multiple_of(size) {
            return format!("{}{unit}", seconds / size);
        }
    }
    format!("{seconds}s")
}

/// A validity interval for people: `2026-06-01T00:00:00Z → 2027-01-10T00:00:00Z`, open-ended
/// as `→ open`, empty as `never (withdrawn)`.
pub fn interval(from: memledger_schemas::Timestamp, to: Option<memledger_schemas::Timestamp>) -> String {
    match to {
        Some(to) if to <= from => "never (withdrawn)".to_string(),
        Some(to) => format!("{} → {}", from.to_human(), to.to_human()),
        None => format!("{} → open", from.to_human()),
    }
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let q = ShowQuery { id: args.id, as_of: args.as_of, valid_at: args.valid_at };
    memledger_commands::memories::check_show(&q)?;
    ctx.run(Call::Show(q), out)
}
