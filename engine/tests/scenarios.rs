//! Given/when/then scenarios of the belief pipeline: every row of the memloom outcome table,
//! the SPYN3 test list, resolutions and their reverts. After each, `rebuild` gives the same views
//! and `verify` is ok.

use memledger_engine::*;
use memledger_schemas::*;

use crate::support::{dumps, req};

struct Store {
    _dir: tempfile::TempDir,
    ml: Memledger,
}

fn store() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    Store { _dir: dir, ml }
}

fn at(text: &str, effective_at: &str) -> SaveRequest {
    SaveRequest { text: text.into(), effective_at: Some(effective_at.into()), ..SaveRequest::default() }
}

impl Store {
    fn save(&self, r: SaveRequest) -> SaveResult {
        self.ml.save(r, "cli:test").unwrap()
    }
    fn text(&self, text: &str) -> SaveResult {
        self.save(req(text))
    }
    fn active_texts(&self) -> Vec<String> {
        let mut t: Vec<String> =
            self.ml.list(None, None, Some(Status::Active), usize::MAX).unwrap().into_iter().map(|m| m.text).collect();
        t.sort();
        t
    }
    /// The status as the belief view holds it (no change here is scheduled).
    fn status(&self, id: MemoryId) -> Status {
        self.ml.show(id).unwrap().status.as_str().parse().unwrap()
    }
    fn dumps(&self) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        dumps(&self.ml)
    }
    /// Then: a rebuild gives the same bytes, and verify is ok.
    fn assert_rebuild_equal_and_verified(&self) {
        let before = self.dumps();
        self.ml.rebuild(None, &mut |_| {}).unwrap();
        assert_eq!(self.dumps(), before, "rebuilt views equal the incremental ones");
        let v = self.ml.verify().unwrap();
        assert!(v.ledger.ok && v.views_consistent, "{v:?}");
    }
}

// --- memloom's outcome table -------------------------------------------------------------

#[test]
fn the_exact_same_text_again_is_merged() {
    let s = store();
    let first = s.text("The billing service runs on Postgres 16");
    let again = s.text("The billing service runs on Postgres 16");
    assert_eq!(again.outcome, Outcome::Merged);
    assert_eq!(again.memory_id, first.memory_id);
    assert_eq!(s.active_texts().len(), 1);
    let why = s.ml.why(first.memory_id, None).unwrap();
    assert_eq!(why.len(), 1);
    assert_eq!(
        (why[0].method, why[0].gate.as_str(), why[0].outcome),
        (Method::Exact, "content_hash", PairOutcome::Merged)
    );
    s.assert_rebuild_equal_and_verified();
}

#[test]
fn a_reworded_fact_is_a_new_version() {
    let s = store();
    let first = s.text("Priya prefers dark mode in every editor");
    let second = s.text("Priya prefers dark mode in all her editors");
    assert_eq!(second.outcome, Outcome::Versioned, "{:?}", s.ml.why(second.memory_id, None).unwrap());
    assert_eq!((second.root_id, second.version), (first.memory_id, 2));
    assert_eq!(s.status(first.memory_id), Status::Stale);
    assert_eq!(s.active_texts(), vec!["Priya prefers dark mode in all her editors".to_string()]);
    let h = s.ml.history(first.memory_id).unwrap();
    assert_eq!(h.versions.iter().map(|v| v.version).collect::<Vec<_>>(), vec![2, 1]);
    assert!(h.edges.iter().any(|e| e.edge.kind == EdgeKind::Replaces && e.edge.from == second.memory_id));
    s.assert_rebuild_equal_and_verified();
}

#[test]
fn a_related_fact_that_can_coexist_is_added() {
    let s = store();
    s.text("The billing team deploys to staging on Tuesdays");
    let other = s.text("The billing team deploys to production on Thursdays");
    assert_eq!(other.outcome, Outcome::Added);
    assert_eq!(s.active_texts().len(), 2);
    s.assert_rebuild_equal_and_verified();
}

