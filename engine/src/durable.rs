//! How the synced saves of a local store become durable: each is appended unsynced under the
//! write lock, then waits here for a sync that began after its append (ADR 0040).
//!
//! The rules:
//! - A sync covers every append made before it began: it records the head it saw, and once it
//!   returns the ledger is durable through that head, whatever other syncs are doing.
//! - A save covered by a finished sync returns at once; one that a running sync covers waits for
//!   that sync. Otherwise it starts a sync of its own beside the ones running (the store syncs its
//!   log files from this process, and the operating system lets syncs overlap), up to
//!   [`SYNCS_IN_FLIGHT`] at once; past that it joins the next sync, which the first save to join
//!   starts when a running one ends and which covers every save that joined it.
//! - Each waiting save is woken once, when the sync it waits for ends (not by every sync that
//!   ends): under load, dozens wait.
//! - A sync that fails fails the save that ran it; the saves that waited for it try again.

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

/// Syncs running at once at most. With two, a save appended while a sync runs need not wait for
/// that one to end; with more, saves that arrive faster than syncs end get a sync each (more
/// work for the disk, and for the CPU that waits on it) where one sync could cover them all.
/// Measured in docs/performance.md (saves in flight together).
pub(crate) const SYNCS_IN_FLIGHT: usize = 2;

/// Where the ledger is known durable, and the syncs running or about to.
#[derive(Default)]
pub(crate) struct Syncs {
    state: Mutex<State>,
    /// The first save of the next sync waits here for one of the running syncs to end.
    slot: Condvar,
}

#[derive(Default)]
struct State {
    /// Every seq through this one is durable.
    durable: u64,
    /// The running syncs, each with the head it saw when it began.
    running: Vec<(u64, Arc<Condvar>)>,
    /// The sync to start when a running one ends: the saves that joined it wait on it.
    next: Option<Arc<Condvar>>,
    /// Saves waiting (tests).
    waiting: usize,
}

impl Syncs {
    /// Return once the ledger is durable through `seq` (already appended): `head` reads the
    /// ledger's head, `sync` makes every append before it durable.
    pub(crate) fn durable_through<E>(
        &self,
        seq: u64,
        head: impl Fn() -> u64,
        sync: impl FnOnce(u64) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut state = self.state.lock();
        loop {
            if state.durable >= seq {
                return Ok(());
            }
            // Woken when that sync ends; then durable, or (it failed) round again.
            if let Some((_, ended)) = state.running.iter().find(|(through, _)| *through >= seq) {
                let ended = ended.clone();
                state.waiting += 1;
                ended.wait(&mut state);
                state.waiting -= 1;
                continue;
            }
            let ends = match &state.next {
                // Joined: its first save starts it, through a head past this save's seq.
                Some(next) => {
                    let next = next.clone();
                    state.waiting += 1;
                    next.wait(&mut state);
                    state.waiting -= 1;
                    continue;
                }
                None if state.running.len() < SYNCS_IN_FLIGHT => Arc::new(Condvar::new()),
                None => {
                    let next = Arc::new(Condvar::new());
                    state.next = Some(next.clone());
                    state.waiting += 1;
                    while state.running.len() >= SYNCS_IN_FLIGHT {
                        self.slot.wait(&mut state);
                    }
                    state.waiting -= 1;
                    state.next = None;
                    next
                }
            };
            let through = head();
            state.running.push((through, ends.clone()));
            drop(state);
            // Ended however the sync returns, a panic included: a sync left among the running
            // would hold its waiters for ever.
            let mut ended = Ended { syncs: self, ends, durable_through: None };
            let result = sync(through);
            if result.is_ok() {
                ended.durable_through = Some(through);
            }
            return result;
        }
    }
}

