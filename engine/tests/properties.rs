//! Properties of the whole pipeline:
//! - the same claims with fixed, distinct effective times, some of them scheduled after the time
//!   read at, saved in any order, yield the same current and scheduled beliefs;
//! - after any sequence of commands (some saves with an expiry), a full rebuild equals the
//!   incrementally maintained views.

use memledger_engine::*;
use memledger_schemas::*;
use proptest::prelude::*;

use crate::support::manifest_dir;

fn open() -> (tempfile::TempDir, Memledger) {
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    (dir, ml)
}

/// Duplicates, rewordings, enrichments (two of one version), contradictions and distinct facts,
/// each with its own
/// effective time.
const CLAIMS: &[(&str, &str)] = &[
    ("The billing team deploys to staging on Tuesdays", "2026-01-05T09:00:00Z"),
    ("The billing team deploys to staging on Thursdays", "2026-03-02T09:00:00Z"),
    ("The billing team deploys to staging on Fridays", "2026-05-04T09:00:00Z"),
    ("The billing service runs on Postgres 16", "2026-01-10T09:00:00Z"),
    ("The billing service runs on Postgres 17", "2026-04-10T09:00:00Z"),
    ("deploy the search service on Monday", "2026-02-01T09:00:00Z"),
    ("deploy the search service on Monday after integration tests pass", "2026-02-03T09:00:00Z"),
    ("Priya prefers dark mode in every editor", "2026-01-20T09:00:00Z"),
    ("Priya prefers dark mode in all her editors", "2026-02-20T09:00:00Z"),
    ("Hana has a dog called Mochi", "2026-01-02T09:00:00Z"),
    ("Hana has a dog called Mochi", "2026-06-02T09:00:00Z"),
    ("The warehouse keeps raw events for 13 months", "2026-01-03T09:00:00Z"),
    // Two enrichments of one version: both stay current, whichever comes first.
    ("Ana works at Acme", "2026-01-04T09:00:00Z"),
    ("Ana works at Acme as a data engineer", "2026-02-04T09:00:00Z"),
    ("Ana works at Acme in Lisbon", "2026-02-05T09:00:00Z"),
    // Scheduled at the time read at below.
    ("The billing team deploys to staging on Mondays", "2027-01-10T09:00:00Z"),
    ("The billing service runs on Postgres 18", "2027-03-01T09:00:00Z"),
];

/// The time the beliefs are read at: after every claim but the scheduled ones.
const READ_AT: &str = "2026-12-01T00:00:00Z";

/// The active texts at [`READ_AT`], the scheduled ones then, and the active ones once every
/// scheduled change has come: each sorted.
fn current_beliefs(order: &[usize]) -> [Vec<String>; 3] {
    let (_dir, ml) = open();
    for &i in order {
        let (text, t) = CLAIMS[i];
        let req = SaveRequest { text: text.into(), effective_at: Some(t.into()), ..SaveRequest::default() };
        ml.save(req, "cli:prop").unwrap();
    }
    let at = Timestamp::parse_rfc3339(READ_AT).unwrap();
    let texts = |status: validity::ReadStatus, at: Timestamp| {
        let mut texts: Vec<String> =
            ml.list_at(None, None, Some(status), usize::MAX, at).unwrap().into_iter().map(|m| m.text).collect();
        texts.sort();
        texts
    };
    let end = validity::END_OF_TIME;
    [
        texts(validity::ReadStatus::Active, at),
        texts(validity::ReadStatus::Scheduled, at),
        texts(validity::ReadStatus::Active, end),
    ]
}

