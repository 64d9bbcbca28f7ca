//! What a caller declares (docs/design.md §15): `replaces` and `contradicts` recorded as that
//! principal's classification (method `declared`) under the authority rules; `related`, what a
//! save was compared with and left standing; an agent's claim against a person's policy ranked
//! after it in recall and marked unconfirmed.

use std::sync::Arc;

use memledger_engine::access::parse_grant;
use memledger_engine::*;
use memledger_schemas::*;

use crate::support::{dumps, open, req};

fn agent(ml: &Memledger, name: &str, grants: &[&str]) -> Caller {
    let grants = grants.iter().map(|g| parse_grant(g).unwrap()).collect();
    let change = ml.principals_add(&Caller::owner("cli:admin"), name, PrincipalKind::Agent, grants).unwrap();
    let principal = ml.authenticate(&change.token.unwrap()).unwrap();
    Caller { principal: Arc::new(principal), actor: format!("agent:{name}") }
}

fn declaring(text: &str, scope: &str, replaces: Option<&str>, contradicts: Option<&str>) -> SaveRequest {
    SaveRequest {
        text: text.into(),
        scope: Some(scope.into()),
        replaces: replaces.map(str::to_string),
        contradicts: contradicts.map(str::to_string),
        ..SaveRequest::default()
    }
}

#[test]
fn a_save_names_what_it_was_compared_with_and_left_standing() {
    let tmp = tempfile::tempdir().unwrap();
    let ml = open(tmp.path());
    let lunch = ml.save(req("Team lunches are ordered from Sweetgreen."), "cli:test").unwrap();
    let moved = ml.save(req("We get the Friday food from Dig Inn these days."), "cli:test").unwrap();
    assert_eq!(moved.outcome, Outcome::Added, "the rules relate nothing");
    assert_eq!(moved.related.len(), 1, "{:?}", moved.related);
    let r = &moved.related[0];
    assert_eq!((r.memory_id, r.text.as_str()), (lunch.memory_id, "Team lunches are ordered from Sweetgreen."));
    assert!(r.cosine.is_none(), "no embedder, no cosine");
    // A memory the save versions or contradicts is not `related`: it is what the save did.
    let conflict = ml.save(req("Team lunches are ordered from Chipotle now."), "cli:test").unwrap();
    assert_eq!(conflict.outcome, Outcome::Conflict, "{conflict:?}");
    assert!(conflict.related.iter().all(|r| r.memory_id != lunch.memory_id), "{:?}", conflict.related);
}

#[test]
fn a_declared_replacement_versions_within_authority_and_is_recorded_as_declared() {
    let tmp = tempfile::tempdir().unwrap();
    let ml = open(tmp.path());
    let old = ml.save(req("Team lunches are ordered from Sweetgreen."), "cli:test").unwrap();
    let prefix = &old.memory_id.to_string()[..8];
    let new =
        ml.save(declaring("We get the Friday food from Dig Inn.", "personal", Some(prefix), None), "cli:test").unwrap();
    assert_eq!((new.outcome, new.root_id, new.version), (Outcome::Versioned, old.root_id, 2), "{new:?}");
    let why = ml.why(old.memory_id, None).unwrap();
    let declared = why.iter().find(|d| d.method == Method::Declared).expect("a declared classification");
    assert_eq!((declared.gate.as_str(), declared.outcome), ("declared_replaces", PairOutcome::Versioned));
    // A declared contradiction opens a conflict.
    let other = ml.save(req("Standups start at 9:30."), "cli:test").unwrap();
    let c = ml
        .save(
            declaring(
                "Standups start when the first person joins.",
                "personal",
                None,
                Some(&other.memory_id.to_string()),
            ),
            "cli:test",
        )
        .unwrap();
    assert_eq!(c.outcome, Outcome::Conflict, "{c:?}");
    assert_eq!(ml.show(other.memory_id).unwrap().status, validity::ReadStatus::Active, "both stay active");
}

