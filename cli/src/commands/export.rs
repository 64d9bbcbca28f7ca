//! `memledger export`: the event stream as JSON Lines.

use crate::app::Context;
use crate::output::{CliError, Output};
use memledger_engine::error::Exit;

/// Export the event stream as JSON Lines (to stdout, or -o FILE).
///
/// A principal that does not read every scope gets the events it may read (a stream with gaps:
/// no store imports it); the store's owner gets the whole chain.
///
/// Example: memledger export -o backup.jsonl
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The first seq to export (resume a stream with the last seq it printed, plus one).
    #[arg(long, default_value_t = 1)]
    pub since: u64,
    /// Keep printing events as they are appended, one JSON line each, until the reader goes away.
    #[arg(long, conflicts_with = "output")]
    pub follow: bool,
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

/// Counts the lines written, for the progress bar.
struct Counting<'a, W: std::io::Write + ?Sized> {
    inner: &'a mut W,
    bar: indicatif::ProgressBar,
}

impl<W: std::io::Write + ?Sized> std::io::Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bar.inc(buf[..n].iter().filter(|b| **b == b'\n').count() as u64);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Where the stream comes from: the store's server, or the store opened here (for a caller).
enum Source {
    Server(crate::backend::Server),
    Store(crate::backend::Opened, memledger_engine::Caller),
}

impl Source {
    fn export(&mut self, since: u64, out: &mut dyn std::io::Write) -> Result<(), CliError> {
        match self {
            Source::Server(s) => s.export(since, out),
            Source::Store(ml, caller) => {
                memledger_commands::host::export(ml, since, caller, out).map(|_| ()).map_err(CliError::from)
            }
        }
    }
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    if args.follow {
        return follow(ctx, args.since, out);
    }
    let (mut source, total) = match ctx.server(false)? {
        Some(server) => (Source::Server(server), None),
        None => {
            let call = memledger_server::api::Call::Verify(memledger_server::api::Empty {});
            let ml = ctx.open_for(&call, out)?;
            let total = (ml.ledger().head().seq + 1).saturating_sub(args.since.max(1));
            let caller = ctx.caller(&ml)?;
            (Source::Store(ml, caller), Some(total))
        }
    };
    let bar = crate::style::progress(total, "exporting");
    match &args.output {
        Some(path) => {
            let tmp = path.with_extension("partial");
            let file = std::fs::File::create(&tmp)
                .map_err(|e| CliError::new(Exit::Failure, format!("cannot write {}: {e}", tmp.display()), None))?;
            let mut w = std::io::BufWriter::new(file);
            source.export(args.since, &mut Counting { inner: &mut w, bar: bar.clone() })?;
            let n = bar.position();
            bar.finish_and_clear();
            w.into_inner().map_err(|e| CliError::from(e.into_error()))?.sync_all()?;
            std::fs::rename(&tmp, path)?;
            if !out.json {
                eprintln!("exported {n} events to {}", path.display());
            }
            Ok(())
        }
        None => {
            source.export(args.since, &mut Counting { inner: out.writer(), bar: bar.clone() })?;
            bar.finish_and_clear();
            Ok(())
        }
    }
}

/// `export --follow`: every event from `since` on, one JSON line each, as they are appended.
fn follow(ctx: &Context, since: u64, out: &mut Output) -> Result<(), CliError> {
    crate::follow::follow(ctx, since, false, &mut |events| {
        for event in events {
            out.json_line(event)?;
        }
        out.flush()
    })
}
