//! The command layer between the engine and every surface (docs/adr/0041-command-layer.md): one
//! typed request per store command ([`request::Call`]), one typed answer ([`answer::Answer`]),
//! one typed error ([`error::CommandError`]), and [`execute`], the one place a call becomes
//! engine calls — whether the CLI opened the store itself or `memledger serve` runs it for a
//! client. The answer serialized is the command's `--json` document and the HTTP body; the CLI
//! renders human text from it in its own process.

pub mod answer;
pub mod conflicts;
pub mod error;
pub mod fence;
pub mod host;
pub mod memories;
pub mod principals;
pub mod request;
pub mod store;

pub use answer::{Answer, Executed};
pub use error::CommandError;
pub use request::Call;

use memledger_engine::{Caller, Memledger};

/// What the process that executes commands brings of its own (not from the call).
#[derive(Clone)]
pub struct Settings {
    /// The chat-model tokens a principal may spend a day (`MEMLEDGER_DAILY_TOKENS`), or why the
    /// setting is unreadable (the commands that need it fail with it; the rest run).
    pub daily_budget: Result<Option<u64>, CommandError>,
    /// Told how far a long command (rebuild) is: events done, of how many.
    pub progress: Option<std::sync::Arc<dyn Fn(u64, u64) + Send + Sync>>,
}

impl Default for Settings {
    /// No budget, no progress told.
    fn default() -> Settings {
        Settings { daily_budget: Ok(None), progress: None }
    }
}

/// Run `call` on an open store for `caller`. The engine checks each step against the caller's
/// grants; a refusal writes nothing.
pub fn execute(ml: &Memledger, caller: &Caller, call: &Call, settings: &Settings) -> Executed {
    // A span per command (exported only when traces are on); its children are the engine's
    // stages and model calls.
    let name = call.name();
    let span = tracing::info_span!(
        "memledger.command",
        otel.name = %format!("memledger {name}"),
        memledger.command = %name,
        memledger.principal = %caller.principal.name,
        memledger.exit_code = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    );
    let _entered = span.enter();
    // The chat model's calls the command made count for its principal (memledger usage).
    let (mut executed, used) =
        memledger_engine::models::metered(|| match execute_metered(ml, caller, call, settings) {
            Ok(executed) => executed,
            Err(error) => Executed::failed(error),
        });
    if let Err(e) = ml.record_usage(&caller.principal.name, used) {
        executed.notes.push(format!("memledger: the model usage of this command was not counted: {e}"));
    }
    match &executed.error {
        None => span.record("memledger.exit_code", 0),
        Some(e) => {
            span.record("memledger.exit_code", e.exit().code() as i64);
            span.record("otel.status_code", "ERROR");
            // The exit code, never the message (which may quote what the caller sent).
            span.record("otel.status_description", format!("exit {}", e.exit().code()))
        }
    };
    executed
}

