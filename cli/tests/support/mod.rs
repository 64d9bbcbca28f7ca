//! Shared by the CLI's end-to-end tests: the `memledger` binary, ways to run it on a store, a
//! real `memledger serve` to talk to (`served`), and the seeded generator of the crash loops.
//!
//! The functions here run a command the way a person's shell would: through the store's server
//! when one runs, else on the store directly. [`direct`] and [`server`] have the same functions
//! on one route each, for the tests that run twice (`cli.rs`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Value;

/// The model over HTTP the engine's tests script, shared with them.
#[path = "../../../engine/tests/support/mock_http.rs"]
pub mod mock_http;

pub mod direct;
pub mod mcp_stdio;
pub mod served;
pub mod server;

/// This package's directory (`memledger_tests::manifest_dir`).
pub fn manifest_dir() -> PathBuf {
    memledger_tests::manifest_dir(env!("CARGO_MANIFEST_DIR"))
}

/// Whether the official MCP Python SDK is installed (`import mcp`), saying so when it is not.
/// CI installs it (scripts/setup_tests.sh): there a missing SDK fails the test, never skips it.
pub fn mcp_python_sdk() -> bool {
    let probe = Command::new("python3").args(["-c", "import mcp"]).output();
    let installed = probe.as_ref().is_ok_and(|out| out.status.success());
    if std::env::var_os("CI").is_some() {
        assert!(installed, "CI must run the real-client tests, but `python3 -c 'import mcp'` fails");
    }
    if !installed {
        let why = match &probe {
            Ok(out) => String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("failed").to_string(),
            Err(e) => format!("python3 is not available: {e}"),
        };
        println!("SKIPPED: the MCP Python SDK is not installed ({why}); scripts/setup_tests.sh installs it");
    }
    installed
}

/// The Python venv the test command installs python/requirements-test.txt into
/// (scripts/setup_tests.sh): `$MEMLEDGER_PYTHON_VENV`, else `~/.cache/memledger/python-venv`.
pub fn python_venv() -> PathBuf {
    std::env::var_os("MEMLEDGER_PYTHON_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/memledger/python-venv"))
}

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_memledger")
}

/// `memledger --dir DIR`, with no store directory and no choice of route from the environment:
/// through the store's server when one runs, else directly, and no server started.
pub fn memledger(dir: &Path) -> Command {
    let mut command = Command::new(bin());
    command
        .arg("--dir")
        .arg(dir)
        .env_remove("MEMLEDGER_DIR")
        .env_remove("MEMLEDGER_NO_SERVER")
        .env_remove("MEMLEDGER_AUTOSTART")
        .env_remove("MEMLEDGER_TOKEN");
    command
}

/// Run `memledger --dir DIR ARGS…` to the end.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    run_with(memledger(dir), args)
}

/// [`run`], with `stdin` on its standard input.
pub fn run_stdin(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    run_stdin_with(memledger(dir), args, stdin)
}

/// `memledger --json ARGS…`, which must succeed: its one JSON value.
pub fn json(dir: &Path, args: &[&str]) -> Value {
    value(&run(dir, &[&["--json"], args].concat()), args)
}

/// `command ARGS…` run to the end.
fn run_with(mut command: Command, args: &[&str]) -> Output {
    command.args(args).output().unwrap()
}

/// `command ARGS…` run to the end with `stdin` on its standard input.
fn run_stdin_with(mut command: Command, args: &[&str], stdin: &[u8]) -> Output {
    let mut child =
        command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // A command that refuses its input may exit before reading it all.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

/// The one JSON value of a command that must have succeeded.
pub fn value(out: &Output, args: &[&str]) -> Value {
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// `memledger --json ARGS…`, which must succeed: its JSON lines.
pub fn json_lines(dir: &Path, args: &[&str]) -> Vec<Value> {
    lines(&run(dir, &[&["--json"], args].concat()), args)
}

/// The JSON lines of a command that must have succeeded.
pub fn lines(out: &Output, args: &[&str]) -> Vec<Value> {
    assert!(out.status.success(), "{args:?} exited {:?}: {}", out.status.code(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{args:?}: {e}: {l}")))
        .collect()
}

/// The exit code.
pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap()
}

/// A generator seeded from `MEMLEDGER_CRASH_SEED`, else from the clock; the seed is printed with
/// `label`, so that a failing run can be replayed.
pub fn seeded(label: &str) -> StdRng {
    let seed: u64 = std::env::var("MEMLEDGER_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    println!("{label}: seed {seed} (MEMLEDGER_CRASH_SEED)");
    StdRng::seed_from_u64(seed)
}

/// An MCP tool's answer (commands/src/fence.rs) as the JSON document it fences: the notice, a
/// boundary made for this answer on a line of its own before and after the data, and each
/// item's header line and text. A recall's texts come back into its results (item `[n]` is the
/// result whose `fenced_item` is n); any other tool's one item is its document.
pub fn unfence(text: &str) -> serde_json::Value {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.first().is_some_and(|l| l.starts_with("The text between")), "no notice: {text}");
    let open = lines.iter().position(|l| l.starts_with("<<<memledger-data-")).unwrap_or_else(|| panic!("{text}"));
    let boundary = &lines[open][3..];
    let close = lines.iter().position(|l| *l == format!(">>>{boundary}")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(text.matches(boundary).count(), 2, "the boundary is nowhere else: {text}");
    let inside = &lines[open + 1..close];
    let rest = lines[close + 1..].join("\n");
    if rest.trim().is_empty() {
        // One item with an empty header: the document.
        assert_eq!(inside.first(), Some(&""), "{text}");
        return serde_json::from_str(&inside[1..].join("\n")).unwrap_or_else(|e| panic!("{e}: {text}"));
    }
    let mut doc: serde_json::Value = serde_json::from_str(&rest).unwrap_or_else(|e| panic!("{e}: {rest}"));
    // Items: a header `[n] memory ID (...)`, then the text up to the next header.
    let mut texts: Vec<String> = Vec::new();
    for line in inside {
        if line.starts_with('[') && line.contains("] memory ") {
            texts.push(String::new());
        } else if let Some(t) = texts.last_mut() {
            if !t.is_empty() {
                t.push('\n');
            }
            t.push_str(line);
        }
    }
    if let Some(results) = doc["results"].as_array_mut() {
        for r in results {
            let n = r["fenced_item"].as_u64().unwrap_or_else(|| panic!("{r}")) as usize;
            r["text"] = serde_json::Value::String(texts[n - 1].clone());
        }
    }
    doc
}
