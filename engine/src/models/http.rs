//! OpenAI-compatible HTTP calls: `POST {base}/chat/completions`, `POST {base}/embeddings` and
//! `POST {base}/rerank` (the shape vLLM, llama.cpp, Infinity, Jina and Cohere serve), with a
//! per-attempt timeout and a bounded retry of quick failures.
//!
//! Every failure is a value ([`CallError`]) that the caller records and falls back from; nothing
//! here panics or blocks past its timeout.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tracing::Instrument;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::config::Endpoint;

/// Why a model call gave no usable answer. The text goes into `ModelVerdict.error`.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CallError {
    /// Nothing listens there, or the connection broke before an answer.
    #[error("connection failed: {}", error_chain(.0.as_ref()))]
    Connect(#[source] Arc<reqwest::Error>),
    /// No complete answer within the timeout.
    #[error("timed out after {:.1}s", .0.as_secs_f64())]
    Timeout(Duration),
    /// The server answered with an error status (and this much of its body).
    #[error("HTTP {0}: {1}")]
    Status(u16, String),
    /// The server answered 200 but not in the OpenAI shape.
    #[error("malformed answer: {0}")]
    Malformed(String),
    /// The runtime the calls run on could not be started.
    #[error("{0}")]
    Runtime(String),
}

impl CallError {
    /// What kind of failure this is, for a trace (`error.type`): never the server's words.
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::Connect(_) => "connect",
            CallError::Timeout(_) => "timeout",
            CallError::Status(..) => "status",
            CallError::Malformed(_) => "malformed",
            CallError::Runtime(_) => "runtime",
        }
    }

    /// Worth another attempt: quick failures only, never a timeout (that would double the wait).
    fn retryable(&self) -> bool {
        match self {
            CallError::Connect(_) => true,
            CallError::Status(s, _) => *s == 429 || *s >= 500,
            CallError::Timeout(_) | CallError::Malformed(_) | CallError::Runtime(_) => false,
        }
    }
}

/// Clip a text for an error message or a record.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push('…');
    s
}

/// The HTTP client and the small runtime model calls run on. Cheap until first used.
pub struct Http {
    client: OnceLock<reqwest::Client>,
    runtime: OnceLock<Result<tokio::runtime::Runtime, String>>,
}

impl Default for Http {
    fn default() -> Self {
        Self::new()
    }
}

impl Http {
    pub fn new() -> Self {
        Http { client: OnceLock::new(), runtime: OnceLock::new() }
    }

    pub fn client(&self) -> reqwest::Client {
        self.client
            .get_or_init(|| {
                reqwest::Client::builder()
                    .user_agent(concat!("memledger/", env!("CARGO_PKG_VERSION")))
                    .build()
                    .unwrap_or_default()
            })
            .clone()
    }

    /// Run `fut` to completion on the model runtime: a current-thread runtime whose tasks are the
    /// concurrent calls. Called from inside another tokio runtime, it runs on a helper thread
    /// (a runtime cannot block inside another).
    pub fn block_on<F: Future + Send>(&self, fut: F) -> Result<F::Output, String>
    where
        F::Output: Send,
    {
        let runtime = self
            .runtime
            .get_or_init(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start the model runtime: {e}"))
            })
            .as_ref()
            .map_err(|e| e.clone())?;
        // The calls' spans are children of the span this was called in, on whichever thread.
        let fut = fut.in_current_span();
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(|| runtime.block_on(fut)).join())
                .map_err(|_| "a model call panicked".to_string())
        } else {
            Ok(runtime.block_on(fut))
        }
    }
}

/// The body of a chat completion, as far as memledger reads it.
#[derive(Deserialize)]
struct ChatReply {
    choices: Vec<ChatChoice>,
    /// What the call cost, when the API says (`prompt_tokens`, `completion_tokens`).
    #[serde(default)]
    usage: Option<super::usage::TokenUsage>,
}

#[derive(Deserialize)]
struct ChatChoice {
    message: ChatMessage,
}

#[derive(Deserialize)]
struct ChatMessage {
    content: String,
}

/// The body of an embeddings answer.
#[derive(Deserialize)]
struct EmbeddingsReply {
    data: Vec<EmbeddingItem>,
}

/// One vector; `index` is its text's position (the item's own position when absent).
#[derive(Deserialize)]
struct EmbeddingItem {
    index: Option<usize>,
    embedding: Vec<f32>,
}

/// The body of a rerank answer: `{"results": [...]}`, or a bare list of them (Hugging Face's
/// text-embeddings-inference).
#[derive(Deserialize)]
#[serde(untagged)]
enum RerankReply {
    Results { results: Vec<RerankItem> },
    Bare(Vec<RerankItem>),
}

/// One document's relevance; `index` is its position among the documents sent.
#[derive(Deserialize)]
struct RerankItem {
    index: usize,
    #[serde(alias = "score")]
    relevance_score: f64,
}

/// One POST with retries; the body of a 2xx answer, read as `T`. `shape` says what a body of
/// another shape lacks.
async fn post<T: DeserializeOwned>(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    path: &str,
    body: &serde_json::Value,
    shape: &str,
) -> Result<T, CallError> {
    let url = endpoint.join(path);
    let mut attempt = 0u32;
    loop {
        let result = tokio::time::timeout(endpoint.timeout, async {
            let mut request = client.post(&url).json(body);
            if let Some(key) = &endpoint.api_key {
                request = request.bearer_auth(key);
            }
            let response = request.send().await.map_err(|e| CallError::Connect(Arc::new(e)))?;
            let status = response.status();
            let text = response.text().await.map_err(|e| CallError::Connect(Arc::new(e)))?;
            if !status.is_success() {
                return Err(CallError::Status(status.as_u16(), clip(text.trim(), 200)));
            }
            parse(&text, shape)
        })
        .await
        .unwrap_or(Err(CallError::Timeout(endpoint.timeout)));
        match result {
            Err(e) if e.retryable() && attempt < endpoint.retries => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(100 << attempt.min(4))).await;
            }
            other => return other,
        }
    }
}

