//! `memledger conflicts`: the queue of contradictions, and resolving and reverting them.

use memledger_engine::error::Exit;
use memledger_engine::{Caller, ConflictRecord, ConflictStatus, Memledger};
use memledger_schemas::ResolutionAction;
use memledger_schemas::Verb;
use serde_json::{Value, json};

use memledger_server::api::{Action, AutoBody, Call, ConflictsQuery, IdPath, OpenBody, ResolveBody, ScanBody};

use crate::app::Context;
use crate::output::{CliError, Output, clip};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// List conflicts (default: pending).
    ///
    /// Example: memledger conflicts list --status all
    List(ListArgs),
    /// Show one conflict with both sides and the commands to resolve it.
    Show(ShowArgs),
    /// Resolve a pending conflict; revertible.
    ///
    /// Example: memledger conflicts resolve 5e21c0 --keep-new --note "upgraded last week"
    Resolve(ResolveArgs),
    /// Revert a resolution: its effects are undone and the conflict is pending again.
    Revert(ShowArgs),
    /// The LLM judge over the pending queue: keep_new, keep_existing, keep_both or unsure.
    ///
    /// Decisive verdicts resolve as ordinary, revertible resolutions `by: judge:<model>`; unsure
    /// ones stay pending. Needs MEMLEDGER_LLM_URL and MEMLEDGER_LLM_MODEL (docs/models.md).
    ///
    /// Example: memledger conflicts auto --dry-run
    Auto(AutoArgs),
    /// Look for contradictions among stored memories and open conflicts for new ones.
    ///
    /// Pairs come from similar memories within a scope; pairs with a record (a conflict in any
    /// state, a keep_both) are skipped. Lexical offline, the LLM when configured.
    ///
    /// Example: memledger conflicts scan --max-pairs 100 --dry-run
    Scan(ScanArgs),
    /// Open a conflict by hand between two active memories of one scope that the classifier
    /// let through (a near miss, or a pair it never compared); resolved like any other.
    ///
    /// Example: memledger conflicts open 43c1a0 9f2e11 --note "16 and 17 cannot both be current"
    Open(OpenArgs),
}

#[derive(clap::Args, Debug)]
pub struct OpenArgs {
    /// A memory id or a unique prefix of 6+ digits.
    pub a: String,
    /// The other memory.
    pub b: String,
    /// Why they cannot both be true (recorded as the conflict's reason).
    #[arg(long)]
    pub note: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct AutoArgs {
    /// Ask the judge and report, resolve nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    /// Pairs classified at most, most similar first.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub max_pairs: usize,
    /// Open a conflict only at this confidence or above (the model's, else the lexical similarity).
    #[arg(long, value_name = "X", default_value_t = 0.5)]
    pub min_confidence: f64,
    /// Only this scope.
    #[arg(long)]
    pub scope: Option<String>,
    /// Classify and report, write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// pending, resolved or all.
    #[arg(long, default_value = "pending")]
    pub status: String,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    #[arg(long, value_name = "SEQ|RFC3339")]
    pub as_of: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// A conflict id or a unique prefix of 6+ digits.
    pub id: String,
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("action").required(true).multiple(false)))]
pub struct ResolveArgs {
    pub id: String,
    /// The incoming memory wins and continues the existing lineage.
    #[arg(long, group = "action")]
    pub keep_new: bool,
    /// The incoming memory goes stale.
    #[arg(long, group = "action")]
    pub keep_existing: bool,
    /// Both are true: linked distinct, never flagged against each other again.
    #[arg(long, group = "action")]
    pub keep_both: bool,
    /// This text is what is true: it becomes the next version; both inputs go stale.
    #[arg(long, group = "action", value_name = "TEXT")]
    pub merge: Option<String>,
    /// A proposal: accept it (as --keep-new: it becomes current, the next version of what it
    /// would replace). Needs write in its scope.
    #[arg(long, group = "action")]
    pub accept: bool,
    /// A proposal: reject it (as --keep-existing: it never becomes current).
    #[arg(long, group = "action")]
    pub reject: bool,
    /// Why (recorded with the resolution).
    #[arg(long)]
    pub note: Option<String>,
}

/// What stands in for a side's reason where the caller may not read that side.
const WITHHELD: &str = "[withheld: a memory in a scope this principal may not read]";

