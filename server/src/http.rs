//! The HTTP API: one route per store command, the same JSON as the command's `--json`
//! (docs/cli.md), errors as problem+json (RFC 9457) carrying the CLI's exit code, the OpenAPI
//! document at `/openapi.json`, MCP at `/mcp`, the review page at `/` ([`crate::ui`]), and
//! `POST /v1/call` for the CLI itself.
//!
//! Every command runs on a blocking thread of its own and is never cancelled: a client that
//! disconnects mid-request drops only its answer, so a command runs to completion or not at all.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;
use tracing::Instrument;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Extension, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use memledger_engine::error::Exit;
use memledger_engine::{Caller, Principal};

use crate::api::*;
use crate::contract;
use crate::{CallFn, Store};

/// A request body larger than this is refused with 413 (`import` takes up to [`IMPORT_LIMIT`]).
pub const BODY_LIMIT: usize = 16 << 20;
/// The body limit of `POST /v1/import` (an exported stream).
pub const IMPORT_LIMIT: usize = 1 << 30;

/// The JSON of the CLI's replies (`POST /v1/call`) and, in `Accept`, a request for one.
pub const REPLY_MEDIA_TYPE: &str = "application/vnd.memledger.reply+json";
/// The exit code of the command behind a response, also on success.
pub const EXIT_CODE_HEADER: &str = "memledger-exit-code";
/// Set on every answer while the store's last verification failed: when, and what.
pub const VERIFY_FAILED_HEADER: &str = "memledger-verify-failed";

/// `headers` with [`VERIFY_FAILED_HEADER`] when `reply` says the last verification failed.
fn mark_verify_failed(headers: &mut HeaderMap, reply: &Reply) {
    if let Some(failed) = &reply.verify_failed {
        // A header holds visible ASCII: anything else becomes `?`.
        let text: String = failed.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' }).collect();
        if let Ok(value) = HeaderValue::from_str(&text) {
            headers.insert(VERIFY_FAILED_HEADER, value);
        }
    }
}
/// Who acts, for the routes whose body does not say (default `api:http`).
pub const ACTOR_HEADER: &str = "memledger-actor";

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<Store>,
    pub call: CallFn,
    pub status: Arc<dyn Fn() -> ServerStatus + Send + Sync>,
    pub activity: Arc<Activity>,
    /// The actor of a call that names none.
    pub default_actor: String,
    /// `--allow-erase`: erasures are carried out (a dry run is answered either way).
    pub allow_erase: bool,
}

/// Requests in flight and the time of the last one, for `--idle-exit`.
#[derive(Default)]
pub struct Activity {
    pub in_flight: AtomicUsize,
    last_ms: AtomicU64,
    started: std::sync::OnceLock<Instant>,
}

impl Activity {
    fn now_ms(&self) -> u64 {
        self.started.get_or_init(Instant::now).elapsed().as_millis() as u64
    }

    pub fn touch(&self) {
        self.last_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// How long nothing has been in flight (zero while something is).
    pub fn idle_for(&self) -> std::time::Duration {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return std::time::Duration::ZERO;
        }
        std::time::Duration::from_millis(self.now_ms().saturating_sub(self.last_ms.load(Ordering::Relaxed)))
    }
}

async fn track(State(activity): State<Arc<Activity>>, request: Request, next: Next) -> Response {
    activity.in_flight.fetch_add(1, Ordering::Relaxed);
    activity.touch();
    struct Done(Arc<Activity>);
    impl Drop for Done {
        fn drop(&mut self) {
            self.0.touch();
            self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
    }
    let _done = Done(activity);
    next.run(request).await
}

/// An error as RFC 9457 problem details, with the CLI's exit code beside the HTTP status.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Problem {
    /// `about:blank`: the status and `exit_code` say what kind of problem it is.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// The CLI's exit code: 1 runtime or storage, 2 bad input, 3 state not as expected, 4 not
    /// found, 5 not permitted.
    pub exit_code: i32,
    pub hint: Option<String>,
    /// Not permitted (403): the verb the caller lacked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
    /// Not permitted (403): the scope (or pattern) it lacked it in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl Problem {
    pub fn new(status: StatusCode, exit: Exit, detail: impl Into<String>, hint: Option<String>) -> Problem {
        Problem {
            kind: "about:blank".into(),
            title: status.canonical_reason().unwrap_or("error").into(),
            status: status.as_u16(),
            detail: detail.into(),
            exit_code: exit.into(),
            hint,
            verb: None,
            scope: None,
        }
    }

    /// A malformed request (its body, query or path): 400, or 413 when too large, and logged.
    fn malformed(status: StatusCode, detail: String) -> Response {
        let status = if status == StatusCode::PAYLOAD_TOO_LARGE { status } else { StatusCode::BAD_REQUEST };
        eprintln!("memledger serve: refused a request ({}): {detail}", status.as_u16());
        Problem::new(status, Exit::BadInput, detail, None).into_response()
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, Json(&self)).into_response();
        let exit = HeaderValue::from(self.exit_code);
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        headers.insert(EXIT_CODE_HEADER, exit);
        response
    }
}