/// A model call's span, after the OpenTelemetry GenAI conventions: `{operation} {model}`, the
/// operation, the model, the server; the tokens once the answer says (never a prompt or an
/// answer: they hold memories' texts).
fn model_span(operation: &'static str, endpoint: &Endpoint) -> tracing::Span {
    tracing::info_span!(
        "gen_ai.call",
        otel.name = %format!("{operation} {}", endpoint.model),
        otel.kind = "client",
        gen_ai.operation.name = operation,
        gen_ai.provider.name = "openai",
        gen_ai.request.model = %endpoint.model,
        server.address = %endpoint.host(),
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}

/// Mark a model call's span failed, with the kind of failure (not its text).
fn failed(span: &tracing::Span, e: &CallError) {
    span.record("error.type", e.kind());
    span.record("otel.status_code", "ERROR");
}

/// A 2xx body read as `T`: not JSON, or JSON without `shape`, is malformed.
fn parse<T: DeserializeOwned>(text: &str, shape: &str) -> Result<T, CallError> {
    serde_json::from_str(text).map_err(|e| match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => CallError::Malformed(format!("no {shape} in {}", clip(&value.to_string(), 200))),
        Err(_) => CallError::Malformed(format!("not JSON ({e}): {}", clip(text.trim(), 200))),
    })
}

/// A chat completion: the text of the first choice, and the call's usage (one call; its tokens
/// when the answer has a `usage`).
pub async fn chat(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    system: &str,
    user: &str,
) -> Result<(String, super::usage::TokenUsage), CallError> {
    let body = json!({
        "model": endpoint.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
    });
    const SHAPE: &str = "choices[0].message.content";
    let span = model_span("chat", endpoint);
    let reply: Result<ChatReply, CallError> =
        post(client, endpoint, "chat/completions", &body, SHAPE).instrument(span.clone()).await;
    let reply = reply.inspect_err(|e| failed(&span, e))?;
    let usage = super::usage::TokenUsage { calls: 1, ..reply.usage.unwrap_or_default() };
    span.record("gen_ai.usage.input_tokens", usage.prompt_tokens as i64);
    span.record("gen_ai.usage.output_tokens", usage.completion_tokens as i64);
    reply
        .choices
        .into_iter()
        .next()
        .map(|c| (c.message.content, usage))
        .ok_or_else(|| CallError::Malformed(format!("no {SHAPE} in the answer")))
}

/// Embeddings of `texts`, in order; `input_type`, when given, is sent with them (for servers
/// that apply the model's prompt themselves).
pub async fn embed(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    texts: &[String],
    input_type: Option<&str>,
) -> Result<Vec<Vec<f32>>, CallError> {
    let mut body = json!({ "model": endpoint.model, "input": texts });
    if let Some(side) = input_type {
        body["input_type"] = json!(side);
    }
    let span = model_span("embeddings", endpoint);
    let reply: Result<EmbeddingsReply, CallError> =
        post(client, endpoint, "embeddings", &body, "data array of embeddings").instrument(span.clone()).await;
    let reply = reply.inspect_err(|e| failed(&span, e))?;
    let count = reply.data.len();
    let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
    for (position, item) in reply.data.into_iter().enumerate() {
        let index = item.index.unwrap_or(position);
        match out.get_mut(index) {
            Some(slot) if !item.embedding.is_empty() && item.embedding.iter().all(|x| x.is_finite()) => {
                *slot = Some(item.embedding)
            }
            _ => return Err(CallError::Malformed(format!("bad embedding at index {index}"))),
        }
    }
    out.into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| CallError::Malformed(format!("{count} embeddings for {} texts", texts.len())))
}

/// The relevance of each of `documents` to `query`, in the documents' order: every document
/// must be scored once, with a finite number.
pub async fn rerank(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    query: &str,
    documents: &[String],
) -> Result<Vec<f64>, CallError> {
    let body = json!({
        "model": endpoint.model,
        "query": query,
        "documents": documents,
        // Text-embeddings-inference reads `texts`; the others `documents`.
        "texts": documents,
        "top_n": documents.len(),
        "return_documents": false,
    });
    let span = model_span("rerank", endpoint);
    let reply: Result<RerankReply, CallError> =
        post(client, endpoint, "rerank", &body, "results with index and relevance_score")
            .instrument(span.clone())
            .await;
    let reply = reply.inspect_err(|e| failed(&span, e))?;
    let items = match reply {
        RerankReply::Results { results } => results,
        RerankReply::Bare(items) => items,
    };
    let mut out: Vec<Option<f64>> = vec![None; documents.len()];
    for item in items {
        match out.get_mut(item.index) {
            Some(slot @ None) if item.relevance_score.is_finite() => *slot = Some(item.relevance_score),
            _ => return Err(CallError::Malformed(format!("bad relevance at index {}", item.index))),
        }
    }
    let scored = out.iter().flatten().count();
    out.into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| CallError::Malformed(format!("{scored} relevances for {} documents", documents.len())))
}

/// An error with its causes ("error sending request: … Connection refused").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}
