//! Two enrichments of one version (the SPYN3 case "race two enrichments against one revision"):
//! "Ana works at Acme", then her role and her city added by two savers who both read the first.
//! Neither replaces the other; they are linked `co_enriches` and recalled together, and with a
//! chat model a merged text is proposed through the conflict queue, written only when accepted.

use std::time::Duration;

use crate::support::mock_http;
use crate::support::{dumps, open, req, save};
use memledger_engine::models::{Endpoint, ModelConfig};
use memledger_engine::*;
use memledger_schemas::*;

const BASE: &str = "Ana works at Acme";
const ROLE: &str = "Ana works at Acme as a data engineer";
const CITY: &str = "Ana works at Acme in Lisbon";
const MERGED: &str = "Ana works at Acme in Lisbon as a data engineer";

/// Rebuilt views equal the incremental ones and verify is ok.
fn assert_consistent(ml: &Memledger) {
    let before = dumps(ml);
    ml.rebuild(None, &mut |_| {}).unwrap();
    assert_eq!(dumps(ml), before, "rebuild gives the same views");
    let report = ml.verify().unwrap();
    assert!(report.ledger.ok && report.views_consistent, "{report:?}");
}

fn with_llm(dir: &std::path::Path, url: &str) -> Memledger {
    let models = ModelConfig {
        llm: Some(Endpoint::new(url, "test-model").with_timeout(Duration::from_secs(5))),
        ..ModelConfig::none()
    };
    Memledger::open_with(dir, &OpenOptions::default(), EngineConfig { models, ..EngineConfig::default() }).unwrap()
}

