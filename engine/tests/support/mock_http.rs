//! A scripted OpenAI-compatible server on 127.0.0.1 for tests: each request is answered by a
//! closure (a verdict, garbage, an HTTP error, a slow answer, a dropped connection). Nothing
//! leaves the machine.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// How the server answers one request.
pub enum Reply {
    /// A status and a body.
    Status(u16, String),
    /// Wait this long, then answer 200 with the body (past a short client timeout).
    Slow(Duration, String),
    /// Close the connection without a word.
    Hang,
}

/// A chat completion whose first choice says `content`.
pub fn chat(content: &str) -> Reply {
    Reply::Status(200, json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string())
}

/// An embeddings answer.
pub fn embeddings(vectors: &[Vec<f32>]) -> Reply {
    let data: Vec<Value> =
        vectors.iter().enumerate().map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v})).collect();
    Reply::Status(200, json!({"object": "list", "data": data}).to_string())
}

/// An embedder whose vector for each input text is `vector_of(text)`.
pub fn embedder_of(vector_of: impl Fn(&str) -> Vec<f32> + Send + Sync + 'static) -> MockServer {
    start(move |seen| {
        let inputs = seen.body["input"].as_array().expect("an embeddings request lists its inputs");
        let vectors: Vec<Vec<f32>> = inputs.iter().map(|v| vector_of(v.as_str().unwrap())).collect();
        embeddings(&vectors)
    })
}

/// A reranker (`POST …/rerank`) whose relevance of each document to the query is
/// `relevance_of(query, document)`, answered as vLLM, Jina and Cohere do
/// (`{"results": [{"index", "relevance_score"}]}`, best first).
pub fn reranker_of(relevance_of: impl Fn(&str, &str) -> f64 + Send + Sync + 'static) -> MockServer {
    scored_reranker(false, relevance_of)
}

/// [`reranker_of`] answered as text-embeddings-inference does: a bare list of `{"index", "score"}`.
pub fn bare_reranker_of(relevance_of: impl Fn(&str, &str) -> f64 + Send + Sync + 'static) -> MockServer {
    scored_reranker(true, relevance_of)
}

fn scored_reranker(bare: bool, relevance_of: impl Fn(&str, &str) -> f64 + Send + Sync + 'static) -> MockServer {
    start(move |seen| {
        assert!(seen.path.ends_with("/rerank"), "a rerank request: {}", seen.path);
        let query = seen.body["query"].as_str().expect("a rerank request has a query");
        let documents = seen.body["documents"].as_array().expect("a rerank request lists its documents");
        let mut scored: Vec<(usize, f64)> =
            documents.iter().enumerate().map(|(i, d)| (i, relevance_of(query, d.as_str().unwrap()))).collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        let key = if bare { "score" } else { "relevance_score" };
        let items: Vec<Value> = scored.iter().map(|(i, r)| json!({"index": i, key: r})).collect();
        let body = if bare { Value::Array(items) } else { json!({"id": "rerank", "results": items}) };
        Reply::Status(200, body.to_string())
    })
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

impl Seen {
    /// The user message of a chat request.
    pub fn user_message(&self) -> String {
        self.body.pointer("/messages/1/content").and_then(Value::as_str).unwrap_or_default().to_string()
    }
}

pub struct MockServer {
    /// The base URL, ending in `/v1`.
    pub url: String,
    hits: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl MockServer {
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

type Script = dyn Fn(&Seen) -> Reply + Send + Sync;

/// Start a server answering each request with `script`. It lives until the test process ends.
pub fn start(script: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> MockServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let script: Arc<Script> = Arc::new(script);
    let (h, s) = (hits.clone(), seen.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (h, s, script) = (h.clone(), s.clone(), script.clone());
            std::thread::spawn(move || serve(stream, &h, &s, &*script));
        }
    });
    MockServer { url, hits, seen }
}

fn serve(mut stream: TcpStream, hits: &AtomicUsize, seen: &Mutex<Vec<Seen>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or_default().to_string();
    let (mut length, mut authorization) = (0usize, None);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "authorization" => authorization = Some(value.trim().to_string()),
                _ => {}
            }
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request = Seen { path, authorization, body: serde_json::from_slice(&body).unwrap_or(Value::Null) };
    seen.lock().unwrap().push(request.clone());
    hits.fetch_add(1, Ordering::SeqCst);
    let (status, body) = match script(&request) {
        Reply::Status(status, body) => (status, body),
        Reply::Slow(wait, body) => {
            std::thread::sleep(wait);
            (200, body)
        }
        Reply::Hang => return,
    };
    let response = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.flush();
}

/// A base URL where nothing listens (a port bound and released).
pub fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    url
}
