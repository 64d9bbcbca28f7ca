//! `serve-mcp BIN STORE [SECONDS] [MEMORIES]`: MCP resources through `memledger serve` on a
//! store whose one scope holds MEMORIES (default 100,000) memories: the p50/p99 of
//! `resources/list`'s first page and of `resources/read` of the scope's first page, beside
//! recall's over the HTTP API in the same run, each on one keep-alive connection, in turns
//! (list, read, recall, twice), SECONDS (default 10) a turn. The store is filled through the CLI
//! (`save --from`) when it does not exist.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve::{Server, percentile, token};

const SCOPE: &str = "bench:one";

/// One HTTP/1.1 connection speaking MCP's streamable HTTP: a JSON-RPC request per POST, its
/// answer read from the JSON body or the SSE stream it comes on.
struct McpConn {
    reader: BufReader<std::net::TcpStream>,
    writer: std::net::TcpStream,
    auth: String,
    session: Option<String>,
    next_id: u64,
}

impl McpConn {
    fn open(port: u16, token: &str) -> McpConn {
        let s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_nodelay(true).unwrap();
        let mut conn = McpConn {
            reader: BufReader::new(s.try_clone().unwrap()),
            writer: s,
            auth: format!("Bearer {token}"),
            session: None,
            next_id: 1,
        };
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "memledger-bench", "version": "1"}});
        conn.request("initialize", init);
        conn.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        conn
    }

    /// POST `body`; the response's headers (lower-cased names) and body.
    fn post(&mut self, body: &str) -> (Vec<(String, String)>, Vec<u8>) {
        let session = self.session.as_ref().map(|s| format!("mcp-session-id: {s}\r\n")).unwrap_or_default();
        write!(
            self.writer,
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: {}\r\naccept: application/json, text/event-stream\r\n\
             content-type: application/json\r\n{session}content-length: {}\r\n\r\n{body}",
            self.auth,
            body.len()
        )
        .unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let mut out = Vec::new();
        if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            loop {
                line.clear();
                self.reader.read_line(&mut line).unwrap();
                let size = usize::from_str_radix(line.trim(), 16).unwrap();
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).unwrap();
                if size == 0 {
                    break;
                }
                out.extend_from_slice(&chunk[..size]);
            }
        } else if let Some(n) = header("content-length").and_then(|v| v.parse().ok()) {
            out = vec![0; n];
            self.reader.read_exact(&mut out).unwrap();
        }
        (headers, out)
    }

    /// A request and its result (from a JSON body, or the SSE event that carries it).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let (headers, body) =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        if let Some((_, s)) = headers.iter().find(|(k, _)| k == "mcp-session-id") {
            self.session = Some(s.clone());
        }
        let text = String::from_utf8(body).unwrap();
        let answer = text
            .lines()
            .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["id"] == json!(id))
            .unwrap_or_else(|| panic!("{method}: no answer in {text:?}"));
        assert!(answer["error"].is_null(), "{method}: {answer}");
        answer["result"].clone()
    }
}

/// Fill `store` with `size` memories of the bench corpus, all in [`SCOPE`], through the CLI.
fn fill(bin: &Path, store: &Path, size: usize, seed: u64) {
    let file = store.with_extension("jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    let mut corpus = crate::corpus::Corpus::new(seed);
    for i in 0..size {
        let m = corpus.next_memory(i);
        writeln!(out, "{}", json!({"text": m.text, "type": m.memory_type, "scope": SCOPE})).unwrap();
    }
    out.flush().unwrap();
    let started = Instant::now();
    let done =
        Command::new(bin).arg("--dir").arg(store).args(["--json", "save", "--from"]).arg(&file).output().unwrap();
    assert!(done.status.success(), "save --from: {}", String::from_utf8_lossy(&done.stderr));
    let _ = std::fs::remove_file(&file);
    println!("filled {} with {size} memories in {SCOPE} in {:.1} s", store.display(), started.elapsed().as_secs_f64());
}

pub fn run(bin: &Path, store: &Path, seconds: u64, size: usize, seed: u64) {
    if !store.exists() {
        fill(bin, store, size, seed);
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = Server::start(bin, store, Some(port));
    let token = token(bin, store);
    let mut mcp = McpConn::open(port, &token);
    let mut http = crate::serve::Conn::open(port, &token);
    let first = mcp.request("resources/list", json!({}));
    let listed = first["resources"].as_array().map_or(0, Vec::len);
    assert!(first["nextCursor"].is_string(), "a first page of a large scope has a next: {first}");
    let queries = ["which service deploys on Tuesday", "how long does the build take", "who owns billing"];
    let scope_uri = format!("memledger://scopes/{SCOPE}");
    let mut turn = |what: usize| {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let mut latencies = Vec::new();
        let mut i = 0;
        while Instant::now() < deadline {
            let started = Instant::now();
            match what {
                0 => {
                    mcp.request("resources/list", json!({}));
                }
                1 => {
                    mcp.request("resources/read", json!({"uri": scope_uri}));
                }
                _ => {
                    let body = json!({"query": queries[i % queries.len()], "scope": SCOPE}).to_string();
                    assert_eq!(http.post("/v1/recall", &body), 200);
                }
            }
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            i += 1;
        }
        latencies
    };
    let mut all = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..2 {
        for (what, latencies) in all.iter_mut().enumerate() {
            latencies.extend(turn(what));
        }
    }
    let names = [
        format!("MCP resources/list, first page ({listed} resources)"),
        format!("MCP resources/read {scope_uri}, first page"),
        "recall over HTTP in the scope (top 10)".to_string(),
    ];
    for (name, mut latencies) in names.iter().zip(all) {
        let n = latencies.len();
        println!(
            "{name}, one connection, 2 x {seconds}s: {n} requests, p50 {:.2} ms, p99 {:.2} ms",
            percentile(&mut latencies, 0.5),
            percentile(&mut latencies, 0.99)
        );
    }
    drop(server);
}
