//! `memledger list`: memories by type, scope and status.

use memledger_engine::validity::ReadStatus;

use memledger_commands::answer::ListDoc;
use memledger_server::api::{Call, ListQuery};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output, clip};
use crate::style;

/// List memories, newest first.
///
/// Example: memledger list --type preference --status all --limit 20
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long = "type", value_name = "TYPE")]
    pub memory_type: Option<String>,
    #[arg(long)]
    pub scope: Option<String>,
    /// Only the memories saved with this fact key (`save --fact-key`).
    #[arg(long, value_name = "KEY")]
    pub fact_key: Option<String>,
    /// active, scheduled, stale, expired, retired, proposed or all: the status at the --valid-at
    /// time.
    #[arg(long, default_value = "active")]
    pub status: String,
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    #[arg(long, value_name = "SEQ|RFC3339")]
    pub as_of: Option<String>,
    /// Statuses at this time (what was, or will be, true then); default: the --as-of time,
    /// else now.
    #[arg(long, value_name = "RFC3339")]
    pub valid_at: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let q = ListQuery {
        memory_type: args.memory_type,
        scope: args.scope,
        fact_key: args.fact_key,
        status: args.status,
        limit: args.limit,
        as_of: args.as_of,
        valid_at: args.valid_at,
    };
    memledger_commands::memories::check_list(&q)?;
    ctx.run(Call::List(q), out)
}

/// An aligned table of memories for people.
impl Render for ListDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        let memories = &self.memories;
        // An aligned table; `!` marks a memory in a pending conflict.
        let width = |f: &dyn Fn(&memledger_engine::reads::MemoryView) -> usize, title: &str| {
            memories.iter().map(f).max().unwrap_or(0).max(title.chars().count())
        };
        let wv = width(&|m| format!("v{}", m.version).len(), "VER");
        let ws = width(&|m| m.status.as_str().len(), "STATUS");
        let wt = width(&|m| m.memory_type.as_str().len(), "TYPE");
        let wc = width(&|m| m.scope.chars().count(), "SCOPE");
        if !memories.is_empty() {
            let head =
                format!("  {:<12}  {:<wv$}  {:<ws$}  {:<wt$}  {:<wc$}  TEXT", "ID", "VER", "STATUS", "TYPE", "SCOPE");
            out.line(style::bold(&head))?;
        }
        for m in memories {
            let flag = if m.conflicts_with.is_empty() { " ".to_string() } else { style::yellow("!") };
            let status = m.status.as_str();
            let painted = match m.status {
                ReadStatus::Active => style::green(status),
                ReadStatus::Scheduled => style::yellow(status),
                ReadStatus::Retired => style::red(status),
                ReadStatus::Stale | ReadStatus::Expired => style::dim(status),
                ReadStatus::Proposed => style::yellow(status),
            };
            let id = m.memory_id.short();
            out.line(format!(
                "{flag} {}  {:<wv$}  {}  {:<wt$}  {:<wc$}  {}",
                style::pad(&style::cyan(&id), id.chars().count(), 12),
                format!("v{}", m.version),
                style::pad(&painted, status.len(), ws),
                m.memory_type.as_str(),
                m.scope,
                clip(&m.text, 80)
            ))?;
        }
        if memories.is_empty() {
            out.line("no memories")?;
        }
        Ok(())
    }
}
