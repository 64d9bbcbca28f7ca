//! The requests: one [`Call`] per store command of the CLI (docs/cli.md), with the command's own
//! arguments after the CLI has read them (a text from standard input, the config file's
//! defaults). Every transport carries these: the CLI over the Unix socket, the HTTP routes (each
//! builds a `Call`), the MCP tools.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use crate::Call;

impl Call {
    /// Whether the call needs the store alone: no read may run beside it (views are replaced).
    pub fn exclusive(&self) -> bool {
        matches!(self, Call::Rebuild(_))
    }

    /// Whether the call creates the store when there is none (a save, or a principal added
    /// before the first save).
    pub fn creates(&self) -> bool {
        matches!(self, Call::Save(_) | Call::SaveLines(_) | Call::PrincipalsAdd(_) | Call::TranscriptChunk(_))
    }
}

/// No arguments.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// `save`: one memory (docs/cli.md). Only `text` is required.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveBody {
    /// The memory, one claim in plain words (at most 64 KiB).
    pub text: String,
    /// fact (default), preference, episode or procedure.
    #[serde(rename = "type", default)]
    pub memory_type: Option<String>,
    /// The scope memories are compared within (default: the caller's own; the owner's is
    /// `personal`).
    #[serde(default)]
    pub scope: Option<String>,
    /// Its authority: `stated` (a person's own words), `policy` (a maintained rule),
    /// `inferred` (an agent's summary or guess) or `imported` (from a file or a transcript);
    /// default: the caller's in the scope (people `stated`, agents `inferred`).
    #[serde(default)]
    pub source: Option<String>,
    /// Where it came from, in the caller's words (`slack:#billing`): the same origin saying it
    /// again is one source.
    #[serde(default)]
    pub origin: Option<String>,
    /// Where in a transcript it was said (`memledger import sessions`).
    #[serde(default)]
    pub evidence: Option<EvidenceBody>,
    /// When the claim became true in the world (RFC 3339).
    #[serde(default)]
    pub effective_at: Option<String>,
    #[serde(default)]
    pub fact_key: Option<String>,
    /// A repeated key returns the committed result and writes nothing.
    #[serde(default)]
    pub idempotency_key: Option<String>,
    /// Store it as a new belief without comparing.
    #[serde(default)]
    pub no_dedup: bool,
    /// Save it even if the text holds what looks like a credential (refused otherwise: docs/privacy.md).
    #[serde(default)]
    pub allow_secret: bool,
    /// Your own judgement: this memory replaces that one (an id or a unique prefix of 6+ hex
    /// digits; one of the save's `related`), as its next version within what your authority
    /// allows (else a conflict opens for who may settle it).
    #[serde(default)]
    pub replaces: Option<String>,
    /// Your own judgement: this memory contradicts that one; a conflict opens.
    #[serde(default)]
    pub contradicts: Option<String>,
    /// When the claim stops being true (RFC 3339) unless renewed: reads at a later time find it
    /// `expired` and recall leaves it out. Saving the same text with another expiry is an update.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// Its time to live (`30m`, `12h`, `14d`, `2w`; a bare number is seconds): it expires that
    /// long after the save, unless `expires_at` says when; a refresh renews it by this.
    #[serde(default)]
    pub ttl: Option<String>,
    /// It no longer expires: saving a text held with an expiry clears it.
    #[serde(default)]
    pub no_expiry: bool,
}

/// Where in a transcript a memory was said.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EvidenceBody {
    /// `claude-code`, `codex` or `plain`.
    pub agent: String,
    #[serde(default)]
    pub session: Option<String>,
    /// The transcript's path.
    pub file: String,
    /// The supporting lines, from 1, inclusive.
    pub first_line: u32,
    pub last_line: u32,
    #[serde(default)]
    pub message_ids: Vec<String>,
    /// Those lines' words (with no secret or `<private>` span).
    #[serde(default)]
    pub excerpt: String,
    /// When it was said (RFC 3339).
    #[serde(default)]
    pub observed_at: Option<String>,
}