/// Whether `caller` may read memory `id`'s scope.
fn reads(ml: &Memledger, caller: &Caller, id: memledger_schemas::MemoryId) -> Result<bool, CliError> {
    Ok(caller.access().reads(&ml.scope_of(id)?.unwrap_or_default()))
}

/// Whether `caller` may read any side of `c` (a conflict with none it may read is not its).
fn visible(ml: &Memledger, caller: &Caller, c: &ConflictRecord) -> Result<bool, CliError> {
    for id in std::iter::once(c.incoming).chain(c.candidates.iter().map(|s| s.memory_id)) {
        if reads(ml, caller, id)? {
            return Ok(true);
        }
    }
    Ok(false)
}

pub(crate) fn conflict_json(ml: &Memledger, caller: &Caller, c: &ConflictRecord) -> Result<Value, CliError> {
    let mut withheld = Vec::new();
    let mut side = |id| -> Result<Value, CliError> {
        if !reads(ml, caller, id)? {
            withheld.push(id);
            return Ok(json!({"memory_id": id, "withheld": true}));
        }
        Ok(match ml.show(id) {
            Ok(m) => {
                let excerpt = m.evidence.as_ref().map(|e| e.excerpt.clone());
                let observed_at = m.evidence.as_ref().and_then(|e| e.observed_at);
                json!({
                    "memory_id": id, "text": m.text, "status": m.status, "version": m.version,
                    "scope": m.scope, "authority": m.authority, "principal": m.principal,
                    "excerpt": excerpt, "observed_at": observed_at,
                })
            }
            Err(_) => json!({"memory_id": id}),
        })
    };
    let incoming_memory = side(c.incoming)?;
    let mut candidates = Vec::new();
    let mut reasons = Vec::new();
    for s in &c.candidates {
        let mut v = side(s.memory_id)?;
        let reason = if v["withheld"] == json!(true) { WITHHELD.to_string() } else { s.reason.clone() };
        v["reason"] = json!(reason);
        reasons.push(reason);
        candidates.push(v);
    }
    Ok(json!({
        "conflict_id": c.conflict_id,
        "status": c.status,
        "incoming": c.incoming,
        "incoming_memory": incoming_memory,
        "candidates": c.candidates.iter().map(|s| s.memory_id).collect::<Vec<_>>(),
        "candidate_memories": candidates,
        "reasons": reasons,
        "opened_at": c.opened_at,
        "opened_seq": c.opened_seq,
        "opened_by": c.opened_by,
        "resolution": c.resolution,
        "resolutions": c.resolutions,
        "reverts": c.reverts,
        "kind": c.kind(),
        "needs_authority": c.needs_authority,
        "proposed_by": c.proposed_by(),
        "proposal": c.proposal,
        "withheld": withheld,
    }))
}

pub fn run(ctx: &Context, command: Command, out: &mut Output) -> Result<(), CliError> {
    let call = match command {
        Command::List(args) => {
            let q = ConflictsQuery { status: args.status, as_of: args.as_of };
            check_list(&q)?;
            Call::ConflictsList(q)
        }
        Command::Show(args) => Call::ConflictsShow(IdPath { id: args.id }),
        Command::Resolve(args) => {
            let action = if args.keep_new {
                Action::KeepNew
            } else if args.keep_existing {
                Action::KeepExisting
            } else if args.keep_both {
                Action::KeepBoth
            } else if args.accept {
                Action::Accept
            } else if args.reject {
                Action::Reject
            } else {
                Action::Merge
            };
            if let Some(t) = &args.merge {
                memledger_engine::input::validate_text(t)?;
            }
            Call::ConflictsResolve(ResolveBody { id: args.id, action, merged_text: args.merge, note: args.note })
        }
        Command::Revert(args) => Call::ConflictsRevert(IdPath { id: args.id }),
        Command::Auto(args) => {
            // Without a model there is nothing to do: say so before anything else.
            if ctx.server(false)?.is_none() {
                needs_model(ctx.model_config().llm.is_some())?;
            }
            Call::ConflictsAuto(AutoBody { dry_run: args.dry_run })
        }
        Command::Scan(args) => {
            let b = ScanBody {
                max_pairs: args.max_pairs,
                min_confidence: args.min_confidence,
                scope: args.scope,
                dry_run: args.dry_run,
            };
            check_scan(&b)?;
            Call::ConflictsScan(b)
        }
        Command::Open(args) => Call::ConflictsOpen(OpenBody { a: args.a, b: args.b, note: args.note }),
    };
    ctx.run(call, out)
}

