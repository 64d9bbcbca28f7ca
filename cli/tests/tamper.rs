//! Forgers who have read docs/format.md but do not hold the signing key, each working on the
//! store's files directly: what they do must leave `verify` failing (before and after a
//! `rebuild`, which refuses), reads must refuse an altered event, and a store restored from an
//! older copy must be refused when opened. Then the external tamper suite, agent-memory-integrity
//! (PyPI), runs its nine at-rest attacks through `tests/tamper/memledger_agmi.py`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use memledger_ledger::store::{Batch, CF_EVENTS, Store};
use memledger_ledger::tables::{CF_CHECKPOINTS, CheckpointsTable, EventsTable, Head, MetaTable};
use memledger_schemas::{Event, EventBody, EventId};
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{self, code};

/// One machine: a home of its own, so its own signing key and witnesses.
struct Machine {
    home: TempDir,
}

impl Machine {
    fn new() -> Machine {
        Machine { home: tempfile::tempdir().unwrap() }
    }

    fn run(&self, store: &Path, args: &[&str]) -> Output {
        self.run_with(store, args, &[])
    }

    fn run_with(&self, store: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = support::memledger(store);
        command
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("MEMLEDGER_NO_SERVER", "1")
            .env_remove("MEMLEDGER_SIGNING_KEY")
            .env_remove("MEMLEDGER_WITNESS_DIR")
            .env_remove("MEMLEDGER_CONFIG")
            .env_remove("MEMLEDGER_WITNESS_TOKEN")
            .envs(env.iter().copied());
        command.args(args).output().unwrap()
    }

