//! Live streams end to end: `memledger stream --to nats://…` against a real nats-server with
//! JetStream (scripts/services.sh starts one), killed with SIGKILL halfway and started again, and
//! `export --follow` read line by line while another process saves. Everything waits on messages
//! and lines, nothing on sleeps or timing.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use memledger_tests::services::{NatsProbe, fresh_pg_database, nats_url, unique_subject};

use crate::support;

/// How long a test waits for a line or a message before it fails (a hung process, not a slow
/// one: the waits end as soon as what they wait for arrives).
const GIVE_UP: Duration = Duration::from_secs(120);

/// `n` memories no two alike, as `save --from` lines.
fn memories(n: usize, tag: &str) -> String {
    let nouns = ["harbor", "lantern", "orchard", "glacier", "meadow", "quarry", "canyon", "estuary", "tundra"];
    (0..n)
        .map(|i| {
            let text = format!("surveyor {tag}{i} maps the {} near marker q{}z{}", nouns[i % 9], i * 7919 % 100_003, i);
            serde_json::json!({ "text": text }).to_string() + "\n"
        })
        .collect()
}

/// Save `n` memories on the store at `dir` (through `--ledger URL` when given) in one `save --from`.
fn save_many(dir: &Path, ledger: Option<&str>, n: usize, tag: &str) {
    let file = dir.with_extension(format!("{tag}.jsonl"));
    std::fs::write(&file, memories(n, tag)).unwrap();
    let mut args = ledger_args(ledger);
    args.extend(["--json", "save", "--from", file.to_str().unwrap()]);
    let out = support::run(dir, &args);
    assert!(out.status.success(), "save --from: {}", String::from_utf8_lossy(&out.stderr));
}

fn ledger_args(ledger: Option<&str>) -> Vec<&str> {
    match ledger {
        Some(url) => vec!["--ledger", url, "--no-server"],
        None => vec!["--no-server"],
    }
}

