//! Codex CLI's rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.
//!
//! Each line is `{timestamp, type, payload}`: `session_meta` (the session's id, start and working
//! directory), `turn_context`, `response_item` (the model's input and output items: messages,
//! reasoning, tool calls and their output), `event_msg` (what the interface showed, including
//! copies of the messages) and `compacted`. Turns are the `user` and `assistant` messages; an
//! `event_msg` copy of a message is dropped, and kept only where no `response_item` holds it
//! (versions that wrote only the events). Legacy rollouts (before `payload`) hold a first line
//! `{id, timestamp, instructions}` and then the items themselves, with `record_type: state`
//! lines between. The instructions and environment blocks Codex puts in user messages are not
//! the person's words and are dropped.

use serde_json::Value;

use super::{Agent, Line, Transcript, Turn, records, str_of, time_of};

/// Blocks Codex writes into user messages itself.
const INJECTED: &[(&str, &str)] = &[
    ("<user_instructions>", "</user_instructions>"),
    ("<environment_context>", "</environment_context>"),
    ("<INSTRUCTIONS>", "</INSTRUCTIONS>"),
];

/// Where a candidate turn came from.
#[derive(PartialEq)]
enum Origin {
    Item,
    Event,
}

pub(super) fn read(file: &str, bytes: &[u8]) -> Transcript {
    let mut found: Vec<(Turn, Origin)> = Vec::new();
    let mut t = records(bytes, |line, map, t| {
        let time = time_of(map.get("timestamp"));
        match (str_of(&map, "type"), map.get("payload").and_then(Value::as_object)) {
            (Some(kind), Some(payload)) => match kind {
                "session_meta" => {
                    meta(payload, t);
                    t.skip("session_meta");
                }
                "turn_context" => {
                    if t.cwd.is_none() {
                        t.cwd = str_of(payload, "cwd").map(str::to_string);
                    }
                    t.skip("turn_context");
                }
                "response_item" => item(file, line, payload, time, t, &mut found),
                "event_msg" => event(file, line, payload, time, t, &mut found),
                "compacted" => t.skip("compaction"),
                other => t.skip(format!("unknown:{other}")),
            },
            _ => legacy(file, line, &map, t, &mut found),
        }
    });
    // An event's copy of a message a response item holds is the same turn twice.
    let said: std::collections::HashSet<(String, String)> = found
        .iter()
        .filter(|(_, from)| *from == Origin::Item)
        .map(|(turn, _)| (turn.role.clone(), turn.text.trim().to_string()))
        .collect();
    for (turn, from) in found {
        if from == Origin::Event && said.contains(&(turn.role.clone(), turn.text.trim().to_string())) {
            t.skip("event_msg copy");
            continue;
        }
        t.turns.push(turn);
    }
    t
}

fn meta(payload: &serde_json::Map<String, Value>, t: &mut Transcript) {
    if t.session.is_none() {
        t.session = str_of(payload, "id").map(str::to_string);
    }
    if t.session_time.is_none() {
        t.session_time = time_of(payload.get("timestamp"));
    }
    if t.cwd.is_none() {
        t.cwd = str_of(payload, "cwd").map(str::to_string);
    }
}

fn item(
    file: &str,
    line: &Line<'_>,
    payload: &serde_json::Map<String, Value>,
    time: Option<memledger_schemas::Timestamp>,
    t: &mut Transcript,
    found: &mut Vec<(Turn, Origin)>,
) {
    match str_of(payload, "type").unwrap_or_default() {
        "message" => {
            let role = str_of(payload, "role").unwrap_or_default();
            if !matches!(role, "user" | "assistant") {
                return t.skip(format!("{role} message"));
            }
            let mut texts = Vec::new();
            match payload.get("content") {
                Some(Value::Array(blocks)) => {
                    for block in blocks {
                        match block.get("type").and_then(Value::as_str).unwrap_or_default() {
                            "input_text" | "output_text" | "text" => {
                                texts.push(block.get("text").and_then(Value::as_str).unwrap_or_default().to_string())
                            }
                            "input_image" => t.skip("image"),
                            other => t.skip(format!("unknown:{other} block")),
                        }
                    }
                }
                Some(Value::String(s)) => texts.push(s.clone()),
                _ => return t.skip("unknown:message without content"),
            }
            let text = texts.join("\n");
            let Some(text) = said(role, &text, t) else { return };
            let id = str_of(payload, "id").map(str::to_string);
            found.push((turn(file, line, role, id, time, text), Origin::Item));
        }
        "reasoning" => t.skip("reasoning"),
        "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call" => t.skip("tool_call"),
        "function_call_output" | "custom_tool_call_output" => t.skip("tool_result"),
        "" => t.skip("unknown:response_item"),
        other => t.skip(format!("unknown:{other}")),
    }
}

fn event(
    file: &str,
    line: &Line<'_>,
    payload: &serde_json::Map<String, Value>,
    time: Option<memledger_schemas::Timestamp>,
    t: &mut Transcript,
    found: &mut Vec<(Turn, Origin)>,
) {
    let role = match str_of(payload, "type").unwrap_or_default() {
        "user_message" => "user",
        "agent_message" => "assistant",
        _ => return t.skip("event_msg"),
    };
    let text = str_of(payload, "message").unwrap_or_default();
    let Some(text) = said(role, text, t) else { return };
    found.push((turn(file, line, role, None, time, text), Origin::Event));
}

