//! `memledger stats`: the store at a glance, one command per view of it. Each is a variant of
//! [`Command`], flattened into the top-level commands: a new read of this kind is added here,
//! beside its command layer function.

use memledger_commands::answer::StatsDoc;
use memledger_commands::store::ScopesDoc;
use memledger_server::api::{Call, Empty};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Counts of events, memories by status and type, conflicts by status (of the scopes the
    /// caller may read).
    Stats(Args),
    /// The scopes you may read that hold active memories, and how many each holds.
    Scopes(Args),
}

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(ctx: &Context, command: Command, out: &mut Output) -> Result<(), CliError> {
    let call = match command {
        Command::Stats(Args {}) => Call::Stats(Empty {}),
        Command::Scopes(Args {}) => Call::Scopes(Empty {}),
    };
    ctx.run(call, out)
}

/// Counts for people.
impl Render for StatsDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        let s = &self.stats;
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
        if let Some(v) = &self.last_verify {
            let verdict =
                if v.ok { "ok".to_string() } else { format!("FAILED: {}", v.problem.clone().unwrap_or_default()) };
            out.line(format!("verified   {} {verdict}", v.at))?;
        }
        Ok(())
    }
}

/// A scope a line, with its active memories.
impl Render for ScopesDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        if self.scopes.is_empty() {
            return out.line("no active memories in a scope you may read");
        }
        let width = self.scopes.iter().map(|s| s.scope.len()).max().unwrap_or(0);
        for s in &self.scopes {
            out.line(format!("{:<width$}  {}", s.scope, s.memories))?;
        }
        Ok(())
    }
}
