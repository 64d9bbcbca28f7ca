//! The commands on the conflict queue: list, show, resolve, revert, let a model judge (`auto`),
//! scan the store for contradictions, open one by hand.

use memledger_engine::error::Exit;
use memledger_engine::resolve::ResolveResult;
use memledger_engine::scan::ScanReport;
use memledger_engine::{AsOf, Caller, ConflictRecord, ConflictStatus, Memledger};
use memledger_schemas::{MemoryId, ResolutionAction, Verb};

use crate::answer::{Answer, ConflictDoc, ConflictsDoc, Executed, OpenedDoc, SideDoc, SideMemory};
use crate::error::CommandError;
use crate::request::{Action, AutoBody, ConflictsQuery, IdPath, OpenBody, ResolveBody, ScanBody};

/// What stands in for a side (and its reason) where the caller may not read that side.
pub const WITHHELD: &str = "[withheld: a memory in a scope this principal may not read]";

/// Whether `caller` may read memory `id`'s scope.
fn reads(ml: &Memledger, caller: &Caller, id: MemoryId) -> Result<bool, CommandError> {
    Ok(caller.access().reads(&ml.scope_of(id)?.unwrap_or_default()))
}

/// Whether `caller` may read any side of `c` (a conflict with none it may read is not its).
fn visible(ml: &Memledger, caller: &Caller, c: &ConflictRecord) -> Result<bool, CommandError> {
    for id in std::iter::once(c.incoming).chain(c.candidates.iter().map(|s| s.memory_id)) {
        if reads(ml, caller, id)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A conflict as `caller` may see it: the sides it may not read by their ids alone.
fn conflict_doc(ml: &Memledger, caller: &Caller, c: &ConflictRecord) -> Result<ConflictDoc, CommandError> {
    let mut withheld = Vec::new();
    let mut side = |memory_id| -> Result<SideDoc, CommandError> {
        if !reads(ml, caller, memory_id)? {
            withheld.push(memory_id);
            return Ok(SideDoc { memory_id, withheld: true, memory: None, reason: None });
        }
        let memory = ml.show(memory_id).ok().map(|m| SideMemory {
            file: m.evidence.as_ref().map(|e| e.file.clone()),
            first_line: m.evidence.as_ref().map(|e| e.first_line),
            last_line: m.evidence.as_ref().map(|e| e.last_line),
            excerpt: m.evidence.as_ref().map(|e| e.excerpt.clone()),
            observed_at: m.evidence.as_ref().and_then(|e| e.observed_at),
            text: m.text,
            status: m.status,
            version: m.version,
            scope: m.scope,
            authority: m.authority,
            principal: m.principal,
        });
        Ok(SideDoc { memory_id, withheld: false, memory, reason: None })
    };
    let incoming_memory = side(c.incoming)?;
    let mut candidate_memories = Vec::new();
    let mut reasons = Vec::new();
    for s in &c.candidates {
        let mut v = side(s.memory_id)?;
        let reason = if v.withheld { WITHHELD.to_string() } else { s.reason.clone() };
        v.reason = Some(reason.clone());
        reasons.push(reason);
        candidate_memories.push(v);
    }
    Ok(ConflictDoc {
        conflict_id: c.conflict_id,
        status: c.status,
        incoming: c.incoming,
        incoming_memory,
        candidates: c.candidates.iter().map(|s| s.memory_id).collect(),
        candidate_memories,
        reasons,
        opened_at: c.opened_at,
        opened_seq: c.opened_seq,
        opened_by: c.opened_by.clone(),
        resolution: c.resolution.clone(),
        resolutions: c.resolutions.clone(),
        reverts: c.reverts.clone(),
        kind: c.kind().to_string(),
        needs_authority: c.needs_authority,
        proposed_by: c.proposed_by().map(str::to_string),
        proposal: c.proposal.clone(),
        withheld,
    })
}

/// A conflict status filter: pending, resolved, or all (`None`).
pub fn status_filter(status: &str) -> Result<Option<ConflictStatus>, CommandError> {
    match status {
        "pending" => Ok(Some(ConflictStatus::Pending)),
        "resolved" => Ok(Some(ConflictStatus::Resolved)),
        "all" => Ok(None),
        other => Err(CommandError::bad_input(format!("unknown status {other:?} (pending, resolved or all)"))),
    }
}

/// `conflicts list`'s status and as-of point, refused when malformed.
pub fn check_list(q: &ConflictsQuery) -> Result<(Option<ConflictStatus>, Option<AsOf>), CommandError> {
    let status = status_filter(&q.status)?;
    let point = q.as_of.as_deref().map(str::parse::<AsOf>).transpose()?;
    Ok((status, point))
}

/// `conflicts scan`'s confidence, refused when not in [0, 1].
pub fn check_scan(b: &ScanBody) -> Result<(), CommandError> {
    if !(b.min_confidence.is_finite() && (0.0..=1.0).contains(&b.min_confidence)) {
        return Err(CommandError::bad_input("--min-confidence takes a number from 0 to 1"));
    }
    Ok(())
}

/// `conflicts auto` without a chat model: nothing to do, said before anything else.
pub fn needs_model(configured: bool) -> Result<(), CommandError> {
    if configured {
        return Ok(());
    }
    Err(CommandError::new(
        Exit::BadInput,
        "conflicts auto needs a model, and none is configured; nothing was written",
        Some(
            "set MEMLEDGER_LLM_URL (an OpenAI-compatible base URL) and MEMLEDGER_LLM_MODEL; see docs/models.md".into(),
        ),
    ))
}

pub fn list(live: &Memledger, caller: &Caller, q: &ConflictsQuery) -> Result<ConflictsDoc, CommandError> {
    let (status, point) = check_list(q)?;
    let ml = live.as_of(point)?;
    let mut conflicts = Vec::new();
    for c in ml.conflicts(status)? {
        if visible(&ml, caller, &c)? {
            conflicts.push(conflict_doc(&ml, caller, &c)?);
        }
    }
    Ok(ConflictsDoc { conflicts })
}

pub fn show(ml: &Memledger, caller: &Caller, args: &IdPath) -> Result<ConflictDoc, CommandError> {
    let id = ml.resolve_conflict_id(&args.id)?;
    let c = ml.conflict_record(id)?;
    if !visible(ml, caller, &c)? {
        let scope = ml.scope_of(c.incoming)?.unwrap_or_default();
        return Err(caller.access().refusal(Verb::Read, &scope, String::new()).into());
    }
    conflict_doc(ml, caller, &c)
}

pub fn resolve(ml: &Memledger, caller: &Caller, b: &ResolveBody) -> Result<ResolveResult, CommandError> {
    let action = match b.action {
        Action::KeepNew | Action::Accept => ResolutionAction::KeepNew,
        Action::KeepExisting | Action::Reject => ResolutionAction::KeepExisting,
        Action::KeepBoth => ResolutionAction::KeepBoth,
        Action::Merge => ResolutionAction::Merge,
    };
    match (action, &b.merged_text) {
        (ResolutionAction::Merge, None) => {
            return Err(CommandError::bad_input("merge needs the merged text: what is true"));
        }
        (ResolutionAction::Merge, Some(t)) => {
            memledger_engine::input::validate_text(t)?;
        }
        (_, Some(_)) => return Err(CommandError::bad_input("a merged text goes only with the merge action")),
        (_, None) => {}
    }
    let id = ml.resolve_conflict_id(&b.id)?;
    if matches!(b.action, Action::Accept | Action::Reject) && ml.conflict_record(id)?.proposed_by().is_none() {
        return Err(CommandError::bad_input(format!(
            "conflict {} is not a proposal: accept and reject decide proposals; a conflict takes \
             --keep-new, --keep-existing, --keep-both or --merge",
            id.short()
        )));
    }
    Ok(ml.resolve_by(id, action, b.merged_text.as_deref(), b.note.clone(), caller, None)?)
}

pub fn revert(ml: &Memledger, caller: &Caller, args: &IdPath) -> Result<ResolveResult, CommandError> {
    let id = ml.resolve_conflict_id(&args.id)?;
    Ok(ml.revert_by(id, caller)?)
}

/// `conflicts auto`: the report, and (exit 1) when judge calls failed, those conflicts pending.
pub fn auto(
    ml: &Memledger,
    caller: &Caller,
    args: &AutoBody,
    settings: &crate::Settings,
) -> Result<Executed, CommandError> {
    needs_model(ml.models().llm().is_some())?;
    // The daily budget of tokens: what the caller has left of it today.
    let budget = match settings.daily_budget.clone()? {
        Some(daily) => {
            let spent = ml.usage(memledger_schemas::Timestamp::now())?.today_of(&caller.principal.name).total();
            Some(daily.saturating_sub(spent))
        }
        None => None,
    };
    let report = ml.judge_pending_within(args.dry_run, caller, budget)?;
    let error = (report.failed > 0).then(|| {
        CommandError::failure(format!(
            "{} of {} judge call(s) failed; those conflicts stay pending",
            report.failed, report.judged
        ))
    });
    Ok(Executed::answered_then_failed(Answer::ConflictsAuto(report), error))
}

pub fn scan(ml: &Memledger, caller: &Caller, args: &ScanBody) -> Result<ScanReport, CommandError> {
    check_scan(args)?;
    let options = memledger_engine::scan::ScanOptions {
        max_pairs: args.max_pairs,
        min_confidence: args.min_confidence,
        dry_run: args.dry_run,
        scope: args.scope.clone(),
    };
    Ok(ml.scan_conflicts_by(&options, caller)?)
}

pub fn open(ml: &Memledger, caller: &Caller, b: &OpenBody) -> Result<OpenedDoc, CommandError> {
    if let Some(note) = &b.note {
        memledger_engine::input::validate_text(note)?;
    }
    let (first, second) = (ml.resolve_memory_id(&b.a)?, ml.resolve_memory_id(&b.b)?);
    let (conflict_id, seqs) = ml.open_conflict_by(first, second, b.note.as_deref(), caller)?;
    Ok(OpenedDoc { conflict_id, seqs })
}
