//! The commands on the store as a whole: its log, rebuilding and verifying its views, counts, scopes,
//! embedding, the chat model's usage, and the review page's reads (conflict pages, events, near
//! misses, the timeline).

use std::time::Instant;

use memledger_engine::models::embed::EmbedReport;
use memledger_engine::reads::VerifyView;
use memledger_engine::review::{ConflictPage, EventFilter, NearMiss, NearMissKind, Page, Timeline};
use memledger_engine::{Caller, EngineError, Memledger};
use memledger_schemas::{Event, Verb};

use crate::answer::{Answer, Executed, PrincipalTokens, RebuildDoc, ScopeCount, StatsDoc, Tokens, UsageDoc};
use crate::error::CommandError;
use crate::request::{AutoBody, EventsQuery, LogQuery, NearMissQuery, RebuildBody, ReviewConflictsQuery};

/// Whether `caller` may read event `e`: every memory it names is in a scope it may read; a
/// principal's event, for who administers the store or the principal it is about; an event
/// that names nothing (an erasure of nothing, a transcript's progress with no memory), for who
/// administers the store or appended it.
pub fn visible(ml: &Memledger, caller: &Caller, e: &Event) -> Result<bool, EngineError> {
    let access = caller.access();
    if access.reads_everything() && access.administers_store() {
        return Ok(true);
    }
    if let Some(name) = e.body.principal_named() {
        return Ok(access.administers_store() || name == caller.name());
    }
    let ids = e.body.memory_ids();
    if ids.is_empty() {
        return Ok(access.administers_store() || e.principal.as_deref() == Some(caller.name()));
    }
    for id in ids {
        if !access.reads(&ml.scope_of(id)?.unwrap_or_default()) {
            return Ok(false);
        }
    }
    Ok(true)
}

pub fn log(ml: &Memledger, caller: &Caller, q: &LogQuery) -> Result<Vec<Event>, CommandError> {
    let memory = q.memory.as_deref().map(|m| ml.resolve_memory_id(m)).transpose()?;
    let keep = |e: &Event| -> Result<bool, EngineError> {
        let by = e.principal.as_deref().unwrap_or(memledger_schemas::OWNER);
        if q.by.as_deref().is_some_and(|wanted| wanted != by) {
            return Ok(false);
        }
        visible(ml, caller, e)
    };
    Ok(ml.log_kept(q.since, q.limit, memory, &keep)?)
}

/// The store's upkeep (rebuilding views, embedding) is its administrators': `what` says why.
fn administrators_only(caller: &Caller, what: &str) -> Result<(), CommandError> {
    if caller.access().administers_store() {
        return Ok(());
    }
    Err(caller.access().refusal(Verb::Admin, "*", format!(" ({what})")).into())
}

pub fn rebuild(
    ml: &Memledger,
    caller: &Caller,
    b: &RebuildBody,
    settings: &crate::Settings,
) -> Result<RebuildDoc, CommandError> {
    administrators_only(caller, "rebuild replays every view")?;
    let only: Option<Vec<&str>> = b.view.as_deref().map(|v| vec![v]);
    let views: Vec<String> = match &only {
        Some(v) => v.iter().map(|s| s.to_string()).collect(),
        None => ml.views().names().iter().chain(["text"].iter()).map(|s| s.to_string()).collect(),
    };
    let started = Instant::now();
    let total = ml.ledger().head().seq;
    let events = ml.rebuild(only.as_deref(), &mut |n| {
        if let Some(progress) = &settings.progress {
            progress(n, total)
        }
    })?;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(RebuildDoc { events, views, elapsed_ms })
}

/// `verify`: the report, and (exit 1) when the chain or a view is broken.
pub fn verify(ml: &Memledger) -> Result<Executed, CommandError> {
    let v: VerifyView = ml.verify()?;
    let error = (!(v.ledger.ok && v.views_consistent)).then(|| CommandError::Failure {
        message: "verification failed".into(),
        hint: v.ledger.first_bad_seq.map(|s| format!("the chain breaks at seq {s}")),
    });
    Ok(Executed::answered_then_failed(Answer::Verify(v), error))
}

