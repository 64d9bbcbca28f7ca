//! The command layer between the engine and every surface (docs/adr/0041-command-layer.md): one
//! typed request per store command ([`request::Call`]), one typed answer ([`answer::Answer`]),
//! one typed error ([`error::CommandError`]), and [`execute`], the one place a call becomes
//! engine calls — whether the CLI opened the store itself or `memledger serve` runs it for a
//! client. The answer serialized is the command's `--json` document and the HTTP body; the CLI
//! renders human text from it in its own process.

#[macro_use]
mod define;

pub mod answer;
pub mod conflicts;
pub mod error;
pub mod fence;
pub mod host;
pub mod memories;
pub mod principals;
pub mod request;
pub mod store;

pub use answer::Executed;
pub use error::CommandError;

use answer::{
    BrowseDoc, ChunkDoc, ConflictDoc, ConflictsDoc, LineAnswer, ListDoc, OpenedDoc, PrincipalsDoc, ProgressDoc,
    RebuildDoc, RecallDoc, StatsDoc, UsageDoc, WhoamiDoc, WhyDoc,
};
use memledger_engine::erase::EraseResult;
use memledger_engine::models::embed::EmbedReport;
use memledger_engine::models::judge::JudgeReport;
use memledger_engine::principals::PrincipalChange;
use memledger_engine::reads::{HistoryView, MemoryView, VerifyView};
use memledger_engine::resolve::{ForgetResult, ResolveResult, UpdateResult};
use memledger_engine::review::{ConflictPage, NearMiss, Page, Timeline};
use memledger_engine::scan::ScanReport;
use memledger_engine::{Caller, Memledger, SaveResult};
use memledger_schemas::Event;
use request::*;

