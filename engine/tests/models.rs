//! Models over HTTP against a scripted server on 127.0.0.1: LLM classification and its
//! fallbacks, the conflict judge, the contradiction scan and embedding candidates.

use std::path::Path;
use std::time::Duration;

use crate::support::mock_http::{self, MockServer, Reply};
use crate::support::req;
use memledger_engine::models::{Endpoint, ModelConfig, PromptSettings};
use memledger_engine::reads::Decision;
use memledger_engine::scan::ScanOptions;
use memledger_engine::*;
use memledger_schemas::*;
use serde_json::Value;

const MODEL: &str = "test-model";
const ACTOR: &str = "cli:test";

fn llm(url: &str) -> ModelConfig {
    ModelConfig {
        llm: Some(Endpoint::new(url, MODEL).with_timeout(Duration::from_millis(500)).with_api_key("sk-test")),
        ..ModelConfig::none()
    }
}

fn open(dir: &Path, models: ModelConfig) -> Memledger {
    let config = EngineConfig { models, ..EngineConfig::default() };
    Memledger::open_with(dir, &OpenOptions::default(), config).unwrap()
}

fn no_dedup(text: &str) -> SaveRequest {
    SaveRequest { text: text.into(), no_dedup: true, ..SaveRequest::default() }
}

/// The classifications of the pair (new, old).
fn why(ml: &Memledger, a: MemoryId, b: MemoryId) -> Vec<Decision> {
    ml.why(a, Some(b)).unwrap()
}

/// Rebuilt views equal the incremental ones and verify is ok.
fn assert_consistent(ml: &Memledger) {
    let dump = |ml: &Memledger| -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        ml.views().names().iter().map(|n| ml.views().dump(ml.ledger(), n).unwrap()).collect()
    };
    let before = dump(ml);
    ml.rebuild(None, &mut |_| {}).unwrap();
    assert_eq!(dump(ml), before);
    assert!(ml.verify().unwrap().views_consistent);
}

const FLY: &str = "the deploy target for the web app is fly.io";
const RAILWAY: &str = "the web app deploys to railway";

#[test]
fn a_contradictory_verdict_opens_a_conflict_whose_why_shows_the_model() {
    let server = mock_http::start(|_| {
        mock_http::chat(r#"{"relation": "contradictory", "reason": "the deploy target moved from fly.io to railway"}"#)
    });
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), llm(&server.url));
    let old = ml.save(req(FLY), ACTOR).unwrap();
    assert_eq!(server.hits(), 0, "nothing to compare with: no call");
    let new = ml.save(req(RAILWAY), ACTOR).unwrap();
    assert_eq!(new.outcome, Outcome::Conflict, "lexically unrelated, contradictory by the model");
    assert_eq!(server.hits(), 1);

    let d = why(&ml, new.memory_id, old.memory_id);
    assert_eq!(d.len(), 1);
    let d = &d[0];
    assert_eq!((d.method, d.relation, d.gate.as_str()), (Method::Llm, Relation::Contradictory, "llm"));
    let m = d.model.as_ref().expect("the model's answer is recorded");
    assert_eq!(m.model, MODEL);
    assert_eq!(m.relation, Some(Relation::Contradictory));
    assert_eq!(m.reason.as_deref(), Some("the deploy target moved from fly.io to railway"));
    assert!(m.raw.as_deref().unwrap().contains("contradictory"));
    assert_eq!(m.error, None);
    assert!(d.reason.contains("fly.io to railway") && d.reason.contains("lexical: unrelated"), "{}", d.reason);
    // The lexical scores are computed and recorded too.
    assert!(d.scores.contains_key("jaccard") && d.scores.contains_key("score"), "{:?}", d.scores);

    // The conflict carries the model's reason.
    let c = ml.conflict_record(new.conflict_id.unwrap()).unwrap();
    assert!(c.candidates[0].reason.contains("fly.io to railway"));

    // The prompt: both texts, their types and times, and the key.
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(seen.authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(seen.body["model"], MODEL);
    let prompt = seen.user_message();
    for needle in [FLY, RAILWAY, "type: fact", "recorded: 20", "effective: not stated"] {
        assert!(prompt.contains(needle), "{needle:?} in {prompt}");
    }
    assert!(seen.body["messages"][0]["content"].as_str().unwrap().contains("identical|complementary|contradictory"));
    assert_consistent(&ml);
}

