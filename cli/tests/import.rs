//! `import sessions` end to end: transcripts written the way Claude Code, Codex and the plain
//! format write them (several sessions, compaction, subagents, tool calls, a credential, a
//! `<private>` span, a quoted recall answer), against a chat model scripted on 127.0.0.1: what
//! reaches the model, where each memory points, and that a second run, an appended file, a
//! rewritten file and a killed import each leave every memory once. Also `--explicit-only`
//! offline, discovery, the route through a server, the judge's excerpts and `hooks`.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::support::{self, mock_http};

/// Where the agents' transcripts are found besides HOME.
const AGENT_DIRS: &[&str] = &["CLAUDE_CONFIG_DIR", "CODEX_HOME"];

/// `memledger --dir DIR ARGS…` with `env` and no model, agent directory or HOME of the machine's.
fn command(dir: &Path, home: &Path, env: &[(&str, &str)], args: &[&str]) -> std::process::Command {
    let mut cmd = support::memledger(dir);
    cmd.args(args).env("HOME", home);
    for v in crate::models::MODEL_VARS.iter().chain(AGENT_DIRS) {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied());
    cmd
}

fn run(dir: &Path, home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    command(dir, home, env, args).output().unwrap()
}

/// `import sessions --json ARGS…`, which must succeed: its memory lines and its summary.
fn import(dir: &Path, home: &Path, env: &[(&str, &str)], args: &[&str]) -> (Vec<Value>, Value) {
    let all = [&["--json", "import", "sessions"], args].concat();
    let out = run(dir, home, env, &all);
    let mut lines = support::lines(&out, &all);
    let summary = lines.pop().expect("a summary line")["summary"].clone();
    assert!(summary.is_object(), "the last line is the summary: {summary}");
    (lines, summary)
}

fn json(dir: &Path, home: &Path, args: &[&str]) -> Value {
    let all = [&["--json"], args].concat();
    support::value(&run(dir, home, &[], &all), &all)
}

/// The active memories' texts, sorted.
fn active_texts(dir: &Path, home: &Path) -> Vec<String> {
    let listed = json(dir, home, &["list", "--limit", "1000"]);
    let mut texts: Vec<String> =
        listed["memories"].as_array().unwrap().iter().map(|m| m["text"].as_str().unwrap().to_string()).collect();
    texts.sort();
    texts
}

/// What a scripted model reads of an extraction prompt: the NEW turns, as (first line, last
/// line, text).
fn new_turns(prompt: &str) -> Vec<(u32, u32, String)> {
    let mut out: Vec<(u32, u32, String)> = Vec::new();
    let mut inside = false;
    for line in prompt.lines() {
        if line == "NEW:" {
            inside = true;
            continue;
        }
        if line.starts_with(">>>memledger-transcript-") {
            break;
        }
        if !inside {
            continue;
        }
        if let Some(rest) = line.strip_prefix("[L") {
            let (lines, text) = rest.split_once(']').unwrap();
            let (first, last) = match lines.split_once('-') {
                Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
                None => (lines.parse().unwrap(), lines.parse().unwrap()),
            };
            out.push((first, last, text.to_string()));
        } else if let Some(last) = out.last_mut() {
            last.2.push('\n');
            last.2.push_str(line);
        }
    }
    out
}

fn system(seen: &mock_http::Seen) -> String {
    seen.body.pointer("/messages/0/content").and_then(Value::as_str).unwrap_or_default().to_string()
}

fn is_extraction(seen: &mock_http::Seen) -> bool {
    system(seen).starts_with("You distil durable memories")
}

/// The extraction prompts the model was sent.
fn extraction_prompts(server: &mock_http::MockServer) -> Vec<String> {
    server.seen().iter().filter(|s| is_extraction(s)).map(|s| s.user_message()).collect()
}

