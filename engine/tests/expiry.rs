//! Expiry (docs/adr/0038-expiry.md): a memory saved with an expiry is current until then and
//! `expired` after, at whatever valid time a read asks about (each read's time an argument, never
//! the clock); renewing or clearing an expiry is an update; replay gives the same views.

use memledger_engine::expiry::ExpiryChange;
use memledger_engine::validity::ReadStatus;
use memledger_engine::*;
use memledger_schemas::*;
use proptest::prelude::*;

use crate::support::{assert_rebuild_equal_and_verified, dumps, open};

fn t(s: &str) -> Timestamp {
    Timestamp::parse_rfc3339(s).unwrap()
}

fn expiring(text: &str, effective_at: Option<&str>, expires_at: Option<&str>) -> SaveRequest {
    SaveRequest {
        text: text.into(),
        effective_at: effective_at.map(Into::into),
        expires_at: expires_at.map(Into::into),
        ..SaveRequest::default()
    }
}

/// The texts a recall at `at` finds true then (a belief not yet true shows as scheduled).
fn recalled(ml: &Memledger, query: &str, at: Timestamp) -> Vec<String> {
    let found = ml.recall_at(query, None, None, 10, at).unwrap().results;
    found.into_iter().filter(|h| h.status == ReadStatus::Active).map(|h| h.text).collect()
}

fn listed(ml: &Memledger, status: ReadStatus, at: Timestamp) -> Vec<String> {
    let mut texts: Vec<String> =
        ml.list_at(None, None, Some(status), usize::MAX, at).unwrap().into_iter().map(|m| m.text).collect();
    texts.sort();
    texts
}

const ON_CALL: &str = "I'm on call for the payments service this week";

#[test]
fn an_expired_memory_is_left_out_after_its_time_and_current_before() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let saved =
        ml.save(expiring(ON_CALL, Some("2026-11-30T09:00:00Z"), Some("2026-12-07T09:00:00Z")), "cli:test").unwrap();
    assert_eq!(saved.outcome, Outcome::Added);
    assert_eq!(saved.expires_at, Some(t("2026-12-07T09:00:00Z")));
    let head = ml.ledger().head().seq;

    let (before, after) = (t("2026-12-03T12:00:00Z"), t("2026-12-07T09:00:00Z"));
    assert_eq!(recalled(&ml, "who is on call for payments", before), vec![ON_CALL.to_string()]);
    let hit = &ml.recall_at("on call payments", None, None, 10, before).unwrap().results[0];
    assert_eq!((hit.status, hit.expires_at), (ReadStatus::Active, Some(after)));
    assert_eq!(listed(&ml, ReadStatus::Active, before), vec![ON_CALL.to_string()]);
    assert_eq!(ml.show_at(saved.memory_id, before).unwrap().status, ReadStatus::Active);

    // From the expiry on (the instant itself included): out of recall and the active list,
    // `expired` in show, list and history.
    assert!(recalled(&ml, "who is on call for payments", after).is_empty());
    assert!(listed(&ml, ReadStatus::Active, after).is_empty());
    assert_eq!(listed(&ml, ReadStatus::Expired, after), vec![ON_CALL.to_string()]);
    let shown = ml.show_at(saved.memory_id, after).unwrap();
    assert_eq!((shown.status, shown.expires_at), (ReadStatus::Expired, Some(after)));
    let history = ml.history_at(saved.memory_id, after).unwrap();
    assert_eq!(history.versions[0].status, ReadStatus::Expired);
    assert_eq!(history.versions[0].expires_at, Some(after));
    // Before it was ever true it is not expired either: recall shows it scheduled.
    let early = ml.recall_at("on call payments", None, None, 10, t("2026-11-01T00:00:00Z")).unwrap();
    assert_eq!(early.results[0].status, ReadStatus::Scheduled);

    // Nothing was written when the time came, and replay gives the same views.
    assert_eq!(ml.ledger().head().seq, head);
    assert_rebuild_equal_and_verified(&ml);
}

