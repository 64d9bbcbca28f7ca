//! `memledger rebuild`: drop and replay projections.

use memledger_commands::answer::RebuildDoc;
use memledger_server::api::{Call, RebuildBody};

use super::Render;
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

impl Render for RebuildDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        out.line(format!("rebuilt {} from {} events in {} ms", self.views.join(", "), self.events, self.elapsed_ms))
    }
}
