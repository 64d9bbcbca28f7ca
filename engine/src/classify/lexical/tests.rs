//! The lexical classifier's tests: given two texts, the relation and the gate.

use super::analysis::analyse;
use super::lexicon::{ANTONYMS, find_antonym};
use super::stem::stem;
use super::values::same_str;
use super::*;

fn c(a: &str, b: &str) -> Verdict {
    classify(a, b, None, None, &LexicalConfig::default())
}

proptest::proptest! {
    /// `same_str` is string equality (short strings over a small alphabet, so that equal
    /// lengths and first bytes, where it falls through to the full comparison, are common).
    #[test]
    fn same_str_is_equality(a in "[ab]{0,3}", b in "[ab]{0,3}") {
        proptest::prop_assert_eq!(same_str(&a, &b), a == b);
    }
}

fn rel(a: &str, b: &str) -> Relation {
    c(a, b).relation
}

#[track_caller]
fn assert_rel(a: &str, b: &str, want: Relation) {
    let v = c(a, b);
    assert_eq!(v.relation, want, "{a:?} vs {b:?}: gate {} ({})", v.gate.as_str(), v.reason);
    let w = c(b, a);
    assert_eq!(w.relation, want, "reversed {b:?} vs {a:?}: gate {} ({})", w.gate.as_str(), w.reason);
}

#[test]
fn alice_guitar_is_not_a_contradiction() {
    let r = rel("Alice started guitar five years ago", "Alice started transitioning three years ago");
    assert_ne!(r, Relation::Contradictory);
    assert_ne!(r, Relation::Identical);
}

#[test]
fn swimming_painting_is_not_a_contradiction() {
    let r = rel("went swimming after the call", "finished a painting before the call");
    assert_ne!(r, Relation::Contradictory);
    assert_ne!(r, Relation::Identical);
}

#[test]
fn staging_and_production_schedules_are_distinct() {
    let v = c(
        "The billing service deploys to staging on Tuesdays",
        "The billing service deploys to production on Thursdays",
    );
    assert!(matches!(v.relation, Relation::Complementary | Relation::Unrelated));
    assert_eq!(v.gate, Gate::QualifierDiffers);
    let v = c(
        "The billing service deploys to staging on Tuesdays",
        "The billing service deploys to production on Tuesdays",
    );
    assert_eq!(v.gate, Gate::QualifierDiffers);
    assert_ne!(v.relation, Relation::Identical);
}

#[test]
fn dropped_qualifier_is_never_identical() {
    let v = c("The billing service deploys on Tuesdays", "The billing service deploys to staging on Tuesdays");
    assert_ne!(v.relation, Relation::Identical, "{}", v.reason);
    assert_eq!(v.gate, Gate::QualifierAdded);
}

#[test]
fn postgres_versions_contradict() {
    let v = c("The billing service runs on Postgres 17", "The billing service runs on Postgres 16");
    assert_eq!(v.relation, Relation::Contradictory, "{}", v.reason);
    assert_eq!(v.gate, Gate::ValueMismatch);
    assert!(v.reason.contains("17") && v.reason.contains("16"), "{}", v.reason);
}

#[test]
fn weekdays_contradict() {
    assert_rel(
        "The billing team deploys to staging on Tuesdays",
        "The billing team deploys to staging on Thursdays",
        Relation::Contradictory,
    );
    assert_eq!(c("Billing deploys on Tuesday", "Billing deploys on Thursday").gate, Gate::ValueMismatch);
}

#[test]
fn deploy_and_do_not_deploy_contradict() {
    let v = c("Do not deploy on Tuesday", "Deploy on Tuesday");
    assert_eq!(v.relation, Relation::Contradictory, "{}", v.reason);
    assert_eq!(v.gate, Gate::Negation);
    assert_rel("We deploy billing on Tuesday", "We don't deploy billing on Tuesday", Relation::Contradictory);
}

#[test]
fn enrichment_is_identical_with_incoming_adds() {
    let v = c("deploy Tuesday after integration tests pass", "deploy Tuesday");
    assert_eq!(v.relation, Relation::Identical, "{}", v.reason);
    assert!(v.incoming_adds);
    assert!(!v.candidate_adds);
    let w = c("deploy Tuesday", "deploy Tuesday after integration tests pass");
    assert_eq!(w.relation, Relation::Identical);
    assert!(w.candidate_adds && !w.incoming_adds);
}