/// `text` as one word for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A conflict status filter: pending, resolved, or all (`None`).
pub(crate) fn status_filter(status: &str) -> Result<Option<ConflictStatus>, CliError> {
    match status {
        "pending" => Ok(Some(ConflictStatus::Pending)),
        "resolved" => Ok(Some(ConflictStatus::Resolved)),
        "all" => Ok(None),
        other => Err(CliError::bad_input(format!("unknown status {other:?} (pending, resolved or all)"))),
    }
}

fn check_list(q: &ConflictsQuery) -> Result<(Option<ConflictStatus>, Option<memledger_engine::AsOf>), CliError> {
    let status = status_filter(&q.status)?;
    let point = q.as_of.as_deref().map(str::parse::<memledger_engine::AsOf>).transpose()?;
    Ok((status, point))
}

fn check_scan(b: &ScanBody) -> Result<(), CliError> {
    if !(b.min_confidence.is_finite() && (0.0..=1.0).contains(&b.min_confidence)) {
        return Err(CliError::bad_input("--min-confidence takes a number from 0 to 1"));
    }
    Ok(())
}

fn needs_model(configured: bool) -> Result<(), CliError> {
    if configured {
        return Ok(());
    }
    Err(CliError::new(
        Exit::BadInput,
        "conflicts auto needs a model, and none is configured; nothing was written",
        Some(
            "set MEMLEDGER_LLM_URL (an OpenAI-compatible base URL) and MEMLEDGER_LLM_MODEL; see docs/models.md".into(),
        ),
    ))
}

pub fn execute_list(live: &Memledger, caller: &Caller, q: &ConflictsQuery, out: &mut Output) -> Result<(), CliError> {
    let (status, point) = check_list(q)?;
    let ml = live.as_of(point)?;
    let mut list = Vec::new();
    for c in ml.conflicts(status)? {
        if visible(&ml, caller, &c)? {
            list.push(c);
        }
    }
    if out.json {
        let items: Vec<Value> = list.iter().map(|c| conflict_json(&ml, caller, c)).collect::<Result<_, _>>()?;
        return out.json_line(&json!({ "conflicts": items }));
    }
    if list.is_empty() {
        out.line("no conflicts")?;
    }
    // An aligned table: the conflict, its state, when, the incoming memory and its text.
    if !list.is_empty() {
        let head = format!("{:<12}  {:<8}  {:<20}  {:<12}  {:<5}  NEW TEXT", "ID", "STATUS", "OPENED", "NEW", "VS");
        out.line(crate::style::bold(&head))?;
    }
    for c in &list {
        let text = if reads(&ml, caller, c.incoming)? {
            ml.show(c.incoming).map(|m| m.text).unwrap_or_default()
        } else {
            WITHHELD.to_string()
        };
        let status = c.status.as_str();
        let painted = if c.status == ConflictStatus::Pending {
            crate::style::yellow(status)
        } else {
            crate::style::green(status)
        };
        let id = c.conflict_id.short();
        out.line(format!(
            "{}  {}  {:<20}  {:<12}  {:<5}  {}",
            crate::style::pad(&crate::style::cyan(&id), id.chars().count(), 12),
            crate::style::pad(&painted, status.len(), 8),
            c.opened_at.to_human(),
            c.incoming.short(),
            c.candidates.len(),
            clip(&text, 60)
        ))?;
    }
    Ok(())
}

