//! End-to-end tests of the command-line contract (docs/cli.md): JSON fields, exit codes, refused
//! input writing nothing, id prefixes.
//!
//! They run twice in the one test binary: as the module `cli` on the direct path (each command
//! opens the store), and as `cli_server::cli` through a server (`--autostart`: a store's first
//! command after its creation starts one, and the rest go through it). Which one is the module
//! `path` beside this one: `support::direct` or `support::server`.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};

use serde_json::Value;

// The route under test: `support::direct` here, `support::server` in `cli_server.rs`.
use super::path::{THROUGH_SERVER, code, json, json_lines, memledger, run, run_stdin};

/// `memledger --json save --from -` on `dir`, its standard streams piped, left running.
fn save_from_stdin(dir: &Path) -> Child {
    memledger(dir)
        .args(["--json", "save", "--from", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn head(dir: &Path) -> u64 {
    json(dir, &["verify"])["head_seq"].as_u64().unwrap()
}

#[test]
fn save_and_read_back_with_the_named_json_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let s = json(&dir, &["save", "--type", "preference", "--scope", "work", "prefers pnpm over npm"]);
    for field in ["outcome", "memory_id", "root_id", "version", "conflict_id", "replayed", "seqs"] {
        assert!(s.get(field).is_some(), "save JSON lacks {field}: {s}");
    }
    assert_eq!(s["outcome"], "added");
    assert_eq!(s["replayed"], false);
    let path = if THROUGH_SERVER { "server" } else { "direct" };
    assert_eq!(json(&dir, &["status"])["path"], path, "the path under test");
    let id = s["memory_id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 32);

    // Show by a 6-digit prefix.
    let m = json(&dir, &["show", &id[..6]]);
    for field in [
        "memory_id",
        "root_id",
        "version",
        "status",
        "type",
        "scope",
        "text",
        "asserted_at",
        "stale_since",
        "effective_at",
        "conflicts_with",
    ] {
        assert!(m.get(field).is_some(), "show JSON lacks {field}: {m}");
    }
    assert_eq!(
        (m["status"].as_str(), m["type"].as_str(), m["scope"].as_str()),
        (Some("active"), Some("preference"), Some("work"))
    );

    let list = json(&dir, &["list", "--type", "preference"]);
    assert_eq!(list["memories"].as_array().unwrap().len(), 1);
    assert_eq!(json(&dir, &["list", "--type", "fact"])["memories"].as_array().unwrap().len(), 0);

    let h = json(&dir, &["history", &id]);
    assert_eq!(h["root_id"], id.as_str());
    let v = &h["versions"][0];
    for field in ["memory_id", "version", "text", "status", "asserted_at", "stale_since", "cause"] {
        assert!(v.get(field).is_some(), "history version lacks {field}: {v}");
    }

    let log = json_lines(&dir, &["log"]);
    assert_eq!(log.len(), 2, "memory_observed + belief_added");
    for field in ["seq", "event_id", "type", "recorded_at", "actor", "prev_hash", "hash", "body"] {
        assert!(log[0].get(field).is_some(), "log line lacks {field}");
    }
    assert!(log[0]["actor"].as_str().unwrap().starts_with("cli:"));

    let stats = json(&dir, &["stats"]);
    assert_eq!(stats["events"], 2);
    let verify = json(&dir, &["verify"]);
    for field in ["ok", "events", "head_seq", "head_hash", "first_bad_seq", "views_consistent"] {
        assert!(verify.get(field).is_some(), "verify lacks {field}");
    }
    assert_eq!((verify["ok"].as_bool(), verify["views_consistent"].as_bool()), (Some(true), Some(true)));
    let rebuild = json(&dir, &["rebuild"]);
    assert_eq!(rebuild["events"], 2);
    assert!(rebuild["views"].as_array().unwrap().len() >= 4);
    assert!(rebuild.get("elapsed_ms").is_some());
}

#[test]
fn refused_input_exits_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("never-created");
    let big = "x".repeat(64 * 1024 + 1);
    let cases: Vec<Vec<&str>> = vec![
        vec!["save", ""],
        vec!["save", "   "],
        vec!["save", &big],
        vec!["save", "--type", "opinion", "x"],
        vec!["save", "--effective-at", "yesterday", "x"],
        vec!["save", "--scope", "", "x"],
        vec!["save"],
        vec!["save", "--bogus-flag", "x"],
    ];
    for args in &cases {
        let out = run(&fresh, args);
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(!String::from_utf8_lossy(&out.stderr).trim().is_empty(), "{args:?} says why");
        assert!(!fresh.exists(), "{args:?} created the store");
    }
    // On an existing store: the head does not move.
    let dir = tmp.path().join("store");
    json(&dir, &["save", "something true"]);
    let before = head(&dir);
    for args in &cases {
        assert_eq!(code(&run(&dir, args)), 2, "{args:?}");
    }
    let out = run_stdin(&dir, &["save", "-"], b"nul \0 byte");
    assert_eq!(code(&out), 2);
    let out = run_stdin(&dir, &["save", "-"], b"\xff\xfe not utf-8");
    assert_eq!(code(&out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("UTF-8"));
    assert_eq!(head(&dir), before);
    // Text from stdin works.
    let s: Value = serde_json::from_slice(&run_stdin(&dir, &["--json", "save", "-"], b"from stdin\n").stdout).unwrap();
    assert_eq!(s["outcome"], "added");
}

#[test]
fn ids_prefixes_and_not_found() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    json(&dir, &["save", "one memory"]);
    assert_eq!(code(&run(&dir, &["show", "abc"])), 2, "too short");
    assert_eq!(code(&run(&dir, &["show", "zzzzzzzz"])), 2, "not hex");
    assert_eq!(code(&run(&dir, &["show", "000000000000"])), 4, "no such id");
    assert_eq!(code(&run(&dir, &["show", &"0".repeat(32)])), 4);
    assert_eq!(code(&run(&dir, &["conflicts", "show", "abcdef"])), 4);
    // A store that does not exist yet answers as an empty one, and is not created.
    let missing = tmp.path().join("missing");
    for args in
        [&["list"][..], &["recall", "anything"], &["log"], &["conflicts", "list"], &["stats"], &["export"], &["verify"]]
    {
        let out = run(&missing, args);
        assert_eq!(code(&out), 0, "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("no store at"), "{args:?} notes it");
    }
    assert_eq!(json(&missing, &["list"])["memories"], serde_json::json!([]));
    assert_eq!(json(&missing, &["verify"])["ok"], true);
    assert_eq!(code(&run(&missing, &["show", "000000000000"])), 4);
    assert_eq!(code(&run(&missing, &["history", "000000000000"])), 4);
    let auto = run(&missing, &["conflicts", "auto"]);
    assert_eq!(code(&auto), 2, "no model: says so first");
    assert!(String::from_utf8_lossy(&auto.stderr).contains("needs a model"));
    assert!(!missing.exists(), "reads create no store");
}

#[test]
fn idempotency_key_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let a = json(&dir, &["save", "--idempotency-key", "k-1", "billing deploys on Tuesdays"]);
    let b = json(&dir, &["save", "--idempotency-key", "k-1", "billing deploys on Tuesdays"]);
    assert_eq!(b["replayed"], true);
    assert_eq!(a["memory_id"], b["memory_id"]);
    assert_eq!(a["seqs"], b["seqs"]);
    assert_eq!(head(&dir), 2);
}

#[test]
fn a_conflict_through_the_cli_resolved_reverted_and_audited() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let old = json(&dir, &["save", "The billing service runs on Postgres 16"]);
    let new = json(&dir, &["save", "The billing service runs on Postgres 17"]);
    assert_eq!(new["outcome"], "conflict");
    let cid = new["conflict_id"].as_str().unwrap().to_string();
    let list = json(&dir, &["conflicts", "list"]);
    let c = &list["conflicts"][0];
    for field in ["conflict_id", "status", "incoming", "candidates", "reasons", "opened_at", "resolution"] {
        assert!(c.get(field).is_some(), "conflict lacks {field}");
    }
    assert_eq!(c["status"], "pending");
    assert_eq!(c["candidates"][0], old["memory_id"]);

    let why = json(&dir, &["why", new["memory_id"].as_str().unwrap(), old["memory_id"].as_str().unwrap()]);
    let d = &why["decisions"][0];
    for field in
        ["seq", "incoming", "candidate", "method", "scores", "relation", "gate", "thresholds", "reason", "outcome"]
    {
        assert!(d.get(field).is_some(), "decision lacks {field}");
    }
    assert_eq!(d["relation"], "contradictory");

    // Human output of conflicts show names both sides and the commands to resolve.
    let show = String::from_utf8(run(&dir, &["conflicts", "show", &cid[..8]]).stdout).unwrap();
    assert!(show.contains("Postgres 16") && show.contains("Postgres 17") && show.contains("--keep-new"), "{show}");

    let r = json(&dir, &["conflicts", "resolve", &cid[..8], "--keep-new", "--note", "upgraded"]);
    assert_eq!(r["status"], "resolved");
    assert_eq!(code(&run(&dir, &["conflicts", "resolve", &cid, "--keep-both"])), 3, "already resolved");
    assert_eq!(code(&run(&dir, &["conflicts", "resolve", &cid])), 2, "an action is required");
    let h = json(&dir, &["history", old["memory_id"].as_str().unwrap()]);
    assert_eq!(h["versions"].as_array().unwrap().len(), 2);
    json(&dir, &["conflicts", "revert", &cid]);
    assert_eq!(json(&dir, &["conflicts", "list"])["conflicts"].as_array().unwrap().len(), 1);
    assert_eq!(json(&dir, &["conflicts", "list", "--status", "all"])["conflicts"][0]["status"], "pending");
    let verify = json(&dir, &["verify"]);
    assert_eq!(verify["views_consistent"], true);
}

#[test]
fn update_with_a_stale_expected_version_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let a = json(&dir, &["save", "the staging db runs on Postgres 16"]);
    let id = a["memory_id"].as_str().unwrap();
    let u = json(&dir, &["update", id, "the staging db runs on Postgres 17", "--expect-version", "1"]);
    assert_eq!(u["version"], 2);
    let before = head(&dir);
    let out = run(&dir, &["update", id, "again", "--expect-version", "1"]);
    assert_eq!(code(&out), 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("current version is 2"));
    assert_eq!(head(&dir), before);
    json(&dir, &["forget", id]);
    assert_eq!(json(&dir, &["list"])["memories"].as_array().unwrap().len(), 0);
    assert_eq!(json(&dir, &["list", "--status", "all"])["memories"].as_array().unwrap().len(), 2);
}

