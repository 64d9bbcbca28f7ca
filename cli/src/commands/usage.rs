//! `memledger usage`: the chat model's tokens counted in the store, today and this month, by
//! principal, beside the daily budget (`MEMLEDGER_DAILY_TOKENS`, `[models] daily_tokens`).

use memledger_engine::models::TokenUsage;
use memledger_engine::{Caller, Memledger};
use memledger_server::api::{Call, Empty};
use serde_json::json;

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

/// Tokens as the documents give them: `prompt_tokens`, `completion_tokens`, `total_tokens`, `calls`.
fn tokens(u: &TokenUsage) -> serde_json::Value {
    json!({
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "total_tokens": u.total(),
        "calls": u.calls,
    })
}

pub fn execute(ml: &Memledger, caller: &Caller, out: &mut Output) -> Result<(), CliError> {
    let report = ml.usage(memledger_schemas::Timestamp::now())?;
    let me = &caller.principal.name;
    let mine = report.by_principal.iter().find(|p| &p.principal == me).cloned().unwrap_or_default();
    let report = if caller.access().administers_store() { report } else { report.only(me) };
    let budget = daily_budget()?;
    if out.json {
        let by: Vec<_> = report
            .by_principal
            .iter()
            .map(|p| json!({"principal": p.principal, "today": tokens(&p.today), "month": tokens(&p.month)}))
            .collect();
        return out.json_line(&json!({
            "day": report.day,
            "month": report.month,
            "today": tokens(&report.today),
            "this_month": tokens(&report.this_month),
            "by_principal": by,
            "yours": {"principal": me, "today": tokens(&mine.today), "month": tokens(&mine.month)},
            "daily_budget": budget,
        }));
    }
    let t = |u: &TokenUsage| {
        format!(
            "{} tokens ({} prompt, {} completion) in {} calls",
            u.total(),
            u.prompt_tokens,
            u.completion_tokens,
            u.calls
        )
    };
    out.line(format!("today ({}): {}", report.day, t(&report.today)))?;
    out.line(format!("this month ({}): {}", report.month, t(&report.this_month)))?;
    for p in &report.by_principal {
        out.line(format!("  {}: today {}, this month {}", p.principal, p.today.total(), p.month.total()))?;
    }
    match budget {
        Some(b) => out.line(format!("daily budget: {b} tokens a principal"))?,
        None => out.line("daily budget: none (MEMLEDGER_DAILY_TOKENS, or [models] daily_tokens)")?,
    }
    Ok(())
}