/// A legacy rollout's line: the session's first line, a state record or an item itself.
fn legacy(
    file: &str,
    line: &Line<'_>,
    map: &serde_json::Map<String, Value>,
    t: &mut Transcript,
    found: &mut Vec<(Turn, Origin)>,
) {
    if map.contains_key("record_type") {
        return t.skip("state");
    }
    if map.contains_key("id") && map.contains_key("timestamp") && !map.contains_key("type") {
        meta(map, t);
        return t.skip("session_meta");
    }
    if map.contains_key("type") {
        return item(file, line, map, time_of(map.get("timestamp")), t, found);
    }
    t.skip("unknown")
}

/// The person's or the agent's own words in a message, without the blocks Codex writes into it;
/// `None` (counted) when nothing is left.
fn said(role: &str, text: &str, t: &mut Transcript) -> Option<String> {
    let mut text = text.to_string();
    if role == "user" {
        let trimmed = text.trim_start();
        if trimmed.starts_with("# AGENTS.md instructions") || trimmed.starts_with("<user_shell_command>") {
            t.skip("instructions");
            return None;
        }
        for (open, close) in INJECTED {
            text = super::clean::remove_tagged(&text, open, close);
        }
    }
    if text.trim().is_empty() {
        t.skip(if role == "user" { "instructions" } else { "empty" });
        return None;
    }
    Some(text)
}

fn turn(
    file: &str,
    line: &Line<'_>,
    role: &str,
    message_id: Option<String>,
    timestamp: Option<memledger_schemas::Timestamp>,
    text: String,
) -> Turn {
    Turn {
        agent: Agent::Codex,
        session: None,
        file: file.to_string(),
        line: line.number,
        last_line: line.number,
        end: line.end,
        message_id,
        role: role.to_string(),
        timestamp,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(i: u32) -> String {
        format!("2025-09-01T10:00:{i:02}.000Z")
    }

    fn message(i: u32, role: &str, kind: &str, text: &str) -> String {
        json!({"timestamp": at(i), "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}})
        .to_string()
    }

    #[test]
    fn messages_become_turns_and_event_copies_are_dropped() {
        let lines = [
            json!({"timestamp": at(0), "type": "session_meta",
                "payload": {"id": "0199-aaaa", "timestamp": at(0), "cwd": "/work/app", "cli_version": "0.36.0"}})
            .to_string(),
            message(1, "user", "input_text", "<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>"),
            json!({"timestamp": at(2), "type": "turn_context", "payload": {"cwd": "/work/app", "model": "gpt-5"}})
                .to_string(),
            json!({"timestamp": at(3), "type": "event_msg", "payload": {"type": "user_message", "message": "we use pnpm"}})
                .to_string(),
            message(3, "user", "input_text", "we use pnpm"),
            json!({"timestamp": at(4), "type": "response_item", "payload": {"type": "reasoning", "summary": []}})
                .to_string(),
            json!({"timestamp": at(5), "type": "response_item",
                "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}})
            .to_string(),
            json!({"timestamp": at(6), "type": "response_item",
                "payload": {"type": "function_call_output", "call_id": "c1", "output": "ok"}})
            .to_string(),
            message(7, "assistant", "output_text", "Switched the scripts to pnpm."),
            json!({"timestamp": at(7), "type": "event_msg",
                "payload": {"type": "agent_message", "message": "Switched the scripts to pnpm."}})
            .to_string(),
            json!({"timestamp": at(8), "type": "event_msg", "payload": {"type": "token_count"}}).to_string(),
            json!({"timestamp": at(9), "type": "compacted", "payload": {"message": "summary"}}).to_string(),
            message(10, "developer", "input_text", "be careful"),
        ];
        let t = read("/r/rollout.jsonl", (lines.join("\n") + "\n").as_bytes());
        assert_eq!(t.session.as_deref(), Some("0199-aaaa"));
        assert_eq!(t.cwd.as_deref(), Some("/work/app"));
        assert!(t.session_time.is_some());
        let turns: Vec<(&str, &str, u32)> =
            t.turns.iter().map(|x| (x.role.as_str(), x.text.as_str(), x.line)).collect();
        assert_eq!(turns, vec![("user", "we use pnpm", 5), ("assistant", "Switched the scripts to pnpm.", 9)]);
        assert_eq!(t.skipped.get("event_msg copy"), Some(&2));
        assert_eq!(t.skipped.get("instructions"), Some(&1));
        assert_eq!(t.skipped.get("tool_call"), Some(&1));
        assert_eq!(t.skipped.get("tool_result"), Some(&1));
        assert_eq!(t.skipped.get("reasoning"), Some(&1));
        assert_eq!(t.skipped.get("developer message"), Some(&1));
    }

    #[test]
    fn events_alone_are_turns_and_legacy_rollouts_are_read() {
        let only_events =
            json!({"timestamp": at(1), "type": "event_msg", "payload": {"type": "user_message", "message": "hi there"}})
                .to_string();
        let t = read("f", (only_events + "\n").as_bytes());
        assert_eq!(t.turns.len(), 1);
        let legacy = [
            json!({"id": "legacy-1", "timestamp": "2025-04-01T09:00:00Z", "instructions": null}).to_string(),
            json!({"record_type": "state"}).to_string(),
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "the api runs on port 8080"}]})
                .to_string(),
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]})
                .to_string(),
        ];
        let t = read("f", (legacy.join("\n") + "\n").as_bytes());
        assert_eq!(t.session.as_deref(), Some("legacy-1"));
        assert_eq!(t.turns.len(), 2);
        assert_eq!(t.turns[0].line, 3);
        assert!(t.turns[0].timestamp.is_none() && t.session_time.is_some());
        assert_eq!(t.skipped.get("state"), Some(&1));
    }
}
