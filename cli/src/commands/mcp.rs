//! `memledger mcp`: a Model Context Protocol server over stdio, for coding agents.
//!
//! The server holds the store only while a tool call runs: each call opens it, does its work and
//! drops it (the drop commits the text index), so a person's CLI commands run between an agent's
//! calls (docs/adr/0007-mcp-store-access.md). Calls are answered one at a time. Every event a
//! call writes is recorded as `agent:<client name>`, the name the client gave in `initialize`.

use memledger_engine::error::Exit;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use memledger_engine::{ConflictStatus, Memledger, SaveRequest};
use memledger_schemas::ResolutionAction;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock as Content, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::app::Context;
use crate::output::{CliError, Output};

/// Serve memledger to an agent over the Model Context Protocol (stdio).
///
/// Tools: save_memory, recall_memory, memory_history, why_memory, list_conflicts and
/// resolve_conflict. Explicit edits (`update`, `forget`) stay with people, in the CLI. The store
/// is opened per tool call, so the CLI keeps working on the same store while an agent is
/// connected. Events are recorded as `agent:<client name>`.
///
/// Example (Claude Code): claude mcp add memledger -- memledger mcp
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(ctx: &Context, _args: Args, _out: &mut Output) -> Result<(), CliError> {
    let server = McpServer::new(ctx.dir.clone(), ctx.wait);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Exit::Failure, format!("cannot start the MCP server: {e}"), None))?;
    runtime.block_on(async move {
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| CliError::new(Exit::Failure, format!("MCP initialization failed: {e}"), None))?;
        service.waiting().await.map_err(|e| CliError::new(Exit::Failure, format!("MCP server stopped: {e}"), None))?;
        Ok(())
    })
}

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
bump VERSION, tag, push\"). The default is fact.";

const RECALL_DESCRIPTION: &str = "Find the active memories that answer a question (BM25 over words; stale versions are \
never returned). Call it before answering anything the user may have told you before. A result whose `conflicts_with` is \
non-empty is in a pending conflict: the `notice` then says so, and you must not assert either side — ask the user which \
is current (and resolve it with resolve_conflict). Filter by `type` (fact, preference, episode, procedure) and `scope`; \
`as_of` (a ledger seq or an RFC 3339 time) answers as the store stood then.";

const HISTORY_DESCRIPTION: &str = "Every version of a belief, newest first (any version's id or a unique prefix of 6+ \
hex digits works): text, status (active, stale, retired), when it was asserted and what caused each step. Read-only: \
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
    /// Where the memory came from (a session, a file, a person).
    pub source: Option<String>,
    /// When the claim became true in the world (RFC 3339), if not now.
    pub effective_at: Option<String>,
    /// A repeated key returns the first result and writes nothing: use one per intended save when retrying.
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
#[serde(rename_all = "snake_case")]
pub enum Action {
    KeepNew,
    KeepExisting,
    KeepBoth,
    Merge,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResolveParams {
    /// The conflict id, or a unique prefix of 6+ hex digits.
    pub id: String,
    /// The user's decision: keep_new, keep_existing, keep_both or merge.
    pub action: Action,
    /// With merge: the text the user says is true.
    pub merged_text: Option<String>,
    /// Why, in the user's words (recorded with the resolution).
    pub note: Option<String>,
}

/// The MCP server: where the store is, and one tool call at a time.
#[derive(Clone)]
pub struct McpServer {
    dir: PathBuf,
    wait: Duration,
    /// One call at a time: the store is opened per call, and a second open in this process
    /// would only wait for the first to drop it.
    turn: Arc<tokio::sync::Mutex<()>>,
    tool_router: ToolRouter<Self>,
}

/// A tool's answer before it becomes MCP content: a JSON value, or an error for the agent.
type Answer = Result<Value, CliError>;

fn actor_of(context: &RequestContext<RoleServer>) -> String {
    let name = context.client_info().map(|i| i.name).unwrap_or_default();
    let name: String = name.trim().chars().filter(|c| !c.is_control()).take(100).collect();
    if name.is_empty() { "agent:unknown".into() } else { format!("agent:{name}") }
}

/// How a tool call opens the store.
enum Open {
    /// Create it if it does not exist (writes).
    Create,
    /// It must exist; a store nobody has written to yet answers with this value (reads).
    OrEmpty(Value),
    /// It must exist.
    Existing,
}

impl McpServer {
    pub fn new(dir: PathBuf, wait: Duration) -> Self {
        McpServer { dir, wait, turn: Arc::new(tokio::sync::Mutex::new(())), tool_router: Self::tool_router() }
    }

