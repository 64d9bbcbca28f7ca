//! Benchmarks that print figures (never asserted in tests). Run in release:
//!
//! `cargo run --release -p memledger-bench -- append [N]` — raw ledger appends, single and grouped;
//! `cargo run --release -p memledger-bench -- limit [N]` — ledger appends beside raw RocksDB puts of
//! the same bytes, and a synced save beside one raw put plus the pipeline's CPU time;
//! `cargo run --release -p memledger-bench -- store [SIZES…]` — stores of realistic memories
//! (default 1000 10000 100000): bulk save throughput with dedup, single-save latency, rebuild
//! speed and peak memory;
//! `cargo run --release -p memledger-bench -- fill DIR [N]` then `-- rebuild DIR [VIEW]` — a store
//! kept on disk, to rebuild (or profile) on a freshly opened store; `fill` also prints the CPU
//! seconds of each thread;
//! `cargo run --release -p memledger-bench -- analyses [N]` — the time and memory of one text's
//! analysis (the save pipeline caches one per active memory);
//! `cargo run --release -p memledger-bench -- recall DIR BIN [OTHER_BIN]` — recall on a filled
//! store with and without an embedder, in-process and as a `recall` process;
//! `cargo run --release -p memledger-bench -- pg URL [SECONDS] [MEMORIES]` — the shared ledger on
//! PostgreSQL beside `pgbench` on the same server (scripts/bench_pg.sh starts a throwaway one);
//! `cargo run --release -p memledger-bench -- traces [N] [ROUNDS]` — a save's and a recall's cost
//! with traces off and on, in alternated rounds;
//! `cargo run --release -p memledger-bench -- serve-saves BIN [SECONDS] [DELAY_US]` — synced saves/s
//! of 1, 8 and 32 writers in one process and through one server, with fsync as it is and delayed.

mod corpus;
mod mcp;
mod pg;
mod recall;
mod saves;
mod serve;
mod traces;

/// The allocator the `memledger` binary uses, so that the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

use memledger_engine::error::Exit;
use memledger_engine::{Durability, Memledger, OpenOptions, PreparedSave, SaveRequest};
use memledger_ledger::{CommandMeta, Ledger, NewEvent};
use memledger_schemas::samples::sample_bodies;

fn per_sec(n: usize, d: Duration) -> String {
    format!("{:>9.0}/s", n as f64 / d.as_secs_f64())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Peak resident memory of this process so far (Linux), in MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.to_string()))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
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
    let d = started.elapsed();
    println!(
        "ledger append, 1 event per synced write        {} ({n} events, {:.3} ms each)",
        per_sec(n, d),
        d.as_secs_f64() * 1e3 / n as f64
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
        println!(
            "ledger append, {group:>4} commands per synced write {} ({total} events)",
            per_sec(total, started.elapsed())
        );
    }
}