#[test]
fn claims_in_arrival_order_give_the_expected_beliefs() {
    let order: Vec<usize> = (0..CLAIMS.len()).collect();
    let [now, scheduled, later] = current_beliefs(&order);
    assert_eq!(
        now,
        vec![
            "Ana works at Acme as a data engineer",
            "Ana works at Acme in Lisbon",
            "Hana has a dog called Mochi",
            "Priya prefers dark mode in all her editors",
            "The billing service runs on Postgres 17",
            "The billing team deploys to staging on Fridays",
            "The warehouse keeps raw events for 13 months",
            "deploy the search service on Monday after integration tests pass",
        ]
    );
    assert_eq!(
        scheduled,
        vec!["The billing service runs on Postgres 18", "The billing team deploys to staging on Mondays"]
    );
    assert_eq!(
        later,
        vec![
            "Ana works at Acme as a data engineer",
            "Ana works at Acme in Lisbon",
            "Hana has a dog called Mochi",
            "Priya prefers dark mode in all her editors",
            "The billing service runs on Postgres 18",
            "The billing team deploys to staging on Mondays",
            "The warehouse keeps raw events for 13 months",
            "deploy the search service on Monday after integration tests pass",
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_arrival_order_gives_the_same_current_beliefs(order in Just((0..CLAIMS.len()).collect::<Vec<usize>>()).prop_shuffle()) {
        let expected = current_beliefs(&(0..CLAIMS.len()).collect::<Vec<_>>());
        prop_assert_eq!(current_beliefs(&order), expected, "order {:?}", order);
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// A text, whether typed, and a variant: 0 and 5 plain, 1 effective in the past, 2
    /// effective far ahead (scheduled), 3 expired in the past, 4 expiring in a week, 6 without
    /// dedup (so several active memories can share a content hash), 7–9 with one of three fact
    /// keys.
    Save(usize, bool, u8),
    Update(usize, usize),
    Forget(usize),
    Resolve(usize, usize),
    Revert(usize),
}

const TEXTS: &[&str] = &[
    "The billing service runs on Postgres 16",
    "The billing service runs on Postgres 17",
    "The billing team deploys to staging on Tuesdays",
    "The billing team deploys to staging on Thursdays",
    "The billing team deploys to production on Tuesdays",
    "deploy Tuesday",
    "deploy Tuesday after integration tests pass",
    "Do not deploy on Tuesday",
    "Marco likes long status meetings",
    "Marco dislikes long status meetings",
    "Hana has a dog called Mochi",
    "Ana works at Acme",
    "Ana works at Acme as a data engineer",
    "Ana works at Acme in Lisbon",
];

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..TEXTS.len(), any::<bool>(), 0..10u8).prop_map(|(t, typed, variant)| Op::Save(t, typed, variant)),
        1 => (0..8usize, 0..TEXTS.len()).prop_map(|(m, t)| Op::Update(m, t)),
        1 => (0..8usize).prop_map(Op::Forget),
        2 => (0..4usize, 0..4usize).prop_map(|(c, a)| Op::Resolve(c, a)),
        1 => (0..4usize).prop_map(Op::Revert),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn rebuild_equals_incremental(ops in proptest::collection::vec(arb_op(), 1..40)) {
        let (_dir, ml) = open();
        let mut memories: Vec<MemoryId> = Vec::new();
        for op in &ops {
            // Commands may be refused (exit 3: state changed); that is part of the property.
            match *op {
                Op::Save(t, typed, variant) => {
                    let req = SaveRequest {
                        text: TEXTS[t].into(),
                        memory_type: typed.then(|| "procedure".to_string()),
                        no_dedup: variant == 6,
                        fact_key: (variant >= 7).then(|| format!("fact.{variant}")),
                        effective_at: match variant {
                            1 => Some("2026-03-01T00:00:00Z".to_string()),
                            2 => Some("2127-01-10T00:00:00Z".to_string()),
                            _ => None,
                        },
                        expires_at: (variant == 3).then(|| "2026-02-01T00:00:00Z".to_string()),
                        ttl: (variant == 4).then(|| "7d".to_string()),
                        ..SaveRequest::default()
                    };
                    let r = ml.save(req, "cli:prop").unwrap();
                    memories.push(r.memory_id);
                }
                Op::Update(m, t) if !memories.is_empty() => {
                    let _ = ml.update(memories[m % memories.len()], TEXTS[t], None, "cli:prop");
                }
                Op::Forget(m) if !memories.is_empty() => {
                    let _ = ml.forget(memories[m % memories.len()], None, "cli:prop");
                }
                Op::Resolve(c, a) => {
                    let all = ml.conflicts(None).unwrap();
                    if !all.is_empty() {
                        let action = ResolutionAction::ALL[a % 4];
                        let text = (action == ResolutionAction::Merge).then_some("the reconciled truth");
                        let _ = ml.resolve(all[c % all.len()].conflict_id, action, text, None, "cli:prop");
                    }
                }
                Op::Revert(c) => {
                    let all = ml.conflicts(None).unwrap();
                    if !all.is_empty() {
                        let _ = ml.revert(all[c % all.len()].conflict_id, "cli:prop");
                    }
                }
                _ => {}
            }
            // The pipeline's in-memory term postings follow every command exactly.
            let cache = ml.term_cache_disagreement().unwrap();
            prop_assert!(cache.is_none(), "term cache after {:?}: {:?}", op, cache);
        }
        let names = ml.views().names();
        let incremental: Vec<_> = names.iter().map(|n| ml.views().dump(ml.ledger(), n).unwrap()).collect();
        ml.rebuild(None, &mut |_| {}).unwrap();
        let rebuilt: Vec<_> = names.iter().map(|n| ml.views().dump(ml.ledger(), n).unwrap()).collect();
        prop_assert!(incremental == rebuilt, "views differ after {:?}", ops);
        // In chunks of 3 events, a record is often written in one chunk and read by the next
        // while the first is still being written. Each view rebuilt alone skips the events it
        // says it ignores.
        ml.views().set_rebuild_chunk(3);
        ml.rebuild(None, &mut |_| {}).unwrap();
        let rebuilt: Vec<_> = names.iter().map(|n| ml.views().dump(ml.ledger(), n).unwrap()).collect();
        prop_assert!(incremental == rebuilt, "views differ after a rebuild in chunks of 3, after {:?}", ops);
        for (name, before) in names.iter().zip(&incremental) {
            ml.rebuild(Some(&[name]), &mut |_| {}).unwrap();
            let alone = ml.views().dump(ml.ledger(), name).unwrap();
            prop_assert!(&alone == before, "view {} differs when rebuilt alone, after {:?}", name, ops);
        }
        // After a rebuild rewrote the views under it, the term cache still answers exactly what
        // the view holds, save after save.
        for text in TEXTS {
            ml.save(SaveRequest { text: (*text).into(), ..SaveRequest::default() }, "cli:prop").unwrap();
            let cache = ml.term_cache_disagreement().unwrap();
            prop_assert!(cache.is_none(), "term cache after a rebuild and a save: {:?}", cache);
        }
        let v = ml.verify().unwrap();
        prop_assert!(v.ledger.ok && v.views_consistent);
    }
}

/// On a realistic stream of consistent facts about people and projects, conflicts are rare.
#[test]
fn a_consistent_stream_opens_almost_no_conflicts() {
    let path = &format!("{}/../tests/fixtures/consistent_stream.jsonl", manifest_dir().display());
    let text = std::fs::read_to_string(path).unwrap();
    let (_dir, ml) = open();
    let mut saves = 0usize;
    let mut conflicts = 0usize;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let req: SaveRequest = serde_json::from_str(line).unwrap();
        let r = ml.save(req, "agent:stream").unwrap();
        saves += 1;
        if r.outcome == Outcome::Conflict {
            conflicts += 1;
        }
    }
    let rate = conflicts as f64 / saves as f64;
    println!("consistent stream: {saves} saves, {conflicts} conflicts ({:.2}%)", rate * 100.0);
    assert!(saves >= 300);
    assert!(rate < 0.01, "{conflicts} of {saves} saves opened a conflict");
}
