//! Benchmarks of `memledger serve`: a CLI process through the server beside an `ldb get`
//! process (RocksDB's own tool, Debian's `rocksdb-tools`) on a store of the same size, and the
//! HTTP API under load (8 keep-alive connections on loopback).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

pub fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn timed(mut c: Command) -> f64 {
    let t = Instant::now();
    let out = c.stdout(Stdio::null()).stderr(Stdio::piped()).output().expect("runs");
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    assert!(out.status.success(), "{c:?}: {}", String::from_utf8_lossy(&out.stderr));
    ms
}

/// A server on `store`, killed when dropped.
pub struct Server(Child);

impl Server {
    pub fn start(bin: &Path, store: &Path, http: Option<u16>) -> Server {
        Server::start_with(Command::new(bin), store, http)
    }

    /// As [`Server::start`], the binary run by `c` (which may wrap it, as strace does).
    pub fn start_with(mut c: Command, store: &Path, http: Option<u16>) -> Server {
        c.arg("--dir").arg(store).arg("serve");
        if let Some(p) = http {
            c.args(["--http", &format!("127.0.0.1:{p}")]);
        }
        let child = c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("serve starts");
        let started = Instant::now();
        while std::os::unix::net::UnixStream::connect(store.join("memledger.sock")).is_err() {
            assert!(started.elapsed() < Duration::from_secs(120), "serve did not come up");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server(child)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A wrapper's child first (strace, stopped, would leave the server running).
        let _ = Command::new("pkill").args(["-TERM", "-P", &self.0.id().to_string()]).status();
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let _ = self.0.wait();
    }
}

const RUNS: usize = 15;

/// `serve-cli BIN STORE`: medians of 15 `save` and `recall` processes, direct and through the
/// server, beside 15 `ldb get` processes on a RocksDB store of as many keys as STORE has memories.
pub fn cli(bin: &Path, store: &Path) {
    let memories = {
        let out = Command::new(bin).arg("--dir").arg(store).args(["--no-server", "--json", "stats"]).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["memories"]["active"].as_u64().unwrap_or(0)
    };
    let cmd = |args: &[&str]| {
        let mut c = Command::new(bin);
        c.arg("--dir").arg(store).args(args);
        c
    };
    let save = |i: usize, extra: &[&str]| {
        let text = format!("the benchmark note {i} says build {} took {} minutes", i * 7919 % 100_003, i % 60);
        let mut c = cmd(extra);
        c.args(["save", &text]);
        c
    };
    let recall = |extra: &[&str]| {
        let mut c = cmd(extra);
        c.args(["recall", "which service deploys on Tuesday"]);
        c
    };
    let direct_save = median((0..RUNS).map(|i| timed(save(i, &["--no-server"]))).collect());
    let direct_recall = median((0..RUNS).map(|_| timed(recall(&["--no-server"]))).collect());
    let server = Server::start(bin, store, None);
    let _ = timed(recall(&[]));
    let served_save = median((0..RUNS).map(|i| timed(save(1000 + i, &[]))).collect());
    let served_recall = median((0..RUNS).map(|_| timed(recall(&[]))).collect());
    drop(server);
    // The floor: RocksDB's own tool reading one key of a store of the same size.
    let ldb_dir = std::env::temp_dir().join(format!("memledger-bench-ldb-{}", std::process::id()));
    let mut load = Command::new("ldb")
        .arg(format!("--db={}", ldb_dir.display()))
        .args(["--create_if_missing", "load"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("ldb (apt-get install rocksdb-tools)");
    {
        let mut w = std::io::BufWriter::new(load.stdin.take().unwrap());
        for i in 0..memories.max(1) {
            writeln!(w, "memory-{i:08} ==> {}", "a realistic memory of about a hundred bytes, ".repeat(2)).unwrap();
        }
    }
    assert!(load.wait().unwrap().success());
    let ldb = median(
        (0..RUNS)
            .map(|i| {
                let mut c = Command::new("ldb");
                c.arg(format!("--db={}", ldb_dir.display()))
                    .args(["get", &format!("memory-{:08}", i * 997 % memories.max(1) as usize)]);
                timed(c)
            })
            .collect(),
    );
    let _ = std::fs::remove_dir_all(&ldb_dir);
    println!("store: {memories} active memories; median of {RUNS} processes each");
    println!("ldb get (the floor)        {ldb:7.2} ms");
    println!("save, direct               {direct_save:7.2} ms  ({:.2}x ldb)", direct_save / ldb);
    println!("recall, direct             {direct_recall:7.2} ms  ({:.2}x ldb)", direct_recall / ldb);
    println!("save, through the server   {served_save:7.2} ms  ({:.2}x ldb)", served_save / ldb);
    println!("recall, through the server {served_recall:7.2} ms  ({:.2}x ldb)", served_recall / ldb);
}

/// One keep-alive HTTP/1.1 connection (bodies with Content-Length, as the server sends them).
pub struct Conn {
    reader: BufReader<std::net::TcpStream>,
    writer: std::net::TcpStream,
    auth: String,
}

impl Conn {
    pub fn open(port: u16, token: &str) -> Conn {
        let s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_nodelay(true).unwrap();
        Conn { reader: BufReader::new(s.try_clone().unwrap()), writer: s, auth: format!("Bearer {token}") }
    }

    pub fn post(&mut self, path: &str, body: &str) -> u16 {
        write!(
            self.writer,
            "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            self.auth,
            body.len()
        )
        .unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let mut length = 0;
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        status
    }
}

/// A new agent with `grants`, added through the running server: its token.
fn add_principal(bin: &Path, store: &Path, name: &str, grants: &[&str]) -> String {
    let mut c = Command::new(bin);
    c.arg("--dir").arg(store).args(["--json", "principals", "add", name, "--kind", "agent"]);
    for g in grants {
        c.args(["--grant", g]);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "principals add: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["token"].as_str().expect("the new principal's token").to_string()
}

/// The store's bearer token (`serve --print-token`).
pub fn token(bin: &Path, store: &Path) -> String {
    let out = Command::new(bin).arg("--dir").arg(store).args(["serve", "--print-token"]).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// `serve-http BIN STORE SECONDS`: recall p50/p99 over 8 keep-alive connections with the store's
/// token and with principals' (whose grants are checked and whose reads are confined to the
/// scopes they may read), then saves/s.
pub fn http(bin: &Path, store: &Path, seconds: u64) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = Server::start(bin, store, Some(port));
    let token = token(bin, store);
    let queries =
        ["which service deploys on Tuesday", "how long does the build take", "who owns billing", "postgres version"];
    // A phase: 8 connections with `token` for `seconds`, saving or recalling (in `scope`, or in
    // every scope the token may read); every latency in milliseconds.
    let phase = |save: bool, token: &str, scope: Option<&str>| {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let scope_field = scope.map(|s| format!(", \"scope\": \"{s}\"")).unwrap_or_default();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let token = token.to_string();
                let scope_field = scope_field.clone();
                std::thread::spawn(move || {
                    let mut conn = Conn::open(port, &token);
                    let mut latencies = Vec::new();
                    let mut i = 0usize;
                    while Instant::now() < deadline {
                        let body = if save {
                            format!(
                                "{{\"text\": \"load note {t}-{i}: deploy {} took {} minutes\"}}",
                                i * 31 % 9973,
                                i % 50
                            )
                        } else {
                            format!("{{\"query\": \"{}\"{scope_field}}}", queries[i % queries.len()])
                        };
                        let path = if save { "/v1/memories" } else { "/v1/recall" };
                        let started = Instant::now();
                        let status = conn.post(path, &body);
                        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
                        assert_eq!(status, 200);
                        i += 1;
                    }
                    latencies
                })
            })
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect::<Vec<f64>>()
    };
    // Each principal is measured beside the store's own token reading the same scopes, in turns
    // (owner, principal, owner, principal), so that what they are compared on is the checks
    // alone. Names of their own on every run: a store keeps the principals of earlier runs.
    let run = std::process::id();
    let pairs = [
        ("*=read", "every scope", None, add_principal(bin, store, &format!("bench-all-{run}"), &["*=read"])),
        (
            "team:payments=read",
            "scope team:payments",
            Some("team:payments"),
            add_principal(bin, store, &format!("bench-one-{run}"), &["team:payments=read"]),
        ),
        (
            "team:p*=read",
            "scope team:payments",
            Some("team:payments"),
            add_principal(bin, store, &format!("bench-prefix-{run}"), &["team:p*=read"]),
        ),
    ];
    for (grant, what, scope, principal) in &pairs {
        let mut owner = Vec::new();
        let mut theirs = Vec::new();
        for _ in 0..2 {
            owner.extend(phase(false, &token, *scope));
            theirs.extend(phase(false, principal, *scope));
        }
        let (n_owner, n_theirs) = (owner.len(), theirs.len());
        let (p50_owner, p99_owner) = (percentile(&mut owner, 0.5), percentile(&mut owner, 0.99));
        let (p50_theirs, p99_theirs) = (percentile(&mut theirs, 0.5), percentile(&mut theirs, 0.99));
        println!(
            "recall over HTTP, {what}, 8 connections, 2 x {seconds}s each: the store's token {n_owner} requests, p50 \
             {p50_owner:.2} ms, p99 {p99_owner:.2} ms; a principal with {grant} {n_theirs} requests, p50 {p50_theirs:.2} \
             ms, p99 {p99_theirs:.2} ms ({:.2}x)",
            p99_theirs / p99_owner
        );
    }
    let mut saves = phase(true, &token, None);
    let n = saves.len();
    println!(
        "save over HTTP, 8 connections, {seconds}s: {n} saves, {:.0}/s, p50 {:.2} ms, p99 {:.2} ms",
        n as f64 / seconds as f64,
        percentile(&mut saves, 0.5),
        percentile(&mut saves, 0.99)
    );
    drop(server);
}
