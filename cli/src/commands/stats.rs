//! `memledger stats`: counts.

use memledger_commands::answer::StatsDoc;
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

/// Counts for people.
pub fn render(out: &mut Output, doc: &StatsDoc) -> Result<(), CliError> {
    let s = &doc.stats;
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
    if let Some(v) = &doc.last_verify {
        let verdict =
            if v.ok { "ok".to_string() } else { format!("FAILED: {}", v.problem.clone().unwrap_or_default()) };
        out.line(format!("verified   {} {verdict}", v.at))?;
    }
    Ok(())
}