#[test]
fn paraphrase_is_identical() {
    assert_rel(
        "Priya prefers dark mode in every editor",
        "Priya prefers dark mode in all her editors",
        Relation::Identical,
    );
    // one content word each side: related, not merged (containment needs two words)
    assert_rel("I use Postgres", "Postgres is the database", Relation::Complementary);
    assert_rel("Postgres is what the billing project uses", "the billing project uses PostgreSQL", Relation::Identical);
}

#[test]
fn negated_different_object_is_not_a_contradiction() {
    assert_ne!(rel("Bob does not drink coffee", "Bob drinks tea"), Relation::Contradictory);
    assert_ne!(rel("Do not deploy on Fridays", "Deploy billing on Tuesdays"), Relation::Contradictory);
}

#[test]
fn narrower_negation_is_not_a_contradiction() {
    // "no deploys on Fridays" does not deny "we deploy"
    assert_ne!(
        rel("We never deploy the billing service on Fridays", "We deploy the billing service"),
        Relation::Contradictory
    );
}

#[test]
fn antonym_with_same_rest_contradicts() {
    let v = c(
        "The feature flag for partial refunds is enabled in the admin panel",
        "The feature flag for partial refunds is disabled in the admin panel",
    );
    assert_eq!(v.relation, Relation::Contradictory, "{}", v.reason);
    assert_eq!(v.gate, Gate::Antonym);
    assert_rel("Marco likes long status meetings", "Marco dislikes long status meetings", Relation::Contradictory);
}

#[test]
fn antonym_with_different_rest_is_not_a_contradiction() {
    assert_ne!(rel("Run migrations before the deploy", "Run smoke tests after the deploy"), Relation::Contradictory);
}

#[test]
fn times_and_units_are_values() {
    assert_rel(
        "The invoice job runs nightly at 2am UTC",
        "The invoice job runs nightly at 02:00 UTC",
        Relation::Identical,
    );
    assert_rel(
        "The invoice job runs nightly at 2am UTC",
        "The invoice job runs nightly at 3am UTC",
        Relation::Contradictory,
    );
    assert_rel(
        "The webhook worker timeout is 30 seconds",
        "The webhook worker timeout is 10 seconds",
        Relation::Contradictory,
    );
    assert_rel(
        "The build cache keeps objects for 7 days",
        "The build cache keeps objects for 7 days",
        Relation::Identical,
    );
}

#[test]
fn frequency_change_contradicts() {
    assert_rel(
        "The fraud model is retrained weekly on the full history",
        "The fraud model is retrained monthly on the full history",
        Relation::Contradictory,
    );
}

#[test]
fn added_value_is_enrichment_not_contradiction() {
    let v = c("Deploy the billing service every Tuesday at 10:00", "Deploy the billing service every Tuesday");
    assert_eq!(v.relation, Relation::Identical, "{}", v.reason);
    assert!(v.incoming_adds);
}

#[test]
fn two_values_changing_is_a_different_fact() {
    assert_ne!(rel("Standup is at 9:45 on Mondays", "Retro is at 15:00 on Thursdays"), Relation::Contradictory);
    assert_ne!(rel("The sync starts at 9am on Monday", "The sync stops at 5pm on Monday"), Relation::Contradictory);
}

#[test]
fn identifiers_and_hostnames_are_kept_whole() {
    let t = index_terms("The registry moved to registry.int.example.com on us-east-1, see PAY-1423");
    assert!(t.iter().any(|x| x == "registry.int.example.com"), "{t:?}");
    assert!(t.iter().any(|x| x == "region:us-east-1"), "{t:?}");
    assert!(t.iter().any(|x| x == "PAY-1423" || x == "pay-1423"), "{t:?}");
    assert_ne!(
        rel("The cache host is cache01.prod.example.com", "The cache host is cache02.prod.example.com"),
        Relation::Identical
    );
}

#[test]
fn case_sensitive_identifiers() {
    assert_ne!(
        rel("The config key is maxRetries in the client", "The config key is MaxRetries in the client"),
        Relation::Identical
    );
}

#[test]
fn unrelated_facts() {
    let v = c("Hana has a dog called Mochi", "The warehouse keeps raw events for 13 months");
    assert_eq!(v.relation, Relation::Unrelated);
    assert_eq!(v.gate, Gate::BelowBand);
}