/// One fact a scripted model finds: a turn holding `key` gives the memory `text` of `kind`.
type Fact = (&'static str, &'static str, &'static str);

/// The answer a scripted model gives an extraction prompt: each fact whose key a NEW turn holds.
fn extraction_answer(prompt: &str, facts: &[Fact]) -> String {
    let mut memories = Vec::new();
    for (first, last, text) in new_turns(prompt) {
        for (key, kind, memory) in facts {
            if let Some(at) = text.find(key) {
                // `#` stands for the number after the key.
                let n: String = text[at + key.len()..].chars().take_while(char::is_ascii_digit).collect();
                let memory = memory.replace('#', &n);
                memories.push(json!({"kind": kind, "text": memory, "first_line": first, "last_line": last}));
            }
        }
    }
    json!({ "memories": memories }).to_string()
}

/// A chat model that finds `facts`, calls pairs that speak of Fly.io and Railway contradictory
/// and the rest complementary, and is unsure as a judge; while `hold` is set, an extraction
/// prompt holding "HOLD" is answered only after a minute.
fn model(facts: &'static [Fact], hold: Arc<AtomicBool>) -> mock_http::MockServer {
    mock_http::start(move |seen| {
        let system = system(seen);
        let user = seen.user_message();
        if system.starts_with("You distil durable memories") {
            let answer = extraction_answer(&user, facts);
            if hold.load(Ordering::SeqCst) && user.contains("HOLD") {
                return mock_http::Reply::Slow(Duration::from_secs(60), mock_http_chat_body(&answer));
            }
            return mock_http::chat(&answer);
        }
        if system.starts_with("You settle a contradiction") {
            return mock_http::chat(r#"{"verdict": "unsure", "reason": "scripted"}"#);
        }
        let relation =
            if user.contains("Fly.io") && user.contains("Railway") { "contradictory" } else { "complementary" };
        mock_http::chat(&json!({"relation": relation, "reason": "scripted"}).to_string())
    })
}

fn mock_http_chat_body(content: &str) -> String {
    json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string()
}

fn env(server: &mock_http::MockServer) -> Vec<(&'static str, String)> {
    vec![("MEMLEDGER_LLM_URL", server.url.clone()), ("MEMLEDGER_LLM_MODEL", "extractor-1".into())]
}

fn env_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A Claude Code transcript, line by line, as Claude Code writes it.
#[derive(Default)]
struct Claude {
    session: String,
    lines: Vec<Value>,
}

impl Claude {
    fn new(session: &str) -> Self {
        Claude { session: session.into(), lines: Vec::new() }
    }

    fn record(&mut self, mut v: Value) -> &mut Self {
        let map = v.as_object_mut().unwrap();
        map.entry("sessionId").or_insert(json!(self.session));
        map.entry("cwd").or_insert(json!("/work/billing"));
        map.entry("version").or_insert(json!("1.0.98"));
        map.entry("userType").or_insert(json!("external"));
        self.lines.push(v);
        self
    }

    fn user(&mut self, uuid: &str, at: &str, content: Value) -> &mut Self {
        self.record(json!({"type": "user", "uuid": uuid, "parentUuid": null, "isSidechain": false,
            "timestamp": at, "message": {"role": "user", "content": content}}))
    }

    fn assistant(&mut self, id: &str, at: &str, block: Value) -> &mut Self {
        let uuid = format!("a-{}-{}", id, self.lines.len());
        self.record(json!({"type": "assistant", "uuid": uuid, "isSidechain": false, "timestamp": at,
            "requestId": "req_1", "message": {"id": id, "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [block], "stop_reason": null,
            "usage": {"input_tokens": 10, "output_tokens": 5}}}))
    }

    fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    fn write(&self, path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, self.text()).unwrap();
    }
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A credential, put together here so that no whole one sits in the source.
fn aws_key() -> String {
    ["AKIA", "IOSFODNN7", "EXAMPLE"].concat()
}

fn recall_answer(memory: &str) -> String {
    let id = "0123456789abcdef0123456789abcdef";
    let notice = memledger_engine::transcripts::clean::RECALL_NOTICE;
    format!("{notice}\n<<<memledger-data-{id}\n[1] memory 1\n{memory}\n>>>memledger-data-{id}\n")
}

const T1: &str = "2025-07-01T10:00:00.000Z";
const T2: &str = "2025-07-01T10:05:00.000Z";

const FACTS: &[Fact] = &[
    ("deploy the billing service on fly.io", "fact", "The billing service deploys on Fly.io"),
    ("I prefer pnpm over npm", "preference", "Ana prefers pnpm over npm"),
    ("the api listens on port 8080", "fact", "The billing API listens on port 8080"),
    ("we use postgres 17", "fact", "The billing service uses Postgres 17"),
    ("moved the deploy to railway", "fact", "The billing service moved its deploy to Railway"),
    ("support group yesterday", "episode", "Caroline went to an LGBTQ support group yesterday"),
    ("remember the dog", "fact", "Melanie's dog is named Max"),
    ("chunk fact number ", "fact", "Chunk fact number #"),
];

/// A Claude Code session with everything a reader must leave out.
fn busy_session() -> Claude {
    let mut c = Claude::new("7c1e2f4a-0b5d-4c3e-9a8f-2d6b1e0c9f31");
    let first = format!(
        "We deploy the billing service on fly.io. The deploy key is {}. <private>My home address is 12 Elm St</private>",
        aws_key()
    );
    c.user("u1", T1, json!(first))
        .assistant("msg_01", T1, json!({"type": "thinking", "thinking": "a secret plan of thought", "signature": "sig"}))
        .assistant("msg_01", T1, text_block("Noted: Fly.io it is."))
        .assistant("msg_01", T1, json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat ~/.env"}}))
        .user("u2", T1, json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "tool output: DATABASE_URL"}]))
        .record(json!({"type": "user", "uuid": "side1", "isSidechain": true, "timestamp": T1,
            "message": {"role": "user", "content": "subagent: we should use yarn"}}))
        .record(json!({"type": "user", "uuid": "meta1", "isMeta": true, "timestamp": T1,
            "message": {"role": "user", "content": "Caveat: The messages below were generated by the user while running local commands."}}))
        .user("u3", T1, json!("<command-name>/compact</command-name>\n<command-message>compact</command-message>"))
        .record(json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "timestamp": T1}))
        .record(json!({"type": "user", "uuid": "sum1", "isCompactSummary": true, "timestamp": T1,
            "message": {"role": "user", "content": "This session is being continued from a previous conversation. We deploy on fly.io."}}))
        .user("u4", T2, json!("I prefer pnpm over npm.\n<system-reminder>Remember the todo list</system-reminder>"))
        .assistant("msg_02", T2, text_block(&format!("memledger recalled:\n{}So pnpm it is.", recall_answer("we deploy on heroku"))))
        .record(json!({"type": "summary", "summary": "Billing deploys", "leafUuid": "u4"}))
        .record(json!({"type": "queue-operation", "operation": "enqueue", "timestamp": T2}));
    c
}

