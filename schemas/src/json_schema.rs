//! The JSON Schema of an exported event line, generated from the types the line is serialised
//! from ([`Event`] and its body), so that the schema cannot drift from what `export` writes.
//!
//! The schema is kept in the repository at [`EVENT_LINE_SCHEMA`] for readers and other tools;
//! a test regenerates it and compares it byte for byte (`MEMLEDGER_BLESS=1` rewrites it, see
//! schemas/tests/golden.rs). Object keys are written in sorted order, whatever order the
//! generator kept them in.

use serde_json::{Map, Value};

use crate::event::Event;

/// Where the generated schema is kept, relative to this crate's directory.
pub const EVENT_LINE_SCHEMA: &str = "json/event-line.schema.json";
/// The schema's `$id`: bumped when a line's shape changes incompatibly.
pub const EVENT_LINE_SCHEMA_ID: &str = "memledger/event-line/1";

/// The schema of one exported line, as pretty-printed JSON with a final newline.
pub fn event_line_schema() -> String {
    let mut schema = schemars::schema_for!(Event);
    schema.insert("$id".into(), EVENT_LINE_SCHEMA_ID.into());
    schema.insert("title".into(), "memledger exported event (one JSON line)".into());
    let mut text = serde_json::to_string_pretty(&sorted(schema.to_value())).unwrap_or_default();
    text.push('\n');
    text
}

/// `value` with every object's keys in sorted order.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}
