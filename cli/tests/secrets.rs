//! Secrets kept out (docs/privacy.md): a save, a line of `save --from`, an import, an HTTP save
//! and an MCP save whose text holds a credential is refused with exit 2 (422 over HTTP, a tool
//! error over MCP), naming the rule and never the secret, and nothing is written; with
//! `--allow-secret` (`allow_secret`) it is saved. Look-alikes save as ever.

use std::path::Path;

use serde_json::{Value, json};

use crate::erase::files_holding;
use crate::support::served::Served;
use crate::support::{self, code, run, run_stdin};

/// Credential-shaped samples, each with the rule that must name it; put together from parts so
/// that no whole credential sits in this file. The unit table in engine/src/secrets.rs covers
/// every rule; these go through the command line.
fn samples() -> Vec<(String, String, &'static str)> {
    let parts = [
        (["the deploy key is ", "AKIA", "IOSFODNN7EXAMPLE"], "aws-access-token"),
        (["ci token ", "ghp_", "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"], "github-token"),
        (["billing uses ", "sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"], "stripe-access-token"),
        (["the db is postgres://app:", "hunter2", "@db.internal:5432/app"], "password-in-url"),
        (["call it with ", "Bearer ", "mF_9.B5f-4.1JqM7hZxQ2pLr8Vt3Kw"], "bearer-token"),
    ];
    parts.iter().map(|(p, rule)| (p.concat(), p[1..].concat(), *rule)).collect()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn a_save_holding_a_credential_is_refused_names_the_rule_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = &tmp.path().join("store");
    for (text, secret, rule) in samples() {
        let out = run(d, &["save", &text]);
        assert_eq!(code(&out), 2, "{rule}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(rule) && err.contains("--allow-secret"), "{rule}: {err}");
        assert!(!err.contains(&secret), "the message never holds the secret: {err}");
        assert!(!d.exists(), "a refused save creates no store");
    }
    // The look-alikes the rules must leave alone save as ever.
    for text in [
        "fixed in 3f2c9a1e8b7d6c5a4f3e2d1c0b9a8f7e6d5c4b3a, see the PR",
        "the request id was 123e4567-e89b-12d3-a456-426614174000",
        "my password manager is 1Password",
        "the docs are at https://docs.example.com/guide?page=2",
    ] {
        assert_eq!(support::json(d, &["save", text])["outcome"], "added", "{text}");
    }
    let events = support::json(d, &["stats"])["events"].as_u64().unwrap();
    // A secret inside <private> never reaches the store, so the save goes through.
    let (text, secret, _) = &samples()[1];
    let private = text.replace(secret, &format!("<private>{secret}</private>"));
    assert_eq!(support::json(d, &["save", &private])["outcome"], "added");
    assert!(files_holding(d, secret).is_empty(), "the private span is not stored");
    // On purpose: stored.
    let (text, secret, _) = &samples()[0];
    let saved = support::json(d, &["save", "--allow-secret", text]);
    assert_eq!(saved["outcome"], "added", "{saved}");
    assert_eq!(support::json(d, &["show", saved["memory_id"].as_str().unwrap()])["text"], text.as_str());
    assert!(!files_holding(d, secret).is_empty());
    // Two saves, each its observation and its decision (beside a classification per memory of the
    // scope it was compared with).
    let log = support::json_lines(d, &["log", "--since", &(events + 1).to_string()]);
    let count = |kind: &str| log.iter().filter(|e| e["type"] == kind).count();
    assert_eq!((count("memory_observed"), count("belief_added")), (2, 2), "{log:?}");
    assert_eq!(log.len(), 4 + count("pair_classified"), "{log:?}");
}

#[test]
fn save_from_refuses_the_lines_holding_credentials_by_number_and_saves_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let d = &tmp.path().join("store");
    let (bad, secret, rule) = samples().remove(1);
    let (allowed, _, _) = samples().remove(2);
    let lines = [
        json!({"text": "the staging db runs on Postgres 16"}),
        json!({"text": bad}),
        json!({"text": "prefers pnpm over npm"}),
        json!({"text": allowed, "allow_secret": true}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = run_stdin(d, &["--json", "save", "--from", "-"], input.as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let answers: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert_eq!(answers[1]["line"], 2, "{answers:?}");
    let message = answers[1]["error"].as_str().unwrap();
    assert!(message.contains(rule) && !message.contains(&secret), "{message}");
    for i in [0, 2, 3] {
        assert_eq!(answers[i]["outcome"], "added", "line {}: {answers:?}", i + 1);
    }
    assert!(files_holding(d, &secret).is_empty(), "the refused line wrote nothing");
    // --allow-secret lets every line through.
    let again =
        run_stdin(d, &["--json", "save", "--from", "-", "--allow-secret"], format!("{}\n", lines[1]).as_bytes());
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!files_holding(d, &secret).is_empty());
}

#[test]
fn an_update_or_a_merged_text_holding_a_credential_is_refused_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = &tmp.path().join("store");
    let (bad, secret, rule) = samples().remove(3);
    let a = support::json(d, &["save", "the staging db is on db.internal"])["memory_id"].as_str().unwrap().to_string();
    let b = support::json(d, &["save", "prefers pnpm over npm"])["memory_id"].as_str().unwrap().to_string();
    let cid = support::json(d, &["conflicts", "open", &a, &b])["conflict_id"].as_str().unwrap().to_string();
    let events = support::json(d, &["stats"])["events"].as_u64().unwrap();
    for args in
        [vec!["update", a.as_str(), bad.as_str()], vec!["conflicts", "resolve", cid.as_str(), "--merge", bad.as_str()]]
    {
        let out = run(d, &args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(rule) && !err.contains(&secret), "{args:?}: {err}");
    }
    assert_eq!(support::json(d, &["stats"])["events"].as_u64().unwrap(), events, "nothing written");
    assert!(files_holding(d, &secret).is_empty());
}

/// A store holding a credential saved on purpose, exported: (the stream, the secret, its rule).
fn exported_with_a_secret(tmp: &Path) -> (Vec<u8>, String, &'static str) {
    let src = &tmp.join("src");
    let (text, secret, rule) = samples().remove(3);
    support::json(src, &["save", "the staging db runs on Postgres 16"]);
    support::json(src, &["save", "--allow-secret", &text]);
    let out = run(src, &["export"]);
    assert!(out.status.success(), "{}", stderr(&out));
    (out.stdout, secret, rule)
}

#[test]
fn an_import_holding_credentials_is_refused_whole_with_its_lines_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (stream, secret, rule) = exported_with_a_secret(tmp.path());
    let dst = &tmp.path().join("dst");
    let out = run_stdin(dst, &["import", "-"], &stream);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    let line = String::from_utf8_lossy(&stream).lines().position(|l| l.contains(&secret)).unwrap() + 1;
    assert!(err.contains(&format!("line {line}: ")) && err.contains(rule), "{err}");
    assert!(!err.contains(&secret) && err.contains("--allow-secret"), "{err}");
    assert!(!dst.exists(), "a refused import creates no store");
    let out = run_stdin(dst, &["--json", "import", "-", "--allow-secret"], &stream);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(support::json(dst, &["verify"])["ok"], true);
}

