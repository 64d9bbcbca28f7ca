//! `memledger checkpoint`: the newest signed checkpoint as a witness, written where a team keeps
//! it, and the deliberate acceptance of a store that disagrees with its witness.

use memledger_engine::EngineError;
use memledger_engine::error::Exit;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Print the store's newest signed checkpoint (its head, seq and hash, signed with this
/// machine's key) as a witness record, or write it to a file (`--to`) that `memledger verify
/// --witness FILE` checks any copy of the store against. With `--accept`, take a store that
/// disagrees with its witness (restored from a backup on purpose) as its history from now on:
/// who accepted which head instead of which is recorded, signed, and shown by `checkpoint
/// --accepted`. Needs the store to itself (stop its server first).
///
/// Example: memledger checkpoint --to /mnt/team/witness/laptop.json
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Write the witness record to this file instead of printing it.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["accept", "accepted"])]
    pub to: Option<std::path::PathBuf>,
    /// Accept the store's head against its witness, saying why.
    #[arg(long, value_name = "REASON", conflicts_with = "accepted")]
    pub accept: Option<String>,
    /// List the heads accepted so far.
    #[arg(long)]
    pub accepted: bool,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    if crate::backend::Server::connect(&ctx.dir, None).is_some() {
        return Err(CliError::new(
            Exit::Failure,
            format!("a memledger server holds the store at {}", ctx.dir.display()),
            Some("stop it first: checkpoints are read and accepted with the store to itself".into()),
        ));
    }
    if let Some(reason) = &args.accept {
        if reason.trim().is_empty() {
            return Err(CliError::bad_input("--accept needs a reason (who restored what, and why)"));
        }
        let ctx = Context { accept_witness: true, ..ctx.clone() };
        let ml = ctx.open_direct(false)?;
        let acceptance = ml.ledger().accept_head(&ctx.actor, reason.trim()).map_err(EngineError::from)?;
        if out.json {
            return out.json_line(&acceptance);
        }
        return match &acceptance.disagreement {
            Some(d) => out.line(format!(
                "accepted head seq {} ({}) as {}: {d}",
                acceptance.head_seq, acceptance.head_hash, acceptance.by
            )),
            None => out.line(format!(
                "the store agreed with its witness; head seq {} signed again by {}",
                acceptance.head_seq, acceptance.by
            )),
        };
    }
    let ml = ctx.open_direct(false)?;
    if args.accepted {
        let all = ml.ledger().acceptances().map_err(EngineError::from)?;
        if out.json {
            return out.json_line(&serde_json::json!({ "accepted": all }));
        }
        if all.is_empty() {
            return out.line("no head was ever accepted against a witness");
        }
        for a in all {
            out.line(format!(
                "{}  {} accepted seq {} instead of {}: {}",
                a.at,
                a.by,
                a.head_seq,
                a.instead_of_seq.map_or("no witness".into(), |s| format!("seq {s}")),
                a.reason
            ))?;
        }
        return Ok(());
    }
    let Some(witness) = ml.ledger().checkpoint().map_err(EngineError::from)? else {
        return Err(CliError::new(
            Exit::Failure,
            "the store's head is not signed",
            Some("an empty store, or one this machine does not sign: see `memledger verify`".into()),
        ));
    };
    match &args.to {
        Some(path) => {
            witness.write(path).map_err(EngineError::from)?;
            if out.json {
                out.json_line(&witness)
            } else {
                out.line(format!("wrote the checkpoint at seq {} to {}", witness.seq, path.display()))
            }
        }
        None => out.json_line(&witness),
    }
}
