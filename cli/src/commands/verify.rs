//! `memledger verify`: the hash chain, the views and the text index.

use memledger_engine::EngineError;
use memledger_engine::WitnessPlace;
use memledger_engine::reads::VerifyView;
use memledger_server::api::{Call, Empty};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};
use memledger_engine::error::Exit;

/// Verify the hash chain from the first event to the head, every signed checkpoint (each event
/// must be covered by one signed with a key of the store), that every view equals a fresh
/// replay, and that the text index holds exactly the active memories under their candidate
/// terms. Exit 1 when anything is wrong. With `--witness FILE|URL` (where `memledger checkpoint
/// --to` keeps it: a file, an HTTP(S) URL, a NATS subject), the store must also hold the history
/// that witness signed: exit 6 when it does not, or when nothing is kept there.
///
/// Example: memledger verify --witness nats://127.0.0.1:4222/memledger.witness.laptop
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A witness record to check the store against: a file, `http(s)://…` or
    /// `nats://HOST:PORT/SUBJECT` (opens the store here, not through a server).
    #[arg(long, value_name = "FILE|URL")]
    pub witness: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let Some(place) = args.witness else { return ctx.run(Call::Verify(Empty {}), out) };
    let place = WitnessPlace::parse(&place).map_err(|e| CliError::bad_input(e.to_string()))?;
    let Some(witness) = place.read().map_err(EngineError::from)? else {
        return Err(CliError::new(
            Exit::Witness,
            format!("no witness is kept at {}", place.shown()),
            Some("`memledger checkpoint --to` keeps one there".into()),
        ));
    };
    let ml = ctx.open_direct(false)?;
    let disagreement = ml.ledger().disagreement_with(&witness, &place.shown()).map_err(EngineError::from)?;
    if let Some(problem) = disagreement {
        return Err(CliError::new(
            Exit::Witness,
            format!("{} disagrees with the witness: {problem}", ctx.dir.display()),
            Some("a copy older than, or different from, the one the witness signed".into()),
        ));
    }
    // The store compared with the witness is the one verified: no catch-up, no token needed.
    let executed = memledger_commands::store::verify(&ml).unwrap_or_else(memledger_commands::Executed::failed);
    super::print_executed(executed, out)
}

impl Render for VerifyView {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        if self.ledger.ok && self.views_consistent {
            out.line(format!(
                "ok: {} events, head seq {} {}; views and text index consistent",
                self.ledger.events, self.ledger.head_seq, self.ledger.head_hash
            ))
        } else {
            out.line(format!(
                "NOT OK: first bad seq {:?}: {}; inconsistent views: {:?}",
                self.ledger.first_bad_seq,
                self.ledger.problem.clone().unwrap_or_default(),
                self.inconsistent_views
            ))
        }
    }
}
