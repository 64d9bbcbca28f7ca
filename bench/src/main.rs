//! Benchmarks that print figures (never asserted in tests). Run in release:
//! `cargo run --release -p memledger-bench -- [append|save|all] [N]`.

use std::time::Instant;

use memledger_engine::{Memledger, OpenOptions, SaveRequest};
use memledger_ledger::{CommandMeta, Ledger, NewEvent};
use memledger_schemas::samples::sample_bodies;

fn per_sec(n: usize, secs: f64) -> String {
    format!("{:>10.0}/s", n as f64 / secs)
}

/// Ledger appends: one synced append per command, then group-committed batches.
fn append(n: usize) {
    let body = NewEvent::from(sample_bodies().remove(0));
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path(), &OpenOptions::default(), &[]).unwrap();
    let started = Instant::now();
    for _ in 0..n {
        let head = ledger.head().seq;
        ledger.append(head, &CommandMeta::new("bench"), vec![body.clone()]).unwrap();
    }
    let single = started.elapsed().as_secs_f64();
    println!(
        "ledger append, 1 event per synced write:     {} ({n} events, {:.3} ms each)",
        per_sec(n, single),
        single * 1e3 / n as f64
    );

    for group in [10usize, 100, 1000] {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(dir.path(), &OpenOptions::default(), &[]).unwrap();
        let total = (n * group).min(200_000);
        let started = Instant::now();
        for _ in 0..total / group {
            let head = ledger.head().seq;
            let commands = (0..group).map(|_| (CommandMeta::new("bench"), vec![body.clone()])).collect();
            ledger.append_group(head, commands, true).unwrap();
        }
        let secs = started.elapsed().as_secs_f64();
        println!("ledger append, {group:>4} commands per synced write: {} ({total} events)", per_sec(total, secs));
    }
}

/// Full saves with dedup through the engine.
fn save(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    let subjects = ["billing", "search", "payments", "auth", "warehouse", "mobile", "infra", "docs"];
    let started = Instant::now();
    for i in 0..n {
        let text = format!(
            "The {} service {} runs job {} on node {} every {} minutes",
            subjects[i % subjects.len()],
            i / 7,
            i,
            i % 13,
            i % 59
        );
        ml.save(SaveRequest { text, ..SaveRequest::default() }, "bench").unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "save with dedup, one synced command each:    {} ({n} saves, {:.3} ms each)",
        per_sec(n, secs),
        secs * 1e3 / n as f64
    );
    let started = Instant::now();
    let events = ml.rebuild(None, &mut |_| {}).unwrap();
    let secs = started.elapsed().as_secs_f64();
    println!("rebuild of every view:                       {} ({events} events)", per_sec(events as usize, secs));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("all");
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2000);
    println!("memledger-bench {what} n={n} (release build; figures from this machine)");
    if what == "append" || what == "all" {
        append(n);
    }
    if what == "save" || what == "all" {
        save(n);
    }
}
