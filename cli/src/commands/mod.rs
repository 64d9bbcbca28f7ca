//! One module per command, each an `Args` struct (its doc comment is the help text) and `run`.

pub mod checkpoint;
pub mod classify;
pub mod completions;
pub mod conflicts;
pub mod embed;
pub mod erase;
pub mod export;
pub mod forget;
pub mod history;
pub mod hooks;
pub mod import;
pub mod list;
pub mod log;
pub mod mcp;
pub mod migrate;
pub mod principals;
pub mod rebuild;
pub mod recall;
pub mod review;
pub mod save;
pub mod serve;
pub mod sessions;
pub mod show;
pub mod stats;
pub mod status;
pub mod stream;
pub mod ui;
pub mod update;
pub mod usage;
pub mod verify;
pub mod why;

use std::io::Read;

use memledger_engine::error::Exit;
use memledger_engine::{Caller, Memledger};
use memledger_server::api::{Call, Reply};

use crate::output::{CliError, Output};

/// Run a store command on an open store for `caller`, printing to `out` as the command does;
/// the lines refused (`save --from` through a server), else 0. The one place a [`Call`] becomes
/// engine calls, whether this process opened the store or the server runs it for a client; the
/// engine checks each against the caller's grants, and a refusal writes nothing.
pub fn execute(ml: &Memledger, caller: &Caller, call: &Call, out: &mut Output) -> Result<usize, CliError> {
    // A span per command (exported only when traces are on: crate::telemetry); its children are
    // the engine's stages and model calls.
    let span = tracing::info_span!(
        "memledger.command",
        otel.name = %format!("memledger {}", command_name(call)),
        memledger.command = %command_name(call),
        memledger.principal = %caller.principal.name,
        memledger.exit_code = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    );
    let _entered = span.enter();
    // The chat model's calls the command made count for its principal (memledger usage).
    let (result, used) = memledger_engine::models::metered(|| execute_metered(ml, caller, call, out));
    if let Err(e) = ml.record_usage(&caller.principal.name, used) {
        out.note(format!("memledger: the model usage of this command was not counted: {e}"));
    }
    match &result {
        Ok(_) => span.record("memledger.exit_code", 0),
        Err(e) => {
            span.record("memledger.exit_code", e.code.code() as i64);
            span.record("otel.status_code", "ERROR");
            // The exit code, never the message (which may quote what the caller sent).
            span.record("otel.status_description", format!("exit {}", e.code.code()))
        }
    };
    result
}

/// A command's name as the API spells it (`save`, `conflicts_resolve`): the `command` tag of
/// its JSON form.
fn command_name(call: &Call) -> String {
    serde_json::to_value(call)
        .ok()
        .and_then(|v| v.get("command").and_then(|c| c.as_str()).map(str::to_string))
        .unwrap_or_default()
}

fn execute_metered(ml: &Memledger, caller: &Caller, call: &Call, out: &mut Output) -> Result<usize, CliError> {
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
    match call {
        Call::Save(b) => save::execute(ml, caller, b, out)?,
        Call::SaveLines(b) => return save::execute_lines(ml, caller, b, out),
        Call::Update(b) => update::execute(ml, caller, b, out)?,
        Call::Forget(b) => forget::execute(ml, caller, b, out)?,
        Call::Erase(b) => erase::execute(ml, caller, b, out)?,
        Call::Show(q) => show::execute(ml, caller, q, out)?,
        Call::List(q) => list::execute(ml, caller, q, out)?,
        Call::Recall(b) => recall::execute(ml, caller, b, out)?,
        Call::History(q) => history::execute(ml, caller, q, out)?,
        Call::Why(q) => why::execute(ml, caller, q, out)?,
        Call::ConflictsList(q) => conflicts::execute_list(ml, caller, q, out)?,
        Call::ConflictsShow(b) => conflicts::execute_show(ml, caller, b, out)?,
        Call::ConflictsResolve(b) => conflicts::execute_resolve(ml, caller, b, out)?,
        Call::ConflictsRevert(b) => conflicts::execute_revert(ml, caller, b, out)?,
        Call::ConflictsAuto(b) => conflicts::execute_auto(ml, caller, b, out)?,
        Call::ConflictsScan(b) => conflicts::execute_scan(ml, caller, b, out)?,
        Call::Log(q) => log::execute(ml, caller, q, out)?,
        Call::Rebuild(b) => rebuild::execute(ml, b, out)?,
        Call::Verify(_) => verify::execute(ml, out)?,
        Call::Stats(_) => stats::execute(ml, caller, out)?,
        Call::Embed(b) => embed::execute(ml, b, out)?,
        Call::ConflictsOpen(b) => conflicts::execute_open(ml, caller, b, out)?,
        Call::ReviewConflicts(q) => review::execute_conflicts(ml, caller, q, out)?,
        Call::Events(q) => review::execute_events(ml, caller, q, out)?,
        Call::NearMisses(q) => review::execute_near_misses(ml, caller, q, out)?,
        Call::Timeline(_) => review::execute_timeline(ml, caller, out)?,
        Call::Browse(q) => list::execute_browse(ml, caller, q, out)?,
        Call::Usage(_) => usage::execute(ml, caller, out)?,
        Call::Whoami(_) => principals::execute_whoami(caller, out)?,
        Call::PrincipalsList(_) => principals::execute_list(ml, caller, out)?,
        Call::PrincipalsAdd(b) => principals::execute_add(ml, caller, b, out)?,
        Call::PrincipalsGrant(b) => principals::execute_grant(ml, caller, b, out)?,
        Call::PrincipalsRevoke(b) => principals::execute_revoke(ml, caller, b, out)?,
        Call::PrincipalsRotate(b) => principals::execute_rotate(ml, caller, b, out)?,
        Call::TranscriptProgress(q) => sessions::execute_progress(ml, caller, q, out)?,
        Call::TranscriptChunk(b) => sessions::execute_chunk(ml, caller, b, out)?,
    }
    Ok(0)
}

/// What a command run into a buffered output amounts to, for a client.
pub fn reply(result: Result<usize, CliError>, out: Output) -> Reply {
    let (stdout, stderr) = out.into_parts();
    match result {
        Ok(0) => Reply { stdout, stderr, ..Reply::default() },
        Ok(refused) => Reply {
            stdout,
            stderr,
            exit_code: Exit::BadInput.into(),
            error: Some(format!("{refused} line(s) were refused; the rest were saved")),
            hint: None,
            refused,
            refusal: None,
            verify_failed: None,
        },
        Err(e) => Reply {
            stdout,
            stderr,
            exit_code: e.code.into(),
            error: Some(e.message),
            hint: e.hint,
            refused: 0,
            refusal: e.refusal.map(|(verb, scope)| memledger_server::api::Refusal { verb, scope }),
            verify_failed: None,
        },
    }
}

/// The valid time a read asks about: `--valid-at`, else the `--as-of` point's time, else the
/// clock of the process that answers (docs/cli.md).
pub fn valid_time(
    live: &Memledger,
    point: Option<memledger_engine::AsOf>,
    valid_at: Option<&str>,
) -> Result<memledger_schemas::Timestamp, CliError> {
    let valid_at = valid_at.map(memledger_engine::validity::parse_valid_at).transpose()?;
    Ok(live.valid_time(point, valid_at, memledger_schemas::Timestamp::now())?)
}

/// Read a text argument, where `-` means standard input.
pub fn text_arg(text: &str) -> Result<String, CliError> {
    if text != "-" {
        return Ok(text.to_string());
    }
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes)?;
    String::from_utf8(bytes).map_err(|_| CliError::bad_input("standard input is not valid UTF-8"))
}