#[test]
fn identical_and_complementary_verdicts_decide_too() {
    let server = mock_http::start(|seen| {
        if seen.user_message().contains("railway") {
            mock_http::chat(r#"{"relation": "identical", "reason": "same target"}"#)
        } else {
            mock_http::chat(r#"{"relation": "complementary", "reason": "both true"}"#)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), llm(&server.url));
    let old = ml.save(req(FLY), ACTOR).unwrap();
    let new = ml.save(req(RAILWAY), ACTOR).unwrap();
    assert_eq!(new.outcome, Outcome::Versioned);
    assert_eq!(new.root_id, old.root_id);
    let port = ml.save(req("the staging database port is 5432"), ACTOR).unwrap();
    let other = ml.save(req("the staging database port is 5433"), ACTOR).unwrap();
    assert_eq!(other.outcome, Outcome::Added, "the model's complementary wins over the lexical value mismatch");
    let d = &why(&ml, other.memory_id, port.memory_id)[0];
    assert_eq!((d.method, d.relation), (Method::Llm, Relation::Complementary));
    assert!(d.reason.contains("lexical: contradictory by value_mismatch"), "{}", d.reason);
}

/// Every misbehaviour: the save succeeds with the lexical verdict and `why` shows the fallback.
fn assert_falls_back(server_url: &str, expect_error: &str) -> Vec<Decision> {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), llm(server_url));
    let old = ml.save(req("the staging database port is 5432"), ACTOR).unwrap();
    let new = ml.save(req("the staging database port is 5433"), ACTOR).unwrap();
    assert_eq!(new.outcome, Outcome::Conflict, "the lexical verdict decided");
    let decisions = why(&ml, new.memory_id, old.memory_id);
    let d = &decisions[0];
    assert_eq!((d.method, d.relation, d.gate.as_str()), (Method::Lexical, Relation::Contradictory, "value_mismatch"));
    let m = d.model.as_ref().expect("the failed call is recorded");
    assert_eq!((m.model.as_str(), m.relation), (MODEL, None));
    let error = m.error.as_deref().unwrap();
    assert!(error.contains(expect_error) && error.contains("lexical verdict was used"), "{error}");
    assert_consistent(&ml);
    decisions
}

#[test]
fn garbage_falls_back_to_the_lexical_verdict() {
    let server = mock_http::start(|_| mock_http::chat("I think they are probably the same, yes."));
    let d = assert_falls_back(&server.url, "unusable answer");
    assert_eq!(d[0].model.as_ref().unwrap().raw.as_deref(), Some("I think they are probably the same, yes."));
    let server = mock_http::start(|_| mock_http::chat(r#"{"relation": "maybe"}"#));
    assert_falls_back(&server.url, "unknown relation");
    let server = mock_http::start(|_| Reply::Status(200, "<html>not json</html>".into()));
    assert_falls_back(&server.url, "malformed answer");
}

#[test]
fn http_errors_are_retried_once_then_fall_back() {
    let server = mock_http::start(|_| Reply::Status(500, r#"{"error": "overloaded"}"#.into()));
    assert_falls_back(&server.url, "HTTP 500");
    assert_eq!(server.hits(), 2, "one retry");
    let server = mock_http::start(|_| Reply::Status(401, r#"{"error": "bad key"}"#.into()));
    assert_falls_back(&server.url, "HTTP 401");
    assert_eq!(server.hits(), 1, "a client error is not retried");
}

#[test]
fn a_slow_model_times_out_and_falls_back() {
    let server = mock_http::start(|_| Reply::Slow(Duration::from_secs(5), "{}".into()));
    assert_falls_back(&server.url, "timed out");
    assert_eq!(server.hits(), 1, "a timeout is not retried");
}

#[test]
fn a_closed_port_or_a_dropped_connection_falls_back() {
    assert_falls_back(&mock_http::closed_port(), "connection failed");
    let server = mock_http::start(|_| Reply::Hang);
    assert_falls_back(&server.url, "connection failed");
}

#[test]
fn candidates_are_asked_concurrently_one_call_each() {
    // Every call waits until three are in flight at once: only concurrent calls can all answer.
    use std::sync::{Arc, Barrier};
    let barrier = Arc::new(Barrier::new(3));
    let server = mock_http::start(move |_| {
        barrier.wait();
        mock_http::chat(r#"{"relation": "complementary", "reason": "different hosts"}"#)
    });
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), ModelConfig::none());
    for t in ["the build server runs ubuntu", "the mail server runs debian", "the file server runs fedora"] {
        ml.save(req(t), ACTOR).unwrap();
    }
    drop(ml);
    let mut config = llm(&server.url);
    config.llm = config.llm.map(|e| e.with_timeout(Duration::from_secs(30)));
    let ml = open(dir.path(), config);
    let r = ml.save(req("the print server runs arch"), ACTOR).unwrap();
    assert_eq!(r.outcome, Outcome::Added);
    assert_eq!(server.hits(), 3);
    let d = ml.why(r.memory_id, None).unwrap();
    assert_eq!(d.len(), 3);
    assert!(d.iter().all(|d| d.method == Method::Llm && d.model.as_ref().unwrap().error.is_none()));
}

#[test]
fn without_a_model_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), ModelConfig::none());
    ml.save(req("the staging database port is 5432"), ACTOR).unwrap();
    let r = ml.save(req("the staging database port is 5433"), ACTOR).unwrap();
    assert_eq!(r.outcome, Outcome::Conflict);
    let d = ml.why(r.memory_id, None).unwrap();
    assert!(d.iter().all(|d| d.model.is_none() && d.method == Method::Lexical));
    let e = ml.judge_pending(false, ACTOR).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("MEMLEDGER_LLM_URL"), "{e}");
}

/// Three lexical conflicts, opened without a model.
fn three_conflicts(dir: &Path) -> Vec<(SaveResult, SaveResult)> {
    let ml = open(dir, ModelConfig::none());
    let pairs = [
        ("alpha service runs on port 8080", "alpha service runs on port 9090"),
        ("beta cluster uses 3 replicas", "beta cluster uses 5 replicas"),
        ("gamma queue is hosted in frankfurt", "gamma queue is not hosted in frankfurt"),
    ];
    pairs
        .iter()
        .map(|(a, b)| {
            let old = ml.save(req(a), ACTOR).unwrap();
            let new = ml.save(req(b), ACTOR).unwrap();
            assert_eq!(new.outcome, Outcome::Conflict, "{b}");
            (old, new)
        })
        .collect()
}

fn judge_server() -> MockServer {
    mock_http::start(|seen| {
        let prompt = seen.user_message();
        if prompt.contains("alpha") {
            mock_http::chat(r#"{"verdict": "keep_new", "reason": "the port was changed later"}"#)
        } else if prompt.contains("beta") {
            mock_http::chat(r#"{"verdict": "unsure", "reason": "recorded moments apart"}"#)
        } else {
            mock_http::chat(r#"{"verdict": "keep_both", "reason": "different queues"}"#)
        }
    })
}

fn show_json(ml: &Memledger, id: MemoryId) -> Value {
    serde_json::to_value(ml.show(id).unwrap()).unwrap()
}

#[test]
fn the_judge_resolves_decisive_verdicts_leaves_unsure_pending_and_revert_undoes_it() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = three_conflicts(dir.path());
    let server = judge_server();
    let ml = open(dir.path(), llm(&server.url));
    let (alpha_old, alpha_new) = &pairs[0];
    let before = (show_json(&ml, alpha_old.memory_id), show_json(&ml, alpha_new.memory_id));
    let edges_before = ml.history(alpha_old.memory_id).unwrap().edges;

    // A dry run asks, and writes nothing.
    let head = ml.ledger().head().seq;
    let dry = ml.judge_pending(true, ACTOR).unwrap();
    assert_eq!((dry.judged, dry.resolved, dry.left_pending), (3, 2, 1));
    assert!(dry.conflicts.iter().all(|c| c.seqs.is_empty()));
    assert_eq!(ml.ledger().head().seq, head);
    assert_eq!(server.hits(), 3);

    let report = ml.judge_pending(false, ACTOR).unwrap();
    assert_eq!((report.resolved, report.left_pending, report.failed), (2, 1, 0));
    assert_eq!(report.by, "judge:test-model");
    // The prompt carries times and sources.
    let prompt = server.seen()[3].user_message();
    assert!(prompt.contains("NEW memory") && prompt.contains("EXISTING memory 1") && prompt.contains("recorded: 20"));
    assert!(prompt.contains("source: not stated"));
    assert!(server.seen()[3].body["messages"][0]["content"].as_str().unwrap().contains("Prefer unsure"));

    let verdict_of = |cid: ConflictId| report.conflicts.iter().find(|c| c.conflict_id == cid).unwrap();
    let alpha = ml.conflict_record(alpha_new.conflict_id.unwrap()).unwrap();
    assert_eq!(alpha.status, ConflictStatus::Resolved);
    let r = alpha.resolution.as_ref().unwrap();
    assert_eq!((r.action, r.by.as_str()), (ResolutionAction::KeepNew, "judge:test-model"));
    assert_eq!(r.rationale.as_deref(), Some("the port was changed later"));
    assert_eq!(verdict_of(alpha.conflict_id).outcome, "resolved");
    assert_eq!(ml.show(alpha_old.memory_id).unwrap().status, Status::Stale);

    let beta = ml.conflict_record(pairs[1].1.conflict_id.unwrap()).unwrap();
    assert_eq!(beta.status, ConflictStatus::Pending, "unsure stays pending");
    assert_eq!(verdict_of(beta.conflict_id).outcome, "left_pending");
    let gamma = ml.conflict_record(pairs[2].1.conflict_id.unwrap()).unwrap();
    assert_eq!(gamma.resolution.as_ref().unwrap().action, ResolutionAction::KeepBoth);

    // Revert undoes the judge's resolution exactly.
    ml.revert(alpha.conflict_id, ACTOR).unwrap();
    assert_eq!(ml.conflict_record(alpha.conflict_id).unwrap().status, ConflictStatus::Pending);
    let after = (show_json(&ml, alpha_old.memory_id), show_json(&ml, alpha_new.memory_id));
    assert_eq!(after, before);
    assert_eq!(ml.history(alpha_old.memory_id).unwrap().edges, edges_before);
    assert_consistent(&ml);

    // A second run judges only what is pending (alpha again, beta again).
    let again = ml.judge_pending(false, ACTOR).unwrap();
    assert_eq!(again.judged, 2);
}

#[test]
fn a_failing_judge_leaves_conflicts_pending() {
    let dir = tempfile::tempdir().unwrap();
    three_conflicts(dir.path());
    let server = mock_http::start(|seen| {
        if seen.user_message().contains("alpha") {
            Reply::Status(503, "down".into())
        } else {
            mock_http::chat("keep_new, obviously")
        }
    });
    let ml = open(dir.path(), llm(&server.url));
    let head = ml.ledger().head().seq;
    let report = ml.judge_pending(false, ACTOR).unwrap();
    assert_eq!((report.resolved, report.failed), (0, 3));
    assert!(report.conflicts.iter().all(|c| c.error.is_some() && c.verdict.is_none()));
    assert_eq!(ml.ledger().head().seq, head, "nothing written");
}

#[test]
fn the_scan_finds_a_contradiction_saved_without_dedup_and_never_reflags_keep_both() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), ModelConfig::none());
    let a = ml.save(no_dedup("the staging database port is 5432"), ACTOR).unwrap();
    let b = ml.save(no_dedup("the staging database port is 5433"), ACTOR).unwrap();
    ml.save(no_dedup("the office plants need water on mondays"), ACTOR).unwrap();
    assert_eq!(b.outcome, Outcome::Added);
    assert!(ml.conflicts(None).unwrap().is_empty());

    let head = ml.ledger().head().seq;
    let dry = ml.scan_conflicts(&ScanOptions { dry_run: true, ..ScanOptions::default() }, ACTOR).unwrap();
    assert_eq!((dry.detected, dry.opened, dry.method), (1, 0, Method::Lexical));
    assert_eq!(ml.ledger().head().seq, head, "a dry run writes nothing");

    let report = ml.scan_conflicts(&ScanOptions::default(), ACTOR).unwrap();
    assert_eq!((report.detected, report.opened), (1, 1));
    let found = report.pairs.iter().find(|p| p.outcome == "opened").unwrap();
    assert_eq!((found.incoming, found.candidate), (b.memory_id, a.memory_id), "the later memory is the new side");
    let cid = found.conflict_id.unwrap();
    let c = ml.conflict_record(cid).unwrap();
    assert_eq!((c.incoming, c.candidates[0].memory_id), (b.memory_id, a.memory_id));
    let d = why(&ml, b.memory_id, a.memory_id);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].relation, d[0].outcome), (Relation::Contradictory, PairOutcome::ConflictOpened));
    assert!(d[0].reason.starts_with("found by conflicts scan"));
    assert!(ml.show(a.memory_id).unwrap().conflicts_with.contains(&b.memory_id));

    // Pending: recorded, not flagged again.
    let again = ml.scan_conflicts(&ScanOptions::default(), ACTOR).unwrap();
    assert_eq!((again.opened, again.skipped_recorded), (0, 1));
    // keep_both: never re-flagged, and a revert of it neither.
    ml.resolve(cid, ResolutionAction::KeepBoth, None, None, ACTOR).unwrap();
    let again = ml.scan_conflicts(&ScanOptions::default(), ACTOR).unwrap();
    assert_eq!((again.detected, again.opened, again.skipped_recorded), (0, 0, 1));
    assert_consistent(&ml);

    // The judge can settle a scanned conflict like any other.
    ml.revert(cid, ACTOR).unwrap();
    ml.resolve(cid, ResolutionAction::KeepNew, None, None, ACTOR).unwrap();
    assert_eq!(ml.show(a.memory_id).unwrap().status, Status::Stale);
}