/// A chat server that classifies every pair as `relation` and answers a merge request with
/// `merge` (None: an answer with no text in it).
fn chat_server(relation: &'static str, merge: Option<&'static str>) -> mock_http::MockServer {
    mock_http::start(move |seen| {
        let system = seen.body.pointer("/messages/0/content").and_then(|v| v.as_str()).unwrap_or_default();
        if system.starts_with("You merge") {
            match merge {
                Some(text) => {
                    mock_http::chat(&format!(r#"{{"text": "{text}", "reason": "keeps the role and the city"}}"#))
                }
                None => mock_http::chat(r#"{"reason": "no idea"}"#),
            }
        } else {
            mock_http::chat(&format!(r#"{{"relation": "{relation}", "reason": "scripted"}}"#))
        }
    })
}

fn active_texts(ml: &Memledger) -> Vec<String> {
    let mut texts: Vec<String> =
        ml.list(None, None, Some(Status::Active), 100).unwrap().into_iter().map(|m| m.text).collect();
    texts.sort();
    texts
}

#[test]
fn the_second_enrichment_of_a_version_is_linked_to_the_first_and_recalled_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let base = save(&ml, BASE);
    let role = save(&ml, ROLE);
    assert_eq!((role.outcome, role.root_id, role.version), (Outcome::Versioned, base.memory_id, 2));
    assert!(role.co_enriches.is_empty());
    let city = save(&ml, CITY);
    // Its own belief (it does not say the role, so it must not replace the version that does),
    // linked to the first enrichment; without a model nothing is proposed.
    assert_eq!((city.outcome, city.root_id, city.version), (Outcome::Added, city.memory_id, 1));
    assert_eq!(city.co_enriches, vec![role.memory_id]);
    assert_eq!(city.merge_proposal, None);
    assert_eq!(active_texts(&ml), vec![ROLE.to_string(), CITY.to_string()]);

    // show, why and history tell the link.
    assert_eq!(ml.show(city.memory_id).unwrap().co_enriches, vec![role.memory_id]);
    assert_eq!(ml.show(role.memory_id).unwrap().co_enriches, vec![city.memory_id]);
    assert!(ml.show(base.memory_id).unwrap().co_enriches.is_empty());
    let why = ml.why(city.memory_id, Some(role.memory_id)).unwrap();
    assert_eq!(why.len(), 1);
    assert_eq!(why[0].outcome, PairOutcome::CoEnrichment);
    assert!(why[0].reason.contains(&base.memory_id.to_string()), "{}", why[0].reason);
    let edges = ml.history(role.memory_id).unwrap().edges;
    let edge = Edge { kind: EdgeKind::CoEnriches, from: city.memory_id, to: role.memory_id };
    assert!(edges.iter().any(|e| e.edge == edge), "{edges:?}");

    // Recall returning one returns the other beside it, and there is no conflict to warn of.
    for query in ["where is Ana based", "what is Ana's role at Acme"] {
        let found = ml.recall(query, None, None, 1).unwrap();
        assert_eq!(found.results.len(), 1, "{query}");
        let hit = &found.results[0];
        let other = if hit.memory_id == city.memory_id { role.memory_id } else { city.memory_id };
        let beside: Vec<MemoryId> = hit.co_enrichments.iter().map(|c| c.memory_id).collect();
        assert_eq!(beside, vec![other], "{query}");
        assert!(hit.conflicts_with.is_empty());
        assert_eq!(found.notice, None);
    }
    assert!(ml.conflicts(None).unwrap().is_empty());
    assert_consistent(&ml);

    // Forgetting one leaves the other alone, with nothing beside it.
    ml.forget(role.memory_id, None, "cli:test").unwrap();
    assert!(ml.show(city.memory_id).unwrap().co_enriches.is_empty());
    assert_consistent(&ml);
}

/// The same claims the other way round: the city first (a narrower statement of the version,
/// its own belief), then the role (an enrichment, the version's next version). The link is the
/// same.
#[test]
fn co_enrichments_are_linked_in_either_arrival_order() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let base = save(&ml, BASE);
    let city = save(&ml, CITY);
    assert_eq!(city.outcome, Outcome::Added);
    let role = save(&ml, ROLE);
    assert_eq!((role.outcome, role.root_id), (Outcome::Versioned, base.memory_id));
    assert_eq!(role.co_enriches, vec![city.memory_id]);
    assert_eq!(ml.show(city.memory_id).unwrap().co_enriches, vec![role.memory_id]);
    assert_eq!(active_texts(&ml), vec![ROLE.to_string(), CITY.to_string()]);
    assert_consistent(&ml);
}

/// A detail that only restates, or a fact of another subject, is no co-enrichment.
#[test]
fn unrelated_memories_and_restatements_are_not_linked() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    save(&ml, BASE);
    save(&ml, ROLE);
    let other = save(&ml, "Bruno works at Initech in Porto");
    assert!(other.co_enriches.is_empty());
    let again = save(&ml, "Ana works at Acme as a data engineer");
    assert_eq!(again.outcome, Outcome::Merged);
    assert!(again.co_enriches.is_empty());
}

#[test]
fn with_a_chat_model_a_merge_is_proposed_through_the_queue_and_written_only_when_accepted() {
    // The model even calls the two identical: the second still must not replace the first.
    let server = chat_server("identical", Some(MERGED));
    let dir = tempfile::tempdir().unwrap();
    let ml = with_llm(dir.path(), &server.url);
    let base = ml.save(req(BASE), "cli:test").unwrap();
    let role = ml.save(req(ROLE), "cli:test").unwrap();
    assert_eq!(role.outcome, Outcome::Versioned);
    let city = ml.save(req(CITY), "cli:test").unwrap();
    assert_eq!(city.outcome, Outcome::Added);
    assert_eq!(city.co_enriches, vec![role.memory_id]);
    let cid = city.merge_proposal.expect("a merge was proposed");
    let merge_prompts: Vec<String> = server
        .seen()
        .iter()
        .filter(|s| {
            s.body.pointer("/messages/0/content").and_then(|v| v.as_str()).is_some_and(|t| t.starts_with("You merge"))
        })
        .map(|s| s.user_message())
        .collect();
    assert_eq!(merge_prompts.len(), 1);
    assert!(merge_prompts[0].contains(BASE) && merge_prompts[0].contains(ROLE) && merge_prompts[0].contains(CITY));

    // Nothing is written as a belief: the proposal waits in the queue, and it is no contradiction.
    assert_eq!(active_texts(&ml), vec![ROLE.to_string(), CITY.to_string()]);
    let c = ml.conflict_record(cid).unwrap();
    assert_eq!((c.status, c.kind(), c.incoming), (ConflictStatus::Pending, "merge_proposal", city.memory_id));
    assert_eq!(c.candidates.iter().map(|s| s.memory_id).collect::<Vec<_>>(), vec![role.memory_id]);
    let proposal = c.proposal.clone().unwrap();
    assert_eq!((proposal.text.as_str(), proposal.revision), (MERGED, base.memory_id));
    assert!(ml.show(city.memory_id).unwrap().conflicts_with.is_empty());
    assert_eq!(ml.recall("where does Ana work", None, None, 5).unwrap().notice, None);
    // The judge settles contradictions only.
    let judged = ml.judge_pending(true, "cli:test").unwrap();
    assert!(judged.conflicts.is_empty());
    assert_consistent(&ml);

    // Accepting it: the merged text is the belief's next version, both enrichments go stale.
    let resolved = ml.resolve(cid, ResolutionAction::Merge, Some(&proposal.text), None, "cli:test").unwrap();
    let merged = resolved.merged_memory_id.unwrap();
    let m = ml.show(merged).unwrap();
    assert_eq!((m.text.as_str(), m.root_id, m.version), (MERGED, base.memory_id, 3));
    assert_eq!(active_texts(&ml), vec![MERGED.to_string()]);
    let found = ml.recall("where does Ana work", None, None, 5).unwrap();
    assert_eq!(found.results.iter().map(|r| r.memory_id).collect::<Vec<_>>(), vec![merged]);
    assert!(found.results[0].co_enrichments.is_empty());
    assert_consistent(&ml);

    // And reverting puts everything back, the proposal pending again.
    ml.revert(cid, "cli:test").unwrap();
    assert_eq!(active_texts(&ml), vec![ROLE.to_string(), CITY.to_string()]);
    assert_eq!(ml.conflict_record(cid).unwrap().status, ConflictStatus::Pending);
    assert_consistent(&ml);
}

/// City first (a belief of its own), then the role (the version's next version): the proposal
/// opens on the city, the role a side as it stands, and accepting it gives the same belief.
#[test]
fn a_merge_is_proposed_in_the_other_arrival_order_too() {
    // The model keeps the city a belief of its own and calls the role the same fact as the base.
    let server = mock_http::start(move |seen| {
        let system = seen.body.pointer("/messages/0/content").and_then(|v| v.as_str()).unwrap_or_default();
        let user = seen.user_message();
        if system.starts_with("You merge") {
            mock_http::chat(&format!(r#"{{"text": "{MERGED}", "reason": "keeps the role and the city"}}"#))
        } else if user.contains(CITY) && !user.contains(ROLE) {
            mock_http::chat(r#"{"relation": "complementary", "reason": "scripted"}"#)
        } else {
            mock_http::chat(r#"{"relation": "identical", "reason": "scripted"}"#)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let ml = with_llm(dir.path(), &server.url);
    let base = ml.save(req(BASE), "cli:test").unwrap();
    let city = ml.save(req(CITY), "cli:test").unwrap();
    assert_eq!(city.outcome, Outcome::Added);
    let role = ml.save(req(ROLE), "cli:test").unwrap();
    assert_eq!((role.outcome, role.root_id, role.version), (Outcome::Versioned, base.memory_id, 2));
    assert_eq!(role.co_enriches, vec![city.memory_id]);
    let cid = role.merge_proposal.expect("a merge was proposed");
    let c = ml.conflict_record(cid).unwrap();
    assert_eq!((c.status, c.kind(), c.incoming), (ConflictStatus::Pending, "merge_proposal", city.memory_id));
    let sides: Vec<(MemoryId, MemoryId, u32)> =
        c.candidates.iter().map(|s| (s.memory_id, s.root_id, s.version)).collect();
    assert_eq!(sides, vec![(role.memory_id, base.memory_id, 2)]);
    assert_eq!(active_texts(&ml), vec![ROLE.to_string(), CITY.to_string()]);
    assert_consistent(&ml);

    let proposal = c.proposal.clone().unwrap();
    let resolved = ml.resolve(cid, ResolutionAction::Merge, Some(&proposal.text), None, "cli:test").unwrap();
    let m = ml.show(resolved.merged_memory_id.unwrap()).unwrap();
    assert_eq!((m.text.as_str(), m.root_id, m.version), (MERGED, base.memory_id, 3));
    assert_eq!(active_texts(&ml), vec![MERGED.to_string()]);
    assert_consistent(&ml);
    ml.revert(cid, "cli:test").unwrap();
    assert_eq!(active_texts(&ml), vec![ROLE.to_string(), CITY.to_string()]);
    assert_consistent(&ml);
}

#[test]
fn an_unusable_merge_answer_proposes_nothing_and_keeps_the_link() {
    let server = chat_server("identical", None);
    let dir = tempfile::tempdir().unwrap();
    let ml = with_llm(dir.path(), &server.url);
    ml.save(req(BASE), "cli:test").unwrap();
    let role = ml.save(req(ROLE), "cli:test").unwrap();
    let city = ml.save(req(CITY), "cli:test").unwrap();
    assert_eq!((city.outcome, city.merge_proposal), (Outcome::Added, None));
    assert_eq!(city.co_enriches, vec![role.memory_id]);
    assert!(ml.conflicts(None).unwrap().is_empty());
    let why = ml.why(city.memory_id, Some(role.memory_id)).unwrap();
    assert!(why[0].reason.contains("no merge proposed"), "{}", why[0].reason);
    assert_consistent(&ml);
}

/// Erasing one of them blanks the proposed text too: it holds that memory's words.
#[test]
fn erasing_a_co_enrichment_blanks_the_proposal() {
    let server = chat_server("identical", Some(MERGED));
    let dir = tempfile::tempdir().unwrap();
    let ml = with_llm(dir.path(), &server.url);
    ml.save(req(BASE), "cli:test").unwrap();
    ml.save(req(ROLE), "cli:test").unwrap();
    let city = ml.save(req(CITY), "cli:test").unwrap();
    let cid = city.merge_proposal.unwrap();
    ml.erase(city.memory_id, false, None, false, "cli:test").unwrap();
    assert_eq!(ml.conflict_record(cid).unwrap().proposal.unwrap().text, "");
    let log = ml.log(1, 1000, None).unwrap();
    let proposed = log.iter().find(|e| e.body.type_name() == "merge_proposed").unwrap();
    assert!(proposed.erased.is_some());
    assert!(!serde_json::to_string(&proposed.body).unwrap().contains("Lisbon"));
    assert_consistent(&ml);
}
