//! `memledger log`: the ledger's events.

use memledger_engine::Memledger;
use memledger_server::api::{Call, LogQuery};

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
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Log(LogQuery { since: args.since, limit: args.limit, memory: args.memory }), out)
}

pub fn execute(ml: &Memledger, q: &LogQuery, out: &mut Output) -> Result<(), CliError> {
    let memory = q.memory.as_deref().map(|m| ml.resolve_memory_id(m)).transpose()?;
    for e in ml.log(q.since, q.limit, memory)? {
        if out.json {
            out.json_line(&e)?;
        } else {
            let erased = e
                .erased
                .as_ref()
                .map_or_else(String::new, |mark| format!("  [erased at {}, by {}]", mark.at.to_human(), mark.actor));
            out.line(format!(
                "{:>6}  {}  {:<20} {}{erased}",
                e.seq,
                e.recorded_at.to_human(),
                e.body.type_name(),
                e.actor
            ))?;
        }
    }
    Ok(())
}
