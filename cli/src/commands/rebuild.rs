//! `memledger rebuild`: drop and replay projections.

use std::time::Instant;

use serde_json::json;

use memledger_engine::Memledger;
use memledger_server::api::{Call, RebuildBody};

use crate::app::Context;
use crate::output::{CliError, Output};

/// Drop the views and replay them from the ledger.
///
/// Example: memledger rebuild --view beliefs
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this view (beliefs, edges, conflicts, audit, text).
    #[arg(long, value_name = "NAME")]
    pub view: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Rebuild(RebuildBody { view: args.view }), out)
}

pub fn execute(ml: &Memledger, b: &RebuildBody, out: &mut Output) -> Result<(), CliError> {
    let only: Option<Vec<&str>> = b.view.as_deref().map(|v| vec![v]);
    let views: Vec<String> = match &only {
        Some(v) => v.iter().map(|s| s.to_string()).collect(),
        None => ml.views().names().iter().chain(["text"].iter()).map(|s| s.to_string()).collect(),
    };
    let started = Instant::now();
    let bar = crate::style::progress(Some(ml.ledger().head().seq), "rebuilding");
    let events = ml.rebuild(only.as_deref(), &mut |n| bar.set_position(n))?;
    bar.finish_and_clear();
    let elapsed_ms = started.elapsed().as_millis() as u64;
    if out.json {
        return out.json_line(&json!({"events": events, "views": views, "elapsed_ms": elapsed_ms}));
    }
    out.line(format!("rebuilt {} from {events} events in {elapsed_ms} ms", views.join(", ")))
}
