//! `erase` end to end: a memory with a marker in its text goes through versions, a conflict, a
//! merge, embeddings and an export; once erased, no file of the store holds the marker, `verify`
//! proves the chain and the views, reads say `[erased at …, by …]`, and an export made afterwards
//! imports elsewhere still erased. A kill -9 during an erasure leaves it done or not done.
//! `<private>` spans never reach the store at all.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rand::Rng;
use serde_json::Value;

use crate::models::{json_with_env, with_env};
use crate::support::served::Served;
use crate::support::{self, mock_http};

const MARKER: &str = "ZORBLAX7731";

/// Every file under `dir` whose bytes hold `needle` in any letter case.
pub(crate) fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let needle = needle.to_ascii_lowercase().into_bytes();
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let lower = bytes.to_ascii_lowercase();
                if lower.windows(needle.len()).any(|w| w == needle.as_slice()) {
                    found.push(path.display().to_string());
                }
            }
        }
    }
    found.sort();
    found
}

/// Any text gets the same direction: every memory is every other's embedding candidate.
fn embedder() -> mock_http::MockServer {
    mock_http::start(|seen| {
        let n = seen.body["input"].as_array().map_or(1, Vec::len);
        mock_http::embeddings(&vec![vec![0.6, 0.8]; n])
    })
}

fn id(v: &Value) -> &str {
    v["memory_id"].as_str().unwrap()
}

fn assert_sound(dir: &Path, what: &str) {
    let v = support::json(dir, &["verify"]);
    assert_eq!((&v["ok"], &v["views_consistent"]), (&Value::from(true), &Value::from(true)), "{what}: {v}");
}

