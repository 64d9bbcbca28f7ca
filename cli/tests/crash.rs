//! The crash loop (RocksDB's db_crashtest idea): a parent feeds `memledger save --from -` lines
//! with an idempotency key each, reads every acknowledged result, and kills the child with
//! SIGKILL at random moments; it restarts the child with every line not yet acknowledged. At the
//! end every acknowledged memory is present exactly once, seqs are gap-free, `verify` is ok and
//! the views equal a fresh replay.
//!
//! The kill points are events (after the k-th acknowledgement), not timers; k is drawn from a
//! seeded generator whose seed is printed. `MEMLEDGER_CRASH_KILLS` sets how many kills (default
//! 12 in CI; tests/crash_loop.sh runs 1,000+).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use rand::Rng;
use serde_json::Value;

use crate::support::{self, json_lines as json};

fn line(i: usize) -> String {
    let people = ["Ana", "Bruno", "Chen", "Dara", "Elif", "Farah", "Goran", "Hana"];
    let what = ["reviews", "owns", "tests", "documents", "deploys", "monitors"];
    format!(
        "{{\"text\": \"{} {} the service-{} module on cluster c{}\", \"idempotency_key\": \"crash-line-{i}\"}}\n",
        people[i % people.len()],
        what[(i / 8) % what.len()],
        i,
        i % 17
    )
}

#[test]
fn acknowledged_saves_survive_sigkill() {
    let kills: usize = std::env::var("MEMLEDGER_CRASH_KILLS").ok().and_then(|s| s.parse().ok()).unwrap_or(12);
    let mut rng = support::seeded("crash loop");
    let total = kills * 30 + 50;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let mut acked: HashMap<usize, String> = HashMap::new();
    let mut next = 0usize;
    let mut killed = 0usize;
    while next < total {
        let mut child = support::memledger(&dir)
            .args(["--json", "save", "--from", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let first = next;
        let feed: String = (first..total).map(line).collect();
        // Feed from a thread: the child may die with the pipe full.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(feed.as_bytes());
        });
        let kill_after = if killed < kills { Some(rng.random_range(1..=40)) } else { None };
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let mut answered = 0usize;
        let mut buf = String::new();
        loop {
            buf.clear();
            if reader.read_line(&mut buf).unwrap_or(0) == 0 {
                break;
            }
            let v: Value = serde_json::from_str(&buf).unwrap_or_else(|e| panic!("{e}: {buf:?}"));
            let index = first + answered;
            let id = v["memory_id"].as_str().unwrap().to_string();
            if let Some(previous) = acked.insert(index, id.clone()) {
                assert_eq!(previous, id, "line {index} acknowledged twice with different ids");
            }
            answered += 1;
            if kill_after == Some(answered) {
                child.kill().unwrap();
                killed += 1;
                break;
            }
        }
        let _ = child.wait();
        let _ = writer.join();
        next = first + answered;
    }
    assert_eq!(killed, kills);
    assert_eq!(acked.len(), total);

    // Exactly one command per idempotency key, every seq present once, the chain intact.
    let log = json(&dir, &["log", "--limit", "100000000"]);
    let mut keys: HashMap<String, usize> = HashMap::new();
    for (i, e) in log.iter().enumerate() {
        assert_eq!(e["seq"].as_u64().unwrap(), i as u64 + 1, "gap-free seqs");
        if let Some(k) = e["idempotency_key"].as_str() {
            *keys.entry(k.to_string()).or_default() += 1;
        }
    }
    for i in 0..total {
        assert_eq!(keys.get(&format!("crash-line-{i}")), Some(&1), "line {i} committed exactly once");
    }
    let shown = json(&dir, &["list", "--status", "all", "--limit", "100000000"]);
    let present: std::collections::HashSet<String> =
        shown[0]["memories"].as_array().unwrap().iter().map(|m| m["memory_id"].as_str().unwrap().to_string()).collect();
    for (i, id) in &acked {
        assert!(present.contains(id), "acknowledged line {i} ({id}) is missing");
    }
    let verify = &json(&dir, &["verify"])[0];
    assert_eq!(verify["ok"], true);
    assert_eq!(verify["views_consistent"], true, "views equal a fresh replay");
    println!("crash loop: {killed} kills survived, {} events checked, {total} acknowledged saves present", log.len());
}
