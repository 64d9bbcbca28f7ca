//! Principals, grants and authority (docs/design.md §13, docs/principals.md) through the library
//! API: who may read and write which scope, what a refusal leaves (nothing: the head and every
//! view unchanged), what a save of lower authority does to a belief of higher authority (a
//! conflict that needs the higher one), proposals, and the seed's scenario (SPYN3) at fixed
//! instants in every arrival order.

use std::sync::Arc;

use memledger_engine::access::parse_grant;
use memledger_engine::validity::ReadStatus;
use memledger_engine::*;
use memledger_schemas::*;

use crate::support::{dumps, open};

fn t(s: &str) -> Timestamp {
    Timestamp::parse_rfc3339(s).unwrap()
}

fn grants(gs: &[&str]) -> Vec<Grant> {
    gs.iter().map(|g| parse_grant(g).unwrap()).collect()
}

/// Add principal `name` as the owner; the caller it is, and its token.
fn add(ml: &Memledger, name: &str, kind: PrincipalKind, gs: &[&str]) -> (Caller, String) {
    let change = ml.principals_add(&Caller::owner("cli:admin"), name, kind, grants(gs)).unwrap();
    let token = change.token.expect("a new principal's token");
    let principal = ml.authenticate(&token).unwrap();
    (Caller { principal: Arc::new(principal), actor: format!("{kind}:{name}") }, token)
}

fn save_as(
    ml: &Memledger,
    caller: &Caller,
    text: &str,
    scope: &str,
    source: Option<&str>,
) -> Result<SaveResult, EngineError> {
    let request = SaveRequest {
        text: text.into(),
        scope: Some(scope.into()),
        source: source.map(str::to_string),
        ..SaveRequest::default()
    };
    ml.save_by(request, caller)
}

/// `f` is refused as not permitted, and leaves the ledger's head and every view as they were.
fn refused<T: std::fmt::Debug>(ml: &Memledger, what: &str, f: impl FnOnce() -> Result<T, EngineError>) -> String {
    let (head, views) = (ml.ledger().head(), dumps(ml));
    let e = f().expect_err(what);
    assert_eq!(e.exit(), Exit::NotPermitted, "{what}: {e}");
    assert_eq!(ml.ledger().head(), head, "{what}: nothing written");
    assert_eq!(dumps(ml), views, "{what}: every view unchanged");
    e.to_string()
}

fn assert_replay_equal_and_verified(ml: &Memledger) {
    let before = dumps(ml);
    ml.rebuild(None, &mut |_| {}).unwrap();
    assert_eq!(dumps(ml), before, "rebuilt views equal the incremental ones");
    let v = ml.verify().unwrap();
    assert!(v.ledger.ok && v.views_consistent, "{v:?}");
}

