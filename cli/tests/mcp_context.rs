//! MCP's context surfaces through a real `memledger serve`, driven by the official MCP Python
//! SDK (tests/mcp/context.py): tool annotations and structured results, resources (paged list,
//! read, templates), a subscription updated by a save from the CLI, prompts, completion and
//! logging; then the same surfaces for a principal whose grants do not reach a scope, which
//! must show it nothing of that scope and refuse its reads. Skipped, saying so, where
//! `import mcp` fails (except under CI).

use std::process::Stdio;

use crate::support::served::Served;
use crate::support::{bin, json as cli_json, run_stdin};

const HIDDEN_WORD: &str = "salary";

#[test]
fn resources_prompts_and_subscriptions_show_each_principal_what_recall_shows_it() {
    if !crate::support::mcp_python_sdk() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let reader = cli_json(&dir, &["principals", "add", "reader", "--kind", "agent", "--grant", "team:payments=read"]);
    cli_json(&dir, &["save", "--scope", "team:payments", "The billing service runs on Postgres 16"]);
    // More than a page of others (resources/list pages 50 at a time).
    let lines: String = (0..60)
        .map(|i| format!("{{\"text\": \"Payments runbook step {i}: check the queue named q{i}\", \"scope\": \"team:payments\"}}\n"))
        .collect();
    let out = run_stdin(&dir, &["--json", "save", "--from", "-"], lines.as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let hidden = cli_json(&dir, &["save", "--scope", "hr:private", "The CEO's salary review is on March 3"]);
    let served = Served::start(&dir, true);
    let url = format!("http://127.0.0.1:{}/mcp", served.port.unwrap());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/mcp/context.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .args([&url, served.token.as_deref().unwrap(), reader["token"].as_str().unwrap(), bin()])
        .arg(&dir)
        .env("MEMLEDGER_TEST_HIDDEN_ID", hidden["memory_id"].as_str().unwrap())
        .env("MEMLEDGER_TEST_HIDDEN_WORD", HIDDEN_WORD)
        .env_remove("MEMLEDGER_DIR")
        .env_remove("MEMLEDGER_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "context.py failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.lines().last(), Some("ok"), "{stdout}");
}
