//! The MCP tools (save_memory, update_memory, recall_memory, memory_history, why_memory,
//! list_conflicts, resolve_conflict, erase_memory), served over stdio by `memledger mcp` and over
//! streamable HTTP at `/mcp` by `memledger serve`. Each tool is a store command ([`Call`])
//! answered with the command's `--json` document, so the tools say exactly what the CLI says.
//! An agent's own judgement that a memory replaces another (update_memory, save_memory's
//! `replaces`) is a save declaring it, under the agent's authority; unconditional edits
//! (`update`, `forget`) stay with people, in the CLI. An agent may ask for an erasure, which is
//! carried out only where a person started the server with `--allow-erase` (a dry run always).
//! Every event a call writes records the principal its token authenticated (over HTTP, the
//! request's bearer token; on stdio, `MEMLEDGER_TOKEN`; none: the store's owner) and, as whom
//! it acted for, `agent:<client name>`, the name the client gave in `initialize`. Every answer
//! leaves inside a fence ([`crate::fence`]): recorded data, never instructions; a tool's answer
//! also carries the command's document as `structuredContent`, checked by the tool's
//! `outputSchema` ([`schemas`]: the HTTP API's own contract). Each tool says what it does to the
//! store in its annotations (read-only, destructive, idempotent; never the open world).
//!
//! Beside the tools: the store as resources ([`resources`]), with subscriptions that follow every
//! writer of the store ([`session`]), prompts and the completion of their arguments
//! ([`prompts`]), and log messages at the level the client sets (never memory text above
//! `debug`).

mod prompts;
mod resources;
mod schemas;
mod session;

use std::sync::Arc;

use memledger_engine::error::Exit;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock as Content, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::api::{self, Action, Call, Reply};
use crate::http::Authed;
use crate::{CallFn, Who};
use session::Session;

/// The store's head seq, announced after each write that moved it: what subscriptions follow.
pub type Changes = watch::Receiver<u64>;

const TAXONOMY: &str = "Types: `fact` — a stable truth about the world or the user (\"the staging db runs on Postgres 16\"); \
`preference` — how the user likes things done (\"prefers pnpm over npm\"); \
`episode` — a time-bound event or decision (\"shipped the viewer on 2026-07-05\"); \
`procedure` — reusable how-to steps (\"to release: bump VERSION, tag, push\"). The default is fact.";

const SAVE_DESCRIPTION: &str = "Save one memory to the user's memledger. memledger compares it with what it already holds \
in the same scope and answers with an outcome: `added` (new belief), `merged` (already known), `versioned` (a restatement \
that became the next version), `historical` (older than what is known, by effective time) or `conflict` (it contradicts \
an active memory). On `conflict` both memories stay active: put both statements to the user and ask which is current, \
then call resolve_conflict with their answer. Never decide a conflict silently and never re-save to force one side. \
Save one claim per call, in plain words. Types: `fact` — a stable truth about the world or the user (\"the staging db \
runs on Postgres 16\"); `preference` — how the user likes things done (\"prefers pnpm over npm\"); `episode` — a \
time-bound event or decision (\"shipped the viewer on 2026-07-05\"); `procedure` — reusable how-to steps (\"to release: \
bump VERSION, tag, push\"). The default is fact. The answer's `related` lists the memories of the scope it was compared \
with and left standing, best first: read them. memledger's rules catch many changes but not all; when one of them is \
something this memory changes (an older value, a rule it reverses, a holder it replaces), declare it — call \
update_memory with that id and this text (or save_memory with `replaces`), or save with `contradicts` when you cannot \
tell which is current — and memledger records the relation as your judgement. Your authority still applies: replacing \
a person's stated rule or policy opens a conflict for them to settle instead.";