impl From<EvidenceBody> for memledger_engine::EvidenceRequest {
    fn from(e: EvidenceBody) -> Self {
        memledger_engine::EvidenceRequest {
            agent: e.agent,
            session: e.session,
            file: e.file,
            first_line: e.first_line,
            last_line: e.last_line,
            message_ids: e.message_ids,
            excerpt: e.excerpt,
            observed_at: e.observed_at,
        }
    }
}

/// `import sessions`: where the import of one transcript file stands (docs/import.md).
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptQuery {
    /// The transcript's path, as the import names it.
    pub file: String,
    /// The transcript's identity (`agent:session`, else `agent:file`): its committed chunks are
    /// listed too.
    #[serde(default)]
    pub identity: Option<String>,
    /// The scope the import saves in (default: the caller's own); reading it is needed.
    #[serde(default)]
    pub scope: Option<String>,
}

/// `import sessions`: one chunk of a transcript, committed.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptChunkBody {
    /// The memories distilled from the chunk, each saved through the pipeline in order (each
    /// with its idempotency key: a chunk committed again saves nothing twice).
    #[serde(default)]
    pub saves: Vec<SaveBody>,
    /// None: the saves alone (`--explicit-only`, which records no progress).
    #[serde(default)]
    pub progress: Option<ProgressBody>,
    /// The scope the import saves in (default: the caller's own); writing it is needed.
    #[serde(default)]
    pub scope: Option<String>,
    /// The chat model's tokens the importing process spent distilling it, counted for the caller
    /// (`memledger usage`).
    #[serde(default)]
    pub usage: Option<UsageBody>,
}

/// Tokens a model call (or several) cost, as the API's `usage` counted them: the engine's
/// `TokenUsage` on the wire, with its schema.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageBody {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub calls: u64,
}

impl From<UsageBody> for memledger_engine::models::TokenUsage {
    fn from(u: UsageBody) -> Self {
        memledger_engine::models::TokenUsage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            calls: u.calls,
        }
    }
}

impl From<memledger_engine::models::TokenUsage> for UsageBody {
    fn from(u: memledger_engine::models::TokenUsage) -> Self {
        UsageBody { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, calls: u.calls }
    }
}

/// How far a transcript file's import got with this chunk.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressBody {
    /// `claude-code`, `codex` or `plain`.
    pub agent: String,
    pub file: String,
    #[serde(default)]
    pub session: Option<String>,
    /// Bytes of the file read, through the chunk's last line.
    pub offset: u64,
    /// blake3 of those bytes (64 hex digits).
    pub prefix_hash: String,
    /// The chunk's hash (64 hex digits).
    pub chunk_hash: String,
    /// The chunk's lines, from 1, inclusive.
    pub first_line: u32,
    pub last_line: u32,
}

/// `principals add NAME --kind KIND [--grant SCOPE=VERB,…[@AUTHORITY]]…`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PrincipalAddBody {
    /// Lowercase letters, digits, `.`, `_`, `-`; never reused.
    pub name: String,
    /// person, agent or service.
    pub kind: String,
    /// `SCOPE=VERB,VERB…[@AUTHORITY]`, e.g. `team:billing=read,write,resolve@policy`.
    #[serde(default)]
    pub grants: Vec<String>,
}

/// `principals grant NAME --grant SCOPE=VERB,…[@AUTHORITY]…`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PrincipalGrantBody {
    #[serde(default)]
    pub name: String,
    pub grants: Vec<String>,
}

/// `principals revoke NAME [--grant SCOPE]… [--reason R]`: the grants of those scope patterns,
/// or (none named) the principal itself.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PrincipalRevokeBody {
    #[serde(default)]
    pub name: String,
    /// Scope patterns whose grants are taken back; none: the principal is revoked.
    #[serde(default)]
    pub grants: Vec<String>,
    #[serde(default)]
    pub reason: Option<String>,
}

/// A principal's name (in the path).
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NameBody {
    #[serde(default)]
    pub name: String,
}

/// `save --from`: lines of JSON save requests with their line numbers, answered in order.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveLines {
    pub lines: Vec<NumberedLine>,
    /// `--allow-secret`: every line may hold what looks like a credential.
    #[serde(default)]
    pub allow_secret: bool,
}

