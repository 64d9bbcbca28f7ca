//! The review page's reads (docs/review.md): pages of the conflict queue, the event log and the
//! near misses, and the timeline of the charts. They have no command of their own: the page
//! asks for them over HTTP, and they answer JSON whichever output was asked for. Each answers
//! only what the caller may read: a side it may not read is shown by its id, as withheld.

use memledger_engine::review::{EventFilter, NearMissKind};
use memledger_engine::{Caller, Memledger};
use memledger_server::api::{EventsQuery, NearMissQuery, ReviewConflictsQuery};

use crate::output::{CliError, Output};

pub fn execute_conflicts(
    ml: &Memledger,
    caller: &Caller,
    q: &ReviewConflictsQuery,
    out: &mut Output,
) -> Result<(), CliError> {
    let status = super::conflicts::status_filter(&q.status)?;
    out.json_line(&ml.conflict_page(status, q.offset, q.limit, &caller.access().readable())?)
}

pub fn execute_events(ml: &Memledger, caller: &Caller, q: &EventsQuery, out: &mut Output) -> Result<(), CliError> {
    let types = q
        .types
        .as_deref()
        .map(|t| t.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    let filter = EventFilter { types, actor: q.actor.clone().filter(|a| !a.is_empty()) };
    let visible = |e: &memledger_schemas::Event| super::log::visible(ml, caller, e);
    out.json_line(&ml.event_page(q.before, q.limit, &filter, &visible)?)
}

pub fn execute_near_misses(
    ml: &Memledger,
    caller: &Caller,
    q: &NearMissQuery,
    out: &mut Output,
) -> Result<(), CliError> {
    let kind: NearMissKind = q.kind.parse()?;
    let scope = q.scope.as_deref().filter(|s| !s.is_empty());
    if let Some(s) = scope {
        caller.access().require(memledger_schemas::Verb::Read, s)?;
    }
    out.json_line(&ml.near_miss_page(q.before, q.limit, kind, scope, &caller.access().readable())?)
}

pub fn execute_timeline(ml: &Memledger, caller: &Caller, out: &mut Output) -> Result<(), CliError> {
    let visible = |e: &memledger_schemas::Event| super::log::visible(ml, caller, e);
    out.json_line(&ml.timeline(&caller.access().readable(), &visible)?)
}
