//! A team's machines on one shared ledger (a real PostgreSQL: scripts/services.sh starts one,
//! each test makes its own database). Each "machine" is a store directory of its own with
//! `memledger` processes on it; nothing is coordinated with sleeps and nothing asserts on
//! timing. The faults: a writer killed with SIGKILL mid-load, the server restarted during a
//! write loop, the server stopped. One machine saves over TLS verified against the throwaway
//! server's certificate authority.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::mpsc;

use serde_json::Value;

use memledger_tests::services::{PrivatePostgres, fresh_pg_database, try_sql};

use crate::support;

/// Saves per writer; `MEMLEDGER_SHARED_SAVES` makes a longer run (docs/shared-ledger.md).
fn saves_per_writer() -> usize {
    std::env::var("MEMLEDGER_SHARED_SAVES").ok().and_then(|s| s.parse().ok()).unwrap_or(8)
}

/// `memledger --dir DIR --ledger URL --wait 120 ARGS…`.
fn run(dir: &Path, url: &str, args: &[&str]) -> Output {
    let args = [&["--ledger", url, "--wait", "120", "--no-server"], args].concat();
    support::run(dir, &args)
}

fn ok_lines(dir: &Path, url: &str, args: &[&str]) -> Vec<Value> {
    let out = run(dir, url, &[&["--json"], args].concat());
    support::lines(&out, args)
}

/// A memory text no other resembles.
fn text(machine: usize, writer: usize, i: usize) -> String {
    let nouns = ["harbor", "lantern", "orchard", "glacier", "meadow", "quarry", "canyon", "estuary"];
    format!(
        "cartographer m{machine}w{writer}x{i} charts the {} at zq{}k",
        nouns[(i + writer) % 8],
        machine * 10_000 + writer * 100 + i
    )
}

/// Every event in the shared ledger, read through `dir`.
fn exported(dir: &Path, url: &str) -> Vec<Value> {
    let out = run(dir, url, &["export"]);
    support::lines(&out, &["export"])
}

/// How many events of the ledger carry each idempotency key.
fn key_counts(events: &[Value]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for event in events {
        if let Some(key) = event["idempotency_key"].as_str() {
            *counts.entry(key.to_string()).or_default() += 1;
        }
    }
    counts
}

/// `verify` on a machine: the chain, its views against a fresh replay, and its copy against the
/// shared head. Returns the head hash.
fn verified(dir: &Path, url: &str) -> String {
    let v = &ok_lines(dir, url, &["verify"])[0];
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["views_consistent"], true, "{v}");
    v["head_hash"].as_str().unwrap().to_string()
}