#[test]
fn a_claude_code_session_reaches_the_model_cleaned_and_each_memory_points_at_its_lines() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("store");
    let file = home.path().join("projects/-work-billing/7c1e2f4a-0b5d-4c3e-9a8f-2d6b1e0c9f31.jsonl");
    let mut text = busy_session().text();
    text.push_str("this line is not JSON\n");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    let server = model(FACTS, Arc::default());
    let env = env(&server);
    let env = env_refs(&env);
    let f = file.to_str().unwrap();

    let (memories, summary) = import(&dir, home.path(), &env, &[f]);
    let prompts = extraction_prompts(&server);
    assert_eq!(prompts.len(), 1, "one chunk");
    let prompt = &prompts[0];
    for said in
        ["deploy the billing service on fly.io", "I prefer pnpm over npm", "So pnpm it is", "Noted: Fly.io it is."]
    {
        assert!(prompt.contains(said), "{said:?} reaches the model: {prompt}");
    }
    assert!(prompt.contains("[redacted: aws-access-token]"), "{prompt}");
    for hidden in [
        aws_key().as_str(),
        "12 Elm St",
        "a secret plan of thought",
        "cat ~/.env",
        "tool output",
        "we should use yarn",
        "Caveat",
        "/compact",
        "being continued",
        "Remember the todo list",
        "heroku",
    ] {
        assert!(!prompt.contains(hidden), "{hidden:?} must not reach the model: {prompt}");
    }
    // The turns keep their lines: of the first message's three blocks only the text (line 3) is a
    // turn; the tool result and what follows it until the next person's turn are gone.
    let turns: Vec<(u32, u32)> = new_turns(prompt).iter().map(|(a, b, _)| (*a, *b)).collect();
    assert_eq!(turns, vec![(1, 1), (3, 3), (11, 11), (12, 12)]);

    assert_eq!(memories.len(), 2, "{memories:?}");
    let fly = memories.iter().find(|m| m["text"] == "The billing service deploys on Fly.io").unwrap();
    assert_eq!(
        (fly["outcome"].as_str(), fly["first_line"].as_u64(), fly["last_line"].as_u64()),
        (Some("added"), Some(1), Some(1))
    );
    assert_eq!(fly["observed_at"], "2025-07-01T10:00:00.000000Z");
    assert_eq!(fly["message_ids"], json!(["u1"]));
    assert_eq!(fly["session"], "7c1e2f4a-0b5d-4c3e-9a8f-2d6b1e0c9f31");
    assert_eq!(fly["agent"], "claude-code");
    let pnpm = memories.iter().find(|m| m["text"] == "Ana prefers pnpm over npm").unwrap();
    assert_eq!((pnpm["type"].as_str(), pnpm["first_line"].as_u64()), (Some("preference"), Some(11)));
    assert_eq!(pnpm["observed_at"], "2025-07-01T10:05:00.000000Z");

    let shown = json(&dir, home.path(), &["show", fly["memory_id"].as_str().unwrap()]);
    assert_eq!(shown["authority"], "imported");
    assert_eq!(shown["effective_at"], "2025-07-01T10:00:00.000000Z");
    let evidence = &shown["evidence"];
    assert_eq!(evidence["file"], f);
    assert_eq!((evidence["first_line"].as_u64(), evidence["last_line"].as_u64()), (Some(1), Some(1)));
    let excerpt = evidence["excerpt"].as_str().unwrap();
    assert!(excerpt.starts_with("user: We deploy the billing service on fly.io"), "{excerpt}");
    assert!(!excerpt.contains(&aws_key()) && !excerpt.contains("Elm St"), "{excerpt}");

    assert_eq!(summary["files"], 1);
    assert_eq!(summary["turns"], 4);
    assert_eq!(summary["chunks"], 1);
    assert_eq!(summary["outcomes"], json!({"added": 2}));
    assert_eq!(summary["redacted"], json!({"secrets": 1, "private_spans": 1, "recall_blocks": 1}));
    for what in [
        "thinking",
        "tool_use",
        "tool_result",
        "sidechain",
        "meta",
        "command",
        "system",
        "compaction",
        "summary",
        "unknown:queue-operation",
    ] {
        assert_eq!(summary["skipped"][what], 1, "{what}: {}", summary["skipped"]);
    }
    assert_eq!(summary["malformed"], json!([{"file": f, "line": 15, "error": summary["malformed"][0]["error"]}]));
    assert_eq!(summary["model"], "extractor-1");

    // A second run reads nothing new and asks nothing.
    let hits = server.hits();
    let (again, summary) = import(&dir, home.path(), &env, &[f]);
    assert!(again.is_empty(), "{again:?}");
    assert_eq!((summary["files_unchanged"].as_u64(), summary["chunks"].as_u64()), (Some(1), Some(0)));
    assert_eq!(server.hits(), hits);
    assert_eq!(active_texts(&dir, home.path()).len(), 2);
}

#[test]
fn an_appended_file_imports_its_new_turns_and_a_rewritten_one_no_duplicate() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("store");
    let file = home.path().join("s2.jsonl");
    let f = file.to_str().unwrap();
    let server = model(FACTS, Arc::default());
    let env = env(&server);
    let env = env_refs(&env);
    let mut c = Claude::new("s2");
    c.user("u1", T1, json!("we deploy the billing service on fly.io"))
        .assistant("m1", T1, text_block("ok"))
        .user("u2", T1, json!("the api listens on port 8080"))
        .assistant("m2", T1, text_block("noted"));
    c.write(&file);
    let (first, _) = import(&dir, home.path(), &env, &[f]);
    assert_eq!(first.len(), 2);

    // Claude Code appends the next turns.
    c.user("u3", T2, json!("we use postgres 17")).assistant("m3", T2, text_block("fine"));
    c.write(&file);
    let (appended, summary) = import(&dir, home.path(), &env, &[f]);
    assert_eq!(appended.len(), 1, "{appended:?}");
    assert_eq!((appended[0]["first_line"].as_u64(), appended[0]["outcome"].as_str()), (Some(5), Some("added")));
    assert_eq!(summary["turns"], 2);
    let prompt = extraction_prompts(&server).pop().unwrap();
    assert_eq!(new_turns(&prompt).iter().map(|t| t.0).collect::<Vec<_>>(), vec![5, 6], "only the new turns: {prompt}");
    assert!(prompt.contains("CONTEXT (read before; do not extract from these):\n[L3] user"), "the overlap: {prompt}");
    assert_eq!(active_texts(&dir, home.path()).len(), 3);

    // A compaction rewrites the file under its name: the same turns written again (spaced
    // otherwise), then new ones. The chunks imported before are recognised; only the rest is asked.
    let asked = extraction_prompts(&server).len();
    let mut rewritten: String = c
        .lines
        .iter()
        .map(|l| {
            let text = l.to_string();
            format!("{{ {}\n", &text[1..])
        })
        .collect();
    rewritten.push_str(&format!(
        "{}\n",
        json!({"type": "user", "sessionId": "s2", "uuid": "u4", "timestamp": T2,
            "message": {"role": "user", "content": "I prefer pnpm over npm"}})
    ));
    std::fs::write(&file, &rewritten).unwrap();
    let (after, summary) = import(&dir, home.path(), &env, &[f]);
    assert_eq!(summary["files_rewritten"], 1);
    assert_eq!((summary["chunks_known"].as_u64(), summary["chunks"].as_u64()), (Some(2), Some(1)), "{summary}");
    assert_eq!(extraction_prompts(&server).len(), asked + 1);
    assert_eq!(after.len(), 1);
    assert_eq!(after[0]["text"], "Ana prefers pnpm over npm");

    // Rewritten with an edited turn: its chunk is asked about again, and its memories merge.
    let edited = rewritten.replacen("\"noted\"", "\"noted!\"", 1);
    assert_ne!(edited, rewritten);
    std::fs::write(&file, &edited).unwrap();
    let (again, summary) = import(&dir, home.path(), &env, &[f]);
    assert_eq!(summary["files_rewritten"], 1);
    assert!(again.iter().all(|m| m["outcome"] == "merged"), "{again:?}");
    let texts = active_texts(&dir, home.path());
    assert_eq!(texts.len(), 4, "each memory once: {texts:?}");
}