/// Speed beside the physical limit: raw RocksDB puts of the same bytes a ledger append writes
/// (synced and not), against ledger appends (single and group-committed) and full saves.
fn limit(n: usize) {
    use memledger_schemas::codec::encode_event;
    let events = memledger_schemas::samples::sample_chain();
    let payload = encode_event(&events[0]);
    let bytes_per_event = payload.len();
    let raw = |sync: bool, per_write: usize| -> Duration {
        let dir = tempfile::tempdir().unwrap();
        let db = rocksdb::DB::open_default(dir.path()).unwrap();
        let mut wo = rocksdb::WriteOptions::default();
        wo.set_sync(sync);
        let started = Instant::now();
        let mut seq = 0u64;
        for _ in 0..n / per_write {
            let mut batch = rocksdb::WriteBatch::default();
            for _ in 0..per_write {
                seq += 1;
                batch.put(seq.to_be_bytes(), &payload);
            }
            db.write_opt(batch, &wo).unwrap();
        }
        started.elapsed()
    };
    // The same puts through memledger's store (its RocksDB options, the events table, all the
    // view tables present): separates what the configuration costs from what the ledger adds.
    let store_put = |sync: bool, per_write: usize| -> Duration {
        let dir = tempfile::tempdir().unwrap();
        let views = ["beliefs", "edges", "conflicts", "audit", "embeddings"].map(Into::into);
        let store = memledger_ledger::store::Store::open(dir.path(), &views, true, Duration::from_secs(1)).unwrap();
        let started = Instant::now();
        let mut seq = 0u64;
        for _ in 0..n / per_write {
            let mut batch = memledger_ledger::store::Batch::default();
            for _ in 0..per_write {
                seq += 1;
                batch.put(memledger_ledger::store::CF_EVENTS, seq.to_be_bytes(), &payload);
            }
            store.write(batch, sync).unwrap();
        }
        started.elapsed()
    };
    // The ledger's commands are built before the clock starts, as the raw puts' bytes are: the
    // figure is the append (and dropping the events it returns), not the making of its input.
    let commands_in_groups = |per_group: usize| -> Vec<Vec<(CommandMeta, Vec<NewEvent>)>> {
        let body = NewEvent::from(events[0].body.clone());
        (0..n / per_group)
            .map(|_| (0..per_group).map(|_| (CommandMeta::new("bench"), vec![body.clone()])).collect())
            .collect()
    };
    let ledger_append = |sync: bool, per_write: usize| -> Duration {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(dir.path(), &OpenOptions::default(), &[]).unwrap();
        let writes = commands_in_groups(per_write);
        let started = Instant::now();
        for commands in writes {
            let head = ledger.head().seq;
            ledger.append_group(head, commands, sync).unwrap();
        }
        started.elapsed()
    };
    // What `save --from` does: each command appended on its own, unsynced, and one sync per
    // group (the engine appends line by line, so that each line's dedup sees the ones before).
    let ledger_append_then_sync = |per_sync: usize| -> Duration {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(dir.path(), &OpenOptions::default(), &[]).unwrap();
        let groups = commands_in_groups(per_sync);
        let started = Instant::now();
        for group in groups {
            for (meta, events) in group {
                let head = ledger.head().seq;
                ledger.append_with(head, &meta, events, false).unwrap();
            }
            ledger.sync().unwrap();
        }
        started.elapsed()
    };
    // Each pair is measured in rounds, raw and ledger interleaved, so that whatever else the
    // machine does falls on both; the best round of each is the figure (the closest either came
    // to the limit), and the median ratio is printed beside it.
    const ROUNDS: usize = 8;
    println!("one event is {bytes_per_event} bytes; {n} events per row; best of {ROUNDS} interleaved rounds");
    let rows: [(&str, bool, usize); 3] =
        [("synced", true, 1), ("unsynced", false, 1), ("100 per synced write", true, 100)];
    for (name, sync, per_write) in rows {
        let mut raws = Vec::new();
        let mut stores = Vec::new();
        let mut apps = Vec::new();
        let mut one_by_one = Vec::new();
        // Each round starts with a different measurement: whatever one leaves behind (its
        // files' deletion, the disk's write-back) falls on each of the others in turn.
        let kinds = if per_write > 1 { 4 } else { 3 };
        for round in 0..ROUNDS {
            for k in 0..kinds {
                match (round + k) % kinds {
                    0 => raws.push(raw(sync, per_write)),
                    1 => stores.push(store_put(sync, per_write)),
                    2 => apps.push(ledger_append(sync, per_write)),
                    _ => one_by_one.push(ledger_append_then_sync(per_write)),
                }
            }
        }
        let best_store = *stores.iter().min().unwrap();
        let mut ratios: Vec<f64> = raws.iter().zip(&apps).map(|(r, a)| r.as_secs_f64() / a.as_secs_f64()).collect();
        ratios.sort_by(f64::total_cmp);
        let (best_raw, best_app) = (*raws.iter().min().unwrap(), *apps.iter().min().unwrap());
        println!("raw RocksDB put, {name:<33} {}", per_sec(n, best_raw));
        println!(
            "  same put, memledger's options, {name:<18} {}  ({:.2}x raw)",
            per_sec(n, best_store),
            best_raw.as_secs_f64() / best_store.as_secs_f64()
        );
        println!(
            "ledger append, {name:<35} {}  ({:.2}x raw; median of rounds {:.2}x)",
            per_sec(n, best_app),
            best_raw.as_secs_f64() / best_app.as_secs_f64(),
            ratios[ROUNDS / 2]
        );
        if let Some(best) = one_by_one.iter().min() {
            println!(
                "  {per_write} unsynced appends, then a sync (save --from) {}  ({:.2}x raw)",
                per_sec(n, *best),
                best_raw.as_secs_f64() / best.as_secs_f64()
            );
        }
    }
    let raw_synced = raw(true, 1);

    // A full save with dedup, synced, on a small store: within 2x one raw synced put plus the
    // pipeline's CPU time (measured as the same save unsynced, the clock stopped once the last
    // one's writes are in: unsynced writes are applied by a writer thread, ADR 0012, and a save
    // whose writes are still queued has not done all its work).
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    let mut corpus = corpus::Corpus::new(7);
    for i in 0..1000 {
        ml.save_with(request(corpus.next_memory(i)), "bench", Durability::Deferred).unwrap();
    }
    ml.sync().unwrap();
    let saves = 300;
    let time_saves = |durability: Durability, corpus: &mut corpus::Corpus, offset: usize| -> Duration {
        let started = Instant::now();
        for i in 0..saves {
            ml.save_with(request(corpus.next_memory(offset + i)), "bench", durability).unwrap();
        }
        if durability == Durability::Deferred {
            ml.sync().unwrap();
        }
        started.elapsed() / saves as u32
    };
    let cpu = time_saves(Durability::Deferred, &mut corpus, 10_000);
    let synced = time_saves(Durability::Synced, &mut corpus, 20_000);
    let one_put = raw_synced / n as u32;
    println!(
        "save with dedup, synced: {:.3} ms; one raw synced put {:.3} ms + pipeline CPU {:.3} ms = {:.3} ms; ratio {:.2}",
        synced.as_secs_f64() * 1e3,
        one_put.as_secs_f64() * 1e3,
        cpu.as_secs_f64() * 1e3,
        (one_put + cpu).as_secs_f64() * 1e3,
        synced.as_secs_f64() / (one_put + cpu).as_secs_f64()
    );
}