#[test]
fn principals_are_events_and_only_a_keyed_hash_of_their_token_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let (bot, token) = add(&ml, "billing-bot", PrincipalKind::Agent, &["team:billing=read,propose"]);
    assert_eq!(bot.name(), "billing-bot");
    assert!(token.starts_with("mlt_") && token.len() >= 4 + 43, "256 bits or more: {token}");
    // The token is nowhere in the ledger, its export, or the views; nor is its plain hash.
    let mut export = Vec::new();
    ml.export(1, &mut export).unwrap();
    let export = String::from_utf8(export).unwrap();
    assert!(!export.contains(&token) && !export.contains(&token[4..]), "{export}");
    let plain = blake3::hash(token.as_bytes()).to_hex().to_string();
    assert!(!export.contains(&plain));
    for view in dumps(&ml) {
        for (k, v) in view {
            let bytes = [k, v].concat();
            assert!(!bytes.windows(token.len()).any(|w| w == token.as_bytes()));
        }
    }
    // Rotation: the old token stops, the new one works.
    let rotated = ml.principals_rotate(&Caller::owner("cli:admin"), "billing-bot").unwrap().token.unwrap();
    assert_ne!(rotated, token);
    assert!(matches!(ml.authenticate(&token), Err(EngineError::Unauthenticated)));
    assert_eq!(ml.authenticate(&rotated).unwrap().name, "billing-bot");
    // Grants change by events; a revocation ends the token for good, and the name stays taken.
    let owner = Caller::owner("cli:admin");
    let granted = ml.principals_grant(&owner, "billing-bot", grants(&["project:*=read"])).unwrap();
    assert_eq!(granted.principal.grants, vec!["team:billing=read,propose", "project:*=read"]);
    ml.principals_revoke(&owner, "billing-bot", vec!["project:*".into()], None).unwrap();
    ml.principals_revoke(&owner, "billing-bot", Vec::new(), Some("token leaked".into())).unwrap();
    assert!(matches!(ml.authenticate(&rotated), Err(EngineError::Unauthenticated)));
    let again = ml.principals_add(&owner, "billing-bot", PrincipalKind::Agent, Vec::new()).unwrap_err();
    assert_eq!(again.exit(), Exit::BadInput, "{again}");
    for wrong in ["", "mlt_", "mlt_xxxxxxxx", &format!("{rotated}x"), &rotated.to_uppercase()] {
        assert!(matches!(ml.authenticate(wrong), Err(EngineError::Unauthenticated)), "{wrong:?}");
    }
    let listed = ml.principals(&owner).unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].revoked && listed[0].revoked_reason.as_deref() == Some("token leaked"));
    // Every principal event names the owner as its principal.
    let events = ml.log(1, 100, None).unwrap();
    assert_eq!(events.len(), 5, "added, rotated, granted, a grant revoked, revoked");
    assert!(events.iter().all(|e| e.principal.as_deref() == Some(OWNER) && e.actor == "cli:admin"));
    assert_replay_equal_and_verified(&ml);
}

#[test]
fn principals_survive_a_reopen_and_their_tokens_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let token = {
        let ml = open(dir.path());
        add(&ml, "ana", PrincipalKind::Person, &["team:billing=read,write"]).1
    };
    let ml = open(dir.path());
    let ana = ml.authenticate(&token).unwrap();
    assert_eq!((ana.name.as_str(), ana.kind), ("ana", PrincipalKind::Person));
}