/// Every store command, once: its name, request, answer, and the function that answers it
/// (the grammar is `define.rs`'s). The command layer expands it with `define_commands`; a
/// surface may expand it with a macro of its own of the same grammar (the CLI's `print_answer`
/// does), so a command added here is one no surface can forget.
#[macro_export]
macro_rules! with_commands {
    ($callback:ident) => {
        $callback! {
            /// One memory.
            "save" Save(SaveBody) -> SaveResult {
                writes doc answer |ml, caller, b, _| memories::save(ml, caller, b)
            }
            /// Many saves (`save --from`): raw JSON Lines, numbered from `first_line`, each
            /// answered in order once the batch is durable.
            "save_lines" SaveLines(SaveLines) -> Vec<LineAnswer> {
                writes lines executed |ml, caller, b, _| memories::save_lines(ml, caller, b)
            }
            "update" Update(UpdateBody) -> UpdateResult {
                writes doc answer |ml, caller, b, _| memories::update(ml, caller, b)
            }
            "forget" Forget(ForgetBody) -> ForgetResult {
                writes doc answer |ml, caller, b, _| memories::forget(ml, caller, b)
            }
            /// Served only by a server started with `--allow-erase` (a dry run by any).
            "erase" Erase(EraseBody) -> EraseResult {
                writes doc answer |ml, caller, b, _| memories::erase(ml, caller, b)
            }
            "show" Show(ShowQuery) -> Box<MemoryView> {
                reads doc answer |ml, caller, q, _| memories::show(ml, caller, q).map(Box::new)
            }
            "list" List(ListQuery) -> ListDoc {
                reads doc answer |ml, caller, q, _| memories::list(ml, caller, q)
            }
            "recall" Recall(RecallBody) -> RecallDoc {
                reads doc answer |ml, caller, b, _| memories::recall(ml, caller, b)
            }
            "history" History(ShowQuery) -> HistoryView {
                reads doc answer |ml, caller, q, _| memories::history(ml, caller, q)
            }
            "why" Why(WhyQuery) -> WhyDoc {
                reads doc answer |ml, caller, q, _| memories::why(ml, caller, q)
            }
            "conflicts_list" ConflictsList(ConflictsQuery) -> ConflictsDoc {
                reads doc answer |ml, caller, q, _| conflicts::list(ml, caller, q)
            }
            "conflicts_show" ConflictsShow(IdPath) -> Box<ConflictDoc> {
                reads doc answer |ml, caller, b, _| conflicts::show(ml, caller, b).map(Box::new)
            }
            "conflicts_resolve" ConflictsResolve(ResolveBody) -> ResolveResult {
                writes doc answer |ml, caller, b, _| conflicts::resolve(ml, caller, b)
            }
            "conflicts_revert" ConflictsRevert(IdPath) -> ResolveResult {
                writes doc answer |ml, caller, b, _| conflicts::revert(ml, caller, b)
            }
            "conflicts_auto" ConflictsAuto(AutoBody) -> JudgeReport {
                writes doc executed |ml, caller, b, settings| conflicts::auto(ml, caller, b, settings)
            }
            "conflicts_scan" ConflictsScan(ScanBody) -> ScanReport {
                writes doc answer |ml, caller, b, _| conflicts::scan(ml, caller, b)
            }
            /// The events, one JSON document per line.
            "log" Log(LogQuery) -> Vec<Event> {
                reads lines answer |ml, caller, q, _| store::log(ml, caller, q)
            }
            "rebuild" Rebuild(RebuildBody) -> RebuildDoc {
                writes doc answer |ml, caller, b, settings| store::rebuild(ml, caller, b, settings)
            }
            "verify" Verify(Empty) -> VerifyView {
                reads doc executed |ml, _, _, _| store::verify(ml)
            }
            "stats" Stats(Empty) -> StatsDoc {
                reads doc answer |ml, caller, _, _| store::stats(ml, caller)
            }
            /// The scopes the caller may read that hold active memories, and how many each.
            "scopes" Scopes(Empty) -> store::ScopesDoc {
                reads doc answer |ml, caller, _, _| store::scopes(ml, caller)
            }
            "embed" Embed(AutoBody) -> EmbedReport {
                writes doc answer |ml, caller, b, _| store::embed(ml, caller, b)
            }
            "conflicts_open" ConflictsOpen(OpenBody) -> OpenedDoc {
                writes doc answer |ml, caller, b, _| conflicts::open(ml, caller, b)
            }
            "review_conflicts" ReviewConflicts(ReviewConflictsQuery) -> ConflictPage {
                reads doc answer |ml, caller, q, _| store::review_conflicts(ml, caller, q)
            }
            "events" Events(EventsQuery) -> Page<Event> {
                reads doc answer |ml, caller, q, _| store::events(ml, caller, q)
            }
            "near_misses" NearMisses(NearMissQuery) -> Page<NearMiss> {
                reads doc answer |ml, caller, q, _| store::near_misses(ml, caller, q)
            }
            "timeline" Timeline(Empty) -> Timeline {
                reads doc answer |ml, caller, _, _| store::timeline(ml, caller)
            }
            /// A page of the active memories, newest first, and the scopes they are in (MCP
            /// resources).
            "browse" Browse(BrowseQuery) -> BrowseDoc {
                reads doc answer |ml, caller, q, _| memories::browse(ml, caller, q)
            }
            /// The chat model's tokens counted today and this month (`memledger usage`).
            "usage" Usage(Empty) -> UsageDoc {
                reads doc answer |ml, caller, _, settings| store::usage(ml, caller, settings)
            }
            /// Who the caller is: its principal, kind, own scope and grants.
            "whoami" Whoami(Empty) -> WhoamiDoc {
                reads doc answer |_, caller, _, _| Ok(principals::whoami(caller))
            }
            "principals_list" PrincipalsList(Empty) -> PrincipalsDoc {
                reads doc answer |ml, caller, _, _| principals::list(ml, caller)
            }
            "principals_add" PrincipalsAdd(PrincipalAddBody) -> PrincipalChange {
                writes doc answer |ml, caller, b, _| principals::add(ml, caller, b)
            }
            "principals_grant" PrincipalsGrant(PrincipalGrantBody) -> PrincipalChange {
                writes doc answer |ml, caller, b, _| principals::grant(ml, caller, b)
            }
            "principals_revoke" PrincipalsRevoke(PrincipalRevokeBody) -> PrincipalChange {
                writes doc answer |ml, caller, b, _| principals::revoke(ml, caller, b)
            }
            "principals_rotate" PrincipalsRotate(NameBody) -> PrincipalChange {
                writes doc answer |ml, caller, b, _| principals::rotate(ml, caller, b)
            }
            /// `import sessions`: where a transcript file's import stands.
            "transcript_progress" TranscriptProgress(TranscriptQuery) -> ProgressDoc {
                reads doc answer |ml, caller, q, _| principals::transcript_progress(ml, caller, q)
            }
            /// `import sessions`: one chunk's memories, and the progress event that commits the
            /// chunk.
            "transcript_chunk" TranscriptChunk(TranscriptChunkBody) -> ChunkDoc {
                writes doc answer |ml, caller, b, _| principals::transcript_chunk(ml, caller, b)
            }
        }
    };
}

with_commands!(define_commands);

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
    dispatch(ml, caller, call, settings)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The `command` tag of each call's JSON (serde's, and the OpenAPI document's) is the name the
    /// list gives it.
    #[test]
    fn every_call_is_named_in_its_json_and_its_schema_as_the_list_names_it() {
        let schema = serde_json::to_string(&<Call as utoipa::PartialSchema>::schema()).unwrap();
        for name in Call::NAMES {
            assert!(schema.contains(&format!("[\"{name}\"]")), "the schema of Call has no tag {name}");
            // A request with required fields fails on a field, never on the tag.
            match serde_json::from_value::<Call>(serde_json::json!({ "command": name })) {
                Ok(call) => assert_eq!(call.name(), *name),
                Err(e) => assert!(e.to_string().contains("missing field"), "{name}: {e}"),
            }
        }
    }
}