fn execute_metered(
    ml: &Memledger,
    caller: &Caller,
    call: &Call,
    settings: &Settings,
) -> Result<Executed, CommandError> {
    // A command sees what every machine appended to a shared ledger before it started.
    if ml.ledger().is_shared() {
        ml.catch_up()?;
    }
    // The store's upkeep is its administrators': rebuilding views, embedding, importing.
    if matches!(call, Call::Rebuild(_) | Call::Embed(_)) && !caller.access().administers_store() {
        let what = if matches!(call, Call::Rebuild(_)) {
            " (rebuild replays every view)"
        } else {
            " (embed writes every vector)"
        };
        return Err(caller.access().refusal(memledger_schemas::Verb::Admin, "*", what.into()).into());
    }
    let answer = match call {
        Call::Save(b) => Answer::Save(memories::save(ml, caller, b)?),
        Call::SaveLines(b) => return memories::save_lines(ml, caller, b),
        Call::Update(b) => Answer::Update(memories::update(ml, caller, b)?),
        Call::Forget(b) => Answer::Forget(memories::forget(ml, caller, b)?),
        Call::Erase(b) => Answer::Erase(memories::erase(ml, caller, b)?),
        Call::Show(q) => Answer::Show(Box::new(memories::show(ml, caller, q)?)),
        Call::List(q) => Answer::List(memories::list(ml, caller, q)?),
        Call::Recall(b) => Answer::Recall(memories::recall(ml, caller, b)?),
        Call::History(q) => Answer::History(memories::history(ml, caller, q)?),
        Call::Why(q) => Answer::Why(memories::why(ml, caller, q)?),
        Call::Browse(q) => Answer::Browse(memories::browse(ml, caller, q)?),
        Call::ConflictsList(q) => Answer::ConflictsList(conflicts::list(ml, caller, q)?),
        Call::ConflictsShow(b) => Answer::ConflictsShow(Box::new(conflicts::show(ml, caller, b)?)),
        Call::ConflictsResolve(b) => Answer::ConflictsResolve(conflicts::resolve(ml, caller, b)?),
        Call::ConflictsRevert(b) => Answer::ConflictsRevert(conflicts::revert(ml, caller, b)?),
        Call::ConflictsAuto(b) => return conflicts::auto(ml, caller, b, settings),
        Call::ConflictsScan(b) => Answer::ConflictsScan(conflicts::scan(ml, caller, b)?),
        Call::ConflictsOpen(b) => Answer::ConflictsOpen(conflicts::open(ml, caller, b)?),
        Call::Log(q) => Answer::Log(store::log(ml, caller, q)?),
        Call::Rebuild(b) => Answer::Rebuild(store::rebuild(ml, b, settings)?),
        Call::Verify(_) => return store::verify(ml),
        Call::Stats(_) => Answer::Stats(store::stats(ml, caller)?),
        Call::Embed(b) => Answer::Embed(store::embed(ml, b)?),
        Call::Usage(_) => Answer::Usage(store::usage(ml, caller, settings)?),
        Call::ReviewConflicts(q) => Answer::ReviewConflicts(store::review_conflicts(ml, caller, q)?),
        Call::Events(q) => Answer::Events(store::events(ml, caller, q)?),
        Call::NearMisses(q) => Answer::NearMisses(store::near_misses(ml, caller, q)?),
        Call::Timeline(_) => Answer::Timeline(store::timeline(ml, caller)?),
        Call::Whoami(_) => Answer::Whoami(principals::whoami(caller)),
        Call::PrincipalsList(_) => Answer::PrincipalsList(principals::list(ml, caller)?),
        Call::PrincipalsAdd(b) => Answer::PrincipalsAdd(principals::add(ml, caller, b)?),
        Call::PrincipalsGrant(b) => Answer::PrincipalsGrant(principals::grant(ml, caller, b)?),
        Call::PrincipalsRevoke(b) => Answer::PrincipalsRevoke(principals::revoke(ml, caller, b)?),
        Call::PrincipalsRotate(b) => Answer::PrincipalsRotate(principals::rotate(ml, caller, b)?),
        Call::TranscriptProgress(q) => Answer::TranscriptProgress(principals::transcript_progress(ml, caller, q)?),
        Call::TranscriptChunk(b) => Answer::TranscriptChunk(principals::transcript_chunk(ml, caller, b)?),
    };
    Ok(Executed::answered(answer))
}

/// The valid time a read asks about: `--valid-at`, else the `--as-of` point's time, else the
/// clock of the process that answers (docs/cli.md).
pub fn valid_time(
    live: &Memledger,
    point: Option<memledger_engine::AsOf>,
    valid_at: Option<&str>,
) -> Result<memledger_schemas::Timestamp, CommandError> {
    let valid_at = valid_at.map(memledger_engine::validity::parse_valid_at).transpose()?;
    Ok(live.valid_time(point, valid_at, memledger_schemas::Timestamp::now())?)
}
