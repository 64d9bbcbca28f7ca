//! OpenAI-compatible HTTP calls: `POST {base}/chat/completions` and `POST {base}/embeddings`,
//! with a per-attempt timeout and a bounded retry of quick failures.
//!
//! Every failure is a value ([`CallError`]) that the caller records and falls back from; nothing
//! here panics or blocks past its timeout.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

use super::config::Endpoint;

/// Why a model call gave no usable answer. The text goes into `ModelVerdict.error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// Nothing listens there, or the connection broke before an answer.
    Connect(String),
    /// No complete answer within the timeout.
    Timeout(Duration),
    /// The server answered with an error status.
    Status(u16, String),
    /// The server answered 200 but not in the OpenAI shape.
    Malformed(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Connect(e) => write!(f, "connection failed: {e}"),
            CallError::Timeout(t) => write!(f, "timed out after {:.1}s", t.as_secs_f64()),
            CallError::Status(s, body) => write!(f, "HTTP {s}: {body}"),
            CallError::Malformed(e) => write!(f, "malformed answer: {e}"),
        }
    }
}

impl CallError {
    /// Worth another attempt: quick failures only, never a timeout (that would double the wait).
    fn retryable(&self) -> bool {
        match self {
            CallError::Connect(_) => true,
            CallError::Status(s, _) => *s == 429 || *s >= 500,
            CallError::Timeout(_) | CallError::Malformed(_) => false,
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
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(|| runtime.block_on(fut)).join())
                .map_err(|_| "a model call panicked".to_string())
        } else {
            Ok(runtime.block_on(fut))
        }
    }
}

/// One POST with retries; the parsed JSON body of a 2xx answer.
async fn post_json(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    path: &str,
    body: &Value,
) -> Result<Value, CallError> {
    let url = endpoint.join(path);
    let mut attempt = 0u32;
    loop {
        let result = tokio::time::timeout(endpoint.timeout, async {
            let mut request = client.post(&url).json(body);
            if let Some(key) = &endpoint.api_key {
                request = request.bearer_auth(key);
            }
            let response = request.send().await.map_err(|e| CallError::Connect(error_chain(&e)))?;
            let status = response.status();
            let text = response.text().await.map_err(|e| CallError::Connect(error_chain(&e)))?;
            if !status.is_success() {
                return Err(CallError::Status(status.as_u16(), clip(text.trim(), 200)));
            }
            serde_json::from_str::<Value>(&text)
                .map_err(|e| CallError::Malformed(format!("not JSON ({e}): {}", clip(text.trim(), 200))))
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

/// A chat completion: the text of the first choice.
pub async fn chat(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    system: &str,
    user: &str,
) -> Result<String, CallError> {
    let body = json!({
        "model": endpoint.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
    });
    let answer = post_json(client, endpoint, "chat/completions", &body).await?;
    answer.pointer("/choices/0/message/content").and_then(Value::as_str).map(str::to_string).ok_or_else(|| {
        CallError::Malformed(format!("no choices[0].message.content in {}", clip(&answer.to_string(), 200)))
    })
}

/// Embeddings of `texts`, in order.
pub async fn embed(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    texts: &[String],
) -> Result<Vec<Vec<f32>>, CallError> {
    let body = json!({ "model": endpoint.model, "input": texts });
    let answer = post_json(client, endpoint, "embeddings", &body).await?;
    let data =
        answer.get("data").and_then(Value::as_array).ok_or_else(|| CallError::Malformed("no data array".into()))?;
    let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
    for (position, item) in data.iter().enumerate() {
        let index = item.get("index").and_then(Value::as_u64).map_or(position, |i| i as usize);
        let vector: Option<Vec<f32>> = item
            .get("embedding")
            .and_then(Value::as_array)
            .and_then(|v| v.iter().map(|x| x.as_f64().map(|f| f as f32)).collect());
        match (out.get_mut(index), vector) {
            (Some(slot), Some(v)) if !v.is_empty() && v.iter().all(|x| x.is_finite()) => *slot = Some(v),
            _ => return Err(CallError::Malformed(format!("bad embedding at index {index}"))),
        }
    }
    out.into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| CallError::Malformed(format!("{} embeddings for {} texts", data.len(), texts.len())))
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