/// A plain transcript of `n` turns, each long enough that a chunk of 1,000 characters holds two.
fn long_plain(n: u32, hold_at: u32) -> String {
    let mut text = String::from("{\"session\": \"long-1\", \"timestamp\": \"2025-08-01T09:00:00Z\"}\n");
    for i in 1..=n {
        let role = if i % 2 == 1 { "user" } else { "assistant" };
        let marker = if i == hold_at { " HOLD" } else { "" };
        let said = if i % 2 == 1 { format!("chunk fact number {i}{marker}") } else { format!("reply {i}") };
        let padding = "words ".repeat(70);
        text.push_str(&format!(
            "{}\n",
            json!({"role": role, "text": format!("{said}. {padding}"), "timestamp": format!("2025-08-01T09:{i:02}:00Z")})
        ));
    }
    text
}

#[test]
fn a_killed_import_run_again_leaves_each_memory_once() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("store");
    let file = home.path().join("long.jsonl");
    let f = file.to_str().unwrap();
    // 20 turns, 2 a chunk: 10 chunks; the model is asked 8 at once, so the ninth (turn 17) is
    // asked after the first eight were committed, and held.
    std::fs::write(&file, long_plain(20, 17)).unwrap();
    let hold = Arc::new(AtomicBool::new(true));
    let server = model(FACTS, hold.clone());
    let env = env(&server);
    let env = env_refs(&env);
    let mut child = command(&dir, home.path(), &env, &["--json", "import", "sessions", "--chunk-chars", "1000", f])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !extraction_prompts(&server).iter().any(|p| p.contains("HOLD")) {
        assert!(started.elapsed() < Duration::from_secs(60), "the held chunk was never asked");
        assert!(child.try_wait().unwrap().is_none(), "the import ended before the held chunk");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    hold.store(false, Ordering::SeqCst);
    let before = active_texts(&dir, home.path());
    assert_eq!(before.len(), 8, "the chunks committed before the kill: {before:?}");

    let asked = extraction_prompts(&server).len();
    let (memories, summary) = import(&dir, home.path(), &env, &["--chunk-chars", "1000", f]);
    assert_eq!(extraction_prompts(&server).len(), asked + 2, "only the last two chunks are asked again");
    assert_eq!(memories.len(), 2, "{memories:?}");
    assert_eq!(summary["chunks"], 2);
    let texts = active_texts(&dir, home.path());
    let mut want: Vec<String> = (1..=10).map(|c| format!("Chunk fact number {}", 2 * c - 1)).collect();
    want.sort();
    assert_eq!(texts, want, "each once");
    let log = support::json_lines(&dir, &["log", "--limit", "100000"]);
    let progressed = log.iter().filter(|e| e["type"] == "transcript_progressed").count();
    assert_eq!(progressed, 10, "one progress event a chunk");
    let observed = log.iter().filter(|e| e["type"] == "memory_observed").count();
    assert_eq!(observed, 10, "one save a chunk");
}

