//! Principals end to end (docs/principals.md): each verb allowed and refused on every surface
//! that has it — the CLI on the store directly and through a server, HTTP, MCP over stdio — and
//! on refusal the ledger's head and every view unchanged; 401 on every route for a missing,
//! wrong or revoked token; attribution in `log --by`, `history` and `why`; a revocation taking
//! effect at once on a running server.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::mcp_stdio::Server as Mcp;
use crate::support::served::{Served, tcp_request, unix_request};
use crate::support::{json as owner_json, memledger, value};

/// A store seeded by its owner: a person's private memory, the team's policy, a conflict in
/// each scope, and three principals with their tokens.
struct Team {
    _tmp: tempfile::TempDir,
    dir: std::path::PathBuf,
    /// `team:billing=read,write,resolve,erase@stated` (an agent: its saves are inferred unless it
    /// says more; it may settle conflicts of stated memories).
    bot: String,
    /// `team:billing=read,propose`.
    scribe: String,
    /// `team:billing=read`.
    viewer: String,
    /// Memory ids and conflict ids by what they are.
    ana_memory: String,
    billing_memory: String,
    billing_note: String,
    ana_conflict: String,
    billing_conflict: String,
}

fn save(dir: &Path, scope: &str, text: &str, extra: &[&str]) -> Value {
    owner_json(dir, &[&["save", "--scope", scope], extra, &[text]].concat())
}

fn add(dir: &Path, name: &str, kind: &str, grants: &[&str]) -> String {
    let mut args = vec!["principals", "add", name, "--kind", kind];
    for g in grants {
        args.extend(["--grant", g]);
    }
    let added = owner_json(dir, &args);
    assert_eq!(added["principal"], json!(name), "{added}");
    added["token"].as_str().unwrap().to_string()
}

fn seed() -> Team {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let ana_memory = save(&dir, "person:ana", "Ana prefers window seats on long flights", &[]);
    save(&dir, "person:ana", "Ana's passport expires in 2031", &[]);
    let ana_conflict = save(&dir, "person:ana", "Ana's passport expires in 2032", &[]);
    let billing_memory = save(&dir, "team:billing", "billing deploys need two approvals", &["--source", "policy"]);
    let billing_note = save(&dir, "team:billing", "the billing dashboard lives at grafana/billing", &[]);
    save(&dir, "team:billing", "the billing db runs on Postgres 16", &[]);
    let billing_conflict = save(&dir, "team:billing", "the billing db runs on Postgres 17", &[]);
    assert_eq!(
        (ana_conflict["outcome"].as_str(), billing_conflict["outcome"].as_str()),
        (Some("conflict"), Some("conflict"))
    );
    let bot = add(&dir, "bot", "agent", &["team:billing=read,write,resolve,erase@stated"]);
    let scribe = add(&dir, "scribe", "agent", &["team:billing=read,propose"]);
    let viewer = add(&dir, "viewer", "agent", &["team:billing=read"]);
    let id = |v: &Value, k: &str| v[k].as_str().unwrap().to_string();
    Team {
        ana_memory: id(&ana_memory, "memory_id"),
        billing_memory: id(&billing_memory, "memory_id"),
        billing_note: id(&billing_note, "memory_id"),
        ana_conflict: id(&ana_conflict, "conflict_id"),
        billing_conflict: id(&billing_conflict, "conflict_id"),
        dir,
        _tmp: tmp,
        bot,
        scribe,
        viewer,
    }
}

/// `memledger ARGS…` as the principal of `token`.
fn run_as(dir: &Path, token: &str, args: &[&str]) -> Output {
    memledger(dir).env("MEMLEDGER_TOKEN", token).args(args).output().unwrap()
}

/// What the owner sees of the whole store: the head, every memory and every conflict.
fn snapshot(dir: &Path) -> (u64, Value, Value) {
    let head = owner_json(dir, &["stats"])["events"].as_u64().unwrap();
    let memories = owner_json(dir, &["list", "--status", "all", "--limit", "1000"]);
    let conflicts = owner_json(dir, &["conflicts", "list", "--status", "all"]);
    (head, memories, conflicts)
}

