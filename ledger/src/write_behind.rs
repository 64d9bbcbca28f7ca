//! Unsynced writes handed to a thread of their own, so that the thread that made them goes on
//! (planning the next save) while RocksDB inserts their keys into its memtables.
//!
//! A bulk save's RocksDB writes (the ledger's append and the views' batch, each unsynced until
//! the group's one sync) are work that nobody waits for. The store queues such a
//! write here and returns; one writer thread applies the queue in order. Nothing is acknowledged
//! by an unsynced write, so nothing acknowledged waits here: a sync, and every other operation
//! that must see what RocksDB holds, first waits until the batches queued before it are written
//! ([`WriteBehind::settle`]).
//!
//! The writer also makes what a batch leaves to be made when it is written (the signature of
//! an append's checkpoint, `Batch::put_vouching`), and of the batches it joins into one write it
//! signs only the last append's: that one vouches for the rest.
//!
//! Reads see queued writes: the store's read cache takes each queued batch at once, as it takes a
//! written one, and a point read that the cache cannot answer looks through the queue before it
//! reads RocksDB ([`WriteBehind::pending_value`]); a scan settles first.
//!
//! A queued write that fails leaves the store's handle failed for good: later writes and reads
//! return that error (the writes queued after it are dropped, the read cache is emptied), and the
//! store must be opened again. What the process holds in memory (the ledger's head, a view's
//! checkpoint) may be ahead of what was written, and a fresh open reads the truth from disk.
//! See docs/adr/0012-write-behind.md.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;

use crate::batch::{Batch, Write};
use crate::error::LedgerError;

/// How many batches may wait before a new one waits for room: a few saves' worth, so that the
/// writer runs beside the saving thread without the queue growing when RocksDB is slower.
pub(crate) const MAX_PENDING: usize = 64;

/// How many batches wait before an idle writer is woken for them (anyone who waits for the
/// writer wakes it sooner). Woken for each save's two batches, the writer would cost the saving
/// thread a system call per batch and itself a sleep and a wake; woken for several, it writes
/// them as one RocksDB write.
const WAKE_AT: usize = 8;

/// The most batches the writer joins into one RocksDB write.
const MAX_JOINED: usize = 16;

pub(crate) struct WriteBehind {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    queue: Mutex<Queue>,
    /// The idle writer waits on this for work (or for closing).
    work: Condvar,
    /// Threads waiting for the queue to empty or to have room wait on this.
    done: Condvar,
    /// The first failed write's error; once set, every operation fails with it.
    failed: OnceLock<Arc<LedgerError>>,
}

#[derive(Default)]
struct Queue {
    /// Oldest first. The writer leaves a batch here until it has been written, so that readers
    /// find it until RocksDB can answer for it.
    pending: VecDeque<Arc<Batch>>,
    /// Batches written (or dropped by a failure) since the writer started: the batches queued
    /// before a wait began are written once this passes `written + pending.len()` as it was then.
    written: u64,
    closing: bool,
    /// The writer is waiting on `work`.
    writer_idle: bool,
    /// How many threads wait on `done`.
    waiting: usize,
    /// Tests hold the writer to see reads answered from the queue.
    #[cfg(test)]
    held: bool,
    #[cfg(test)]
    fail_next: bool,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait (not as the writer) until the writer has written or dropped a batch.
    fn wait_done<'a>(&self, mut queue: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        if queue.writer_idle {
            self.work.notify_one();
        }
        queue.waiting += 1;
        let mut queue = self.done.wait(queue).unwrap_or_else(|p| p.into_inner());
        queue.waiting -= 1;
        queue
    }

    fn check(&self) -> Result<(), LedgerError> {
        match self.failed.get() {
            None => Ok(()),
            Some(cause) => Err(LedgerError::EarlierWriteFailed(cause.clone())),
        }
    }
}