#[test]
fn codex_rollouts_give_each_message_once() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("store");
    let file = home.path().join(".codex/sessions/2025/09/01/rollout-2025-09-01T10-00-00-0199aaaa.jsonl");
    let at = |s: u32| format!("2025-09-01T10:00:{s:02}.000Z");
    let message = |s: u32, role: &str, kind: &str, text: &str| {
        json!({"timestamp": at(s), "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}})
    };
    let lines = [
        json!({"timestamp": at(0), "type": "session_meta", "payload": {"id": "0199aaaa", "timestamp": at(0),
            "cwd": "/work/billing", "originator": "codex_cli_rs", "cli_version": "0.36.0", "instructions": null}}),
        message(1, "user", "input_text", "<environment_context>\n  <cwd>/work/billing</cwd>\n</environment_context>"),
        json!({"timestamp": at(2), "type": "turn_context", "payload": {"cwd": "/work/billing", "model": "gpt-5-codex"}}),
        json!({"timestamp": at(3), "type": "event_msg", "payload": {"type": "user_message", "message": "the api listens on port 8080", "kind": "plain"}}),
        message(3, "user", "input_text", "the api listens on port 8080"),
        json!({"timestamp": at(4), "type": "response_item", "payload": {"type": "reasoning", "summary": [], "encrypted_content": "x"}}),
        json!({"timestamp": at(5), "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c1"}}),
        json!({"timestamp": at(6), "type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": "{\"output\":\"src\"}"}}),
        message(7, "assistant", "output_text", "I checked: the server binds 8080."),
        json!({"timestamp": at(7), "type": "event_msg", "payload": {"type": "agent_message", "message": "I checked: the server binds 8080."}}),
        json!({"timestamp": at(8), "type": "event_msg", "payload": {"type": "token_count", "info": null}}),
        json!({"timestamp": at(9), "type": "compacted", "payload": {"message": "summary of the above"}}),
        message(10, "user", "input_text", "and we use postgres 17"),
    ];
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let server = model(FACTS, Arc::default());
    let env = env(&server);
    let env = env_refs(&env);
    let (memories, summary) = import(&dir, home.path(), &env, &[file.to_str().unwrap()]);
    let prompt = extraction_prompts(&server).pop().unwrap();
    let turns = new_turns(&prompt);
    assert_eq!(turns.iter().map(|t| t.0).collect::<Vec<_>>(), vec![5, 9, 13], "{prompt}");
    assert_eq!(prompt.matches("the api listens on port 8080").count(), 1, "{prompt}");
    assert!(!prompt.contains("environment_context") && !prompt.contains("summary of the above"), "{prompt}");
    assert!(prompt.contains("codex session 0199aaaa"), "{prompt}");
    assert_eq!(memories.len(), 2);
    let api = memories.iter().find(|m| m["text"] == "The billing API listens on port 8080").unwrap();
    assert_eq!(
        (api["first_line"].as_u64(), api["observed_at"].as_str()),
        (Some(5), Some("2025-09-01T10:00:03.000000Z"))
    );
    assert_eq!(api["session"], "0199aaaa");
    assert_eq!(summary["skipped"]["event_msg copy"], 2);
    assert_eq!(summary["skipped"]["compaction"], 1);
}

#[test]
fn a_plain_transcript_dates_its_memories_when_they_were_said() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("store");
    let file = home.path().join("locomo-1.jsonl");
    // LoCoMo's dialogue shape: speakers by name, the session's date on a line of its own.
    let lines = [
        json!({"session": "conv-26:1", "timestamp": "2023-05-08T13:56:00Z"}),
        json!({"speaker": "Caroline", "text": "Hey Mel! How have you been?", "id": "D1:1"}),
        json!({"speaker": "Caroline", "text": "I went to a LGBTQ support group yesterday and it was so powerful.", "id": "D1:3"}),
        json!({"speaker": "Melanie", "text": "Wow! Also, remember the dog? Max is great.", "id": "D1:4"}),
    ];
    std::fs::write(&file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let server = model(FACTS, Arc::default());
    let env = env(&server);
    let env = env_refs(&env);
    let (memories, _) = import(&dir, home.path(), &env, &["--agent", "plain", file.to_str().unwrap()]);
    let group = memories.iter().find(|m| m["type"] == "episode").unwrap();
    assert_eq!(group["text"], "Caroline went to an LGBTQ support group yesterday (2023-05-07)");
    assert_eq!(group["observed_at"], "2023-05-08T13:56:00.000000Z", "the session's time");
    assert_eq!((group["first_line"].as_u64(), group["message_ids"].clone()), (Some(3), json!(["D1:3"])));
    let shown = json(&dir, home.path(), &["show", group["memory_id"].as_str().unwrap()]);
    assert_eq!(shown["effective_at"], "2023-05-08T13:56:00.000000Z");
    assert_eq!(shown["evidence"]["session"], "conv-26:1");
    let prompt = extraction_prompts(&server).pop().unwrap();
    assert!(prompt.contains("[L3] Caroline: I went to a LGBTQ support group yesterday"), "{prompt}");
}

#[test]
fn explicit_requests_import_offline_and_the_rest_needs_a_model() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("store");
    let file = home.path().join("s3.jsonl");
    let f = file.to_str().unwrap();
    let mut c = Claude::new("s3");
    c.user("u1", T1, json!("Please remember that the staging db listens on port 5433. Thanks"))
        .assistant("m1", T1, text_block("I will remember that the staging db listens on port 5433."))
        .user("u2", T2, json!("ok\n#memory deploys happen on tuesdays"))
        .user("u3", T2, json!(format!("remember that the key is {}", aws_key())));
    let mut text = c.text();
    text.push_str("{\"type\": \"user\", \"message\": ");
    std::fs::write(&file, text).unwrap();

    let out = run(&dir, home.path(), &[], &["import", "sessions", f]);
    assert_eq!(support::code(&out), 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs a chat model") && err.contains("--explicit-only"), "{err}");
    assert!(!dir.exists(), "nothing was written, not even a store");

    let dry = run(&dir, home.path(), &[], &["--json", "import", "sessions", "--explicit-only", "--dry-run", f]);
    let lines = support::lines(&dry, &["dry run"]);
    assert_eq!(lines.iter().filter(|l| l["outcome"] == "would_save").count(), 3, "{lines:?}");
    assert!(!dir.exists(), "a dry run writes nothing");

    let (memories, summary) = import(&dir, home.path(), &[], &["--explicit-only", f]);
    let texts: Vec<&str> = memories.iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        vec![
            "The staging db listens on port 5433",
            "Deploys happen on tuesdays",
            "The key is [redacted: aws-access-token]"
        ]
    );
    assert_eq!(memories[0]["first_line"], 1);
    assert_eq!(memories[1]["first_line"], 3);
    assert!(summary["malformed"].as_array().unwrap().is_empty(), "a last line still being written is left: {summary}");
    let human = run(&dir, home.path(), &[], &["import", "sessions", "--explicit-only", f]);
    assert!(human.status.success());
    let err = String::from_utf8_lossy(&human.stderr);
    assert!(err.contains("a chat model"), "says a model is needed for the rest: {err}");
    assert!(String::from_utf8_lossy(&human.stdout).contains("already imported"), "the second run replays");
    assert_eq!(active_texts(&dir, home.path()).len(), 3);
}