#[test]
fn the_scan_asks_the_model_and_respects_min_confidence() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), ModelConfig::none());
    ml.save(no_dedup(FLY), ACTOR).unwrap();
    ml.save(no_dedup(RAILWAY), ACTOR).unwrap();
    drop(ml);
    let server = mock_http::start(|_| {
        mock_http::chat(r#"{"relation": "contradictory", "reason": "two deploy targets", "confidence": 0.6}"#)
    });
    let ml = open(dir.path(), llm(&server.url));
    let strict = ScanOptions { min_confidence: 0.9, ..ScanOptions::default() };
    let report = ml.scan_conflicts(&strict, ACTOR).unwrap();
    assert_eq!((report.method, report.detected, report.opened), (Method::Llm, 1, 0));
    assert_eq!(report.pairs[0].outcome, "below_confidence");
    assert_eq!(report.pairs[0].confidence, 0.6);
    let report = ml.scan_conflicts(&ScanOptions::default(), ACTOR).unwrap();
    assert_eq!(report.opened, 1);
    let p = &report.pairs[0];
    assert_eq!(p.model.as_ref().unwrap().reason.as_deref(), Some("two deploy targets"));
    let d = why(&ml, p.incoming, p.candidate);
    assert_eq!(d[0].method, Method::Llm);
    assert_eq!(d[0].scores.get("llm_confidence"), Some(&serde_json::json!(0.6)));
}

