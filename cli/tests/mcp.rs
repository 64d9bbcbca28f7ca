//! `memledger mcp`: the MCP server over stdio (docs/adr/0007-mcp-store-access.md).
//!
//! - A real client: the official MCP Python SDK drives the server through tests/mcp/client.py
//!   (skipped, with the reason printed, where `import mcp` fails; `.ci/run` installs it).
//! - The CLI keeps working while a server runs on the same store: the server holds the store only
//!   during a tool call.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::mcp_stdio::Server;
use crate::support::{self, bin, json_lines, manifest_dir};

fn workspace_root() -> PathBuf {
    Path::new(&manifest_dir()).parent().unwrap().to_path_buf()
}

#[test]
fn the_official_python_sdk_drives_the_server() {
    if !crate::support::mcp_python_sdk() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let script = workspace_root().join("tests/mcp/client.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(bin())
        .arg(&dir)
        .env_remove("MEMLEDGER_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "tests/mcp/client.py failed ({}):\n{stdout}\n{stderr}", out.status);
    assert_eq!(stdout.lines().last(), Some("ok"), "{stdout}");

    // Every event written through MCP names the client from `initialize`.
    let verify = support::json(&dir, &["verify"]);
    assert_eq!(verify["views_consistent"], json!(true), "{verify}");
    let events = json_lines(&dir, &["log"]);
    assert!(!events.is_empty());
    for e in &events {
        assert_eq!(e["actor"], json!("agent:memledger-test-client"), "{e}");
    }
}

#[test]
fn the_cli_saves_and_resolves_while_an_mcp_server_runs_on_the_same_store() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let mut server = Server::start(&dir, "rust-test");

    let first = server.tool(
        "save_memory",
        json!({"text": "the staging db runs on Postgres 16", "scope": "team:infra", "type": "fact"}),
    );
    assert_eq!(first["outcome"], json!("added"), "{first}");

    // The server is still running, stdin open, between calls: the CLI gets the store.
    let second = support::json(&dir, &["save", "--scope", "team:infra", "the staging db runs on Postgres 17"]);
    assert_eq!(second["outcome"], json!("conflict"), "{second}");
    let conflict = second["conflict_id"].as_str().unwrap().to_string();

    // The server sees the CLI's save at its next call.
    let pending = server.tool("list_conflicts", json!({}));
    let ids: Vec<&str> =
        pending["conflicts"].as_array().unwrap().iter().filter_map(|c| c["conflict_id"].as_str()).collect();
    assert_eq!(ids, vec![conflict.as_str()], "{pending}");
    assert!(pending["notice"].as_str().unwrap().contains("user"), "{pending}");
    let recalled = server.tool("recall_memory", json!({"query": "staging db postgres"}));
    assert_eq!(recalled["results"].as_array().unwrap().len(), 2, "{recalled}");
    assert!(recalled["notice"].is_string(), "recall carries the conflict notice: {recalled}");

    // A person resolves it from the CLI while the server runs.
    let resolved = support::json(&dir, &["conflicts", "resolve", &conflict, "--keep-new", "--note", "upgraded"]);
    assert_eq!(resolved["status"], json!("resolved"), "{resolved}");

    let left = server.tool("list_conflicts", json!({}));
    assert_eq!(left["conflicts"], json!([]), "{left}");
    let history = server.tool("memory_history", json!({"id": first["memory_id"]}));
    let texts: Vec<&str> = history["versions"].as_array().unwrap().iter().filter_map(|v| v["text"].as_str()).collect();
    assert_eq!(texts, vec!["the staging db runs on Postgres 17", "the staging db runs on Postgres 16"], "{history}");
    let recalled = server.tool("recall_memory", json!({"query": "staging db postgres"}));
    assert_eq!(recalled["results"].as_array().unwrap().len(), 1, "{recalled}");
    assert!(recalled["notice"].is_null(), "{recalled}");

    // The actors: the agent's save, the person's save and resolution.
    let actors: std::collections::BTreeSet<String> =
        json_lines(&dir, &["log"]).iter().map(|e| e["actor"].as_str().unwrap().to_string()).collect();
    assert!(actors.contains("agent:rust-test"), "{actors:?}");
    assert!(actors.iter().any(|a| a.starts_with("cli:")), "{actors:?}");
    drop(server);
}

#[test]
fn reads_of_a_store_not_yet_created_are_empty_and_bad_input_is_a_tool_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let mut server = Server::start(&dir, "rust-test");
    assert_eq!(server.tool("list_conflicts", json!({})), json!({"conflicts": []}));
    assert_eq!(server.tool("recall_memory", json!({"query": "anything"}))["results"], json!([]));
    let bad =
        server.request("tools/call", json!({"name": "save_memory", "arguments": {"text": "x", "type": "opinion"}}));
    assert_eq!(bad["isError"], json!(true), "{bad}");
    assert!(!dir.exists(), "bad input creates no store");
}

#[test]
fn a_save_holding_a_credential_is_a_tool_error_naming_the_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let mut server = Server::start(&dir, "rust-test");
    let secret = ["ghp_", "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"].concat();
    let text = format!("the ci token is {secret}");
    let error = server.tool_error("save_memory", json!({"text": text}));
    assert!(error.contains("github-token") && error.contains("allow_secret"), "{error}");
    assert!(!error.contains(&secret), "{error}");
    assert!(!dir.exists(), "nothing written");
    let saved = server.tool("save_memory", json!({"text": text, "allow_secret": true}));
    assert_eq!(saved["outcome"], json!("added"), "{saved}");
}

#[test]
fn erase_memory_needs_a_person_to_have_started_the_server_with_allow_erase() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let id = support::json(&dir, &["save", "the customer lives at 12 Elm Street"])["memory_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut server = Server::start(&dir, "rust-test");
    let dry = server.tool("erase_memory", json!({"id": id, "dry_run": true}));
    assert_eq!(
        (&dry["dry_run"], &dry["memories"]),
        (&json!(true), &json!([id])),
        "a dry run is always answered: {dry}"
    );
    let error = server.tool_error("erase_memory", json!({"id": id, "reason": "asked by the user"}));
    assert!(error.contains("nothing was erased") && error.contains("memledger erase"), "{error}");
    assert_eq!(support::json(&dir, &["show", &id])["erased"], Value::Null);
    drop(server);

    // A person's setting: `memledger mcp --allow-erase`.
    let mut server = Server::start_with(&dir, "rust-test", &["--allow-erase"]);
    let erased = server.tool("erase_memory", json!({"id": id, "lineage": true, "reason": "asked by the user"}));
    assert_eq!(erased["dry_run"], json!(false), "{erased}");
    assert!(erased["erasure_seq"].is_u64(), "{erased}");
    drop(server);
    let shown = support::json(&dir, &["show", &id]);
    assert_eq!((&shown["text"], &shown["erased"]["by"]), (&json!(""), &json!("agent:rust-test")), "{shown}");
    assert_eq!(support::json(&dir, &["verify"])["ok"], json!(true));

    // Through a store's server, the server's own setting decides as well.
    let other =
        support::json(&dir, &["save", "the customer's phone is 555-0100"])["memory_id"].as_str().unwrap().to_string();
    let served = crate::support::served::Served::start(&dir, false);
    let mut server = Server::start_with(&dir, "rust-test", &["--allow-erase"]);
    let error = server.tool_error("erase_memory", json!({"id": other}));
    assert!(error.contains("nothing was erased"), "{error}");
    drop(server);
    drop(served);
    assert_eq!(support::json(&dir, &["show", &other])["erased"], Value::Null);
}