#[test]
fn discovery_reads_the_agents_directories_and_leaves_a_session_still_being_written() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let dir = h.join("store");
    let old = SystemTime::now() - Duration::from_secs(3600);
    let set_old = |p: &Path| std::fs::File::options().write(true).open(p).unwrap().set_modified(old).unwrap();
    let project = h.join(".claude/projects/-work-billing");
    let mut c = Claude::new("done-1");
    c.user("u1", T1, json!("remember that the billing cron runs at 2am"));
    c.write(&project.join("done-1.jsonl"));
    set_old(&project.join("done-1.jsonl"));
    let mut live = Claude::new("live-1");
    live.user("u1", T2, json!("remember that the live session is not over"));
    live.write(&project.join("live-1.jsonl"));
    let mut sub = Claude::new("done-1");
    sub.record(json!({"type": "user", "isSidechain": true, "message": {"role": "user", "content": "remember that subagents are skipped"}}));
    sub.write(&project.join("done-1/subagents/agent-1.jsonl"));
    set_old(&project.join("done-1/subagents/agent-1.jsonl"));
    let rollout = h.join(".codex/sessions/2025/09/01/rollout-2025-09-01T10-00-00-0199bbbb.jsonl");
    std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
    std::fs::write(
        &rollout,
        format!(
            "{}\n{}\n",
            json!({"timestamp": "2025-09-01T10:00:00Z", "type": "session_meta", "payload": {"id": "0199bbbb", "cwd": "/work/other"}}),
            json!({"timestamp": "2025-09-01T10:00:01Z", "type": "response_item", "payload": {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "remember that codex sessions are read too"}]}}),
        ),
    )
    .unwrap();
    set_old(&rollout);

    let (memories, summary) = import(&dir, h, &[], &["--explicit-only"]);
    let mut texts: Vec<&str> = memories.iter().map(|m| m["text"].as_str().unwrap()).collect();
    texts.sort();
    assert_eq!(texts, vec!["Codex sessions are read too", "The billing cron runs at 2am"]);
    assert_eq!((summary["files"].as_u64(), summary["files_active"].as_u64()), (Some(2), Some(1)));
    let (_, summary) = import(&dir, h, &[], &["--explicit-only", "--agent", "codex", "--dry-run"]);
    assert_eq!(summary["files"], 1);
    let (_, summary) = import(&dir, h, &[], &["--explicit-only", "--session", "done-1", "--dry-run"]);
    assert_eq!(summary["files"], 1);
    let (_, summary) = import(&dir, h, &[], &["--explicit-only", "--project", "/work/other", "--dry-run"]);
    assert_eq!(summary["files"], 1);
    let (_, summary) = import(&dir, h, &[], &["--explicit-only", "--since", "2999-01-01", "--dry-run"]);
    assert_eq!(summary["files"], 0);
    // CLAUDE_CONFIG_DIR moves Claude Code's directory.
    let elsewhere = h.join("claude-config");
    c.write(&elsewhere.join("projects/-x/done-2.jsonl"));
    set_old(&elsewhere.join("projects/-x/done-2.jsonl"));
    let e = elsewhere.to_str().unwrap();
    let (_, summary) =
        import(&dir, h, &[("CLAUDE_CONFIG_DIR", e)], &["--explicit-only", "--agent", "claude-code", "--dry-run"]);
    assert_eq!(summary["files"], 1);
}

#[test]
fn through_a_server_an_import_commits_as_it_does_directly() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("store");
    support::json(&dir, &["save", "the first memory creates the store"]);
    let served = support::served::Served::start(&dir, false);
    let file = home.path().join("s4.jsonl");
    let f = file.to_str().unwrap();
    let mut c = Claude::new("s4");
    c.user("u1", T1, json!("we deploy the billing service on fly.io")).assistant("m1", T1, text_block("ok"));
    c.write(&file);
    let server = model(FACTS, Arc::default());
    let env = env(&server);
    let env = env_refs(&env);
    let (memories, _) = import(&dir, home.path(), &env, &[f]);
    assert_eq!(memories.len(), 1);
    assert_eq!(memories[0]["outcome"], "added");
    let (again, summary) = import(&dir, home.path(), &env, &[f]);
    assert!(again.is_empty());
    assert_eq!(summary["files_unchanged"], 1);
    let status = json(&dir, home.path(), &["status"]);
    assert_eq!(status["path"], "server", "{status}");
    drop(served);
}

#[test]
fn the_judge_and_conflicts_show_see_each_sides_excerpt_and_time() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("store");
    let server = model(FACTS, Arc::default());
    let env = env(&server);
    let env = env_refs(&env);
    // A person's word, then a transcript that says otherwise: an imported memory never
    // supersedes a stated one, so a conflict waits.
    let stated = run(&dir, home.path(), &env, &["--json", "save", "The billing service deploys on Fly.io"]);
    assert!(stated.status.success(), "{}", String::from_utf8_lossy(&stated.stderr));
    let file = home.path().join("s5.jsonl");
    let mut c = Claude::new("s5");
    c.user("u1", T2, json!("we moved the deploy to railway last week")).assistant("m1", T2, text_block("ok"));
    c.write(&file);
    let (memories, _) = import(&dir, home.path(), &env, &[file.to_str().unwrap()]);
    assert_eq!(memories[0]["outcome"], "conflict", "{memories:?}");
    let cid = memories[0]["conflict_id"].as_str().unwrap();
    let shown = run(&dir, home.path(), &[], &["conflicts", "show", cid]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("excerpt: user: we moved the deploy to railway last week"), "{shown}");
    assert!(shown.contains("said 2025-07-01T10:05:00Z"), "{shown}");
    let shown = json(&dir, home.path(), &["conflicts", "show", cid]);
    assert_eq!(shown["incoming_memory"]["observed_at"], "2025-07-01T10:05:00.000000Z");

    let auto = run(&dir, home.path(), &env, &["--json", "conflicts", "auto"]);
    assert!(auto.status.success(), "{}", String::from_utf8_lossy(&auto.stderr));
    let judged = server.seen().into_iter().find(|s| system(s).starts_with("You settle a contradiction")).unwrap();
    let prompt = judged.user_message();
    assert!(prompt.contains("said in a transcript: 2025-07-01T10:05:00"), "{prompt}");
    assert!(prompt.contains("excerpt: \"user: we moved the deploy to railway last week"), "{prompt}");
}

