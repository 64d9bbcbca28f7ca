//! The crash loop, extended: SIGKILL `rebuild`, `import` and
//! `conflicts resolve` midway, then check that nothing is half-done. A killed rebuild leaves
//! views equal to a fresh replay once reopened; a killed import leaves the store unchanged or
//! fully imported, never partial; a killed resolve leaves the conflict resolved or pending, never
//! half. The kill moments are drawn from a seeded generator (the seed is printed;
//! MEMLEDGER_CRASH_SEED replays it); no assertion depends on where the kill lands.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rand::Rng;
use serde_json::Value;

use crate::support::{self, json, json_lines, run};

/// Start a command and SIGKILL it after `delay_us` microseconds (0: at once). Returns whether it
/// had already finished on its own.
fn kill_after(dir: &Path, args: &[&str], delay_us: u64) -> bool {
    let mut child =
        support::memledger(dir).arg("--json").args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    // The delay picks the kill moment; nothing waits on it for coordination.
    std::thread::sleep(Duration::from_micros(delay_us));
    let finished = matches!(child.try_wait(), Ok(Some(_)));
    let _ = child.kill();
    let _ = child.wait();
    finished
}

fn assert_sound(dir: &Path, what: &str) {
    let v = json(dir, &["verify"]);
    assert_eq!(v["ok"], true, "{what}: {v}");
    assert_eq!(v["views_consistent"], true, "{what}: views differ from a fresh replay: {v}");
}

fn save_many(dir: &Path, lines: impl Iterator<Item = String>) -> Vec<Value> {
    let file = dir.with_extension("input.jsonl");
    std::fs::write(&file, lines.map(|t| serde_json::json!({ "text": t }).to_string() + "\n").collect::<String>())
        .unwrap();
    json_lines(dir, &["save", "--from", file.to_str().unwrap()])
}

fn text(i: usize) -> String {
    let who = ["Ana", "Bruno", "Chen", "Dara", "Elif", "Farah"];
    format!("{} maintains the ledger-{i} pipeline in region r{}", who[i % who.len()], i % 11)
}

#[test]
fn a_killed_rebuild_leaves_views_equal_to_a_fresh_replay() {
    let mut rng = support::seeded("rebuild");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    // Enough events (about 10,000) for a rebuild to write several chunks, one being applied
    // while the one before is written.
    save_many(&dir, (0..1500).map(text));
    let before = json(&dir, &["list", "--status", "all", "--limit", "100000"]);
    // Kill moments are drawn over the length of one whole rebuild (process start included), so
    // that most kills land while it runs, however fast this machine is. Nothing asserts on it.
    let started = std::time::Instant::now();
    assert!(run(&dir, &["rebuild"]).status.success());
    let whole = (started.elapsed().as_micros() as u64).max(1_000);
    let mut finished = 0;
    for round in 0..6 {
        let view: &[&str] = if round % 2 == 0 { &["rebuild"] } else { &["rebuild", "--view", "beliefs"] };
        finished += kill_after(&dir, view, rng.random_range(0..whole)) as usize;
        assert_sound(&dir, &format!("after killed rebuild {round}"));
        assert_eq!(
            json(&dir, &["list", "--status", "all", "--limit", "100000"]),
            before,
            "round {round}: views changed"
        );
    }
    println!("rebuild: 6 kills ({finished} had already finished), views equal a fresh replay each time");
}

#[test]
fn a_killed_import_is_all_or_nothing() {
    let mut rng = support::seeded("import");
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    save_many(&src, (0..200).map(text));
    let total = json(&src, &["verify"])["head_seq"].as_u64().unwrap();
    let file = tmp.path().join("stream.jsonl");
    assert!(run(&src, &["export", "-o", file.to_str().unwrap()]).status.success());
    let (mut none, mut all) = (0, 0);
    for round in 0..8 {
        let dst = tmp.path().join(format!("dst-{round}"));
        if round % 2 == 1 {
            // Half the rounds import into an existing store that holds a prefix of the stream.
            let prefix: String =
                std::fs::read_to_string(&file).unwrap().lines().take(20).map(|l| l.to_string() + "\n").collect();
            let p = tmp.path().join(format!("prefix-{round}.jsonl"));
            std::fs::write(&p, prefix).unwrap();
            json(&dst, &["import", p.to_str().unwrap()]);
        }
        let start = if round % 2 == 1 { 20 } else { 0 };
        kill_after(&dst, &["import", file.to_str().unwrap()], rng.random_range(0..500_000));
        if !dst.join("CURRENT").exists() {
            none += 1; // killed before the store was even created
            continue;
        }
        let head = json(&dst, &["verify"])["head_seq"].as_u64().unwrap();
        assert!(
            head == start || head == total,
            "round {round}: a partial import (head {head}, expected {start} or {total})"
        );
        if head == total {
            all += 1;
        } else {
            none += 1;
        }
        assert_sound(&dst, &format!("after killed import {round}"));
        // Finishing the import afterwards brings it to the same state as the source.
        let r = json(&dst, &["import", file.to_str().unwrap()]);
        assert_eq!(r["head_seq"].as_u64(), Some(total));
        assert_sound(&dst, &format!("after re-import {round}"));
    }
    println!("import: 8 kills, {none} left the store unchanged, {all} fully imported, none partial");
}

#[test]
fn a_killed_resolve_is_resolved_or_pending_never_half() {
    let mut rng = support::seeded("resolve");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let n = 8;
    let lines = (0..n).flat_map(|i| [16, 17].map(move |v| format!("The billing-{i} service runs on Postgres {v}")));
    let saved = save_many(&dir, lines);
    let mut cases = Vec::new();
    for i in 0..n {
        let (old, new) = (&saved[2 * i], &saved[2 * i + 1]);
        assert_eq!(new["outcome"], "conflict", "{new}");
        cases.push((new["conflict_id"].as_str().unwrap().to_string(), old["memory_id"].as_str().unwrap().to_string()));
    }
    let (mut resolved, mut pending) = (0, 0);
    for (round, (cid, old)) in cases.iter().enumerate() {
        kill_after(&dir, &["conflicts", "resolve", cid, "--keep-new", "--note", "crash"], rng.random_range(0..400_000));
        assert_sound(&dir, &format!("after killed resolve {round}"));
        let c = json(&dir, &["conflicts", "show", cid]);
        let versions = json(&dir, &["history", old])["versions"].as_array().unwrap().len();
        let old_status = json(&dir, &["show", old])["status"].clone();
        match c["status"].as_str().unwrap() {
            "resolved" => {
                resolved += 1;
                assert_eq!(versions, 2, "round {round}: resolved, so the new version joined the lineage");
            }
            "pending" => {
                pending += 1;
                assert_eq!(versions, 1, "round {round}: pending, so nothing of the resolution applied");
                assert_eq!(old_status, "active", "round {round}: pending but the old memory changed");
                // It can still be resolved, once.
                json(&dir, &["conflicts", "resolve", cid, "--keep-new"]);
            }
            other => panic!("round {round}: status {other}"),
        }
    }
    assert_sound(&dir, "at the end");
    println!("resolve: {n} kills, {resolved} resolved, {pending} left pending, none half-applied");
}
