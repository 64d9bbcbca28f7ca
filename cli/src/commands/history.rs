//! `memledger history`: every version of a belief, newest first.

use crate::app::Context;
use crate::output::{CliError, Output, clip};

/// Show the versions of a belief, newest first; any version's id works.
///
/// Example: memledger history 43c1a0
#[derive(clap::Args, Debug)]
pub struct Args {
    pub id: String,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    #[arg(long, value_name = "SEQ|RFC3339")]
    pub as_of: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let point = args.as_of.as_deref().map(str::parse::<memledger_engine::AsOf>).transpose()?;
    let live = ctx.open(false)?;
    let ml = live.as_of(point)?;
    let id = ml.resolve_memory_id(&args.id)?;
    let h = ml.history(id)?;
    if out.json {
        return out.json_line(&h);
    }
    for v in &h.versions {
        let mark = if v.status == memledger_schemas::Status::Active { "*" } else { " " };
        out.line(format!(
            "{mark} v{:<2} {}  {}  ({}, {})",
            v.version,
            v.asserted_at.to_human(),
            clip(&v.text, 80),
            v.status,
            v.cause
        ))?;
    }
    Ok(())
}
