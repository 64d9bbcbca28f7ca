//! Several `memledger` processes on one store at once.
//!
//! RocksDB lets one process hold a store; the others wait for it (`--wait`, ADR 0002). These
//! tests check what that promises: parallel writers all succeed and lose nothing, two
//! compare-and-set updates on one version have exactly one winner, and a reader running between
//! writers only ever sees whole commands. Nothing is coordinated with sleeps and nothing asserts
//! on timing: every check holds whatever order the processes get the lock in.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::support;

/// `memledger --json ARGS…`, which must succeed: its JSON lines. Every process waits up to two
/// minutes for the lock: the test is about correctness, not speed.
fn ok_json(dir: &Path, args: &[&str]) -> Vec<Value> {
    let args = [&["--wait", "120", "--json"], args].concat();
    support::lines(&support::run(dir, &args), &args)
}

/// A memory text no other line resembles: each writer and line has its own made-up words.
fn text(writer: usize, i: usize) -> String {
    let nouns = ["harbor", "lantern", "orchard", "glacier", "meadow", "quarry", "canyon", "estuary"];
    let verbs = ["catalogues", "inspects", "sketches", "measures", "photographs"];
    format!(
        "surveyor w{writer}x{i} {} the {} near zq{}{}k",
        verbs[(writer + i) % verbs.len()],
        nouns[(i * 3 + writer) % nouns.len()],
        writer * 1000 + i,
        ["alpha", "bravo", "delta", "kilo"][writer % 4]
    )
}

/// What a reader checks on one `list --status all`: every lineage (the versions sharing a root)
/// is whole — versions 1..=n each present once — and only its newest version may be active.
/// A command applied by halves would leave a new version without its predecessor turning stale,
/// or a gap. Returns the number of memories seen.
fn check_lineages(list: &Value) -> usize {
    let memories = list["memories"].as_array().expect("memories array");
    let mut by_root: HashMap<&str, BTreeMap<u64, &str>> = HashMap::new();
    for m in memories {
        let root = m["root_id"].as_str().unwrap();
        let version = m["version"].as_u64().unwrap();
        let status = m["status"].as_str().unwrap();
        let previous = by_root.entry(root).or_default().insert(version, status);
        assert!(previous.is_none(), "root {root} lists version {version} twice");
    }
    for (root, versions) in &by_root {
        let n = versions.len() as u64;
        assert_eq!(versions.keys().copied().collect::<Vec<_>>(), (1..=n).collect::<Vec<_>>(), "root {root}: a gap");
        for (v, status) in versions {
            if *v < n {
                assert_ne!(*status, "active", "root {root}: version {v} still active beside version {n}");
            }
        }
    }
    memories.len()
}

