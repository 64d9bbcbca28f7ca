//! `memledger conflicts`: the queue of contradictions, and resolving and reverting them.

use memledger_commands::answer::{ConflictDoc, ConflictsDoc, OpenedDoc, SideDoc};
use memledger_commands::conflicts::{WITHHELD, check_list, check_scan, needs_model};
use memledger_engine::ConflictStatus;
use memledger_engine::models::judge::JudgeReport;
use memledger_engine::resolve::ResolveResult;
use memledger_engine::scan::ScanReport;

use memledger_server::api::{Action, AutoBody, Call, ConflictsQuery, IdPath, OpenBody, ResolveBody, ScanBody};

use super::Render;
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

/// The conflicts for people: an aligned table, the conflict, its state, when, the incoming
/// memory and its text.
impl Render for ConflictsDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        if self.conflicts.is_empty() {
            return out.line("no conflicts");
        }
        let head = format!("{:<12}  {:<8}  {:<20}  {:<12}  {:<5}  NEW TEXT", "ID", "STATUS", "OPENED", "NEW", "VS");
        out.line(crate::style::bold(&head))?;
        for c in &self.conflicts {
            let text = side_text(&c.incoming_memory);
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
                clip(text, 60)
            ))?;
        }
        Ok(())
    }
}

/// A side's text, or what stands in for it.
fn side_text(side: &SideDoc) -> &str {
    match &side.memory {
        _ if side.withheld => WITHHELD,
        Some(m) => &m.text,
        None => "[not found]",
    }
}

/// One conflict for people: its sides, and the commands that settle it.
impl Render for ConflictDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        out.line(format!(
            "conflict {}  {}  {}  opened {} by {}",
            self.conflict_id,
            self.status.as_str(),
            self.kind,
            self.opened_at.to_human(),
            self.opened_by
        ))?;
        out.line(format!("  settled only with {} authority (and resolve in its scope)", self.needs_authority))?;
        let print_side = |out: &mut Output, label: &str, side: &SideDoc| -> Result<(), CliError> {
            let Some(m) = side.memory.as_ref().filter(|_| !side.withheld) else {
                return out.line(format!("  {label} {}  {}", side.memory_id.short(), side_text(side)));
            };
            out.line(format!(
                "  {label} {}  {}  ({}, by {})",
                side.memory_id.short(),
                m.text,
                m.authority,
                m.principal
            ))?;
            if let Some(file) = &m.file {
                let when = m.observed_at.map(|t| format!(" said {}", t.to_human())).unwrap_or_default();
                let (first, last) = (m.first_line.unwrap_or_default(), m.last_line.unwrap_or_default());
                out.line(format!("           from {file} lines {first}-{last}{when}"))?;
            }
            if let Some(excerpt) = m.excerpt.as_deref().filter(|e| !e.is_empty()) {
                out.line(format!("           excerpt: {}", clip(&excerpt.replace('\n', " / "), 200)))?;
            }
            Ok(())
        };
        let label = if self.proposed_by.is_some() { "proposed" } else { "new     " };
        print_side(out, label, &self.incoming_memory)?;
        for side in &self.candidate_memories {
            print_side(out, "existing", side)?;
            if let (false, Some(reason)) = (side.withheld, &side.reason) {
                out.line(format!("           reason: {reason}"))?;
            }
        }
        let s = self.conflict_id.short();
        if let Some(r) = &self.resolution {
            out.line(format!("  resolved {} by {} at {}", r.action, r.by, r.resolved_at.to_human()))?;
            return out.line(format!("  undo: memledger conflicts revert {s}"));
        }
        if let Some(p) = &self.proposal {
            out.line(format!("  proposed by {}: {}", p.model, p.text))?;
            out.line(format!("  accept it with: memledger conflicts resolve {s} --merge {}", shell_quote(&p.text)))?;
        }
        if let Some(by) = &self.proposed_by {
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
        out.line(format!("    memledger conflicts resolve {s} --merge \"what is actually true\""))
    }
}

/// A resolution, or its revert (the same document answers both).
impl Render for ResolveResult {
    fn render(&self, out: &mut Output, command: &str) -> Result<(), CliError> {
        let id = self.conflict_id.short();
        if command == "conflicts_revert" {
            return out.line(format!(
                "reverted {id}: {} effect(s) undone; the conflict is pending again",
                self.effects.len()
            ));
        }
        let action = self.action.map(|a| a.to_string()).unwrap_or_default();
        out.line(format!("resolved {id} ({action}); undo with `memledger conflicts revert {id}`"))
    }
}

impl Render for JudgeReport {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        if self.conflicts.is_empty() {
            out.line("no pending conflicts")?;
        }
        for c in &self.conflicts {
            let verdict = c.verdict.map_or("-", |v| v.as_str());
            let detail = c.error.as_deref().or(c.reason.as_deref()).unwrap_or("");
            out.line(format!("{}  {:<13} {:<13} {}", c.conflict_id.short(), verdict, c.outcome, clip(detail, 80)))?;
        }
        let done = if self.dry_run { "would resolve" } else { "resolved" };
        out.line(format!(
            "{} judged by {}: {} {done}, {} left pending (unsure), {} failed",
            self.judged, self.by, self.resolved, self.left_pending, self.failed
        ))?;
        if !self.dry_run && self.resolved > 0 {
            out.line("undo any of them with `memledger conflicts revert ID`")?;
        }
        if self.left_for_budget > 0 {
            out.line(format!(
                "{} left for a later run: the daily token budget (MEMLEDGER_DAILY_TOKENS) does not cover them today",
                self.left_for_budget
            ))?;
        }
        Ok(())
    }
}

impl Render for ScanReport {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        for p in self.pairs.iter().filter(|p| p.relation == memledger_schemas::Relation::Contradictory) {
            let cid = p.conflict_id.map(|c| format!(" conflict {}", c.short())).unwrap_or_default();
            out.line(format!("{:<16} {} vs {}{cid}", p.outcome, p.incoming.short(), p.candidate.short()))?;
            out.line(format!("  new      {}", clip(&p.incoming_text, 70)))?;
            out.line(format!("  existing {}", clip(&p.candidate_text, 70)))?;
            out.line(format!("  {} ({}, confidence {:.2})", clip(&p.reason, 100), p.method, p.confidence))?;
        }
        let by = self.model.as_deref().map_or("the lexical rules".to_string(), |m| format!("the model {m}"));
        out.line(format!(
            "{} memories, {} pair(s) examined by {by} ({} already recorded, skipped): {} contradiction(s), {} conflict(s) {}",
            self.memories,
            self.examined,
            self.skipped_recorded,
            self.detected,
            self.opened,
            if self.dry_run { "opened (dry run: none)" } else { "opened" }
        ))
    }
}

impl Render for OpenedDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        let id = self.conflict_id.short();
        out.line(format!("opened conflict {id}; resolve it with `memledger conflicts show {id}`"))
    }
}
