//! Following a ledger as it grows: the events from a seq on, in batches, for `export --follow`
//! and `stream`. From a shared ledger they are read straight from it, woken by its
//! notifications (polling where it has none); from a store of its own, through its server when
//! one runs, else by opening the store for each look, so that writers are not kept waiting.

use std::time::Duration;

use memledger_engine::{EngineError, EventLog};
use memledger_schemas::Event;

use crate::app::Context;
use crate::output::CliError;

/// How long a follower waits for a notification before it looks again.
const POLL: Duration = Duration::from_millis(500);

/// Hand `batch` every event from `since` on, in order, as they are appended; returns when
/// `batch` fails (a reader that went away, a sink that refused), or, with `until_head`, once it
/// has had every event up to the head.
pub fn follow(
    ctx: &Context,
    since: u64,
    until_head: bool,
    batch: &mut dyn FnMut(&[Event]) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let mut next = since.max(1);
    let shared = ctx.shared_ledger()?;
    loop {
        let (events, after) = read(ctx, shared.as_deref(), next)?;
        if after == next {
            if until_head {
                return Ok(());
            }
            match &shared {
                Some(log) => log.wait_past(next - 1, POLL).map_err(EngineError::from)?,
                None => std::thread::sleep(POLL),
            }
            continue;
        }
        next = after;
        if !events.is_empty() {
            batch(&events)?;
        }
    }
}

/// A chunk of the events from `next` on, from the shared ledger when there is one, and the seq
/// to read from next (past the events read, and past those the caller may not read).
pub fn read(ctx: &Context, shared: Option<&dyn EventLog>, next: u64) -> Result<(Vec<Event>, u64), CliError> {
    let events = match shared {
        Some(log) => log.read(next, memledger_engine::READ_CHUNK).map_err(EngineError::from)?,
        None => return read_local(ctx, next),
    };
    let after = events.last().map_or(next, |e| e.seq + 1);
    Ok((events, after))
}

/// The events of a store of its own from `next` on (a chunk of them), through its server or
/// opened here (as many as the caller may read of a chunk); none while the store does not exist.
fn read_local(ctx: &Context, next: u64) -> Result<(Vec<Event>, u64), CliError> {
    let mut lines = Vec::new();
    match ctx.server(false)? {
        Some(mut server) => server.export(next, &mut lines)?,
        None if crate::backend::store_exists(&ctx.dir) => {
            let ml = ctx.open_direct(false)?;
            let caller = ctx.caller(&ml)?;
            let mut events = Vec::new();
            let mut after = next;
            for event in ml.ledger().scan(next).map_err(EngineError::from)?.take(memledger_engine::READ_CHUNK) {
                let event = event.map_err(EngineError::from)?;
                after = event.seq + 1;
                if memledger_commands::store::visible(&ml, &caller, &event)? {
                    events.push(event);
                }
            }
            return Ok((events, after));
        }
        None => return Ok((Vec::new(), next)),
    }
    // The server sends what the caller may read: the last of it is as far as this call knows.
    let events: Vec<Event> = String::from_utf8_lossy(&lines)
        .lines()
        .map(|line| {
            serde_json::from_str(line).map_err(|e| {
                CliError::new(memledger_engine::Exit::Failure, format!("the server sent a bad event line: {e}"), None)
            })
        })
        .collect::<Result<_, _>>()?;
    let after = events.last().map_or(next, |e| e.seq + 1);
    Ok((events, after))
}
