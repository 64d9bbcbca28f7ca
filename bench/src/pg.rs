//! `memledger-bench pg URL [SECONDS] [CATCH_UP_MEMORIES]`: the shared ledger on PostgreSQL beside
//! `pgbench` on the same server in the same run. Saves through the engine (synced: each commits in
//! PostgreSQL, then in the machine's own store) with 1, 8 and 32 writers, each a machine of its
//! own (a store directory and a connection), and with 8 and 32 threads of one machine (whose
//! saves at once share transactions: group commit), beside `pgbench` inserting one row per
//! transaction with the same client counts; then how fast a fresh machine's views catch up, beside reading
//! the same rows with one `SELECT`. `URL` names a database the user may create databases from;
//! each measurement gets a fresh database.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memledger_engine::{EventLog, Memledger, OpenOptions};
use memledger_ledger::pg_tls::PgConnect;

use crate::corpus::Corpus;

/// The writer counts measured.
const WRITERS: [usize; 3] = [1, 8, 32];

/// The floor's transaction: one row of about an event's size, committed.
const FLOOR_SCRIPT: &str = "INSERT INTO bench_floor (payload) VALUES (repeat('x', 400)::bytea);\n";

pub fn run(admin: &str, secs: u64, catch_up_memories: usize, seed: u64) {
    let pg = Admin::new(admin);
    println!("PostgreSQL: {}", pg.version());
    let signing = std::env::var_os("MEMLEDGER_BENCH_UNSIGNED").is_none();
    println!("signed commits: {}", if signing { "on, a key per machine" } else { "off (MEMLEDGER_BENCH_UNSIGNED)" });
    println!("writers | memledger saves/s (synced) | pgbench tps, 1 insert per transaction (floor) | ratio");
    let mut floors = Vec::new();
    for writers in WRITERS {
        let floor = pg.pgbench(writers, secs);
        floors.push((writers, floor));
        let ours = saves(&pg.fresh_database(&format!("w{writers}")), writers, 1, secs, seed);
        ours.print(writers, floor);
    }
    println!("threads of one machine | memledger saves/s (synced, group commit) | pgbench tps (floor, above) | ratio");
    for (threads, floor) in floors.into_iter().filter(|(w, _)| *w > 1) {
        let ours = saves(&pg.fresh_database(&format!("t{threads}")), 1, threads, secs, seed);
        ours.print(threads, floor);
    }
    catch_up(&pg, catch_up_memories, seed);
}

/// What the writers did.
struct Saves {
    per_sec: f64,
    failed: u64,
    first_failure: Option<String>,
}

impl Saves {
    fn print(&self, writers: usize, floor: f64) {
        println!(
            "{writers:>7} | {:>26.0} | {:>46.0} | {:.3}{}",
            self.per_sec,
            floor,
            self.per_sec / floor,
            match &self.first_failure {
                Some(e) => format!(" ({} saves failed, the first: {e})", self.failed),
                None => String::new(),
            }
        );
    }
}

