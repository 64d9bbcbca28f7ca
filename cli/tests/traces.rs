//! Traces over OTLP/HTTP (docs/adr/0039-traces.md), received by a real OTLP/HTTP receiver that
//! decodes each protobuf payload with the OpenTelemetry project's generated messages (PyPI
//! `opentelemetry-proto`, `tests/otlp/receiver.py`): the spans of a command, its save pipeline's
//! stages, recall's stages and its model calls arrive as one trace each, parent and child as
//! they ran, with the GenAI attributes on a model call and never a memory's text.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::models::{json_with_env, with_env};
use crate::support::{self, mock_http, served::Served};

/// How long a span may take to arrive before the test gives up: the CLI sends its spans as it
/// exits, the server within its batch delay (set to 100 ms here).
const GIVE_UP: Duration = Duration::from_secs(60);

/// The receiver, killed when dropped; the spans it printed arrive on `spans`.
struct Receiver {
    child: Child,
    endpoint: String,
    spans: mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    /// Start `tests/otlp/receiver.py` with the test venv's Python; `None` (said) where
    /// `opentelemetry-proto` is not installed, which CI never allows.
    fn start() -> Option<Receiver> {
        let venv = support::python_venv();
        let python = venv.join("bin/python");
        let probe = Command::new(&python).args(["-c", "import opentelemetry.proto"]).output();
        if !probe.as_ref().is_ok_and(|o| o.status.success()) {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the OTLP receiver, but {} cannot import opentelemetry.proto (scripts/setup_tests.sh \
                 installs python/requirements-test.txt)",
                python.display()
            );
            println!("SKIPPED: opentelemetry-proto is not installed in {}", venv.display());
            return None;
        }
        let script = support::manifest_dir().parent().unwrap().join("tests/otlp/receiver.py");
        let mut child = Command::new(&python)
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let (send, spans) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str::<Value>(&line)
                    && send.send(value).is_err()
                {
                    return;
                }
            }
        });
        let first = spans.recv_timeout(GIVE_UP).expect("the receiver says where it listens");
        let port = first["listening"].as_u64().expect("the receiver's first line names its port");
        Some(Receiver { child, endpoint: format!("http://127.0.0.1:{port}"), spans, seen: Vec::new() })
    }

    /// Every span received so far, waiting until one named `name` (with `command` as its
    /// `memledger.command`, for a command's span) has arrived and then for its whole trace: a
    /// trace is whole when each of its spans' parents has arrived.
    fn trace_of(&mut self, name: &str) -> Vec<Value> {
        let deadline = Instant::now() + GIVE_UP;
        loop {
            if let Some(root) = self.seen.iter().find(|s| s["name"] == name) {
                let trace = root["trace_id"].clone();
                let spans: Vec<Value> = self.seen.iter().filter(|s| s["trace_id"] == trace).cloned().collect();
                let ids: Vec<&Value> = spans.iter().map(|s| &s["span_id"]).collect();
                // Whole: every span's parent arrived, but for the root's (none, or the caller's).
                let outside: Vec<&Value> =
                    spans.iter().filter(|s| !ids.contains(&&s["parent_span_id"])).map(|s| &s["span_id"]).collect();
                if outside.len() == 1 {
                    return spans;
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.spans.recv_timeout(left) {
                Ok(span) => {
                    assert!(span.get("error").is_none(), "the receiver could not decode a payload: {span}");
                    self.seen.push(span);
                }
                Err(_) => panic!("no whole trace with a span {name:?} arrived; received: {:#?}", self.seen),
            }
        }
    }
}

/// The spans of one trace by name, each with its parent's name.
fn tree(spans: &[Value]) -> HashMap<String, (String, Value)> {
    let name_of: HashMap<&str, &str> =
        spans.iter().map(|s| (s["span_id"].as_str().unwrap(), s["name"].as_str().unwrap())).collect();
    spans
        .iter()
        .map(|s| {
            let parent = name_of.get(s["parent_span_id"].as_str().unwrap()).copied().unwrap_or("");
            (s["name"].as_str().unwrap().to_string(), (parent.to_string(), s.clone()))
        })
        .collect()
}

/// No attribute of any span holds any of `words` (case-insensitively).
fn assert_no_text(spans: &[Value], words: &[&str]) {
    for span in spans {
        let attributes = span["attributes"].to_string().to_lowercase();
        let name = span["name"].as_str().unwrap().to_lowercase();
        for word in words {
            let word = word.to_lowercase();
            assert!(!attributes.contains(&word) && !name.contains(&word), "span {name} carries {word:?}: {span}");
        }
    }
}

/// The environment of a traced command: the receiver, an embedder, a short batch delay.
fn traced<'a>(endpoint: &'a str, embedder: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ("MEMLEDGER_EMBED_URL", embedder),
        ("MEMLEDGER_EMBED_MODEL", "test-embed"),
    ]
}