fn request(m: corpus::Memory) -> SaveRequest {
    SaveRequest {
        text: m.text,
        memory_type: Some(m.memory_type.into()),
        scope: Some(m.scope),
        ..SaveRequest::default()
    }
}

/// Save the corpus's first `size` memories as `save --from` does (the next lines prepared on a
/// thread of their own and handed over 64 at a time, group commit, a sync every 1,024 saves) and
/// return how long it took.
fn save_bulk(ml: &Memledger, corpus: &mut corpus::Corpus, size: usize) -> Duration {
    const CHUNK: usize = 64;
    let started = Instant::now();
    std::thread::scope(|scope| {
        let (send, prepared) = std::sync::mpsc::sync_channel::<Vec<PreparedSave>>(4);
        scope.spawn(move || {
            let mut chunk = Vec::with_capacity(CHUNK);
            for i in 0..size {
                chunk.push(PreparedSave::new(request(corpus.next_memory(i))).unwrap());
                if chunk.len() == CHUNK || i + 1 == size {
                    send.send(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK))).unwrap();
                }
            }
        });
        for (i, save) in prepared.into_iter().flatten().enumerate() {
            ml.save_prepared(save, "bench", Durability::Deferred).unwrap();
            if i % 1024 == 1023 {
                ml.sync().unwrap();
            }
        }
    });
    ml.sync().unwrap();
    started.elapsed()
}

/// A store of `size` realistic memories: how fast it fills, saves, rebuilds.
fn store(size: usize, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    // Signed as the CLI opens a store: a key and a witness outside the store's directory.
    // MEMLEDGER_BENCH_UNSIGNED=1 measures the same without them, for the cost of signing.
    let trust = tempfile::tempdir().unwrap();
    let signed = std::env::var_os("MEMLEDGER_BENCH_UNSIGNED").is_none();
    let options = OpenOptions {
        signer: signed.then(|| {
            std::sync::Arc::new(memledger_engine::Signer::load_or_create(&trust.path().join("signing.key")).unwrap())
        }),
        witness_dir: signed.then(|| trust.path().join("witness")),
        ..OpenOptions::default()
    };
    println!(
        "[{size:>6}] signed checkpoints and witness         {}",
        if signed { "on" } else { "off (MEMLEDGER_BENCH_UNSIGNED)" }
    );
    let ml = Memledger::open(dir.path(), &options).unwrap();
    let mut corpus = corpus::Corpus::new(seed);
    let bulk = save_bulk(&ml, &mut corpus, size);
    let stats = ml.stats().unwrap();
    println!(
        "[{size:>6}] bulk save with dedup (group commit)   {} ({:.1} s; {} events; {:?} conflicts)",
        per_sec(size, bulk),
        bulk.as_secs_f64(),
        stats.events,
        stats.conflicts
    );

    let mut latencies = Vec::new();
    for i in 0..200 {
        let req = request(corpus.next_memory(size + i));
        let t = Instant::now();
        ml.save(req, "bench").unwrap();
        latencies.push(t.elapsed());
    }
    latencies.sort();
    println!(
        "[{size:>6}] single synced save latency          p50 {:.3} ms  p95 {:.3} ms",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.95).as_secs_f64() * 1e3
    );

    // Recall: questions made of a few words of stored memories, in their scope.
    let mut questions = Vec::new();
    for i in 0..300 {
        let m = corpus.next_memory(i * 7);
        let words: Vec<&str> = m.text.split_whitespace().collect();
        let start = i % words.len().saturating_sub(3).max(1);
        questions.push((words[start..(start + 4).min(words.len())].join(" "), m.scope));
    }
    let warm = Instant::now();
    ml.recall("warm up", None, None, 5).unwrap();
    let warm = warm.elapsed();
    let mut latencies = Vec::new();
    for (q, scope) in &questions {
        let t = Instant::now();
        ml.recall(q, None, Some(scope), 5).unwrap();
        latencies.push(t.elapsed());
    }
    latencies.sort();
    println!(
        "[{size:>6}] recall, top 5 in a scope               p50 {:.3} ms  p95 {:.3} ms  (first recall, committing the index: {:.0} ms)",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.95).as_secs_f64() * 1e3,
        warm.as_secs_f64() * 1e3
    );
    let text = ml.rebuild_text_index().unwrap();
    println!(
        "[{size:>6}] rebuild of the text index           {:>9.0}/s ({} documents)",
        text.docs_per_sec(),
        text.docs
    );

    let started = Instant::now();
    let events = ml.rebuild(Some(&["beliefs"]), &mut |_| {}).unwrap();
    println!(
        "[{size:>6}] rebuild of the belief view           {} ({events} events)",
        per_sec(events as usize, started.elapsed())
    );
    let started = Instant::now();
    let events = ml.rebuild(None, &mut |_| {}).unwrap();
    println!(
        "[{size:>6}] rebuild of every view and the index  {} ({events} events)",
        per_sec(events as usize, started.elapsed())
    );
    let started = Instant::now();
    let report = ml.ledger().verify().unwrap();
    assert!(report.ok, "{report:?}");
    println!(
        "[{size:>6}] verify of the chain{}      {} ({} events, {} checkpoints)",
        if signed { " and signatures" } else { "               " },
        per_sec(report.events as usize, started.elapsed()),
        report.events,
        report.checkpoints
    );
    println!("[{size:>6}] peak RSS so far                      {:.0} MiB", peak_rss_mib());
}

