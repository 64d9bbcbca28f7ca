//! `memledger import`: append an exported stream, all or nothing.

use std::io::BufReader;

use memledger_engine::Memledger;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Import an exported stream into this store (empty, or sharing its prefix). The whole chain is
/// verified first; a tampered, reordered or diverging stream writes nothing. A stream whose
/// memories hold what looks like a credential is refused whole (exit 2), each such line named
/// with the rule it matched: a chain cannot skip lines, so nothing is imported.
/// `memledger import sessions` imports memories from agents' transcripts instead.
///
/// Example: memledger --dir ./restored import backup.jsonl
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The stream (`-` reads standard input).
    #[arg(required = true)]
    pub file: Option<String>,
    /// Import even if the stream's memories hold what looks like credentials.
    #[arg(long)]
    pub allow_secret: bool,
}

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    Sessions(super::sessions::Args),
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    if let Some(Command::Sessions(a)) = args.command {
        return super::sessions::run(ctx, a, out);
    }
    let file = args.file.unwrap_or_default();
    let mut bytes = Vec::new();
    if file == "-" {
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)?;
    } else {
        bytes = std::fs::read(&file).map_err(|e| CliError::bad_input(format!("cannot read {file}: {e}")))?;
    }
    // Read and check the whole stream before the store is opened (or created).
    let stream = memledger_engine::read_stream(&mut BufReader::new(bytes.as_slice()))
        .map_err(memledger_engine::EngineError::from)?;
    if !args.allow_secret {
        memledger_engine::input::refuse_secrets_in_stream(&stream)?;
    }
    if let Some(mut server) = ctx.server(true)? {
        drop(stream);
        let reply = server.import(ctx, bytes, args.allow_secret)?;
        return crate::backend::print_import_reply(&reply, out);
    }
    let ml = ctx.open_direct(true)?;
    import(&ml, stream, out)
}

fn import(ml: &Memledger, stream: memledger_engine::Stream, out: &mut Output) -> Result<(), CliError> {
    let bar = crate::style::progress(None, "importing");
    bar.set_position(stream.len() as u64);
    bar.set_message("importing events");
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    let report = ml.import_stream(stream);
    bar.finish_and_clear();
    render(out, &report?)
}

pub fn render(out: &mut Output, report: &memledger_engine::ImportReport) -> Result<(), CliError> {
    if out.json {
        return out.json_line(report);
    }
    out.line(format!(
        "imported {} new event(s); {} already present; head at seq {}",
        report.appended, report.already_present, report.head_seq
    ))
}
