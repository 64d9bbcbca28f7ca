//! Recall quality, measured: the 404 memories of `consistent_stream.jsonl` are saved, then each
//! question of `recall_questions.jsonl` (written the way a user or an agent asks, not copied from
//! the memory) is asked in its scope. recall@5 is the fraction of questions whose expected memory
//! (or, where the fixture lists them under `also`, an active paraphrase stating the same answer)
//! is among the first five results. The figure is printed and recorded in docs/quality.md; the
//! assertion is a floor set below what is measured, so a regression fails and noise does not.
//!
//! Run: `cargo test --release -p memledger-tests --test main -- recall_quality --nocapture`

use memledger_engine::{Memledger, OpenOptions, SaveRequest};
use memledger_schemas::Status;
use serde_json::Value;

use crate::manifest_dir;

const FLOOR: f64 = 0.80;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/fixtures/{name}", manifest_dir().display())).unwrap()
}

#[test]
fn recall_at_5_over_the_consistent_stream() {
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    for line in fixture("consistent_stream.jsonl").lines() {
        let req: SaveRequest = serde_json::from_str(line).unwrap();
        ml.save(req, "agent:replay").unwrap();
    }

    let questions: Vec<Value> =
        fixture("recall_questions.jsonl").lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(questions.len() >= 40, "about 40 questions");
    let mut found = 0usize;
    let mut misses = Vec::new();
    for q in &questions {
        let (question, scope, expected) =
            (q["question"].as_str().unwrap(), q["scope"].as_str().unwrap(), q["expected"].as_str().unwrap());
        let active = ml.list(None, Some(scope), Some(Status::Active), usize::MAX).unwrap();
        // The expected memory, and any other active memory that states the same answer in other
        // words (a paraphrase the pipeline kept as a separate belief): each must exist.
        let also = q.get("also").and_then(Value::as_array).cloned().unwrap_or_default();
        let answers: Vec<_> = std::iter::once(expected)
            .chain(also.iter().map(|a| a.as_str().unwrap()))
            .map(|text| {
                active
                    .iter()
                    .find(|m| m.text == text)
                    .unwrap_or_else(|| panic!("fixture: no active memory in {scope} reads {text:?}"))
                    .memory_id
            })
            .collect();
        let answer = ml.recall(question, None, Some(scope), 5).unwrap();
        match answer.results.iter().position(|r| answers.contains(&r.memory_id)) {
            Some(_) => found += 1,
            None => misses.push(format!(
                "  {question:?} ({scope}) → {:?}",
                answer.results.iter().map(|r| r.text.as_str()).collect::<Vec<_>>()
            )),
        }
    }
    let recall_at_5 = found as f64 / questions.len() as f64;
    println!("recall@5 = {recall_at_5:.3} ({found}/{} questions)", questions.len());
    for m in &misses {
        println!("missed:{m}");
    }

    let rebuilt = ml.rebuild_text_index().unwrap();
    println!(
        "text index rebuild: {} active memories in {:.1} ms ({:.0} docs/s)",
        rebuilt.docs,
        rebuilt.elapsed.as_secs_f64() * 1e3,
        rebuilt.docs_per_sec()
    );
    assert!(recall_at_5 >= FLOOR, "recall@5 {recall_at_5:.3} fell below {FLOOR}");
}