/// One line of `save --from`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NumberedLine {
    pub line: usize,
    /// The line (a JSON save request).
    pub text: String,
    /// The line was not valid UTF-8 (`text` is then a lossy copy): it is refused as such.
    #[serde(default)]
    pub not_utf8: bool,
}

/// Many saves in one request, answered in order.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveBatch {
    pub memories: Vec<SaveBody>,
}

/// `update ID TEXT [--expect-version N]`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateBody {
    /// A memory id or a unique prefix of 6+ hex digits.
    #[serde(default)]
    pub id: String,
    /// The new text; absent: the text stays (an update of the expiry alone).
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub expect_version: Option<u32>,
    /// A new expiry (RFC 3339); absent: the current version's stays.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// A new time to live from now (`14d`), renewing the expiry.
    #[serde(default)]
    pub ttl: Option<String>,
    /// It no longer expires.
    #[serde(default)]
    pub no_expiry: bool,
}

/// `forget ID [--reason R]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetBody {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub reason: Option<String>,
}

/// What a server answers an erasure a person has not allowed (no `--allow-erase`): nothing is
/// erased. The same words on every transport.
pub const ERASE_REFUSED: &str = "this server does not carry out erasures: nothing was erased";
/// How a person allows erasures, or does one themselves.
pub const ERASE_REFUSED_HINT: &str = "a person allows them by starting the server with `--allow-erase` \
    (`memledger serve --allow-erase`, `memledger mcp --allow-erase`), or stops it and runs `memledger erase ID` \
    on the store; a dry run lists what would be erased";

/// `erase ID [--lineage] [--reason R] [--dry-run]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EraseBody {
    /// A memory id or a unique prefix (empty with `retired_before`).
    #[serde(default)]
    pub id: String,
    /// `--retired-before DATE`: every version stale or retired before it, instead of `id`.
    #[serde(default)]
    pub retired_before: Option<String>,
    #[serde(default)]
    pub lineage: bool,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub dry_run: bool,
}

/// `show ID` and `history ID`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ShowQuery {
    #[serde(default)]
    #[param(ignore)]
    pub id: String,
    /// A ledger seq or an RFC 3339 time.
    #[serde(default)]
    pub as_of: Option<String>,
    /// The valid time asked about (RFC 3339); default: the `as_of` time, else now.
    #[serde(default)]
    pub valid_at: Option<String>,
}

/// An id in the path.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IdPath {
    pub id: String,
}

/// `list`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    #[serde(rename = "type", default)]
    #[param(rename = "type")]
    pub memory_type: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    /// Only the memories saved with this fact key.
    #[serde(default)]
    pub fact_key: Option<String>,
    /// active (default), scheduled, stale, expired, retired, proposed or all.
    #[serde(default = "active")]
    pub status: String,
    #[serde(default = "hundred")]
    pub limit: usize,
    #[serde(default)]
    pub as_of: Option<String>,
    /// The valid time asked about (RFC 3339); default: the `as_of` time, else now.
    #[serde(default)]
    pub valid_at: Option<String>,
}

fn active() -> String {
    "active".into()
}

fn hundred() -> usize {
    100
}

/// A page of the active memories the caller may read, newest first (MCP's
/// `memledger://scopes/{scope}` and `resources/list`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BrowseQuery {
    /// Only this scope (default: every scope the caller may read).
    #[serde(default)]
    pub scope: Option<String>,
    /// Memories before this page.
    #[serde(default)]
    pub offset: usize,
    /// At most this many (default 50).
    #[serde(default = "fifty")]
    pub limit: usize,
}

/// `recall QUERY`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallBody {
    /// Any text: there is no query syntax.
    pub query: String,
    #[serde(rename = "type", default)]
    pub memory_type: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default = "ten")]
    pub limit: usize,
    #[serde(default)]
    pub as_of: Option<String>,
    /// The valid time asked about (RFC 3339); default: the `as_of` time, else now.
    #[serde(default)]
    pub valid_at: Option<String>,
}

