//! The projection contract seen from the engine: a view whose stored version differs from the
//! code's is rebuilt on open with a note; views behind the ledger catch up on open.

use memledger_engine::{Memledger, OpenOptions, SaveRequest};

use crate::support::{dumps, save};

#[test]
fn a_view_of_another_version_is_rebuilt_on_open_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
        save(&ml, "The billing service runs on Postgres 16");
        save(&ml, "The billing service runs on Postgres 17");
        assert!(ml.notes().is_empty());
        // Pretend an older build wrote the edges view: version 0, and a stray record.
        let mut batch = memledger_ledger::store::Batch::default();
        let mut checkpoint = 0u32.to_be_bytes().to_vec();
        checkpoint.extend_from_slice(&ml.ledger().head().seq.to_be_bytes());
        batch.put("edges", b"\x00checkpoint", checkpoint);
        batch.put("edges", b"zz-left-by-an-old-layout", vec![1, 2, 3]);
        ml.ledger().store().write(batch, true).unwrap();
        dumps(&ml)
    };
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    assert_eq!(ml.notes().len(), 1, "{:?}", ml.notes());
    assert!(ml.notes()[0].contains("edges") && ml.notes()[0].contains("reindexing"), "{:?}", ml.notes());
    let after = dumps(&ml);
    assert_ne!(after, before, "the stray record and the old checkpoint are gone");
    assert!(ml.verify().unwrap().views_consistent);
}

#[test]
fn views_behind_the_ledger_catch_up_on_open() {
    use memledger_ledger::{CommandMeta, NewEvent};
    use memledger_schemas::*;
    let dir = tempfile::tempdir().unwrap();
    {
        let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
        save(&ml, "Hana has a dog called Mochi");
        // A command whose synced append landed but whose (unsynced) view write did not: append
        // straight to the ledger, as if the process died right after.
        let id = MemoryId::random();
        let text = "The warehouse keeps raw events for 13 months";
        let events: Vec<NewEvent> = vec![
            EventBody::MemoryObserved(MemoryObserved {
                memory_id: id,
                text: text.into(),
                memory_type: MemoryType::Fact,
                scope: "personal".into(),
                source: None,
                fact_key: None,
                effective_at: None,
                content_hash: chain::content_hash(text),
                dedup: true,
                evidence: None,
                origin: None,
                expires_at: None,
                ttl_seconds: None,
            })
            .into(),
            EventBody::BeliefAdded(BeliefAdded { memory_id: id }).into(),
        ];
        let head = ml.ledger().head().seq;
        ml.ledger().append(head, &CommandMeta::new("cli:test"), events).unwrap();
        assert_eq!(ml.list(None, None, None, 10).unwrap().len(), 1, "the views have not seen it");
    }
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    assert!(ml.notes().is_empty());
    assert_eq!(ml.list(None, None, None, 10).unwrap().len(), 2, "caught up on open");
    let caught_up = dumps(&ml);
    // The text index, where candidate search reads terms, caught up too: a save that contradicts
    // the memory the views had not seen finds it.
    let r = ml
        .save(
            SaveRequest { text: "The warehouse keeps raw events for 14 months".into(), ..Default::default() },
            "cli:test",
        )
        .unwrap();
    assert_eq!(r.outcome, memledger_engine::Outcome::Conflict, "{r:?}");
    assert_eq!(ml.term_cache_disagreement().unwrap(), None);
    let caught_up_and_saved = dumps(&ml);
    ml.rebuild(None, &mut |_| {}).unwrap();
    assert_eq!(dumps(&ml), caught_up_and_saved);
    assert_ne!(caught_up, caught_up_and_saved);
}

