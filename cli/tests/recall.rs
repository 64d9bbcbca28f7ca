//! `memledger recall` end to end: the JSON fields of docs/cli.md, the notice, the human output.

use serde_json::Value;

use crate::support::{json, run};

#[test]
fn recall_json_fields_and_notice() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let pg16 = json(dir, &["save", "The billing service runs on Postgres 16", "--scope", "team:payments"]);
    let pg17 = json(dir, &["save", "The billing service runs on Postgres 17", "--scope", "team:payments"]);
    assert_eq!(pg17["outcome"], "conflict");
    json(dir, &["save", "Deploy billing on Thursdays", "--type", "procedure", "--scope", "team:payments"]);
    json(dir, &["save", "Postgres upgrades need a maintenance window", "--scope", "team:platform"]);

    let r = json(
        dir,
        &["recall", "which postgres version does billing run?", "--scope", "team:payments", "--type", "fact"],
    );
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for hit in results {
        for field in ["memory_id", "text", "type", "scope", "score", "conflicts_with"] {
            assert!(hit.get(field).is_some(), "field {field} in {hit}");
        }
        assert_eq!(hit["type"], "fact");
        assert_eq!(hit["scope"], "team:payments");
        assert!(hit["score"].as_f64().unwrap() > 0.0);
        assert_eq!(hit["memory_id"].as_str().unwrap().len(), 32, "full ids in JSON");
    }
    assert_eq!(results[0]["memory_id"], pg17["memory_id"], "equal scores: newest first");
    assert_eq!(results[0]["conflicts_with"], serde_json::json!([pg16["memory_id"]]));
    assert_eq!(
        r["notice"],
        "Some of these memories conflict with each other. Ask the user which is current instead of asserting either."
    );

    let calm = json(dir, &["recall", "deploy", "--limit", "1"]);
    assert_eq!(calm["results"].as_array().unwrap().len(), 1);
    assert_eq!(calm["results"][0]["type"], "procedure");
    assert_eq!(calm["notice"], Value::Null);

    let words = json(dir, &["recall", "foo AND ("]);
    assert_eq!(words["results"], serde_json::json!([]));
    assert_eq!(words["notice"], Value::Null);

    let human = run(dir, &["recall", "postgres billing", "--scope", "team:payments"]);
    assert!(human.status.success());
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(text.lines().next().unwrap().starts_with('!'), "{text}");
    assert!(text.trim_end().ends_with("instead of asserting either."), "{text}");

    let bad = run(dir, &["recall", "postgres", "--type", "rumour"]);
    assert_eq!(bad.status.code(), Some(2));
    let huge = run(dir, &["recall", "postgres", "--limit", "100001"]);
    assert_eq!(huge.status.code(), Some(2), "a limit above 100000 is refused");
    assert!(String::from_utf8_lossy(&huge.stderr).contains("--limit must be at most 100000"));
    let rebuilt = json(dir, &["rebuild", "--view", "text"]);
    assert_eq!(rebuilt["views"], serde_json::json!(["text"]));
}