fn ten() -> usize {
    10
}

/// `why ID [ID2]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct WhyQuery {
    #[serde(default)]
    #[param(ignore)]
    pub id: String,
    #[serde(default)]
    pub other: Option<String>,
}

/// `conflicts list`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ConflictsQuery {
    /// pending (default), resolved or all.
    #[serde(default = "pending")]
    pub status: String,
    #[serde(default)]
    pub as_of: Option<String>,
}

fn pending() -> String {
    "pending".into()
}

/// A person's decision on a conflict.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema, schemars::JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    KeepNew,
    KeepExisting,
    KeepBoth,
    Merge,
    /// A proposal: keep_new (it becomes current, the next version of what it would replace).
    Accept,
    /// A proposal: keep_existing (it never becomes current).
    Reject,
}

/// `conflicts resolve CID --keep-new|--keep-existing|--keep-both|--merge TEXT [--note N]`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveBody {
    #[serde(default)]
    pub id: String,
    pub action: Action,
    /// With `merge`: what is true.
    #[serde(default)]
    pub merged_text: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

/// `conflicts open A B [--note N]`: a conflict by a person's word between two memories.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenBody {
    /// A memory id or a unique prefix of 6+ hex digits.
    pub a: String,
    pub b: String,
    /// Why they cannot both be true (the conflict's reason).
    #[serde(default)]
    pub note: Option<String>,
}

/// A page of the conflict queue for the review page: pending first, grouped by scope and
/// fact key, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ReviewConflictsQuery {
    /// pending, resolved or all (default).
    #[serde(default = "all")]
    pub status: String,
    #[serde(default)]
    pub offset: usize,
    /// 1 to 500.
    #[serde(default = "fifty")]
    pub limit: usize,
}

fn all() -> String {
    "all".into()
}

/// A page of the event log, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only events below this seq (the previous page's `next_before`); default: from the head.
    #[serde(default)]
    pub before: Option<u64>,
    /// 1 to 500.
    #[serde(default = "hundred")]
    pub limit: usize,
    /// Event types, comma-separated (`conflict_opened,conflict_resolved`).
    #[serde(rename = "type", default)]
    #[param(rename = "type")]
    pub types: Option<String>,
    /// Only events whose actor contains this text.
    #[serde(default)]
    pub actor: Option<String>,
}

/// A page of near misses: classified pairs that were dropped, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NearMissQuery {
    #[serde(default)]
    pub before: Option<u64>,
    /// 1 to 500.
    #[serde(default = "fifty")]
    pub limit: usize,
    /// across_kinds (related, different declared kinds), dropped (not the same fact, not a
    /// contradiction), or all (default).
    #[serde(default = "all")]
    pub kind: String,
    #[serde(default)]
    pub scope: Option<String>,
}

/// `conflicts auto [--dry-run]` and `embed [--dry-run]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoBody {
    #[serde(default)]
    pub dry_run: bool,
}

/// `conflicts scan`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanBody {
    #[serde(default = "fifty")]
    pub max_pairs: usize,
    #[serde(default = "half")]
    pub min_confidence: f64,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub dry_run: bool,
}

fn fifty() -> usize {
    50
}

fn half() -> f64 {
    0.5
}

/// `log`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LogQuery {
    #[serde(default = "one_u64")]
    pub since: u64,
    #[serde(default = "thousand")]
    pub limit: usize,
    /// Only the events of this memory (an id or a prefix).
    #[serde(default)]
    pub memory: Option<String>,
    /// Only the events this principal appended.
    #[serde(default)]
    pub by: Option<String>,
}

fn one_u64() -> u64 {
    1
}

fn thousand() -> usize {
    1000
}

/// `export [--since SEQ]`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    #[serde(default = "one_u64")]
    pub since: u64,
}

/// `import [--allow-secret]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ImportQuery {
    /// Import even if the stream's memories hold what looks like credentials (refused whole otherwise).
    #[serde(default)]
    pub allow_secret: bool,
}

/// `rebuild [--view NAME]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RebuildBody {
    #[serde(default)]
    pub view: Option<String>,
}

