//! `memledger log`: the ledger's events.

use memledger_engine::{Caller, Memledger};
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
    /// Only events this principal appended (`owner` for the store's owner).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Log(LogQuery { since: args.since, limit: args.limit, memory: args.memory, by: args.by }), out)
}

pub fn execute(ml: &Memledger, caller: &Caller, q: &LogQuery, out: &mut Output) -> Result<(), CliError> {
    let memory = q.memory.as_deref().map(|m| ml.resolve_memory_id(m)).transpose()?;
    let keep = |e: &memledger_schemas::Event| -> Result<bool, memledger_engine::EngineError> {
        let by = e.principal.as_deref().unwrap_or(memledger_schemas::OWNER);
        if q.by.as_deref().is_some_and(|wanted| wanted != by) {
            return Ok(false);
        }
        visible(ml, caller, e)
    };
    for e in ml.log_kept(q.since, q.limit, memory, &keep)? {
        if out.json {
            out.json_line(&e)?;
        } else {
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
    }
    Ok(())
}

/// Whether `caller` may read event `e`: every memory it names is in a scope it may read; a
/// principal's event, for who administers the store or the principal it is about; an event
/// that names nothing (an erasure of nothing, a transcript's progress with no memory), for who
/// administers the store or appended it.
pub fn visible(
    ml: &Memledger,
    caller: &Caller,
    e: &memledger_schemas::Event,
) -> Result<bool, memledger_engine::EngineError> {
    let access = caller.access();
    if access.reads_everything() && access.administers_store() {
        return Ok(true);
    }
    if let Some(name) = e.body.principal_named() {
        return Ok(access.administers_store() || name == caller.name());
    }
    let ids = e.body.memory_ids();
    if ids.is_empty() {
        return Ok(access.administers_store() || e.principal.as_deref() == Some(caller.name()));
    }
    for id in ids {
        if !access.reads(&ml.scope_of(id)?.unwrap_or_default()) {
            return Ok(false);
        }
    }
    Ok(true)
}
