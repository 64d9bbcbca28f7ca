//! `memledger stream`: mirror the ledger to an outside stream (a NATS JetStream subject), exactly.

use std::cell::Cell;

use memledger_engine::error::Exit;
use memledger_engine::{EventSink, SinkError};
use memledger_schemas::Event;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Publish the ledger to a NATS JetStream subject, one message per event in seq order, and keep
/// publishing events as they are appended. Each message's `Nats-Msg-Id` is the event's seq and
/// its payload the line `export` prints for it; each is stored only right after the one before
/// it, so the subject is an exact mirror. Where to resume is read from the subject's last
/// message: a streamer stopped at any point (even killed) and started again neither skips nor
/// repeats an event. The stream is created when none captures the subject.
///
/// Example: memledger stream --to nats://127.0.0.1:4222/memledger.events
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The mirror: nats://[USER:PASSWORD@]HOST:PORT[/SUBJECT] (the subject defaults to memledger.events).
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// Stop once the mirror holds every event up to the ledger's head, instead of following it.
    #[arg(long)]
    pub until_head: bool,
}

/// What a stream that stopped at the head did (`--until-head`).
#[derive(serde::Serialize)]
struct Report {
    /// The mirror (URL without a password, and its stream).
    to: String,
    /// The last event the mirror held when this streamer started (0: none).
    resumed_after: u64,
    published: u64,
    /// The last event the mirror holds now.
    head_seq: u64,
}

/// Times in a row the mirror may move under this streamer before it gives up.
const MAX_MOVES: u32 = 16;

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    // A mirror is the whole chain: the store's owner makes one (not a principal's token).
    if ctx.token.is_some() {
        return Err(CliError::new(
            Exit::NotPermitted,
            "stream mirrors the whole ledger: it runs as the store's owner, not with a principal's token",
            Some("run it without --token / MEMLEDGER_TOKEN, on the machine that holds the store".into()),
        ));
    }
    let mut sink = memledger_engine::connect_sink(&args.to).map_err(sink_error)?;
    let shared = ctx.shared_ledger()?;
    let mut published = 0u64;
    let mut resumed_after = None;
    let mut moves = 0;
    loop {
        let resume = sink.resume_point().map_err(sink_error)?;
        resumed_after.get_or_insert(resume.seq);
        if resume.seq > 0 {
            check_prefix(ctx, shared.as_deref(), sink.as_ref(), resume)?;
        }
        let moved = Cell::new(None);
        let mut mirror = resume.seq;
        let result = crate::follow::follow(ctx, resume.seq + 1, args.until_head, &mut |events: &[Event]| match sink
            .publish(events)
        {
            Ok(()) => {
                published += events.len() as u64;
                mirror = events.last().map_or(mirror, |e| e.seq);
                Ok(())
            }
            Err(e @ SinkError::Moved { .. }) => {
                moved.set(Some(e.to_string()));
                Err(CliError::new(Exit::Failure, "the mirror moved", None))
            }
            Err(e) => Err(sink_error(e)),
        });
        match (result, moved.take()) {
            (Ok(()), _) => {
                return report(
                    out,
                    Report {
                        to: sink.location(),
                        resumed_after: resumed_after.unwrap_or(0),
                        published,
                        head_seq: mirror,
                    },
                );
            }
            (Err(_), Some(message)) if moves < MAX_MOVES => {
                moves += 1;
                eprintln!("memledger: {message}; reading where it ends again");
            }
            (Err(_), Some(message)) => {
                return Err(CliError::new(
                    Exit::Failure,
                    message,
                    Some("another publisher keeps writing to the subject: give the ledger a subject of its own".into()),
                ));
            }
            (Err(e), None) => return Err(e),
        }
    }
}

/// The event the mirror ends with must be the ledger's event at that seq.
fn check_prefix(
    ctx: &Context,
    shared: Option<&dyn memledger_engine::EventLog>,
    sink: &dyn EventSink,
    resume: memledger_engine::Head,
) -> Result<(), CliError> {
    let (ours, _) = crate::follow::read(ctx, shared, resume.seq)?;
    match ours.first() {
        Some(event) if event.seq == resume.seq && event.hash == resume.hash => Ok(()),
        Some(event) if event.seq == resume.seq => Err(diverged(
            sink,
            format!("its event at seq {} is not this ledger's (another ledger's mirror?)", resume.seq),
        )),
        _ => Err(diverged(sink, format!("it holds events up to seq {}, past this ledger's head", resume.seq))),
    }
}

fn diverged(sink: &dyn EventSink, message: String) -> CliError {
    sink_error(SinkError::Diverged { location: sink.location(), message })
}

fn report(out: &mut Output, report: Report) -> Result<(), CliError> {
    if out.json {
        return out.json_line(&report);
    }
    out.line(format!(
        "published {} event(s) to {} (it held {} before); it ends at seq {}",
        report.published, report.to, report.resumed_after, report.head_seq
    ))
}

fn sink_error(e: SinkError) -> CliError {
    match e {
        SinkError::BadUrl { .. } => CliError::bad_input(e.to_string()),
        SinkError::Diverged { .. } => CliError::new(
            Exit::BadInput,
            e.to_string(),
            Some("a subject mirrors one ledger: give this one a subject of its own".into()),
        ),
        SinkError::Moved { .. } | SinkError::Failed { .. } => CliError::new(Exit::Failure, e.to_string(), None),
    }
}