pub fn execute_show(ml: &Memledger, caller: &Caller, args: &IdPath, out: &mut Output) -> Result<(), CliError> {
    let id = ml.resolve_conflict_id(&args.id)?;
    let c = ml.conflict_record(id)?;
    if !visible(ml, caller, &c)? {
        let scope = ml.scope_of(c.incoming)?.unwrap_or_default();
        return Err(caller.access().refusal(Verb::Read, &scope, String::new()).into());
    }
    if out.json {
        let v = conflict_json(ml, caller, &c)?;
        return out.json_line(&v);
    }
    out.line(format!(
        "conflict {}  {}  {}  opened {} by {}",
        c.conflict_id,
        c.status.as_str(),
        c.kind(),
        c.opened_at.to_human(),
        c.opened_by
    ))?;
    out.line(format!("  settled only with {} authority (and resolve in its scope)", c.needs_authority))?;
    let print_side = |out: &mut Output, label: &str, memory: memledger_schemas::MemoryId| -> Result<(), CliError> {
        if !reads(ml, caller, memory)? {
            return out.line(format!("  {label} {}  {WITHHELD}", memory.short()));
        }
        let m = ml.show(memory)?;
        out.line(format!("  {label} {}  {}  ({}, by {})", memory.short(), m.text, m.authority, m.principal))?;
        if let Some(e) = &m.evidence {
            let when = e.observed_at.map(|t| format!(" said {}", t.to_human())).unwrap_or_default();
            out.line(format!("           from {} lines {}-{}{when}", e.file, e.first_line, e.last_line))?;
            if !e.excerpt.is_empty() {
                out.line(format!("           excerpt: {}", clip(&e.excerpt.replace('\n', " / "), 200)))?;
            }
        }
        Ok(())
    };
    let label = if c.proposed_by().is_some() { "proposed" } else { "new     " };
    print_side(out, label, c.incoming)?;
    for s in &c.candidates {
        print_side(out, "existing", s.memory_id)?;
        if reads(ml, caller, s.memory_id)? {
            out.line(format!("           reason: {}", s.reason))?;
        }
    }
    if let Some(r) = &c.resolution {
        out.line(format!("  resolved {} by {} at {}", r.action, r.by, r.resolved_at.to_human()))?;
        out.line(format!("  undo: memledger conflicts revert {}", c.conflict_id.short()))?;
    } else {
        let s = c.conflict_id.short();
        if let Some(p) = &c.proposal {
            out.line(format!("  proposed by {}: {}", p.model, p.text))?;
            out.line(format!("  accept it with: memledger conflicts resolve {s} --merge {}", shell_quote(&p.text)))?;
        }
        if let Some(by) = c.proposed_by() {
            out.line(format!("  proposed by {by}: accept or reject it with:"))?;
            out.line(format!("    memledger conflicts resolve {s} --accept"))?;
            out.line(format!("    memledger conflicts resolve {s} --reject"))?;
            out.line("  or decide it as a conflict:")?;
        } else {
            out.line("  resolve with one of:")?;
        }
        out.line(format!("    memledger conflicts resolve {s} --keep-new"))?;
        out.line(format!("    memledger conflicts resolve {s} --keep-existing"))?;
        out.line(format!("    memledger conflicts resolve {s} --keep-both"))?;
        out.line(format!("    memledger conflicts resolve {s} --merge \"what is actually true\""))?;
    }
    Ok(())
}

pub fn execute_resolve(ml: &Memledger, caller: &Caller, b: &ResolveBody, out: &mut Output) -> Result<(), CliError> {
    let action = match b.action {
        Action::KeepNew | Action::Accept => ResolutionAction::KeepNew,
        Action::KeepExisting | Action::Reject => ResolutionAction::KeepExisting,
        Action::KeepBoth => ResolutionAction::KeepBoth,
        Action::Merge => ResolutionAction::Merge,
    };
    match (action, &b.merged_text) {
        (ResolutionAction::Merge, None) => {
            return Err(CliError::bad_input("merge needs the merged text: what is true"));
        }
        (ResolutionAction::Merge, Some(t)) => {
            memledger_engine::input::validate_text(t)?;
        }
        (_, Some(_)) => return Err(CliError::bad_input("a merged text goes only with the merge action")),
        (_, None) => {}
    }
    let id = ml.resolve_conflict_id(&b.id)?;
    if matches!(b.action, Action::Accept | Action::Reject) && ml.conflict_record(id)?.proposed_by().is_none() {
        return Err(CliError::bad_input(format!(
            "conflict {} is not a proposal: accept and reject decide proposals; a conflict takes \
             --keep-new, --keep-existing, --keep-both or --merge",
            id.short()
        )));
    }
    let r = ml.resolve_by(id, action, b.merged_text.as_deref(), b.note.clone(), caller, None)?;
    if out.json {
        return out.json_line(&r);
    }
    out.line(format!("resolved {} ({}); undo with `memledger conflicts revert {}`", id.short(), action, id.short()))
}

pub fn execute_revert(ml: &Memledger, caller: &Caller, args: &IdPath, out: &mut Output) -> Result<(), CliError> {
    let id = ml.resolve_conflict_id(&args.id)?;
    let r = ml.revert_by(id, caller)?;
    if out.json {
        return out.json_line(&r);
    }
    out.line(format!("reverted {}: {} effect(s) undone; the conflict is pending again", id.short(), r.effects.len()))
}