#[test]
fn export_then_import_into_a_fresh_store_and_again() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    json(&src, &["save", "The billing service runs on Postgres 16"]);
    json(&src, &["save", "The billing service runs on Postgres 17"]);
    let file = tmp.path().join("stream.jsonl");
    assert!(run(&src, &["export", "-o", file.to_str().unwrap()]).status.success());
    let dst = tmp.path().join("dst");
    let r = json(&dst, &["import", file.to_str().unwrap()]);
    assert_eq!(r["appended"], head(&src));
    let again = json(&dst, &["import", file.to_str().unwrap()]);
    assert_eq!(again["appended"], 0);
    assert_eq!(json(&dst, &["conflicts", "list"])["conflicts"].as_array().unwrap().len(), 1, "views caught up");
    // A tampered stream is refused with exit 2, nothing written.
    let text = std::fs::read_to_string(&file).unwrap().replace("Postgres 17", "Postgres 18");
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, text).unwrap();
    let other = tmp.path().join("other");
    let out = run(&other, &["import", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("tampered"));
    assert!(!other.exists(), "a refused stream does not even create the store");
    // Into an existing store: its head does not move.
    let out = run(&src, &["import", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert_eq!(head(&src), 6);
}

#[test]
fn classify_pairs_is_a_dry_run_in_json_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let pairs = tmp.path().join("pairs.jsonl");
    std::fs::write(
        &pairs,
        "{\"id\":\"p1\",\"a\":\"Deploy on Tuesday\",\"b\":\"Do not deploy on Tuesday\"}\n{\"id\":2,\"a\":\"x y z\",\"b\":\"Hana has a dog\"}\n",
    )
    .unwrap();
    let dir = tmp.path().join("store");
    let lines = json_lines(&dir, &["classify", "--pairs", pairs.to_str().unwrap()]);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["id"], "p1");
    assert_eq!(lines[0]["relation"], "contradictory");
    for field in ["id", "relation", "score", "method", "gate"] {
        assert!(lines[1].get(field).is_some());
    }
    assert!(!dir.exists(), "a dry run writes nothing");
}