#[test]
fn a_principal_reads_and_writes_only_within_its_grants_and_refusals_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let owner = Caller::owner("cli:ana");
    let private = save_as(&ml, &owner, "Ana prefers window seats on long flights", "person:ana", None).unwrap();
    let rule = save_as(&ml, &owner, "billing deploys need two approvals", "team:billing", Some("policy")).unwrap();
    let (bot, _) = add(&ml, "bot", PrincipalKind::Agent, &["team:billing=read,write", "project:*=read"]);

    // Reads: only what its grants cover, whatever it asks.
    let found = ml
        .recall_in("prefers seats approvals deploys", None, bot.access().readable().scopes(), 10, Timestamp::now())
        .unwrap();
    let texts: Vec<&str> = found.results.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, vec!["billing deploys need two approvals"], "{found:?}");
    let e = bot.access().scopes_for(Some("person:ana")).unwrap_err();
    assert_eq!((e.verb, e.scope.as_str()), (Verb::Read, "person:ana"));
    let listed = ml.list_in(None, &bot.access().readable(), Some(ReadStatus::Active), 100, Timestamp::now()).unwrap();
    assert_eq!(listed.iter().map(|m| m.memory_id).collect::<Vec<_>>(), vec![rule.memory_id]);
    assert!(!bot.access().reads("person:ana"));

    // Writes outside its grants: refused, naming the verb and the scope, nothing written.
    let message = refused(&ml, "save into a person's scope", || {
        save_as(&ml, &bot, "Ana prefers aisle seats", "person:ana", None)
    });
    assert!(message.contains("bot may not write in person:ana"), "{message}");
    refused(&ml, "save into a project it may only read", || save_as(&ml, &bot, "x uses y", "project:x", None));
    refused(&ml, "update of another scope", || ml.update_by(private.memory_id, "Ana prefers aisle seats", None, &bot));
    refused(&ml, "forget of another scope", || ml.forget_by(private.memory_id, None, &bot));
    refused(&ml, "erase without the verb", || ml.erase_by(rule.memory_id, false, None, false, &bot));
    refused(&ml, "erase's dry run of a scope it may not read", || {
        ml.erase_by(private.memory_id, false, None, true, &bot)
    });
    refused(&ml, "claiming more authority than its grant", || {
        save_as(&ml, &bot, "billing deploys on fridays", "team:billing", Some("policy"))
    });
    refused(&ml, "a retention policy", || ml.erase_retired_before_by(Timestamp::now(), None, false, &bot));
    refused(&ml, "adding a principal", || ml.principals_add(&bot, "eve", PrincipalKind::Agent, Vec::new()));
    refused(&ml, "a scan of every scope", || {
        ml.scan_conflicts_by(
            &memledger_engine::scan::ScanOptions { max_pairs: 5, min_confidence: 0.5, dry_run: false, scope: None },
            &bot,
        )
    });
    // An edit or a retirement of a policy needs policy authority, whatever the verb.
    refused(&ml, "an agent's edit of a policy", || {
        ml.update_by(rule.memory_id, "billing deploys need one approval", None, &bot)
    });
    refused(&ml, "an agent's retirement of a policy", || ml.forget_by(rule.memory_id, None, &bot));

    // Within its grants, the same verbs are allowed.
    let note = save_as(&ml, &bot, "the billing dashboard lives at grafana/billing", "team:billing", None).unwrap();
    assert_eq!((note.outcome, note.source, note.principal.as_str()), (Outcome::Added, Authority::Inferred, "bot"));
    ml.update_by(note.memory_id, "the billing dashboard lives at grafana/d/billing", None, &bot).unwrap();
    ml.forget_by(note.memory_id, None, &bot).unwrap_or_else(|_| panic!("retire its own note"));
    // Its own scope without a grant, and by default.
    let own =
        ml.save_by(SaveRequest { text: "my run started at 09:00".into(), ..SaveRequest::default() }, &bot).unwrap();
    assert_eq!(ml.show(own.memory_id).unwrap().scope, "agent:bot");
    assert_replay_equal_and_verified(&ml);
}

#[test]
fn an_agents_guess_never_supersedes_a_policy_but_opens_a_conflict_that_needs_policy() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let (maintainer, _) = add(&ml, "maria", PrincipalKind::Person, &["team:billing=read,write,resolve@policy"]);
    let (agent, _) = add(&ml, "bot", PrincipalKind::Agent, &["team:billing=read,write,resolve"]);
    let (dev, _) = add(&ml, "dev", PrincipalKind::Person, &["team:billing=read,write,resolve"]);
    let rule = save_as(&ml, &maintainer, "deploy Tuesday", "team:billing", Some("policy")).unwrap();
    // The agent's enrichment would be the rule's next version: it becomes a belief of its own.
    let guess = save_as(&ml, &agent, "deploy Tuesday after integration tests pass", "team:billing", None).unwrap();
    assert_eq!((guess.outcome, guess.needs_authority), (Outcome::Conflict, Some(Authority::Policy)), "{guess:?}");
    assert_eq!(ml.show(rule.memory_id).unwrap().status, ReadStatus::Active, "the policy stays current");
    assert_eq!(ml.show(rule.memory_id).unwrap().version, 1);
    let cid = guess.conflict_id.unwrap();
    let conflict = ml.conflict_record(cid).unwrap();
    assert_eq!((conflict.kind(), conflict.needs_authority), ("authority", Authority::Policy));
    // Recall shows the unresolved state.
    let found = ml.recall("when do we deploy?", None, Some("team:billing"), 5).unwrap();
    assert!(found.notice.is_some(), "{found:?}");
    // Only policy authority settles it.
    let message = refused(&ml, "a person without policy authority", || {
        ml.resolve_by(cid, ResolutionAction::KeepNew, None, None, &dev, None)
    });
    assert!(message.contains("needs policy authority"), "{message}");
    refused(&ml, "the agent itself", || ml.resolve_by(cid, ResolutionAction::KeepNew, None, None, &agent, None));
    ml.resolve_by(cid, ResolutionAction::KeepNew, None, Some("the team asked for it".into()), &maintainer, None)
        .unwrap();
    assert_eq!(ml.show(guess.memory_id).unwrap().status, ReadStatus::Active);
    assert_eq!(ml.show(rule.memory_id).unwrap().status, ReadStatus::Stale);

    // A person's own correction of their own preference updates it, as before.
    let pref = save_as(&ml, &dev, "deploy Tuesday", "person:dev", None).unwrap();
    let again = save_as(&ml, &dev, "deploy Tuesday after integration tests pass", "person:dev", None).unwrap();
    assert_eq!((again.outcome, again.root_id), (Outcome::Versioned, pref.root_id), "{again:?}");
    // A higher-authority restatement of a guess is the guess's next version.
    let hunch = save_as(&ml, &agent, "the billing queue drains at night", "team:billing", None).unwrap();
    let stated =
        save_as(&ml, &maintainer, "the billing queue drains at night", "team:billing", Some("stated")).unwrap();
    assert_eq!((stated.outcome, stated.root_id), (Outcome::Versioned, hunch.root_id), "{stated:?}");
    // A guess restating a stated belief adds provenance only.
    let echo = save_as(&ml, &agent, "the billing queue drains at night", "team:billing", None).unwrap();
    assert_eq!(echo.outcome, Outcome::Merged);
    assert_replay_equal_and_verified(&ml);
}

