//! `memledger verify`: the hash chain, the views and the text index.

use memledger_engine::Memledger;
use memledger_server::api::{Call, Empty};

use crate::app::Context;
use crate::output::{CliError, Output};
use memledger_engine::error::Exit;

/// Verify the hash chain from the first event to the head, that every view equals a fresh
/// replay, and that the text index holds exactly the active memories under their candidate
/// terms. Exit 1 when anything is wrong.
///
/// Example: memledger verify
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(ctx: &Context, _args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Verify(Empty {}), out)
}

pub fn execute(ml: &Memledger, out: &mut Output) -> Result<(), CliError> {
    let v = ml.verify()?;
    if out.json {
        out.json_line(&v)?;
    } else if v.ledger.ok && v.views_consistent {
        out.line(format!(
            "ok: {} events, head seq {} {}; views and text index consistent",
            v.ledger.events, v.ledger.head_seq, v.ledger.head_hash
        ))?;
    } else {
        out.line(format!(
            "NOT OK: first bad seq {:?}: {}; inconsistent views: {:?}",
            v.ledger.first_bad_seq,
            v.ledger.problem.clone().unwrap_or_default(),
            v.inconsistent_views
        ))?;
    }
    if v.ledger.ok && v.views_consistent {
        Ok(())
    } else {
        out.flush()?;
        Err(CliError::new(
            Exit::Failure,
            "verification failed",
            v.ledger.first_bad_seq.map(|s| format!("the chain breaks at seq {s}")),
        ))
    }
}