/// A problem document's detail: it names the rule and never the secret.
fn assert_refusal(answer: &support::served::Response, secret: &str, rule: &str) {
    assert_eq!(answer.status, 422, "{}", answer.body);
    let problem: Value = answer.json();
    let detail = problem["detail"].as_str().unwrap();
    assert_eq!(problem["exit_code"], 2, "{problem}");
    assert!(detail.contains(rule) && !answer.body.contains(secret), "{problem}");
}

#[test]
fn http_saves_and_imports_holding_credentials_are_refused_through_a_server() {
    let tmp = tempfile::tempdir().unwrap();
    let (stream, stream_secret, stream_rule) = exported_with_a_secret(tmp.path());
    let d = &tmp.path().join("store");
    support::json(d, &["save", "the staging db runs on Postgres 16"]);
    let served = Served::start(d, true);
    let (text, secret, rule) = samples().remove(4);
    let before = served.http("GET", "/v1/stats", None).json()["events"].as_u64().unwrap();
    assert_refusal(&served.http("POST", "/v1/memories", Some(&json!({"text": text}).to_string())), &secret, rule);
    // The CLI's save goes through the server, refused the same way.
    let out = run(d, &["save", &text]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains(rule) && !stderr(&out).contains(&secret), "{}", stderr(&out));
    let out = run_stdin(d, &["--json", "save", "--from", "-"], format!("{}\n", json!({"text": text})).as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"line\":1"), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(served.http("GET", "/v1/stats", None).json()["events"].as_u64().unwrap(), before, "nothing written");
    let body = String::from_utf8(stream.clone()).unwrap();
    assert_refusal(&served.http("POST", "/v1/import", Some(&body)), &stream_secret, stream_rule);
    assert_eq!(served.http("GET", "/v1/stats", None).json()["events"].as_u64().unwrap(), before, "nothing imported");

    let saved = served.http("POST", "/v1/memories", Some(&json!({"text": text, "allow_secret": true}).to_string()));
    assert_eq!(saved.status, 200, "{}", saved.body);
    assert_eq!(saved.json()["outcome"], "added");
    drop(served);
    // Through a server, `import --allow-secret` reaches it as the query parameter. The stream
    // comes from another store, so it goes into an empty one.
    let fresh = &tmp.path().join("fresh");
    std::fs::create_dir_all(fresh).unwrap();
    let served = Served::start(fresh, false);
    let out = run_stdin(fresh, &["import", "-"], &stream);
    assert_eq!(code(&out), 2, "refused before it is sent: {}", stderr(&out));
    let out = run_stdin(fresh, &["--json", "import", "-", "--allow-secret"], &stream);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(support::json(fresh, &["verify"])["ok"], true);
    drop(served);
}