#[test]
fn an_erased_memory_leaves_no_byte_in_the_store_and_the_chain_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let d = &tmp.path().join("store");
    let server = embedder();
    let env = [("MEMLEDGER_EMBED_URL", server.url.as_str()), ("MEMLEDGER_EMBED_MODEL", "fixed-embed")];
    let first = json_with_env(d, &env, &["save", &format!("the {MARKER} staging database port is 5432")]);
    let a = id(&first).to_string();
    let edited = json_with_env(d, &env, &["update", &a, &format!("the {MARKER} staging database port is 5432 on db1")]);
    let a2 = id(&edited).to_string();
    let c = json_with_env(d, &env, &["save", &format!("the {MARKER} staging database port is 5433 on db1")]);
    assert_eq!(c["outcome"], "conflict", "{c}");
    let cid = c["conflict_id"].as_str().unwrap().to_string();
    let merged = json_with_env(
        d,
        &env,
        &["conflicts", "resolve", &cid, "--merge", &format!("the {MARKER} staging database port moved to 5433")],
    );
    assert_eq!(merged["status"], "resolved", "{merged}");
    json_with_env(d, &env, &["embed"]);
    assert!(server.hits() > 0, "the embedder was asked");
    let exported = tmp.path().join("before.jsonl");
    assert!(with_env(d, &[], &["export", "-o", exported.to_str().unwrap()]).status.success());
    assert!(!files_holding(d, MARKER).is_empty(), "the marker is in the store before the erasure");
    let before_seq = support::json(d, &["stats"])["events"].as_u64().unwrap();

    // A dry run lists what would go, and writes nothing.
    let dry = json_with_env(d, &[], &["erase", &a2, "--lineage", "--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    let memories: Vec<&str> = dry["memories"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert!(memories.contains(&a.as_str()) && memories.contains(&a2.as_str()), "{dry}");
    assert_eq!(memories.len(), 3, "both versions and the merged text: {dry}");
    assert_eq!(dry["conflicts"][0], cid.as_str());
    assert_eq!(dry["exports_since"].as_array().unwrap().len(), 1, "{dry}");
    assert!(!dry["edges"].as_array().unwrap().is_empty());
    let human = with_env(d, &[], &["erase", &a2, "--lineage", "--dry-run"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("exported"), "{}", String::from_utf8_lossy(&human.stdout));
    assert_eq!(support::json(d, &["stats"])["events"].as_u64().unwrap(), before_seq, "a dry run writes nothing");

    let erased = json_with_env(d, &[], &["erase", &a2, "--lineage", "--reason", "a test marker"]);
    assert_eq!(erased["dry_run"], false);
    assert_eq!(erased["erasure_seq"].as_u64(), Some(before_seq + 1));
    // The incoming side of the conflict holds the marker too: erase it as well.
    json_with_env(d, &[], &["erase", id(&c)]);
    assert_eq!(files_holding(d, MARKER), Vec::<String>::new(), "no file of the store holds the marker");
    assert_sound(d, "after the erasures");

    // Reads say where the text was.
    let shown = support::json(d, &["show", &a]);
    assert_eq!((&shown["text"], &shown["erased"]["by"]), (&Value::from(""), &Value::from("cli:test")), "{shown}");
    let human = String::from_utf8_lossy(&support::run(d, &["show", &a]).stdout).to_string();
    assert!(human.contains("[erased at ") && human.contains(", by cli:test]"), "{human}");
    let past = String::from_utf8_lossy(&support::run(d, &["history", &a, "--as-of", "2"]).stdout).to_string();
    assert!(past.contains("[erased at "), "as of seq 2 too: {past}");
    let log = String::from_utf8_lossy(&support::run(d, &["log", "--memory", &a]).stdout).to_string();
    assert!(log.contains("[erased at ") && log.contains("memory_erased"), "{log}");
    let why = support::json(d, &["why", id(&c)]);
    assert!(why["decisions"].as_array().unwrap().iter().all(|x| x["erased"]["by"] == "cli:test"), "{why}");
    let again = with_env(d, &[], &["erase", &a]);
    assert_eq!(again.status.code(), Some(2), "already erased");

    // An export made now carries the erased events, and imports elsewhere erased and verified.
    let after = tmp.path().join("after.jsonl");
    assert!(with_env(d, &[], &["export", "-o", after.to_str().unwrap()]).status.success());
    assert!(!std::fs::read_to_string(&after).unwrap().contains(MARKER));
    let elsewhere = &tmp.path().join("elsewhere");
    let imported = support::run_stdin(elsewhere, &["import", "-"], &std::fs::read(&after).unwrap());
    assert!(imported.status.success(), "{}", String::from_utf8_lossy(&imported.stderr));
    assert_sound(elsewhere, "the import");
    assert_eq!(support::json(elsewhere, &["show", &a])["erased"]["by"], "cli:test");
    // The copy exported before the erasure is the user's, outside the store: untouched.
    assert!(std::fs::read_to_string(&exported).unwrap().contains(MARKER));
}

#[test]
fn a_killed_erasure_is_all_or_nothing() {
    let mut rng = support::seeded("erase");
    let tmp = tempfile::tempdir().unwrap();
    let d = &tmp.path().join("store");
    let mut ids = Vec::new();
    for i in 0..40 {
        let saved = support::json(d, &["save", &format!("the {MARKER} runbook step {i} restarts worker w{i}")]);
        ids.push(id(&saved).to_string());
    }
    let started = std::time::Instant::now();
    assert!(support::run(d, &["erase", &ids[0]]).status.success());
    let whole = (started.elapsed().as_micros() as u64).max(1_000);
    for target in &ids[1..7] {
        let mut child = support::memledger(d)
            .args(["erase", target.as_str()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The delay picks the kill moment; nothing waits on it for coordination.
        std::thread::sleep(Duration::from_micros(rng.random_range(0..whole)));
        let _ = child.kill();
        let _ = child.wait();
        assert_sound(d, "after a killed erasure");
        let shown = support::json(d, &["show", target]);
        let text = shown["text"].as_str().unwrap();
        match shown["erased"].is_null() {
            true => assert!(text.contains(MARKER), "not erased: the text whole: {shown}"),
            false => assert_eq!(text, "", "erased: no text: {shown}"),
        }
        if shown["erased"].is_null() {
            assert!(support::run(d, &["erase", target]).status.success());
        }
    }
    let left: Vec<String> = files_holding(d, MARKER);
    assert!(!left.is_empty(), "the memories not erased still hold the marker");
    for target in &ids[7..] {
        assert!(support::run(d, &["erase", target]).status.success());
    }
    assert_eq!(files_holding(d, MARKER), Vec::<String>::new());
    assert_sound(d, "after every erasure");
}

/// Text between `<private>` and `</private>` never reaches the store: not in the memory, not in
/// any file, and the save says it was removed.
#[test]
fn private_spans_never_reach_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let d = &tmp.path().join("store");
    let saved =
        support::json(d, &["save", &format!("deploy on fridays <private>the {MARKER} token</private>after noon")]);
    assert_eq!(saved["private_spans_removed"], 1, "{saved}");
    assert_eq!(support::json(d, &["show", id(&saved)])["text"], "deploy on fridays after noon");
    let human = support::run(d, &["save", &format!("the office <private>{MARKER}</private>closes at six")]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("1 <private> span(s) removed"));
    drop(support::run(d, &["verify"]));
    assert_eq!(files_holding(d, MARKER), Vec::<String>::new());
}

#[test]
fn erase_over_http_needs_the_servers_setting_and_a_dry_run_is_always_answered() {
    let tmp = tempfile::tempdir().unwrap();
    let d = &tmp.path().join("store");
    let a = support::json(d, &["save", &format!("the {MARKER} customer lives at 12 Elm Street")]);
    let a = id(&a).to_string();
    let served = Served::start(d, true);
    let path = format!("/v1/memories/{a}/erase");
    let refused = served.http("POST", &path, Some(r#"{"reason": "asked by the user"}"#));
    assert_eq!(refused.status, 403, "{}", refused.body);
    let problem = refused.json();
    assert_eq!(problem["exit_code"], 2, "{problem}");
    assert!(problem["detail"].as_str().unwrap().contains("nothing was erased"), "{problem}");
    assert!(problem["hint"].as_str().unwrap().contains("--allow-erase"), "{problem}");
    let dry = served.http("POST", &path, Some(r#"{"dry_run": true, "lineage": true}"#));
    assert_eq!(dry.status, 200, "{}", dry.body);
    assert_eq!(dry.json()["memories"], serde_json::json!([a]));
    assert_eq!(served.http("POST", &path, Some(r#"{"dry_run": "yes"}"#)).status, 400, "a malformed body");
    drop(served);
    assert!(!files_holding(d, MARKER).is_empty(), "nothing was erased");

    let served = Served::start_with(d, true, &["--allow-erase"]);
    let missing = served.http("POST", "/v1/memories/0123456789abcdef0123456789abcdef/erase", Some("{}"));
    assert_eq!(missing.status, 404, "{}", missing.body);
    let erased = served.http("POST", &path, Some(r#"{"lineage": true, "reason": "asked by the user"}"#));
    assert_eq!(erased.status, 200, "{}", erased.body);
    let erased = erased.json();
    assert_eq!((&erased["dry_run"], &erased["memories"]), (&Value::from(false), &serde_json::json!([a])), "{erased}");
    let shown = served.http("GET", &format!("/v1/memories/{a}"), None).json();
    assert!(shown["erased"]["by"].is_string() && shown["text"] == "", "{shown}");
    let again = served.http("POST", &path, Some("{}"));
    assert_eq!(again.status, 422, "already erased: {}", again.body);
    drop(served);
    assert_eq!(files_holding(d, MARKER), Vec::<String>::new());
    assert_sound(d, "after an erasure over HTTP");
}

#[test]
fn erase_retired_before_erases_the_versions_gone_before_the_date_and_keeps_the_active() {
    let tmp = tempfile::tempdir().unwrap();
    let d = &tmp.path().join("store");
    let bad = with_env(d, &[], &["erase", "--retired-before", "last tuesday"]);
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--retired-before takes a date"));
    assert!(!d.exists(), "a bad date writes nothing");

    // A forgotten belief, a belief with a superseded version, and one still active.
    let forgotten = id(&support::json(d, &["save", &format!("the {MARKER} office code is 4411")])).to_string();
    let old = id(&support::json(d, &["save", "the wifi is called Ostrich"])).to_string();
    let new = id(&support::json(d, &["update", &old, "the wifi is called Emu"])).to_string();
    let kept = id(&support::json(d, &["save", "prefers pnpm over npm"])).to_string();
    support::json(d, &["forget", &forgotten, "--reason", "moved offices"]);
    let stale = |m: &str| support::json(d, &["show", m])["stale_since"].as_str().map(str::to_string);
    let (first_gone, last_gone) = {
        let mut times = [stale(&forgotten).unwrap(), stale(&old).unwrap()];
        times.sort();
        (times[0].clone(), times[1].clone())
    };
    assert!(stale(&new).is_none() && stale(&kept).is_none(), "the current versions are active");
    let erased_ids = |v: &Value| -> Vec<String> {
        let mut ids: Vec<String> =
            v["memories"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
        ids.sort();
        ids
    };

    // Before anything went: nothing, and nothing written.
    let events = support::json(d, &["stats"])["events"].as_u64().unwrap();
    let none = json_with_env(d, &[], &["erase", "--retired-before", "2000-01-01"]);
    assert_eq!(erased_ids(&none), Vec::<String>::new(), "{none}");
    assert_eq!(none["erasure_seq"], Value::Null);
    let strictly = json_with_env(d, &[], &["erase", "--retired-before", &first_gone, "--dry-run"]);
    assert_eq!(erased_ids(&strictly), Vec::<String>::new(), "strictly before: {strictly}");
    // After both went: a dry run lists both, then the erasure takes both and leaves the active.
    let far = "2999-01-01T00:00:00Z";
    let dry = json_with_env(d, &[], &["erase", "--retired-before", far, "--dry-run"]);
    let mut want = vec![forgotten.clone(), old.clone()];
    want.sort();
    assert_eq!(erased_ids(&dry), want, "{dry} (gone at {first_gone} and {last_gone})");
    assert_eq!(support::json(d, &["stats"])["events"].as_u64().unwrap(), events, "nothing written so far");
    let erased = json_with_env(d, &[], &["erase", "--retired-before", far, "--reason", "retention: 90 days"]);
    assert_eq!(erased_ids(&erased), want, "{erased}");
    assert_eq!(erased["erasure_seq"].as_u64(), Some(events + 1), "one erasure event for all");
    for m in [&forgotten, &old] {
        assert_eq!(support::json(d, &["show", m])["erased"]["by"], "cli:test", "{m}");
    }
    for m in [&new, &kept] {
        let shown = support::json(d, &["show", m]);
        assert!(shown["erased"].is_null() && shown["status"] == "active", "{shown}");
    }
    assert_eq!(files_holding(d, MARKER), Vec::<String>::new());
    assert_sound(d, "after a retention erasure");
    // Again: nothing left to erase.
    let again = with_env(d, &[], &["erase", "--retired-before", far]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to erase"));
}
