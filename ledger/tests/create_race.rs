//! Creating a store is safe to race: any number of processes that open the same new store with
//! `create` at the same moment all succeed (one creates it, the others wait and open it).
//!
//! The processes are this test binary itself, run again with `MEMLEDGER_CREATE_RACE_DIR` set:
//! then `create_one_store_as_a_child` opens that store.

use std::process::{Command, Stdio};
use std::time::Duration;

use memledger_ledger::*;

const CHILD_ENV: &str = "MEMLEDGER_CREATE_RACE_DIR";
/// The child's test, by its full name in the ledger's test binary.
const CHILD_TEST: &str = "create_race::create_one_store_as_a_child";

/// Processes per round, and rounds (`MEMLEDGER_CREATE_RACE_ROUNDS` changes the rounds).
const PROCESSES: usize = 16;
const ROUNDS: usize = 100;

#[test]
fn create_one_store_as_a_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else { return };
    let options = OpenOptions { create: true, wait: Duration::from_secs(60), shared: None, ..OpenOptions::default() };
    let ledger: Ledger = match Ledger::open(std::path::Path::new(&dir), &options, &[]) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("child: open failed: {e}");
            std::process::exit(3);
        }
    };
    drop(ledger);
}

#[test]
fn processes_creating_the_same_store_at_once_all_succeed() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let rounds = std::env::var("MEMLEDGER_CREATE_RACE_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(ROUNDS);
    let exe = std::env::current_exe().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for round in 0..rounds {
        // An empty directory that exists, or none at all: both are a new store.
        let dir = tmp.path().join(format!("round-{round}"));
        if round % 2 == 0 {
            std::fs::create_dir(&dir).unwrap();
        }
        let children: Vec<_> = (0..PROCESSES)
            .map(|_| {
                Command::new(&exe)
                    .args(["--exact", CHILD_TEST, "--test-threads=1", "-q", "--nocapture"])
                    .env(CHILD_ENV, &dir)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}: {}{}",
                out.status,
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            );
        }
        let ledger = Ledger::open(
            &dir,
            &OpenOptions { create: false, wait: Duration::from_secs(10), shared: None, ..OpenOptions::default() },
            &[],
        )
        .unwrap();
        assert_eq!(ledger.head().seq, 0);
        assert!(ledger.verify().unwrap().ok);
        drop(ledger);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