/// A toy embedder: one axis per topic word, so texts sharing no index term can still be close.
fn embed_server() -> MockServer {
    mock_http::start(|seen| {
        let inputs: Vec<String> =
            seen.body["input"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        let vectors: Vec<Vec<f32>> = inputs
            .iter()
            .map(|t| {
                let t = t.to_lowercase();
                let axis = |words: &[&str]| if words.iter().any(|w| t.contains(w)) { 1.0 } else { 0.0 };
                vec![axis(&["postgres", "database", "datastore"]), axis(&["cat", "pet"]), 0.1]
            })
            .collect();
        mock_http::embeddings(&vectors)
    })
}

fn with_embedder(url: &str, model: &str) -> ModelConfig {
    ModelConfig { embed: Some(Endpoint::new(url, model).with_timeout(Duration::from_secs(5))), ..ModelConfig::none() }
}

#[test]
fn embeddings_add_candidates_are_cached_and_survive_rebuilds() {
    let server = embed_server();
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), with_embedder(&server.url, "toy-embed"));
    // More memories than a save compares, so that candidates come from terms and the cosine
    // (a smaller scope is compared whole).
    let config = memledger_engine::EngineConfig::default();
    for i in 0..config.top_k {
        ml.save(req(&format!("note {i}: the greenhouse tomatoes want water")), ACTOR).unwrap();
    }
    let before = server.hits();
    let a = ml.save(req("our primary datastore is postgres"), ACTOR).unwrap();
    ml.save(req("the cat is a lazy pet"), ACTOR).unwrap();
    let b = ml.save(req("main database engine: mysql"), ACTOR).unwrap();
    assert_eq!(server.hits() - before, 3, "one embedding per new text");
    let d = why(&ml, b.memory_id, a.memory_id);
    assert_eq!(d.len(), 1, "no shared index term: found by cosine alone");
    let cosine = d[0].scores["cosine"].as_f64().unwrap();
    assert!(cosine >= 0.5, "{cosine}");
    assert_eq!(d[0].thresholds["cosine_min"], serde_json::json!(0.5));
    assert!(d[0].reason.contains("by toy-embed"), "{}", d[0].reason);
    assert!(ml.why(b.memory_id, None).unwrap().len() == 1, "the cat is not a candidate");

    // The same text again is answered from the cache; rebuilds never call the embedder.
    let hits = server.hits();
    ml.rebuild(None, &mut |_| {}).unwrap();
    ml.forget(a.memory_id, None, ACTOR).unwrap();
    let again = ml.save(req("our primary datastore is postgres"), ACTOR).unwrap();
    assert_eq!(again.outcome, Outcome::Added);
    assert_eq!(server.hits(), hits, "the vector came from the cache");
    drop(ml);

    // Another model: said at open; old vectors are never compared with the new model's.
    let ml = open(dir.path(), with_embedder(&server.url, "toy-embed-2"));
    assert!(ml.notes().iter().any(|n| n.contains("embedding model changed")), "{:?}", ml.notes());
    let c = ml.save(req("the datastore runs postgres 17"), ACTOR).unwrap();
    assert!(
        ml.why(c.memory_id, None).unwrap().iter().all(|d| !d.scores.contains_key("cosine")),
        "no vector of the new model yet"
    );
    let report = ml.embed_missing().unwrap();
    assert_eq!(report.model, "toy-embed-2");
    assert!(report.embedded >= 3, "{report:?}");
    assert_eq!(ml.embed_missing().unwrap().embedded, 0, "nothing left to embed");
}