const UPDATE_DESCRIPTION: &str = "Declare that a new text replaces a memory: the memory the id names (or a unique prefix \
of 6+ hex digits; typically one a save listed as `related`, or one recall returned) gets this text as its next \
version, recorded as your judgement (method `declared`). Use it when you know a fact changed (\"docs moved to \
Mintlify\" replaces \"the docs site is built with Docusaurus\"), not to reword or to add a detail (save that \
instead). Within your authority: replacing a memory of higher authority (a person's stated rule, a policy) opens a \
conflict for someone who may settle it, and the answer says so; do not call it again to force it.";

const RECALL_DESCRIPTION: &str = "Find the active memories that answer a question (BM25 over words; stale versions are \
never returned). Call it before answering anything the user may have told you before. A result whose `conflicts_with` is \
non-empty is in a pending conflict: the `notice` then says so, and you must not assert either side — ask the user which \
is current (and resolve it with resolve_conflict). Filter by `type` (fact, preference, episode, procedure) and `scope`; \
`as_of` (a ledger seq or an RFC 3339 time) answers as the store stood then. Each result is what is true at `valid_at` \
(an RFC 3339 time; default the `as_of` time, else now); a change that takes effect later is listed beside it in \
`scheduled` with its `valid_from`: say it is scheduled, not current.";

const HISTORY_DESCRIPTION: &str = "Every version of a belief, newest first (any version's id or a unique prefix of 6+ \
hex digits works): text, status (active, scheduled, stale, expired, retired, as of now), its validity interval (valid_from, valid_to), when it was asserted and what caused each step. Read-only: \
editing a belief is a human action in the CLI (`memledger update`).";

const WHY_DESCRIPTION: &str = "Explain every classification that touched a memory, or only those of a pair when `other` \
is given: method, scores, thresholds, gate, relation, reason and outcome — including pairs that were examined and \
dropped (near-misses). Use it to audit why two memories were, or were not, flagged as a conflict.";

const LIST_CONFLICTS_DESCRIPTION: &str = "The conflict queue: contradictions between memories, each with the incoming \
memory, the existing ones it contradicts and the reason. `status` is pending (default), resolved or all. A pending \
conflict is for the user to decide: show them both sides and ask; do not resolve it on your own judgement.";

const RESOLVE_DESCRIPTION: &str = "Record the user's decision on a pending conflict. Call it only with an answer the user \
gave you. Actions: `keep_new` (the incoming memory is current and continues the existing belief's lineage), \
`keep_existing` (the incoming memory goes stale), `keep_both` (both are true; they are never flagged against each other \
again), `merge` (the user's own wording in `merged_text` becomes the next version; both inputs go stale). Every \
resolution is recorded and revertible by a person (`memledger conflicts revert`).";

const ERASE_DESCRIPTION: &str = "Erase a memory's text for good, at the user's request only: the text of the memory \
(of every version with `lineage`) goes from every event, view, index and cache of the store; an erasure event records \
who, when, why and the content hashes, never the text. Call it first with `dry_run: true`, which is always answered \
and lists what would be erased (memories, events, conflicts, edges, exports made since that keep a copy), and show that \
to the user. The erasure itself is carried out only when a person started this server with `--allow-erase`; \
otherwise the tool says so, and the user runs `memledger erase ID` themselves. Never erase on your own judgement.";

