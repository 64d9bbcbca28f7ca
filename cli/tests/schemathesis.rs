//! schemathesis (PyPI) against the running server's `/openapi.json`: a bounded number of
//! generated requests per operation, over TCP with the bearer token, on a store with a few
//! memories and a conflict, once as the store's owner and once as a principal whose grants reach
//! some scopes (its refusals are 403s the schema names). No answer may be a 5xx, and every answer
//! must match the schema.
//! scripts/setup_tests.sh installs schemathesis; under `CI=true` a missing one is a failure.

use std::process::{Command, Stdio};

use crate::support::memledger;
use crate::support::served::Served;

/// Examples generated per operation: enough to find a crash, bounded to keep the run short.
const MAX_EXAMPLES: &str = "100";

#[test]
fn schemathesis_finds_no_server_error_and_no_answer_off_the_schema() {
    let probe = Command::new("schemathesis").arg("--version").output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(std::env::var_os("CI").is_none(), "CI must run schemathesis (scripts/setup_tests.sh installs it)");
        println!(
            "SKIPPED: schemathesis is not installed (python3 -m pip install schemathesis, see scripts/setup_tests.sh)"
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    for text in ["the staging db runs on Postgres 16", "the staging db runs on Postgres 17", "prefers pnpm over npm"] {
        assert!(memledger(&dir).args(["save", text]).output().unwrap().status.success());
    }
    let added = memledger(&dir)
        .args(["--json", "principals", "add", "agent-under-test", "--kind", "agent"])
        .args(["--grant", "personal=read,propose,write,resolve", "--grant", "team:*=read"])
        .output()
        .unwrap();
    let principal: serde_json::Value = serde_json::from_slice(&added.stdout).unwrap();
    let served = Served::start(&dir, true);
    let url = format!("http://127.0.0.1:{}/openapi.json", served.port.unwrap());
    for (token, examples) in
        [(served.token.clone().unwrap(), MAX_EXAMPLES), (principal["token"].as_str().unwrap().to_string(), "50")]
    {
        run_schemathesis(&url, &token, examples, tmp.path());
    }
    let verify = memledger(&dir).args(["--json", "verify"]).output().unwrap();
    assert!(verify.status.success(), "the store is sound after the run: {}", String::from_utf8_lossy(&verify.stdout));
    drop(served);
}

/// One bounded schemathesis run with `token` as the bearer.
fn run_schemathesis(url: &str, token: &str, examples: &str, tmp: &std::path::Path) {
    let auth = format!("Authorization: Bearer {token}");
    let mut child = Command::new("schemathesis")
        .args(["run", url, "--header", &auth, "--max-examples", examples, "--checks"])
        .args(["not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance"])
        .args(["--no-color", "--suppress-health-check", "all", "--request-timeout", "30", "--seed", "1"])
        // The CLI's own transports (a call of any command, a stream to import): the CLI tests
        // drive them through a server.
        .args(["--exclude-path", "/v1/call", "--exclude-path", "/v1/import"])
        .stdin(Stdio::null())
        // Into a file, not a pipe: nobody reads a pipe while the run goes on.
        .stdout(std::fs::File::create(tmp.join("schemathesis.out")).unwrap())
        .stderr(std::fs::File::create(tmp.join("schemathesis.err")).unwrap())
        .spawn()
        .unwrap();
    // Bounded: a run that has not finished in 5 minutes is a failure, not a hang.
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(300) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let status = child.wait().unwrap();
    let stdout = std::fs::read_to_string(tmp.join("schemathesis.out")).unwrap_or_default();
    let stderr = std::fs::read_to_string(tmp.join("schemathesis.err")).unwrap_or_default();
    println!("{stdout}");
    assert!(status.success(), "schemathesis found problems:\n{stdout}\n{stderr}");
}
