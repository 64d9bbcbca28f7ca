//! `memledger stats`: counts.

use memledger_engine::{Caller, Memledger};
use memledger_server::api::{Call, Empty};

use crate::app::Context;
use crate::output::{CliError, Output};

/// Counts of events, memories by status and type, conflicts by status (of the scopes the
/// caller may read).
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(ctx: &Context, _args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Stats(Empty {}), out)
}

pub fn execute(ml: &Memledger, caller: &Caller, out: &mut Output) -> Result<(), CliError> {
    let s = ml.stats_in(&caller.access().readable())?;
    if out.json {
        return out.json_line(&s);
    }
    out.line(format!("events     {}", s.events))?;
    for (k, v) in &s.memories {
        out.line(format!("memories   {k:<10} {v}"))?;
    }
    for (k, v) in &s.by_type {
        out.line(format!("active     {k:<10} {v}"))?;
    }
    for (k, v) in &s.conflicts {
        out.line(format!("conflicts  {k:<10} {v}"))?;
    }
    Ok(())
}