#[test]
fn hooks_install_shows_asks_writes_and_uninstall_removes_exactly_that() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let dir = h.join("store");
    let settings = h.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let before =
        json!({"model": "opus", "hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye"}]}]}});
    std::fs::write(&settings, before.to_string()).unwrap();
    let claude_json = h.join(".claude.json");
    std::fs::write(&claude_json, json!({"numStartups": 3}).to_string()).unwrap();

    let dry = json(&dir, h, &["hooks", "install", "claude-code", "--dry-run"]);
    assert_eq!(dry["written"], false);
    assert_eq!(dry["changes"].as_array().unwrap().len(), 3, "{dry}");
    let read = |p: &Path| serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap();
    assert_eq!(read(&settings), before, "a dry run writes nothing");
    // Not on a terminal and without --yes: nothing is written.
    let refused = run(&dir, h, &[], &["hooks", "install", "claude-code"]);
    assert_eq!(support::code(&refused), 2);
    assert_eq!(read(&settings), before);

    let done = json(&dir, h, &["hooks", "install", "claude-code", "--yes"]);
    assert_eq!(done["written"], true);
    let installed = read(&settings);
    let hook_command = done["command"].as_str().unwrap();
    assert!(hook_command.ends_with("import sessions --from-hook") && hook_command.contains("--dir"), "{hook_command}");
    assert_eq!(installed["hooks"]["SessionEnd"].as_array().unwrap().len(), 2);
    assert_eq!(installed["hooks"]["PreCompact"][0]["hooks"][0]["command"], hook_command);
    assert_eq!(installed["model"], "opus");
    assert_eq!(read(&claude_json)["mcpServers"]["memledger"]["args"][2], "mcp");
    let again = json(&dir, h, &["hooks", "install", "claude-code", "--yes"]);
    assert_eq!(again["changes"], json!([]), "installed once");

    // The hook itself: Claude Code's JSON on standard input names the transcript.
    let file = h.join(".claude/projects/-work/s6.jsonl");
    let mut c = Claude::new("s6");
    c.user("u1", T1, json!("remember that hooks import sessions"));
    c.write(&file);
    let hook = json!({"session_id": "s6", "transcript_path": file, "cwd": "/work", "hook_event_name": "SessionEnd"});
    let mut child = command(&dir, h, &[], &["import", "sessions", "--from-hook"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), hook.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        active_texts(&dir, h),
        vec!["Hooks import sessions".to_string()],
        "offline, the hook imports what was asked"
    );

    let removed = json(&dir, h, &["hooks", "uninstall", "claude-code", "--yes"]);
    assert_eq!(removed["written"], true);
    assert_eq!(read(&settings), before, "exactly what install wrote is gone");
    assert_eq!(read(&claude_json), json!({"numStartups": 3}));
}