#[test]
fn kind_mismatch_is_a_near_miss() {
    let cfg = LexicalConfig::default();
    let v = classify("Do not deploy on Tuesday", "Deploy on Tuesday", Some("procedure"), Some("preference"), &cfg);
    assert_eq!(v.relation, Relation::Complementary);
    assert_eq!(v.gate, Gate::KindMismatch);
    assert!(v.near_miss);
    let v = classify("Priya prefers dark mode", "Priya prefers dark mode", Some("fact"), Some("preference"), &cfg);
    assert_eq!(v.relation, Relation::Complementary);
    assert!(v.near_miss);
    let v = classify(
        "Hana has a dog called Mochi",
        "The warehouse keeps raw events for 13 months",
        Some("fact"),
        Some("episode"),
        &cfg,
    );
    assert_eq!(v.relation, Relation::Unrelated);
    assert!(!v.near_miss);
    let v = classify("Do not deploy on Tuesday", "Deploy on Tuesday", Some("procedure"), Some("Procedure"), &cfg);
    assert_eq!(v.relation, Relation::Contradictory);
}

#[test]
fn two_word_facts_cannot_contradict_on_one_shared_word() {
    assert_ne!(rel("Deploy Tuesday", "Deploy Thursday"), Relation::Contradictory);
}

#[test]
fn role_swap_is_not_identical() {
    assert_ne!(
        rel("The refunds service calls the billing service", "The billing service calls the refunds service"),
        Relation::Identical
    );
    assert_ne!(rel("Marco reports to Sofia", "Sofia reports to Marco"), Relation::Identical);
}

#[test]
fn narrowing_modifier_is_not_identical() {
    let v = c("Priya prefers dark mode", "Priya strongly prefers dark mode");
    assert_ne!(v.relation, Relation::Identical, "{}", v.reason);
}

#[test]
fn platform_qualifier_keeps_facts_distinct() {
    let v = c("The app requires version 16 or later on iOS", "The app requires version 10 or later on Android");
    assert_eq!(v.gate, Gate::QualifierDiffers);
}

#[test]
fn exact_text_and_empty() {
    assert_eq!(c("Deploy on Tuesday.", "deploy on tuesday").gate, Gate::ExactText);
    let v = c("", "Deploy on Tuesday");
    assert_eq!(v.relation, Relation::Unrelated);
    assert_eq!(v.gate, Gate::NoContent);
    assert!(v.score.is_finite());
}

#[test]
fn dates_months_and_numbers() {
    assert_rel(
        "Lea joined the payments team in September 2023",
        "Lea joined the payments team in October 2023",
        Relation::Contradictory,
    );
    assert_rel(
        "The outage happened on 2024-03-12 in the invoice job",
        "The outage happened on 2024-03-13 in the invoice job",
        Relation::Contradictory,
    );
    assert_rel("The payments team has five engineers", "The payments team has 5 engineers", Relation::Identical);
    assert_rel("The payments team has five engineers", "The payments team has six engineers", Relation::Contradictory);
}

#[test]
fn scores_are_finite_and_bounded() {
    for (a, b) in [("", ""), ("!!!", "???"), ("not", "no"), ("1 2 3", "3 2 1"), ("Ünïcödé wörds ok", "ünïcödé")]
    {
        let v = c(a, b);
        assert!(v.score.is_finite() && (0.0..=1.0).contains(&v.score), "{a:?} {b:?} {}", v.score);
        assert!(v.scores.iter().all(|(_, x)| x.is_finite()));
        assert!(!v.reason.is_empty());
    }
}

#[test]
fn index_terms_meet_for_related_pairs() {
    let pairs = [
        ("I use Postgres", "Database is PostgreSQL"),
        ("Deploy on Tuesday", "Do not deploy on Tuesday"),
        ("The billing service runs on Postgres 17", "The billing service runs on Postgres 16"),
        ("migrate the ledger", "the ledger was migrated"),
    ];
    for (a, b) in pairs {
        let ta = index_terms(a);
        let tb = index_terms(b);
        assert!(ta.iter().any(|t| tb.contains(t)), "{a:?} {b:?} {ta:?} {tb:?}");
    }
}