/// A vector per text: its words' letters counted, so texts that share words are close.
fn letters(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; 26];
    for c in text.to_ascii_lowercase().bytes().filter(u8::is_ascii_lowercase) {
        v[(c - b'a') as usize] += 1.0;
    }
    v
}

#[test]
fn a_saves_and_a_recalls_spans_arrive_as_they_ran_without_the_text() {
    let Some(mut receiver) = Receiver::start() else { return };
    let embedder = mock_http::embedder_of(letters);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let endpoint = receiver.endpoint.clone();
    let env = traced(&endpoint, &embedder.url);
    json_with_env(d, &env, &["save", "The staging database runs on Postgres 16"]);
    let saved = json_with_env(d, &env, &["save", "The staging database runs on Postgres 17"]);

    let spans = receiver.trace_of("memledger save");
    let t = tree(&spans);
    let (root_parent, command) = &t["memledger save"];
    assert_eq!(root_parent, "", "the command's span is the trace's root: {spans:#?}");
    assert_eq!(command["attributes"]["memledger.command"], "save");
    assert_eq!(command["attributes"]["memledger.principal"], "owner");
    assert_eq!(command["attributes"]["memledger.exit_code"], 0);
    assert_eq!((command["service"].as_str(), command["scope"].as_str()), (Some("memledger"), Some("memledger")));
    assert_eq!(t["memledger.save"].0, "memledger save");
    for stage in ["memledger.save.candidates", "memledger.save.classify", "memledger.save.commit"] {
        assert_eq!(t[stage].0, "memledger.save", "{stage}'s parent: {spans:#?}");
    }
    let save = &t["memledger.save"].1["attributes"];
    assert_eq!(save["memledger.scope"], "personal");
    assert!(["added", "versioned", "conflict"].contains(&save["memledger.outcome"].as_str().unwrap()), "{save}");
    assert!(save["memledger.version"].is_i64() && save["memledger.memory_id"].is_string(), "{save}");
    let candidates = &t["memledger.save.candidates"].1["attributes"]["memledger.candidates"];
    assert!(candidates.is_i64(), "counts are integers: {candidates}");
    let embed = &t["embeddings test-embed"];
    assert_eq!(embed.0, "memledger.save.candidates", "the embedder's call is the candidates stage's: {spans:#?}");
    let gen_ai = &embed.1["attributes"];
    assert_eq!(gen_ai["gen_ai.operation.name"], "embeddings");
    assert_eq!(gen_ai["gen_ai.request.model"], "test-embed");
    assert_eq!(gen_ai["server.address"], "127.0.0.1");
    assert_eq!(embed.1["kind"], 3, "a model call is a client span");
    // Every span in the time of its parent.
    for (parent, span) in t.values().filter(|(p, _)| !p.is_empty()) {
        let p = &t[parent].1;
        assert!(span["start_ns"].as_u64() >= p["start_ns"].as_u64() && span["end_ns"].as_u64() <= p["end_ns"].as_u64());
    }

    let found = json_with_env(d, &env, &["recall", "which Postgres does staging run"]);
    assert_eq!(found["results"][0]["memory_id"], saved["memory_id"]);
    let recall = receiver.trace_of("memledger recall");
    let r = tree(&recall);
    assert_eq!(r["memledger.recall"].0, "memledger recall");
    for stage in ["memledger.recall.lexical", "memledger.recall.cosine"] {
        assert_eq!(r[stage].0, "memledger.recall", "{stage}: {recall:#?}");
    }
    assert_eq!(r["embeddings test-embed"].0, "memledger.recall.cosine");
    assert_eq!(r["memledger.recall"].1["attributes"]["memledger.ranking"], "bm25+cosine");

    let all: Vec<Value> = receiver.seen.clone();
    assert!(all.iter().all(|s| s["content_type"] == "application/x-protobuf"), "OTLP/HTTP with protobuf");
    assert_no_text(&all, &["staging", "database", "Postgres", "which"]);
}