impl From<&SaveBody> for memledger_engine::SaveRequest {
    fn from(body: &SaveBody) -> Self {
        memledger_engine::SaveRequest {
            text: body.text.clone(),
            memory_type: body.memory_type.clone(),
            scope: body.scope.clone(),
            source: body.source.clone(),
            origin: body.origin.clone(),
            evidence: body.evidence.clone().map(Into::into),
            effective_at: body.effective_at.clone(),
            fact_key: body.fact_key.clone(),
            idempotency_key: body.idempotency_key.clone(),
            no_dedup: body.no_dedup,
            allow_secret: body.allow_secret,
            replaces: body.replaces.clone(),
            contradicts: body.contradicts.clone(),
            expires_at: body.expires_at.clone(),
            ttl: body.ttl.clone(),
            no_expiry: body.no_expiry,
        }
    }
}

impl SaveBody {
    /// Refuse bad input before anything is opened.
    pub fn validate(&self) -> Result<(), crate::CommandError> {
        memledger_engine::SaveRequest::from(self).validate()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calls_name_is_the_command_tag_of_its_json() {
        let calls = [
            Call::Save(SaveBody::default()),
            Call::Forget(ForgetBody::default()),
            Call::Erase(EraseBody::default()),
            Call::Show(ShowQuery::default()),
            Call::History(ShowQuery::default()),
            Call::Why(WhyQuery::default()),
            Call::ConflictsShow(IdPath::default()),
            Call::ConflictsRevert(IdPath::default()),
            Call::ConflictsAuto(AutoBody::default()),
            Call::Rebuild(RebuildBody::default()),
            Call::Verify(Empty::default()),
            Call::Stats(Empty::default()),
            Call::Embed(AutoBody::default()),
            Call::Timeline(Empty::default()),
            Call::Browse(BrowseQuery::default()),
            Call::Usage(Empty::default()),
            Call::Whoami(Empty::default()),
            Call::PrincipalsList(Empty::default()),
            Call::PrincipalsRevoke(PrincipalRevokeBody::default()),
            Call::PrincipalsRotate(NameBody::default()),
            Call::TranscriptProgress(TranscriptQuery::default()),
        ];
        for call in calls {
            let json = serde_json::to_value(&call).expect("a call is JSON");
            assert_eq!(json["command"], call.name(), "{call:?}");
        }
    }

    /// A `save` body and a `save --from` line are one format: every field of the body, each
    /// set (the literal names them all, so a new field must be set here), reads as the engine's
    /// request, which refuses a field it does not know, and reads as the conversion makes it.
    #[test]
    fn a_save_body_reads_as_a_save_from_line() {
        let body = SaveBody {
            text: "Deploys go out on Tuesdays".into(),
            memory_type: Some("procedure".into()),
            scope: Some("team:platform".into()),
            source: Some("stated".into()),
            origin: Some("slack:#platform".into()),
            evidence: Some(EvidenceBody {
                agent: "plain".into(),
                session: Some("s1".into()),
                file: "notes.txt".into(),
                first_line: 1,
                last_line: 2,
                message_ids: vec!["m1".into()],
                excerpt: "deploys on Tuesdays".into(),
                observed_at: Some("2026-12-01T10:00:00Z".into()),
            }),
            effective_at: Some("2026-12-01T10:00:00Z".into()),
            fact_key: Some("deploy-day".into()),
            idempotency_key: Some("k1".into()),
            no_dedup: true,
            allow_secret: true,
            replaces: Some("0123456789ab".into()),
            contradicts: Some("ba9876543210".into()),
            expires_at: Some("2027-01-01T00:00:00Z".into()),
            ttl: Some("14d".into()),
            no_expiry: true,
        };
        let line = serde_json::to_value(&body).expect("a body is JSON");
        let request: memledger_engine::SaveRequest =
            serde_json::from_value(line.clone()).unwrap_or_else(|e| panic!("{e}: {line}"));
        let converted = memledger_engine::SaveRequest::from(&body);
        assert_eq!(format!("{request:?}"), format!("{converted:?}"));
    }
}