    /// Run `work` on a blocking thread with the store open, then drop it: the store is held for
    /// this call only.
    async fn with_store<F>(&self, actor: String, open: Open, work: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&Memledger, &str) -> Answer + Send + 'static,
    {
        let _turn = self.turn.lock().await;
        let ctx = Context { dir: self.dir.clone(), json: true, actor, wait: self.wait };
        let answer = tokio::task::spawn_blocking(move || -> Answer {
            let ml = match (ctx.open(matches!(open, Open::Create)), open) {
                (Ok(ml), _) => ml,
                // `Context::open` says so when there is no store at the path (exit code 1).
                (Err(e), Open::OrEmpty(empty)) if e.message.starts_with("no memledger store at") => return Ok(empty),
                (Err(e), _) => return Err(e),
            };
            let answer = work(&ml, &ctx.actor);
            drop(ml);
            answer
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool call failed: {e}"), None))?;
        Ok(to_result(answer))
    }
}

fn to_result(answer: Answer) -> CallToolResult {
    match answer {
        Ok(value) => {
            let text = serde_json::to_string_pretty(&value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
            CallToolResult::success(vec![Content::text(text)])
        }
        Err(e) => {
            let mut text = format!("error: {}", e.message);
            if let Some(h) = &e.hint {
                text.push_str(&format!("\nhint: {h}"));
            }
            CallToolResult::error(vec![Content::text(text)])
        }
    }
}

const CONFLICT_ON_SAVE: &str = "This memory contradicts one the user already holds; both stay active. Show the user both \
statements (list_conflicts), ask which is current, and record their answer with resolve_conflict. Do not decide it yourself.";

#[tool_router]
impl McpServer {
    #[tool(name = "save_memory", description = SAVE_DESCRIPTION)]
    async fn save_memory(
        &self,
        Parameters(p): Parameters<SaveParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = SaveRequest {
            text: p.text,
            memory_type: p.memory_type.or_else(crate::config::default_type),
            scope: p.scope.or_else(crate::config::default_scope),
            source: p.source,
            effective_at: p.effective_at,
            fact_key: None,
            idempotency_key: p.idempotency_key,
            no_dedup: false,
        };
        // Bad input writes nothing, and creates no store.
        if let Err(e) = request.clone().validate() {
            return Ok(to_result(Err(e.into())));
        }
        self.with_store(actor_of(&context), Open::Create, move |ml, actor| {
            let r = ml.save(request, actor)?;
            let mut v = serde_json::to_value(&r).map_err(|e| CliError::new(Exit::Failure, e.to_string(), None))?;
            if r.conflict_id.is_some() && !r.settled_by_effective_time {
                v["notice"] = json!(CONFLICT_ON_SAVE);
            }
            Ok(v)
        })
        .await
    }

    #[tool(name = "recall_memory", description = RECALL_DESCRIPTION)]
    async fn recall_memory(
        &self,
        Parameters(p): Parameters<RecallParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let empty = json!({"notice": null, "results": []});
        self.with_store(actor_of(&context), Open::OrEmpty(empty), move |live, _| {
            let memory_type = p.memory_type.as_deref().map(memledger_engine::input::parse_type).transpose()?;
            let point = p.as_of.as_deref().map(str::parse::<memledger_engine::AsOf>).transpose()?;
            let ml = live.as_of(point)?;
            let found = ml.recall(&p.query, memory_type, p.scope.as_deref(), p.limit.unwrap_or(10) as usize)?;
            let mut v = json!({ "notice": found.notice });
            let rest = serde_json::to_value(&found).map_err(|e| CliError::new(Exit::Failure, e.to_string(), None))?;
            if let (Some(target), Value::Object(rest)) = (v.as_object_mut(), rest) {
                for (k, value) in rest {
                    target.entry(k).or_insert(value);
                }
            }
            Ok(v)
        })
        .await
    }

    #[tool(name = "memory_history", description = HISTORY_DESCRIPTION)]
    async fn memory_history(
        &self,
        Parameters(p): Parameters<IdParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_store(actor_of(&context), Open::Existing, move |ml, _| {
            let id = ml.resolve_memory_id(&p.id)?;
            let h = ml.history(id)?;
            serde_json::to_value(&h).map_err(|e| CliError::new(Exit::Failure, e.to_string(), None))
        })
        .await
    }

    #[tool(name = "why_memory", description = WHY_DESCRIPTION)]
    async fn why_memory(
        &self,
        Parameters(p): Parameters<WhyParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_store(actor_of(&context), Open::Existing, move |ml, _| {
            let id = ml.resolve_memory_id(&p.id)?;
            let other = p.other.as_deref().map(|o| ml.resolve_memory_id(o)).transpose()?;
            let decisions = ml.why(id, other)?;
            Ok(json!({ "decisions": decisions }))
        })
        .await
    }

    #[tool(name = "list_conflicts", description = LIST_CONFLICTS_DESCRIPTION)]
    async fn list_conflicts(
        &self,
        Parameters(p): Parameters<ListConflictsParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let status = match p.status.as_deref().unwrap_or("pending") {
            "pending" => Some(ConflictStatus::Pending),
            "resolved" => Some(ConflictStatus::Resolved),
            "all" => None,
            other => {
                let e = CliError::bad_input(format!("unknown status {other:?} (pending, resolved or all)"));
                return Ok(to_result(Err(e)));
            }
        };
        let empty = json!({"conflicts": []});
        self.with_store(actor_of(&context), Open::OrEmpty(empty), move |ml, _| {
                let list = ml.conflicts(status)?;
                let items: Vec<Value> =
                    list.iter().map(|c| super::conflicts::conflict_json(ml, c)).collect::<Result<_, _>>()?;
                let pending = list.iter().filter(|c| c.status == ConflictStatus::Pending).count();
                let mut v = json!({ "conflicts": items });
                if pending > 0 {
                    v["notice"] = json!(
                        "Pending conflicts are for the user to decide: show both sides and ask which is current, then call resolve_conflict."
                    );
                }
                Ok(v)
            })
            .await
    }

    #[tool(name = "resolve_conflict", description = RESOLVE_DESCRIPTION)]
    async fn resolve_conflict(
        &self,
        Parameters(p): Parameters<ResolveParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let action = match p.action {
            Action::KeepNew => ResolutionAction::KeepNew,
            Action::KeepExisting => ResolutionAction::KeepExisting,
            Action::KeepBoth => ResolutionAction::KeepBoth,
            Action::Merge => ResolutionAction::Merge,
        };
        let merged = match (action, p.merged_text) {
            (ResolutionAction::Merge, None) => {
                return Ok(to_result(Err(CliError::bad_input("merge needs merged_text: what the user says is true"))));
            }
            (ResolutionAction::Merge, Some(t)) => match memledger_engine::input::validate_text(&t) {
                Ok(_) => Some(t),
                Err(e) => return Ok(to_result(Err(e.into()))),
            },
            (_, Some(_)) => {
                return Ok(to_result(Err(CliError::bad_input("merged_text goes only with the merge action"))));
            }
            (_, None) => None,
        };
        self.with_store(actor_of(&context), Open::Existing, move |ml, actor| {
            let id = ml.resolve_conflict_id(&p.id)?;
            let r = ml.resolve(id, action, merged.as_deref(), p.note, actor)?;
            serde_json::to_value(&r).map_err(|e| CliError::new(Exit::Failure, e.to_string(), None))
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("memledger", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!("{INSTRUCTIONS} {TAXONOMY}"))
    }
}
