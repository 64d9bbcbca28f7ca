//! `memledger import`: append an exported stream, all or nothing.

use std::io::BufReader;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Import an exported stream into this store (empty, or sharing its prefix). The whole chain is
/// verified first; a tampered, reordered or diverging stream writes nothing.
///
/// Example: memledger --dir ./restored import backup.jsonl
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The stream (`-` reads standard input).
    pub file: String,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let mut reader: Box<dyn std::io::BufRead> = if args.file == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(
            std::fs::File::open(&args.file)
                .map_err(|e| CliError::bad_input(format!("cannot read {}: {e}", args.file)))?,
        ))
    };
    // Read and check the whole stream before the store is opened (or created).
    let stream = memledger_engine::read_stream(&mut reader).map_err(memledger_engine::EngineError::from)?;
    let ml = ctx.open(true)?;
    let bar = crate::style::progress(None, "importing");
    bar.set_position(stream.len() as u64);
    bar.set_message("importing events");
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    let report = ml.import_stream(stream);
    bar.finish_and_clear();
    let report = report?;
    if out.json {
        return out.json_line(&report);
    }
    out.line(format!(
        "imported {} new event(s); {} already present; head at seq {}",
        report.appended, report.already_present, report.head_seq
    ))
}