pub fn execute_auto(ml: &Memledger, caller: &Caller, args: &AutoBody, out: &mut Output) -> Result<(), CliError> {
    needs_model(ml.models().llm().is_some())?;
    // The daily budget of tokens: what the caller has left of it today.
    let budget = match super::usage::daily_budget()? {
        Some(daily) => {
            let spent = ml.usage(memledger_schemas::Timestamp::now())?.today_of(&caller.principal.name).total();
            Some(daily.saturating_sub(spent))
        }
        None => None,
    };
    let report = ml.judge_pending_within(args.dry_run, caller, budget)?;
    if out.json {
        out.json_line(&report)?;
    } else {
        if report.conflicts.is_empty() {
            out.line("no pending conflicts")?;
        }
        for c in &report.conflicts {
            let verdict = c.verdict.map_or("-", |v| v.as_str());
            let detail = c.error.as_deref().or(c.reason.as_deref()).unwrap_or("");
            out.line(format!("{}  {:<13} {:<13} {}", c.conflict_id.short(), verdict, c.outcome, clip(detail, 80)))?;
        }
        let done = if report.dry_run { "would resolve" } else { "resolved" };
        out.line(format!(
            "{} judged by {}: {} {done}, {} left pending (unsure), {} failed",
            report.judged, report.by, report.resolved, report.left_pending, report.failed
        ))?;
        if !report.dry_run && report.resolved > 0 {
            out.line("undo any of them with `memledger conflicts revert ID`")?;
        }
        if report.left_for_budget > 0 {
            out.line(format!(
                "{} left for a later run: the daily token budget (MEMLEDGER_DAILY_TOKENS) does not cover them today",
                report.left_for_budget
            ))?;
        }
    }
    if report.failed > 0 {
        out.flush()?;
        return Err(CliError::new(
            Exit::Failure,
            format!("{} of {} judge call(s) failed; those conflicts stay pending", report.failed, report.judged),
            None,
        ));
    }
    Ok(())
}

pub fn execute_scan(ml: &Memledger, caller: &Caller, args: &ScanBody, out: &mut Output) -> Result<(), CliError> {
    check_scan(args)?;
    let options = memledger_engine::scan::ScanOptions {
        max_pairs: args.max_pairs,
        min_confidence: args.min_confidence,
        dry_run: args.dry_run,
        scope: args.scope.clone(),
    };
    let report = ml.scan_conflicts_by(&options, caller)?;
    if out.json {
        return out.json_line(&report);
    }
    for p in report.pairs.iter().filter(|p| p.relation == memledger_schemas::Relation::Contradictory) {
        let text = |id| ml.show(id).map(|m| m.text).unwrap_or_default();
        let cid = p.conflict_id.map(|c| format!(" conflict {}", c.short())).unwrap_or_default();
        out.line(format!("{:<16} {} vs {}{cid}", p.outcome, p.incoming.short(), p.candidate.short()))?;
        out.line(format!("  new      {}", clip(&text(p.incoming), 70)))?;
        out.line(format!("  existing {}", clip(&text(p.candidate), 70)))?;
        out.line(format!("  {} ({}, confidence {:.2})", clip(&p.reason, 100), p.method, p.confidence))?;
    }
    let by = report.model.as_deref().map_or("the lexical rules".to_string(), |m| format!("the model {m}"));
    out.line(format!(
        "{} memories, {} pair(s) examined by {by} ({} already recorded, skipped): {} contradiction(s), {} conflict(s) {}",
        report.memories,
        report.examined,
        report.skipped_recorded,
        report.detected,
        report.opened,
        if report.dry_run { "opened (dry run: none)" } else { "opened" }
    ))
}

pub fn execute_open(ml: &Memledger, caller: &Caller, b: &OpenBody, out: &mut Output) -> Result<(), CliError> {
    if let Some(note) = &b.note {
        memledger_engine::input::validate_text(note)?;
    }
    let (first, second) = (ml.resolve_memory_id(&b.a)?, ml.resolve_memory_id(&b.b)?);
    let (conflict_id, seqs) = ml.open_conflict_by(first, second, b.note.as_deref(), caller)?;
    if out.json {
        return out.json_line(&json!({ "conflict_id": conflict_id, "seqs": seqs }));
    }
    out.line(format!(
        "opened conflict {}; resolve it with `memledger conflicts show {}`",
        conflict_id.short(),
        conflict_id.short()
    ))
}
