//! The review page (docs/review.md): its scenario end to end in headless Chromium, driven by
//! Playwright (`playwright-core`, server/e2e/review.mjs) against a real `memledger serve` on a
//! seeded store, with axe-core in the page; the API the page reads, paged and refusing bad
//! input; and `memledger ui`, which starts a server and prints the page's URL.
//! scripts/setup_tests.sh installs Chromium, Node and the npm packages; under `CI=true` missing
//! ones are a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::served::{Served, tcp_request};
use crate::support::{json, manifest_dir, memledger, run};

/// Chromium: `$CHROMIUM`, else `chromium` on the PATH (Debian's package puts it in /usr/bin).
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("chromium")).find(|candidate| candidate.is_file())
}

fn e2e_dir() -> PathBuf {
    manifest_dir().parent().unwrap().join("server/e2e")
}

/// What the browser test needs and is missing, if anything.
fn missing_browser_tools() -> Option<String> {
    if chromium().is_none() {
        return Some("chromium on the PATH (Debian's chromium)".into());
    }
    if !Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Some("node".into());
    }
    for package in ["playwright-core", "axe-core"] {
        if !e2e_dir().join("node_modules").join(package).exists() {
            return Some(format!("the npm package {package} (npm ci in server/e2e)"));
        }
    }
    None
}

fn save(dir: &Path, args: &[&str]) -> Value {
    json(dir, &[&["save"], args].concat())
}

/// A store with two pending conflicts (a version, an interval), a near miss across kinds, and a
/// memory in another scope.
fn seed(dir: &Path) {
    save(dir, &["the staging db runs on Postgres 16"]);
    assert_eq!(save(dir, &["the staging db runs on Postgres 17"])["outcome"], "conflict");
    save(dir, &["the deploy job runs every 15 minutes"]);
    assert_eq!(save(dir, &["the deploy job runs every 30 minutes"])["outcome"], "conflict");
    save(dir, &["--type", "preference", "use pnpm over npm for installs in the web repo"]);
    assert_eq!(
        save(dir, &["--type", "procedure", "use pnpm over npm for installs in the api repo"])["outcome"],
        "added"
    );
    save(dir, &["--scope", "work", "standup is at 9:30 every weekday"]);
}