#[test]
fn a_time_to_live_expires_that_long_after_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let start = Timestamp::now();
    let saved = ml
        .save(SaveRequest { text: ON_CALL.into(), ttl: Some("7d".into()), ..SaveRequest::default() }, "cli:test")
        .unwrap();
    let end = Timestamp::now();
    let week = 7 * 86_400 * 1_000_000;
    let at = saved.expires_at.expect("an expiry");
    assert!(start.0 + week <= at.0 && at.0 <= end.0 + week, "{at} is a week after the save");
    let shown = ml.show(saved.memory_id).unwrap();
    assert_eq!(shown.ttl_seconds, Some(7 * 86_400));
    assert!(recalled(&ml, "on call payments", Timestamp(at.0 - 1)).len() == 1);
    assert!(recalled(&ml, "on call payments", at).is_empty());

    // Bad expiries are refused with nothing written.
    let head = ml.ledger().head().seq;
    for bad in [
        SaveRequest { text: "x y z".into(), ttl: Some("soon".into()), ..SaveRequest::default() },
        SaveRequest { text: "x y z".into(), ttl: Some("0s".into()), ..SaveRequest::default() },
        SaveRequest { text: "x y z".into(), expires_at: Some("next week".into()), ..SaveRequest::default() },
        SaveRequest { text: "x y z".into(), ttl: Some("1d".into()), no_expiry: true, ..SaveRequest::default() },
    ] {
        let e = ml.save(bad.clone(), "cli:test").unwrap_err();
        assert_eq!(e.exit(), Exit::BadInput, "{bad:?}: {e}");
    }
    assert_eq!(ml.ledger().head().seq, head);
}

#[test]
fn saving_the_same_text_with_another_expiry_renews_or_clears_it_as_a_new_version() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let first = ml.save(expiring(ON_CALL, None, Some("2099-12-07T09:00:00Z")), "cli:test").unwrap();
    // The same text saying nothing of the expiry is a restatement: merged, the expiry kept.
    let again = ml.save(expiring(ON_CALL, None, None), "cli:test").unwrap();
    assert_eq!(
        (again.outcome, again.memory_id, again.expires_at),
        (Outcome::Merged, first.memory_id, first.expires_at)
    );
    // The same expiry again: merged too.
    let same = ml.save(expiring(ON_CALL, None, Some("2099-12-07T09:00:00Z")), "cli:test").unwrap();
    assert_eq!(same.outcome, Outcome::Merged);
    // Another expiry: the belief's next version, with the same text.
    let renewed = ml.save(expiring(ON_CALL, None, Some("2099-12-14T09:00:00Z")), "cli:test").unwrap();
    assert_eq!((renewed.outcome, renewed.root_id, renewed.version), (Outcome::Versioned, first.root_id, 2));
    assert_eq!(renewed.expires_at, Some(t("2099-12-14T09:00:00Z")));
    let shown = ml.show(renewed.memory_id).unwrap();
    assert_eq!((shown.cause.as_str(), shown.text.as_str()), ("expiry", ON_CALL));
    let why = ml.why(renewed.memory_id, Some(first.memory_id)).unwrap();
    assert_eq!(why[0].gate, "expiry_changed", "{why:?}");
    assert_eq!(why[0].outcome, PairOutcome::Versioned);
    // After the first expiry and before the second, the renewed one is current.
    assert_eq!(recalled(&ml, "on call payments", t("2099-12-10T00:00:00Z")), vec![ON_CALL.to_string()]);
    // Cleared: it no longer expires.
    let cleared =
        ml.save(SaveRequest { text: ON_CALL.into(), no_expiry: true, ..SaveRequest::default() }, "cli:test").unwrap();
    assert_eq!((cleared.outcome, cleared.version, cleared.expires_at), (Outcome::Versioned, 3, None));
    assert_eq!(recalled(&ml, "on call payments", t("2030-01-01T00:00:00Z")), vec![ON_CALL.to_string()]);
    assert_eq!(ml.history(first.memory_id).unwrap().versions.len(), 3);
    assert_rebuild_equal_and_verified(&ml);
}

