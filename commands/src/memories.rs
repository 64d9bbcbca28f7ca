//! The commands on memories: saving (one, or `save --from`'s lines), updating, retiring and
//! erasing them, and reading them (show, list, recall, history, why, browse).

use memledger_engine::erase::{EraseResult, parse_retired_before};
use memledger_engine::expiry::ExpiryChange;
use memledger_engine::reads::{HistoryView, MemoryView};
use memledger_engine::resolve::{ForgetResult, UpdateResult};
use memledger_engine::validity::ReadStatus;
use memledger_engine::{AsOf, Caller, Durability, Memledger, PreparedSave, SaveRequest, SaveResult};
use memledger_schemas::{MemoryType, Verb};

use crate::answer::{Answer, BrowseDoc, Executed, LineAnswer, ListDoc, RecallDoc, ScopeCount, WhyDoc};
use crate::error::CommandError;
use crate::request::{
    BrowseQuery, EraseBody, ForgetBody, ListQuery, RecallBody, SaveBody, SaveLines, ShowQuery, UpdateBody, WhyQuery,
};

pub fn save(ml: &Memledger, caller: &Caller, body: &SaveBody) -> Result<SaveResult, CommandError> {
    Ok(ml.save_by(SaveRequest::from(body), caller)?)
}

/// `save --from` lines sent by a client: each saved in order, the group made durable, then each
/// answered. The lines refused make the call's error (exit 2) after the answers.
pub fn save_lines(ml: &Memledger, caller: &Caller, lines: &SaveLines) -> Result<Executed, CommandError> {
    let mut answers = Vec::with_capacity(lines.lines.len());
    let mut failure = None;
    for line in &lines.lines {
        let prepared = if line.not_utf8 {
            Err("the line is not valid UTF-8".to_string())
        } else {
            prepare_line(line.text.as_bytes(), lines.allow_secret)
        };
        match prepared {
            Err(error) => answers.push(LineAnswer::Refused { line: line.line, error }),
            Ok(prepared) => match ml.save_prepared_by(prepared, caller, Durability::Deferred) {
                Ok(result) => answers.push(LineAnswer::Saved(Box::new(result))),
                Err(e) if refuses_line(&e) => {
                    answers.push(LineAnswer::Refused { line: line.line, error: e.to_string() })
                }
                Err(e) => {
                    // A storage failure: answer what is durable, then stop.
                    failure = Some(CommandError::from(e));
                    break;
                }
            },
        }
    }
    if answers.iter().any(|a| matches!(a, LineAnswer::Saved(_))) {
        ml.sync()?;
    }
    let refused = answers.iter().filter(|a| matches!(a, LineAnswer::Refused { .. })).count();
    let error = failure.or_else(|| (refused > 0).then(|| refused_lines(refused)));
    Ok(Executed::answered_then_failed(Answer::SaveLines(answers), error))
}

/// The error of a `save --from` whose other lines were saved.
pub fn refused_lines(refused: usize) -> CommandError {
    CommandError::bad_input(format!("{refused} line(s) were refused; the rest were saved"))
}

/// Whether a save's error refuses its line alone (bad input, or a scope or authority the
/// principal lacks): the other lines go on.
pub fn refuses_line(e: &memledger_engine::EngineError) -> bool {
    matches!(e.exit(), memledger_engine::Exit::BadInput | memledger_engine::Exit::NotPermitted)
}

/// A line's save, validated and analysed, or the message that refuses it. `allow_secret`
/// (`--allow-secret`) lets every line hold a credential; a line's own `allow_secret` lets it.
pub fn prepare_line(line: &[u8], allow_secret: bool) -> Result<PreparedSave, String> {
    let line = std::str::from_utf8(line).map_err(|_| "the line is not valid UTF-8".to_string())?;
    let mut request = serde_json::from_str::<SaveRequest>(line).map_err(|e| format!("not a save request: {e}"))?;
    request.allow_secret |= allow_secret;
    PreparedSave::new(request).map_err(|e| e.to_string())
}