pub fn stats(ml: &Memledger, caller: &Caller) -> Result<StatsDoc, CommandError> {
    let stats = ml.stats_in(&caller.access().readable())?;
    let last_verify = ml.last_verification()?;
    Ok(StatsDoc { stats, last_verify })
}

/// `scopes`: the scopes the caller may read that hold active memories.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ScopesDoc {
    /// By name, each with how many active memories it holds.
    pub scopes: Vec<ScopeCount>,
}

pub fn scopes(ml: &Memledger, caller: &Caller) -> Result<ScopesDoc, CommandError> {
    // Browsing a page of no memories still counts every scope's.
    let page = ml.browse(None, &caller.access().readable(), 0, 0, memledger_schemas::Timestamp::now())?;
    let scopes = page.scopes.into_iter().map(|(scope, memories)| ScopeCount { scope, memories }).collect();
    Ok(ScopesDoc { scopes })
}

pub fn embed(ml: &Memledger, caller: &Caller, b: &AutoBody) -> Result<EmbedReport, CommandError> {
    administrators_only(caller, "embed writes every vector")?;
    if ml.models().embedder().is_none() {
        return Err(CommandError::BadInput {
            message: "embed needs an embedding model, and none is configured; nothing was written".into(),
            hint: Some(
                "set MEMLEDGER_EMBED_URL (an OpenAI-compatible base URL) and MEMLEDGER_EMBED_MODEL; see docs/models.md"
                    .into(),
            ),
        });
    }
    Ok(ml.embed_missing_with(b.dry_run)?)
}

pub fn usage(ml: &Memledger, caller: &Caller, settings: &crate::Settings) -> Result<UsageDoc, CommandError> {
    let report = ml.usage(memledger_schemas::Timestamp::now())?;
    let me = &caller.principal.name;
    let mine = report.by_principal.iter().find(|p| &p.principal == me).cloned().unwrap_or_default();
    let report = if caller.access().administers_store() { report } else { report.only(me) };
    let tokens_of = |p: &memledger_engine::usage::PrincipalUsage| PrincipalTokens {
        principal: p.principal.clone(),
        today: Tokens::from(&p.today),
        month: Tokens::from(&p.month),
    };
    Ok(UsageDoc {
        day: report.day.clone(),
        month: report.month.clone(),
        today: Tokens::from(&report.today),
        this_month: Tokens::from(&report.this_month),
        by_principal: report.by_principal.iter().map(tokens_of).collect(),
        yours: PrincipalTokens { principal: me.clone(), ..tokens_of(&mine) },
        daily_budget: settings.daily_budget.clone()?,
    })
}

pub fn review_conflicts(
    ml: &Memledger,
    caller: &Caller,
    q: &ReviewConflictsQuery,
) -> Result<ConflictPage, CommandError> {
    let status = crate::conflicts::status_filter(&q.status)?;
    Ok(ml.conflict_page(status, q.offset, q.limit, &caller.access().readable())?)
}

pub fn events(ml: &Memledger, caller: &Caller, q: &EventsQuery) -> Result<Page<Event>, CommandError> {
    let types = q
        .types
        .as_deref()
        .map(|t| t.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    let filter = EventFilter { types, actor: q.actor.clone().filter(|a| !a.is_empty()) };
    let visible = |e: &Event| visible(ml, caller, e);
    Ok(ml.event_page(q.before, q.limit, &filter, &visible)?)
}

pub fn near_misses(ml: &Memledger, caller: &Caller, q: &NearMissQuery) -> Result<Page<NearMiss>, CommandError> {
    let kind: NearMissKind = q.kind.parse()?;
    let scope = q.scope.as_deref().filter(|s| !s.is_empty());
    if let Some(s) = scope {
        caller.access().require(Verb::Read, s)?;
    }
    Ok(ml.near_miss_page(q.before, q.limit, kind, scope, &caller.access().readable())?)
}

pub fn timeline(ml: &Memledger, caller: &Caller) -> Result<Timeline, CommandError> {
    let visible = |e: &Event| visible(ml, caller, e);
    Ok(ml.timeline(&caller.access().readable(), &visible)?)
}