#[test]
fn declaring_a_text_already_held_declares_that_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let ml = open(tmp.path());
    let old = ml.save(req("Team lunches are ordered from Sweetgreen."), "cli:test").unwrap();
    let held = ml.save(req("We get the Friday food from Dig Inn."), "cli:test").unwrap();
    assert_eq!(held.outcome, Outcome::Added);
    // The agent's second call, after reading `related`: the same text, now declared.
    let again = ml
        .save(
            declaring("We get the Friday food from Dig Inn.", "personal", Some(&old.memory_id.to_string()), None),
            "cli:test",
        )
        .unwrap();
    assert_eq!(
        (again.outcome, again.memory_id, again.root_id),
        (Outcome::Versioned, held.memory_id, old.root_id),
        "{again:?}"
    );
    assert!(!again.settled_by_effective_time);
    let lineage = ml.history(old.memory_id).unwrap();
    assert_eq!(lineage.versions.len(), 2, "{lineage:?}");
    assert_eq!(ml.show(old.memory_id).unwrap().status, validity::ReadStatus::Stale);
    // Rebuilt from the ledger, the views are the same.
    let before = dumps(&ml);
    ml.rebuild(None, &mut |_| {}).unwrap();
    assert_eq!(dumps(&ml), before, "replay equals the incremental views");
}

#[test]
fn an_agent_cannot_replace_a_persons_policy_by_declaring_and_recall_ranks_the_policy_first() {
    let tmp = tempfile::tempdir().unwrap();
    let ml = open(tmp.path());
    let scope = "team:billing";
    let policy = ml
        .save(
            SaveRequest {
                source: Some("policy".into()),
                ..declaring("Billing deploys to staging on Tuesdays.", scope, None, None)
            },
            "cli:lead",
        )
        .unwrap();
    let bot = agent(&ml, "bot", &["team:billing=read,write"]);
    let claim = ml
        .save_by(
            declaring("Billing deploys to staging on Thursdays.", scope, Some(&policy.memory_id.to_string()), None),
            &bot,
        )
        .unwrap();
    assert_eq!((claim.outcome, claim.needs_authority), (Outcome::Conflict, Some(Authority::Policy)), "{claim:?}");
    assert_eq!(ml.show(policy.memory_id).unwrap().status, validity::ReadStatus::Active, "the policy stays current");
    let found = ml.recall("when does billing deploy to staging", None, Some(scope), 5).unwrap();
    let ids: Vec<MemoryId> = found.results.iter().map(|r| r.memory_id).collect();
    assert_eq!(ids, [policy.memory_id, claim.memory_id], "the policy first, whatever the score tie");
    assert!(!found.results[0].unconfirmed && found.results[1].unconfirmed, "{:?}", found.results);
    assert!(found.notice.as_deref().is_some_and(|n| n.contains("unconfirmed")), "{:?}", found.notice);
}

#[test]
fn a_declared_id_outside_the_callers_grants_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let ml = open(tmp.path());
    let secret = ml.save(declaring("The acquisition closes in May.", "team:exec", None, None), "cli:ceo").unwrap();
    let bot = agent(&ml, "bot", &["team:billing=read,write"]);
    let (head, views) = (ml.ledger().head(), dumps(&ml));
    let e = ml
        .save_by(
            declaring("The acquisition closes in June.", "team:billing", Some(&secret.memory_id.to_string()), None),
            &bot,
        )
        .expect_err("an id it may not read");
    assert_eq!(e.exit(), Exit::NotPermitted, "{e}");
    assert_eq!((ml.ledger().head(), dumps(&ml)), (head, views), "nothing written");
    let both = SaveRequest { contradicts: Some("abcdef".into()), ..declaring("x", "personal", Some("abcdef"), None) };
    assert_eq!(ml.save(both, "cli:test").unwrap_err().exit(), Exit::BadInput);
}