/// `args` as `token`'s principal exits 5 naming `verb` and `scope`, and writes nothing.
fn assert_refused(dir: &Path, token: &str, args: &[&str], verb: &str, scope: &str) {
    let before = snapshot(dir);
    let out = run_as(dir, token, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{args:?} must be refused: {stderr}");
    assert!(stderr.contains(&format!("may not {verb} in {scope}")), "{args:?}: {stderr}");
    assert_eq!(snapshot(dir), before, "{args:?}: nothing written");
}

/// `args` as `token`'s principal succeeds; its JSON.
fn assert_allowed(dir: &Path, token: &str, args: &[&str]) -> Value {
    let args = [&["--json"], args].concat();
    value(&run_as(dir, token, &args), &args)
}

/// Every verb on the CLI, allowed in the principal's scope and refused in another's.
fn cli_verbs(t: &Team) {
    let d = &t.dir;
    // read
    for args in [
        vec!["show", t.billing_memory.as_str()],
        vec!["history", t.billing_memory.as_str()],
        vec!["why", t.billing_memory.as_str()],
        vec!["recall", "--scope", "team:billing", "approvals"],
        vec!["list", "--scope", "team:billing"],
        vec!["conflicts", "show", t.billing_conflict.as_str()],
    ] {
        assert_allowed(d, &t.viewer, &args);
    }
    for args in [
        vec!["show", t.ana_memory.as_str()],
        vec!["history", t.ana_memory.as_str()],
        vec!["why", t.ana_memory.as_str()],
        vec!["recall", "--scope", "person:ana", "seats"],
        vec!["list", "--scope", "person:ana"],
        vec!["conflicts", "show", t.ana_conflict.as_str()],
    ] {
        assert_refused(d, &t.viewer, &args, "read", "person:ana");
    }
    // Reads over several scopes answer only what may be read.
    let recalled = assert_allowed(d, &t.viewer, &["recall", "window seats approvals passport"]);
    let scopes: Vec<&str> =
        recalled["results"].as_array().unwrap().iter().map(|r| r["scope"].as_str().unwrap()).collect();
    assert!(!scopes.is_empty() && scopes.iter().all(|s| *s == "team:billing"), "{recalled}");
    let listed = assert_allowed(d, &t.viewer, &["list", "--status", "all"]);
    assert!(listed["memories"].as_array().unwrap().iter().all(|m| m["scope"] == "team:billing"), "{listed}");
    let conflicts = assert_allowed(d, &t.viewer, &["conflicts", "list", "--status", "all"]);
    let ids: Vec<&str> =
        conflicts["conflicts"].as_array().unwrap().iter().map(|c| c["conflict_id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![t.billing_conflict.as_str()], "{conflicts}");
    let log = run_as(d, &t.viewer, &["--json", "log"]);
    for line in String::from_utf8_lossy(&log.stdout).lines() {
        assert!(!line.contains("passport") && !line.contains("window seats"), "{line}");
    }
    // write: the viewer may not; the bot may, in its scope only.
    assert_refused(d, &t.viewer, &["save", "--scope", "team:billing", "billing uses kafka"], "write", "team:billing");
    assert_refused(d, &t.bot, &["save", "--scope", "person:ana", "Ana prefers aisle seats"], "write", "person:ana");
    assert_refused(d, &t.bot, &["update", &t.ana_memory, "Ana prefers aisle seats"], "write", "person:ana");
    assert_refused(d, &t.bot, &["forget", &t.ana_memory], "write", "person:ana");
    assert_refused(
        d,
        &t.bot,
        &["save", "--scope", "team:billing", "--source", "policy", "deploys on friday"],
        "write",
        "team:billing",
    );
    let saved = assert_allowed(d, &t.bot, &["save", "--scope", "team:billing", "the billing cron runs at 02:00"]);
    assert_eq!((saved["source"].as_str(), saved["principal"].as_str()), (Some("inferred"), Some("bot")), "{saved}");
    let updated =
        assert_allowed(d, &t.bot, &["update", &t.billing_note, "the billing dashboard lives at grafana/d/billing"]);
    assert_allowed(d, &t.bot, &["forget", updated["memory_id"].as_str().unwrap()]);
    // An agent's edit of a policy needs policy authority.
    assert_refused(
        d,
        &t.bot,
        &["update", &t.billing_memory, "billing deploys need one approval"],
        "write",
        "team:billing",
    );
    // propose: the scribe's saves are proposals.
    let proposed =
        assert_allowed(d, &t.scribe, &["save", "--scope", "team:billing", "the billing queue drains at night"]);
    assert_eq!(proposed["outcome"], json!("proposed"), "{proposed}");
    assert_refused(d, &t.scribe, &["save", "--scope", "person:ana", "Ana flies on Mondays"], "write", "person:ana");
    let cid = proposed["conflict_id"].as_str().unwrap();
    assert_refused(d, &t.scribe, &["conflicts", "resolve", cid, "--accept"], "write", "team:billing");
    assert_allowed(d, &t.bot, &["conflicts", "resolve", cid, "--accept"]);
    // resolve
    assert_refused(
        d,
        &t.viewer,
        &["conflicts", "resolve", &t.billing_conflict, "--keep-both"],
        "resolve",
        "team:billing",
    );
    assert_refused(d, &t.bot, &["conflicts", "resolve", &t.ana_conflict, "--keep-both"], "resolve", "person:ana");
    assert_allowed(d, &t.bot, &["conflicts", "resolve", &t.billing_conflict, "--keep-both"]);
    assert_refused(d, &t.viewer, &["conflicts", "revert", &t.billing_conflict], "resolve", "team:billing");
    assert_allowed(d, &t.bot, &["conflicts", "revert", &t.billing_conflict]);
    // admin: only the store's owner manages principals and rebuilds.
    assert_refused(d, &t.bot, &["principals", "add", "eve", "--kind", "agent"], "admin", "*");
    assert_refused(d, &t.bot, &["rebuild"], "admin", "*");
    // Refused for who asks before whether an embedder is configured.
    assert_refused(d, &t.bot, &["embed"], "admin", "*");
    let me = assert_allowed(d, &t.bot, &["whoami"]);
    assert_eq!((me["principal"].as_str(), me["own_scope"].as_str()), (Some("bot"), Some("agent:bot")), "{me}");
    // scopes: only those the caller may read, each with its active memories.
    let scopes = |doc: Value| -> Vec<String> {
        doc["scopes"].as_array().unwrap().iter().map(|s| s["scope"].as_str().unwrap().to_string()).collect()
    };
    let seen = assert_allowed(d, &t.viewer, &["scopes"]);
    assert_eq!(scopes(seen.clone()), ["team:billing"], "{seen}");
    assert!(seen["scopes"][0]["memories"].as_u64().unwrap() >= 2, "{seen}");
    let all = scopes(owner_json(d, &["scopes"]));
    assert!(all.contains(&"person:ana".to_string()) && all.contains(&"team:billing".to_string()), "{all:?}");
}

#[test]
fn every_verb_is_allowed_and_refused_on_the_store_directly_and_through_a_server() {
    let t = seed();
    cli_verbs(&t);
    // Erasure, on the store directly: the bot's own scope's memory, not another's.
    assert_refused(&t.dir, &t.bot, &["erase", &t.ana_memory], "erase", "person:ana");
    assert_refused(&t.dir, &t.viewer, &["erase", &t.billing_note], "erase", "team:billing");
    let note = assert_allowed(&t.dir, &t.bot, &["save", "--scope", "team:billing", "a note to erase"]);
    assert_allowed(&t.dir, &t.bot, &["erase", note["memory_id"].as_str().unwrap()]);

    // The same through a running server (the CLI sends its token over the socket).
    let t2 = seed();
    let served = Served::start_with(&t2.dir, true, &["--allow-erase"]);
    assert_eq!(owner_json(&t2.dir, &["status"])["path"], json!("server"));
    cli_verbs(&t2);
    assert_refused(&t2.dir, &t2.bot, &["erase", &t2.ana_memory], "erase", "person:ana");
    let note = assert_allowed(&t2.dir, &t2.bot, &["save", "--scope", "team:billing", "a note to erase"]);
    assert_allowed(&t2.dir, &t2.bot, &["erase", note["memory_id"].as_str().unwrap()]);
    drop(served);
    let verify = owner_json(&t2.dir, &["verify"]);
    assert!(verify["ok"] == json!(true) && verify["views_consistent"] == json!(true), "{verify}");
}

/// A request over TCP with `token` as the bearer.
fn http(port: u16, token: &str, method: &str, path: &str, body: Option<&str>) -> crate::support::served::Response {
    let auth = format!("Bearer {token}");
    tcp_request(port, method, path, body, &[("authorization", &auth)]).expect("the server answers")
}

#[test]
fn every_verb_is_allowed_and_refused_over_http_with_403_naming_it() {
    let t = seed();
    let served = Served::start(&t.dir, true);
    let port = served.port.unwrap();
    let refused = |token: &str, method: &str, path: &str, body: Option<&str>, verb: &str, scope: &str| {
        let before = unix_request(&t.dir, "GET", "/v1/stats", None, &[]).unwrap().json();
        let r = http(port, token, method, path, body);
        assert_eq!(r.status, 403, "{method} {path}: {}", r.body);
        assert_eq!(r.header("content-type"), Some("application/problem+json"));
        let p = r.json();
        assert_eq!(
            (p["exit_code"].as_i64(), p["verb"].as_str(), p["scope"].as_str()),
            (Some(5), Some(verb), Some(scope)),
            "{p}"
        );
        let after = unix_request(&t.dir, "GET", "/v1/stats", None, &[]).unwrap().json();
        assert_eq!(before, after, "{method} {path}: nothing written");
    };
    let allowed = |token: &str, method: &str, path: &str, body: Option<&str>| -> Value {
        let r = http(port, token, method, path, body);
        assert_eq!(r.status, 200, "{method} {path}: {}", r.body);
        r.json()
    };
    let (ana, billing) = (&t.ana_memory, &t.billing_memory);
    for path in
        [format!("/v1/memories/{ana}"), format!("/v1/memories/{ana}/history"), format!("/v1/memories/{ana}/why")]
    {
        refused(&t.viewer, "GET", &path, None, "read", "person:ana");
    }
    for path in [
        format!("/v1/memories/{billing}"),
        format!("/v1/memories/{billing}/history"),
        format!("/v1/memories/{billing}/why"),
    ] {
        allowed(&t.viewer, "GET", &path, None);
    }
    refused(&t.viewer, "GET", "/v1/memories?scope=person:ana", None, "read", "person:ana");
    refused(&t.viewer, "POST", "/v1/recall", Some(r#"{"query":"seats","scope":"person:ana"}"#), "read", "person:ana");
    let found = allowed(&t.viewer, "POST", "/v1/recall", Some(r#"{"query":"window seats approvals"}"#));
    assert!(found["results"].as_array().unwrap().iter().all(|r| r["scope"] == "team:billing"), "{found}");
    assert!(found["fenced"].as_str().unwrap().contains("billing deploys need two approvals"), "{found}");
    refused(
        &t.viewer,
        "POST",
        "/v1/memories",
        Some(r#"{"text":"x runs y","scope":"team:billing"}"#),
        "write",
        "team:billing",
    );
    refused(
        &t.bot,
        "POST",
        "/v1/memories",
        Some(r#"{"text":"Ana flies","scope":"person:ana"}"#),
        "write",
        "person:ana",
    );
    let saved = allowed(
        &t.bot,
        "POST",
        "/v1/memories",
        Some(r#"{"text":"the billing cron runs at 02:00","scope":"team:billing"}"#),
    );
    assert_eq!(saved["principal"], json!("bot"));
    refused(
        &t.bot,
        "POST",
        &format!("/v1/memories/{ana}/update"),
        Some(r#"{"text":"Ana flies"}"#),
        "write",
        "person:ana",
    );
    refused(&t.bot, "POST", &format!("/v1/memories/{ana}/forget"), Some("{}"), "write", "person:ana");
    refused(
        &t.viewer,
        "POST",
        &format!("/v1/conflicts/{}/resolve", t.billing_conflict),
        Some(r#"{"action":"keep_both"}"#),
        "resolve",
        "team:billing",
    );
    allowed(
        &t.bot,
        "POST",
        &format!("/v1/conflicts/{}/resolve", t.billing_conflict),
        Some(r#"{"action":"keep_both"}"#),
    );
    refused(
        &t.viewer,
        "POST",
        &format!("/v1/conflicts/{}/revert", t.billing_conflict),
        None,
        "resolve",
        "team:billing",
    );
    allowed(&t.bot, "POST", &format!("/v1/conflicts/{}/revert", t.billing_conflict), None);
    refused(&t.bot, "POST", "/v1/principals", Some(r#"{"name":"eve","kind":"agent"}"#), "admin", "*");
    refused(&t.bot, "POST", "/v1/rebuild", Some("{}"), "admin", "*");
    let me = allowed(&t.scribe, "GET", "/v1/whoami", None);
    assert_eq!(me["grants"], json!(["team:billing=read,propose"]), "{me}");
    let proposed = allowed(
        &t.scribe,
        "POST",
        "/v1/memories",
        Some(r#"{"text":"the billing queue drains at night","scope":"team:billing"}"#),
    );
    assert_eq!(proposed["outcome"], json!("proposed"), "{proposed}");
    refused(&t.viewer, "GET", &format!("/v1/conflicts/{}", t.ana_conflict), None, "read", "person:ana");
    let shown = allowed(&t.viewer, "GET", &format!("/v1/conflicts/{}", t.billing_conflict), None);
    assert_eq!((shown["kind"].as_str(), shown["needs_authority"].as_str()), (Some("contradiction"), Some("stated")));
    assert_eq!(shown["withheld"], json!([]), "{shown}");
    // The review page's reads hold to the same rule.
    let page = allowed(&t.viewer, "GET", "/v1/review/conflicts?status=all", None);
    assert!(!page.to_string().contains("passport") && !page.to_string().contains("window seats"), "{page}");
    let events = allowed(&t.viewer, "GET", "/v1/events?limit=500", None);
    assert!(!events.to_string().contains("passport"), "{events}");
}

#[test]
fn a_missing_wrong_or_revoked_token_is_401_on_every_route() {
    let t = seed();
    let served = Served::start(&t.dir, true);
    let port = served.port.unwrap();
    let revoked = add(&t.dir, "gone", "agent", &["team:billing=read"]);
    assert_eq!(http(port, &revoked, "GET", "/v1/whoami", None).status, 200);
    owner_json(&t.dir, &["principals", "revoke", "gone"]);
    let openapi: Value = tcp_request(port, "GET", "/openapi.json", None, &[]).unwrap().json();
    let mut checked = 0;
    for (path, item) in openapi["paths"].as_object().unwrap() {
        let path = path.replace("{id}", "0123456789abcdef0123456789abcdef").replace("{name}", "bot");
        for method in ["get", "post"] {
            if item.get(method).is_none() {
                continue;
            }
            let method = method.to_uppercase();
            let body = (method == "POST").then_some("{}");
            let missing = tcp_request(port, &method, &path, body, &[]).unwrap();
            assert_eq!(missing.status, 401, "{method} {path} without a token: {}", missing.body);
            assert_eq!(missing.header("www-authenticate"), Some("Bearer"));
            for token in ["mlt_not-a-token-of-this-store", revoked.as_str(), "", &format!("{}x", t.bot)] {
                let r = http(port, token, &method, &path, body);
                assert_eq!(r.status, 401, "{method} {path} with {token:?}: {}", r.body);
                assert!(!r.body.contains(token) || token.is_empty(), "the token is never echoed: {}", r.body);
            }
            checked += 1;
        }
    }
    assert!(checked > 30, "every route: {checked}");
    // The server's log never holds a token.
    let log = std::fs::read_to_string(t.dir.with_extension("serve.log")).unwrap();
    assert!(!log.contains(&revoked) && !log.contains(&t.bot), "{log}");
}

#[test]
fn a_revocation_takes_effect_at_once_on_a_running_server() {
    let t = seed();
    let served = Served::start(&t.dir, true);
    let port = served.port.unwrap();
    assert_eq!(run_as(&t.dir, &t.bot, &["--json", "recall", "approvals"]).status.code(), Some(0));
    assert_eq!(http(port, &t.bot, "GET", "/v1/whoami", None).status, 200);
    let rotated = owner_json(&t.dir, &["principals", "rotate", "bot"]);
    let new = rotated["token"].as_str().unwrap();
    // The old token is refused by the running server at once, on the socket as over TCP.
    let out = run_as(&t.dir, &t.bot, &["recall", "approvals"]);
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not authenticate"));
    assert_eq!(http(port, &t.bot, "GET", "/v1/whoami", None).status, 401);
    assert_eq!(http(port, new, "GET", "/v1/whoami", None).status, 200);
    owner_json(&t.dir, &["principals", "revoke", "bot", "--reason", "left the team"]);
    assert_eq!(http(port, new, "GET", "/v1/whoami", None).status, 401);
    assert_eq!(run_as(&t.dir, new, &["recall", "approvals"]).status.code(), Some(5));
    let listed = owner_json(&t.dir, &["principals", "list"]);
    let bot = listed["principals"].as_array().unwrap().iter().find(|p| p["principal"] == "bot").unwrap();
    assert_eq!((bot["revoked"].as_bool(), bot["revoked_reason"].as_str()), (Some(true), Some("left the team")));
    assert!(!listed.to_string().contains("mlt_"), "a token is never printed again: {listed}");
    drop(served);
}

#[test]
fn every_event_records_its_principal_and_log_history_and_why_show_it() {
    let t = seed();
    let first = assert_allowed(
        &t.dir,
        &t.bot,
        &["--actor", "agent:claude", "save", "--scope", "team:billing", "deploy Tuesday"],
    );
    assert_allowed(&t.dir, &t.bot, &["save", "--scope", "team:billing", "deploy Tuesday after integration tests pass"]);
    let by_bot = crate::support::json_lines(&t.dir, &["log", "--by", "bot"]);
    assert!(!by_bot.is_empty() && by_bot.iter().all(|e| e["principal"] == json!("bot")), "{by_bot:?}");
    assert!(by_bot.iter().any(|e| e["actor"] == json!("agent:claude")), "--actor stays as whom it acted for");
    let by_owner = crate::support::json_lines(&t.dir, &["log", "--by", "owner"]);
    assert!(by_owner.iter().all(|e| e["principal"] == json!("owner")) && !by_owner.is_empty());
    let id = first["memory_id"].as_str().unwrap();
    let history = owner_json(&t.dir, &["history", id]);
    assert!(history["versions"].as_array().unwrap().iter().all(|v| v["principal"] == json!("bot")), "{history}");
    let why = owner_json(&t.dir, &["why", id]);
    assert!(why["decisions"].as_array().unwrap().iter().all(|d| d["principal"] == json!("bot")), "{why}");
    let human = memledger(&t.dir).args(["history", id]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&human.stdout).contains("by bot (inferred)"),
        "{}",
        String::from_utf8_lossy(&human.stdout)
    );
    // The actor is the client's to choose; the principal is not.
    let out = run_as(&t.dir, &t.bot, &["--actor", "owner", "--json", "save", "--scope", "team:billing", "x is y"]);
    let saved: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(saved["principal"], json!("bot"));
}

#[test]
fn mcp_on_stdio_acts_as_the_token_it_was_given() {
    let t = seed();
    let mut as_bot = Mcp::start_as(&t.dir, "claude-code", &[], Some(&t.bot));
    let saved = as_bot.tool("save_memory", json!({"text": "the billing cron runs at 02:00", "scope": "team:billing"}));
    assert_eq!((saved["principal"].as_str(), saved["source"].as_str()), (Some("bot"), Some("inferred")), "{saved}");
    let before = snapshot(&t.dir);
    let error = as_bot.tool_error("save_memory", json!({"text": "Ana flies on Mondays", "scope": "person:ana"}));
    assert!(error.contains("may not write in person:ana"), "{error}");
    let error = as_bot.tool_error("recall_memory", json!({"query": "seats", "scope": "person:ana"}));
    assert!(error.contains("may not read in person:ana"), "{error}");
    let error = as_bot.tool_error("memory_history", json!({"id": t.ana_memory}));
    assert!(error.contains("may not read in person:ana"), "{error}");
    let error = as_bot.tool_error("resolve_conflict", json!({"id": t.ana_conflict, "action": "keep_both"}));
    assert!(error.contains("may not resolve in person:ana"), "{error}");
    assert_eq!(snapshot(&t.dir), before, "nothing written");
    let found = as_bot.tool("recall_memory", json!({"query": "window seats approvals"}));
    assert!(found["results"].as_array().unwrap().iter().all(|r| r["scope"] == "team:billing"), "{found}");
    let conflicts = as_bot.tool("list_conflicts", json!({"status": "all"}));
    assert_eq!(conflicts["conflicts"].as_array().unwrap().len(), 1, "{conflicts}");
    as_bot.tool("resolve_conflict", json!({"id": t.billing_conflict, "action": "keep_both"}));
    drop(as_bot);
    // A wrong token is refused; through a running server as well.
    let mut wrong = Mcp::start_as(&t.dir, "claude-code", &[], Some("mlt_wrong"));
    let error = wrong.tool_error("recall_memory", json!({"query": "approvals"}));
    assert!(error.contains("does not authenticate"), "{error}");
    drop(wrong);
    let served = Served::start(&t.dir, false);
    let mut through = Mcp::start_as(&t.dir, "claude-code", &[], Some(&t.viewer));
    let error = through.tool_error("save_memory", json!({"text": "x runs y", "scope": "team:billing"}));
    assert!(error.contains("may not write in team:billing"), "{error}");
    let found = through.tool("recall_memory", json!({"query": "approvals"}));
    assert_eq!(found["results"][0]["text"], json!("billing deploys need two approvals"), "{found}");
    drop(through);
    drop(served);
}

#[test]
fn a_principal_added_first_creates_the_store_and_its_token_works() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("new-store");
    let token = add(&dir, "ana", "person", &[]);
    let saved = assert_allowed(&dir, &token, &["save", "Ana prefers tea"]);
    assert_eq!(saved["principal"], json!("ana"));
    assert_eq!(owner_json(&dir, &["show", saved["memory_id"].as_str().unwrap()])["scope"], json!("person:ana"));
}

/// Random bytes in the `Authorization` header never crash the server: each is a 401 (or a 400
/// for a header no request may carry), and the server still answers afterwards.
#[test]
fn a_fuzzed_token_header_is_refused_and_never_panics() {
    use rand::{Rng, SeedableRng};
    let fuzz_seed: u64 =
        std::env::var("MEMLEDGER_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("token fuzz seed {fuzz_seed} (MEMLEDGER_FUZZ_SEED={fuzz_seed} replays it)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(fuzz_seed);
    let t = seed();
    let served = Served::start(&t.dir, true);
    let port = served.port.unwrap();
    for i in 0..300 {
        let len = rng.random_range(0..200);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.random_range(0x20..0x7f)).collect();
        match i % 4 {
            // Near a real token: one character changed, or cut short, or grown.
            0 => {
                bytes = t.bot.clone().into_bytes();
                let at = rng.random_range(0..bytes.len());
                bytes[at] = rng.random_range(0x21..0x7f);
            }
            1 => bytes = t.bot.as_bytes()[..rng.random_range(0..t.bot.len())].to_vec(),
            2 => bytes = [t.bot.as_bytes(), &bytes].concat(),
            _ => {}
        }
        let value = format!("Bearer {}", String::from_utf8_lossy(&bytes));
        if value.trim_end() == format!("Bearer {}", t.bot) {
            continue;
        }
        let r = tcp_request(port, "GET", "/v1/whoami", None, &[("authorization", &value)])
            .unwrap_or_else(|| panic!("seed {fuzz_seed}, try {i}: no answer"));
        assert!(matches!(r.status, 400 | 401), "seed {fuzz_seed}, try {i} ({value:?}): {}", r.status);
    }
    assert_eq!(http(port, &t.bot, "GET", "/v1/whoami", None).status, 200, "still serving");
}
