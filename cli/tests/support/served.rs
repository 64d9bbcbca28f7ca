//! A real `memledger serve` on a temporary store for tests, and a minimal HTTP/1.1 client over
//! TCP and over the Unix socket (one request per connection, `Connection: close`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::memledger;

/// A free loopback port (the kernel picks one; the server binds it right after).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A running `memledger serve`, killed when dropped.
pub struct Served {
    pub child: Child,
    pub dir: PathBuf,
    pub port: Option<u16>,
    pub token: Option<String>,
}

impl Served {
    /// Start a server on `dir` (`http`: also on a free loopback port) and wait until it answers.
    pub fn start(dir: &Path, http: bool) -> Served {
        Self::start_with(dir, http, &[])
    }

    /// [`Served::start`] with more arguments for `memledger serve` (`--actor NAME`).
    pub fn start_with(dir: &Path, http: bool, args: &[&str]) -> Served {
        Self::start_with_env(dir, http, args, &[])
    }

    /// [`Served::start_with`] with `env` set for the server (models, traces).
    pub fn start_with_env(dir: &Path, http: bool, args: &[&str], env: &[(&str, &str)]) -> Served {
        let port = http.then(free_port);
        let mut c = memledger(dir);
        c.arg("serve").args(args).envs(env.iter().copied());
        if let Some(p) = port {
            c.args(["--http", &format!("127.0.0.1:{p}")]);
        }
        // Its log into a file beside the store: a pipe nobody reads would fill and stop it.
        std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
        let log = std::fs::File::create(Self::log_path(dir)).unwrap();
        let child = c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log).spawn().unwrap();
        let mut served = Served { child, dir: dir.to_path_buf(), port, token: None };
        served.wait_ready();
        if http {
            let out = memledger(dir).args(["serve", "--print-token"]).output().unwrap();
            served.token = Some(String::from_utf8(out.stdout).unwrap().trim().to_string());
        }
        served
    }

    fn log_path(dir: &Path) -> PathBuf {
        dir.with_extension("serve.log")
    }

    fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let err = std::fs::read_to_string(Self::log_path(&self.dir)).unwrap_or_default();
                panic!("memledger serve exited ({status}): {err}");
            }
            let ready = unix_request(&self.dir, "GET", "/v1/status", None, &[]).is_some_and(|r| r.status == 200)
                && self.port.is_none_or(|p| tcp_request(p, "GET", "/openapi.json", None, &[]).is_some());
            if ready {
                return;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "memledger serve did not answer in 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// An HTTP request over TCP with the bearer token.
    pub fn http(&self, method: &str, path: &str, body: Option<&str>) -> Response {
        let auth = format!("Bearer {}", self.token.as_deref().unwrap());
        tcp_request(self.port.unwrap(), method, path, body, &[("authorization", &auth)]).expect("the server answers")
    }

    /// Stop it with SIGTERM and wait for it to exit.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        self.child.wait().unwrap()
    }

    /// kill -9.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

fn request(
    stream: &mut dyn ReadWrite,
    host: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Option<Response> {
    let mut text = format!("{method} {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n");
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        text.push_str(&format!("content-type: application/json\r\ncontent-length: {}\r\n", b.len()));
    }
    text.push_str("\r\n");
    stream.write_all(text.as_bytes()).ok()?;
    // A server may answer before the body is all sent (413) and close: its answer is still read.
    let sent = body.map_or(Ok(()), |b| stream.write_all(b.as_bytes()));
    let mut raw = Vec::new();
    let read = stream.read_to_end(&mut raw);
    if raw.is_empty() && (sent.is_err() || read.is_err()) {
        return None;
    }
    parse(&raw)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn parse(raw: &[u8]) -> Option<Response> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))).collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Some(Response { status, headers, body: String::from_utf8_lossy(&body).to_string() })
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 2 + size + 2..];
    }
    out
}

/// A request over TCP on loopback; `None` when nothing answers.
pub fn tcp_request(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Option<Response> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    request(&mut stream, &format!("127.0.0.1:{port}"), method, path, body, headers)
}

/// A request over the store's Unix socket; `None` when nothing answers.
pub fn unix_request(
    dir: &Path,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Option<Response> {
    let mut stream = std::os::unix::net::UnixStream::connect(dir.join("memledger.sock")).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    request(&mut stream, "localhost", method, path, body, headers)
}
