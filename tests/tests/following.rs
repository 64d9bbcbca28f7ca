//! Machines following each other on one shared ledger (a real PostgreSQL from
//! scripts/services.sh): the events one machine copies from the ledger move its views, its term
//! cache and its text index as its own commands would, so after every step each machine's term
//! cache agrees with its belief view, a machine finds the memories it only copied (a repeat of
//! one merges), and both end with views equal to a fresh replay.

use memledger_engine::{Outcome, SaveRequest};
use memledger_tests::services::fresh_pg_database;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{assert_machines_agree, open_machine};

const STEPS: usize = 80;
const PEOPLE: [&str; 4] = ["Ines", "Tomas", "Priya", "Okoro"];
const CITIES: [&str; 5] = ["Lisbon", "Porto", "Madrid", "Oslo", "Quito"];
const THINGS: [&str; 5] = ["lamp", "kettle", "bicycle", "clock", "kayak"];
const COLOURS: [&str; 4] = ["blue", "green", "amber", "white"];

#[test]
fn a_machine_following_another_keeps_its_term_cache_and_finds_what_it_copied() {
    let Some(url) = fresh_pg_database() else { return };
    let seed: u64 = std::env::var("MEMLEDGER_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    eprintln!("following: seed {seed} (MEMLEDGER_TEST_SEED={seed} repeats it)");
    let mut rng = StdRng::seed_from_u64(seed);
    let root = tempfile::tempdir().unwrap();
    let open = |m: usize| open_machine(&url, &root.path().join(format!("machine-{m}")));
    let machines = [open(0), open(1)];
    // What each machine saved: (text, memory id).
    let mut saved: [Vec<(String, String)>; 2] = [Vec::new(), Vec::new()];
    let mut merged_from_the_other = 0;
    for step in 0..STEPS {
        let m = rng.random_range(0..2);
        let ml = &machines[m];
        let other = &saved[1 - m];
        match rng.random_range(0..10) {
            // A repeat of what the other machine saved: found through the copied events.
            0..=1 if !other.is_empty() => {
                let (text, _) = other[rng.random_range(0..other.len())].clone();
                let r =
                    ml.save(SaveRequest { text: text.clone(), ..SaveRequest::default() }, "test:following").unwrap();
                if r.outcome == Outcome::Merged {
                    merged_from_the_other += 1;
                }
            }
            2 if !other.is_empty() => {
                let (_, id) = other[rng.random_range(0..other.len())].clone();
                // Already forgotten or replaced is fine: the step is then refused.
                let _ = ml.forget(id.parse().unwrap(), None, "test:following");
            }
            _ => {
                let person = PEOPLE[rng.random_range(0..PEOPLE.len())];
                let text = if rng.random_bool(0.5) {
                    format!("{person} lives in {}", CITIES[rng.random_range(0..CITIES.len())])
                } else {
                    let thing = THINGS[rng.random_range(0..THINGS.len())];
                    format!("{person}'s {thing} is {}", COLOURS[rng.random_range(0..COLOURS.len())])
                };
                let r =
                    ml.save(SaveRequest { text: text.clone(), ..SaveRequest::default() }, "test:following").unwrap();
                saved[m].push((text, r.memory_id.hex()));
            }
        }
        for (n, machine) in machines.iter().enumerate() {
            machine.catch_up().unwrap();
            assert_eq!(machine.term_cache_disagreement().unwrap(), None, "machine {n} after step {step}, seed {seed}");
        }
    }
    assert!(merged_from_the_other > 0, "no repeat of the other machine's memory merged (seed {seed})");
    assert_machines_agree(&machines.iter().collect::<Vec<_>>());
}