impl WriteBehind {
    /// Start the writer thread. `write` applies one batch to RocksDB; `failed` runs once, when
    /// the first write has failed, before the failure is recorded and the queue dropped (the store
    /// empties its read cache there).
    pub(crate) fn start(
        mut write: impl FnMut(&[Arc<Batch>]) -> Result<(), LedgerError> + Send + 'static,
        failed: impl FnOnce() + Send + 'static,
    ) -> WriteBehind {
        let shared = Arc::new(Shared {
            queue: Default::default(),
            work: Condvar::new(),
            done: Condvar::new(),
            failed: OnceLock::new(),
        });
        let writer = shared.clone();
        let thread = std::thread::Builder::new()
            .name("memledger-write".into())
            .spawn(move || {
                let mut failed = Some(failed);
                loop {
                    // The oldest batches, up to MAX_JOINED, written as one.
                    let batches: Vec<Arc<Batch>> = {
                        let mut queue = writer.queue();
                        loop {
                            #[cfg(test)]
                            let held = queue.held && !queue.closing;
                            #[cfg(not(test))]
                            let held = false;
                            match queue.pending.front() {
                                Some(_) if !held => break queue.pending.iter().take(MAX_JOINED).cloned().collect(),
                                None if queue.closing => return,
                                _ => {
                                    queue.writer_idle = true;
                                    queue = writer.work.wait(queue).unwrap_or_else(|p| p.into_inner());
                                    queue.writer_idle = false;
                                }
                            }
                        }
                    };
                    #[cfg(test)]
                    let result = if std::mem::take(&mut writer.queue().fail_next) {
                        Err(LedgerError::Inconsistent("injected failure".into()))
                    } else {
                        write(&batches)
                    };
                    #[cfg(not(test))]
                    let result = write(&batches);
                    if result.is_err()
                        && let Some(failed) = failed.take()
                    {
                        // Before the failure is announced, so that whoever learns of it finds
                        // nothing left in the cache of what was never written.
                        failed();
                    }
                    let mut queue = writer.queue();
                    match result {
                        Ok(()) => {
                            queue.pending.drain(..batches.len());
                            queue.written += batches.len() as u64;
                        }
                        Err(e) => {
                            let _ = writer.failed.set(Arc::new(e));
                            queue.written += queue.pending.len() as u64;
                            queue.pending.clear();
                        }
                    }
                    let waiting = queue.waiting > 0;
                    drop(queue);
                    if waiting {
                        writer.done.notify_all();
                    }
                }
            })
            .expect("the write-behind thread starts");
        WriteBehind { shared, thread: Some(thread) }
    }

    /// Fail if an earlier queued write failed.
    pub(crate) fn check(&self) -> Result<(), LedgerError> {
        self.shared.check()
    }

    /// Wait while the queue is full; fail if an earlier write failed. Called before the store
    /// takes its read cache's lock for a new batch, so the writer is never waited for under it.
    pub(crate) fn wait_for_room(&self) -> Result<(), LedgerError> {
        let mut queue = self.shared.queue();
        while queue.pending.len() >= MAX_PENDING && self.shared.failed.get().is_none() {
            queue = self.shared.wait_done(queue);
        }
        self.shared.check()
    }

    /// Queue `batch` behind every batch queued before it.
    pub(crate) fn push(&self, batch: Arc<Batch>) -> Result<(), LedgerError> {
        let mut queue = self.shared.queue();
        self.shared.check()?;
        queue.pending.push_back(batch);
        // Waking a thread is a system call: only an idle writer is woken, and only for several
        // batches (see WAKE_AT).
        if queue.writer_idle && queue.pending.len() >= WAKE_AT {
            self.shared.work.notify_one();
        }
        Ok(())
    }

    /// Wait until every batch queued before this call has been written; fail if one of them (or
    /// an earlier one) failed.
    pub(crate) fn settle(&self) -> Result<(), LedgerError> {
        let mut queue = self.shared.queue();
        // Not until the queue is empty: saves go on queueing beside a sync.
        let through = queue.written + queue.pending.len() as u64;
        while queue.written < through {
            queue = self.shared.wait_done(queue);
        }
        drop(queue);
        self.shared.check()
    }

    /// What the queue holds for `key` of `table`: the value of the latest queued write of it
    /// (`Some(None)`: deleted or cleared), or `None` when no queued batch writes it.
    pub(crate) fn pending_value(&self, table: &str, key: &[u8]) -> Option<Option<Vec<u8>>> {
        let queue = self.shared.queue();
        for batch in queue.pending.iter().rev() {
            for write in batch.writes().rev().filter(|w| w.table() == table) {
                match write {
                    Write::Put { key: k, value, .. } if k == key => return Some(Some(value.bytes().to_vec())),
                    Write::Delete { key: k, .. } if k == key => return Some(None),
                    Write::Clear { .. } => return Some(None),
                    _ => {}
                }
            }
        }
        None
    }

    /// Hold the writer (tests): queued batches stay queued until released.
    #[cfg(test)]
    pub(crate) fn hold(&self, held: bool) {
        self.shared.queue().held = held;
        self.shared.work.notify_one();
    }

    /// How many threads wait for the writer (tests).
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.shared.queue().waiting
    }

    /// How many batches are queued (tests).
    #[cfg(test)]
    pub(crate) fn pending_len(&self) -> usize {
        self.shared.queue().pending.len()
    }

    /// Make the next write fail (tests).
    #[cfg(test)]
    pub(crate) fn fail_next(&self) {
        self.shared.queue().fail_next = true;
    }
}

impl Drop for WriteBehind {
    /// Write what is queued, then stop the thread (the last handle on the store is going away).
    fn drop(&mut self) {
        self.shared.queue().closing = true;
        self.shared.work.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