/// Event format 2 writes a classification's gate and score and threshold names as one-byte
/// codes from a frozen list; a name missing from it still works (written as a string) but
/// costs its bytes in every event, so each name this classifier records must be listed.
#[test]
fn every_recorded_name_has_a_format_2_code() {
    fn listed(name: &str) -> bool {
        memledger_schemas::codec::NAMES_V2.contains(&name)
    }
    for gate in Gate::ALL {
        assert!(listed(gate.as_str()), "gate {}", gate.as_str());
    }
    for (name, _) in crate::classify::recorded_thresholds(&crate::EngineConfig::default()) {
        assert!(listed(&name), "threshold {name}");
    }
    let pairs = [
        ("The billing team deploys to staging on Tuesdays", "The billing team deploys to staging on Thursdays"),
        ("We deploy billing on Tuesday", "We don't deploy billing on Tuesday"),
        ("Marco likes long status meetings", "Marco dislikes long status meetings"),
        ("The refunds service calls the billing service", "The billing service calls the refunds service"),
        ("The cache host is cache01.prod.example.com", "The cache host is cache02.prod.example.com"),
        ("Priya prefers dark mode in every editor", "Priya prefers dark mode in all her editors"),
        ("We never deploy the billing service on Fridays", "We deploy the billing service"),
        ("The payments team has five engineers", "The payments team has six engineers"),
        ("Deploy Tuesday", "Deploy Thursday"),
        ("The API runs in production in eu-west-1", "The API runs in staging in eu-west-1"),
        ("went swimming after the call", "finished a painting before the call"),
        ("Postgres", "Postgres"),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (a, b) in pairs {
        for v in [c(a, b), c(b, a)] {
            seen.insert(v.gate.as_str());
            for (name, _) in &v.scores {
                assert!(listed(name), "score {name} ({a:?} vs {b:?})");
            }
        }
    }
    assert!(seen.len() >= 6, "the pairs reach several gates: {seen:?}");
}

#[test]
fn recorded_thresholds_and_gate_names() {
    let cfg = LexicalConfig::default();
    let r = cfg.recorded();
    for name in [
        "merge_threshold",
        "related_threshold",
        "min_conflict_words",
        "min_agreements",
        "min_conflict_jaccard",
        "prefix_min_len",
    ] {
        assert!(r.iter().any(|(k, _)| *k == name), "{name}");
    }
    assert_eq!(r.iter().find(|(k, _)| *k == "merge_threshold").map(|x| x.1), Some(0.85));
    let names: std::collections::HashSet<&str> = Gate::ALL.iter().map(|g| g.as_str()).collect();
    assert_eq!(names.len(), Gate::ALL.len());
    assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_')));
}

#[test]
fn in_staging_restatement_is_identical() {
    assert_rel(
        "Deploy billing to staging on Tuesday once integration tests are green",
        "Deploy billing to staging on Tuesdays once the integration tests are green",
        Relation::Identical,
    );
}

#[test]
fn consistent_notes_sharing_vocabulary() {
    assert_ne!(
        rel(
            "On Tuesday the staging deploy went out at 14:00",
            "Deploy billing to staging on Tuesdays after the integration tests pass"
        ),
        Relation::Contradictory
    );
    assert_ne!(
        rel("I don't drink coffee after 4pm", "I drink green tea in the morning and coffee after lunch"),
        Relation::Contradictory
    );
    assert_ne!(
        rel("Refunds above 500 EUR need a second approver", "Refunds below 500 EUR need only one approver"),
        Relation::Contradictory
    );
}

/// The antonym lookup by stem finds what trying every pair in order finds: the same pair,
/// in the same direction, or none.
#[test]
fn antonym_lookup_agrees_with_trying_every_pair() {
    use proptest::prelude::*;
    let words: Vec<&str> =
        ANTONYMS.iter().flat_map(|(x, y)| [*x, *y]).chain(["deploy", "staging", "the", "unusual"]).collect();
    let pick = proptest::sample::subsequence(words.clone(), 0..8);
    proptest!(ProptestConfig::with_cases(2_000), |(xs in pick.clone(), ys in pick)| {
        let (a, b) = (analyse(&xs.join(" ")), analyse(&ys.join(" ")));
        let every_pair = ANTONYMS.iter().map(|(x, y)| (stem(x), stem(y))).find_map(|(x, y)| {
            [(x.clone(), y.clone()), (y, x)].into_iter().find(|(p, q)| {
                a.stems.contains(p) && b.stems.contains(q) && !a.stems.contains(q) && !b.stems.contains(p)
            })
        });
        let found = find_antonym(&a, &b);
        match every_pair {
            Some(pair) => prop_assert_eq!(found, Some(pair)),
            // Without a listed pair, only the un-/non- rule may answer.
            None => prop_assert!(found.as_ref().is_none_or(|(p, q)| p.starts_with("un") || q.starts_with("un")
                || p.starts_with("non") || q.starts_with("non")), "{found:?}"),
        }
    });
}