#[test]
fn a_claim_said_again_after_its_expiry_holds_anew() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    // Expired (at an instant long past): said again, it holds with no end.
    let first = ml.save(expiring(ON_CALL, None, Some("2026-01-07T09:00:00Z")), "cli:test").unwrap();
    let again = ml.save(expiring(ON_CALL, None, None), "cli:test").unwrap();
    assert_eq!((again.outcome, again.root_id, again.expires_at), (Outcome::Versioned, first.root_id, None));
    assert_eq!(ml.show(again.memory_id).unwrap().cause, "expiry");
    // Expired, with a time to live: said again, it holds for that time again from now.
    let freeze = "The staging freeze is on";
    let req = SaveRequest {
        text: freeze.into(),
        expires_at: Some("2026-01-07T09:00:00Z".into()),
        ttl: Some("1h".into()),
        ..SaveRequest::default()
    };
    ml.save(req, "cli:test").unwrap();
    let start = Timestamp::now();
    let renewed = ml.save(expiring(freeze, None, None), "cli:test").unwrap();
    let at = renewed.expires_at.expect("renewed");
    assert_eq!(renewed.outcome, Outcome::Versioned);
    assert!(at.0 >= start.0 + 3_600_000_000 && at.0 <= Timestamp::now().0 + 3_600_000_000, "{at}");
    assert_rebuild_equal_and_verified(&ml);
}

#[test]
fn an_update_renews_or_clears_an_expiry_and_an_edit_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let caller = Caller::owner("cli:test");
    let first = ml.save(expiring(ON_CALL, None, Some("2099-12-07T09:00:00Z")), "cli:test").unwrap();
    let at = t("2099-12-21T09:00:00Z");
    let renewed =
        ml.revise_by(first.memory_id, None, Some(1), ExpiryChange::At { at, ttl_seconds: None }, &caller).unwrap();
    let shown = ml.show(renewed.memory_id).unwrap();
    assert_eq!((shown.text.as_str(), shown.expires_at, shown.version), (ON_CALL, Some(at), 2));
    // An edit of the text alone keeps the expiry.
    let edited =
        ml.update(renewed.memory_id, "I'm on call for payments and billing this week", None, "cli:test").unwrap();
    assert_eq!(ml.show(edited.memory_id).unwrap().expires_at, Some(at));
    // Cleared.
    let cleared = ml.revise_by(edited.memory_id, None, None, ExpiryChange::Clear, &caller).unwrap();
    assert_eq!(ml.show(cleared.memory_id).unwrap().expires_at, None);
    // An update that changes nothing is refused.
    let e = ml.revise_by(cleared.memory_id, None, None, ExpiryChange::Keep, &caller).unwrap_err();
    assert_eq!(e.exit(), Exit::BadInput, "{e}");
    assert_rebuild_equal_and_verified(&ml);
}

#[test]
fn a_restatement_without_an_expiry_keeps_the_one_it_restates() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let first = ml
        .save(expiring("deploy the search service on Monday", None, Some("2099-12-07T09:00:00Z")), "cli:test")
        .unwrap();
    let enriched = ml
        .save(expiring("deploy the search service on Monday after integration tests pass", None, None), "cli:test")
        .unwrap();
    assert_eq!((enriched.outcome, enriched.root_id), (Outcome::Versioned, first.root_id), "{enriched:?}");
    assert_eq!(enriched.expires_at, Some(t("2099-12-07T09:00:00Z")));
    assert_rebuild_equal_and_verified(&ml);
}

/// Claims with effective times and expiries, none of them the same text with two expiries
/// (whose last arrival decides by design), nor a restatement of another (which keeps or renews
/// an expiry by the time it is saved).
const CLAIMS: &[(&str, &str, Option<&str>)] = &[
    (ON_CALL, "2026-11-30T09:00:00Z", Some("2026-12-07T09:00:00Z")),
    ("The staging freeze lasts until the 15th", "2026-12-01T09:00:00Z", Some("2026-12-15T00:00:00Z")),
    ("Hana is travelling in Japan", "2026-11-01T09:00:00Z", Some("2026-11-20T00:00:00Z")),
    ("The billing service runs on Postgres 16", "2026-01-10T09:00:00Z", None),
    ("The billing service runs on Postgres 17", "2026-04-10T09:00:00Z", Some("2026-12-10T00:00:00Z")),
    ("The billing team deploys to staging on Tuesdays", "2026-06-01T09:00:00Z", Some("2026-12-12T00:00:00Z")),
    ("The billing team deploys to staging on Thursdays", "2026-12-14T09:00:00Z", None),
    ("Priya prefers dark mode in every editor", "2026-01-20T09:00:00Z", None),
    ("deploy the search service on Monday", "2026-02-01T09:00:00Z", Some("2026-11-25T00:00:00Z")),
];

