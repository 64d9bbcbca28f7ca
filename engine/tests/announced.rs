//! Announced changes and roles of one holder through the save pipeline: a change of a belief is
//! its next version (`announced_change`, the old one stale, a `replaces` edge, `why` saying what
//! changed), within what the incoming memory's authority allows (a lower one opens a conflict that
//! needs the belief's); a change from a value the belief does not hold, and another holder of a
//! role of one holder, open conflicts; a change with no belief to change is added.

use memledger_engine::validity::ReadStatus;
use memledger_engine::*;
use memledger_schemas::*;

use crate::support::{dumps, open, req, save};

fn save_with(ml: &Memledger, text: &str, source: &str) -> SaveResult {
    ml.save(SaveRequest { text: text.into(), source: Some(source.into()), ..SaveRequest::default() }, "cli:test")
        .unwrap()
}

fn assert_replay_equal_and_verified(ml: &Memledger) {
    let before = dumps(ml);
    ml.rebuild(None, &mut |_| {}).unwrap();
    assert_eq!(dumps(ml), before, "rebuilt views equal the incremental ones");
    let v = ml.verify().unwrap();
    assert!(v.ledger.ok && v.views_consistent, "{v:?}");
}

#[test]
fn an_announced_change_is_the_next_version_of_the_belief_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    for (old, change, says) in [
        ("Our CI runs on GitHub Actions", "We moved CI to GitLab", "GitHub Actions"),
        ("I work at Google", "I now work at Meta", "Google"),
        ("We use Slack for team chat", "We switched from Slack to Microsoft Teams", "Slack"),
        ("The deadline is Friday", "The deadline was pushed to Monday", "Friday"),
    ] {
        let scope = format!("project:{}", old.len());
        let first = ml.save(SaveRequest { scope: Some(scope.clone()), ..req(old) }, "cli:test").unwrap();
        let next = ml.save(SaveRequest { scope: Some(scope), ..req(change) }, "cli:test").unwrap();
        assert_eq!((next.outcome, next.root_id, next.version), (Outcome::Versioned, first.root_id, 2), "{change:?}");
        assert_eq!(ml.show(first.memory_id).unwrap().status, ReadStatus::Stale, "{old:?}");
        let history = ml.history(first.root_id).unwrap();
        assert_eq!(history.versions[0].cause, "announced_change");
        assert!(
            history.edges.iter().any(|e| e.edge.kind == EdgeKind::Replaces
                && e.edge.from == next.memory_id
                && e.edge.to == first.memory_id),
            "{history:?}"
        );
        let why = ml.why(next.memory_id, Some(first.memory_id)).unwrap();
        let d = why.last().unwrap();
        assert_eq!((d.gate.as_str(), d.outcome), ("announced_change", PairOutcome::Versioned));
        assert!(d.reason.starts_with("announced change") && d.reason.contains(says), "{}", d.reason);
    }
    assert_replay_equal_and_verified(&ml);
}

#[test]
fn a_change_of_lower_authority_opens_a_conflict_that_needs_the_beliefs() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let rule = save_with(&ml, "Our CI runs on GitHub Actions", "policy");
    let guess = save_with(&ml, "We moved CI to GitLab", "inferred");
    assert_eq!((guess.outcome, guess.needs_authority), (Outcome::Conflict, Some(Authority::Policy)), "{guess:?}");
    assert_eq!(ml.show(rule.memory_id).unwrap().status, ReadStatus::Active, "the policy stays current");
    // the same change stated by a person of at least the belief's authority versions it
    let stated = save_with(&ml, "Our wiki is hosted on Confluence", "stated");
    let change = save_with(&ml, "We moved the wiki to Notion", "stated");
    assert_eq!((change.outcome, change.root_id), (Outcome::Versioned, stated.root_id), "{change:?}");
    assert_replay_equal_and_verified(&ml);
}

#[test]
fn a_change_from_another_value_and_another_holder_of_a_role_open_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let actions = save(&ml, "Our CI runs on GitHub Actions");
    let change = save(&ml, "We moved CI from Jenkins to GitLab");
    assert_eq!(change.outcome, Outcome::Conflict, "{change:?}");
    assert_eq!(ml.show(actions.memory_id).unwrap().status, ReadStatus::Active);
    let why = ml.why(change.memory_id, Some(actions.memory_id)).unwrap();
    assert_eq!(why.last().unwrap().gate, "changed_from_other");

    let sarah = save(&ml, "My manager is Sarah");
    let tom = save(&ml, "My manager is Tom");
    assert_eq!(tom.outcome, Outcome::Conflict, "{tom:?}");
    let why = ml.why(tom.memory_id, Some(sarah.memory_id)).unwrap();
    assert_eq!(why.last().unwrap().gate, "role_holder");
    let max = save(&ml, "My dog is named Max");
    let buddy = save(&ml, "My dog's name is Buddy");
    assert_eq!(buddy.outcome, Outcome::Conflict, "{buddy:?}");
    assert_eq!(ml.show(max.memory_id).unwrap().status, ReadStatus::Active);
    // many holders stay complementary
    save(&ml, "Alice is an engineer on the payments team");
    assert_eq!(save(&ml, "Bob is an engineer on the payments team").outcome, Outcome::Added);
    assert_replay_equal_and_verified(&ml);
}

#[test]
fn a_change_with_no_belief_to_change_is_added() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    save(&ml, "Our CI pipeline takes ten minutes");
    assert_eq!(save(&ml, "We moved CI to GitLab").outcome, Outcome::Added);
    assert_eq!(save(&ml, "The launch was postponed to March 3").outcome, Outcome::Added);
    assert_replay_equal_and_verified(&ml);
}
