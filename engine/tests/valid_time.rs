//! Valid time: scheduled changes, validity intervals and reads at a valid time, each read at a
//! fixed instant given as an argument (never the clock). The seed's scenario: the billing team
//! deploys to staging on Tuesdays from 2026-06-01, and on Thursdays from 2027-01-10.

use memledger_engine::validity::ReadStatus;
use memledger_engine::*;
use memledger_schemas::*;

use crate::support::{assert_rebuild_equal_and_verified, open};

const TUESDAY: &str = "The billing team deploys to staging on Tuesdays";
const THURSDAY: &str = "The billing team deploys to staging on Thursdays";
const QUESTION: &str = "when does the billing team deploy to staging?";

fn t(s: &str) -> Timestamp {
    Timestamp::parse_rfc3339(s).unwrap()
}

fn effective(text: &str, at: &str) -> SaveRequest {
    SaveRequest { text: text.into(), effective_at: Some(at.into()), ..SaveRequest::default() }
}

/// The first hit of the seed's question at valid time `at`: its text, status and the texts and
/// start times of what is scheduled beside it.
fn recall_at(ml: &Memledger, at: Timestamp) -> (String, ReadStatus, Vec<(String, Timestamp)>) {
    let found = ml.recall_at(QUESTION, None, None, 10, at).unwrap();
    assert_eq!(found.results.len(), 1, "one belief answers: {:?}", found.results);
    let hit = &found.results[0];
    (hit.text.clone(), hit.status, hit.scheduled.iter().map(|s| (s.text.clone(), s.valid_from)).collect())
}

#[test]
fn a_scheduled_change_is_current_only_once_its_time_has_come() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let tue = ml.save(effective(TUESDAY, "2026-06-01T00:00:00Z"), "cli:test").unwrap();
    let thu = ml.save(effective(THURSDAY, "2027-01-10T00:00:00Z"), "cli:test").unwrap();
    assert!(thu.settled_by_effective_time, "{thu:?}");
    let head = ml.ledger().head().seq;

    // Before 2027-01-10: Tuesday, with Thursday scheduled beside it.
    let before = t("2026-12-01T12:00:00Z");
    assert_eq!(
        recall_at(&ml, before),
        (TUESDAY.to_string(), ReadStatus::Active, vec![(THURSDAY.to_string(), t("2027-01-10T00:00:00Z"))])
    );
    assert_eq!(ml.show_at(tue.memory_id, before).unwrap().status, ReadStatus::Active);
    assert_eq!(ml.show_at(thu.memory_id, before).unwrap().status, ReadStatus::Scheduled);
    let active: Vec<String> =
        ml.list_at(None, None, Some(ReadStatus::Active), 100, before).unwrap().into_iter().map(|m| m.text).collect();
    assert_eq!(active, vec![TUESDAY.to_string()]);
    let scheduled: Vec<String> =
        ml.list_at(None, None, Some(ReadStatus::Scheduled), 100, before).unwrap().into_iter().map(|m| m.text).collect();
    assert_eq!(scheduled, vec![THURSDAY.to_string()]);

    // From 2027-01-10 on: Thursday, nothing scheduled.
    for after in ["2027-01-10T00:00:00Z", "2027-06-01T00:00:00Z"] {
        assert_eq!(recall_at(&ml, t(after)), (THURSDAY.to_string(), ReadStatus::Active, vec![]), "{after}");
        assert_eq!(ml.show_at(tue.memory_id, t(after)).unwrap().status, ReadStatus::Stale);
    }

    // A question about 2026-07-01 consults Tuesday's interval, whenever it is asked.
    assert_eq!(recall_at(&ml, t("2026-07-01T00:00:00Z")).0, TUESDAY);
    assert_eq!(ml.show_at(tue.memory_id, t("2026-07-01T00:00:00Z")).unwrap().status, ReadStatus::Active);
    // ... and as the store stood before Thursday was saved, too.
    let past = ml.as_of(Some(AsOf::Seq(tue.seqs[tue.seqs.len() - 1]))).unwrap();
    assert_eq!(recall_at(&past, t("2026-07-01T00:00:00Z")), (TUESDAY.to_string(), ReadStatus::Active, vec![]));
    drop(past);

    // The intervals: Tuesday until Thursday takes effect, Thursday open.
    let h = ml.history_at(thu.memory_id, before).unwrap();
    let timeline: Vec<(String, ReadStatus, Timestamp, Option<Timestamp>)> =
        h.versions.iter().map(|v| (v.text.clone(), v.status, v.valid_from, v.valid_to)).collect();
    assert_eq!(
        timeline,
        vec![
            (THURSDAY.to_string(), ReadStatus::Scheduled, t("2027-01-10T00:00:00Z"), None),
            (TUESDAY.to_string(), ReadStatus::Active, t("2026-06-01T00:00:00Z"), Some(t("2027-01-10T00:00:00Z"))),
        ]
    );
    // Reading wrote nothing: no event marks the scheduled time.
    assert_eq!(ml.ledger().head().seq, head);
    // The stored view, as every read before this one saw it: Thursday current.
    assert_eq!(ml.recall(QUESTION, None, None, 10).unwrap().results[0].text, THURSDAY);
    assert_rebuild_equal_and_verified(&ml);
}