pub fn update(ml: &Memledger, caller: &Caller, b: &UpdateBody) -> Result<UpdateResult, CommandError> {
    if let Some(text) = &b.text {
        memledger_engine::input::validate_text(text)?;
    }
    let now = memledger_schemas::Timestamp::now();
    let expiry = ExpiryChange::of(b.expires_at.as_deref(), b.ttl.as_deref(), b.no_expiry, now)?;
    let id = ml.resolve_memory_id(&b.id)?;
    Ok(ml.revise_by(id, b.text.as_deref(), b.expect_version, expiry, caller)?)
}

pub fn forget(ml: &Memledger, caller: &Caller, b: &ForgetBody) -> Result<ForgetResult, CommandError> {
    let id = ml.resolve_memory_id(&b.id)?;
    Ok(ml.forget_by(id, b.reason.clone(), caller)?)
}

pub fn erase(ml: &Memledger, caller: &Caller, b: &EraseBody) -> Result<EraseResult, CommandError> {
    Ok(match &b.retired_before {
        Some(date) => ml.erase_retired_before_by(parse_retired_before(date)?, b.reason.clone(), b.dry_run, caller)?,
        None => {
            let id = ml.resolve_memory_id(&b.id)?;
            ml.erase_by(id, b.lineage, b.reason.clone(), b.dry_run, caller)?
        }
    })
}

/// The as-of point of `show` and `history`, and the `--valid-at` time, refused when malformed.
pub fn check_show(q: &ShowQuery) -> Result<Option<AsOf>, CommandError> {
    let point = q.as_of.as_deref().map(str::parse::<AsOf>).transpose()?;
    q.valid_at.as_deref().map(memledger_engine::validity::parse_valid_at).transpose()?;
    Ok(point)
}

/// The store as `q` asks to read it, the valid time it asks about, and the memory it names.
fn asked<'a>(
    live: &'a Memledger,
    q: &ShowQuery,
) -> Result<(memledger_engine::Snapshot<'a>, memledger_schemas::Timestamp, memledger_schemas::MemoryId), CommandError> {
    let point = check_show(q)?;
    let at = crate::valid_time(live, point, q.valid_at.as_deref())?;
    let ml = live.as_of(point)?;
    let id = ml.resolve_memory_id(&q.id)?;
    Ok((ml, at, id))
}

pub fn show(live: &Memledger, caller: &Caller, q: &ShowQuery) -> Result<MemoryView, CommandError> {
    let (ml, at, id) = asked(live, q)?;
    let m = ml.show_at(id, at)?;
    caller.access().require(Verb::Read, &m.scope)?;
    Ok(m)
}

pub fn history(live: &Memledger, caller: &Caller, q: &ShowQuery) -> Result<HistoryView, CommandError> {
    let (ml, at, id) = asked(live, q)?;
    let scope = ml.scope_of(id)?.unwrap_or_default();
    caller.access().require(Verb::Read, &scope)?;
    Ok(ml.history_at(id, at)?)
}

/// `list`'s type, status and as-of point, refused when malformed.
pub fn check_list(q: &ListQuery) -> Result<(Option<MemoryType>, Option<ReadStatus>, Option<AsOf>), CommandError> {
    let memory_type = q.memory_type.as_deref().map(memledger_engine::input::parse_type).transpose()?;
    let status = match q.status.as_str() {
        "all" => None,
        s => Some(s.parse::<ReadStatus>()?),
    };
    let point = q.as_of.as_deref().map(str::parse::<AsOf>).transpose()?;
    q.valid_at.as_deref().map(memledger_engine::validity::parse_valid_at).transpose()?;
    Ok((memory_type, status, point))
}

pub fn list(live: &Memledger, caller: &Caller, q: &ListQuery) -> Result<ListDoc, CommandError> {
    let (memory_type, status, point) = check_list(q)?;
    let at = crate::valid_time(live, point, q.valid_at.as_deref())?;
    let ml = live.as_of(point)?;
    let scopes = caller.access().scopes_for(q.scope.as_deref())?;
    let memories = match &q.fact_key {
        // The limit counts the memories of that key: filter before it.
        Some(key) => {
            let mut all = ml.list_in(memory_type, &scopes, status, usize::MAX, at)?;
            all.retain(|m| m.fact_key.as_deref() == Some(key.as_str()));
            all.truncate(q.limit);
            all
        }
        None => ml.list_in(memory_type, &scopes, status, q.limit, at)?,
    };
    Ok(ListDoc { memories })
}