/// `machines` machines with `threads` writers each, saving for `secs` against the ledger at `url`.
fn saves(url: &str, machines: usize, threads: usize, secs: u64, seed: u64) -> Saves {
    let root = tempfile::tempdir().unwrap();
    // Each machine signs its commits with a key of its own, registered by the first, as the CLI
    // does; MEMLEDGER_BENCH_UNSIGNED=1 measures the same without keys, for the cost of signing.
    let signed = std::env::var_os("MEMLEDGER_BENCH_UNSIGNED").is_none();
    let machines: Vec<Memledger> = (0..machines)
        .map(|w| {
            let log = memledger_engine::connect_shared_ledger(url).unwrap();
            let key = root.path().join(format!("keys/machine-{w}.key"));
            let signer = signed.then(|| Arc::new(memledger_engine::Signer::create(&key).unwrap()));
            let options = OpenOptions { create: true, shared: Some(log), signer, ..OpenOptions::default() };
            Memledger::open(&root.path().join(format!("machine-{w}")), &options).unwrap()
        })
        .collect();
    if signed {
        for w in 1..machines.len() {
            let key = memledger_engine::Signer::load(&root.path().join(format!("keys/machine-{w}.key"))).unwrap();
            machines[0].ledger().register_key(key.public(), &format!("machine-{w}"), "bench").unwrap();
        }
    }
    let (done, failed, stop) = (AtomicU64::new(0), AtomicU64::new(0), AtomicBool::new(false));
    let first_failure = std::sync::Mutex::new(None);
    let started = Instant::now();
    std::thread::scope(|scope| {
        let writers = machines.iter().flat_map(|ml| std::iter::repeat_n(ml, threads));
        for (w, ml) in writers.enumerate() {
            let (done, failed, stop, first_failure) = (&done, &failed, &stop, &first_failure);
            scope.spawn(move || {
                let mut corpus = Corpus::new(seed + w as u64);
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    match ml.save(crate::request(corpus.next_memory(w * 1_000_000 + i)), "bench") {
                        Ok(_) => done.fetch_add(1, Ordering::Relaxed),
                        Err(e) => {
                            first_failure.lock().unwrap().get_or_insert_with(|| e.to_string());
                            failed.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                    i += 1;
                }
            });
        }
        std::thread::sleep(Duration::from_secs(secs));
        stop.store(true, Ordering::Relaxed);
    });
    let elapsed = started.elapsed();
    Saves {
        per_sec: done.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64(),
        failed: failed.load(Ordering::Relaxed),
        first_failure: first_failure.into_inner().unwrap(),
    }
}

/// A ledger of `memories` saves copied into PostgreSQL (as `migrate` does); then a fresh machine
/// opens it and catches up its views and text index, beside one `SELECT` of the same rows.
fn catch_up(pg: &Admin, memories: usize, seed: u64) {
    let url = pg.fresh_database("catchup");
    let local = tempfile::tempdir().unwrap();
    {
        let ml = Memledger::open(local.path(), &OpenOptions::default()).unwrap();
        crate::save_bulk(&ml, &mut Corpus::new(seed), memories);
        let log = memledger_engine::connect_shared_ledger(&url).unwrap();
        ml.ledger().copy_to(log.as_ref()).unwrap();
    }
    let log: Arc<dyn EventLog> = memledger_engine::connect_shared_ledger(&url).unwrap();
    let events = log.head().unwrap().seq;
    let t = Instant::now();
    let bytes = pg.read_all_events(&url);
    let floor = t.elapsed();
    let fresh = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let ml = Memledger::open(fresh.path(), &OpenOptions { create: true, shared: Some(log), ..OpenOptions::default() })
        .unwrap();
    let head = ml.catch_up().unwrap();
    let took = t.elapsed();
    assert_eq!(head, events, "the fresh machine caught up to the head");
    let rate = |d: Duration| events as f64 / d.as_secs_f64();
    println!(
        "catch-up of a fresh machine ({memories} memories, {events} events): {:.0} events/s ({:.2} s); \
         one SELECT of the rows ({:.1} MiB): {:.0} events/s ({:.2} s); ratio {:.3}",
        rate(took),
        took.as_secs_f64(),
        bytes as f64 / (1 << 20) as f64,
        rate(floor),
        floor.as_secs_f64(),
        rate(took) / rate(floor)
    );
}

/// The server, reached as the user of the URL given.
struct Admin {
    url: String,
    runtime: tokio::runtime::Runtime,
}

impl Admin {
    fn new(url: &str) -> Admin {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        Admin { url: url.to_string(), runtime }
    }

    fn client(&self, url: &str) -> tokio_postgres::Client {
        self.runtime.block_on(async {
            // TLS as the URL's sslmode asks, as the ledger itself connects.
            let connect = PgConnect::from_url(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            let (client, connection) = connect.config.connect(connect.tls.clone()).await.unwrap_or_else(|e| {
                panic!("cannot connect to {url}: {}", connect.explain(&e).unwrap_or(e.to_string()))
            });
            tokio::spawn(connection);
            client
        })
    }

    fn execute(&self, url: &str, sql: &str) {
        let client = self.client(url);
        self.runtime.block_on(client.batch_execute(sql)).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    fn version(&self) -> String {
        let client = self.client(&self.url);
        self.runtime.block_on(client.query_one("SHOW server_version", &[])).unwrap().get(0)
    }

    /// A new, empty database (dropped first when an earlier run left it); its URL.
    fn fresh_database(&self, name: &str) -> String {
        let name = format!("memledger_bench_{name}");
        // Two statements: neither runs inside a transaction block.
        self.execute(&self.url, &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        self.execute(&self.url, &format!("CREATE DATABASE {name}"));
        with_database(&self.url, &name)
    }

    /// `pgbench` inserting one row per transaction with `clients` clients (one thread each) for
    /// `secs` seconds, in a database of its own: its transactions per second.
    fn pgbench(&self, clients: usize, secs: u64) -> f64 {
        let url = self.fresh_database(&format!("floor{clients}"));
        self.execute(&url, "CREATE TABLE bench_floor (id bigserial PRIMARY KEY, payload bytea NOT NULL)");
        let script = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(script.path(), FLOOR_SCRIPT).unwrap();
        let (c, t) = (clients.to_string(), secs.to_string());
        let out = std::process::Command::new("pgbench")
            .args(["-n", "-c", &c, "-j", &c, "-T", &t, "-f"])
            .arg(script.path())
            .arg(&url)
            .output()
            .expect("pgbench runs (Debian's postgresql-client)");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "pgbench: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        stdout
            .lines()
            .find_map(|l| l.strip_prefix("tps = ")?.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no tps in pgbench's output: {stdout}"))
    }

    /// Read every stored event of the ledger at `url` with one query: the bytes read.
    fn read_all_events(&self, url: &str) -> usize {
        let client = self.client(url);
        let rows =
            self.runtime.block_on(client.query("SELECT seq, event FROM memledger_events ORDER BY seq", &[])).unwrap();
        rows.iter().map(|r| r.get::<_, &[u8]>(1).len()).sum()
    }
}

/// `url` naming the database `name` instead, its parameters (`sslmode`, …) kept.
fn with_database(url: &str, name: &str) -> String {
    let (path, query) = url.split_once('?').map_or((url, None), |(path, query)| (path, Some(query)));
    let (base, _) = path.rsplit_once('/').expect("a URL with a database path");
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}
