//! `memledger forget`: retire a belief.

use crate::app::Context;
use crate::output::{CliError, Output};

/// Retire a belief: it leaves recall and dedup and stays in history.
///
/// Example: memledger forget 43c1a0 --reason "moved off the project"
#[derive(clap::Args, Debug)]
pub struct Args {
    pub id: String,
    #[arg(long)]
    pub reason: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let ml = ctx.open(false)?;
    let id = ml.resolve_memory_id(&args.id)?;
    let r = ml.forget(id, args.reason, &ctx.actor)?;
    if out.json {
        return out.json_line(&r);
    }
    out.line(format!("retired  {}", r.memory_id.short()))
}