#[test]
fn a_principal_that_may_only_propose_saves_proposals_someone_who_may_write_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let (bot, _) = add(&ml, "bot", PrincipalKind::Agent, &["team:billing=read,propose"]);
    let (ana, _) = add(&ml, "ana", PrincipalKind::Person, &["team:billing=read,write"]);
    let proposal = save_as(&ml, &bot, "the billing service runs on Postgres 16", "team:billing", None).unwrap();
    assert_eq!(proposal.outcome, Outcome::Proposed, "{proposal:?}");
    let cid = proposal.conflict_id.unwrap();
    assert_eq!(ml.show(proposal.memory_id).unwrap().status, ReadStatus::Proposed);
    // Not current: neither recalled nor listed as active.
    assert!(ml.recall("which postgres?", None, Some("team:billing"), 5).unwrap().results.is_empty());
    assert!(ml.list(None, Some("team:billing"), Some(Status::Active), 10).unwrap().is_empty());
    let entry = ml.conflict_record(cid).unwrap();
    assert_eq!((entry.kind(), entry.proposed_by()), ("proposal", Some("bot")));
    // The proposer cannot accept its own proposal.
    refused(&ml, "the proposer accepting", || ml.resolve_by(cid, ResolutionAction::KeepNew, None, None, &bot, None));
    // Accepted, it is current; reverted, a proposal again; rejected, never current.
    ml.resolve_by(cid, ResolutionAction::KeepNew, None, None, &ana, None).unwrap();
    assert_eq!(ml.show(proposal.memory_id).unwrap().status, ReadStatus::Active);
    assert_eq!(ml.recall("which postgres?", None, Some("team:billing"), 5).unwrap().results.len(), 1);
    ml.revert_by(cid, &ana).unwrap();
    assert_eq!(ml.show(proposal.memory_id).unwrap().status, ReadStatus::Proposed);
    assert!(ml.recall("which postgres?", None, Some("team:billing"), 5).unwrap().results.is_empty());
    ml.resolve_by(cid, ResolutionAction::KeepExisting, None, None, &ana, None).unwrap();
    assert_eq!(ml.show(proposal.memory_id).unwrap().status, ReadStatus::Stale);

    // A proposal that would version a belief: accepted, it is that belief's next version.
    let base = save_as(&ml, &ana, "deploys go out on Tuesdays", "team:billing", None).unwrap();
    let more = save_as(&ml, &bot, "deploys go out on Tuesdays after the integration tests pass", "team:billing", None)
        .unwrap();
    assert_eq!(more.outcome, Outcome::Proposed);
    assert_eq!(ml.show(base.memory_id).unwrap().status, ReadStatus::Active, "the belief stays current meanwhile");
    ml.resolve_by(more.conflict_id.unwrap(), ResolutionAction::KeepNew, None, None, &ana, None).unwrap();
    let now = ml.show(more.memory_id).unwrap();
    assert_eq!((now.root_id, now.version, now.status), (base.root_id, 2, ReadStatus::Active));
    assert_eq!(ml.show(base.memory_id).unwrap().status, ReadStatus::Stale);
    // A restatement of what is known is provenance, not a proposal.
    let echo = save_as(&ml, &bot, "deploys go out on Tuesdays after the integration tests pass", "team:billing", None)
        .unwrap();
    assert_eq!(echo.outcome, Outcome::Merged);
    assert_replay_equal_and_verified(&ml);
}