/// An import appends events and brings the views up without going through a commit: the
/// pipeline's in-memory term postings must not keep what they read before it.
#[test]
fn an_import_leaves_no_stale_term_postings_in_memory() {
    let source = tempfile::tempdir().unwrap();
    let x = Memledger::open(source.path(), &OpenOptions::default()).unwrap();
    let first = x
        .save(SaveRequest { text: "The billing service runs on Postgres 16".into(), ..Default::default() }, "cli:test")
        .unwrap();
    save(&x, "The billing team deploys to staging on Tuesdays");
    let mut stream = Vec::new();
    x.export(0, &mut stream).unwrap();
    let stream = String::from_utf8(stream).unwrap();
    let last_of_first = *first.seqs.last().unwrap();
    let prefix: String = stream
        .lines()
        .filter(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["seq"].as_u64().is_none_or(|s| s <= last_of_first)
        })
        .map(|l| format!("{l}\n"))
        .collect();

    let target = tempfile::tempdir().unwrap();
    let y = Memledger::open(target.path(), &OpenOptions::default()).unwrap();
    y.import(&mut prefix.as_bytes()).unwrap();
    // A dry-run scan runs the pipeline's candidate search over every active memory: "billing"
    // and the rest are now cached with one holder each.
    let dry = memledger_engine::scan::ScanOptions { dry_run: true, ..Default::default() };
    y.scan_conflicts(&dry, "cli:test").unwrap();
    assert_eq!(y.term_cache_disagreement().unwrap(), None);
    let report = y.import(&mut stream.as_bytes()).unwrap();
    assert!(report.appended > 0, "the second save's events were appended");
    assert_eq!(y.term_cache_disagreement().unwrap(), None);
}

/// A common term's cached holders: with a small candidate budget (a save reads only the first
/// few in id order) and hundreds of memories sharing "billing", loads, inserts, removals and
/// commits of the text index between them all leave the cache agreeing with the belief view.
#[test]
fn a_common_terms_cached_holders_follow_inserts_and_removals() {
    use memledger_engine::{Durability, EngineConfig};
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig { candidate_budget: 8, ..EngineConfig::default() };
    let ml = Memledger::open_with(dir.path(), &OpenOptions::default(), config).unwrap();
    let plain = |i: usize| SaveRequest {
        text: format!("billing ledger entry {i} filed by desk {}", i * 7919 % 1000),
        no_dedup: true,
        ..SaveRequest::default()
    };
    let probe = |n: usize| SaveRequest { text: format!("billing desk review number {n}"), ..SaveRequest::default() };
    // Read while "billing" has no holder yet.
    ml.save_with(probe(100), "cli:test", Durability::Deferred).unwrap();
    let mut ids = Vec::new();
    for i in 0..700 {
        ids.push(ml.save_with(plain(i), "cli:test", Durability::Deferred).unwrap().memory_id);
    }
    assert_eq!(ml.term_cache_disagreement().unwrap(), None);
    // A save with dedup reads "billing" within the budget: the first of its 700 holders.
    ml.save_with(probe(0), "cli:test", Durability::Deferred).unwrap();
    assert_eq!(ml.term_cache_disagreement().unwrap(), None);
    for round in 0..8 {
        for i in 0..120 {
            let n = 1000 + round * 120 + i;
            ids.push(ml.save_with(plain(n), "cli:test", Durability::Deferred).unwrap().memory_id);
        }
        for k in 0..15 {
            let id = ids[(round * 131 + k * 37) % ids.len()];
            let _ = ml.forget(id, None, "cli:test");
        }
        ml.save_with(probe(round + 1), "cli:test", Durability::Deferred).unwrap();
        if round % 3 == 2 {
            // A recall commits the text index: later loads of other terms read that commit.
            ml.recall("billing", None, None, 1).unwrap();
        }
        let cache = ml.term_cache_disagreement().unwrap();
        assert_eq!(cache, None, "after round {round}");
    }
    ml.sync().unwrap();
}

/// A term's holders are read from the text index for one scope: a memory of another scope is
/// never a candidate, whether the term was loaded from a commit (after a reopen) or followed in
/// memory.
#[test]
fn candidates_never_cross_scopes() {
    use memledger_engine::Outcome;
    let dir = tempfile::tempdir().unwrap();
    let in_scope =
        |scope: &str, text: &str| SaveRequest { text: text.into(), scope: Some(scope.into()), ..Default::default() };
    {
        let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
        ml.save(in_scope("work", "The billing service runs on Postgres 16"), "cli:test").unwrap();
    }
    // Reopened: "billing" and the rest are loaded from the committed index, which holds "work".
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    let home = ml.save(in_scope("home", "The billing service runs on Postgres 17"), "cli:test").unwrap();
    assert_eq!(home.outcome, Outcome::Added, "{home:?}");
    let work = ml.save(in_scope("work", "The billing service runs on Postgres 17"), "cli:test").unwrap();
    assert_eq!(work.outcome, Outcome::Conflict, "{work:?}");
    assert_eq!(ml.term_cache_disagreement().unwrap(), None);
}