#[test]
fn save_from_a_file_answers_each_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let input = "{\"text\":\"Hana has a dog called Mochi\"}\n{\"text\":\"\"}\nnot json\n{\"text\":\"The warehouse keeps raw events for 13 months\",\"type\":\"fact\"}\n";
    let file = tmp.path().join("in.jsonl");
    std::fs::write(&file, input).unwrap();
    let out = run(&dir, &["--json", "save", "--from", file.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "a refused line makes the exit code 2");
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["outcome"], "added");
    assert_eq!(lines[1]["line"], 2);
    assert_eq!(lines[2]["line"], 3);
    assert_eq!(lines[3]["outcome"], "added");
}

/// A writer feeding `save --from -` gets each line's answer before it sends the next line, even
/// when it has already sent part of that line (the reading thread hands lines over in chunks,
/// but never holds a whole line back to wait for more input).
#[test]
fn save_from_a_pipe_answers_a_line_before_the_next_is_complete() {
    use std::io::{BufRead, BufReader};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let mut child = save_from_stdin(&dir);
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, answers) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if send.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    // A guard against a hang, not a timing assertion: the answer comes at once or never.
    let next = |what: &str| {
        answers
            .recv_timeout(std::time::Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("no answer to {what} ({e}): a line was held back"))
    };
    let pairs = [
        ("Hana has a dog called Mochi", "The warehouse keeps raw events for 13 months"),
        ("Deploys to staging happen on Tuesdays", "Priya prefers tea over coffee in the morning"),
    ];
    for (whole, split) in pairs {
        let (head, tail) = split.split_at(split.len() / 2);
        stdin.write_all(format!("{{\"text\": \"{whole}\"}}\n{{\"text\": \"{head}").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let answer: Value = serde_json::from_str(&next(whole)).unwrap();
        assert_eq!(answer["outcome"], "added", "{whole}: {answer}");
        stdin.write_all(format!("{tail}\"}}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let answer: Value = serde_json::from_str(&next(split)).unwrap();
        assert_eq!(answer["outcome"], "added", "{split}: {answer}");
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_second_process_waits_for_the_lock_then_fails_clearly() {
    use std::io::{BufRead, BufReader};
    if THROUGH_SERVER {
        // Through a server nobody waits for the store's lock: the server holds it.
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    json(&dir, &["save", "first"]);
    // A bulk save reading stdin holds the store while its input stays open.
    let mut holder = save_from_stdin(&dir);
    let mut stdin = holder.stdin.take().unwrap();
    stdin.write_all(b"{\"text\": \"held\"}\n").unwrap();
    stdin.flush().unwrap();
    let mut first = String::new();
    BufReader::new(holder.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.contains("\"outcome\":\"added\""), "{first}");
    // Now it certainly holds the lock.
    let out = run(&dir, &["--wait", "0.3", "save", "blocked"]);
    assert_eq!(code(&out), 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another memledger process holds the store"), "{err}");
    drop(stdin);
    assert!(holder.wait().unwrap().success());
    // Once it is gone, the same command goes through.
    assert_eq!(json(&dir, &["save", "not blocked"])["outcome"], "added");
}

#[test]
fn reads_as_of_a_seq() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let old = json(&dir, &["save", "The billing service runs on Postgres 16"]);
    let seq = head(&dir).to_string();
    let new = json(&dir, &["save", "The billing service runs on Postgres 17"]);
    json(&dir, &["conflicts", "resolve", new["conflict_id"].as_str().unwrap(), "--keep-existing"]);
    let id = old["memory_id"].as_str().unwrap();
    assert_eq!(json(&dir, &["list", "--as-of", &seq])["memories"].as_array().unwrap().len(), 1);
    assert_eq!(json(&dir, &["list"])["memories"].as_array().unwrap().len(), 1);
    assert_eq!(json(&dir, &["list", "--status", "all"])["memories"].as_array().unwrap().len(), 2);
    assert_eq!(json(&dir, &["conflicts", "list", "--as-of", &seq])["conflicts"].as_array().unwrap().len(), 0);
    assert_eq!(json(&dir, &["show", id, "--as-of", &seq])["status"], "active");
    assert_eq!(code(&run(&dir, &["history", id, "--as-of", "0"])), 4, "before it was saved");
    assert_eq!(code(&run(&dir, &["list", "--as-of", "last week"])), 2);
}

/// Expiry on the command line (docs/cli.md): a memory saved with `--expires-at` reads `expired`
/// from then at any `--valid-at`, is left out of recall and list, and `update --ttl` or
/// `--no-expiry` renews or clears it as a new version; each read names its time.
#[test]
fn an_expiry_ends_a_memory_at_its_time_and_an_update_renews_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let text = "The staging freeze lasts until the 15th";
    let saved =
        json(&dir, &["save", "--effective-at", "2026-12-01T00:00:00Z", "--expires-at", "2026-12-15T00:00:00Z", text]);
    assert_eq!(saved["expires_at"], "2026-12-15T00:00:00.000000Z", "{saved}");
    let id = saved["memory_id"].as_str().unwrap();
    let query = "is staging frozen";
    let (before, after) = ("2026-12-10T00:00:00Z", "2026-12-16T00:00:00Z");

    let found = json(&dir, &["recall", query, "--valid-at", before]);
    assert_eq!(found["results"][0]["expires_at"], "2026-12-15T00:00:00.000000Z", "{found}");
    let human = String::from_utf8(run(&dir, &["recall", query, "--valid-at", before]).stdout).unwrap();
    assert!(human.contains("expires 2026-12-15T00:00:00Z"), "{human}");
    assert_eq!(json(&dir, &["recall", query, "--valid-at", after])["results"].as_array().unwrap().len(), 0);
    assert_eq!(json(&dir, &["list", "--valid-at", after])["memories"].as_array().unwrap().len(), 0);
    let expired = json(&dir, &["list", "--status", "expired", "--valid-at", after]);
    assert_eq!(expired["memories"][0]["memory_id"], id, "{expired}");
    assert_eq!(json(&dir, &["show", id, "--valid-at", after])["status"], "expired");
    let shown = String::from_utf8(run(&dir, &["show", id, "--valid-at", after]).stdout).unwrap();
    assert!(shown.contains("expired 2026-12-15T00:00:00Z"), "{shown}");
    let h = String::from_utf8(run(&dir, &["history", id, "--valid-at", after]).stdout).unwrap();
    assert!(h.contains("(expired 2026-12-15T00:00:00Z)"), "{h}");
    let why = json(&dir, &["why", id]);
    assert_eq!(why["expires_at"], "2026-12-15T00:00:00.000000Z", "{why}");

    // Renewed by an update of the expiry alone: version 2, the same text, current after the
    // first expiry.
    let renewed = json(&dir, &["update", id, "--expires-at", "2026-12-22T00:00:00Z"]);
    assert_eq!(renewed["version"], 2, "{renewed}");
    let v2 = renewed["memory_id"].as_str().unwrap();
    let shown = json(&dir, &["show", v2, "--valid-at", after]);
    assert_eq!((shown["status"].as_str(), shown["text"].as_str()), (Some("active"), Some(text)), "{shown}");
    // Saving the same text with a time to live renews it again; --no-expiry clears it.
    let again = json(&dir, &["save", "--ttl", "14d", text]);
    assert_eq!((again["outcome"].as_str(), again["version"].as_u64()), (Some("versioned"), Some(3)), "{again}");
    assert_eq!(json(&dir, &["show", again["memory_id"].as_str().unwrap()])["ttl_seconds"], 14 * 86_400);
    let cleared = json(&dir, &["update", id, "--no-expiry"]);
    assert_eq!(json(&dir, &["show", cleared["memory_id"].as_str().unwrap()])["expires_at"], serde_json::Value::Null);

    // Bad expiries: exit 2, nothing written.
    let before_head = head(&dir);
    for args in [
        vec!["save", "--ttl", "a while", "x"],
        vec!["save", "--expires-at", "next week", "x"],
        vec!["save", "--ttl", "1d", "--no-expiry", "x"],
        vec!["update", id, "--ttl", "0s"],
        vec!["update", id],
    ] {
        assert_eq!(code(&run(&dir, &args)), 2, "{args:?}");
    }
    assert_eq!(head(&dir), before_head);
}

/// Valid time on the command line (docs/cli.md): Tuesday from June, Thursday from 2027-01-10; each
/// read names the time it asks about with `--valid-at`, so no answer depends on the clock.
#[test]
fn valid_at_reads_answer_what_was_true_then() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let tue = json(
        &dir,
        &["save", "--effective-at", "2026-06-01T00:00:00Z", "The billing team deploys to staging on Tuesdays"],
    );
    let tue_seq = tue["seqs"].as_array().unwrap().last().unwrap().as_u64().unwrap().to_string();
    let thu = json(
        &dir,
        &["save", "--effective-at", "2027-01-10T00:00:00Z", "The billing team deploys to staging on Thursdays"],
    );
    assert_eq!(thu["settled_by_effective_time"], true);
    let (tue_id, thu_id) = (tue["memory_id"].as_str().unwrap(), thu["memory_id"].as_str().unwrap());
    let query = "when does the billing team deploy to staging";

    let before = json(&dir, &["recall", query, "--valid-at", "2026-12-01T00:00:00Z"]);
    let hit = &before["results"][0];
    assert_eq!((hit["memory_id"].as_str(), hit["status"].as_str()), (Some(tue_id), Some("active")), "{before}");
    assert_eq!(hit["valid_from"], "2026-06-01T00:00:00.000000Z");
    assert_eq!(hit["scheduled"][0]["memory_id"], thu_id);
    assert_eq!(hit["scheduled"][0]["valid_from"], "2027-01-10T00:00:00.000000Z");
    let text = String::from_utf8(run(&dir, &["recall", query, "--valid-at", "2026-12-01T00:00:00Z"]).stdout).unwrap();
    assert!(text.contains("from 2027-01-10T00:00:00Z: The billing team deploys to staging on Thursdays"), "{text}");

    let after = json(&dir, &["recall", query, "--valid-at", "2027-01-10T00:00:00Z"]);
    assert_eq!(after["results"][0]["memory_id"], thu_id);
    assert_eq!(after["results"][0]["scheduled"].as_array().unwrap().len(), 0);

    // July 2026 is Tuesday, asked now or as the store stood before Thursday was saved.
    for extra in [vec![], vec!["--as-of", tue_seq.as_str()]] {
        let args = [&["recall", query, "--valid-at", "2026-07-01T00:00:00Z"], extra.as_slice()].concat();
        assert_eq!(json(&dir, &args)["results"][0]["memory_id"], tue_id, "{args:?}");
    }

    let shown = json(&dir, &["show", thu_id, "--valid-at", "2026-12-01T00:00:00Z"]);
    assert_eq!((shown["status"].as_str(), shown["valid_to"].as_null()), (Some("scheduled"), Some(())));
    assert_eq!(shown["independent_sources"], 1);
    let scheduled = json(&dir, &["list", "--status", "scheduled", "--valid-at", "2026-12-01T00:00:00Z"]);
    assert_eq!(scheduled["memories"].as_array().unwrap().len(), 1);
    let h = json(&dir, &["history", tue_id, "--valid-at", "2026-12-01T00:00:00Z"]);
    let statuses: Vec<(&str, &str)> = h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["status"].as_str().unwrap(), v["valid_from"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, vec![("scheduled", "2027-01-10T00:00:00.000000Z"), ("active", "2026-06-01T00:00:00.000000Z")]);
    let timeline =
        String::from_utf8(run(&dir, &["history", tue_id, "--valid-at", "2026-12-01T00:00:00Z"]).stdout).unwrap();
    assert!(timeline.contains("2026-06-01T00:00:00Z → 2027-01-10T00:00:00Z"), "{timeline}");

    // A malformed time is refused: exit 2, nothing written.
    let before_head = head(&dir);
    for cmd in [vec!["recall", query], vec!["show", tue_id], vec!["list"], vec!["history", tue_id]] {
        let args = [cmd.as_slice(), &["--valid-at", "next tuesday"]].concat();
        assert_eq!(code(&run(&dir, &args)), 2, "{args:?}");
    }
    assert_eq!(head(&dir), before_head);
    let v = json(&dir, &["verify"]);
    assert_eq!((v["ok"].as_bool(), v["views_consistent"].as_bool()), (Some(true), Some(true)));
}
