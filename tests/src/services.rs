//! The servers the shared-ledger and stream tests talk to: the throwaway PostgreSQL and NATS
//! server that scripts/services.sh starts (their URLs in `MEMLEDGER_TEST_PG_URL`,
//! `MEMLEDGER_TEST_NATS_URL`), a database of its own for each test, a private PostgreSQL for the
//! tests that stop one, and a NATS connection that reads a JetStream mirror back.
//! A test that finds no URL fails under `CI=true` and is skipped elsewhere, saying so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// The URL in `var`, or `None` (skipped, on stderr) outside CI; panics under `CI=true`.
pub fn service_url(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{var} is not set: scripts/test.sh starts {what} for this test (CI=true: not skipped)");
            }
            eprintln!("skipped: {var} is not set (scripts/test.sh starts {what})");
            None
        }
    }
}

/// A fresh, empty database on the test server, as a URL; `None` when there is no server (and
/// not under CI).
pub fn fresh_pg_database() -> Option<String> {
    let admin = service_url("MEMLEDGER_TEST_PG_URL", "a throwaway PostgreSQL")?;
    Some(create_database(&admin))
}

/// Names unique within the server: the process id, the time and a counter.
fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{prefix}_{}_{}_{}", std::process::id(), nanos % 1_000_000_000_000, COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Create a database on the server `admin` names; the URL of the new one.
pub fn create_database(admin: &str) -> String {
    let name = unique_name("memledger_test");
    run_sql(admin, &format!("CREATE DATABASE {name}"));
    let (base, _) = admin.rsplit_once('/').expect("a URL with a database path");
    format!("{base}/{name}")
}

/// Run statements on `url` (a test's set-up or its tampering), panicking on an error.
pub fn run_sql(url: &str, sql: &str) {
    try_sql(url, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Run statements on `url`; the server's error, if it refused them.
pub fn try_sql(url: &str, sql: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.map_err(|e| format!("connect: {e}"))?;
        let driver = tokio::spawn(connection);
        let result = client.batch_execute(sql).await.map_err(|e| match e.as_db_error() {
            Some(db) => db.message().to_string(),
            None => e.to_string(),
        });
        drop(client);
        let _ = driver.await;
        result
    })
}

/// The one `bigint` a query on `url` returns (a count), panicking on an error.
pub fn query_i64(url: &str, sql: &str) -> i64 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
        let driver = tokio::spawn(connection);
        let value = client.query_one(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e}")).get(0);
        drop(client);
        let _ = driver.await;
        value
    })
}

/// A PostgreSQL of a test's own, for the tests that stop and restart the server: initdb into a
/// temporary directory (as the `postgres` user when run as root), on a free loopback port.
/// Stopped when dropped.
pub struct PrivatePostgres {
    dir: PathBuf,
    port: u16,
}

impl PrivatePostgres {
    /// Start one; `None` (skipped) where the shared server is not configured either.
    pub fn start() -> Option<PrivatePostgres> {
        service_url("MEMLEDGER_TEST_PG_URL", "a throwaway PostgreSQL")?;
        let dir = std::env::temp_dir().join(unique_name("memledger-pg"));
        std::fs::create_dir_all(&dir).expect("a directory for the server");
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            listener.local_addr().expect("its address").port()
        };
        let pg = PrivatePostgres { dir, port };
        if is_root() {
            assert!(Command::new("chown").arg("postgres").arg(&pg.dir).status().expect("chown").success());
        }
        let data = pg.data();
        let initdb = pg
            .as_owner(&format!("{PG_BIN}/initdb"))
            .args(["-U", "postgres", "-A", "trust", "--no-sync", "-D"])
            .arg(&data)
            .output()
            .expect("initdb runs");
        assert!(initdb.status.success(), "initdb: {}", String::from_utf8_lossy(&initdb.stderr));
        pg.ctl(&["start", "-w"]);
        Some(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn as_owner(&self, program: &str) -> Command {
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", program]);
            c
        } else {
            Command::new(program)
        }
    }