    fn json(&self, store: &Path, args: &[&str]) -> Value {
        let out = self.run(store, &[&["--json"], args].concat());
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// `verify --json`: the exit code and the report (none when opening was refused).
    fn verify(&self, store: &Path) -> (i32, Option<Value>, String) {
        let out = self.run(store, &["--json", "verify"]);
        let report = serde_json::from_slice(&out.stdout).ok();
        (code(&out), report, String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// A store with four saves on `machine`.
fn seeded(machine: &Machine) -> (TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    for text in [
        "The docs site is built with Docusaurus.",
        "Transactional email goes out through Mailgun.",
        "Deploys happen on Tuesdays after the standup.",
        "The billing service is written in Go.",
    ] {
        let out = machine.run(&store, &["save", text]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    (root, store)
}

fn raw(store: &Path) -> Store {
    Store::open(store, &[], false, Duration::from_secs(10)).unwrap()
}

fn events(store: &Store) -> Vec<Event> {
    store
        .scan_from(CF_EVENTS, &[])
        .unwrap()
        .map(|row| {
            let (k, v) = row.unwrap();
            EventsTable::decode_row(&k, &v).unwrap()
        })
        .collect()
}

/// The seq of the observation whose text contains `needle`.
fn observed(events: &[Event], needle: &str) -> u64 {
    events
        .iter()
        .find(|e| matches!(&e.body, EventBody::MemoryObserved(b) if b.text.contains(needle)))
        .map(|e| e.seq)
        .unwrap()
}

/// Give the observation holding `needle` the text `text`, in place (its hash left as it was): the
/// observation's seq.
fn alter_in_place(store: &Path, needle: &str, text: &str) -> u64 {
    let db = raw(store);
    let mut all = events(&db);
    let seq = observed(&all, needle);
    set_text(&mut all[seq as usize - 1], text);
    let mut batch = Batch::default();
    EventsTable::put(&mut batch, &all[seq as usize - 1]);
    db.write(batch, true).unwrap();
    seq
}

fn set_text(event: &mut Event, text: &str) {
    let EventBody::MemoryObserved(b) = &mut event.body else { panic!("seq {} is no observation", event.seq) };
    b.text = text.into();
    b.content_hash = memledger_schemas::Hash(*blake3::hash(text.as_bytes()).as_bytes());
}

/// Forger 1: rewrite one memory's text and recompute every later hash and the head record, as
/// docs/format.md describes them.
fn rewrite_and_rechain(store: &Path, needle: &str, text: &str) -> u64 {
    let db = raw(store);
    let mut all = events(&db);
    let seq = observed(&all, needle);
    set_text(&mut all[seq as usize - 1], text);
    let mut batch = Batch::default();
    let mut prev = all[seq as usize - 2].hash;
    for event in &mut all[seq as usize - 1..] {
        event.prev_hash = prev;
        event.seal();
        prev = event.hash;
        EventsTable::put(&mut batch, event);
    }
    let last = all.last().unwrap();
    MetaTable::put_head(&mut batch, Head { seq: last.seq, hash: last.hash });
    db.write(batch, true).unwrap();
    seq
}

/// Forger 2: a whole save appended after the head with valid links and hashes.
fn append_after_head(store: &Path, text: &str) -> u64 {
    let db = raw(store);
    let all = events(&db);
    let last = all.last().unwrap();
    let mut forged = all.iter().find(|e| matches!(e.body, EventBody::MemoryObserved(_))).unwrap().clone();
    forged.seq = last.seq + 1;
    forged.event_id = EventId::random();
    forged.idempotency_key = None;
    forged.recorded_at = last.recorded_at;
    forged.prev_hash = last.hash;
    set_text(&mut forged, text);
    forged.seal();
    let mut batch = Batch::default();
    EventsTable::put(&mut batch, &forged);
    MetaTable::put_head(&mut batch, Head { seq: forged.seq, hash: forged.hash });
    db.write(batch, true).unwrap();
    forged.seq
}

/// Forger 3: drop the last save, its checkpoint with it, and move the head back.
fn truncate_last_save(store: &Path) -> u64 {
    let db = raw(store);
    let all = events(&db);
    let last = all.last().unwrap();
    let kept: Vec<&Event> = all.iter().filter(|e| e.correlation_id != last.correlation_id).collect();
    let new_head = kept.last().unwrap();
    let mut batch = Batch::default();
    for e in all.iter().filter(|e| e.seq > new_head.seq) {
        batch.delete(CF_EVENTS, EventsTable::key(e.seq));
        batch.delete(CF_CHECKPOINTS, CheckpointsTable::signature_key(e.seq));
    }
    MetaTable::put_head(&mut batch, Head { seq: new_head.seq, hash: new_head.hash });
    db.write(batch, true).unwrap();
    new_head.seq
}

#[test]
fn a_history_rewritten_and_rechained_without_the_key_fails_verify_and_rebuild_refuses_it() {
    let owner = Machine::new();
    let (_root, store) = seeded(&owner);
    let seq = rewrite_and_rechain(&store, "Mailgun", "Transactional email goes out through Postmark.");

    // On the machine that wrote it, the witness notices at once: the store is refused.
    let (exit, _, stderr) = owner.verify(&store);
    assert_eq!(exit, 6, "{stderr}");
    assert!(stderr.contains("rewritten") && stderr.contains("witness"), "{stderr}");
    assert_eq!(code(&owner.run(&store, &["rebuild"])), 6);

    // Anywhere else (no witness, another key), the signatures do.
    let other = Machine::new();
    let (exit, report, stderr) = other.verify(&store);
    let report = report.unwrap_or_else(|| panic!("no report: {stderr}"));
    assert_eq!(exit, 1, "{report}");
    assert_eq!(report["first_bad_seq"], seq, "{report}");
    assert!(report["problem"].as_str().unwrap().contains("no valid signature covers"), "{report}");
    let rebuild = other.run(&store, &["rebuild"]);
    assert_eq!(code(&rebuild), 1);
    let stderr = String::from_utf8_lossy(&rebuild.stderr);
    assert!(stderr.contains("refusing to rebuild") && stderr.contains(&format!("seq {seq}")), "{stderr}");
    let (exit, report, _) = other.verify(&store);
    assert_eq!((exit, report.unwrap()["first_bad_seq"].clone()), (1, Value::from(seq)), "still failing after rebuild");
    // And the copy on the other machine is not signed over by it.
    assert_ne!(code(&other.run(&store, &["save", "Search runs on Typesense."])), 0);
}

#[test]
fn a_validly_chained_tail_appended_without_the_key_fails_verify_and_is_not_signed_over() {
    let owner = Machine::new();
    let (_root, store) = seeded(&owner);
    let head = owner.json(&store, &["verify"])["head_seq"].as_u64().unwrap();
    let forged = append_after_head(&store, "The deploy freeze is lifted for everyone.");
    assert_eq!(forged, head + 1);

    for machine in [&owner, &Machine::new()] {
        let (exit, report, stderr) = machine.verify(&store);
        let report = report.unwrap_or_else(|| panic!("no report: {stderr}"));
        assert_eq!(exit, 1, "{report}");
        assert_eq!(report["first_bad_seq"], forged, "{report}");
        assert!(report["problem"].as_str().unwrap().contains("unsigned tail"), "{report}");
    }
    // The owner's next save would sign the forged event into its history: refused instead.
    let save = owner.run(&store, &["save", "Search runs on Typesense."]);
    assert_eq!(code(&save), 1);
    assert!(String::from_utf8_lossy(&save.stderr).contains("not signed"), "{}", String::from_utf8_lossy(&save.stderr));
    assert_eq!(code(&owner.run(&store, &["rebuild"])), 1);
    assert_eq!(owner.verify(&store).0, 1, "still failing after rebuild");
}

#[test]
fn a_store_truncated_or_restored_from_an_older_copy_is_refused_until_someone_accepts_it() {
    let owner = Machine::new();
    let (root, store) = seeded(&owner);
    let bot = owner.json(&store, &["principals", "add", "bot", "--kind", "agent", "--grant", "team:docs=read,write"]);
    assert!(owner.run(&store, &["save", "The status page runs on Instatus."]).status.success());
    let head = owner.json(&store, &["verify"])["head_seq"].as_u64().unwrap();
    let witness = root.path().join("witness.json");
    owner.json(&store, &["checkpoint", "--to", witness.to_str().unwrap()]);
    let kept = truncate_last_save(&store);

    let (exit, _, stderr) = owner.verify(&store);
    assert_eq!(exit, 6, "{stderr}");
    assert!(stderr.contains(&format!("head is seq {kept}")) && stderr.contains(&format!("seq {head}")), "{stderr}");
    for args in [&["rebuild"][..], &["list"], &["save", "Search runs on Typesense."]] {
        let out = owner.run(&store, args);
        assert_eq!(code(&out), 6, "{args:?}");
        // The refusal names the command that accepts a deliberate restore.
        assert!(String::from_utf8_lossy(&out.stderr).contains("memledger checkpoint --accept"), "{args:?}");
    }
    // A copy checked elsewhere against the witness file fails the same way.
    let elsewhere = Machine::new();
    let out = elsewhere.run(&store, &["verify", "--witness", witness.to_str().unwrap()]);
    assert_eq!(code(&out), 6, "{}", String::from_utf8_lossy(&out.stderr));

    // Accepting the restore is deliberate, an administrator's, and recorded.
    let token = bot["token"].as_str().unwrap();
    let out = owner.run_with(&store, &["checkpoint", "--accept", "mine now"], &[("MEMLEDGER_TOKEN", token)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), 5, "{stderr}");
    assert!(stderr.contains("bot may not admin"), "{stderr}");
    let out = owner.run(&store, &["--actor", "cli:ana", "checkpoint", "--accept", "restored from Monday's backup"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The views still hold the dropped save: the ledger verifies, and a rebuild catches them up.
    let (exit, report, _) = owner.verify(&store);
    let report = report.unwrap();
    assert_eq!(
        (exit, &report["ok"], &report["views_consistent"]),
        (1, &Value::Bool(true), &Value::Bool(false)),
        "{report}"
    );
    assert!(owner.run(&store, &["rebuild"]).status.success());
    assert_eq!(owner.verify(&store).0, 0);
    let accepted = owner.json(&store, &["checkpoint", "--accepted"]);
    let first = &accepted["accepted"][0];
    assert_eq!((first["by"].as_str(), first["head_seq"].as_u64()), (Some("cli:ana"), Some(kept)), "{accepted}");
    assert_eq!(first["instead_of_seq"], head);
    // It is an event of the ledger: in the log, the export and the chain the key signs.
    let out = owner.run(&store, &["--json", "log", "--since", &(kept + 1).to_string()]);
    let logged: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let event = logged.iter().find(|e| e["type"] == "head_accepted").unwrap_or_else(|| panic!("{logged:?}"));
    assert_eq!((event["seq"].as_u64(), event["actor"].as_str()), (Some(kept + 1), Some("cli:ana")), "{event}");
    assert_eq!(event["body"]["reason"], "restored from Monday's backup", "{event}");
    assert_eq!(event["body"]["instead_of_seq"], head, "{event}");
    assert!(owner.run(&store, &["save", "Search runs on Typesense."]).status.success());
    assert_eq!(owner.verify(&store).0, 0);
}

#[test]
fn reads_refuse_an_event_altered_in_place() {
    let owner = Machine::new();
    let (_root, store) = seeded(&owner);
    let seq = alter_in_place(&store, "Tuesdays", "Deploys happen on Fridays after the standup.");
    for args in [&["log"][..], &["export"], &["rebuild"]] {
        let out = owner.run(&store, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("seq {seq}")), "{args:?}: {stderr}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("Fridays"), "{args:?} served the altered text");
    }
    assert_eq!(owner.verify(&store).0, 1);
    // The failed verification stays said until one passes: `stats` and `status` give it.
    let last = &owner.json(&store, &["stats"])["last_verify"];
    assert_eq!((last["ok"].as_bool(), last["first_bad_seq"].as_u64()), (Some(false), Some(seq)), "{last}");
    assert_eq!(owner.json(&store, &["status"])["last_verify"]["ok"], false);
}

#[test]
fn every_answer_through_the_server_says_the_last_verification_failed() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    support::json(&store, &["save", "Deploys happen on Tuesdays after the standup."]);
    assert_eq!(support::json(&store, &["verify"])["ok"], true);
    assert_eq!(support::json(&store, &["stats"])["last_verify"]["ok"], true);
    alter_in_place(&store, "Tuesdays", "Deploys happen on Fridays after the standup.");
    assert_eq!(code(&support::run(&store, &["verify"])), 1);
    let served = crate::support::served::Served::start(&store, true);
    let out = support::run(&store, &["--json", "stats"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), 0, "{stderr}");
    assert!(stderr.contains("the last verification of this store failed"), "{stderr}");
    let answer = served.http("GET", "/v1/stats", None);
    assert_eq!(answer.status, 200);
    let header = answer.header("memledger-verify-failed").unwrap_or_default();
    assert!(header.contains("first bad seq"), "{:?}", answer.headers);
    drop(served);
}

#[test]
fn the_external_tamper_suite_detects_all_nine_attacks() {
    let venv = support::python_venv();
    let check = venv.join("bin/agmi-check");
    if !check.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run agent-memory-integrity, but {} is missing (scripts/setup_tests.sh installs it)",
            check.display()
        );
        println!("SKIPPED: {} is missing; scripts/setup_tests.sh installs agent-memory-integrity", check.display());
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("agmi.json");
    let adapter = support::manifest_dir().parent().unwrap().join("tests/tamper");
    let out = Command::new(&check)
        .args(["--adapter", "memledger_agmi:MemledgerAdapter", "--json"])
        .arg(&report)
        .env("PYTHONPATH", &adapter)
        .env("MEMLEDGER_BIN", support::bin())
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "agmi-check exited {:?}:\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let edits = report["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 9, "{report}");
    for edit in edits {
        assert!(matches!(edit["verdict"].as_str(), Some("REPORTED" | "REJECTED")), "{edit}");
    }
}

#[test]
fn a_rotated_key_signs_from_the_next_seq_and_the_old_one_signs_nothing_after() {
    let machine = Machine::new();
    let (root, store) = seeded(&machine);
    // A second store of the machine, signed by the same key.
    let other = root.path().join("other");
    machine.json(&other, &["save", "The staging cluster runs on k3s."]);
    let key_file = machine.home.path().join("config/memledger/signing.key");
    let old_key = std::fs::read(&key_file).unwrap();
    let head = machine.json(&store, &["verify"])["head_seq"].as_u64().unwrap();

    let rotated = machine.json(&store, &["checkpoint", "--rotate-key"]);
    assert_eq!(rotated["from_seq"], head + 1, "{rotated}");
    assert_ne!(rotated["key_id"], rotated["previous_key_id"]);
    assert_ne!(std::fs::read(&key_file).unwrap(), old_key, "a new key file in the old one's place");
    let retired = PathBuf::from(rotated["retired_key_file"].as_str().unwrap());
    assert_eq!(std::fs::read(&retired).unwrap(), old_key, "the old key kept under retired/");
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777, 0o600);
    }

    // Saves go on under the new key, and the store verifies with both keys.
    machine.json(&store, &["save", "Search runs on Typesense."]);
    let (exit, report, stderr) = machine.verify(&store);
    assert_eq!(exit, 0, "{stderr}");
    let keys = report.unwrap()["keys"].clone();
    assert!(keys.as_array().unwrap().contains(&rotated["key_id"]), "{keys}");
    assert!(keys.as_array().unwrap().contains(&rotated["previous_key_id"]), "{keys}");

    // The machine's other store hands over to the new key when next opened.
    machine.json(&other, &["save", "The prod cluster runs on EKS."]);
    let (exit, report, stderr) = machine.verify(&other);
    assert_eq!(exit, 0, "{stderr}");
    assert_eq!(report.unwrap()["keys"].as_array().unwrap().len(), 2);

    // Whoever still holds the old key (a backup of the key file) may read the store but no
    // longer append to it.
    let stale = Machine::new();
    let stale_key = stale.home.path().join("config/memledger/signing.key");
    std::fs::create_dir_all(stale_key.parent().unwrap()).unwrap();
    std::fs::write(&stale_key, &old_key).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stale_key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let out = stale.run(&store, &["save", "Billing moved to Rust."]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("was retired from seq") && stderr.contains("use the key that replaced it"), "{stderr}");
    assert_eq!(stale.json(&store, &["list"])["memories"].as_array().map(Vec::len), Some(5));
    let (exit, _, stderr) = machine.verify(&store);
    assert_eq!(exit, 0, "nothing was written: {stderr}");

    // A store that this machine's key does not sign has no key to rotate here.
    let foreign = Machine::new();
    let out = foreign.run(&store, &["checkpoint", "--rotate-key"]);
    assert_eq!(code(&out), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no key of it to rotate"));
}

/// A directory copied whole (a backup of a closed store).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A witness server on loopback as a team might run one: PUT keeps a body per path, GET gives it
/// back (404 before), and both need `Authorization: Bearer {token}` (401 otherwise).
struct WitnessServer {
    port: u16,
    kept: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>>>,
}

impl WitnessServer {
    fn start(token: &'static str) -> WitnessServer {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let kept = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
        let shared = kept.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let mut parts = line.split_whitespace();
                let (method, path) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
                let (mut length, mut authorized) = (0, false);
                loop {
                    let mut header = String::new();
                    reader.read_line(&mut header).unwrap();
                    let header = header.trim_end();
                    if header.is_empty() {
                        break;
                    }
                    let (name, value) = header.split_once(':').unwrap();
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.trim().parse().unwrap(),
                        "authorization" => authorized = value.trim() == format!("Bearer {token}"),
                        _ => {}
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let (status, answer) = match (authorized, method.as_str()) {
                    (false, _) => ("401 Unauthorized", Vec::new()),
                    (true, "PUT") => {
                        shared.lock().unwrap().insert(path, body);
                        ("204 No Content", Vec::new())
                    }
                    (true, "GET") => match shared.lock().unwrap().get(&path) {
                        Some(body) => ("200 OK", body.clone()),
                        None => ("404 Not Found", Vec::new()),
                    },
                    _ => ("405 Method Not Allowed", Vec::new()),
                };
                let head =
                    format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", answer.len());
                let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(&answer));
            }
        });
        WitnessServer { port, kept }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn kept_seq(&self, path: &str) -> Option<u64> {
        let kept = self.kept.lock().unwrap();
        let record: Value = serde_json::from_slice(kept.get(path)?).unwrap();
        record["seq"].as_u64()
    }
}

/// Keeping the witness at `place` (an HTTP URL or a NATS subject) and checking copies against
/// it: the store verifies, a backup taken before the last save does not (exit 6), and keeping the
/// backup's checkpoint there is refused (the witness never moves back).
fn a_witness_kept_at(place: &str, token: Option<&str>, kept_seq: &dyn Fn() -> Option<u64>) {
    let owner = Machine::new();
    let (root, store) = seeded(&owner);
    let backup = root.path().join("backup");
    copy_dir(&store, &backup);
    assert!(owner.run(&store, &["save", "Search runs on Typesense."]).status.success());
    let head = owner.json(&store, &["verify"])["head_seq"].as_u64().unwrap();
    let env: Vec<(&str, &str)> = token.map(|t| ("MEMLEDGER_WITNESS_TOKEN", t)).into_iter().collect();
    let with_token = |dir: &Path, args: &[&str]| owner.run_with(dir, args, &env);

    let out = with_token(&store, &["verify", "--witness", place]);
    assert_eq!(code(&out), 6, "nothing is kept yet: {}", String::from_utf8_lossy(&out.stderr));
    let out = with_token(&store, &["--json", "checkpoint", "--to", place]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(kept_seq(), Some(head));
    let out = with_token(&store, &["verify", "--witness", place]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // the backup, restored elsewhere, is behind what the team's witness saw
    let out = with_token(&backup, &["verify", "--witness", place]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), 6, "{stderr}");
    assert!(stderr.contains(&format!("has seen seq {head}")) && stderr.contains("older copy"), "{stderr}");
    let out = with_token(&backup, &["checkpoint", "--to", place]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), 6, "{stderr}");
    assert!(stderr.contains("would move the witness back"), "{stderr}");
    assert_eq!(kept_seq(), Some(head), "the refused checkpoint kept nothing");

    // the store goes on, and its next checkpoint moves the witness forward
    assert!(owner.run(&store, &["save", "Feature flags live in Unleash."]).status.success());
    assert!(with_token(&store, &["checkpoint", "--to", place]).status.success());
    assert!(kept_seq().is_some_and(|seq| seq > head));
}

#[test]
fn a_witness_kept_over_http_catches_an_older_copy_and_never_moves_back() {
    let server = WitnessServer::start("team-s3cret");
    let place = server.url("/witness/laptop.json");
    a_witness_kept_at(&place, Some("team-s3cret"), &|| server.kept_seq("/witness/laptop.json"));

    // without the token, or with another, the server's refusal is the error
    let owner = Machine::new();
    let (_root, store) = seeded(&owner);
    let out = owner.run(&store, &["checkpoint", "--to", &server.url("/witness/other.json")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    assert_eq!(server.kept_seq("/witness/other.json"), None);
}

#[test]
fn a_witness_kept_on_a_nats_subject_catches_an_older_copy_and_never_moves_back() {
    let Some(url) = memledger_tests::services::nats_url() else { return };
    let subject = memledger_tests::services::unique_subject("witness");
    let place = format!("{}/{subject}", url.trim_end_matches('/'));
    let probe = memledger_tests::services::NatsProbe::connect(&url);
    let stream = memledger_ledger::nats::stream_name(&subject);
    a_witness_kept_at(&place, None, &|| {
        let last = probe.stored(&stream).pop()?;
        serde_json::from_slice::<Value>(&last.payload).unwrap()["seq"].as_u64()
    });
    // a URL without a subject is refused before anything is done
    let owner = Machine::new();
    let (_root, store) = seeded(&owner);
    let out = owner.run(&store, &["checkpoint", "--to", &url]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(stderr.contains("name the subject"), "{stderr}");
}
