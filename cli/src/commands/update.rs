//! `memledger update`: an explicit edit, a new version unconditionally.

use memledger_engine::{Caller, Memledger};
use memledger_server::api::{Call, UpdateBody};

use crate::app::Context;
use crate::output::{CliError, Output};

/// Edit a belief: the text becomes its next version. With --expect-version, only if the current
/// version is N (otherwise exit 3, nothing written).
///
/// Example: memledger update 43c1a0 "the staging db runs on Postgres 17" --expect-version 2
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Any version's id (or a unique prefix of 6+ digits).
    pub id: String,
    /// The new text (`-` reads standard input).
    pub text: String,
    #[arg(long, value_name = "N")]
    pub expect_version: Option<u32>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let text = super::text_arg(&args.text)?;
    memledger_engine::input::validate_text(&text)?;
    ctx.run(Call::Update(UpdateBody { id: args.id, text, expect_version: args.expect_version }), out)
}

pub fn execute(ml: &Memledger, caller: &Caller, b: &UpdateBody, out: &mut Output) -> Result<(), CliError> {
    memledger_engine::input::validate_text(&b.text)?;
    let id = ml.resolve_memory_id(&b.id)?;
    let r = ml.update_by(id, &b.text, b.expect_version, caller)?;
    if out.json {
        return out.json_line(&r);
    }
    out.line(format!("versioned  {}  v{} (replaces {})", r.memory_id.short(), r.version, r.replaces.short()))
}