#[test]
fn a_failing_embedder_falls_back_to_term_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), with_embedder(&mock_http::closed_port(), "toy-embed"));
    let a = ml.save(req("the staging database port is 5432"), ACTOR).unwrap();
    let b = ml.save(req("the staging database port is 5433"), ACTOR).unwrap();
    assert_eq!(b.outcome, Outcome::Conflict);
    let d = why(&ml, b.memory_id, a.memory_id);
    assert!(d[0].reason.contains("embedder toy-embed failed"), "{}", d[0].reason);
}

/// A scripted embedder with fixed vectors: the texts of one topic share a direction whatever
/// their words, everything else points elsewhere.
fn topic_server() -> MockServer {
    mock_http::embedder_of(|text| match text {
        PARAPHRASE_QUERY | "postgres datastore" => vec![1.0, 0.0, 0.0],
        "our primary datastore is postgres" => vec![0.9, 0.1, 0.0],
        "the blog keeps its posts in sqlite" => vec![0.7, 0.0, 0.3],
        "billing stores invoices in mysql" => vec![0.7, 0.3, 0.0],
        "prefer managed databases over self-hosted ones" => vec![0.8, 0.0, 0.2],
        _ => vec![0.0, 0.0, 1.0],
    })
}

/// Shares no index term with any stored text.
const PARAPHRASE_QUERY: &str = "which relational engine holds company data?";

fn scoped(text: &str, scope: &str, memory_type: &str) -> SaveRequest {
    SaveRequest {
        text: text.into(),
        scope: Some(scope.into()),
        memory_type: Some(memory_type.into()),
        no_dedup: true,
        ..SaveRequest::default()
    }
}

fn query_calls(server: &MockServer) -> usize {
    server.seen().iter().filter(|s| s.body["input"][0] == PARAPHRASE_QUERY).count()
}

#[test]
fn recall_fuses_bm25_with_cosine_and_finds_a_paraphrase() {
    let server = topic_server();
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), with_embedder(&server.url, "topic-embed"));
    let pg = ml.save(scoped("our primary datastore is postgres", "team:core", "fact"), ACTOR).unwrap().memory_id;
    let other_scope = ml.save(scoped("the blog keeps its posts in sqlite", "team:blog", "fact"), ACTOR).unwrap();
    let pref = ml
        .save(scoped("prefer managed databases over self-hosted ones", "team:core", "preference"), ACTOR)
        .unwrap()
        .memory_id;
    let gone = ml.save(scoped("billing stores invoices in mysql", "team:core", "fact"), ACTOR).unwrap().memory_id;
    ml.forget(gone, None, ACTOR).unwrap();
    let unrelated = ml.save(scoped("the office closes at six", "team:core", "fact"), ACTOR).unwrap().memory_id;
    // Saved with dedup off, so not embedded yet: the forgotten one is not active, so not embedded.
    let report = ml.embed_missing().unwrap();
    assert_eq!((report.active, report.missing, report.embedded), (4, 4, 4), "{report:?}");

    let r = ml.recall(PARAPHRASE_QUERY, Some(MemoryType::Fact), Some("team:core"), 10).unwrap();
    assert_eq!(r.ranking.as_ref(), "bm25+cosine");
    assert_eq!(r.embedding_error, None);
    let found: Vec<MemoryId> = r.results.iter().map(|h| h.memory_id).collect();
    assert_eq!(found, vec![pg], "active, in scope and type, above the cosine floor: {:?}", r.results);
    assert_eq!(r.results[0].bm25, None, "a cosine-only hit");
    assert!(r.results[0].cosine.unwrap() > 0.9);
    assert!(!found.contains(&other_scope.memory_id) && !found.contains(&pref) && !found.contains(&gone));
    assert!(!found.contains(&unrelated), "orthogonal: below the cosine floor");
    assert_eq!(query_calls(&server), 1, "the query is embedded once");

    // Without the filters the preference and the other scope come too; the forgotten one never.
    let all = ml.recall(PARAPHRASE_QUERY, None, None, 10).unwrap();
    let ids: Vec<MemoryId> = all.results.iter().map(|h| h.memory_id).collect();
    assert_eq!(ids, vec![pg, pref, other_scope.memory_id], "by cosine: {:?}", all.results);
    assert!(all.results.windows(2).all(|w| w[0].score >= w[1].score));

    // BM25 and cosine both: a hit in both rankings beats a hit in one.
    let both = ml.recall("postgres datastore", None, None, 10).unwrap();
    assert_eq!(both.ranking, "bm25+cosine");
    assert_eq!(both.results[0].memory_id, pg);
    assert!(both.results[0].bm25.is_some() && both.results[0].cosine.is_some());
    assert!(both.results.iter().all(|h| h.memory_id != gone));
    drop(ml);

    // Offline, the words find nothing.
    let ml = open(dir.path(), ModelConfig::none());
    let r = ml.recall(PARAPHRASE_QUERY, None, None, 10).unwrap();
    assert_eq!((r.ranking.as_ref(), r.results.len()), ("bm25", 0));
    drop(ml);

    // Only vectors of the configured model count: another model has none, so the query is
    // not even embedded.
    let before = server.hits();
    let ml = open(dir.path(), with_embedder(&server.url, "topic-embed-2"));
    let r = ml.recall(PARAPHRASE_QUERY, None, None, 10).unwrap();
    assert_eq!((r.ranking.as_ref(), r.results.len()), ("bm25", 0));
    assert_eq!(server.hits(), before, "no vectors of this model: no call");
    drop(ml);

    // An embedder that is down: BM25 alone, never an error.
    let ml = open(dir.path(), with_embedder(&mock_http::closed_port(), "topic-embed"));
    let r = ml.recall("postgres datastore", None, None, 10).unwrap();
    assert_eq!(r.ranking.as_ref(), "bm25");
    assert!(r.embedding_error.as_deref().unwrap().contains("embedder topic-embed failed"), "{r:?}");
    assert_eq!(r.results[0].memory_id, pg);
    assert_eq!(r.results[0].cosine, None);
}