#[test]
fn three_machines_with_four_writers_each_share_one_ledger() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let machines: Vec<_> = (0..3).map(|m| root.path().join(format!("machine-{m}"))).collect();
    let n = saves_per_writer();
    let writers: Vec<_> = (0..3)
        .flat_map(|m| (0..4).map(move |w| (m, w)))
        .map(|(m, w)| {
            let (dir, url) = (machines[m].clone(), url.clone());
            std::thread::spawn(move || {
                (0..n)
                    .map(|i| {
                        let key = format!("m{m}-w{w}-{i}");
                        let saved = &ok_lines(&dir, &url, &["save", &text(m, w, i), "--idempotency-key", &key])[0];
                        (key, saved["memory_id"].as_str().unwrap().to_string())
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let acked: Vec<(String, String)> = writers.into_iter().flat_map(|h| h.join().unwrap()).collect();
    assert_eq!(acked.len(), 12 * n);
    // Every acknowledged save is in the ledger exactly once.
    let counts = key_counts(&exported(&machines[0], &url));
    for (key, _) in &acked {
        assert_eq!(counts.get(key), Some(&1), "{key}");
    }
    // Every machine's views equal a fresh replay, at the same head.
    let heads: Vec<String> = machines.iter().map(|dir| verified(dir, &url)).collect();
    assert!(heads.iter().all(|h| *h == heads[0]), "{heads:?}");
    // A memory saved on one machine is read on the others.
    for (key, id) in acked.iter().step_by(7) {
        for dir in &machines {
            let shown = &ok_lines(dir, &url, &["show", id])[0];
            assert!(shown.to_string().contains(&key[..2]), "{key}: {shown}");
        }
    }
}

#[test]
fn a_compare_and_set_race_across_machines_has_one_winner() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let (a, b, c) = (root.path().join("a"), root.path().join("b"), root.path().join("c"));
    let saved = &ok_lines(&a, &url, &["save", "the release train leaves on tuesdays"])[0];
    let id = saved["memory_id"].as_str().unwrap().to_string();
    let racers: Vec<_> = [b, c]
        .into_iter()
        .enumerate()
        .map(|(k, dir)| {
            let (url, id) = (url.clone(), id.clone());
            std::thread::spawn(move || {
                let text = format!("the release train leaves on {}", ["wednesdays", "thursdays"][k]);
                support::code(&run(&dir, &url, &["--json", "update", &id, &text, "--expect-version", "1"]))
            })
        })
        .collect();
    let mut codes: Vec<i32> = racers.into_iter().map(|h| h.join().unwrap()).collect();
    codes.sort();
    assert_eq!(codes, vec![0, 3], "exactly one winner; the other is refused as a conflict");
    let history = &ok_lines(&a, &url, &["history", &id])[0];
    assert_eq!(history.to_string().matches("\"version\":2").count(), 1, "{history}");
}

#[test]
fn a_killed_writer_leaves_whole_commands_and_its_retry_doubles_nothing() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    let lines: String = (0..400)
        .map(|i| serde_json::json!({"text": text(0, 0, i), "idempotency_key": format!("line-{i}")}).to_string() + "\n")
        .collect();
    let file = root.path().join("lines.jsonl");
    std::fs::write(&file, lines).unwrap();
    let log = memledger_engine::connect_shared_ledger(&url).unwrap();
    let mut writer = support::memledger(&a)
        .args(["--ledger", &url, "--no-server", "--json", "save", "--from", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the shared ledger holds some of its saves (woken by the ledger's notifications).
    while log.head().unwrap().seq < 20 {
        log.wait_past(log.head().unwrap().seq, std::time::Duration::from_millis(200)).unwrap();
    }
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert!(log.verify().unwrap().ok);
    // Another machine and the killed one's own store both agree with the ledger.
    let head_b = verified(&b, &url);
    assert_eq!(verified(&a, &url), head_b);
    // The retry answers every line and doubles none.
    let answers = ok_lines(&a, &url, &["save", "--from", file.to_str().unwrap()]);
    assert_eq!(answers.len(), 400);
    let counts = key_counts(&exported(&b, &url));
    assert_eq!(counts.len(), 400);
    assert!(counts.values().all(|&c| c == 1), "a key appears twice");
    assert_eq!(verified(&a, &url), verified(&b, &url));
}

#[test]
fn a_restarted_server_loses_nothing_and_a_stopped_one_is_exit_1() {
    let Some(pg) = PrivatePostgres::start() else { return };
    let url = memledger_tests::services::create_database(&pg.admin_url());
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("machine");
    const SAVES: usize = 30;
    let (acked_tx, acked) = mpsc::channel();
    let writer = {
        let (dir, url) = (dir.clone(), url.clone());
        std::thread::spawn(move || {
            let mut failures = 0;
            for i in 0..SAVES {
                let key = format!("loop-{i}");
                // A save that failed (the server went away) is tried again with its key.
                loop {
                    let out = run(&dir, &url, &["--json", "save", &text(1, 1, i), "--idempotency-key", &key]);
                    match support::code(&out) {
                        0 => break,
                        1 => failures += 1,
                        other => panic!("save {i} exited {other}: {}", String::from_utf8_lossy(&out.stderr)),
                    }
                }
                acked_tx.send(i).unwrap();
            }
            failures
        })
    };
    // Restart the server once a third of the loop is acknowledged.
    for _ in 0..SAVES / 3 {
        acked.recv().unwrap();
    }
    pg.restart();
    let _failures = writer.join().unwrap();
    let counts = key_counts(&exported(&dir, &url));
    assert_eq!(counts.len(), SAVES, "every acknowledged save is there");
    assert!(counts.values().all(|&c| c == 1), "no retried save is doubled");
    let head = verified(&dir, &url);

    // Stopped: a clear error, exit 1, and nothing half-written.
    pg.stop();
    let out = run(&dir, &url, &["save", "the build cache lives on the nfs share"]);
    assert_eq!(support::code(&out), 1, "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("shared ledger at postgres://"), "{stderr}");
    pg.start_again();
    assert_eq!(verified(&dir, &url), head);
}

/// Fails (the server's message) when an event row of the ledger at `url` holds `marker`.
fn no_event_row_holds(url: &str, marker: &str) -> Result<(), String> {
    try_sql(
        url,
        &format!(
            "DO $$ BEGIN IF EXISTS (SELECT 1 FROM memledger_events \
             WHERE position(convert_to('{marker}', 'UTF8') IN event) > 0) \
             THEN RAISE EXCEPTION 'an event row holds the marker'; END IF; END $$"
        ),
    )
}

#[test]
fn an_erasure_on_one_machine_leaves_the_text_on_no_machine_and_in_no_row() {
    let Some(url) = fresh_pg_database() else { return };
    const MARKER: &str = "quillowmarsh4417";
    let root = tempfile::tempdir().unwrap();
    let (a, b, c) = (root.path().join("a"), root.path().join("b"), root.path().join("c"));
    let text = format!("the staging vault passphrase hint is {MARKER}");
    let saved = &ok_lines(&a, &url, &["save", &text])[0];
    let id = saved["memory_id"].as_str().unwrap().to_string();
    let kept = &ok_lines(&a, &url, &["save", "the deploy window opens at nine on weekdays"])[0];
    // Machine b reads the memory (its store now holds the text) before the erasure.
    assert_eq!(ok_lines(&b, &url, &["show", &id])[0]["text"], text.as_str());
    assert!(!crate::erase::files_holding(&b, MARKER).is_empty(), "b's copy holds the text before the erasure");
    let found = no_event_row_holds(&url, MARKER).expect_err("the marker is in the events table before the erasure");
    assert!(found.contains("holds the marker"), "{found}");

    let erased = &ok_lines(&a, &url, &["erase", &id, "--reason", "a passphrase hint"])[0];
    assert_eq!(erased["dry_run"], false, "{erased}");
    assert!(erased["erasure_seq"].as_u64().is_some(), "{erased}");

    // Machine b catches up past the erasure; machine c replays the ledger fresh.
    let shown_b = &ok_lines(&b, &url, &["show", &id])[0];
    assert_eq!(shown_b["text"], "", "{shown_b}");
    assert!(shown_b["erased"]["seq"].as_u64().is_some(), "{shown_b}");
    let head = verified(&a, &url);
    assert_eq!(verified(&b, &url), head);
    assert_eq!(verified(&c, &url), head);
    for args in [vec!["show", id.as_str()], vec!["history", id.as_str()], vec!["list"]] {
        assert_eq!(ok_lines(&b, &url, &args), ok_lines(&c, &url, &args), "{args:?}: b equals a fresh replay");
    }
    let kept_id = kept["memory_id"].as_str().unwrap();
    assert_eq!(ok_lines(&b, &url, &["show", kept_id])[0]["text"], "the deploy window opens at nine on weekdays");
    for dir in [&a, &b, &c] {
        let holding = crate::erase::files_holding(dir, MARKER);
        assert!(holding.is_empty(), "{} still holds the marker in {holding:?}", dir.display());
    }
    no_event_row_holds(&url, MARKER).unwrap();
    assert!(!exported(&c, &url).iter().any(|e| e.to_string().contains(MARKER)));

    // The database still refuses every other change of an event, erased or not.
    for sql in [
        "UPDATE memledger_events SET event = event",
        "UPDATE memledger_events SET event = event WHERE erased_by IS NOT NULL",
        "UPDATE memledger_events SET erased_by = seq + 1 WHERE erased_by IS NULL",
        "DELETE FROM memledger_events WHERE erases IS NOT NULL",
    ] {
        let refused = try_sql(&url, sql).expect_err(sql);
        assert!(refused.contains("append-only"), "{sql}: {refused}");
    }
    assert_eq!(verified(&b, &url), head);
}

#[test]
fn a_machine_saves_over_verified_tls_and_an_untrusted_server_is_exit_1() {
    let Some(url) = fresh_pg_database() else { return };
    let what = "a throwaway PostgreSQL serving TLS";
    let Some(ca) = memledger_tests::services::service_url("MEMLEDGER_TEST_PG_CA", what) else { return };
    let Some(other) = memledger_tests::services::service_url("MEMLEDGER_TEST_PG_OTHER_CA", what) else { return };
    let root = tempfile::tempdir().unwrap();
    let (trusting, refused) = (root.path().join("trusting"), root.path().join("refused"));
    let tls = format!("{url}?sslmode=verify-full&sslrootcert={ca}");
    let saved = &ok_lines(&trusting, &tls, &["save", "the release train leaves on thursdays"])[0];
    assert!(saved["memory_id"].is_string(), "{saved}");
    let events = exported(&trusting, &tls).len();
    assert!(events >= 1);
    verified(&trusting, &tls);

    let out = run(&refused, &format!("{url}?sslmode=verify-full&sslrootcert={other}"), &["save", "never written"]);
    assert_eq!(support::code(&out), 1, "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the server's TLS certificate is not signed by a certificate authority in"), "{stderr}");
    assert!(!refused.exists(), "nothing written");
    assert_eq!(exported(&trusting, &tls).len(), events);
}

#[test]
fn a_principal_made_on_one_machine_works_on_another_and_its_revocation_counts_there_at_once() {
    use crate::support::served::{Served, tcp_request};
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    let add = |name: &str| -> String {
        let added =
            &ok_lines(&a, &url, &["principals", "add", name, "--kind", "agent", "--grant", "team:ops=read,write"])[0];
        added["token"].as_str().unwrap().to_string()
    };
    let (bot, other) = (add("bot"), add("other"));
    ok_lines(&a, &url, &["save", "--scope", "team:ops", "the ops runbook lives in the wiki"]);
    // Machine b serves its copy of the shared ledger; a's principals and their verifier secret
    // come with it.
    let served = Served::start_with(&b, true, &["--ledger", &url]);
    let port = served.port.unwrap();
    let recall = |token: &str| -> u16 {
        let auth = format!("Bearer {token}");
        let body = r#"{"query": "ops runbook", "scope": "team:ops"}"#;
        tcp_request(port, "POST", "/v1/recall", Some(body), &[("authorization", &auth)]).expect("b answers").status
    };
    assert_eq!(recall(&bot), 200);
    assert_eq!(recall(&other), 200);

    // Revoked on a: b refuses the token with its next request, which follows the ledger first.
    ok_lines(&a, &url, &["principals", "revoke", "bot", "--reason", "left the team"]);
    assert_eq!(recall(&bot), 401, "a revocation appended by another machine counts at once");
    // Rotated on a: the old token is refused on b and the new one works there.
    let rotated = &ok_lines(&a, &url, &["principals", "rotate", "other"])[0];
    let new = rotated["token"].as_str().unwrap();
    assert_eq!(recall(&other), 401);
    assert_eq!(recall(new), 200);
    drop(served);
    assert_eq!(verified(&a, &url), verified(&b, &url));
}

#[test]
fn each_machine_signs_with_its_own_key_registered_by_an_administrator_and_a_keyless_rewrite_fails_verify() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("keys");
    // `memledger` on machine NAME: its own store directory and its own signing key.
    let on = |name: &str, token: Option<&str>, args: &[&str]| -> Output {
        let mut command = support::memledger(&root.path().join(name));
        command.env("MEMLEDGER_SIGNING_KEY", keys.join(format!("{name}.key")));
        if let Some(token) = token {
            command.env("MEMLEDGER_TOKEN", token);
        }
        command.args(["--ledger", &url, "--wait", "120", "--no-server", "--json"]).args(args).output().unwrap()
    };
    let ok = |name: &str, args: &[&str]| -> Value { support::value(&on(name, None, args), args) };
    ok("a", &["save", "the docs site is built with Docusaurus"]);

    // Machine b reads the ledger, but its appends wait for an administrator to register its key.
    let b_key = ok("b", &["checkpoint", "--key"]);
    let public = b_key["public_key"].as_str().unwrap().to_string();
    let refused = on("b", None, &["save", "docs moved over to Mintlify"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(support::code(&refused), 1, "{stderr}");
    assert!(stderr.contains("is not registered") && stderr.contains(&format!("--register-key {public}")), "{stderr}");
    assert_eq!(exported(&root.path().join("a"), &url).len(), exported(&root.path().join("b"), &url).len());
    let events = exported(&root.path().join("a"), &url).len();

    // Only an administrator registers keys: an agent's token is refused, and nothing is written.
    let bot = ok("a", &["principals", "add", "bot", "--kind", "agent", "--grant", "team:docs=read,write"]);
    let events = events + 1;
    let by_bot = on("a", bot["token"].as_str(), &["checkpoint", "--register-key", &public, "--machine", "b"]);
    let stderr = String::from_utf8_lossy(&by_bot.stderr);
    assert_eq!(support::code(&by_bot), 5, "{stderr}");
    assert!(stderr.contains("bot may not admin") && stderr.contains("registering a signing key"), "{stderr}");
    assert_eq!(support::code(&on("b", None, &["save", "docs moved over to Mintlify"])), 1, "still unregistered");
    let bad = on("a", None, &["checkpoint", "--register-key", "not-a-key"]);
    assert_eq!(support::code(&bad), 2, "{}", String::from_utf8_lossy(&bad.stderr));

    let registered = ok("a", &["checkpoint", "--register-key", &public, "--machine", "b"]);
    assert_eq!(registered["key_id"], b_key["key_id"]);
    assert_eq!(registered["from_seq"].as_u64(), Some(events as u64 + 1));
    assert_eq!(registered["registered_by"], "owner");
    ok("b", &["save", "docs moved over to Mintlify"]);
    ok("a", &["save", "the changelog is generated from conventional commits"]);
    for machine in ["a", "b"] {
        let v = ok(machine, &["verify"]);
        assert_eq!((v["ok"].as_bool(), v["signed"].as_bool()), (Some(true), Some(true)), "{machine}: {v}");
        assert_eq!(v["keys"].as_array().unwrap().len(), 2, "{v}");
    }

    // Someone with write access to the database but no key rewrites an event and rechains every
    // later one and the head: a machine that copies the log from scratch finds no signature
    // covering it, before and after `rebuild`.
    let all = exported(&root.path().join("a"), &url);
    let mut events: Vec<memledger_schemas::Event> =
        all.iter().map(|e| serde_json::from_value(e.clone()).unwrap()).collect();
    events[0].actor = "cli:forger".into();
    events[0].seal();
    for i in 1..events.len() {
        events[i].prev_hash = events[i - 1].hash;
        events[i].seal();
    }
    memledger_tests::services::run_sql(&url, &memledger_tests::services::overwrite_events_sql(&events));
    let fresh = on("c", None, &["verify"]);
    let report: Value = serde_json::from_slice(&fresh.stdout).expect("verify's report");
    assert_eq!(support::code(&fresh), 1, "{report}");
    assert!(report["problem"].as_str().unwrap().contains("no valid signature covers seq 1"), "{report}");
    let rebuilt = on("c", None, &["rebuild"]);
    assert_ne!(support::code(&rebuilt), 0, "rebuild refuses a chain that does not verify");
    assert_eq!(support::code(&on("c", None, &["verify"])), 1);
    // The machines that signed it refuse to sign on top of it.
    let refused = on("a", None, &["save", "never signed over a forgery"]);
    assert_ne!(support::code(&refused), 0);
}

#[test]
fn a_shared_ledger_whose_keys_were_removed_fails_verify_where_it_was_seen_signed_and_is_enrolled_only_on_purpose() {
    let Some(url) = fresh_pg_database() else { return };
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("keys");
    let on = |name: &str, args: &[&str]| -> Output {
        let mut command = support::memledger(&root.path().join(name));
        command.env("MEMLEDGER_SIGNING_KEY", keys.join(format!("{name}.key")));
        command.args(["--ledger", &url, "--wait", "120", "--no-server", "--json"]).args(args).output().unwrap()
    };
    assert_eq!(support::code(&on("a", &["save", "the docs site is built with Docusaurus"])), 0);
    assert_eq!(support::code(&on("a", &["verify"])), 0);
    // Someone with the database removes every key and checkpoint.
    memledger_tests::services::run_sql(
        &url,
        "ALTER TABLE memledger_keys DISABLE TRIGGER USER; ALTER TABLE memledger_checkpoints DISABLE TRIGGER USER; \
         DELETE FROM memledger_keys; DELETE FROM memledger_checkpoints;",
    );
    // The machine that saw it signed fails verify; a new machine is not enrolled by opening it.
    let verify = on("a", &["verify"]);
    let report: Value = serde_json::from_slice(&verify.stdout).expect("verify's report");
    assert_eq!(support::code(&verify), 1, "{report}");
    assert!(report["problem"].as_str().unwrap().contains("first signing key is missing"), "{report}");
    let save = on("c", &["save", "docs moved over to Mintlify"]);
    let stderr = String::from_utf8_lossy(&save.stderr);
    assert_eq!(support::code(&save), 1, "{stderr}");
    assert!(stderr.contains("no signing keys") && stderr.contains("checkpoint --enrol"), "{stderr}");
    // An administrator signs it on purpose, from its head as it is.
    let enrolled = support::value(&on("c", &["checkpoint", "--enrol"]), &["checkpoint", "--enrol"]);
    assert_eq!(enrolled["enrolled_by"], "owner", "{enrolled}");
    assert_eq!(support::code(&on("c", &["save", "docs moved over to Mintlify"])), 0);
    assert_eq!(support::code(&on("c", &["verify"])), 0);
}
