//! `conflicts auto` and `conflicts scan` end to end, with the model configured through the
//! environment and answered by a scripted server on 127.0.0.1.

#[path = "../../engine/tests/support/mock_http.rs"]
mod mock_http;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const MODEL_VARS: &[&str] = &[
    "MEMLEDGER_LLM_URL",
    "MEMLEDGER_LLM_MODEL",
    "MEMLEDGER_LLM_API_KEY",
    "MEMLEDGER_EMBED_URL",
    "MEMLEDGER_EMBED_MODEL",
    "MEMLEDGER_EMBED_API_KEY",
    "MEMLEDGER_MODEL_TIMEOUT",
    "MEMLEDGER_MODEL_RETRIES",
    "OPENROUTER_API_KEY",
    "OPENAI_API_KEY",
];

fn run(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memledger"));
    cmd.arg("--dir").arg(dir).arg("--actor").arg("cli:test").args(args).env_remove("MEMLEDGER_DIR");
    for v in MODEL_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

fn json(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = run(dir, env, &full);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn conflicts_auto_needs_a_model() {
    let dir = tempfile::tempdir().unwrap();
    json(dir.path(), &[], &["save", "the staging database port is 5432"]);
    let out = run(dir.path(), &[], &["conflicts", "auto"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MEMLEDGER_LLM_URL"));
}

#[test]
fn conflicts_auto_resolves_by_the_judge_and_revert_undoes_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    json(d, &[], &["save", "the staging database port is 5432"]);
    let c = json(d, &[], &["save", "the staging database port is 5433"]);
    assert_eq!(c["outcome"], "conflict");
    let server = mock_http::start(|_| mock_http::chat(r#"{"verdict": "keep_new", "reason": "changed last week"}"#));
    let env = [("MEMLEDGER_LLM_URL", server.url.as_str()), ("MEMLEDGER_LLM_MODEL", "judge-1"), ("OPENAI_API_KEY", "k")];

    let dry = json(d, &env, &["conflicts", "auto", "--dry-run"]);
    assert_eq!(dry["conflicts"][0]["outcome"], "would_resolve");
    let report = json(d, &env, &["conflicts", "auto"]);
    assert_eq!(report["by"], "judge:judge-1");
    let item = &report["conflicts"][0];
    assert_eq!((&item["verdict"], &item["outcome"]), (&Value::from("keep_new"), &Value::from("resolved")));
    assert_eq!(item["conflict_id"], c["conflict_id"]);
    assert_eq!(server.seen()[0].authorization.as_deref(), Some("Bearer k"));

    let cid = c["conflict_id"].as_str().unwrap();
    let shown = json(d, &[], &["conflicts", "show", cid]);
    assert_eq!(shown["resolution"]["by"], "judge:judge-1");
    assert_eq!(shown["resolution"]["rationale"], "changed last week");
    json(d, &[], &["conflicts", "revert", cid]);
    assert_eq!(json(d, &[], &["conflicts", "show", cid])["status"], "pending");
}

#[test]
fn conflicts_scan_works_offline_and_why_shows_a_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = json(d, &[], &["save", "--no-dedup", "the staging database port is 5432"]);
    let b = json(d, &[], &["save", "--no-dedup", "the staging database port is 5433"]);
    let dry = json(d, &[], &["conflicts", "scan", "--dry-run"]);
    assert_eq!((&dry["detected"], &dry["opened"]), (&Value::from(1), &Value::from(0)));
    let scan = json(d, &[], &["conflicts", "scan", "--max-pairs", "10", "--min-confidence", "0.5"]);
    assert_eq!(scan["opened"], 1);
    assert_eq!(scan["pairs"][0]["outcome"], "opened");
    let out = run(d, &[], &["conflicts", "scan", "--min-confidence", "2"]);
    assert_eq!(out.status.code(), Some(2));

    // A model that is down: the save still succeeds, and why shows the fallback.
    let closed = mock_http::closed_port();
    let env = [("MEMLEDGER_LLM_URL", closed.as_str()), ("MEMLEDGER_LLM_MODEL", "m"), ("MEMLEDGER_MODEL_RETRIES", "0")];
    let c = json(d, &env, &["save", "the staging database port is 5434"]);
    let id = c["memory_id"].as_str().unwrap();
    let why = json(d, &[], &["why", id, a["memory_id"].as_str().unwrap()]);
    let decision = &why["decisions"][0];
    assert_eq!(decision["method"], "lexical");
    assert!(decision["model"]["error"].as_str().unwrap().contains("connection failed"), "{decision}");
    let human = run(d, &[], &["why", id, b["memory_id"].as_str().unwrap()]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("model m: not used"));
}
