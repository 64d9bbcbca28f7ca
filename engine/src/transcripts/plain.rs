//! memledger's own transcript format, for every agent without a reader of its own: JSON lines of
//! `{"role", "text", "timestamp"}` (`speaker` for `role` and `content` for `text` also do;
//! optional `id` and `session`). A line with no text and a `session` or `timestamp` names the
//! session and when it took place. `role` is `user`, `assistant`, or a speaker's name (LoCoMo's
//! dialogues: scripts/eval_import.sh).

use serde_json::Value;

use super::{Agent, Transcript, Turn, records, str_of, time_of};

pub(super) fn read(file: &str, bytes: &[u8]) -> Transcript {
    records(bytes, |line, map, t| {
        let text = str_of(&map, "text").or_else(|| str_of(&map, "content"));
        let role = str_of(&map, "role").or_else(|| str_of(&map, "speaker"));
        let session = map.get("session").and_then(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
        let timestamp = time_of(map.get("timestamp").or_else(|| map.get("time")));
        let Some(text) = text else {
            if session.is_some() || timestamp.is_some() {
                t.session = t.session.take().or(session);
                t.session_time = t.session_time.or(timestamp);
                t.skip("session");
            } else {
                t.skip("unknown");
            }
            return;
        };
        let Some(role) = role else {
            t.skip("unknown:no role");
            return;
        };
        if text.trim().is_empty() {
            t.skip("empty");
            return;
        }
        let role = match role.trim().to_ascii_lowercase().as_str() {
            r @ ("user" | "assistant" | "human" | "system") => r.to_string(),
            _ => role.trim().to_string(),
        };
        if role == "system" {
            t.skip("system");
            return;
        }
        t.turns.push(Turn {
            agent: Agent::Plain,
            session: session.or_else(|| t.session.clone()),
            file: file.to_string(),
            line: line.number,
            last_line: line.number,
            end: line.end,
            message_id: str_of(&map, "id").map(str::to_string),
            role,
            timestamp,
            text: text.to_string(),
        });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_role_and_text_are_turns() {
        let text = concat!(
            "{\"session\": \"conv-26:1\", \"timestamp\": \"2023-05-08T13:56:00Z\"}\n",
            "{\"speaker\": \"Caroline\", \"text\": \"I went to a support group yesterday.\", \"id\": \"D1:3\"}\n",
            "{\"role\": \"User\", \"content\": \"remember that the api is on 8080\", \"timestamp\": \"2023-05-08\"}\n",
            "{\"role\": \"assistant\"}\n",
            "[1, 2]\n",
        );
        let t = read("chat.jsonl", text.as_bytes());
        assert_eq!(t.session.as_deref(), Some("conv-26:1"));
        assert_eq!(t.turns.len(), 2);
        assert_eq!((t.turns[0].role.as_str(), t.turns[0].message_id.as_deref()), ("Caroline", Some("D1:3")));
        assert_eq!(t.turns[0].session.as_deref(), Some("conv-26:1"));
        assert!(t.turns[0].timestamp.is_none());
        assert_eq!(t.turns[1].role, "user");
        assert!(t.turns[1].timestamp.is_some());
        assert_eq!(t.skipped.get("unknown"), Some(&1));
        assert_eq!(t.malformed.len(), 1);
    }
}
