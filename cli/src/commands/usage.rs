//! `memledger usage`: the chat model's tokens counted in the store, today and this month, by
//! principal, beside the daily budget (`MEMLEDGER_DAILY_TOKENS`, `[models] daily_tokens`).

use memledger_commands::answer::{Tokens, UsageDoc};
use memledger_server::api::{Call, Empty};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};

/// The chat model's tokens today and this month (UTC), of every principal for the store's
/// administrators and of one's own for any other, and the daily budget `import sessions`, its
/// hook and `conflicts auto` stop at.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(ctx: &Context, _args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Usage(Empty {}), out)
}

/// The daily budget of tokens per principal, if one is set: `MEMLEDGER_DAILY_TOKENS`, else the
/// config file's `[models] daily_tokens`.
pub fn daily_budget() -> Result<Option<u64>, CliError> {
    crate::config::model_setting("MEMLEDGER_DAILY_TOKENS")
        .map(|v| {
            v.trim().parse::<u64>().map_err(|_| {
                CliError::bad_input(format!("MEMLEDGER_DAILY_TOKENS (or [models] daily_tokens): not a number: {v:?}"))
            })
        })
        .transpose()
}

impl Render for UsageDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        let t = |u: &Tokens| {
            format!(
                "{} tokens ({} prompt, {} completion) in {} calls",
                u.total_tokens, u.prompt_tokens, u.completion_tokens, u.calls
            )
        };
        out.line(format!("today ({}): {}", self.day, t(&self.today)))?;
        out.line(format!("this month ({}): {}", self.month, t(&self.this_month)))?;
        for p in &self.by_principal {
            out.line(format!(
                "  {}: today {}, this month {}",
                p.principal, p.today.total_tokens, p.month.total_tokens
            ))?;
        }
        match self.daily_budget {
            Some(b) => out.line(format!("daily budget: {b} tokens a principal")),
            None => out.line("daily budget: none (MEMLEDGER_DAILY_TOKENS, or [models] daily_tokens)"),
        }
    }
}