/// The times read at: before, between and after the expiries and the scheduled change.
const READ_AT: &[&str] = &[
    "2026-11-10T00:00:00Z",
    "2026-11-26T00:00:00Z",
    "2026-12-05T00:00:00Z",
    "2026-12-11T00:00:00Z",
    "2026-12-13T00:00:00Z",
    "2026-12-20T00:00:00Z",
];

/// At each read time: the active texts, the expired ones, and each claim's text found by a
/// recall of its own words (whether it is).
fn beliefs_in_time(order: &[usize]) -> Vec<(Vec<String>, Vec<String>, Vec<bool>)> {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    for &i in order {
        let (text, from, until) = CLAIMS[i];
        ml.save(expiring(text, Some(from), until), "cli:prop").unwrap();
    }
    let views = dumps(&ml);
    ml.rebuild(None, &mut |_| {}).unwrap();
    assert_eq!(dumps(&ml), views, "replay gives the same views, order {order:?}");
    READ_AT
        .iter()
        .map(|at| {
            let at = t(at);
            let found = CLAIMS.iter().map(|(text, _, _)| recalled(&ml, text, at).iter().any(|r| r == text)).collect();
            (listed(&ml, ReadStatus::Active, at), listed(&ml, ReadStatus::Expired, at), found)
        })
        .collect()
}

#[test]
fn claims_in_arrival_order_expire_when_they_say() {
    let seen = beliefs_in_time(&(0..CLAIMS.len()).collect::<Vec<_>>());
    let active = |i: usize| &seen[i].0;
    // 2026-11-10: Hana travels; on call not yet; Postgres 17 and Tuesday current.
    assert!(active(0).contains(&"Hana is travelling in Japan".to_string()), "{:?}", active(0));
    assert!(!active(0).contains(&ON_CALL.to_string()));
    // 2026-11-26: Hana's trip and the Monday deploy expired.
    assert!(seen[1].1.contains(&"Hana is travelling in Japan".to_string()), "{:?}", seen[1]);
    assert!(seen[1].1.contains(&"deploy the search service on Monday".to_string()), "{:?}", seen[1]);
    // 2026-12-05: on call and the freeze current.
    assert!(active(2).contains(&ON_CALL.to_string()) && active(2).iter().any(|t| t.contains("freeze")));
    // 2026-12-11: on call expired, Postgres 17 expired (and 16 stays replaced).
    assert!(!active(3).iter().any(|t| t.contains("Postgres")), "{:?}", active(3));
    assert!(seen[3].1.contains(&ON_CALL.to_string()));
    // 2026-12-13: Tuesday expired, Thursday not yet current: no deploy day.
    assert!(!active(4).iter().any(|t| t.contains("deploys to staging")), "{:?}", active(4));
    // 2026-12-20: Thursday current; the freeze over.
    assert!(active(5).contains(&"The billing team deploys to staging on Thursdays".to_string()));
    assert!(!active(5).iter().any(|t| t.contains("freeze")));
    // Recall agrees with the active list at every time.
    for (active, _, found) in &seen {
        for (i, (text, _, _)) in CLAIMS.iter().enumerate() {
            assert_eq!(found[i], active.contains(&text.to_string()), "{text}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn any_arrival_order_expires_the_same(order in Just((0..CLAIMS.len()).collect::<Vec<usize>>()).prop_shuffle()) {
        let expected = beliefs_in_time(&(0..CLAIMS.len()).collect::<Vec<_>>());
        prop_assert_eq!(beliefs_in_time(&order), expected, "order {:?}", order);
    }
}