/// Reverting the settlement puts both claims back in conflict; resolving again schedules
/// Thursday again. An explicit edit of the scheduled version stays scheduled. (Thursday is
/// scheduled far ahead here: an edit is asserted at the clock's time, and must be before it.)
#[test]
fn resolving_reverting_and_editing_work_on_a_scheduled_version() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let tue = ml.save(effective(TUESDAY, "2026-06-01T00:00:00Z"), "cli:test").unwrap();
    let thu = ml.save(effective(THURSDAY, "2127-01-10T00:00:00Z"), "cli:test").unwrap();
    let before = t("2026-12-01T12:00:00Z");
    let conflict = ml.conflicts(Some(ConflictStatus::Resolved)).unwrap()[0].conflict_id;

    ml.revert(conflict, "cli:test").unwrap();
    // Two beliefs again: Tuesday true now, Thursday (its own belief) not yet.
    assert_eq!(ml.show_at(tue.memory_id, before).unwrap().status, ReadStatus::Active);
    assert_eq!(ml.show_at(thu.memory_id, before).unwrap().status, ReadStatus::Scheduled);
    let found = ml.recall_at(QUESTION, None, None, 10, before).unwrap();
    let statuses: Vec<(String, ReadStatus)> = found.results.iter().map(|r| (r.text.clone(), r.status)).collect();
    assert!(statuses.contains(&(TUESDAY.to_string(), ReadStatus::Active)), "{statuses:?}");
    assert!(statuses.contains(&(THURSDAY.to_string(), ReadStatus::Scheduled)), "{statuses:?}");
    assert!(found.notice.is_some(), "the pending conflict is said");

    ml.resolve(conflict, ResolutionAction::KeepNew, None, None, "cli:test").unwrap();
    assert_eq!(recall_at(&ml, before).0, TUESDAY);
    assert_eq!(recall_at(&ml, before).2.len(), 1);

    // An edit of the scheduled version takes effect when the version it edits does.
    let edit = ml.update(thu.memory_id, "The billing team deploys to staging on Thursdays at 10:00", None, "cli:test");
    let edit = edit.unwrap();
    let shown = ml.show_at(edit.memory_id, before).unwrap();
    assert_eq!((shown.status, shown.valid_from), (ReadStatus::Scheduled, t("2127-01-10T00:00:00Z")));
    assert_eq!(recall_at(&ml, before).0, TUESDAY);
    assert_eq!(
        recall_at(&ml, t("2127-02-01T00:00:00Z")).0,
        "The billing team deploys to staging on Thursdays at 10:00"
    );
    assert_rebuild_equal_and_verified(&ml);
}

/// A new fact that takes effect later is recalled as scheduled, not hidden until then.
#[test]
fn a_fact_with_nothing_true_yet_is_recalled_as_scheduled() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let moved = ml.save(effective("The Lisbon office moves to Porto", "2027-03-01T00:00:00Z"), "cli:test").unwrap();
    let found = ml.recall_at("where is the Lisbon office", None, None, 10, t("2026-12-01T00:00:00Z")).unwrap();
    assert_eq!(found.results.len(), 1);
    assert_eq!((found.results[0].memory_id, found.results[0].status), (moved.memory_id, ReadStatus::Scheduled));
    let found = ml.recall_at("where is the Lisbon office", None, None, 10, t("2027-03-02T00:00:00Z")).unwrap();
    assert_eq!(found.results[0].status, ReadStatus::Active);
}

/// Late-arriving older claims form a timeline that does not overlap, whatever their order.
#[test]
fn older_claims_arriving_late_end_where_the_next_one_starts() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let mon = ml.save(effective("The billing team deploys to staging on Mondays", "2027-01-10T00:00:00Z"), "cli:test");
    let mon = mon.unwrap();
    ml.save(effective(TUESDAY, "2026-01-05T00:00:00Z"), "cli:test").unwrap();
    ml.save(effective("The billing team deploys to staging on Fridays", "2026-05-04T00:00:00Z"), "cli:test").unwrap();
    let h = ml.history_at(mon.memory_id, t("2026-12-01T00:00:00Z")).unwrap();
    let mut timeline: Vec<(Timestamp, Option<Timestamp>, ReadStatus)> =
        h.versions.iter().map(|v| (v.valid_from, v.valid_to, v.status)).collect();
    timeline.sort();
    assert_eq!(
        timeline,
        vec![
            (t("2026-01-05T00:00:00Z"), Some(t("2026-05-04T00:00:00Z")), ReadStatus::Stale),
            (t("2026-05-04T00:00:00Z"), Some(t("2027-01-10T00:00:00Z")), ReadStatus::Active),
            (t("2027-01-10T00:00:00Z"), None, ReadStatus::Scheduled),
        ]
    );
    assert_eq!(ml.show_at(mon.memory_id, t("2026-03-01T00:00:00Z")).unwrap().status, ReadStatus::Scheduled);
    assert_rebuild_equal_and_verified(&ml);
}

/// The same source saying the same thing again is provenance, not another vote.
#[test]
fn the_same_source_again_is_one_independent_source() {
    let dir = tempfile::tempdir().unwrap();
    let ml = open(dir.path());
    let from = |origin: Option<&str>| SaveRequest {
        text: "The billing service runs on Postgres 16".into(),
        origin: origin.map(str::to_string),
        ..SaveRequest::default()
    };
    let first = ml.save(from(Some("transcript:2026-11-03")), "agent:a").unwrap();
    ml.save(from(Some("transcript:2026-11-03")), "agent:b").unwrap();
    let m = ml.show(first.memory_id).unwrap();
    assert_eq!((m.merged_count, m.independent_sources), (1, 1));
    assert_eq!(m.sources, vec!["transcript:2026-11-03".to_string()]);
    ml.save(from(Some("slack:#billing")), "agent:a").unwrap();
    ml.save(from(None), "cli:test").unwrap();
    ml.save(from(None), "cli:test").unwrap();
    let m = ml.show(first.memory_id).unwrap();
    assert_eq!((m.merged_count, m.independent_sources), (4, 3));
    assert_eq!(m.sources, vec!["transcript:2026-11-03".to_string(), "slack:#billing".to_string()]);
    assert_rebuild_equal_and_verified(&ml);
}