#[test]
fn grants_are_given_only_by_who_administers_their_pattern_and_never_beyond_its_authority() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let (lead, _) = add(&ml, "lead", PrincipalKind::Person, &["team:*=read,write,resolve,admin"]);
    add(&ml, "bot", PrincipalKind::Agent, &[]);
    ml.principals_grant(&lead, "bot", grants(&["team:billing=read,propose"])).unwrap();
    refused(&ml, "a grant outside its pattern", || ml.principals_grant(&lead, "bot", grants(&["person:ana=read"])));
    refused(&ml, "a grant above its authority", || {
        ml.principals_grant(&lead, "bot", grants(&["team:billing=read,write@policy"]))
    });
    refused(&ml, "revoking a principal", || ml.principals_revoke(&lead, "bot", Vec::new(), None));
    ml.principals_revoke(&lead, "bot", vec!["team:billing".into()], None).unwrap();
    let bot = ml.principals(&Caller::owner("cli:admin")).unwrap().into_iter().find(|p| p.principal == "bot").unwrap();
    assert!(bot.grants.is_empty(), "{bot:?}");
}

/// The seed's scenario (SPYN3): a maintainer's policy "billing deploys to staging on Tuesdays";
/// an agent's inferred "… on Thursdays" opens a conflict that needs policy authority while
/// Tuesday stays current; the maintainer's later policy change to Thursday, effective next week,
/// ends Tuesday's validity at that boundary. The same saves in any arrival order give the same
/// beliefs at every time asked about.
#[test]
fn the_spyn3_scenario_holds_in_every_arrival_order() {
    const TUESDAY: &str = "billing deploys to staging on Tuesdays";
    const THURSDAY: &str = "billing deploys to staging on Thursdays";
    const QUESTION: &str = "when does billing deploy to staging?";
    // Fixed instants after any clock a test runs by: the guess, saved now without a time of its
    // own, holds from now, before all of them.
    let this_week = "2099-01-05T00:00:00Z";
    let next_week = "2099-01-12T00:00:00Z";
    let (before, after) = (t("2099-01-07T12:00:00Z"), t("2099-01-13T12:00:00Z"));
    #[derive(Clone, Copy, Debug)]
    enum Step {
        Policy,
        Guess,
        Change,
    }
    let orders = [
        [Step::Policy, Step::Guess, Step::Change],
        [Step::Policy, Step::Change, Step::Guess],
        [Step::Guess, Step::Policy, Step::Change],
        [Step::Guess, Step::Change, Step::Policy],
        [Step::Change, Step::Policy, Step::Guess],
        [Step::Change, Step::Guess, Step::Policy],
    ];
    for order in orders {
        let dir = tempfile::tempdir().unwrap();
        let ml = open(dir.path());
        let (maintainer, _) = add(&ml, "maria", PrincipalKind::Person, &["team:billing=read,write,resolve@policy"]);
        let (agent, _) = add(&ml, "bot", PrincipalKind::Agent, &["team:billing=read,write"]);
        for step in order {
            let (caller, text, source, at) = match step {
                Step::Policy => (&maintainer, TUESDAY, "policy", Some(this_week)),
                Step::Guess => (&agent, THURSDAY, "inferred", None),
                Step::Change => (&maintainer, THURSDAY, "policy", Some(next_week)),
            };
            let request = SaveRequest {
                text: text.into(),
                scope: Some("team:billing".into()),
                source: Some(source.into()),
                effective_at: at.map(str::to_string),
                ..SaveRequest::default()
            };
            let r = ml.save_by(request, caller).unwrap();
            if let (Step::Guess, [Step::Policy, Step::Guess, _]) = (step, order) {
                // Right after the policy: a conflict only policy authority settles, Tuesday current.
                assert_eq!((r.outcome, r.needs_authority), (Outcome::Conflict, Some(Authority::Policy)), "{order:?}");
                let found = ml.recall_at(QUESTION, None, Some("team:billing"), 5, before).unwrap();
                assert!(found.notice.is_some(), "{order:?}: the unresolved state is visible");
            }
        }
        // The policy lineage: Tuesday until next week, then Thursday; no inferred memory is ever
        // its current version.
        for (at, want) in [(before, TUESDAY), (after, THURSDAY)] {
            let found = ml.recall_at(QUESTION, None, Some("team:billing"), 5, at).unwrap();
            let policy: Vec<&RecallHit> =
                found.results.iter().filter(|h| ml.show(h.memory_id).unwrap().authority == Authority::Policy).collect();
            assert_eq!(policy.len(), 1, "{order:?} at {at}: {found:?}");
            assert_eq!(policy[0].text, want, "{order:?} at {at}");
            // Whatever else is recalled is the agent's guess, never unflagged beside the policy
            // it contradicts: merged into it, superseded, or in a conflict that needs policy.
            for other in found.results.iter().filter(|h| h.memory_id != policy[0].memory_id) {
                let m = ml.show(other.memory_id).unwrap();
                assert_eq!(m.authority, Authority::Inferred, "{order:?}: {m:?}");
                assert!(!other.conflicts_with.is_empty(), "{order:?} at {at}: an unflagged guess {m:?}");
            }
        }
        // Tuesday's validity ends where Thursday's policy begins.
        let tuesday = ml
            .list(None, Some("team:billing"), None, 100)
            .unwrap()
            .into_iter()
            .find(|m| m.text == TUESDAY && m.authority == Authority::Policy)
            .unwrap();
        assert_eq!(tuesday.valid_to, Some(t(next_week)), "{order:?}");
        assert_replay_equal_and_verified(&ml);
    }
}

