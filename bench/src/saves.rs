//! `serve-saves BIN [SECONDS] [DELAY_US]`: synced saves per second with 1, 8 and 32 writers at
//! once, in one process (threads on one open store) and through one `memledger serve` (HTTP
//! clients on keep-alive connections): the group commit of docs/adr/0026-group-commit.md. Each
//! writer saves distinct texts of the benchmark corpus into four scopes. The figures are taken
//! twice: as the disk is, and with every `fdatasync` of the measured process delayed by DELAY_US
//! (default 2000) under `strace -f --seccomp-bpf --inject=fdatasync:delay_exit=…`, as a slower
//! disk would delay it. Each figure starts from an empty store of its own (and its own server), so
//! that the 32-writer figure is not taken on a store the 1- and 8-writer figures filled.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use memledger_engine::{Memledger, OpenOptions, SaveRequest};

use crate::corpus::Corpus;
use crate::serve::{Conn, Server, token};

const WRITERS: [usize; 3] = [1, 8, 32];
const SCOPES: [&str; 4] = ["team:platform", "team:growth", "team:payments", "team:data"];

/// The `i`th save of writer `w`: a corpus memory made distinct, in one of the four scopes.
fn request(corpus: &mut Corpus, w: usize, i: usize) -> SaveRequest {
    let m = corpus.next_memory(i);
    SaveRequest {
        text: format!("{} (note {w}-{i})", m.text),
        memory_type: Some(m.memory_type.into()),
        scope: Some(SCOPES[(w + i) % SCOPES.len()].into()),
        ..Default::default()
    }
}

/// The command that runs `program` with its fsyncs delayed by `delay_us`, or as it is.
fn wrapped(program: &Path, delay_us: Option<u64>) -> Command {
    match delay_us {
        Some(us) => {
            let mut c = Command::new("strace");
            c.args(["-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-e", "trace=fdatasync"])
                .arg(format!("--inject=fdatasync:delay_exit={us}"))
                .arg(program);
            c
        }
        None => Command::new(program),
    }
}

pub fn run(bin: &Path, seconds: u64, delay_us: u64) {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("memledger-bench serve-saves: strace is missing (apt-get install strace)");
        std::process::exit(1);
    }
    println!("synced saves/s, {seconds}s per figure; distinct corpus texts into four scopes");
    for delay in [None, Some(delay_us)] {
        let disk = match delay {
            None => "the disk as it is".to_string(),
            Some(us) => format!("fdatasync delayed {:.1} ms (strace inject)", us as f64 / 1000.0),
        };
        let in_process = in_process_figures(delay, seconds);
        let served = served_figures(bin, delay, seconds);
        for (name, figures) in [("in one process (threads)", &in_process), ("through serve (HTTP clients)", &served)] {
            let one = figures[0];
            let cells: Vec<String> = WRITERS
                .iter()
                .zip(figures)
                .map(|(w, n)| format!("{w:>2} writers {n:>7.0}/s ({:.2}x)", n / one))
                .collect();
            println!("{disk:<42} {name:<30} {}", cells.join("  "));
        }
    }
}

/// Saves/s of 1, 8 and 32 threads on one store, each figure from a child process of this
/// benchmark (so that strace delays its fsyncs alone).
fn in_process_figures(delay: Option<u64>, seconds: u64) -> Vec<f64> {
    let exe = std::env::current_exe().unwrap();
    WRITERS
        .iter()
        .map(|&writers| {
            let dir = tempfile::tempdir().unwrap();
            let out = wrapped(&exe, delay)
                .args(["saves-in-process"])
                .arg(dir.path())
                .args([writers.to_string(), seconds.to_string()])
                .output()
                .expect("the benchmark runs itself");
            assert!(out.status.success(), "saves-in-process: {}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8_lossy(&out.stdout);
            let saves: f64 = text.lines().last().and_then(|l| l.trim().parse().ok()).expect("a count of saves");
            saves / seconds as f64
        })
        .collect()
}

/// `saves-in-process DIR WRITERS SECONDS`: the synced saves `writers` threads make in
/// `seconds`, printed alone on the last line.
pub fn in_process(dir: &Path, writers: usize, seconds: u64) {
    let ml = Arc::new(Memledger::open(dir, &OpenOptions::default()).unwrap());
    let saved = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let run = std::process::id() as usize;
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (ml, saved, stop) = (ml.clone(), saved.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut corpus = Corpus::new((run * 1000 + w) as u64);
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    ml.save(request(&mut corpus, run * 100 + w, i), "bench:saves").unwrap();
                    saved.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    let counted = saved.load(Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    println!("{counted}");
}

/// Saves/s of 1, 8 and 32 HTTP clients of a server (each on its own keep-alive connection), each
/// figure from a server of its own on a fresh store.
fn served_figures(bin: &Path, delay: Option<u64>, seconds: u64) -> Vec<f64> {
    WRITERS
        .iter()
        .enumerate()
        .map(|(round, &writers)| {
            let dir = tempfile::tempdir().unwrap();
            let store = dir.path().join("store");
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let server = Server::start_with(wrapped(bin, delay), &store, Some(port));
            let token = token(bin, &store);
            let deadline = Instant::now() + Duration::from_secs(seconds);
            let threads: Vec<_> = (0..writers)
                .map(|w| {
                    let token = token.clone();
                    std::thread::spawn(move || {
                        let mut conn = Conn::open(port, &token);
                        let writer = round * 100 + w;
                        let mut corpus = Corpus::new(writer as u64);
                        let mut saves = 0usize;
                        while Instant::now() < deadline {
                            let r = request(&mut corpus, writer, saves);
                            let body = serde_json::json!({
                                "text": r.text, "type": r.memory_type, "scope": r.scope,
                            });
                            assert_eq!(conn.post("/v1/memories", &body.to_string()), 200);
                            saves += 1;
                        }
                        saves
                    })
                })
                .collect();
            let saves: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
            drop(server);
            saves as f64 / seconds as f64
        })
        .collect()
}
