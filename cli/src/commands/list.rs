//! `memledger list`: memories by type, scope and status.

use memledger_schemas::Status;
use serde_json::json;

use crate::app::Context;
use crate::output::{CliError, Output, clip};

/// List memories, newest first.
///
/// Example: memledger list --type preference --status all --limit 20
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long = "type", value_name = "TYPE")]
    pub memory_type: Option<String>,
    #[arg(long)]
    pub scope: Option<String>,
    /// active, stale, retired or all.
    #[arg(long, default_value = "active")]
    pub status: String,
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    #[arg(long, value_name = "SEQ|RFC3339")]
    pub as_of: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let memory_type = args.memory_type.as_deref().map(memledger_engine::input::parse_type).transpose()?;
    let status = match args.status.as_str() {
        "all" => None,
        s => Some(s.parse::<Status>().map_err(CliError::bad_input)?),
    };
    let point = args.as_of.as_deref().map(str::parse::<memledger_engine::AsOf>).transpose()?;
    let live = ctx.open(false)?;
    let ml = live.as_of(point)?;
    let memories = ml.list(memory_type, args.scope.as_deref(), status, args.limit)?;
    if out.json {
        return out.json_line(&json!({ "memories": memories }));
    }
    for m in &memories {
        let flag = if m.conflicts_with.is_empty() { " " } else { "!" };
        out.line(format!(
            "{} {}  v{:<2} {:<8} {:<10} {}",
            flag,
            m.memory_id.short(),
            m.version,
            m.status.as_str(),
            m.memory_type.as_str(),
            clip(&m.text, 80)
        ))?;
    }
    if memories.is_empty() {
        out.line("no memories")?;
    }
    Ok(())
}