#[test]
fn a_prefix_grant_reads_every_scope_with_that_prefix_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let owner = Caller::owner("cli:ana");
    for (text, scope) in [
        ("payments deploys run on weekdays", "team:payments"),
        ("platform deploys run at night", "team:platform"),
        ("billing deploys run on tuesdays", "team:billing"),
        ("ops deploys are frozen in december", "teamp:ops"),
        ("personal deploys of my blog run on sundays", "person:ana"),
    ] {
        save_as(&ml, &owner, text, scope, None).unwrap();
    }
    let (reader, _) = add(&ml, "reader", PrincipalKind::Agent, &["team:p*=read"]);
    let recalled = |ml: &Memledger| -> Vec<String> {
        let found =
            ml.recall_in("deploys run", None, reader.access().readable().scopes(), 10, Timestamp::now()).unwrap();
        let mut scopes: Vec<String> = found.results.iter().map(|r| r.scope.clone()).collect();
        scopes.sort();
        scopes
    };
    assert_eq!(recalled(&ml), vec!["team:payments", "team:platform"]);
    // A scope with the prefix that appears later is read too: the prefix is not a fixed list.
    save_as(&ml, &owner, "pricing deploys run after review", "team:pricing", None).unwrap();
    assert_eq!(recalled(&ml), vec!["team:payments", "team:platform", "team:pricing"]);
    let listed =
        ml.list_in(None, &reader.access().readable(), Some(ReadStatus::Active), 100, Timestamp::now()).unwrap();
    let mut scopes: Vec<&str> = listed.iter().map(|m| m.scope.as_str()).collect();
    scopes.sort();
    assert_eq!(scopes, vec!["team:payments", "team:platform", "team:pricing"]);
}