/// Fill a store at `dir` with `size` memories (for profiling the other commands on it).
fn fill(dir: &std::path::Path, size: usize, seed: u64) {
    let ml = Memledger::open(dir, &OpenOptions::default()).unwrap();
    let took = save_bulk(&ml, &mut corpus::Corpus::new(seed), size);
    println!("filled {} with {size} memories: {}", dir.display(), per_sec(size, took));
    print_thread_cpu(took);
}

/// CPU seconds of each live thread of this process and of the whole process (ended threads
/// included), from /proc: which thread bounds a fill, and how much of both cores it used.
fn print_thread_cpu(wall: Duration) {
    let ticks = |stat: &str| -> Option<(String, f64)> {
        let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let t: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
        Some((name.to_string(), t / 100.0))
    };
    let mut by_name: std::collections::BTreeMap<String, f64> = Default::default();
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        if let Some((name, secs)) = std::fs::read_to_string(task.path().join("stat")).ok().as_deref().and_then(ticks) {
            *by_name.entry(name).or_default() += secs;
        }
    }
    let total = std::fs::read_to_string("/proc/self/stat").ok().as_deref().and_then(ticks).map_or(0.0, |t| t.1);
    let threads: Vec<String> = by_name.iter().map(|(n, s)| format!("{n} {s:.1}")).collect();
    println!(
        "cpu seconds: process {total:.1} in {:.1} s of wall ({:.2} cores); live threads: {}",
        wall.as_secs_f64(),
        total / wall.as_secs_f64(),
        threads.join(", ")
    );
}

/// Analyse the corpus's first `size` texts and keep every analysis, as the save pipeline's cache
/// does: the time per analysis and the memory each takes.
fn analyses(size: usize, seed: u64) {
    let resident = || -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
        statm.split_whitespace().nth(1).and_then(|p| p.parse::<usize>().ok()).unwrap_or(0) * 4096
    };
    let mut corpus = corpus::Corpus::new(seed);
    let texts: Vec<String> = (0..size).map(|i| corpus.next_memory(i).text).collect();
    let before = resident();
    let started = Instant::now();
    let kept: Vec<_> = texts
        .iter()
        .map(|text| {
            let analysis = memledger_engine::classify::lexical::analyse(text);
            analysis.index_terms();
            std::sync::Arc::new(analysis)
        })
        .collect();
    let took = started.elapsed();
    println!(
        "{size} analyses: {:.2} µs and {} bytes of memory each",
        took.as_secs_f64() * 1e6 / size as f64,
        resident().saturating_sub(before) / kept.len().max(1)
    );
}

