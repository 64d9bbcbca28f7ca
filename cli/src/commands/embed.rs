//! `memledger embed`: embed the active memories that have no vector of the configured model.

use memledger_engine::models::embed::EmbedReport;
use memledger_server::api::{AutoBody, Call};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};

/// Embed active memories that have no vector of the configured embedding model yet.
///
/// Needed after the embedding model changed, or for memories saved before an embedder was
/// configured: until then they are neither embedding candidates when saving nor found by the
/// cosine half of `recall`. Writes only the vector cache, never the ledger. Needs
/// MEMLEDGER_EMBED_URL and MEMLEDGER_EMBED_MODEL (docs/models.md).
///
/// Example: memledger embed --dry-run
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Count what would be embedded; call nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Embed(AutoBody { dry_run: args.dry_run }), out)
}

impl Render for EmbedReport {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        let done = if self.dry_run {
            format!("would embed {} text(s)", self.texts)
        } else {
            format!("embedded {} text(s)", self.embedded)
        };
        out.line(format!(
            "{done} with {}: {} active memories, {} already had a vector, {} had none",
            self.model, self.active, self.already, self.missing
        ))
    }
}
