//! `conflicts auto` and `conflicts scan` end to end, with the model configured through the
//! environment and answered by a scripted server on 127.0.0.1.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::{self, mock_http};

/// Every environment variable the model settings are read from.
pub(crate) const MODEL_VARS: &[&str] = &[
    "MEMLEDGER_LLM_URL",
    "MEMLEDGER_LLM_MODEL",
    "MEMLEDGER_LLM_API_KEY",
    "MEMLEDGER_EMBED_URL",
    "MEMLEDGER_EMBED_MODEL",
    "MEMLEDGER_EMBED_API_KEY",
    "MEMLEDGER_RERANK_URL",
    "MEMLEDGER_RERANK_MODEL",
    "MEMLEDGER_RERANK_API_KEY",
    "MEMLEDGER_MODEL_TIMEOUT",
    "MEMLEDGER_MODEL_RETRIES",
    "OPENROUTER_API_KEY",
    "OPENAI_API_KEY",
];

/// `memledger --actor cli:test ARGS…` with no model settings from the environment but `env`.
pub(crate) fn with_env(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = support::memledger(dir);
    cmd.arg("--actor").arg("cli:test").args(args);
    for v in MODEL_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied()).output().unwrap()
}

/// [`with_env`] with `--json`, which must succeed: its one JSON value.
pub(crate) fn json_with_env(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Value {
    let out = with_env(dir, env, &[&["--json"], args].concat());
    support::value(&out, args)
}

#[test]
fn conflicts_auto_needs_a_model() {
    let dir = tempfile::tempdir().unwrap();
    json_with_env(dir.path(), &[], &["save", "the staging database port is 5432"]);
    let out = with_env(dir.path(), &[], &["conflicts", "auto"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MEMLEDGER_LLM_URL"));
}

#[test]
fn conflicts_auto_resolves_by_the_judge_and_revert_undoes_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    json_with_env(d, &[], &["save", "the staging database port is 5432"]);
    let c = json_with_env(d, &[], &["save", "the staging database port is 5433"]);
    assert_eq!(c["outcome"], "conflict");
    let server = mock_http::start(|_| mock_http::chat(r#"{"verdict": "keep_new", "reason": "changed last week"}"#));
    let env = [("MEMLEDGER_LLM_URL", server.url.as_str()), ("MEMLEDGER_LLM_MODEL", "judge-1"), ("OPENAI_API_KEY", "k")];

    let dry = json_with_env(d, &env, &["conflicts", "auto", "--dry-run"]);
    assert_eq!(dry["conflicts"][0]["outcome"], "would_resolve");
    let report = json_with_env(d, &env, &["conflicts", "auto"]);
    assert_eq!(report["by"], "judge:judge-1");
    let item = &report["conflicts"][0];
    assert_eq!((&item["verdict"], &item["outcome"]), (&Value::from("keep_new"), &Value::from("resolved")));
    assert_eq!(item["conflict_id"], c["conflict_id"]);
    assert_eq!(server.seen()[0].authorization.as_deref(), Some("Bearer k"));

    let cid = c["conflict_id"].as_str().unwrap();
    let shown = json_with_env(d, &[], &["conflicts", "show", cid]);
    assert_eq!(shown["resolution"]["by"], "judge:judge-1");
    assert_eq!(shown["resolution"]["rationale"], "changed last week");
    json_with_env(d, &[], &["conflicts", "revert", cid]);
    assert_eq!(json_with_env(d, &[], &["conflicts", "show", cid])["status"], "pending");
}

#[test]
fn conflicts_scan_works_offline_and_why_shows_a_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = json_with_env(d, &[], &["save", "--no-dedup", "the staging database port is 5432"]);
    let b = json_with_env(d, &[], &["save", "--no-dedup", "the staging database port is 5433"]);
    let dry = json_with_env(d, &[], &["conflicts", "scan", "--dry-run"]);
    assert_eq!((&dry["detected"], &dry["opened"]), (&Value::from(1), &Value::from(0)));
    let scan = json_with_env(d, &[], &["conflicts", "scan", "--max-pairs", "10", "--min-confidence", "0.5"]);
    assert_eq!(scan["opened"], 1);
    assert_eq!(scan["pairs"][0]["outcome"], "opened");
    let out = with_env(d, &[], &["conflicts", "scan", "--min-confidence", "2"]);
    assert_eq!(out.status.code(), Some(2));

    // A model that is down: the save still succeeds, and why shows the fallback.
    let closed = mock_http::closed_port();
    let env = [("MEMLEDGER_LLM_URL", closed.as_str()), ("MEMLEDGER_LLM_MODEL", "m"), ("MEMLEDGER_MODEL_RETRIES", "0")];
    let c = json_with_env(d, &env, &["save", "the staging database port is 5434"]);
    let id = c["memory_id"].as_str().unwrap();
    let why = json_with_env(d, &[], &["why", id, a["memory_id"].as_str().unwrap()]);
    let decision = &why["decisions"][0];
    assert_eq!(decision["method"], "lexical");
    assert!(decision["model"]["error"].as_str().unwrap().contains("connection failed"), "{decision}");
    let human = with_env(d, &[], &["why", id, b["memory_id"].as_str().unwrap()]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("model m: not used"));
}

/// Fixed vectors: the paraphrase and the fact point the same way, everything else elsewhere.
fn embedder() -> mock_http::MockServer {
    mock_http::embedder_of(|text| match text {
        "which relational engine holds company data?" => vec![1.0, 0.0],
        "our primary datastore is postgres" => vec![0.95, 0.05],
        _ => vec![0.0, 1.0],
    })
}

#[test]
fn embed_embeds_what_is_missing_and_recall_fuses_cosine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    json_with_env(d, &[], &["save", "our primary datastore is postgres"]);
    json_with_env(d, &[], &["save", "the office closes at six"]);

    // No embedder: a clear message and exit 2.
    let out = with_env(d, &[], &["embed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MEMLEDGER_EMBED_URL"));

    let server = embedder();
    let env = [("MEMLEDGER_EMBED_URL", server.url.as_str()), ("MEMLEDGER_EMBED_MODEL", "fixed-embed")];
    let query = "which relational engine holds company data?";
    // Memories saved before the embedder have no vectors: recall stays BM25 and calls nothing.
    let r = json_with_env(d, &env, &["recall", query]);
    assert_eq!((&r["ranking"], r["results"].as_array().unwrap().len()), (&Value::from("bm25"), 0));
    assert_eq!(server.hits(), 0);

    let dry = json_with_env(d, &env, &["embed", "--dry-run"]);
    assert_eq!(
        (&dry["dry_run"], &dry["missing"], &dry["texts"], &dry["embedded"]),
        (&Value::from(true), &Value::from(2), &Value::from(2), &Value::from(0))
    );
    assert_eq!(server.hits(), 0, "a dry run calls nothing");
    let done = json_with_env(d, &env, &["embed"]);
    assert_eq!(
        (&done["model"], &done["active"], &done["embedded"]),
        (&Value::from("fixed-embed"), &Value::from(2), &Value::from(2))
    );
    assert_eq!(json_with_env(d, &env, &["embed"])["embedded"], 0, "nothing left");
    let human = with_env(d, &env, &["embed"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("embedded 0 text(s) with fixed-embed"));

    let r = json_with_env(d, &env, &["recall", query]);
    assert_eq!(r["ranking"], "bm25+cosine");
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{r}");
    assert_eq!(results[0]["text"], "our primary datastore is postgres");
    assert_eq!((&results[0]["bm25"], &r["notice"], &r["embedding_error"]), (&Value::Null, &Value::Null, &Value::Null));
    assert!(results[0]["cosine"].as_f64().unwrap() > 0.9);
    assert!(results[0]["conflicts_with"].as_array().unwrap().is_empty());

    // The embedder down: BM25 alone, exit 0.
    let closed = mock_http::closed_port();
    let down = [
        ("MEMLEDGER_EMBED_URL", closed.as_str()),
        ("MEMLEDGER_EMBED_MODEL", "fixed-embed"),
        ("MEMLEDGER_MODEL_RETRIES", "0"),
    ];
    let r = json_with_env(d, &down, &["recall", "postgres"]);
    assert_eq!(
        (&r["ranking"], &r["results"][0]["text"]),
        (&Value::from("bm25"), &Value::from("our primary datastore is postgres"))
    );
    assert!(r["embedding_error"].as_str().unwrap().contains("failed"));
    // And a failing `embed` is an error (exit 1), not a silent success.
    json_with_env(d, &[], &["save", "a third memory to embed"]);
    assert_eq!(with_env(d, &down, &["embed"]).status.code(), Some(1));
}

#[test]
fn recall_is_reranked_by_a_reranker_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for text in
        ["our primary datastore is postgres", "postgres backups run nightly", "a postgres replica serves reports"]
    {
        json_with_env(d, &[], &["save", text]);
    }
    let server = mock_http::reranker_of(|_, text| if text.contains("replica") { 0.875 } else { 0.125 });
    let env = [("MEMLEDGER_RERANK_URL", server.url.as_str()), ("MEMLEDGER_RERANK_MODEL", "test-rerank")];
    let r = json_with_env(d, &env, &["recall", "which postgres copy serves reports"]);
    assert_eq!((&r["ranking"], &r["rerank_error"]), (&Value::from("bm25+rerank"), &Value::Null), "{r}");
    assert_eq!(r["results"][0]["text"], "a postgres replica serves reports");
    assert_eq!(r["results"][0]["rerank"], 0.875);
    assert!(r["results"][0]["bm25"].as_f64().is_some(), "the first ranking's scores stay: {r}");
    // Printed: the relevance the results are ordered by.
    let human = with_env(d, &env, &["recall", "postgres"]);
    let first = String::from_utf8_lossy(&human.stdout).lines().next().unwrap_or_default().to_string();
    assert!(first.contains("0.875") && first.contains("replica"), "{first}");

    // Down: the first ranking, exit 0, and a note saying why.
    let closed = mock_http::closed_port();
    let down = [
        ("MEMLEDGER_RERANK_URL", closed.as_str()),
        ("MEMLEDGER_RERANK_MODEL", "test-rerank"),
        ("MEMLEDGER_MODEL_RETRIES", "0"),
    ];
    let out = with_env(d, &down, &["recall", "postgres"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reranker test-rerank failed"));
    let r = json_with_env(d, &down, &["recall", "postgres"]);
    assert_eq!(r["ranking"], "bm25");
    assert!(r["results"].as_array().unwrap().iter().all(|h| h["rerank"].is_null()));
}

#[test]
fn classify_reports_the_cosine_and_gates_identical() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ("our primary datastore is postgres", "our primary datastore is postgres too");
    let lexical = json_with_env(dir.path(), &[], &["classify", a, b]);
    let server = embedder();
    let env = [("MEMLEDGER_EMBED_URL", server.url.as_str()), ("MEMLEDGER_EMBED_MODEL", "fixed-embed")];
    let gated = json_with_env(dir.path(), &env, &["classify", a, b]);
    let cos = gated["scores"].as_array().unwrap().iter().find(|s| s[0] == "cosine").unwrap()[1].as_f64().unwrap();
    assert!(cos < 0.5, "{gated}");
    assert_eq!((&lexical["relation"], &lexical["gate"]), (&Value::from("identical"), &Value::from("merge_band")));
    assert_eq!(
        (&gated["relation"], &gated["gate"]),
        (&Value::from("complementary"), &Value::from("cosine_below_identical"))
    );
    let pairs = dir.path().join("pairs.jsonl");
    std::fs::write(&pairs, format!("{}\n", serde_json::json!({"id": 1, "a": a, "b": b}))).unwrap();
    let out = with_env(dir.path(), &env, &["--json", "classify", "--pairs", pairs.to_str().unwrap()]);
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!((line["cosine"].as_f64().unwrap() - cos).abs() < 1e-9);
    assert_eq!(server.hits(), 2, "one request per command: the texts go together");
    // A configured embedder that fails is an error for classify: figures must not silently be lexical.
    let closed = mock_http::closed_port();
    let down =
        [("MEMLEDGER_EMBED_URL", closed.as_str()), ("MEMLEDGER_EMBED_MODEL", "e"), ("MEMLEDGER_MODEL_RETRIES", "0")];
    assert_eq!(with_env(dir.path(), &down, &["classify", a, b]).status.code(), Some(1));
}

/// Two enrichments of one version, end to end: linked in `save`, `show` and `recall`, and the
/// model's merged text proposed through the queue, accepted with the command `conflicts show`
/// prints.
#[test]
fn co_enrichments_are_recalled_together_and_their_proposed_merge_is_accepted_by_hand() {
    const MERGED: &str = "Ana works at Acme in Lisbon as a data engineer";
    let server = mock_http::start(|seen| {
        let system = seen.body.pointer("/messages/0/content").and_then(Value::as_str).unwrap_or_default();
        if system.starts_with("You merge") {
            mock_http::chat(&format!(r#"{{"text": "{MERGED}", "reason": "keeps both"}}"#))
        } else {
            mock_http::chat(r#"{"relation": "identical", "reason": "scripted"}"#)
        }
    });
    let env = [("MEMLEDGER_LLM_URL", server.url.as_str()), ("MEMLEDGER_LLM_MODEL", "merger-1")];
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    json_with_env(d, &env, &["save", "Ana works at Acme"]);
    let role = json_with_env(d, &env, &["save", "Ana works at Acme as a data engineer"]);
    assert_eq!(role["outcome"], "versioned");
    let city = json_with_env(d, &env, &["save", "Ana works at Acme in Lisbon"]);
    assert_eq!(city["outcome"], "added");
    assert_eq!(city["co_enriches"][0], role["memory_id"]);
    let cid = city["merge_proposal"].as_str().expect("a proposal").to_string();

    let shown = json_with_env(d, &[], &["show", city["memory_id"].as_str().unwrap()]);
    assert_eq!(shown["co_enriches"][0], role["memory_id"]);
    let found = json_with_env(d, &[], &["recall", "where is Ana based", "--limit", "1"]);
    let hit = &found["results"][0];
    assert_eq!(hit["memory_id"], city["memory_id"]);
    assert_eq!(hit["co_enrichments"][0]["memory_id"], role["memory_id"]);
    assert_eq!(found["notice"], Value::Null);
    let human = String::from_utf8(with_env(d, &[], &["recall", "where is Ana based", "--limit", "1"]).stdout).unwrap();
    assert!(human.contains("with ") && human.contains("data engineer"), "{human}");

    let c = json_with_env(d, &[], &["conflicts", "show", &cid]);
    assert_eq!((&c["kind"], &c["proposal"]["text"]), (&Value::from("merge_proposal"), &Value::from(MERGED)));
    let human = String::from_utf8(with_env(d, &[], &["conflicts", "show", &cid]).stdout).unwrap();
    let accept = format!("memledger conflicts resolve {} --merge '{MERGED}'", &cid[..12]);
    assert!(human.contains(&accept), "{human}");
    let r = json_with_env(d, &[], &["conflicts", "resolve", &cid, "--merge", MERGED]);
    assert_eq!(r["status"], "resolved");
    let found = json_with_env(d, &[], &["recall", "where does Ana work"]);
    assert_eq!(found["results"].as_array().unwrap().len(), 1);
    assert_eq!(found["results"][0]["text"], MERGED);
    assert_eq!(json_with_env(d, &[], &["verify"])["views_consistent"], true);
}
