//! Transcripts as evidence (docs/design.md §14, docs/import.md): the files agents write of their
//! sessions, read by one reader per agent into one neutral [`Turn`] type, cleaned of what must
//! never reach a model or the store ([`clean`]), cut into chunks that fit a model's context
//! ([`chunk`]), and distilled into memories, each with the lines that support it ([`extract`]).
//!
//! Reading is pure: bytes in, turns out. A record of a type a reader does not know is skipped and
//! counted; a line that is not JSON is reported with its line number and the rest is read; a last
//! line without its newline that does not parse is a line still being written, left for the next
//! run. Nothing here touches the store: `memledger import sessions` (cli) saves what comes out
//! through the ordinary pipeline and records each file's progress as events.

pub mod chunk;
mod claude;
pub mod clean;
mod codex;
pub mod dates;
pub mod extract;
mod plain;

use std::collections::BTreeMap;

use memledger_schemas::{Hash, Timestamp, TranscriptProgressed};
use serde_json::Value;

/// The agents whose transcripts memledger reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Agent {
    /// Claude Code: `~/.claude/projects/<project>/<session>.jsonl`.
    ClaudeCode,
    /// Codex CLI: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.
    Codex,
    /// memledger's own format: JSON lines of `{role, text, timestamp}`.
    Plain,
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::ClaudeCode, Agent::Codex, Agent::Plain];

    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Plain => "plain",
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Agent {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "claude-code" | "claude" => Ok(Agent::ClaudeCode),
            "codex" => Ok(Agent::Codex),
            "plain" => Ok(Agent::Plain),
            other => Err(format!("unknown agent {other:?}: claude-code, codex or plain")),
        }
    }
}

/// One turn of a conversation, whoever wrote the transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    pub agent: Agent,
    pub session: Option<String>,
    pub file: String,
    /// The turn's lines in the file, from 1, inclusive (an assistant message Claude Code wrote
    /// one block a line spans several).
    pub line: u32,
    pub last_line: u32,
    /// The byte just after the turn's last line: a file read to here holds the whole turn.
    pub end: u64,
    pub message_id: Option<String>,
    /// `user` or `assistant` (plain transcripts may name a speaker instead).
    pub role: String,
    pub timestamp: Option<Timestamp>,
    /// The words, as the reader found them (not yet cleaned: see [`clean::clean`]).
    pub text: String,
}

impl Turn {
    /// Whether the person (not the agent) said it.
    pub fn is_user(&self) -> bool {
        matches!(self.role.as_str(), "user" | "human")
    }
}

/// A line that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    pub line: u32,
    pub error: String,
}

/// What a reader made of a file.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    pub session: Option<String>,
    /// When the session started, when the transcript says (Codex's `session_meta`).
    pub session_time: Option<Timestamp>,
    /// The directory the agent worked in, when the transcript says.
    pub cwd: Option<String>,
    pub turns: Vec<Turn>,
    /// Records that gave no turn, by what they were (`tool_result`, `thinking`, `unknown:foo`…).
    pub skipped: BTreeMap<String, u64>,
    pub malformed: Vec<Malformed>,
    /// Bytes read: whole lines only (a last line still being written is left).
    pub read_bytes: u64,
    /// Lines read.
    pub lines: u32,
}

impl Transcript {
    pub(crate) fn skip(&mut self, what: impl Into<String>) {
        *self.skipped.entry(what.into()).or_insert(0) += 1;
    }
}

/// One line of a JSON-lines file.
pub(crate) struct Line<'a> {
    /// From 1.
    pub number: u32,
    pub text: &'a str,
    /// The byte just after the line (and its newline).
    pub end: u64,
}

/// The whole lines of `bytes` (and a last one without its newline only when it parses: else it
/// is still being written), and the bytes they take. Blank lines are left out but counted.
pub(crate) fn lines(bytes: &[u8]) -> (Vec<Line<'_>>, u64, u32) {
    let mut out = Vec::new();
    let (mut at, mut number) = (0usize, 0u32);
    while at < bytes.len() {
        let (end, next, terminated) = match bytes[at..].iter().position(|&b| b == b'\n') {
            Some(i) => (at + i, at + i + 1, true),
            None => (bytes.len(), bytes.len(), false),
        };
        let raw = &bytes[at..end];
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if !terminated {
            let complete = std::str::from_utf8(raw).ok().is_some_and(|t| serde_json::from_str::<Value>(t).is_ok());
            if !complete {
                break;
            }
        }
        number += 1;
        if !raw.iter().all(u8::is_ascii_whitespace) {
            // Lossy text of an invalid line is only ever reported as malformed.
            let text: &str = match std::str::from_utf8(raw) {
                Ok(t) => t,
                Err(_) => "\u{fffd}",
            };
            out.push(Line { number, text, end: next as u64 });
        }
        at = next;
    }
    (out, at as u64, number)
}

/// A transcript read from `bytes` by one reader: its whole lines counted, and each that is a
/// JSON object handed to `record` with the transcript (any other is recorded as malformed).
pub(crate) fn records(
    bytes: &[u8],
    mut record: impl FnMut(&Line<'_>, serde_json::Map<String, Value>, &mut Transcript),
) -> Transcript {
    let mut t = Transcript::default();
    let (lines, read, count) = lines(bytes);
    t.read_bytes = read;
    t.lines = count;
    for line in &lines {
        if let Some(map) = object(line, &mut t) {
            record(line, map, &mut t);
        }
    }
    t
}

/// Parse one line as a JSON object, or record it as malformed.
fn object(line: &Line<'_>, t: &mut Transcript) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_str::<Value>(line.text) {
        Ok(Value::Object(map)) => Some(map),
        Ok(_) => {
            t.malformed.push(Malformed { line: line.number, error: "not a JSON object".into() });
            None
        }
        Err(e) => {
            t.malformed.push(Malformed { line: line.number, error: format!("not JSON: {e}") });
            None
        }
    }
}

