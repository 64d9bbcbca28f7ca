//! `memledger forget`: retire a belief.

use memledger_engine::{Caller, Memledger};
use memledger_server::api::{Call, ForgetBody};

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
    ctx.run(Call::Forget(ForgetBody { id: args.id, reason: args.reason }), out)
}

pub fn execute(ml: &Memledger, caller: &Caller, b: &ForgetBody, out: &mut Output) -> Result<(), CliError> {
    let id = ml.resolve_memory_id(&b.id)?;
    let r = ml.forget_by(id, b.reason.clone(), caller)?;
    if out.json {
        return out.json_line(&r);
    }
    out.line(format!("retired  {}", r.memory_id.short()))
}