/// A running sync, taken out of the running when dropped: the ledger recorded durable through
/// its head if it succeeded, and the saves waiting for it (or for a free place) woken.
struct Ended<'a> {
    syncs: &'a Syncs,
    ends: Arc<Condvar>,
    durable_through: Option<u64>,
}

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        let mut state = self.syncs.state.lock();
        state.running.retain(|(_, running)| !Arc::ptr_eq(running, &self.ends));
        if let Some(through) = self.durable_through {
            state.durable = state.durable.max(through);
        }
        drop(state);
        self.ends.notify_all();
        self.syncs.slot.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::mpsc;
    use std::thread::JoinHandle;

    use super::*;

    type Outcome = Result<(), &'static str>;

    /// A save of `seq` on its own thread whose sync, once begun, is held until the returned
    /// sender is used (or dropped), then ends as `ends` says. Returns once the sync has begun,
    /// with the head it began through.
    fn held_sync(
        syncs: &Arc<Syncs>,
        seq: u64,
        head: impl Fn() -> u64 + Send + 'static,
        ends: impl FnOnce() -> Outcome + Send + 'static,
    ) -> (JoinHandle<Outcome>, mpsc::Sender<()>, u64) {
        let (began, running) = mpsc::channel();
        let (release, held) = mpsc::channel::<()>();
        let syncs = syncs.clone();
        let save = std::thread::spawn(move || {
            syncs.durable_through(seq, head, |through| {
                began.send(through).unwrap();
                let _ = held.recv();
                ends()
            })
        });
        let through = running.recv().unwrap();
        (save, release, through)
    }

    /// Wait until `n` saves wait in `syncs`.
    fn until_waiting(syncs: &Syncs, n: usize) {
        while syncs.state.lock().waiting < n {
            std::thread::yield_now();
        }
    }

    /// Two saves appended one after the other, the second while the first's sync runs: the
    /// second's sync begins (and ends) while the first is still held, so they overlap.
    #[test]
    fn a_save_appended_during_a_sync_syncs_beside_it() {
        let syncs = Arc::new(Syncs::default());
        let head = Arc::new(AtomicU64::new(1));
        let at = head.clone();
        let (first, release, first_through) = held_sync(&syncs, 1, move || at.load(Ordering::SeqCst), || Ok(()));
        assert_eq!(first_through, 1);
        head.store(2, Ordering::SeqCst);
        let mut second_through = None;
        syncs
            .durable_through(
                2,
                || head.load(Ordering::SeqCst),
                |through| {
                    second_through = Some(through);
                    Ok::<(), ()>(())
                },
            )
            .unwrap();
        assert_eq!(second_through, Some(2), "the second save ran its own sync while the first's was held");
        // Durable through 2 covers 1: a third call for seq 1 syncs nothing.
        syncs.durable_through(1, || 2, |_| -> Result<(), ()> { panic!("no sync needed") }).unwrap();
        release.send(()).unwrap();
        first.join().unwrap().unwrap();
    }

    /// A save that a running sync covers waits for it rather than syncing again; when that sync
    /// fails, it syncs on its own.
    #[test]
    fn a_covered_save_waits_and_tries_again_when_the_sync_fails() {
        let syncs = Arc::new(Syncs::default());
        let (first, release, _) = held_sync(&syncs, 3, || 5, || Err("disk full"));
        let (tried, second_tried) = mpsc::channel();
        let second = {
            let syncs = syncs.clone();
            std::thread::spawn(move || {
                syncs.durable_through(
                    4,
                    || 5,
                    |through| {
                        tried.send(through).unwrap();
                        Ok::<(), &str>(())
                    },
                )
            })
        };
        // The second save is covered by the running sync (through 5 ≥ 4): it waits, unsynced.
        until_waiting(&syncs, 1);
        assert!(second_tried.try_recv().is_err());
        release.send(()).unwrap();
        assert_eq!(first.join().unwrap(), Err("disk full"));
        assert_eq!(second_tried.recv().unwrap(), 5, "after the failure the waiting save synced itself");
        second.join().unwrap().unwrap();
    }

    /// With [`SYNCS_IN_FLIGHT`] syncs held, two more saves wait for the next sync: it starts
    /// when one of the held ends, once, and covers both.
    #[test]
    fn saves_past_the_syncs_in_flight_share_the_next() {
        assert_eq!(SYNCS_IN_FLIGHT, 2);
        let syncs = Arc::new(Syncs::default());
        let head = Arc::new(AtomicU64::new(0));
        let mut held = Vec::new();
        for seq in 1..=2 {
            head.store(seq, Ordering::SeqCst);
            let at = head.clone();
            held.push(held_sync(&syncs, seq, move || at.load(Ordering::SeqCst), || Ok(())));
        }
        let (synced, syncs_run) = mpsc::channel();
        let waiting: Vec<_> = (3..=4)
            .map(|seq| {
                head.store(seq, Ordering::SeqCst);
                let (other, head, synced) = (syncs.clone(), head.clone(), synced.clone());
                let joined = std::thread::spawn(move || {
                    other.durable_through(
                        seq,
                        || head.load(Ordering::SeqCst),
                        |through| {
                            synced.send(through).unwrap();
                            Ok::<(), ()>(())
                        },
                    )
                });
                until_waiting(&syncs, (seq - 2) as usize);
                joined
            })
            .collect();
        assert!(syncs_run.try_recv().is_err(), "no third sync while two run");
        held[0].1.send(()).unwrap();
        for joined in waiting {
            joined.join().unwrap().unwrap();
        }
        drop(synced);
        assert_eq!(syncs_run.iter().collect::<Vec<_>>(), vec![4], "one sync, through both saves");
        for (save, release, _) in held {
            drop(release);
            save.join().unwrap().unwrap();
        }
    }

    /// A sync that panics is still taken out of the running: the save waiting for it wakes and
    /// syncs on its own.
    #[test]
    fn a_sync_that_panics_does_not_hold_its_waiters() {
        let syncs = Arc::new(Syncs::default());
        let (first, release, _) = held_sync(&syncs, 1, || 2, || panic!("the sync panicked"));
        let second = {
            let syncs = syncs.clone();
            std::thread::spawn(move || syncs.durable_through(2, || 2, |_| Ok::<(), ()>(())))
        };
        until_waiting(&syncs, 1);
        release.send(()).unwrap();
        assert!(first.join().is_err());
        second.join().unwrap().unwrap();
        assert_eq!(syncs.state.lock().durable, 2);
    }
}