    /// Run `pg_ctl` with `args` on this server (start and restart with its port and socket).
    fn ctl(&self, args: &[&str]) {
        let mut c = self.as_owner(&format!("{PG_BIN}/pg_ctl"));
        c.arg("-D").arg(self.data()).arg("-l").arg(self.dir.join("server.log")).args(args);
        if args.contains(&"start") || args.contains(&"restart") {
            c.arg("-o").arg(format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200",
                self.port,
                self.dir.display()
            ));
        }
        let out = c.output().expect("pg_ctl runs");
        assert!(
            out.status.success(),
            "pg_ctl {args:?}: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
        );
    }

    /// The server's `postgres` database.
    pub fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stop the server (fast shutdown: connections are cut, as when a server goes away).
    pub fn stop(&self) {
        self.ctl(&["stop", "-m", "fast", "-w"]);
    }

    pub fn start_again(&self) {
        self.ctl(&["start", "-w"]);
    }

    /// Restart the server, cutting every connection.
    pub fn restart(&self) {
        self.ctl(&["restart", "-m", "fast", "-w"]);
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = self
            .as_owner(&format!("{PG_BIN}/pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(["stop", "-m", "immediate"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn is_root() -> bool {
    // The effective user id, from the kernel's view of this process.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false)
}

/// The NATS server (with JetStream) of the stream tests, as a `nats://HOST:PORT` URL; `None`
/// when there is none (and not under CI).
pub fn nats_url() -> Option<String> {
    service_url("MEMLEDGER_TEST_NATS_URL", "nats-server -js")
}

/// A subject no other test publishes to.
pub fn unique_subject(prefix: &str) -> String {
    format!("memledger_test.{}", unique_name(prefix))
}

/// A message of a JetStream stream as the stream tests read it back.
#[derive(Clone, Debug)]
pub struct StoredMessage {
    /// Its stream sequence.
    pub sequence: u64,
    pub msg_id: Option<String>,
    pub payload: Vec<u8>,
}

/// A NATS connection for the stream tests: a subscription to count what is published, and the
/// stream read back by the JetStream API.
pub struct NatsProbe {
    runtime: tokio::runtime::Runtime,
    client: async_nats::Client,
}

impl NatsProbe {
    pub fn connect(url: &str) -> NatsProbe {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a runtime");
        let client = runtime.block_on(async_nats::connect(url)).unwrap_or_else(|e| panic!("NATS at {url}: {e}"));
        NatsProbe { runtime, client }
    }

    /// Subscribe to `subject`: the returned receiver gets one `()` per message published to it
    /// (a streamer's publishes, whether JetStream then stores them or not).
    pub fn count_published(&self, subject: &str) -> std::sync::mpsc::Receiver<()> {
        let mut subscriber = self.runtime.block_on(async {
            let subscriber = self.client.subscribe(subject.to_string()).await.expect("a subscription");
            // The server has the subscription once a round trip after it has answered.
            self.client.flush().await.expect("a flush");
            subscriber
        });
        let (tx, rx) = std::sync::mpsc::channel();
        self.runtime.spawn(async move {
            use futures_util::StreamExt;
            while subscriber.next().await.is_some() {
                if tx.send(()).is_err() {
                    return;
                }
            }
        });
        rx
    }

    /// The messages of the stream named `stream`, in stream order.
    pub fn stored(&self, stream: &str) -> Vec<StoredMessage> {
        self.runtime.block_on(async {
            let jetstream = async_nats::jetstream::new(self.client.clone());
            let mut stream = jetstream.get_stream(stream).await.unwrap_or_else(|e| panic!("stream {stream}: {e}"));
            let state = stream.info().await.expect("the stream's state").state.clone();
            let mut messages = Vec::with_capacity(state.messages as usize);
            if state.messages == 0 {
                return messages;
            }
            for sequence in state.first_sequence..=state.last_sequence {
                let m = stream.get_raw_message(sequence).await.unwrap_or_else(|e| panic!("message {sequence}: {e}"));
                messages.push(StoredMessage {
                    sequence: m.sequence,
                    msg_id: m.headers.get(async_nats::header::NATS_MESSAGE_ID).map(|v| v.as_str().to_string()),
                    payload: m.payload.to_vec(),
                });
            }
            messages
        })
    }
}

/// `bytes` as a PostgreSQL `bytea` literal.
pub fn bytea(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("'\\x{hex}'::bytea")
}

/// SQL that overwrites the rows of `events` in a shared ledger's tables with these events and
/// moves the head to the last of them, the append-only trigger off for the while: what someone
/// who can write the database, but holds no machine's key, can do.
pub fn overwrite_events_sql(events: &[memledger_schemas::Event]) -> String {
    let mut sql = String::from("ALTER TABLE memledger_events DISABLE TRIGGER USER;");
    for e in events {
        sql.push_str(&format!(
            "UPDATE memledger_events SET hash = {}, prev_hash = {}, event = {} WHERE seq = {};",
            bytea(&e.hash.0),
            bytea(&e.prev_hash.0),
            bytea(&memledger_schemas::codec::encode_event(e)),
            e.seq
        ));
    }
    if let Some(last) = events.last() {
        sql.push_str(&format!("UPDATE memledger_head SET seq = {}, hash = {};", last.seq, bytea(&last.hash.0)));
    }
    sql.push_str("ALTER TABLE memledger_events ENABLE TRIGGER USER;");
    sql
}