/// A timestamp field: RFC 3339, or a date alone (midnight UTC).
pub(crate) fn time_of(value: Option<&Value>) -> Option<Timestamp> {
    parse_time(value?.as_str()?)
}

/// RFC 3339, or a date alone (`2025-06-01`: midnight UTC).
pub fn parse_time(text: &str) -> Option<Timestamp> {
    let s = text.trim();
    if let Ok(t) = Timestamp::parse_rfc3339(s) {
        return Some(t);
    }
    let date = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
    Some(Timestamp::from_micros(date.and_hms_opt(0, 0, 0)?.and_utc().timestamp_micros()))
}

/// The hash a file's progress records of the bytes read: a file whose first bytes hash otherwise
/// was rewritten.
pub fn prefix_hash(bytes: &[u8]) -> Hash {
    Hash(*blake3::hash(bytes).as_bytes())
}

fn put(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_be_bytes());
    h.update(bytes);
}

/// The idempotency key of a chunk's progress event: the same chunk committed at the same place of
/// the same file is one event.
pub fn progress_key(p: &TranscriptProgressed) -> String {
    let mut h = blake3::Hasher::new_derive_key("memledger 2026-12-02 transcript progress key v1");
    put(&mut h, p.file.as_bytes());
    h.update(&p.offset.to_be_bytes());
    h.update(&p.prefix_hash.0);
    h.update(&p.chunk_hash.0);
    format!("transcript:{}", h.finalize().to_hex())
}

/// The idempotency keys' stem of what a person asked to be remembered in one turn
/// (`--explicit-only`): the transcript's identity and the turn's role, time and words.
pub fn explicit_key(identity: &str, turn: &Turn) -> String {
    let mut h = blake3::Hasher::new_derive_key("memledger 2026-12-02 explicit request v1");
    put(&mut h, identity.as_bytes());
    put(&mut h, turn.role.as_bytes());
    h.update(&turn.timestamp.map_or(i64::MIN, |t| t.micros()).to_be_bytes());
    put(&mut h, turn.text.as_bytes());
    format!("import-explicit:{}", h.finalize().to_hex())
}

pub(crate) fn str_of<'a>(map: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// Read `bytes` of `file` as a transcript of `agent`.
pub fn read(agent: Agent, file: &str, bytes: &[u8]) -> Transcript {
    let mut t = match agent {
        Agent::ClaudeCode => claude::read(file, bytes),
        Agent::Codex => codex::read(file, bytes),
        Agent::Plain => plain::read(file, bytes),
    };
    for turn in &mut t.turns {
        if turn.session.is_none() {
            turn.session.clone_from(&t.session);
        }
    }
    t
}

/// Which agent wrote a transcript, from its first records; `None` when none of the readers knows
/// it.
pub fn detect(bytes: &[u8]) -> Option<Agent> {
    let (lines, _, _) = lines(&bytes[..bytes.len().min(64 * 1024)]);
    for line in lines.iter().take(20) {
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(line.text) else { continue };
        let kind = str_of(&map, "type").unwrap_or_default();
        if map.contains_key("sessionId") || (matches!(kind, "user" | "assistant") && map.contains_key("message")) {
            return Some(Agent::ClaudeCode);
        }
        if matches!(kind, "session_meta" | "response_item" | "event_msg" | "turn_context")
            || map.contains_key("record_type")
            || (map.contains_key("id") && map.contains_key("instructions"))
        {
            return Some(Agent::Codex);
        }
        if (map.contains_key("role") || map.contains_key("speaker"))
            && (map.contains_key("text") || map.contains_key("content"))
        {
            return Some(Agent::Plain);
        }
        if kind == "summary" || kind == "file-history-snapshot" {
            return Some(Agent::ClaudeCode);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_last_line_still_being_written_is_left_for_later() {
        let bytes = b"{\"a\":1}\n\n{\"b\":2}\n{\"c\":";
        let (lines, read, count) = lines(bytes);
        assert_eq!(lines.iter().map(|l| l.number).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(read, 17);
        assert_eq!(count, 3);
        // A complete last line without its newline is read.
        let (lines, read, _) = super::lines(b"{\"a\":1}\n{\"b\":2}");
        assert_eq!((lines.len(), read), (2, 15));
    }

    #[test]
    fn agents_are_told_apart_by_their_first_records() {
        let claude = br#"{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}}"#;
        let codex = br#"{"timestamp":"2025-09-01T10:00:00Z","type":"session_meta","payload":{"id":"x"}}"#;
        let legacy = br#"{"id":"x","timestamp":"2025-04-01T10:00:00Z","instructions":null}"#;
        let plain = br#"{"role":"user","text":"hi","timestamp":"2025-01-01T00:00:00Z"}"#;
        assert_eq!(detect(claude), Some(Agent::ClaudeCode));
        assert_eq!(detect(codex), Some(Agent::Codex));
        assert_eq!(detect(legacy), Some(Agent::Codex));
        assert_eq!(detect(plain), Some(Agent::Plain));
        assert_eq!(detect(b"{\"x\":1}"), None);
    }
}