/// The HTTP status of a command's exit code.
pub fn status_of(exit: Exit, message: &str) -> StatusCode {
    let status = memledger_commands::CommandError::new(exit, message, None).http_status();
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn rejection_json(e: JsonRejection) -> Response {
    Problem::malformed(e.status(), e.body_text())
}

fn rejection_query(e: QueryRejection) -> Response {
    Problem::malformed(e.status(), e.body_text())
}

/// Whom a request acts for: its `memledger-actor` header; else, for the owner, the server's
/// default actor, and for a principal `KIND:NAME`.
fn actor_of(headers: &HeaderMap, state: &AppState, who: &Authed) -> String {
    headers
        .get(ACTOR_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .unwrap_or_else(|| default_actor(state, who))
}

fn default_actor(state: &AppState, who: &Authed) -> String {
    if who.0.owner { state.default_actor.clone() } else { format!("{}:{}", who.0.kind, who.0.name) }
}

/// The caller of a request: the principal its token authenticated, acting for `actor`.
fn caller(who: &Authed, actor: String) -> Caller {
    Caller { principal: who.0.clone(), actor }
}

/// Whether the client asked for the CLI's reply instead of the document.
fn wants_reply(headers: &HeaderMap) -> bool {
    headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains(REPLY_MEDIA_TYPE))
}

/// Run a call on a blocking thread that runs to the end even when the client has gone.
pub async fn run_call(store: &Arc<Store>, call: Call, caller: Caller) -> Reply {
    let store = store.clone();
    // The command's span is a child of the request's, on whichever thread runs it.
    let span = tracing::Span::current();
    match tokio::task::spawn_blocking(move || span.in_scope(|| store.run(&call, &caller))).await {
        Ok(reply) => reply,
        Err(e) => Reply::failure(format!("the command failed: {e}")),
    }
}

/// The document a command printed (JSON, or JSON Lines for `lines`), or its problem.
fn document(reply: Reply, lines: bool) -> Response {
    let exit = Exit::from_code(reply.exit_code);
    if exit != Exit::Ok && reply.stdout.is_empty() {
        let mut marked = HeaderMap::new();
        mark_verify_failed(&mut marked, &reply);
        let message = reply.error.unwrap_or_else(|| "the command failed".into());
        let mut problem = Problem::new(status_of(exit, &message), exit, message, reply.hint);
        if let Some(r) = reply.refusal {
            (problem.verb, problem.scope) = (Some(r.verb), Some(r.scope));
        }
        let mut response = problem.into_response();
        response.headers_mut().extend(marked);
        return response;
    }
    let media = if lines { "application/x-ndjson" } else { "application/json" };
    let mut marked = HeaderMap::new();
    mark_verify_failed(&mut marked, &reply);
    let mut response = (StatusCode::OK, reply.stdout).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    headers.insert(EXIT_CODE_HEADER, HeaderValue::from(reply.exit_code));
    headers.extend(marked);
    response
}

async fn respond(state: &AppState, who: &Authed, headers: &HeaderMap, call: Call, lines: bool) -> Response {
    let caller = caller(who, actor_of(headers, state, who));
    let span = request_span(headers);
    if wants_reply(headers) {
        let reply = run_call(&state.store, call, caller).instrument(span).await;
        return reply_response(reply);
    }
    document(run_call(&state.store, call, caller).instrument(span).await, lines)
}

/// An HTTP request's span (docs/adr/0039-traces.md), when traces are on: a server span, the child
/// of the caller's trace when the request carries a W3C `traceparent`, so an agent's own trace
/// holds memledger's spans.
fn request_span(headers: &HeaderMap) -> tracing::Span {
    let span = tracing::info_span!("memledger.request", otel.kind = "server", memledger.transport = "http");
    if !span.is_disabled() && headers.contains_key("traceparent") {
        let carrier: std::collections::HashMap<String, String> = ["traceparent", "tracestate"]
            .into_iter()
            .filter_map(|name| Some((name.to_string(), headers.get(name)?.to_str().ok()?.to_string())))
            .collect();
        let parent = opentelemetry::propagation::TextMapPropagator::extract(
            &opentelemetry_sdk::propagation::TraceContextPropagator::new(),
            &carrier,
        );
        let _ = tracing_opentelemetry::OpenTelemetrySpanExt::set_parent(&span, parent);
    }
    span
}

fn reply_response(reply: Reply) -> Response {
    let mut response = Json(&reply).into_response();
    mark_verify_failed(response.headers_mut(), &reply);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(REPLY_MEDIA_TYPE));
    response.headers_mut().insert(EXIT_CODE_HEADER, HeaderValue::from(reply.exit_code));
    response
}

