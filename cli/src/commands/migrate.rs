//! `memledger migrate`: copy this store's ledger into a shared ledger, checked end to end.

use memledger_engine::EngineError;
use memledger_engine::error::Exit;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Copy this store's ledger into an empty shared ledger (postgres://…), then check that both end
/// at the same head (seq and hash). Run it again to resume a copy that stopped: what the shared
/// ledger holds is compared, not copied twice. Afterwards open the store with `--ledger URL`.
///
/// Example: memledger migrate --to postgres://me@db.internal/memledger
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The shared ledger to copy into.
    #[arg(long, value_name = "URL")]
    pub to: String,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    if ctx.ledger.is_some() {
        return Err(CliError::bad_input(
            "migrate copies a store's own ledger: drop --ledger (MEMLEDGER_LEDGER_URL) and name the target with --to",
        ));
    }
    if crate::backend::Server::connect(&ctx.dir, None).is_some() {
        return Err(CliError::new(
            Exit::Failure,
            format!("a memledger server holds the store at {}", ctx.dir.display()),
            Some("stop it first: the copy needs the store to itself".into()),
        ));
    }
    let target = memledger_engine::connect_shared_ledger(&args.to).map_err(|e| CliError::from(EngineError::Open(e)))?;
    // The copy is signed with this machine's key, the shared ledger's first (docs/shared-ledger.md).
    if let Some(signer) = ctx.signer()? {
        target.sign_with(signer, &memledger_engine::machine_name()).map_err(EngineError::from)?;
    }
    let ml = ctx.open_direct(false)?;
    let report = ml.ledger().copy_to(target.as_ref()).map_err(EngineError::from)?;
    // The principals' tokens keep working on the shared ledger: its verifier secret is this
    // store's (unless it had one of its own already, which then stands).
    let name = memledger_engine::principals::VERIFIER_SECRET;
    if let Some(ours) = ml.ledger().secret(name, None).map_err(EngineError::from)? {
        let theirs = target.secret(name, Some(&ours)).map_err(EngineError::from)?;
        if theirs != Some(ours) {
            out.note(
                "memledger: the shared ledger has principals' tokens of its own: rotate this store's principals' \
                 tokens (`memledger principals rotate NAME`) to use them there",
            );
        }
    }
    ml.ledger().adopt(target.as_ref()).map_err(EngineError::from)?;
    if out.json {
        return out.json_line(&report);
    }
    out.line(format!(
        "copied {} event(s) to {} ({} already there); both end at seq {} ({})",
        report.copied,
        target.location(),
        report.already_present,
        report.head_seq,
        report.head_hash.hex()
    ))
}