#[test]
fn four_writers_in_parallel_lose_nothing_while_readers_see_whole_commands() {
    const WRITERS: usize = 4;
    const SINGLE: usize = 8; // separate `save` processes per writer
    const BULK: usize = 17; // lines of one `save --from` per writer
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().join("store");
    ok_json(&dir, &["save", "the store exists before the writers start"]);

    let writing = Arc::new(AtomicBool::new(true));
    // Readers: loop until the writers are done; each pass must be a whole state.
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let dir = dir.clone();
            let writing = writing.clone();
            std::thread::spawn(move || {
                let mut passes = 0usize;
                let mut last_seen = 0usize;
                let mut last_head = 0u64;
                // At least one pass, at most 200: the loop ends when the writers do.
                while passes == 0 || (writing.load(Ordering::SeqCst) && passes < 200) {
                    if r == 0 {
                        let list = ok_json(&dir, &["list", "--status", "all", "--limit", "1000000"]);
                        let seen = check_lineages(&list[0]);
                        assert!(seen >= last_seen, "a reader saw memories disappear ({last_seen} → {seen})");
                        last_seen = seen;
                    } else {
                        let v = &ok_json(&dir, &["verify"])[0];
                        assert_eq!(v["ok"], true, "verify during writes: {v}");
                        assert_eq!(v["views_consistent"], true, "views during writes: {v}");
                        let head = v["head_seq"].as_u64().unwrap();
                        assert!(head >= last_head, "the head went backwards");
                        last_head = head;
                    }
                    passes += 1;
                }
                passes
            })
        })
        .collect();

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                // (line index, memory id) for every acknowledged save.
                let mut acked: Vec<(usize, String)> = Vec::new();
                let mut updated: Vec<String> = Vec::new();
                for i in 0..SINGLE {
                    let key = format!("w{w}-line-{i}");
                    let s = &ok_json(&dir, &["save", "--idempotency-key", &key, &text(w, i)])[0];
                    acked.push((i, s["memory_id"].as_str().unwrap().to_string()));
                    if i == 2 {
                        // A multi-event command among the saves: a new version of this writer's own memory.
                        let id = s["memory_id"].as_str().unwrap().to_string();
                        let u = &ok_json(
                            &dir,
                            &["update", &id, &format!("{} (revised)", text(w, i)), "--expect-version", "1"],
                        )[0];
                        assert_eq!(u["version"], 2);
                        updated.push(u["memory_id"].as_str().unwrap().to_string());
                    }
                }
                let file = dir.with_file_name(format!("writer-{w}.jsonl"));
                let lines: String = (SINGLE..SINGLE + BULK)
                    .map(|i| {
                        serde_json::json!({"text": text(w, i), "idempotency_key": format!("w{w}-line-{i}")}).to_string()
                            + "\n"
                    })
                    .collect();
                std::fs::write(&file, lines).unwrap();
                let answers = ok_json(&dir, &["save", "--from", file.to_str().unwrap()]);
                assert_eq!(answers.len(), BULK, "one answer per line");
                for (k, a) in answers.iter().enumerate() {
                    let id = a["memory_id"].as_str().unwrap_or_else(|| panic!("writer {w} line {k}: {a}"));
                    acked.push((SINGLE + k, id.to_string()));
                }
                (acked, updated)
            })
        })
        .collect();

    let mut acked: HashMap<String, String> = HashMap::new();
    let mut updated = Vec::new();
    for (w, h) in writers.into_iter().enumerate() {
        let (mine, ups) = h.join().expect("a writer failed");
        for (i, id) in mine {
            acked.insert(format!("w{w}-line-{i}"), id);
        }
        updated.extend(ups);
    }
    writing.store(false, Ordering::SeqCst);
    let passes: Vec<usize> = readers.into_iter().map(|h| h.join().expect("a reader saw a broken state")).collect();
    println!("concurrency: {} acknowledged saves, reader passes {passes:?}", acked.len());
    assert_eq!(acked.len(), WRITERS * (SINGLE + BULK));

    // Nothing lost: every key committed once, seqs gap-free, every acknowledged memory present.
    let log = ok_json(&dir, &["log", "--limit", "100000000"]);
    let mut keys: HashMap<String, usize> = HashMap::new();
    for (i, e) in log.iter().enumerate() {
        assert_eq!(e["seq"].as_u64().unwrap(), i as u64 + 1, "gap-free seqs");
        if let Some(k) = e["idempotency_key"].as_str() {
            *keys.entry(k.to_string()).or_default() += 1;
        }
    }
    for key in acked.keys() {
        assert_eq!(keys.get(key), Some(&1), "{key} committed exactly once");
    }
    let list = ok_json(&dir, &["list", "--status", "all", "--limit", "1000000"]);
    check_lineages(&list[0]);
    let present: HashSet<&str> =
        list[0]["memories"].as_array().unwrap().iter().map(|m| m["memory_id"].as_str().unwrap()).collect();
    for (key, id) in &acked {
        assert!(present.contains(id.as_str()), "acknowledged {key} ({id}) is missing");
    }
    for id in &updated {
        assert!(present.contains(id.as_str()), "acknowledged update {id} is missing");
    }
    let v = &ok_json(&dir, &["verify"])[0];
    assert_eq!((v["ok"].as_bool(), v["views_consistent"].as_bool()), (Some(true), Some(true)), "{v}");
    assert_eq!(v["head_seq"].as_u64().unwrap(), log.len() as u64);
}