macro_rules! body_or_400 {
    ($e:expr) => {
        match $e {
            Ok(Json(v)) => v,
            Err(e) => return rejection_json(e),
        }
    };
}

macro_rules! query_or_400 {
    ($e:expr) => {
        match $e {
            Ok(Query(v)) => v,
            Err(e) => return rejection_query(e),
        }
    };
}

/// Run any store command as the CLI would, and get its answer's JSON document and its exit code:
/// the transport of `memledger` itself and of `memledger mcp` when a server runs.
#[utoipa::path(post, path = "/v1/call", tag = "cli", request_body = CallRequest,
    responses((status = 200, description = "the command's JSON document, and its exit code", body = Reply, content_type = "application/vnd.memledger.reply+json"),
        (status = 400, body = Problem, content_type = "application/problem+json")))]
async fn call(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    body: Result<Json<CallRequest>, JsonRejection>,
) -> Response {
    let request = body_or_400!(body);
    let actor = request.actor.unwrap_or_else(|| default_actor(&state, &who));
    reply_response(run_call(&state.store, request.call, caller(&who, actor)).await)
}

#[utoipa::path(post, path = "/v1/memories", tag = "memories", request_body = SaveBody,
    params(("memledger-actor" = Option<String>, Header, description = "who is acting")),
    responses((status = 200, body = contract::SaveDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn save(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    body: Result<Json<SaveBody>, JsonRejection>,
) -> Response {
    let body = body_or_400!(body);
    respond(&state, &who, &headers, Call::Save(body), false).await
}

#[utoipa::path(post, path = "/v1/memories/batch", tag = "memories", request_body = SaveBatch,
    responses((status = 200, description = "one save document or {line, error} per memory, in order (JSON Lines)", content_type = "application/x-ndjson"),
        (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn save_batch(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    body: Result<Json<SaveBatch>, JsonRejection>,
) -> Response {
    let body = body_or_400!(body);
    let lines = body
        .memories
        .iter()
        .enumerate()
        .map(|(i, m)| NumberedLine { line: i + 1, text: serde_json::to_string(m).unwrap_or_default(), not_utf8: false })
        .collect();
    respond(&state, &who, &headers, Call::SaveLines(SaveLines { lines, allow_secret: false }), true).await
}

#[utoipa::path(get, path = "/v1/memories", tag = "memories", params(ListQuery),
    responses((status = 200, body = contract::ListDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn list(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    respond(&state, &who, &headers, Call::List(q), false).await
}

#[utoipa::path(get, path = "/v1/memories/{id}", tag = "memories", params(("id" = String, Path), ShowQuery),
    responses((status = 200, body = contract::MemoryDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn show(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(id): Path<String>,
    q: Result<Query<ShowQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    respond(&state, &who, &headers, Call::Show(ShowQuery { id, ..q }), false).await
}

#[utoipa::path(get, path = "/v1/memories/{id}/history", tag = "memories", params(("id" = String, Path), ShowQuery),
    responses((status = 200, body = contract::HistoryDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn history(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(id): Path<String>,
    q: Result<Query<ShowQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    respond(&state, &who, &headers, Call::History(ShowQuery { id, ..q }), false).await
}

#[utoipa::path(get, path = "/v1/memories/{id}/why", tag = "memories", params(("id" = String, Path), WhyQuery),
    responses((status = 200, body = contract::WhyDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn why(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(id): Path<String>,
    q: Result<Query<WhyQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    respond(&state, &who, &headers, Call::Why(WhyQuery { id, ..q }), false).await
}

/// The text and the expected version of an update (the id is in the path).
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateText {
    /// The new text; absent: the text stays (an update of the expiry alone).
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    expect_version: Option<u32>,
    /// A new expiry (RFC 3339).
    #[serde(default)]
    expires_at: Option<String>,
    /// A new time to live from now (`14d`).
    #[serde(default)]
    ttl: Option<String>,
    /// It no longer expires.
    #[serde(default)]
    no_expiry: bool,
}

#[utoipa::path(post, path = "/v1/memories/{id}/update", tag = "memories", params(("id" = String, Path)), request_body = UpdateText,
    responses((status = 200, body = contract::UpdateDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn update(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Json<UpdateText>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(
        &state,
        &who,
        &headers,
        Call::Update(UpdateBody {
            id,
            text: b.text,
            expect_version: b.expect_version,
            expires_at: b.expires_at,
            ttl: b.ttl,
            no_expiry: b.no_expiry,
        }),
        false,
    )
    .await
}

/// Why a memory is forgotten (the id is in the path).
#[derive(serde::Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
struct Reason {
    #[serde(default)]
    reason: Option<String>,
}

#[utoipa::path(post, path = "/v1/memories/{id}/forget", tag = "memories", params(("id" = String, Path)), request_body = Reason,
    responses((status = 200, body = contract::ForgetDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn forget(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Json<Reason>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(&state, &who, &headers, Call::Forget(ForgetBody { id, reason: b.reason }), false).await
}

/// What to erase (the id is in the path).
#[derive(serde::Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
struct EraseRequest {
    /// Erase every version of the memory's lineage.
    #[serde(default)]
    lineage: bool,
    /// Why (recorded on the erasure event).
    #[serde(default)]
    reason: Option<String>,
    /// List what would be erased; write nothing. Answered by any server.
    #[serde(default)]
    dry_run: bool,
}

/// `erase`: only on a server a person started with `--allow-erase` (403 otherwise); a dry run
/// is always answered.
#[utoipa::path(post, path = "/v1/memories/{id}/erase", tag = "memories", params(("id" = String, Path)), request_body = EraseRequest,
    responses((status = 200, body = contract::EraseDoc),
        (status = 403, description = "the server was not started with --allow-erase: nothing was erased", body = Problem, content_type = "application/problem+json"),
        (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn erase(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Json<EraseRequest>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    if !b.dry_run && !state.allow_erase {
        eprintln!("memledger serve: refused an erasure of {id:?} (not started with --allow-erase)");
        return Problem::new(StatusCode::FORBIDDEN, Exit::BadInput, ERASE_REFUSED, Some(ERASE_REFUSED_HINT.into()))
            .into_response();
    }
    let call =
        Call::Erase(EraseBody { id, retired_before: None, lineage: b.lineage, reason: b.reason, dry_run: b.dry_run });
    respond(&state, &who, &headers, call, false).await
}

#[utoipa::path(post, path = "/v1/recall", tag = "memories", request_body = RecallBody,
    responses((status = 200, body = contract::RecallDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn recall(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    body: Result<Json<RecallBody>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(&state, &who, &headers, Call::Recall(b), false).await
}

#[utoipa::path(get, path = "/v1/conflicts", tag = "conflicts", params(ConflictsQuery),
    responses((status = 200, body = contract::ConflictsDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn conflicts(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    q: Result<Query<ConflictsQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    respond(&state, &who, &headers, Call::ConflictsList(q), false).await
}

#[utoipa::path(get, path = "/v1/conflicts/{id}", tag = "conflicts", params(("id" = String, Path)),
    responses((status = 200, body = contract::ConflictDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn conflict(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    respond(&state, &who, &headers, Call::ConflictsShow(IdPath { id }), false).await
}

/// A decision on a conflict (the id is in the path).
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct Decision {
    action: Action,
    #[serde(default)]
    merged_text: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

#[utoipa::path(post, path = "/v1/conflicts/{id}/resolve", tag = "conflicts", params(("id" = String, Path)), request_body = Decision,
    responses((status = 200, body = contract::ResolveDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn resolve(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Json<Decision>, JsonRejection>,
) -> Response {
    let d = body_or_400!(body);
    let call = Call::ConflictsResolve(ResolveBody { id, action: d.action, merged_text: d.merged_text, note: d.note });
    respond(&state, &who, &headers, call, false).await
}

#[utoipa::path(post, path = "/v1/conflicts/{id}/revert", tag = "conflicts", params(("id" = String, Path)),
    responses((status = 200, body = contract::ResolveDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn revert(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    respond(&state, &who, &headers, Call::ConflictsRevert(IdPath { id }), false).await
}

#[utoipa::path(post, path = "/v1/conflicts/auto", tag = "conflicts", request_body = AutoBody,
    responses((status = 200, body = contract::Document), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn auto(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    body: Result<Json<AutoBody>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(&state, &who, &headers, Call::ConflictsAuto(b), false).await
}

#[utoipa::path(post, path = "/v1/conflicts/scan", tag = "conflicts", request_body = ScanBody,
    responses((status = 200, body = contract::Document), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn scan(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    body: Result<Json<ScanBody>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(&state, &who, &headers, Call::ConflictsScan(b), false).await
}

#[utoipa::path(post, path = "/v1/embed", tag = "ledger", request_body = AutoBody,
    responses((status = 200, body = contract::Document), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn embed(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    body: Result<Json<AutoBody>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(&state, &who, &headers, Call::Embed(b), false).await
}

#[utoipa::path(get, path = "/v1/log", tag = "ledger", params(LogQuery),
    responses((status = 200, description = "one event per line", content_type = "application/x-ndjson"),
        (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn log(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    q: Result<Query<LogQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    respond(&state, &who, &headers, Call::Log(q), true).await
}

#[utoipa::path(get, path = "/v1/verify", tag = "ledger",
    responses((status = 200, description = "the report; `ok` false (and memledger-exit-code 1) when the chain or a view is wrong", body = contract::VerifyDoc)))]
async fn verify(State(state): State<AppState>, Extension(who): Extension<Authed>, headers: HeaderMap) -> Response {
    respond(&state, &who, &headers, Call::Verify(Empty {}), false).await
}

#[utoipa::path(get, path = "/v1/stats", tag = "ledger", responses((status = 200, body = contract::StatsDoc)))]
async fn stats(State(state): State<AppState>, Extension(who): Extension<Authed>, headers: HeaderMap) -> Response {
    respond(&state, &who, &headers, Call::Stats(Empty {}), false).await
}

#[utoipa::path(get, path = "/v1/usage", tag = "ledger",
    responses((status = 200, description = "the chat model's tokens today and this month (docs/models.md)", body = contract::UsageDoc)))]
async fn usage(State(state): State<AppState>, Extension(who): Extension<Authed>, headers: HeaderMap) -> Response {
    respond(&state, &who, &headers, Call::Usage(Empty {}), false).await
}

#[utoipa::path(post, path = "/v1/rebuild", tag = "ledger", request_body = RebuildBody,
    responses((status = 200, body = contract::RebuildDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn rebuild(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    body: Result<Json<RebuildBody>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(&state, &who, &headers, Call::Rebuild(b), false).await
}

#[utoipa::path(post, path = "/v1/conflicts/open", tag = "conflicts", request_body = OpenBody,
    params(("memledger-actor" = Option<String>, Header, description = "who is acting")),
    responses((status = 200, body = contract::OpenDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn open_conflict(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    body: Result<Json<OpenBody>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(&state, &who, &headers, Call::ConflictsOpen(b), false).await
}

#[utoipa::path(get, path = "/v1/review/conflicts", tag = "review", params(ReviewConflictsQuery),
    responses((status = 200, body = contract::ReviewConflictsDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn review_conflicts(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    q: Result<Query<ReviewConflictsQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    respond(&state, &who, &headers, Call::ReviewConflicts(q), false).await
}

#[utoipa::path(get, path = "/v1/events", tag = "review", params(EventsQuery),
    responses((status = 200, body = contract::EventsDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn events(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    q: Result<Query<EventsQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    respond(&state, &who, &headers, Call::Events(q), false).await
}

#[utoipa::path(get, path = "/v1/near-misses", tag = "review", params(NearMissQuery),
    responses((status = 200, body = contract::NearMissesDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn near_misses(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    q: Result<Query<NearMissQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    respond(&state, &who, &headers, Call::NearMisses(q), false).await
}

#[utoipa::path(get, path = "/v1/timeline", tag = "review", responses((status = 200, body = contract::TimelineDoc)))]
async fn timeline(State(state): State<AppState>, Extension(who): Extension<Authed>, headers: HeaderMap) -> Response {
    respond(&state, &who, &headers, Call::Timeline(Empty {}), false).await
}

#[utoipa::path(get, path = "/v1/scopes", tag = "memories",
    responses((status = 200, description = "the scopes the caller may read that hold active memories", body = contract::ScopesDoc)))]
async fn scopes(State(state): State<AppState>, Extension(who): Extension<Authed>, headers: HeaderMap) -> Response {
    respond(&state, &who, &headers, Call::Scopes(Empty {}), false).await
}

#[utoipa::path(get, path = "/v1/whoami", tag = "principals",
    responses((status = 200, body = contract::WhoamiDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn whoami(State(state): State<AppState>, Extension(who): Extension<Authed>, headers: HeaderMap) -> Response {
    respond(&state, &who, &headers, Call::Whoami(Empty {}), false).await
}

#[utoipa::path(get, path = "/v1/principals", tag = "principals",
    responses((status = 200, body = contract::PrincipalsDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn principals(State(state): State<AppState>, Extension(who): Extension<Authed>, headers: HeaderMap) -> Response {
    respond(&state, &who, &headers, Call::PrincipalsList(Empty {}), false).await
}

/// Add a principal: the answer carries its token, shown this once.
#[utoipa::path(post, path = "/v1/principals", tag = "principals", request_body = PrincipalAddBody,
    responses((status = 200, body = contract::PrincipalChangeDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn principal_add(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    body: Result<Json<PrincipalAddBody>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(&state, &who, &headers, Call::PrincipalsAdd(b), false).await
}

/// The grants to give (the name is in the path).
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct Grants {
    /// `SCOPE=VERB,VERB…[@AUTHORITY]`.
    grants: Vec<String>,
}

#[utoipa::path(post, path = "/v1/principals/{name}/grant", tag = "principals", params(("name" = String, Path)), request_body = Grants,
    responses((status = 200, body = contract::PrincipalChangeDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn principal_grant(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Result<Json<Grants>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    respond(&state, &who, &headers, Call::PrincipalsGrant(PrincipalGrantBody { name, grants: b.grants }), false).await
}

/// What to revoke (the name is in the path): the grants of these scope patterns, or (none) the
/// principal itself.
#[derive(serde::Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
struct Revocation {
    #[serde(default)]
    grants: Vec<String>,
    #[serde(default)]
    reason: Option<String>,
}

#[utoipa::path(post, path = "/v1/principals/{name}/revoke", tag = "principals", params(("name" = String, Path)), request_body = Revocation,
    responses((status = 200, body = contract::PrincipalChangeDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn principal_revoke(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Result<Json<Revocation>, JsonRejection>,
) -> Response {
    let b = body_or_400!(body);
    let call = Call::PrincipalsRevoke(PrincipalRevokeBody { name, grants: b.grants, reason: b.reason });
    respond(&state, &who, &headers, call, false).await
}

/// Replace a principal's token: the answer carries the new one, shown this once.
#[utoipa::path(post, path = "/v1/principals/{name}/rotate", tag = "principals", params(("name" = String, Path)),
    responses((status = 200, body = contract::PrincipalChangeDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn principal_rotate(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    respond(&state, &who, &headers, Call::PrincipalsRotate(NameBody { name }), false).await
}

#[utoipa::path(get, path = "/v1/status", tag = "server", responses((status = 200, body = ServerStatus)))]
async fn status(State(state): State<AppState>) -> Response {
    Json((state.status)()).into_response()
}

#[utoipa::path(get, path = "/v1/export", tag = "ledger", params(ExportQuery),
    responses((status = 200, description = "the event stream, one event per line (as `memledger export`)", content_type = "application/x-ndjson"),
        (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn export(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    q: Result<Query<ExportQuery>, QueryRejection>,
) -> Response {
    let q = query_or_400!(q);
    let (send, receive) = tokio::sync::mpsc::channel::<Bytes>(16);
    let store = state.store.clone();
    let caller = caller(&who, actor_of(&headers, &state, &who));
    // The export writes into the channel from a blocking thread; a client that goes away
    // closes the channel, and the export stops at its next write (it only reads).
    tokio::task::spawn_blocking(move || {
        let mut writer = ChannelWriter { send, buffer: Vec::with_capacity(CHUNK) };
        if let Err(e) = store.export(q.since, &caller, &mut writer) {
            eprintln!("memledger serve: export stopped: {e}");
        }
        let _ = std::io::Write::flush(&mut writer);
    });
    let mut response = Body::new(ChannelBody(receive)).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    response
}

const CHUNK: usize = 64 << 10;

struct ChannelWriter {
    send: tokio::sync::mpsc::Sender<Bytes>,
    buffer: Vec<u8>,
}

impl std::io::Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(buf);
        if self.buffer.len() >= CHUNK {
            self.flush()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK)));
        self.send.blocking_send(chunk).map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
    }
}

struct ChannelBody(tokio::sync::mpsc::Receiver<Bytes>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx).map(|chunk| chunk.map(|c| Ok(http_body::Frame::data(c))))
    }
}

#[utoipa::path(post, path = "/v1/import", tag = "ledger", params(ImportQuery),
    request_body(content = String, description = "an exported stream (JSON Lines)", content_type = "application/x-ndjson"),
    responses((status = 200, body = contract::ImportDoc), (status = "4XX", body = Problem, content_type = "application/problem+json")))]
async fn import(
    State(state): State<AppState>,
    Extension(who): Extension<Authed>,
    headers: HeaderMap,
    q: Result<Query<ImportQuery>, QueryRejection>,
    body: Bytes,
) -> Response {
    let allow_secret = query_or_400!(q).allow_secret;
    let caller = caller(&who, actor_of(&headers, &state, &who));
    let reply_wanted = wants_reply(&headers);
    let store = state.store.clone();
    let reply = tokio::task::spawn_blocking(move || store.import(&body, &caller, allow_secret))
        .await
        .unwrap_or_else(|e| Reply::failure(format!("the import failed: {e}")));
    if reply_wanted { reply_response(reply) } else { document(reply, false) }
}

/// The OpenAPI document's frame; the paths and schemas come from the handlers and types.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "memledger",
        description = "The HTTP API of `memledger serve`: the CLI's commands with the same JSON as `--json` (docs/cli.md). On TCP every route but this document needs `Authorization: Bearer <token>` (`memledger serve --print-token`). Errors are problem+json with the CLI's exit code."
    ),
    components(schemas(Problem))
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        openapi.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new())]);
        // Every operation may answer 401 (no token, on TCP) and, for a malformed or refused
        // request, a 4xx problem.
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let problem = || {
            ResponseBuilder::new()
                .description("problem details (RFC 9457) with the CLI's exit code")
                .content(
                    "application/problem+json",
                    ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build(),
                )
                .build()
        };
        for item in openapi.paths.paths.values_mut() {
            let operations = [&mut item.get, &mut item.post];
            for operation in operations.into_iter().flatten() {
                let responses = &mut operation.responses.responses;
                responses.entry("401".into()).or_insert_with(|| problem().into());
                responses.entry("4XX".into()).or_insert_with(|| problem().into());
            }
        }
    }
}

/// The routes and the OpenAPI document that describes them.
pub fn api() -> (axum::Router<AppState>, utoipa::openapi::OpenApi) {
    let (router, mut openapi) = routes();
    // After the routes: the modifier gives every operation its 401 and 4xx answers.
    utoipa::Modify::modify(&BearerAuth, &mut openapi);
    (router, openapi)
}

fn routes() -> (axum::Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(call))
        .routes(routes!(save, list))
        .routes(routes!(save_batch))
        .routes(routes!(show))
        .routes(routes!(history))
        .routes(routes!(why))
        .routes(routes!(update))
        .routes(routes!(forget))
        .routes(routes!(erase))
        .routes(routes!(recall))
        .routes(routes!(conflicts))
        .routes(routes!(conflict))
        .routes(routes!(resolve))
        .routes(routes!(revert))
        .routes(routes!(auto))
        .routes(routes!(scan))
        .routes(routes!(embed))
        .routes(routes!(log))
        .routes(routes!(export))
        .routes(routes!(verify))
        .routes(routes!(stats))
        .routes(routes!(scopes))
        .routes(routes!(usage))
        .routes(routes!(rebuild))
        .routes(routes!(status))
        .routes(routes!(open_conflict))
        .routes(routes!(review_conflicts))
        .routes(routes!(events))
        .routes(routes!(near_misses))
        .routes(routes!(timeline))
        .routes(routes!(whoami))
        .routes(routes!(principals, principal_add))
        .routes(routes!(principal_grant))
        .routes(routes!(principal_revoke))
        .routes(routes!(principal_rotate))
        .routes({
            let (schemas, paths, router) = routes!(import);
            (schemas, paths, router.layer(DefaultBodyLimit::max(IMPORT_LIMIT)))
        })
        .split_for_parts()
}

/// The principal a request's token authenticated (the owner's for the store's own token, and on
/// the Unix socket for a request without one), put in the request's extensions by
/// [`authenticate`] for the handlers, the MCP tools and the review page.
#[derive(Clone, Debug)]
pub struct Authed(pub Arc<Principal>);

/// How [`authenticate`] knows a token.
#[derive(Clone)]
pub struct Auth {
    pub store: Arc<Store>,
    /// The store's own token: the owner's.
    pub store_token: Option<Arc<String>>,
    /// A request without a token is refused (TCP); else it is the owner's (the Unix socket,
    /// whose mode 0600 is its guard).
    pub required: bool,
}

/// Find the principal of `Authorization: Bearer <token>`: the store's own token is the owner, a
/// principal's token that principal. A wrong, rotated or revoked token is 401 on every route but
/// the OpenAPI document and the page's own files, which hold no data; so is none on TCP. The
/// token itself is never logged or echoed.
async fn authenticate(State(auth): State<Arc<Auth>>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path == "/openapi.json" || crate::ui::is_asset(path) {
        return next.run(request).await;
    }
    let given =
        request.headers().get(header::AUTHORIZATION).map(|v| v.to_str().ok().and_then(|v| v.strip_prefix("Bearer ")));
    let principal = match given {
        None if !auth.required => Some(Principal::owner()),
        None | Some(None) => None,
        Some(Some(token)) => {
            let token = token.trim();
            if auth.store_token.as_ref().is_some_and(|t| constant_time_eq(token.as_bytes(), t.as_bytes())) {
                Some(Principal::owner())
            } else {
                crate::authenticate(&auth.store, token.to_string()).await
            }
        }
    };
    match principal {
        Some(principal) => {
            request.extensions_mut().insert(Authed(Arc::new(principal)));
            next.run(request).await
        }
        None => {
            eprintln!("memledger serve: refused a request without a valid bearer token ({})", request.uri().path());
            let mut response = Problem::new(
                StatusCode::UNAUTHORIZED,
                Exit::NotPermitted,
                if given.is_some() {
                    memledger_engine::EngineError::Unauthenticated.to_string()
                } else {
                    "this server needs `Authorization: Bearer <token>`".to_string()
                },
                Some(UNAUTHENTICATED_HINT.into()),
            )
            .into_response();
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A route nobody serves: problem+json, not an empty 404.
async fn fallback(request: Request) -> Response {
    Problem::new(
        StatusCode::NOT_FOUND,
        Exit::NotFound,
        format!("no route {} {}", request.method(), request.uri().path()),
        None,
    )
    .into_response()
}

/// The whole application: the API, `/openapi.json`, `/mcp`, the review page at `/`, each
/// request for the principal its token authenticates ([`authenticate`]).
pub fn app(state: AppState, mcp: axum::Router, auth: Auth) -> axum::Router {
    let (api, openapi) = api();
    let document = Arc::new(openapi.to_json().unwrap_or_else(|_| "{}".into()));
    let activity = state.activity.clone();
    let router = api
        .route(
            "/openapi.json",
            axum::routing::get(move || {
                let document = document.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], document.as_str().to_owned()) }
            }),
        )
        .merge(crate::ui::router())
        .fallback(fallback)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
        .merge(mcp)
        .layer(axum::middleware::from_fn_with_state(Arc::new(auth), authenticate))
        .layer(axum::middleware::from_fn_with_state(activity, track));
    router
}