#[test]
fn recall_as_of_uses_the_vectors_of_the_live_store() {
    let server = topic_server();
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), with_embedder(&server.url, "topic-embed"));
    let pg = ml.save(scoped("our primary datastore is postgres", "team:core", "fact"), ACTOR).unwrap();
    ml.embed_missing().unwrap();
    let before_forget = ml.ledger().head().seq;
    ml.forget(pg.memory_id, None, ACTOR).unwrap();
    assert!(ml.recall(PARAPHRASE_QUERY, None, None, 10).unwrap().results.is_empty());
    let hits = server.hits();
    let past = ml.as_of(Some(AsOf::Seq(before_forget))).unwrap();
    let r = past.recall(PARAPHRASE_QUERY, None, None, 10).unwrap();
    assert_eq!(r.ranking.as_ref(), "bm25+cosine");
    assert_eq!(r.results.iter().map(|h| h.memory_id).collect::<Vec<_>>(), vec![pg.memory_id]);
    assert_eq!(server.hits(), hits + 1, "only the query is embedded; the memory's vector was lent");
}

/// An embedder for the centred cosine: every "entry N" points along the scope's shared direction
/// (the first axis) with a little of the third or fourth, the query along the shared direction
/// with some of the second (its topic); "the harbour beacon" says the topic and less of the
/// shared direction, "the office" says nothing but the shared direction.
fn shared_direction_server() -> MockServer {
    mock_http::embedder_of(|text| match text {
        CENTRED_QUERY => vec![1.0, 0.2, 0.0, 0.0],
        "the harbour beacon was repainted" => vec![0.6, 0.5, 0.0, 0.0],
        "the office closes at six" => vec![1.0, 0.0, 0.05, 0.0],
        entry => {
            let n: usize = entry.trim_start_matches("entry ").parse().unwrap();
            let side = if n.is_multiple_of(2) { 0.1 } else { -0.1 };
            if n % 4 < 2 { vec![1.0, 0.0, side, 0.0] } else { vec![1.0, 0.0, 0.0, side] }
        }
    })
}

/// Shares no index term with any text of [`shared_direction_server`].
const CENTRED_QUERY: &str = "what about the lighthouse?";

/// Recall of a scope with `entries` memories besides the beacon and the office, by cosine alone
/// (the query matches no term): the results' texts and cosines.
fn centred_recall(entries: usize) -> Vec<(String, f64)> {
    let server = shared_direction_server();
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), with_embedder(&server.url, "shared-embed"));
    for text in ["the harbour beacon was repainted", "the office closes at six"] {
        ml.save(scoped(text, "site:port", "fact"), ACTOR).unwrap();
    }
    for n in 0..entries {
        ml.save(scoped(&format!("entry {n}"), "site:port", "fact"), ACTOR).unwrap();
    }
    ml.embed_missing().unwrap();
    let r = ml.recall(CENTRED_QUERY, None, Some("site:port"), 3).unwrap();
    assert_eq!(r.ranking.as_ref(), "bm25+cosine");
    assert!(r.results.iter().all(|h| h.bm25.is_none()), "the cosine alone ranks: {r:?}");
    r.results.into_iter().map(|h| (h.text, h.cosine.unwrap())).collect()
}