#[test]
fn two_updates_racing_on_one_version_have_exactly_one_winner() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let s = &ok_json(&dir, &["save", "the staging cluster runs Postgres 15"])[0];
    let id = s["memory_id"].as_str().unwrap().to_string();
    // Several rounds: each round, two processes both expect the current version.
    for round in 1..=4u64 {
        let expect = round.to_string();
        let racers: Vec<_> = ["left", "right"]
            .iter()
            .map(|side| {
                support::memledger(&dir)
                    .args(["--wait", "120", "--json", "update", &id])
                    .arg(format!("the staging cluster runs Postgres {} ({side})", 15 + round))
                    .args(["--expect-version", &expect])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outs: Vec<Output> = racers.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
        let codes: Vec<i32> = outs.iter().map(|o| o.status.code().unwrap()).collect();
        let mut sorted = codes.clone();
        sorted.sort();
        assert_eq!(sorted, vec![0, 3], "round {round}: exactly one winner, the other exits 3 (codes {codes:?})");
        let loser = outs.iter().find(|o| o.status.code() == Some(3)).unwrap();
        let err = String::from_utf8_lossy(&loser.stderr);
        assert!(err.contains(&format!("current version is {}", round + 1)), "round {round}: {err}");
        let winner: Value = serde_json::from_slice(&outs.iter().find(|o| o.status.success()).unwrap().stdout).unwrap();
        assert_eq!(winner["version"].as_u64(), Some(round + 1));
    }
    let h = &ok_json(&dir, &["history", &id])[0];
    assert_eq!(h["versions"].as_array().unwrap().len(), 5, "one new version per round, no more");
    let list = ok_json(&dir, &["list", "--status", "all"]);
    check_lineages(&list[0]);
    let v = &ok_json(&dir, &["verify"])[0];
    assert_eq!((v["ok"].as_bool(), v["views_consistent"].as_bool()), (Some(true), Some(true)), "{v}");
}

/// Threads spinning on every core until dropped: the load under which the creation race once
/// lost a save (each process then holds the store for longer, and more of them queue).
struct BusyCores {
    running: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyCores {
    fn start() -> BusyCores {
        let running = Arc::new(AtomicBool::new(true));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..cores)
            .map(|_| {
                let running = running.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while running.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                })
            })
            .collect();
        BusyCores { running, threads }
    }
}

impl Drop for BusyCores {
    fn drop(&mut self) {
        self.running.store(false, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[test]
fn sixteen_processes_saving_the_first_memory_of_a_new_store_all_succeed() {
    const PROCESSES: usize = 16;
    // `MEMLEDGER_CREATE_RACE_ROUNDS` runs more rounds (the race once failed 1 save in 320).
    let rounds: usize = std::env::var("MEMLEDGER_CREATE_RACE_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(4);
    let tmp = tempfile::tempdir().unwrap();
    let _busy = BusyCores::start();
    for round in 0..rounds {
        let dir = tmp.path().join(format!("round-{round}"));
        // The default `--wait`: what a person's saves get.
        let savers: Vec<_> = (0..PROCESSES)
            .map(|i| {
                support::memledger(&dir)
                    .args(["--json", "save", &text(i, round)])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for (i, saver) in savers.into_iter().enumerate() {
            let out = saver.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: save {i} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let log = ok_json(&dir, &["log"]);
        let observed = log.iter().filter(|e| e["type"] == "memory_observed").count();
        assert_eq!(observed, PROCESSES, "round {round}: every save observed once");
        let v = &ok_json(&dir, &["verify"])[0];
        assert_eq!((v["ok"].as_bool(), v["views_consistent"].as_bool()), (Some(true), Some(true)), "{v}");
    }
}