/// `verify` checks the text index too: an index whose checkpoint claims commands it does not hold
/// (its commit payload edited to a later seq) is reported as the view `text`, and a rebuild
/// mends it.
#[test]
fn verify_reports_a_text_index_that_misses_memories() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join(memledger_projector::text_index::DIR_NAME);
    let snapshot = tempfile::tempdir().unwrap();
    let copy_files = |from: &std::path::Path, to: &std::path::Path| {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    };
    let head = {
        let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
        save(&ml, "The billing service runs on Postgres 16");
        ml.text_index().flush().unwrap();
        copy_files(&index, snapshot.path());
        save(&ml, "Hana has a dog called Mochi");
        save(&ml, "The warehouse keeps raw events for 13 months");
        assert!(ml.verify().unwrap().views_consistent);
        ml.ledger().head().seq
    };
    std::fs::remove_dir_all(&index).unwrap();
    std::fs::create_dir(&index).unwrap();
    copy_files(snapshot.path(), &index);
    let meta = std::fs::read_to_string(index.join("meta.json")).unwrap();
    let at = meta.find(" seq=").unwrap() + " seq=".len();
    let end = at + meta[at..].find('"').unwrap();
    std::fs::write(index.join("meta.json"), format!("{}{head}{}", &meta[..at], &meta[end..])).unwrap();

    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    let v = ml.verify().unwrap();
    assert!(!v.views_consistent);
    assert_eq!(v.inconsistent_views, ["text"]);
    ml.rebuild(Some(&["text"]), &mut |_| {}).unwrap();
    assert!(ml.verify().unwrap().views_consistent);
}

/// A cache that outgrows its bound is emptied together with a commit of the text index, then
/// loads what it needs from that commit: with a bound of 40 ids, saves reset it again and again,
/// and it agrees with the belief view throughout; a reworded save still finds its original.
#[test]
fn a_term_cache_past_its_bound_starts_again_from_a_commit() {
    use memledger_engine::{Durability, EngineConfig, Outcome};
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig { term_cache_max_ids: 40, ..EngineConfig::default() };
    let ml = Memledger::open_with(dir.path(), &OpenOptions::default(), config).unwrap();
    let first = ml
        .save(SaveRequest { text: "The billing service runs on Postgres 16".into(), ..Default::default() }, "cli:test")
        .unwrap();
    for i in 0..120 {
        let text = format!("Desk {i} files billing ledger entries for region r{}", i % 7);
        ml.save_with(SaveRequest { text, ..Default::default() }, "cli:test", Durability::Deferred).unwrap();
        if i % 10 == 9 {
            assert_eq!(ml.term_cache_disagreement().unwrap(), None, "after save {i}");
        }
    }
    let later = ml
        .save(SaveRequest { text: "The billing service runs on Postgres 17".into(), ..Default::default() }, "cli:test")
        .unwrap();
    assert_eq!(later.outcome, Outcome::Conflict, "{later:?}");
    let conflict = ml.conflicts(None).unwrap().into_iter().find(|c| Some(c.conflict_id) == later.conflict_id).unwrap();
    assert_eq!(conflict.candidates[0].memory_id, first.memory_id);
    assert_eq!(ml.term_cache_disagreement().unwrap(), None);
    assert!(ml.verify().unwrap().views_consistent);
}