/// The lines `export` prints, each without its newline.
fn exported(dir: &Path, ledger: Option<&str>) -> Vec<String> {
    let mut args = ledger_args(ledger);
    args.push("export");
    let out = support::run(dir, &args);
    assert!(out.status.success(), "export: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

fn stream_args<'a>(ledger: Option<&'a str>, to: &'a str, until_head: bool) -> Vec<&'a str> {
    let mut args = ledger_args(ledger);
    args.extend(["--json", "stream", "--to", to]);
    if until_head {
        args.push("--until-head");
    }
    args
}

/// `stream --until-head`, which must succeed: its report.
fn stream_to_head(dir: &Path, ledger: Option<&str>, to: &str) -> Value {
    let args = stream_args(ledger, to, true);
    support::value(&support::run(dir, &args), &args)
}

/// The mirror holds exactly the ledger's events: message i is event i (its `Nats-Msg-Id` the
/// seq, its payload `export`'s line), nothing more.
fn assert_mirrors(probe: &NatsProbe, stream: &str, ledger_lines: &[String]) {
    let stored = probe.stored(stream);
    assert_eq!(
        stored.len(),
        ledger_lines.len(),
        "the mirror holds {} messages, the ledger {} events",
        stored.len(),
        ledger_lines.len()
    );
    for (i, (message, line)) in stored.iter().zip(ledger_lines).enumerate() {
        let seq = i as u64 + 1;
        assert_eq!(message.sequence, seq, "stream sequences are gap-free");
        assert_eq!(message.msg_id.as_deref(), Some(seq.to_string().as_str()), "message {seq}'s Nats-Msg-Id");
        assert_eq!(std::str::from_utf8(&message.payload).unwrap(), line, "message {seq}'s payload");
    }
}

#[test]
fn a_streamer_killed_halfway_resumes_to_an_exact_mirror() {
    let Some(nats) = nats_url() else { return };
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("store");
    save_many(&dir, None, 10_000, "k");
    let lines = exported(&dir, None);
    assert!(lines.len() >= 10_000, "{} events", lines.len());
    let subject = unique_subject("killed");
    let to = format!("{nats}/{subject}");
    let stream = subject.replace('.', "_");
    let probe = NatsProbe::connect(&nats);
    let published = probe.count_published(&subject);

    // Started following, then killed with SIGKILL once half the events were published.
    let args = stream_args(None, &to, false);
    let mut streamer =
        support::memledger(&dir).args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let half = lines.len() / 2;
    for n in 0..half {
        if published.recv_timeout(GIVE_UP).is_err() {
            let _ = streamer.kill();
            let out = streamer.wait_with_output().unwrap();
            panic!("{n} messages published, then none: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    streamer.kill().unwrap();
    streamer.wait().unwrap();
    let held = probe.stored(&stream).len();
    assert!(held < lines.len(), "the streamer was killed before the end ({held} of {})", lines.len());

    // Started again: it resumes where the mirror ends. A publish the killed streamer had already
    // written to its socket may still reach the stream after `held` was read, so the mirror can
    // have grown by then; the report names where it found the mirror's end.
    let report = stream_to_head(&dir, None, &to);
    let resumed_after = report["resumed_after"].as_u64().unwrap() as usize;
    assert!(resumed_after >= held && resumed_after < lines.len(), "{report} ({held} held at the kill)");
    assert_eq!(report["published"], (lines.len() - resumed_after) as u64, "{report}");
    assert_eq!(report["head_seq"], lines.len() as u64, "{report}");
    assert_mirrors(&probe, &stream, &lines);

    // Once more at the head: nothing published; new events follow the old ones.
    assert_eq!(stream_to_head(&dir, None, &to)["published"], 0);
    save_many(&dir, None, 5, "more");
    let lines = exported(&dir, None);
    let report = stream_to_head(&dir, None, &to);
    assert_eq!(report["head_seq"], lines.len() as u64, "{report}");
    assert_mirrors(&probe, &stream, &lines);

    // A subject mirrors one ledger: another ledger's streamer is refused, and publishes nothing.
    let other = root.path().join("other");
    save_many(&other, None, 3, "other");
    let refused = |dir: &Path, to: &str, says: &str| {
        let out = support::run(dir, &stream_args(None, to, true));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(support::code(&out), 2, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    };
    refused(&other, &to, "past this ledger's head");
    assert_mirrors(&probe, &stream, &lines);
    let small = unique_subject("small");
    let small_to = format!("{nats}/{small}");
    let other_lines = exported(&other, None);
    assert_eq!(stream_to_head(&other, None, &small_to)["published"], other_lines.len() as u64);
    refused(&dir, &small_to, "not this ledger's");
    assert_mirrors(&probe, &small.replace('.', "_"), &other_lines);
}

#[test]
fn a_shared_ledger_streams_to_nats_too() {
    let Some(url) = fresh_pg_database() else { return };
    let Some(nats) = nats_url() else { return };
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    save_many(&a, Some(&url), 40, "pg");
    let subject = unique_subject("shared");
    let to = format!("{nats}/{subject}");
    let probe = NatsProbe::connect(&nats);
    let report = stream_to_head(&b, Some(&url), &to);
    let lines = exported(&a, Some(&url));
    assert_eq!(report["published"], lines.len() as u64, "{report}");
    assert_mirrors(&probe, &subject.replace('.', "_"), &lines);
}

#[test]
fn a_bad_stream_url_is_refused_before_anything_is_published() {
    let root = tempfile::tempdir().unwrap();
    for url in ["http://127.0.0.1:4222", "nats://127.0.0.1:4222/a.*", "nats://127.0.0.1:4222/a..b", "nats:///x"] {
        let out = support::run(root.path(), &["stream", "--to", url, "--until-head"]);
        assert_eq!(support::code(&out), 2, "{url}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = support::run(root.path(), &["stream", "--to", "nats://me:secret@127.0.0.1:4222/a.>"]);
    assert_eq!(support::code(&out), 2);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("secret"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A running `export --follow` and its lines as they come.
struct Follower {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Follower {
    fn start(dir: &Path, since: u64) -> Follower {
        let mut child = support::memledger(dir)
            .args(["--no-server", "export", "--follow", "--since", &since.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Follower { child, lines }
    }

    /// The lines up to and including the one of event `seq`.
    fn until(&self, seq: u64) -> Vec<String> {
        let mut got = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(GIVE_UP)
                .unwrap_or_else(|_| panic!("no line for seq {seq} (got {})", got.len()));
            let at: u64 = serde_json::from_str::<Value>(&line).unwrap()["seq"].as_u64().unwrap();
            got.push(line);
            if at >= seq {
                return got;
            }
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn export_follow_prints_events_as_another_process_appends_them_and_resumes_with_since() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("store");
    save_many(&dir, None, 3, "f");
    let before = exported(&dir, None);
    let follower = Follower::start(&dir, 1);
    assert_eq!(follower.until(before.len() as u64), before, "the events already there, as export prints them");
    // Saved by another process while the follower runs.
    save_many(&dir, None, 4, "g");
    let after = exported(&dir, None);
    assert!(after.len() > before.len());
    assert_eq!(follower.until(after.len() as u64), after[before.len()..], "the new events, in order, once each");
    drop(follower);
    // Resumed with --since: from that seq on, nothing before it.
    let since = before.len() as u64 + 1;
    let resumed = Follower::start(&dir, since);
    assert_eq!(resumed.until(after.len() as u64), after[before.len()..]);
}