#[test]
fn the_cosine_ranking_centres_a_scope_on_what_its_memories_share() {
    // 38 memories: the mean is about the shared direction, and what is left of the query is its
    // topic, which the beacon has and the office and the entries have not.
    let centred = centred_recall(36);
    assert_eq!(centred[0].0, "the harbour beacon was repainted", "{centred:?}");
    // The cosine shown is of the vectors as embedded: the office's is higher, yet it ranks lower.
    let office = centred.iter().find(|(t, _)| t == "the office closes at six").map(|(_, c)| *c);
    assert!(office.is_none_or(|c| c > centred[0].1), "{centred:?}");
    assert!((centred[0].1 - 0.8786).abs() < 1e-3, "{centred:?}");
    // Below CENTRE_MIN_VECTORS the raw vectors are compared: the shared direction wins.
    let raw = centred_recall(8);
    assert_eq!(raw[0].0, "the office closes at six", "{raw:?}");
    assert!(raw.iter().all(|(t, _)| t != "the harbour beacon was repainted"), "last of ten: {raw:?}");
}

/// An embedder that points "passage: " texts and "query: " texts the same way when they say the
/// same, as E5 models are trained to: any other text (unprompted) points elsewhere.
fn e5_like_server() -> MockServer {
    mock_http::start(|seen| {
        let vectors: Vec<Vec<f32>> = seen.body["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                let t = v.as_str().unwrap();
                let prompted = t.starts_with("query: ") || t.starts_with("passage: ");
                let served = seen.body["input_type"].is_string();
                if (prompted || served) && t.contains("postgres") { vec![1.0, 0.0] } else { vec![0.0, 1.0] }
            })
            .collect();
        mock_http::embeddings(&vectors)
    })
}

fn inputs(server: &MockServer) -> Vec<(String, Option<String>)> {
    server
        .seen()
        .iter()
        .flat_map(|s| {
            let side = s.body["input_type"].as_str().map(str::to_string);
            s.body["input"].as_array().unwrap().iter().map(move |v| (v.as_str().unwrap().to_string(), side.clone()))
        })
        .collect()
}

#[test]
fn embedding_prompts_follow_the_model_family_and_a_changed_prompt_re_embeds_on_request() {
    let server = e5_like_server();
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), with_embedder(&server.url, "intfloat/multilingual-e5-small"));
    ml.save(scoped("our primary datastore is postgres", "team:core", "fact"), ACTOR).unwrap();
    let report = ml.embed_missing().unwrap();
    assert_eq!((report.document_prompt.as_str(), report.query_prompt.as_str()), ("passage: ", "query: "));
    let r = ml.recall("postgres", None, None, 5).unwrap();
    assert_eq!(r.ranking.as_ref(), "bm25+cosine");
    assert!(r.results[0].cosine.unwrap() > 0.99, "query and passage prompted alike: {r:?}");
    let sent = inputs(&server);
    assert!(sent.contains(&("passage: our primary datastore is postgres".into(), None)), "{sent:?}");
    assert!(sent.contains(&("query: postgres".into(), None)), "{sent:?}");
    drop(ml);

    // The server applies the prompts itself: the texts go as written, with their side.
    let served = ModelConfig {
        embed_prompts: PromptSettings { input_type: true, ..PromptSettings::default() },
        ..with_embedder(&server.url, "intfloat/multilingual-e5-small")
    };
    let ml = open(dir.path(), served.clone());
    assert!(ml.notes().iter().any(|n| n.contains("embedding model changed")), "{:?}", ml.notes());
    let r = ml.recall("postgres", None, None, 5).unwrap();
    assert_eq!((r.ranking.as_ref(), r.results[0].cosine), ("bm25", None), "no vector of the new prompt until embedded");
    let before = inputs(&server).len();
    assert_eq!(ml.embed_missing().unwrap().embedded, 1);
    let r = ml.recall("postgres", None, None, 5).unwrap();
    assert_eq!(r.ranking.as_ref(), "bm25+cosine");
    let sent = inputs(&server)[before..].to_vec();
    assert_eq!(
        sent,
        vec![
            ("our primary datastore is postgres".to_string(), Some("passage".to_string())),
            ("postgres".to_string(), Some("query".to_string()))
        ]
    );
    drop(ml);

    // A configured prompt replaces the family's; the old vectors stay, under their own key.
    let plain = ModelConfig {
        embed_prompts: PromptSettings { document: Some(String::new()), ..PromptSettings::default() },
        ..with_embedder(&server.url, "intfloat/multilingual-e5-small")
    };
    let ml = open(dir.path(), plain);
    assert_eq!(ml.embed_missing_with(true).unwrap().missing, 1);
    drop(ml);
    let ml = open(dir.path(), served);
    assert_eq!(ml.embed_missing_with(true).unwrap().missing, 0, "its vectors are still there");
}

fn with_reranker(url: &str) -> ModelConfig {
    ModelConfig {
        rerank: Some(Endpoint::new(url, "test-rerank").with_timeout(Duration::from_secs(5))),
        ..ModelConfig::none()
    }
}

/// A reranker that reads the question against each document as a cross-encoder would, here by
/// a rule: a document about the question's "copy" (a replica) is relevant, the rest less so the
/// longer they are. `bare` answers as text-embeddings-inference does (a list, `score`).
fn reranker(bare: bool) -> MockServer {
    let relevance = |_: &str, d: &str| if d.contains("replica") { 0.9 } else { 0.5 - d.len() as f64 / 1000.0 };
    if bare { mock_http::bare_reranker_of(relevance) } else { mock_http::reranker_of(relevance) }
}