/// The audit index sits in an unsorted memtable (docs/adr/0011-unsorted-memtable-for-the-audit-index.md)
/// while the tables the save path reads stay sorted and look keys up in bloom filters; `why` in
/// the process that just wrote the pairs reads them from that memtable, and a reopened store
/// answers the same.
#[test]
fn each_table_is_held_as_it_is_read_and_the_audit_index_still_answers_why() {
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    for text in ["The billing service runs on Postgres 16", "The billing service runs on Postgres 17"] {
        save(&ml, text);
    }
    let one = ml.list(None, None, None, 10).unwrap()[0].memory_id;
    let before = ml.why(one, None).unwrap();
    assert!(!before.is_empty(), "the second save classified a pair, which names both memories");
    drop(ml);
    let options = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap();
    // One option of a table, as the OPTIONS file's section `[KIND "table"]` gives it.
    let option = |kind: &str, table: &str, name: &str| {
        let section = options.split(&format!("[{kind} \"{table}\"]")).nth(1).unwrap();
        let section = section.split("\n[").next().unwrap();
        section.lines().find(|l| l.trim_start().starts_with(&format!("{name}="))).unwrap().trim().to_string()
    };
    let factory = |table: &str| option("CFOptions", table, "memtable_factory");
    assert!(factory("audit").contains("VectorRepFactory"), "{}", factory("audit"));
    assert!(factory("beliefs").contains("SkipListFactory"), "{}", factory("beliefs"));
    // The view tables read while saving look absent keys up in bloom filters; the ledger's own
    // tables and the audit index have none (ledger/src/store.rs, ADR 0006).
    let bloom = |table: &str| {
        let memtable =
            option("CFOptions", table, "memtable_whole_key_filtering") == "memtable_whole_key_filtering=true";
        let files = option("TableOptions/BlockBasedTable", table, "filter_policy").contains("bloomfilter");
        assert_eq!(memtable, files, "{table}");
        memtable
    };
    assert!(bloom("beliefs") && bloom("edges") && bloom("conflicts"));
    assert!(!bloom("audit") && !bloom("events") && !bloom("idempotency") && !bloom("meta"));
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    assert_eq!(format!("{:?}", ml.why(one, None).unwrap()), format!("{before:?}"));
}

/// Two values of one lexicon category are two values of one attribute, so candidate search finds
/// one from the other by their category however little else the texts share, in a scope too
/// crowded with memories sharing their other words to be compared whole; in both orders of
/// saving.
#[test]
fn a_category_value_finds_its_category_mates_in_a_crowded_scope() {
    use memledger_engine::classify::index_terms;
    let pairs = [
        ("Uses VS Code as the main editor.", "Moved over to Neovim full-time."),
        ("Is vegetarian.", "Calls herself pescatarian these days."),
        ("Lives in Lisbon.", "Moved to Porto in the spring."),
        ("Phone: Pixel 8", "Switched to an iPhone last month."),
    ];
    // Each shares a word with the second texts, and none shares a category with them.
    let crowd = [
        "Moved the standup to the big room.",
        "Moved the gym bag to the car.",
        "Moved over the old photos to the NAS.",
        "Switched the lunch order to the Thai place.",
        "Switched off the router overnight.",
        "Calls her mother every Sunday.",
        "Works full-time at the clinic.",
        "The garden looks great in the spring.",
        "These days the commute takes an hour.",
        "Last month the team offsite was fun.",
        "Herself a runner, she signs up for every race.",
        "The last month of the lease is paid.",
    ];
    for (k, (a, b)) in pairs.into_iter().enumerate() {
        let category_only = |x: &str, y: &str| {
            let (tx, ty) = (index_terms(x), index_terms(y));
            let shared: Vec<&String> = tx.iter().filter(|t| ty.contains(t)).collect();
            assert!(shared.len() == 1 && shared[0].ends_with(":*"), "{x:?} / {y:?} share {shared:?}");
        };
        category_only(a, b);
        for (first, then) in [(a, b), (b, a)] {
            let dir = tempfile::tempdir().unwrap();
            let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
            let scope = format!("crowd-{k}");
            let in_scope =
                |text: &str| SaveRequest { text: text.into(), scope: Some(scope.clone()), ..Default::default() };
            for c in crowd {
                ml.save(in_scope(c), "cli:test").unwrap();
            }
            let held = ml.save(in_scope(first), "cli:test").unwrap().memory_id;
            let new = ml.save(in_scope(then), "cli:test").unwrap().memory_id;
            let compared: Vec<_> =
                ml.why(new, None).unwrap().into_iter().filter(|d| d.incoming == new).map(|d| d.candidate).collect();
            assert!(compared.contains(&held), "{then:?} was not compared with {first:?}");
        }
    }
}