/// The most a page of `browse` holds.
const BROWSE_MAX: usize = 500;

pub fn browse(live: &Memledger, caller: &Caller, q: &BrowseQuery) -> Result<BrowseDoc, CommandError> {
    if q.limit == 0 || q.limit > BROWSE_MAX {
        return Err(CommandError::bad_input(format!("limit must be 1 to {BROWSE_MAX}, not {}", q.limit)));
    }
    let scopes = caller.access().scopes_for(q.scope.as_deref())?;
    let page = live.browse(None, &scopes, q.offset, q.limit, memledger_schemas::Timestamp::now())?;
    let next_offset = page.more.then(|| q.offset + page.memories.len());
    let scopes = page.scopes.into_iter().map(|(scope, memories)| ScopeCount { scope, memories }).collect();
    Ok(BrowseDoc { memories: page.memories, next_offset, scopes })
}

/// `recall`'s type and as-of point, refused when malformed.
pub fn check_recall(b: &RecallBody) -> Result<(Option<MemoryType>, Option<AsOf>), CommandError> {
    let memory_type = b.memory_type.as_deref().map(memledger_engine::input::parse_type).transpose()?;
    let point = b.as_of.as_deref().map(str::parse::<AsOf>).transpose()?;
    b.valid_at.as_deref().map(memledger_engine::validity::parse_valid_at).transpose()?;
    Ok((memory_type, point))
}

pub fn recall(live: &Memledger, caller: &Caller, b: &RecallBody) -> Result<RecallDoc, CommandError> {
    let (memory_type, point) = check_recall(b)?;
    let at = crate::valid_time(live, point, b.valid_at.as_deref())?;
    let ml = live.as_of(point)?;
    let scopes = caller.access().scopes_for(b.scope.as_deref())?;
    let found = ml.recall_in(&b.query, memory_type, scopes.scopes(), b.limit, at)?;
    let fenced = fenced(&found);
    Ok(RecallDoc { found, fenced })
}

/// The results' texts, verbatim, inside a fence of their own (crate::fence): item `[n]` is the
/// `n`th result.
fn fenced(found: &memledger_engine::RecallResult) -> String {
    let items: Vec<(String, &str)> = found
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let conflict = if r.conflicts_with.is_empty() { "" } else { ", in a pending conflict" };
            (
                format!("[{}] memory {} ({}, {}, {}{conflict})", i + 1, r.memory_id, r.memory_type, r.scope, r.status),
                r.text.as_str(),
            )
        })
        .collect();
    crate::fence::fence(&items)
}

/// What stands in for what the caller may not read.
pub const WITHHELD: &str = "[withheld: the other memory is in a scope this principal may not read]";

pub fn why(ml: &Memledger, caller: &Caller, q: &WhyQuery) -> Result<WhyDoc, CommandError> {
    let id = ml.resolve_memory_id(&q.id)?;
    let other = q.other.as_deref().map(|o| ml.resolve_memory_id(o)).transpose()?;
    let access = caller.access();
    for asked in std::iter::once(id).chain(other) {
        access.require(Verb::Read, &ml.scope_of(asked)?.unwrap_or_default())?;
    }
    let mut decisions = ml.why(id, other)?;
    // A pair whose other side the caller may not read keeps its ids and outcome; its reason,
    // scores and the model's answer, which may quote that side, are withheld.
    for d in &mut decisions {
        let other_side = if d.incoming == id { d.candidate } else { d.incoming };
        if !access.reads(&ml.scope_of(other_side)?.unwrap_or_default()) {
            d.reason = WITHHELD.into();
            d.scores.clear();
            d.model = None;
        }
    }
    // An expiry decides without an event when its time comes: said beside the decisions.
    // (An observation merged into another is no belief of its own: it has no expiry to say.)
    let shown = ml.show_at(id, memledger_schemas::Timestamp::now()).ok();
    let expires_at = shown.as_ref().and_then(|m| m.expires_at);
    let expired = shown.is_some_and(|m| m.status == ReadStatus::Expired);
    Ok(WhyDoc { memory_id: id, decisions, expires_at, expired })
}
