//! `memledger log`: the ledger's events.

use memledger_server::api::{Call, LogQuery};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};

/// Show ledger events, oldest first (JSON Lines with --json).
///
/// Example: memledger log --since 100 --limit 20
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, default_value_t = 1)]
    pub since: u64,
    #[arg(long, default_value_t = 1000)]
    pub limit: usize,
    /// Only events naming this memory.
    #[arg(long, value_name = "ID")]
    pub memory: Option<String>,
    /// Only events this principal appended (`owner` for the store's owner).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Log(LogQuery { since: args.since, limit: args.limit, memory: args.memory, by: args.by }), out)
}

/// The events for people, a line each.
impl Render for Vec<memledger_schemas::Event> {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        for e in self {
            let erased = e
                .erased
                .as_ref()
                .map_or_else(String::new, |mark| format!("  [erased at {}, by {}]", mark.at.to_human(), mark.actor));
            let by = e.principal.as_deref().map(|p| format!("{p} as ")).unwrap_or_default();
            out.line(format!(
                "{:>6}  {}  {:<20} {by}{}{erased}",
                e.seq,
                e.recorded_at.to_human(),
                e.body.type_name(),
                e.actor
            ))?;
        }
        Ok(())
    }
}