const INSTRUCTIONS: &str = "memledger is the user's long-term memory: an append-only ledger of beliefs with versions and \
conflicts. Recall before answering questions about the user, their projects and preferences; save durable facts, \
preferences, episodes and procedures as you learn them. When a save or a recall reports a pending conflict, ask the \
user which statement is current and record their answer with resolve_conflict; never decide it yourself.";

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SaveParams {
    /// The memory, one claim in plain words.
    pub text: String,
    /// fact, preference, episode or procedure (default fact).
    #[serde(rename = "type")]
    pub memory_type: Option<String>,
    /// The scope memories are compared within, e.g. `personal` (default) or `team:payments`, `repo:memledger`.
    pub scope: Option<String>,
    /// Its authority: `inferred` (your own summary or guess; the default for an agent),
    /// `imported` (read from a file or transcript), `stated` (the user's own words, said to you
    /// just now) or `policy` (a maintained rule; only where your grant allows it).
    pub source: Option<String>,
    /// Where it came from, in your words (a session, a file, a person): the same origin saying it
    /// again counts as one source.
    pub origin: Option<String>,
    /// When the claim became true in the world (RFC 3339), if not now.
    pub effective_at: Option<String>,
    /// A repeated key returns the first result and writes nothing: use one per intended save when retrying.
    pub idempotency_key: Option<String>,
    /// Save it even though the text holds what looks like a credential (an API key, a private
    /// key, a token, a password in a URL). Such a save is refused otherwise; set this only when
    /// the user has said to store it.
    pub allow_secret: Option<bool>,
    /// Your judgement: this memory replaces that one (its id, e.g. from `related` or a recall):
    /// it becomes its next version, within your authority.
    pub replaces: Option<String>,
    /// Your judgement: this memory contradicts that one and you cannot tell which is current: a
    /// conflict opens for the user.
    pub contradicts: Option<String>,
    /// When the claim stops being true (RFC 3339), for what holds only until then ("the freeze
    /// lasts until the 15th"): recall leaves it out afterwards.
    pub expires_at: Option<String>,
    /// How long it stays true from now (`12h`, `7d`, `2w`), for what holds for a while ("I'm on
    /// call this week"). Saving the same text again with a ttl renews it.
    pub ttl: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateParams {
    /// The memory this text replaces: its id, or a unique prefix of 6+ hex digits.
    pub id: String,
    /// The new text: what is true now, one claim in plain words.
    pub text: String,
    /// Its authority: `inferred` (your own conclusion; the default for an agent), `imported`
    /// or `stated` (the user's own words, said to you just now).
    pub source: Option<String>,
    /// Where it came from, in your words.
    pub origin: Option<String>,
    /// When the change took effect in the world (RFC 3339), if not now.
    pub effective_at: Option<String>,
    /// A repeated key returns the first result and writes nothing: use one per intended update when retrying.
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RecallParams {
    /// What to look for: a question or some words.
    pub query: String,
    /// Only memories of this type: fact, preference, episode or procedure.
    #[serde(rename = "type")]
    pub memory_type: Option<String>,
    /// Only memories in this scope.
    pub scope: Option<String>,
    /// At most this many results (default 10).
    pub limit: Option<u32>,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    pub as_of: Option<String>,
    /// What was (or will be) true at this RFC 3339 time; default the `as_of` time, else now.
    pub valid_at: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct IdParams {
    /// A memory id, or a unique prefix of 6+ hex digits.
    pub id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WhyParams {
    /// A memory id, or a unique prefix of 6+ hex digits.
    pub id: String,
    /// Only the classifications of the pair (id, other).
    pub other: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListConflictsParams {
    /// pending (default), resolved or all.
    pub status: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResolveParams {
    /// The conflict id, or a unique prefix of 6+ hex digits.
    pub id: String,
    /// The user's decision: keep_new, keep_existing, keep_both or merge (accept and reject, for
    /// a proposal).
    pub action: Action,
    /// With merge: the text the user says is true.
    pub merged_text: Option<String>,
    /// Why, in the user's words (recorded with the resolution).
    pub note: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EraseParams {
    /// A memory id, or a unique prefix of 6+ hex digits.
    pub id: String,
    /// Erase every version of the memory's lineage (default: the one version).
    pub lineage: Option<bool>,
    /// Why, in the user's words (recorded on the erasure event).
    pub reason: Option<String>,
    /// Only list what would be erased; write nothing (default false).
    pub dry_run: Option<bool>,
}

/// Defaults a save takes when the agent gives none (the config file's `[save]`, the environment).
#[derive(Clone, Debug, Default)]
pub struct Defaults {
    pub scope: Option<String>,
    pub memory_type: Option<String>,
}

/// The MCP server: how a call reaches the store, the save defaults, whether a person allowed
/// erasures (`--allow-erase`), and (on stdio) the token its calls carry.
#[derive(Clone)]
pub struct McpServer {
    call: CallFn,
    defaults: Arc<Defaults>,
    allow_erase: bool,
    token: Option<String>,
    /// The ledger's head as writes move it (none: no subscription is ever updated).
    changes: Option<Changes>,
    /// This session's subscriptions and log level (each HTTP session gets its own).
    session: Arc<Session>,
    tool_router: ToolRouter<Self>,
}

fn actor_of(context: &RequestContext<RoleServer>) -> String {
    let name = context.client_info().map(|i| i.name).unwrap_or_default();
    let name: String = name.trim().chars().filter(|c| !c.is_control()).take(100).collect();
    if name.is_empty() { "agent:unknown".into() } else { format!("agent:{name}") }
}

/// A tool's answer: the command's JSON document inside a fence, and as `structuredContent`;
/// or its error for the agent.
fn to_result(reply: Result<Value, (String, Option<String>)>) -> CallToolResult {
    match reply {
        Ok(value) => {
            let text = serde_json::to_string_pretty(&value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
            let mut result =
                CallToolResult::success(vec![Content::text(crate::fence::fence(&[(String::new(), text.as_str())]))]);
            result.structured_content = Some(value);
            result
        }
        Err((message, hint)) => {
            let mut text = format!("error: {message}");
            if let Some(h) = &hint {
                text.push_str(&format!("\nhint: {h}"));
            }
            CallToolResult::error(vec![Content::text(text)])
        }
    }
}

fn bad_input(message: &str) -> CallToolResult {
    to_result(Err((message.to_string(), None)))
}

/// The document a reply printed, or its error.
fn document(reply: Reply) -> Result<Value, (String, Option<String>)> {
    if Exit::from_code(reply.exit_code) != Exit::Ok {
        return Err((reply.error.unwrap_or_else(|| "the command failed".into()), reply.hint));
    }
    serde_json::from_str(reply.stdout.trim()).map_err(|e| (format!("the command printed no JSON document: {e}"), None))
}

impl McpServer {
    /// `token`: what calls carry when the transport authenticates none (stdio).
    /// `changes`: the store's head, for subscriptions.
    pub fn new(
        call: CallFn,
        defaults: Defaults,
        allow_erase: bool,
        token: Option<String>,
        changes: Option<Changes>,
    ) -> Self {
        McpServer {
            call,
            defaults: Arc::new(defaults),
            allow_erase,
            token,
            changes,
            session: Arc::default(),
            tool_router: Self::tool_router(),
        }
    }

    /// The same server for a new session: no subscriptions, the default log level.
    fn for_session(&self) -> Self {
        McpServer { session: Arc::default(), ..self.clone() }
    }

    /// Whom a call is for: over HTTP, the principal the request's token authenticated; on stdio,
    /// the token this server was given (none: the store's owner).
    fn who(&self, context: &RequestContext<RoleServer>) -> Who {
        let actor = actor_of(context);
        let authed = context.extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<Authed>());
        match authed {
            Some(authed) => Who::Caller(memledger_engine::Caller { principal: authed.0.clone(), actor }),
            None => Who::Token { token: self.token.clone(), actor },
        }
    }

    async fn run(&self, call: Call, context: &RequestContext<RoleServer>) -> Result<Value, (String, Option<String>)> {
        let command = call.name();
        let reply = (self.call)(call, self.who(context)).await;
        // The command's notes (a failing embedder, a model timeout, an index rebuilt) and its
        // refusals (a secret, a scope outside the grants) are the server's warnings; the
        // command's name and exit code go at `debug`. No memory text: notes and errors name ids,
        // rules and counts.
        let peer = &context.peer;
        let exit = reply.exit_code;
        self.session.log_command(peer, json!({ "command": command, "exit_code": exit })).await;
        for note in reply.stderr.lines().map(str::trim).filter(|l| !l.is_empty()) {
            self.session.log_warning(peer, json!({ "command": command, "note": note })).await;
        }
        if exit != 0 {
            let error = reply.error.clone().unwrap_or_default();
            let data = json!({ "command": command, "exit_code": exit, "error": error });
            self.session.log_warning(peer, data).await;
        }
        let answer = document(reply);
        // A model that failed without failing the command (recall ranked by words alone).
        if let Ok(doc) = &answer {
            for field in ["embedding_error", "rerank_error"] {
                if let Some(error) = doc.get(field).and_then(Value::as_str) {
                    self.session.log_warning(peer, json!({ "command": command, field: error })).await;
                }
            }
        }
        answer
    }
}

/// A save's answer with what to do about a conflict it left pending.
fn with_save_notice(mut v: Value) -> Value {
    let settled = v["settled_by_effective_time"] == json!(true) || v["outcome"] == json!("versioned");
    if !v["conflict_id"].is_null() && !settled {
        v["notice"] = json!(CONFLICT_ON_SAVE);
    }
    v
}

const CONFLICT_ON_SAVE: &str = "This memory contradicts one the user already holds; both stay active. Show the user both \
statements (list_conflicts), ask which is current, and record their answer with resolve_conflict. Do not decide it yourself.";

#[tool_router]
impl McpServer {
    #[tool(
        name = "save_memory",
        title = "Save a memory",
        description = SAVE_DESCRIPTION,
        output_schema = schemas::output("SaveDoc"),
        annotations(title = "Save a memory", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn save_memory(
        &self,
        Parameters(p): Parameters<SaveParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let body = api::SaveBody {
            text: p.text,
            memory_type: p.memory_type.or_else(|| self.defaults.memory_type.clone()),
            scope: p.scope.or_else(|| self.defaults.scope.clone()),
            source: p.source,
            origin: p.origin,
            evidence: None,
            effective_at: p.effective_at,
            fact_key: None,
            idempotency_key: p.idempotency_key,
            no_dedup: false,
            allow_secret: p.allow_secret.unwrap_or(false),
            replaces: p.replaces,
            contradicts: p.contradicts,
            expires_at: p.expires_at,
            ttl: p.ttl,
            no_expiry: false,
        };
        Ok(to_result(self.run(Call::Save(body), &context).await.map(with_save_notice)))
    }

    #[tool(
        name = "update_memory",
        title = "Replace a memory with a new version",
        description = UPDATE_DESCRIPTION,
        output_schema = schemas::output("SaveDoc"),
        annotations(title = "Replace a memory with a new version", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn update_memory(
        &self,
        Parameters(p): Parameters<UpdateParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        // A save declaring what it replaces: in the memory's own scope, its type, compared as
        // any save is, recorded as this principal's judgement (not `memledger update`, a
        // person's unconditional edit).
        let body = api::SaveBody {
            text: p.text,
            source: p.source,
            origin: p.origin,
            effective_at: p.effective_at,
            idempotency_key: p.idempotency_key,
            replaces: Some(p.id),
            ..api::SaveBody::default()
        };
        Ok(to_result(self.run(Call::Save(body), &context).await.map(with_save_notice)))
    }

    #[tool(
        name = "recall_memory",
        title = "Recall memories",
        description = RECALL_DESCRIPTION,
        output_schema = schemas::output("RecallDoc"),
        annotations(title = "Recall memories", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn recall_memory(
        &self,
        Parameters(p): Parameters<RecallParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let body = api::RecallBody {
            query: p.query,
            memory_type: p.memory_type,
            scope: p.scope,
            limit: p.limit.unwrap_or(10) as usize,
            as_of: p.as_of,
            valid_at: p.valid_at,
        };
        let answer = self.run(Call::Recall(body), &context).await;
        Ok(match answer {
            Ok(document) => recall_result(document),
            Err(e) => to_result(Err(e)),
        })
    }

    #[tool(
        name = "memory_history",
        title = "A memory's versions",
        description = HISTORY_DESCRIPTION,
        output_schema = schemas::output("HistoryDoc"),
        annotations(title = "A memory's versions", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_history(
        &self,
        Parameters(p): Parameters<IdParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let call = Call::History(api::ShowQuery { id: p.id, as_of: None, valid_at: None });
        Ok(to_result(self.run(call, &context).await))
    }

    #[tool(
        name = "why_memory",
        title = "Why memories were or were not flagged",
        description = WHY_DESCRIPTION,
        output_schema = schemas::output("WhyDoc"),
        annotations(title = "Why memories were or were not flagged", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn why_memory(
        &self,
        Parameters(p): Parameters<WhyParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let call = Call::Why(api::WhyQuery { id: p.id, other: p.other });
        Ok(to_result(self.run(call, &context).await))
    }

    #[tool(
        name = "list_conflicts",
        title = "List memory conflicts",
        description = LIST_CONFLICTS_DESCRIPTION,
        output_schema = schemas::output("ConflictsDoc"),
        annotations(title = "List memory conflicts", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_conflicts(
        &self,
        Parameters(p): Parameters<ListConflictsParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let call = Call::ConflictsList(api::ConflictsQuery {
            status: p.status.unwrap_or_else(|| "pending".into()),
            as_of: None,
        });
        let answer = self.run(call, &context).await.map(|mut v| {
            let pending = v["conflicts"].as_array().is_some_and(|c| c.iter().any(|c| c["status"] == "pending"));
            if pending {
                v["notice"] = json!(
                    "Pending conflicts are for the user to decide: show both sides and ask which is current, then call resolve_conflict."
                );
            }
            v
        });
        Ok(to_result(answer))
    }

    #[tool(
        name = "resolve_conflict",
        title = "Record the user's decision on a conflict",
        description = RESOLVE_DESCRIPTION,
        output_schema = schemas::output("ResolveDoc"),
        annotations(title = "Record the user's decision on a conflict", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn resolve_conflict(
        &self,
        Parameters(p): Parameters<ResolveParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        match (p.action, &p.merged_text) {
            (Action::Merge, None) => return Ok(bad_input("merge needs merged_text: what the user says is true")),
            (Action::Merge, Some(_)) | (_, None) => {}
            (_, Some(_)) => return Ok(bad_input("merged_text goes only with the merge action")),
        }
        let call = Call::ConflictsResolve(api::ResolveBody {
            id: p.id,
            action: p.action,
            merged_text: p.merged_text,
            note: p.note,
        });
        Ok(to_result(self.run(call, &context).await))
    }

    #[tool(
        name = "erase_memory",
        title = "Erase a memory's text for good",
        description = ERASE_DESCRIPTION,
        output_schema = schemas::output("EraseDoc"),
        annotations(title = "Erase a memory's text for good", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn erase_memory(
        &self,
        Parameters(p): Parameters<EraseParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let dry_run = p.dry_run.unwrap_or(false);
        if !dry_run && !self.allow_erase {
            return Ok(to_result(Err((api::ERASE_REFUSED.to_string(), Some(api::ERASE_REFUSED_HINT.to_string())))));
        }
        let call = Call::Erase(api::EraseBody {
            id: p.id,
            retired_before: None,
            lineage: p.lineage.unwrap_or(false),
            reason: p.reason,
            dry_run,
        });
        Ok(to_result(self.run(call, &context).await))
    }
}

/// recall_memory's answer: the memories' texts, verbatim, inside the recall's own fence; then
/// the rest of the document (ids, scores, conflicts, the notice) without the texts.
fn recall_result(mut document: Value) -> CallToolResult {
    let whole = document.clone();
    let fenced = document.get("fenced").and_then(Value::as_str).unwrap_or_default().to_string();
    if let Some(map) = document.as_object_mut() {
        map.remove("fenced");
    }
    if let Some(results) = document.get_mut("results").and_then(Value::as_array_mut) {
        for (i, r) in results.iter_mut().enumerate() {
            if let Some(map) = r.as_object_mut() {
                map.remove("text");
                map.insert("fenced_item".into(), json!(i + 1));
            }
        }
    }
    let rest = serde_json::to_string_pretty(&document).unwrap_or_default();
    let mut result = CallToolResult::success(vec![Content::text(format!("{fenced}\n{rest}"))]);
    result.structured_content = Some(whole);
    result
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for McpServer {
    // Logging is deprecated for protocol 2026-07-28 (SEP-2577) and spoken by the clients in use.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_completions()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("memledger", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!("{INSTRUCTIONS} {TAXONOMY}"))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        resources::list(&self.call, cursor.as_deref(), self.who(&context)).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Ok(resources::read(&self.call, &request.uri, self.who(&context)).await?.into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Read it first, as the subscriber: a resource it may not read, or that does not
        // exist, is refused as its read would be.
        let who = self.who(&context);
        resources::read(&self.call, &request.uri, who.clone()).await?;
        let digest = resources::digest(&self.call, &request.uri, who.clone()).await;
        self.session.subscribe(request.uri, who, digest);
        self.session.watch(self.changes.clone(), self.call.clone(), context.peer.clone());
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session.unsubscribe(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let ours = requested.resource_subscriptions.iter().flatten().filter(|u| resources::Target::parse(u).is_ok());
        Some(SubscriptionFilter::builder().resource_subscriptions(ours.cloned()).build())
    }

    /// A `subscriptions/listen` stream (protocol 2026-07-28): its resources' updates until the
    /// client cancels it.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let who = self.who(context.request_context());
        let uris = context.accepted().resource_subscriptions.clone().unwrap_or_default();
        let Some(mut changes) = self.changes.clone() else {
            context.cancelled().await;
            return Ok(());
        };
        let mut listened = session::Listened::new(&self.call, uris, &who).await;
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                moved = changes.changed() => {
                    if moved.is_err() {
                        return Ok(());
                    }
                    for uri in listened.changed(&self.call).await {
                        if context.sink().notify_resource_updated(uri).await.is_err() {
                            return Ok(());
                        }
                    }
                }
            }
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(prompts::list())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Ok(prompts::get(&self.call, &request.name, &request.arguments, self.who(&context)).await?.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let argument = &request.argument;
        prompts::complete(&self.call, &request.r#ref, &argument.name, &argument.value, self.who(&context)).await
    }

    // Logging: deprecated for protocol 2026-07-28 (SEP-2577), spoken by the clients in use.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session.set_level_from(&request);
        Ok(())
    }
}

/// Serve the tools on standard input and output until the client closes them; `allow_erase`:
/// a person started it with `--allow-erase`.
pub async fn serve_stdio(
    call: CallFn,
    defaults: Defaults,
    allow_erase: bool,
    token: Option<String>,
    changes: Option<Changes>,
) -> Result<(), String> {
    let service = McpServer::new(call, defaults, allow_erase, token, changes)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP initialization failed: {e}"))?;
    service.waiting().await.map_err(|e| format!("MCP server stopped: {e}"))?;
    Ok(())
}

/// `/mcp`: the tools over streamable HTTP. `hosts`: the `Host` names accepted (none given:
/// loopback names only, against DNS rebinding; empty: any, for --allow-remote behind the token).
pub fn router(call: CallFn, stop: CancellationToken, hosts: Option<Vec<String>>) -> axum::Router {
    router_with(call, Defaults::default(), false, stop, hosts, None)
}

/// [`router`] with save defaults, erasures carried out when `allow_erase`, and subscriptions
/// updated as `changes` moves.
pub fn router_with(
    call: CallFn,
    defaults: Defaults,
    allow_erase: bool,
    stop: CancellationToken,
    hosts: Option<Vec<String>>,
    changes: Option<Changes>,
) -> axum::Router {
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop)
        .with_max_request_body_bytes(crate::http::BODY_LIMIT);
    if let Some(hosts) = hosts {
        config = config.with_allowed_hosts(hosts);
    }
    let server = McpServer::new(call, defaults, allow_erase, None, changes);
    let service =
        StreamableHttpService::new(move || Ok(server.for_session()), Arc::new(LocalSessionManager::default()), config);
    axum::Router::new().nest_service("/mcp", service)
}