#[test]
fn a_contradiction_is_a_pending_conflict_with_both_active() {
    let s = store();
    let old = s.text("The billing service runs on Postgres 16");
    let new = s.text("The billing service runs on Postgres 17");
    assert_eq!(new.outcome, Outcome::Conflict);
    let cid = new.conflict_id.unwrap();
    assert_eq!(s.status(old.memory_id), Status::Active);
    assert_eq!(s.status(new.memory_id), Status::Active);
    assert_eq!(s.ml.show(old.memory_id).unwrap().conflicts_with, vec![new.memory_id]);
    let c = s.ml.conflict_record(cid).unwrap();
    assert_eq!(c.status, ConflictStatus::Pending);
    assert_eq!(c.incoming, new.memory_id);
    assert_eq!(c.candidates[0].memory_id, old.memory_id);
    assert!(
        c.candidates[0].reason.contains("16") && c.candidates[0].reason.contains("17"),
        "{}",
        c.candidates[0].reason
    );
    let why = s.ml.why(new.memory_id, Some(old.memory_id)).unwrap();
    assert_eq!(why[0].relation, Relation::Contradictory);
    assert_eq!(why[0].outcome, PairOutcome::ConflictOpened);
    assert!(why[0].thresholds.contains_key("merge_threshold"));
    s.assert_rebuild_equal_and_verified();
}

#[test]
fn update_is_a_new_version_unconditionally() {
    let s = store();
    let first = s.text("the staging db runs on Postgres 16");
    let r = s.ml.update(first.memory_id, "the staging db runs on Postgres 17", Some(1), "cli:test").unwrap();
    assert_eq!((r.root_id, r.version), (first.memory_id, 2));
    assert_eq!(s.status(first.memory_id), Status::Stale);
    // Any version's id names the lineage; a stale expected version is refused and writes nothing.
    let head = s.ml.ledger().head().seq;
    let err = s.ml.update(first.memory_id, "something else", Some(1), "cli:test").unwrap_err();
    assert_eq!(err.exit_code(), 3);
    assert!(err.to_string().contains("current version is 2"), "{err}");
    assert_eq!(s.ml.ledger().head().seq, head);
    s.assert_rebuild_equal_and_verified();
}

// --- the SPYN3 test list -----------------------------------------------------------------

#[test]
fn the_same_extraction_event_twice_has_one_effect() {
    let s = store();
    let r = SaveRequest {
        idempotency_key: Some("session-7/fact-3".into()),
        ..req("billing deploys to staging on Tuesdays")
    };
    let first = s.save(r.clone());
    let head = s.ml.ledger().head().seq;
    let second = s.save(r);
    assert!(second.replayed && !first.replayed);
    assert_eq!(
        (second.outcome, second.memory_id, second.seqs.clone()),
        (first.outcome, first.memory_id, first.seqs.clone())
    );
    assert_eq!(s.ml.ledger().head().seq, head, "nothing written");
}

#[test]
fn an_enrichment_survives_later_updates() {
    let s = store();
    let plain = s.text("deploy Tuesday");
    let rich = s.text("deploy Tuesday after integration tests pass");
    assert_eq!(rich.outcome, Outcome::Versioned);
    assert_eq!(rich.root_id, plain.memory_id);
    // A later restatement without the condition adds nothing: merged, the condition stays current.
    let restated = s.text("deploy Tuesday");
    assert_eq!(restated.outcome, Outcome::Merged);
    assert_eq!(s.active_texts(), vec!["deploy Tuesday after integration tests pass".to_string()]);
    s.assert_rebuild_equal_and_verified();
}

#[test]
fn an_older_transcript_after_the_change_does_not_reverse_it() {
    let s = store();
    let tue = s.save(at("The billing team deploys to staging on Tuesdays", "2026-01-05T09:00:00Z"));
    let thu = s.save(at("The billing team deploys to staging on Thursdays", "2026-03-02T09:00:00Z"));
    assert_eq!(thu.outcome, Outcome::Versioned, "a later-effective contradiction is current");
    assert!(thu.settled_by_effective_time);
    assert_eq!(s.status(tue.memory_id), Status::Stale);
    // The old transcript arrives again, later, with its old effective time.
    let late = s.save(at("The billing team deploys to staging on Tuesdays", "2026-01-05T09:00:00Z"));
    assert_eq!(late.outcome, Outcome::Historical);
    assert_eq!(s.active_texts(), vec!["The billing team deploys to staging on Thursdays".to_string()]);
    // Settled conflicts are conflict records too, listed as resolved by effective time.
    let resolved = s.ml.conflicts(Some(ConflictStatus::Resolved)).unwrap();
    assert_eq!(resolved.len(), 2);
    assert!(resolved.iter().all(|c| c.resolution.as_ref().unwrap().by == "effective_time"));
    s.assert_rebuild_equal_and_verified();
}

#[test]
fn a_production_schedule_beside_a_staging_one_is_a_separate_fact() {
    let s = store();
    s.text("The billing service deploys to staging on Tuesdays");
    let prod = s.text("The billing service deploys to production on Tuesdays");
    assert_eq!(prod.outcome, Outcome::Added);
    assert_eq!(s.active_texts().len(), 2);
    assert!(s.ml.conflicts(None).unwrap().is_empty());
}

