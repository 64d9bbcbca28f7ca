//! Each tool's `outputSchema`: the document the tool answers with, as the HTTP API's contract
//! ([`crate::contract`], the OpenAPI document's components) describes it, made one JSON Schema
//! with the definitions it refers to inline under `$defs`. A client then checks a tool's
//! `structuredContent` against the same promise the HTTP API makes, and the two cannot drift.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use rmcp::model::JsonObject;
use serde_json::{Map, Value};

const COMPONENTS: &str = "#/components/schemas/";
const DEFS: &str = "#/$defs/";

/// The contract's schemas by name, their references pointing into `$defs`.
fn components() -> &'static Map<String, Value> {
    static SCHEMAS: OnceLock<Map<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let (_, openapi) = crate::http::api();
        let mut document = serde_json::to_value(&openapi).unwrap_or_default();
        let mut schemas = document.pointer_mut("/components/schemas").map(Value::take).unwrap_or_default();
        point_into_defs(&mut schemas);
        match schemas {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    })
}

fn point_into_defs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if key == "$ref" => {
                        if let Some(name) = s.strip_prefix(COMPONENTS) {
                            *s = format!("{DEFS}{name}");
                        }
                    }
                    _ => point_into_defs(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(point_into_defs),
        _ => {}
    }
}

/// The names `value` refers to.
fn references(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match v {
                    Value::String(s) if key == "$ref" => {
                        if let Some(name) = s.strip_prefix(DEFS) {
                            out.push(name.to_string());
                        }
                    }
                    _ => references(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| references(v, out)),
        _ => {}
    }
}

/// The output schema of a tool answering with the contract's document `name` (`SaveDoc`,
/// `RecallDoc`, …): that schema, an object, with every definition it reaches under `$defs`.
pub fn output(name: &str) -> Arc<JsonObject> {
    let defs = components();
    let Some(Value::Object(root)) = defs.get(name).cloned() else {
        // A name the contract lacks is a programming error the MCP tests catch (tools/list
        // shows an open object): never a panic in a server.
        let mut open = JsonObject::new();
        open.insert("type".into(), Value::String("object".into()));
        return Arc::new(open);
    };
    let mut reached = BTreeSet::new();
    let mut todo = Vec::new();
    references(&Value::Object(root.clone()), &mut todo);
    while let Some(next) = todo.pop() {
        if reached.insert(next.clone())
            && let Some(schema) = defs.get(&next)
        {
            references(schema, &mut todo);
        }
    }
    let mut schema = root;
    if !reached.is_empty() {
        let inline: Map<String, Value> =
            reached.into_iter().filter_map(|n| defs.get(&n).map(|s| (n, s.clone()))).collect();
        schema.insert("$defs".into(), Value::Object(inline));
    }
    Arc::new(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_of_an_output_schema_is_defined_in_it() {
        for name in ["SaveDoc", "RecallDoc", "HistoryDoc", "WhyDoc", "ConflictsDoc", "ResolveDoc", "EraseDoc"] {
            let schema = output(name);
            assert_eq!(schema.get("type"), Some(&Value::String("object".into())), "{name}");
            assert!(schema.contains_key("properties"), "{name} is the contract's schema, not a stand-in");
            let mut refs = Vec::new();
            references(&Value::Object((*schema).clone()), &mut refs);
            let defs = schema.get("$defs").and_then(Value::as_object);
            for r in refs {
                assert!(defs.is_some_and(|d| d.contains_key(&r)), "{name} refers to {r}, which it does not define");
            }
            let text = serde_json::to_string(&*schema).unwrap();
            assert!(!text.contains(COMPONENTS), "{name} still points into the OpenAPI document");
        }
    }
}