#[test]
fn the_import_evaluation_scores_a_perfect_extractor_as_perfect() {
    let root = support::manifest_dir().join("..");
    let data = root.join("../shared/eval/locomo-dev.json");
    let python = std::process::Command::new("python3").arg("--version").output();
    if !data.exists() || python.is_err() {
        println!("skipped: no {} or no python3", data.display());
        return;
    }
    let out = std::process::Command::new("python3")
        .arg(root.join("scripts/eval_import.py"))
        .args(["--bin", support::bin(), "--scripted", "--max-conversations", "1", "--max-sessions", "3", "--json"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(result["gold_facts"].as_u64().unwrap() > 10, "{result}");
    assert!(result["matched"].as_f64().unwrap() >= 0.95, "a model that answers the gold facts matches them: {result}");
    assert!(result["located"].as_f64().unwrap() >= 0.95, "on their evidence lines: {result}");
    assert_eq!(result["model"], "scripted-gold");
}

#[test]
fn an_excluded_transcript_is_never_read_past_its_first_line_and_the_summary_counts_it() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let dir = h.join("store");
    let server = model(FACTS, Arc::new(AtomicBool::new(false)));
    let env = env(&server);
    let env = env_refs(&env);
    let transcripts = h.join("t");
    // Excluded by --exclude: a session that worked in /work/billing.
    let mut billing = Claude::new("excl-billing");
    billing.user("u1", T1, json!("hello")).user("u2", T1, json!("BILLING-MARKER we use postgres 17"));
    billing.write(&transcripts.join("billing.jsonl"));
    // Excluded by a .memledgerignore above its working directory.
    let fenced = h.join("client-x");
    std::fs::create_dir_all(fenced.join("src")).unwrap();
    std::fs::write(fenced.join(".memledgerignore"), "").unwrap();
    let mut client = Claude::new("excl-client");
    let cwd = fenced.join("src").to_string_lossy().into_owned();
    client.record(json!({"type": "user", "uuid": "c1", "cwd": cwd, "timestamp": T1,
        "message": {"role": "user", "content": "hello"}}));
    client.record(json!({"type": "user", "uuid": "c2", "cwd": cwd, "timestamp": T1,
        "message": {"role": "user", "content": "CLIENT-MARKER the api listens on port 8080"}}));
    client.write(&transcripts.join("client.jsonl"));
    // Read: a session elsewhere.
    let mut open = Claude::new("open-1");
    open.record(json!({"type": "user", "uuid": "o1", "cwd": "/work/open", "timestamp": T2,
        "message": {"role": "user", "content": "I prefer pnpm over npm"}}));
    open.write(&transcripts.join("open.jsonl"));

    let t = transcripts.to_str().unwrap();
    let (memories, summary) = import(&dir, h, &env, &["--exclude", "/work/billing", t]);
    let texts: Vec<&str> = memories.iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["Ana prefers pnpm over npm"], "{summary}");
    assert_eq!(summary["files"], 1, "{summary}");
    assert_eq!(summary["files_excluded"], 2, "{summary}");
    assert_eq!(summary["excluded"], json!({"directory": 1, ".memledgerignore": 1}), "{summary}");
    let prompts = extraction_prompts(&server);
    assert!(!prompts.is_empty());
    for prompt in &prompts {
        assert!(!prompt.contains("MARKER"), "an excluded transcript reached the model: {prompt}");
    }
    // The config file's `[import] exclude` names a session id; the human summary says so.
    let config = h.join("config.toml");
    std::fs::write(&config, "[import]\nexclude = [\"open-1\"]\n").unwrap();
    let config = config.to_str().unwrap();
    let out = run(&dir, h, &[("MEMLEDGER_CONFIG", config)], &["import", "sessions", "--explicit-only", "--dry-run", t]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("1 by session"), "{stdout}");
    // The Claude Code hook's own `cwd` counts where the transcript's first line names none.
    let hooked = transcripts.join("hooked/h-1.jsonl");
    std::fs::create_dir_all(hooked.parent().unwrap()).unwrap();
    let line = json!({"type": "user", "uuid": "h1", "sessionId": "h-1", "timestamp": T1,
        "message": {"role": "user", "content": "HOOK-MARKER we use postgres 17"}});
    std::fs::write(&hooked, format!("{line}\n")).unwrap();
    let hook = json!({"transcript_path": hooked, "session_id": "h-1", "cwd": cwd, "hook_event_name": "SessionEnd"});
    let mut child = command(&dir, h, &env, &["--json", "import", "sessions", "--from-hook"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), hook.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let summary: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(summary["summary"]["excluded"], json!({".memledgerignore": 1}), "{summary}");
    assert!(extraction_prompts(&server).iter().all(|p| !p.contains("HOOK-MARKER")));
}

/// A chat model that finds `FACTS` and says what each call cost: the prompt at 4 bytes a token,
/// 20 tokens of answer.
fn metered_model() -> mock_http::MockServer {
    mock_http::start(move |seen| {
        let (system, user) = (system(seen), seen.user_message());
        let answer = if system.starts_with("You distil durable memories") {
            extraction_answer(&user, FACTS)
        } else {
            json!({"relation": "complementary", "reason": "scripted"}).to_string()
        };
        let prompt_tokens = (system.len() + user.len()).div_ceil(4);
        let body = json!({
            "choices": [{"message": {"role": "assistant", "content": answer}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 20, "total_tokens": prompt_tokens + 20},
        });
        mock_http::Reply::Status(200, body.to_string())
    })
}

#[test]
fn a_token_budget_stops_an_import_cleanly_and_the_next_run_goes_on_from_there() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let dir = h.join("store");
    let file = h.join("long.jsonl");
    let f = file.to_str().unwrap();
    // 20 turns, 2 a chunk: 10 chunks of about 1,000 tokens each.
    std::fs::write(&file, long_plain(20, 0)).unwrap();
    let server = metered_model();
    let env = env(&server);
    let env = env_refs(&env);
    let budget = 3000;
    let (_, first) = import(&dir, h, &env, &["--chunk-chars", "1000", "--max-tokens", &budget.to_string(), f]);
    let spent = first["tokens"]["total_tokens"].as_u64().unwrap();
    let asked = first["model_calls"].as_u64().unwrap();
    assert!(spent <= budget, "{spent} tokens spent of a budget of {budget}: {first}");
    assert!((1..10).contains(&asked), "some chunks asked, not all: {first}");
    assert!(first["stopped_at_budget"]["first_line"].as_u64().is_some(), "{first}");
    let usage = json(&dir, h, &["usage"]);
    assert_eq!(usage["today"]["total_tokens"].as_u64(), Some(spent), "the store counted the run: {usage}");
    assert_eq!(usage["yours"]["today"]["calls"], first["tokens"]["calls"], "extraction and classification: {usage}");
    assert_eq!(json(&dir, h, &["status"])["tokens"]["today"].as_u64(), Some(spent));

    // The next run, unlimited, goes on where the first stopped: every chunk asked once in all.
    let (_, second) = import(&dir, h, &env, &["--chunk-chars", "1000", f]);
    assert_eq!(asked + second["model_calls"].as_u64().unwrap(), 10, "{second}");
    assert!(second["stopped_at_budget"].is_null());
    assert_eq!(extraction_prompts(&server).len(), 10, "no chunk asked twice");
    let texts = active_texts(&dir, h);
    assert_eq!(texts.len(), 10, "each chunk's memory once: {texts:?}");
    let total = json(&dir, h, &["usage"])["today"]["total_tokens"].as_u64().unwrap();
    assert_eq!(total, spent + second["tokens"]["total_tokens"].as_u64().unwrap());

    // A daily budget already spent today: the hook's next import asks nothing and says where it
    // stopped.
    let other = h.join("other.jsonl");
    std::fs::write(&other, long_plain(4, 0).replace("long-1", "other-1")).unwrap();
    let daily = total.to_string();
    let env_daily: Vec<(&str, &str)> =
        env.iter().copied().chain([("MEMLEDGER_DAILY_TOKENS", daily.as_str())]).collect();
    let (_, third) = import(&dir, h, &env_daily, &["--chunk-chars", "1000", other.to_str().unwrap()]);
    assert_eq!(third["model_calls"], 0, "{third}");
    assert!(third["stopped_at_budget"].is_object(), "{third}");
    assert_eq!(extraction_prompts(&server).len(), 10);
}