#[test]
fn two_compare_and_set_updates_racing_on_one_version_one_wins() {
    let s = store();
    let base = s.text("the release train leaves on Wednesday");
    let ml = &s.ml;
    let results: Vec<Result<_, EngineError>> = std::thread::scope(|scope| {
        let a = scope
            .spawn(|| ml.update(base.memory_id, "the release train leaves on Wednesday at noon", Some(1), "agent:a"));
        let b = scope
            .spawn(|| ml.update(base.memory_id, "the release train leaves on Wednesday after QA", Some(1), "agent:b"));
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    let wins = results.iter().filter(|r| r.is_ok()).count();
    let losses: Vec<&EngineError> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(wins, 1);
    assert_eq!(losses.len(), 1);
    assert_eq!(losses[0].exit_code(), 3);
    assert_eq!(s.ml.history(base.memory_id).unwrap().versions.len(), 2);
}

#[test]
fn synced_saves_in_flight_together_are_each_durable_and_a_repeated_key_is_saved_once() {
    // Eight threads save at once: each commits under the write lock and syncs after it, sharing
    // syncs; a key another thread committed (its sync maybe still to come) answers as a replay.
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    let results: Vec<(String, SaveResult)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let ml = &ml;
                scope.spawn(move || {
                    (0..25)
                        .map(|i| {
                            // Every fifth save repeats a key each thread uses.
                            let key = if i % 5 == 0 { format!("shared-{i}") } else { format!("own-{t}-{i}") };
                            let text = format!("thread {t} note {i}: service {} builds in {} minutes", t * 25 + i, i);
                            let r = SaveRequest { idempotency_key: Some(key.clone()), ..req(&text) };
                            (key, ml.save(r, "agent:writer").unwrap())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut by_key: std::collections::BTreeMap<&str, Vec<&SaveResult>> = Default::default();
    for (key, r) in &results {
        by_key.entry(key).or_default().push(r);
    }
    assert_eq!(by_key.len(), 8 * 20 + 5);
    for (key, saved) in &by_key {
        let first = saved[0].memory_id;
        assert!(saved.iter().all(|r| r.memory_id == first), "{key} answered with one memory");
        assert_eq!(saved.iter().filter(|r| !r.replayed).count(), 1, "{key} saved once");
    }
    drop(ml);
    // Reopened, every acknowledged save is there, and the views agree with the ledger.
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    for saved in by_key.values() {
        assert!(ml.show(saved[0].memory_id).is_ok());
    }
    crate::support::assert_rebuild_equal_and_verified(&ml);
}

#[test]
fn contradictory_evidence_without_authority_is_a_visible_pending_conflict() {
    let s = store();
    s.text("Billing deploys to staging on Tuesdays");
    let r = s.text("Billing deploys to staging on Thursdays");
    assert_eq!(r.outcome, Outcome::Conflict);
    assert_eq!(s.ml.conflicts(Some(ConflictStatus::Pending)).unwrap().len(), 1);
    assert_eq!(s.active_texts().len(), 2, "both stay active until a person decides");
}

// --- gates that drop pairs, and audit ------------------------------------------------------

#[test]
fn different_kinds_in_the_related_band_are_a_near_miss_not_a_conflict() {
    let s = store();
    let a = s.save(SaveRequest { memory_type: Some("procedure".into()), ..req("Do not deploy on Tuesday") });
    let b = s.save(SaveRequest { memory_type: Some("preference".into()), ..req("Deploy on Tuesday") });
    assert_eq!(b.outcome, Outcome::Added);
    assert!(s.ml.conflicts(None).unwrap().is_empty());
    let why = s.ml.why(b.memory_id, Some(a.memory_id)).unwrap();
    assert_eq!(why.len(), 1);
    assert_eq!(why[0].gate, "kind_mismatch");
    assert_eq!(why[0].outcome, PairOutcome::NearMiss);
    let edges = s.ml.history(b.memory_id).unwrap().edges;
    assert!(edges.iter().any(|e| e.edge.kind == EdgeKind::NearMiss));
    s.assert_rebuild_equal_and_verified();
}

#[test]
fn different_scopes_are_never_compared() {
    let s = store();
    let a = s.save(SaveRequest { scope: Some("alice".into()), ..req("The billing service runs on Postgres 16") });
    let b = s.save(SaveRequest { scope: Some("bob".into()), ..req("The billing service runs on Postgres 17") });
    let c = s.save(SaveRequest { scope: Some("bob".into()), ..req("The billing service runs on Postgres 16") });
    assert_eq!(b.outcome, Outcome::Added);
    assert_eq!(c.outcome, Outcome::Conflict, "same scope as b");
    assert!(s.ml.why(a.memory_id, None).unwrap().is_empty());
}

#[test]
fn a_fact_key_makes_a_changed_value_a_contradiction_even_without_shared_words() {
    let s = store();
    let a = s.save(SaveRequest { fact_key: Some("billing/deploy-window/staging".into()), ..req("Tuesdays") });
    let b = s.save(SaveRequest { fact_key: Some("billing/deploy-window/staging".into()), ..req("Thursday mornings") });
    assert_eq!(b.outcome, Outcome::Conflict);
    let why = s.ml.why(b.memory_id, Some(a.memory_id)).unwrap();
    assert_eq!(why[0].gate, "fact_key_value_changed");
}

#[test]
fn no_dedup_stores_without_comparing() {
    let s = store();
    s.text("The billing service runs on Postgres 16");
    let r = s.save(SaveRequest { no_dedup: true, ..req("The billing service runs on Postgres 16") });
    assert_eq!(r.outcome, Outcome::Added);
    assert_eq!(s.active_texts().len(), 2);
}

#[test]
fn bad_input_writes_nothing() {
    let s = store();
    s.text("something true");
    let head = s.ml.ledger().head().seq;
    let cases = vec![
        req(""),
        req("   \n "),
        req(&"x".repeat(64 * 1024 + 1)),
        req("nul \0 byte"),
        SaveRequest { memory_type: Some("opinion".into()), ..req("ok") },
        SaveRequest { effective_at: Some("last tuesday".into()), ..req("ok") },
        SaveRequest { scope: Some("".into()), ..req("ok") },
    ];
    for case in cases {
        let err = s.ml.save(case, "cli:test").unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
    }
    assert_eq!(s.ml.ledger().head().seq, head);
}

// --- resolutions and reverts ----------------------------------------------------------------

fn conflicted() -> (Store, SaveResult, SaveResult) {
    let s = store();
    let old = s.text("The billing service runs on Postgres 16");
    let new = s.text("The billing service runs on Postgres 17");
    assert_eq!(new.outcome, Outcome::Conflict);
    (s, old, new)
}

#[test]
fn every_resolution_reverts_exactly_and_can_be_redone_the_other_way() {
    for action in
        [ResolutionAction::KeepNew, ResolutionAction::KeepExisting, ResolutionAction::KeepBoth, ResolutionAction::Merge]
    {
        let (s, old, new) = conflicted();
        let cid = new.conflict_id.unwrap();
        let before = s.dumps();
        let merge =
            (action == ResolutionAction::Merge).then_some("The billing service runs on Postgres 17 since March");
        let r = s.ml.resolve(cid, action, merge, Some("checked with ops".into()), "cli:ana").unwrap();
        let c = s.ml.conflict_record(cid).unwrap();
        assert_eq!(c.status, ConflictStatus::Resolved);
        assert_eq!(c.resolution.as_ref().unwrap().by, "person:cli:ana");
        match action {
            ResolutionAction::KeepNew => {
                assert_eq!(s.status(old.memory_id), Status::Stale);
                let m = s.ml.show(new.memory_id).unwrap();
                assert_eq!(
                    (m.root_id, m.version, m.status.as_str()),
                    (old.memory_id, 2, "active"),
                    "continues the lineage"
                );
                assert_eq!(m.cause, "keep_new");
            }
            ResolutionAction::KeepExisting => {
                assert_eq!(s.status(new.memory_id), Status::Stale);
                assert_eq!(s.status(old.memory_id), Status::Active);
            }
            ResolutionAction::KeepBoth => {
                assert_eq!((s.status(new.memory_id), s.status(old.memory_id)), (Status::Active, Status::Active));
                assert!(s.ml.show(old.memory_id).unwrap().conflicts_with.is_empty());
            }
            ResolutionAction::Merge => {
                let merged = s.ml.show(r.merged_memory_id.unwrap()).unwrap();
                assert_eq!((merged.root_id, merged.version, merged.status.as_str()), (old.memory_id, 2, "active"));
                assert_eq!((s.status(new.memory_id), s.status(old.memory_id)), (Status::Stale, Status::Stale));
            }
        }
        s.assert_rebuild_equal_and_verified();
        // Resolving again is refused; reverting restores the views exactly (but the queue's record
        // of the resolution and the revert, and the merge's observation, which are history).
        assert_eq!(s.ml.resolve(cid, ResolutionAction::KeepBoth, None, None, "cli:ana").unwrap_err().exit_code(), 3);
        s.ml.revert(cid, "cli:ana").unwrap();
        assert_eq!(s.ml.conflict_record(cid).unwrap().status, ConflictStatus::Pending);
        assert_eq!((s.status(new.memory_id), s.status(old.memory_id)), (Status::Active, Status::Active));
        let back = s.ml.show(new.memory_id).unwrap();
        assert_eq!((back.root_id, back.version, back.cause.as_str()), (new.memory_id, 1, "added"));
        assert_eq!(s.ml.show(old.memory_id).unwrap().conflicts_with, vec![new.memory_id]);
        let after = s.dumps();
        let edges_idx = s.ml.views().names().iter().position(|n| *n == "edges").unwrap();
        let strip = |d: &Vec<(Vec<u8>, Vec<u8>)>| {
            d.iter().filter(|(k, _)| !k.starts_with(b"\x00")).cloned().collect::<Vec<_>>()
        };
        assert_eq!(strip(&after[edges_idx]), strip(&before[edges_idx]), "edges exactly as before ({action})");
        // ...and it can be resolved the other way.
        s.ml.resolve(cid, ResolutionAction::KeepExisting, None, None, "cli:ana").unwrap();
        s.ml.revert(cid, "cli:ana").unwrap();
        s.ml.resolve(cid, ResolutionAction::KeepNew, None, None, "cli:ana").unwrap();
        s.assert_rebuild_equal_and_verified();
        let c = s.ml.conflict_record(cid).unwrap();
        assert_eq!((c.resolutions.len(), c.reverts.len()), (3, 2));
    }
}

#[test]
fn resolving_a_conflict_whose_sides_changed_is_refused() {
    let (s, old, new) = conflicted();
    s.ml.update(old.memory_id, "The billing service runs on Postgres 16.4", None, "cli:ana").unwrap();
    let head = s.ml.ledger().head().seq;
    let err = s.ml.resolve(new.conflict_id.unwrap(), ResolutionAction::KeepNew, None, None, "cli:ana").unwrap_err();
    assert_eq!(err.exit_code(), 3, "{err}");
    assert_eq!(s.ml.ledger().head().seq, head);
}

#[test]
fn an_effective_time_settlement_is_revertible() {
    let s = store();
    let tue = s.save(at("The billing team deploys to staging on Tuesdays", "2026-01-05T09:00:00Z"));
    let thu = s.save(at("The billing team deploys to staging on Thursdays", "2026-03-02T09:00:00Z"));
    let cid = thu.conflict_id.unwrap();
    s.ml.revert(cid, "cli:ana").unwrap();
    assert_eq!((s.status(tue.memory_id), s.status(thu.memory_id)), (Status::Active, Status::Active));
    assert_eq!(s.ml.conflict_record(cid).unwrap().status, ConflictStatus::Pending);
    s.assert_rebuild_equal_and_verified();
}

#[test]
fn forget_retires_and_keeps_history() {
    let s = store();
    let a = s.text("Marco is on call this week");
    s.ml.forget(a.memory_id, Some("rotation ended".into()), "cli:ana").unwrap();
    assert_eq!(s.status(a.memory_id), Status::Retired);
    assert!(s.active_texts().is_empty());
    // A retired memory is not a dedup candidate: the same text again is a new belief.
    assert_eq!(s.text("Marco is on call this week").outcome, Outcome::Added);
    assert_eq!(s.ml.history(a.memory_id).unwrap().versions[0].status, Status::Retired);
    s.assert_rebuild_equal_and_verified();
}

/// Several active memories with one text (saved without dedup): an exact duplicate merges into
/// the lowest id among them; once that one is forgotten, into the next; once none is active, the
/// text is a new belief again. (The content-hash index holds one list of ids per text.)
#[test]
fn an_exact_duplicate_merges_into_an_active_copy_while_one_is_left() {
    let s = store();
    let text = "Hana has a dog called Mochi";
    let mut active: Vec<MemoryId> =
        (0..3).map(|_| s.save(SaveRequest { no_dedup: true, ..req(text) }).memory_id).collect();
    active.sort();
    while let Some(&lowest) = active.first() {
        let again = s.text(text);
        assert_eq!((again.outcome, again.memory_id), (Outcome::Merged, lowest));
        s.ml.forget(lowest, None, "cli:test").unwrap();
        active.remove(0);
    }
    assert_eq!(s.text(text).outcome, Outcome::Added);
    s.assert_rebuild_equal_and_verified();
}
