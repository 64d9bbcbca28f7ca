//! `memledger forget`: retire a belief.

use memledger_engine::resolve::ForgetResult;
use memledger_server::api::{Call, ForgetBody};

use super::Render;
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

impl Render for ForgetResult {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        out.line(format!("retired  {}", self.memory_id.short()))
    }
}