#[test]
fn a_model_call_through_the_server_is_its_commands_child_with_its_tokens() {
    let Some(mut receiver) = Receiver::start() else { return };
    let judge = mock_http::start(|_| {
        mock_http::Reply::Status(
            200,
            json!({
                "choices": [{"message": {"role": "assistant",
                    "content": r#"{"verdict": "keep_new", "reason": "changed last week"}"#}}],
                "usage": {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333},
            })
            .to_string(),
        )
    });
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("store");
    // Two contradicting memories, saved untraced.
    with_env(&dir, &[], &["save", "the billing queue holds 500 jobs"]);
    let opened = json_with_env(&dir, &[], &["save", "the billing queue holds 800 jobs"]);
    assert_eq!(opened["outcome"], "conflict", "{opened}");

    let endpoint = receiver.endpoint.clone();
    let served = served_with(
        &dir,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("MEMLEDGER_LLM_URL", judge.url.as_str()),
            ("MEMLEDGER_LLM_MODEL", "test-judge"),
        ],
    );
    let out = support::memledger(&dir).args(["--json", "conflicts", "auto"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let spans = receiver.trace_of("memledger conflicts_auto");
    let t = tree(&spans);
    let (parent, chat) = &t["chat test-judge"];
    assert_eq!(parent, "memledger conflicts_auto", "the model call is the command's child: {spans:#?}");
    let a = &chat["attributes"];
    assert_eq!(a["gen_ai.operation.name"], "chat");
    assert_eq!(a["gen_ai.request.model"], "test-judge");
    assert_eq!(
        (a["gen_ai.usage.input_tokens"].as_i64(), a["gen_ai.usage.output_tokens"].as_i64()),
        (Some(321), Some(12)),
        "{chat}"
    );
    assert_no_text(&spans, &["billing", "queue", "changed last week"]);
    drop(served);
}

#[test]
fn an_http_request_with_a_traceparent_joins_the_callers_trace() {
    let Some(mut receiver) = Receiver::start() else { return };
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("store");
    let endpoint = receiver.endpoint.clone();
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_BSP_SCHEDULE_DELAY", "100")];
    let served = Served::start_with_env(&dir, true, &[], &env);
    let (trace, caller_span) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let traceparent = format!("00-{trace}-{caller_span}-01");
    let auth = format!("Bearer {}", served.token.as_deref().unwrap());
    let answer = support::served::tcp_request(
        served.port.unwrap(),
        "POST",
        "/v1/memories",
        Some(r#"{"text": "the release train leaves on Wednesdays"}"#),
        &[("authorization", &auth), ("content-type", "application/json"), ("traceparent", &traceparent)],
    )
    .unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let spans = receiver.trace_of("memledger.request");
    let t = tree(&spans);
    let request = &t["memledger.request"].1;
    assert_eq!(request["trace_id"], trace, "the request joins the caller's trace: {spans:#?}");
    assert_eq!(request["parent_span_id"], caller_span);
    assert_eq!(request["kind"], 2, "a server span");
    assert_eq!(t["memledger save"].0, "memledger.request");
    assert_eq!(t["memledger.save"].0, "memledger save");
    assert_no_text(&spans, &["release", "train", "wednesdays"]);
    drop(served);
}

/// `memledger serve` on `dir` with `env` set for the server only.
fn served_with(dir: &Path, env: &[(&str, &str)]) -> Served {
    Served::start_with_env(dir, false, &[], env)
}
