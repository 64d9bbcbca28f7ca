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
    let last_verify = ml.last_verification()?;
    if out.json {
        let mut doc = serde_json::to_value(&s).map_err(std::io::Error::from)?;
        doc["last_verify"] = serde_json::to_value(&last_verify).map_err(std::io::Error::from)?;
        return out.json_line(&doc);
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
    if let Some(v) = last_verify {
        let verdict = if v.ok { "ok".to_string() } else { format!("FAILED: {}", v.problem.unwrap_or_default()) };
        out.line(format!("verified   {} {verdict}", v.at))?;
    }
    Ok(())
}