#[test]
fn a_reranker_reorders_the_first_results_and_a_failing_one_leaves_them() {
    let dir = tempfile::tempdir().unwrap();
    let texts = [
        "postgres is our primary datastore and postgres holds the orders",
        "postgres backups run nightly",
        "a read replica of the database serves the reports",
        "the office closes at six",
    ];
    let ml = open(dir.path(), ModelConfig::none());
    for t in texts {
        ml.save(scoped(t, "team:core", "fact"), ACTOR).unwrap();
    }
    let question = "which postgres database copy serves the reports";
    let first = ml.recall(question, None, None, 10).unwrap();
    assert_eq!(first.ranking, "bm25");
    let first_order: Vec<String> = first.results.iter().map(|h| h.text.clone()).collect();
    assert_eq!(first_order.len(), 3, "the office matches no word: {first_order:?}");
    drop(ml);

    for bare in [false, true] {
        let server = reranker(bare);
        let ml = open(dir.path(), with_reranker(&server.url));
        let r = ml.recall(question, None, None, 10).unwrap();
        assert_eq!((r.ranking.as_ref(), r.rerank_error.as_deref()), ("bm25+rerank", None), "{r:?}");
        let order: Vec<&str> = r.results.iter().map(|h| h.text.as_str()).collect();
        assert_eq!(order, vec![texts[2], texts[1], texts[0]], "by relevance, the longer less: {r:?}");
        assert!(r.results.iter().all(|h| h.rerank.is_some() && h.bm25.is_some()), "{r:?}");
        // One request: the question and the first ranking's results, in its order.
        let seen = server.seen();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].body["texts"], seen[0].body["documents"], "texts too, for text-embeddings-inference");
        assert_eq!(seen[0].body["model"], "test-rerank");
        assert_eq!(seen[0].body["query"], question);
        assert_eq!(seen[0].body["documents"], serde_json::json!(first_order));

        // A limit below the reranked depth: the reranker still sees the first ranking's best
        // RERANK_DEPTH, so the one result is its choice, not BM25's.
        let one = ml.recall(question, None, None, 1).unwrap();
        assert_eq!(one.results.iter().map(|h| h.text.as_str()).collect::<Vec<_>>(), vec![texts[2]]);
        assert_eq!(server.seen()[1].body["documents"].as_array().unwrap().len(), 3);
        drop(ml);
    }

    // Down, or answering nonsense: the first ranking stands, and the answer says why.
    let nonsense =
        mock_http::start(|_| Reply::Status(200, r#"{"results": [{"index": 0, "relevance_score": 1.0}]}"#.into()));
    for (url, says) in
        [(mock_http::closed_port(), "connection failed"), (nonsense.url.clone(), "1 relevances for 3 documents")]
    {
        let ml = open(dir.path(), with_reranker(&url));
        let r = ml.recall(question, None, None, 10).unwrap();
        assert_eq!(r.ranking.as_ref(), "bm25");
        let error = r.rerank_error.as_deref().unwrap_or_default();
        assert!(error.contains("reranker test-rerank failed") && error.contains(says), "{error}");
        assert_eq!(r.results.iter().map(|h| h.text.clone()).collect::<Vec<_>>(), first_order);
        assert!(r.results.iter().all(|h| h.rerank.is_none()));
        drop(ml);
    }
}

#[test]
fn a_reranker_reorders_only_the_first_rerank_depth_of_a_longer_answer() {
    let server = reranker(false);
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path(), with_reranker(&server.url));
    let n = recall::RERANK_DEPTH + 5;
    for i in 0..n {
        ml.save(
            scoped(&format!("deploy note {i}: the deploy runs from ci{}", "x".repeat(i)), "team:core", "fact"),
            ACTOR,
        )
        .unwrap();
    }
    let r = ml.recall("deploy", None, None, n).unwrap();
    assert_eq!((r.ranking.as_ref(), r.results.len()), ("bm25+rerank", n));
    let (reranked, rest) = r.results.split_at(recall::RERANK_DEPTH);
    assert!(reranked.windows(2).all(|w| w[0].rerank >= w[1].rerank), "by relevance");
    assert!(rest.iter().all(|h| h.rerank.is_none()), "past the depth: the first ranking's order");
    assert!(rest.windows(2).all(|w| w[0].score >= w[1].score));
    assert_eq!(server.seen()[0].body["documents"].as_array().unwrap().len(), recall::RERANK_DEPTH);
}

#[test]
fn the_judge_within_a_token_budget_asks_only_what_it_covers_and_leaves_the_rest_pending() {
    let dir = tempfile::tempdir().unwrap();
    three_conflicts(dir.path());
    let server = judge_server();
    let ml = open(dir.path(), llm(&server.url));
    let owner = memledger_engine::Caller::owner(ACTOR.to_string());
    // No budget left: nothing is asked, every conflict waits for a later run.
    let none = ml.judge_pending_within(true, &owner, Some(0)).unwrap();
    assert_eq!((none.judged, none.left_for_budget), (0, 3));
    assert_eq!(server.hits(), 0);
    // A budget that covers one prompt (by its length at 4 bytes a token, and a 512-token answer).
    let one = ml.judge_pending_within(true, &owner, Some(1500)).unwrap();
    assert_eq!((one.judged, one.left_for_budget), (1, 2));
    assert_eq!(server.hits(), 1);
    // Each call's usage is counted for the principal that ran it, by the day.
    let (_, used) = memledger_engine::models::metered(|| ml.judge_pending_within(true, &owner, None).unwrap());
    assert_eq!(used.calls, 3, "a call with no usage in its answer still counts: {used:?}");
    ml.record_usage("owner", used).unwrap();
    let report = ml.usage(memledger_schemas::Timestamp::now()).unwrap();
    assert_eq!(report.today_of("owner").calls, 3);
    assert_eq!(report.this_month.calls, 3);
}