/// Rebuild one view (or every view) of the store at `dir`, three times.
fn rebuild(dir: &std::path::Path, view: Option<&str>) {
    let ml = Memledger::open(dir, &OpenOptions::default()).unwrap();
    for _ in 0..3 {
        if view == Some("text") {
            // The text index alone: documents, not events.
            let text = ml.rebuild_text_index().unwrap();
            println!("rebuild of the text index: {:>9.0}/s ({} documents)", text.docs_per_sec(), text.docs);
            continue;
        }
        let started = Instant::now();
        let events = ml.rebuild(view.map(|v| vec![v]).as_deref(), &mut |_| {}).unwrap();
        println!(
            "rebuild of {}: {} ({events} events)",
            view.unwrap_or("every view"),
            per_sec(events as usize, started.elapsed())
        );
    }
}

/// Write the corpus's first `size` memories to `path` as `save --from` lines, to time the command
/// itself: `memledger --dir DIR save --from FILE`.
fn corpus_file(path: &std::path::Path, size: usize, seed: u64) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut corpus = corpus::Corpus::new(seed);
    for i in 0..size {
        let m = corpus.next_memory(i);
        let line = serde_json::json!({"text": m.text, "type": m.memory_type, "scope": m.scope});
        writeln!(out, "{line}").unwrap();
    }
    out.flush().unwrap();
    println!("wrote {size} save requests to {}", path.display());
}

const USAGE: &str =
    "append [N], limit [N], store [SIZES…], fill DIR [N], rebuild DIR [VIEW], analyses [N], corpus FILE [N],
     serve-cli BIN DIR, serve-http BIN DIR [SECONDS], serve-saves BIN [SECONDS] [DELAY_US], serve-mcp BIN DIR [SECONDS] [MEMORIES], recall DIR BIN [OTHER_BIN], pg URL [SECONDS] [MEMORIES] or traces [N] [ROUNDS]";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("store");
    let number = |at: usize, default: usize| args.get(at).and_then(|s| s.parse().ok()).unwrap_or(default);
    // A benchmark that works on a directory or file is told which: a missing path is a usage error.
    let path = |at: usize| match args.get(at) {
        Some(p) => std::path::PathBuf::from(p),
        None => {
            eprintln!("memledger-bench {what}: a path is missing; usage: {USAGE}");
            std::process::exit(Exit::BadInput.code().into());
        }
    };
    let seed: u64 = std::env::var("MEMLEDGER_BENCH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20261130);
    match what {
        "analyses" | "append" | "limit" | "store" | "fill" | "rebuild" | "corpus" | "serve-cli" | "serve-http"
        | "serve-saves" | "saves-in-process" | "serve-mcp" | "recall" | "pg" | "traces" => {}
        other => {
            eprintln!("unknown benchmark {other:?}: {USAGE}");
            std::process::exit(Exit::BadInput.code().into());
        }
    }
    println!("memledger-bench {what} (release build, seed {seed}; figures from this machine)");
    match what {
        "analyses" => analyses(number(2, 100_000), seed),
        "append" => append(number(2, 2000)),
        "limit" => limit(number(2, 2000)),
        "store" => {
            let sizes: Vec<usize> = args.iter().skip(2).filter_map(|s| s.parse().ok()).collect();
            let sizes = if sizes.is_empty() { vec![1_000, 10_000, 100_000] } else { sizes };
            for size in sizes {
                store(size, seed);
            }
        }
        "fill" => fill(&path(2), number(3, 10_000), seed),
        "rebuild" => rebuild(&path(2), args.get(3).map(String::as_str)),
        "serve-cli" => serve::cli(&path(2), &path(3)),
        "serve-http" => serve::http(&path(2), &path(3), number(4, 10) as u64),
        "serve-saves" => saves::run(&path(2), number(3, 10) as u64, number(4, 2000) as u64),
        "saves-in-process" => saves::in_process(&path(2), number(3, 8), number(4, 10) as u64),
        "serve-mcp" => mcp::run(&path(2), &path(3), number(4, 10) as u64, number(5, 100_000), seed),
        "recall" => recall::run(&path(2), &path(3), args.get(4).map(std::path::Path::new), seed),
        "traces" => traces::run(number(2, 500), number(3, 6), seed),
        "pg" => match args.get(2) {
            Some(url) => pg::run(url, number(3, 10) as u64, number(4, 20_000), seed),
            None => {
                eprintln!("memledger-bench pg: a PostgreSQL URL is missing; usage: {USAGE}");
                std::process::exit(Exit::BadInput.code().into());
            }
        },
        _ => corpus_file(&path(2), number(3, 10_000), seed),
    }
}
