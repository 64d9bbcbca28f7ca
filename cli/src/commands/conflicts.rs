//! `memledger conflicts`: the queue of contradictions, and resolving and reverting them.

use memledger_engine::Memledger;
use memledger_engine::{ConflictRecord, ConflictStatus};
use memledger_schemas::ResolutionAction;
use serde_json::{Value, json};

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
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// pending, resolved or all.
    #[arg(long, default_value = "pending")]
    pub status: String,
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
    /// Why (recorded with the resolution).
    #[arg(long)]
    pub note: Option<String>,
}

fn conflict_json(ml: &Memledger, c: &ConflictRecord) -> Result<Value, CliError> {
    let side = |id| -> Result<Value, CliError> {
        Ok(match ml.show(id) {
            Ok(m) => json!({"memory_id": id, "text": m.text, "status": m.status, "version": m.version}),
            Err(_) => json!({"memory_id": id}),
        })
    };
    let candidates: Vec<Value> = c
        .candidates
        .iter()
        .map(|s| -> Result<Value, CliError> {
            let mut v = side(s.memory_id)?;
            v["reason"] = json!(s.reason);
            Ok(v)
        })
        .collect::<Result<_, _>>()?;
    Ok(json!({
        "conflict_id": c.conflict_id,
        "status": c.status,
        "incoming": c.incoming,
        "incoming_memory": side(c.incoming)?,
        "candidates": c.candidates.iter().map(|s| s.memory_id).collect::<Vec<_>>(),
        "candidate_memories": candidates,
        "reasons": c.candidates.iter().map(|s| s.reason.clone()).collect::<Vec<_>>(),
        "opened_at": c.opened_at,
        "opened_seq": c.opened_seq,
        "resolution": c.resolution,
        "resolutions": c.resolutions,
        "reverts": c.reverts,
    }))
}

pub fn run(ctx: &Context, command: Command, out: &mut Output) -> Result<(), CliError> {
    match command {
        Command::List(args) => {
            let status = match args.status.as_str() {
                "pending" => Some(ConflictStatus::Pending),
                "resolved" => Some(ConflictStatus::Resolved),
                "all" => None,
                other => {
                    return Err(CliError::bad_input(format!("unknown status {other:?} (pending, resolved or all)")));
                }
            };
            let ml = ctx.open(false)?;
            let list = ml.conflicts(status)?;
            if out.json {
                let items: Vec<Value> = list.iter().map(|c| conflict_json(&ml, c)).collect::<Result<_, _>>()?;
                return out.json_line(&json!({ "conflicts": items }));
            }
            if list.is_empty() {
                out.line("no conflicts")?;
            }
            for c in &list {
                let text = ml.show(c.incoming).map(|m| m.text).unwrap_or_default();
                out.line(format!(
                    "{}  {:<8} {}  {} vs {} other(s): {}",
                    c.conflict_id.short(),
                    c.status.as_str(),
                    c.opened_at.to_human(),
                    c.incoming.short(),
                    c.candidates.len(),
                    clip(&text, 60)
                ))?;
            }
            Ok(())
        }
        Command::Show(args) => {
            let ml = ctx.open(false)?;
            let id = ml.resolve_conflict_id(&args.id)?;
            let c = ml.conflict_record(id)?;
            if out.json {
                let v = conflict_json(&ml, &c)?;
                return out.json_line(&v);
            }
            out.line(format!("conflict {}  {}  opened {}", c.conflict_id, c.status.as_str(), c.opened_at.to_human()))?;
            let incoming = ml.show(c.incoming)?;
            out.line(format!("  new      {}  {}", c.incoming.short(), incoming.text))?;
            for s in &c.candidates {
                let m = ml.show(s.memory_id)?;
                out.line(format!("  existing {}  {}", s.memory_id.short(), m.text))?;
                out.line(format!("           reason: {}", s.reason))?;
            }
            if let Some(r) = &c.resolution {
                out.line(format!("  resolved {} by {} at {}", r.action, r.by, r.resolved_at.to_human()))?;
                out.line(format!("  undo: memledger conflicts revert {}", c.conflict_id.short()))?;
            } else {
                let s = c.conflict_id.short();
                out.line("  resolve with one of:")?;
                out.line(format!("    memledger conflicts resolve {s} --keep-new"))?;
                out.line(format!("    memledger conflicts resolve {s} --keep-existing"))?;
                out.line(format!("    memledger conflicts resolve {s} --keep-both"))?;
                out.line(format!("    memledger conflicts resolve {s} --merge \"what is actually true\""))?;
            }
            Ok(())
        }
        Command::Resolve(args) => {
            let action = if args.keep_new {
                ResolutionAction::KeepNew
            } else if args.keep_existing {
                ResolutionAction::KeepExisting
            } else if args.keep_both {
                ResolutionAction::KeepBoth
            } else {
                ResolutionAction::Merge
            };
            if let Some(t) = &args.merge {
                memledger_engine::input::validate_text(t)?;
            }
            let ml = ctx.open(false)?;
            let id = ml.resolve_conflict_id(&args.id)?;
            let r = ml.resolve(id, action, args.merge.as_deref(), args.note, &ctx.actor)?;
            if out.json {
                return out.json_line(&r);
            }
            out.line(format!(
                "resolved {} ({}); undo with `memledger conflicts revert {}`",
                id.short(),
                action,
                id.short()
            ))
        }
        Command::Revert(args) => {
            let ml = ctx.open(false)?;
            let id = ml.resolve_conflict_id(&args.id)?;
            let r = ml.revert(id, &ctx.actor)?;
            if out.json {
                return out.json_line(&r);
            }
            out.line(format!(
                "reverted {}: {} effect(s) undone; the conflict is pending again",
                id.short(),
                r.effects.len()
            ))
        }
    }
}