#[test]
fn the_review_page_decides_reverts_merges_and_audits_in_a_real_browser() {
    if let Some(missing) = missing_browser_tools() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the browser test: {missing} is missing (scripts/setup_tests.sh)"
        );
        eprintln!("SKIPPED: the review page's browser test needs {missing} (scripts/setup_tests.sh installs it)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    seed(&dir);
    let near = json(
        &dir,
        &["why", &json(&dir, &["recall", "pnpm web repo"])["results"][0]["memory_id"].as_str().unwrap().to_string()],
    );
    assert!(
        near["decisions"].as_array().unwrap().iter().any(|d| d["outcome"] == "near_miss"),
        "the seed has a near miss across kinds: {near}"
    );
    let reader = json(&dir, &["principals", "add", "reader", "--kind", "agent", "--grant", "work=read"]);
    let served = Served::start_with(&dir, true, &["--actor", "cli:tester"]);
    let update = std::env::var("MEMLEDGER_UPDATE_SCREENSHOTS").is_ok_and(|v| v == "1");
    let shots =
        if update { manifest_dir().parent().unwrap().join("docs/screenshots") } else { tmp.path().join("shots") };
    let out = Command::new("node")
        .arg(e2e_dir().join("review.mjs"))
        .current_dir(e2e_dir())
        .env("MEMLEDGER_URL", format!("http://127.0.0.1:{}", served.port.unwrap()))
        .env("MEMLEDGER_TOKEN", served.token.as_deref().unwrap())
        .env("MEMLEDGER_PRINCIPAL_TOKEN", reader["token"].as_str().unwrap())
        .env("SCREENSHOT_DIR", &shots)
        .env("CHROMIUM", chromium().unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(out.status.success(), "the browser scenario failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for view in ["conflicts-light", "memory-light", "ledger-light", "conflicts-dark-phone"] {
        assert!(shots.join(format!("{view}.png")).exists(), "a screenshot of {view}");
    }

    // The page's decisions are the CLI's events, by ui:<user>.
    let log = run(&dir, &["--json", "log"]);
    let events: Vec<Value> =
        String::from_utf8_lossy(&log.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let by_page: Vec<&Value> = events
        .iter()
        .filter(|e| matches!(e["type"].as_str(), Some("conflict_resolved" | "resolution_reverted" | "conflict_opened")))
        .filter(|e| e["actor"] == "ui:tester")
        .collect();
    let count = |t: &str| by_page.iter().filter(|e| e["type"] == t).count();
    assert_eq!(count("conflict_resolved"), 3, "keep new, keep existing and merge");
    assert_eq!(count("resolution_reverted"), 2);
    assert_eq!(count("conflict_opened"), 1, "the conflict opened by hand");
    let verify = json(&dir, &["verify"]);
    assert_eq!(verify["ok"], true);
    drop(served);
}

#[test]
fn the_review_api_pages_filters_and_refuses_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    seed(&dir);
    let served = Served::start(&dir, true);
    let get = |path: &str| served.http("GET", path, None);

    let page = get("/v1/review/conflicts?status=pending&limit=1").json();
    assert_eq!(page["total"], 2);
    assert_eq!(page["pending"], 2);
    assert_eq!(page["conflicts"].as_array().unwrap().len(), 1);
    let first = &page["conflicts"][0];
    assert_eq!(first["incoming"]["text"], "the deploy job runs every 30 minutes", "the newest group first");
    assert_eq!(first["candidates"][0]["memory"]["text"], "the deploy job runs every 15 minutes");
    assert!(first["incoming"]["saved_by"].as_str().unwrap().starts_with("cli:"));
    assert!(first["gate"].is_string());

    let head = get("/v1/status").json()["head_seq"].as_u64().unwrap();
    let events = get("/v1/events?limit=3").json();
    let seqs: Vec<u64> = events["items"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, vec![head, head - 1, head - 2], "newest first");
    let next = events["next_before"].as_u64().unwrap();
    let older = get(&format!("/v1/events?limit=3&before={next}")).json();
    assert_eq!(older["items"][0]["seq"].as_u64().unwrap(), head - 3, "the next page goes on below");
    let opened = get("/v1/events?type=conflict_opened").json();
    assert_eq!(opened["items"].as_array().unwrap().len(), 2);
    assert_eq!(opened["next_before"], Value::Null, "the scan reached the start");

    let misses = get("/v1/near-misses?kind=across_kinds").json();
    let pair = &misses["items"][0];
    assert_eq!(pair["outcome"], "near_miss");
    assert!(pair["incoming"]["text"].as_str().unwrap().contains("pnpm"));
    let timeline = get("/v1/timeline").json();
    assert_eq!(timeline["save_outcomes"]["conflict"], 2);
    assert_eq!(timeline["conflicts_by_scope"]["personal"]["pending"], 2);

    for bad in [
        "/v1/events?limit=0",
        "/v1/events?limit=501",
        "/v1/events?type=nonsense",
        "/v1/near-misses?kind=some",
        "/v1/review/conflicts?status=open",
    ] {
        assert_eq!(get(bad).status, 422, "{bad} is refused");
    }
    assert_eq!(get("/v1/events?before=x").status, 400);

    // Opening by hand: once; not across scopes; nothing written when refused.
    let (a, b) = (pair["incoming"]["memory_id"].as_str().unwrap(), pair["candidate"]["memory_id"].as_str().unwrap());
    let body = format!(r#"{{"a": "{a}", "b": "{b}", "note": "the same rule"}}"#);
    let open = served.http("POST", "/v1/conflicts/open", Some(&body));
    assert_eq!(open.status, 200, "{}", open.body);
    assert_eq!(served.http("POST", "/v1/conflicts/open", Some(&body)).status, 409, "the pair has a record now");
    let work = json(&dir, &["list", "--scope", "work"])["memories"][0]["memory_id"].as_str().unwrap().to_string();
    let head = get("/v1/status").json()["head_seq"].clone();
    let across = served.http("POST", "/v1/conflicts/open", Some(&format!(r#"{{"a": "{a}", "b": "{work}"}}"#)));
    assert_eq!(across.status, 409, "{}", across.body);
    assert_eq!(get("/v1/status").json()["head_seq"], head, "nothing was written");

    // The page's files need no token and hold no data; the data needs it.
    let page = tcp_request(served.port.unwrap(), "GET", "/", None, &[]).unwrap();
    assert_eq!(page.status, 200);
    assert!(page.header("content-security-policy").unwrap().contains("default-src 'none'"));
    assert!(page.body.contains("/ui/app.js"));
    for asset in ["/ui/app.js", "/ui/views.js", "/ui/diff.js", "/ui/charts.js", "/ui/app.css"] {
        assert_eq!(tcp_request(served.port.unwrap(), "GET", asset, None, &[]).unwrap().status, 200, "{asset}");
    }
    let data = tcp_request(served.port.unwrap(), "GET", "/v1/review/conflicts", None, &[]).unwrap();
    assert_eq!(data.status, 401);
    drop(served);
}

#[test]
fn conflicts_open_from_the_cli_is_the_same_event() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    seed(&dir);
    let hits = json(&dir, &["recall", "pnpm over npm"]);
    let ids: Vec<&str> =
        hits["results"].as_array().unwrap().iter().take(2).map(|h| h["memory_id"].as_str().unwrap()).collect();
    let opened =
        json(&dir, &["--actor", "cli:ana", "conflicts", "open", ids[0], ids[1], "--note", "one rule for both repos"]);
    let cid = opened["conflict_id"].as_str().unwrap();
    let shown = json(&dir, &["conflicts", "show", cid]);
    assert_eq!(shown["status"], "pending");
    assert_eq!(shown["reasons"][0], "one rule for both repos");
    let again = run(&dir, &["conflicts", "open", ids[0], ids[1]]);
    assert_eq!(again.status.code(), Some(3), "{}", String::from_utf8_lossy(&again.stderr));
    let missing = run(&dir, &["conflicts", "open", ids[0], "000000000000"]);
    assert_eq!(missing.status.code(), Some(4));
}

#[test]
fn memledger_ui_starts_a_server_and_prints_the_url_with_the_token() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let none = run(&dir, &["ui", "--no-browser"]);
    assert_eq!(none.status.code(), Some(1), "no store yet");
    seed(&dir);
    let out = json(&dir, &["ui", "--no-browser"]);
    assert_eq!(out["started_server"], true);
    assert_eq!(out["opened"], false);
    let url = out["url"].as_str().unwrap();
    let token = std::fs::read_to_string(dir.join("token")).unwrap();
    assert!(url.ends_with(&format!("/#token={}", token.trim())), "{url}");
    let port: u16 = url.trim_start_matches("http://127.0.0.1:").split('/').next().unwrap().parse().unwrap();
    let page = tcp_request(port, "GET", "/", None, &[]).unwrap();
    assert_eq!(page.status, 200);
    // Again: the running server is used, not a second one.
    let again = json(&dir, &["ui", "--no-browser"]);
    assert_eq!(again["started_server"], false);
    assert_eq!(again["url"], out["url"]);
    let pid = json(&dir, &["status"])["server"]["pid"].as_u64().unwrap();
    let _ = Command::new("kill").arg(pid.to_string()).status();
    // Gone once its process is: no entry, or a zombie nobody has reaped yet.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
    };
    let started = std::time::Instant::now();
    while alive() {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "the server exits on SIGTERM");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A server without HTTP cannot show the page: said so, with the way out.
    let served = Served::start(&dir, false);
    let refused = memledger(&dir).args(["ui", "--no-browser"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("does not serve HTTP"));
    drop(served);
}
