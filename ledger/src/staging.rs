//! Group commit on a shared ledger: commands staged in this store's copy ahead of the shared log,
//! then appended to it in one transaction.
//!
//! A process holding the shared log's exclusive turn ([`crate::shared::EventLog::exclusive_turn`])
//! knows that no other machine appends, so the commands it decides one after another can be
//! sealed here (seq, `prev_hash`, hash, time), written to the copy and applied to the views at
//! once — the next command decides on them — and be sent to the log together by
//! [`Ledger::flush_staged`] ([`crate::shared::EventLog::append_sealed`], each command's
//! idempotency key recorded). None is acknowledged before that flush. When it fails, the copy is
//! rewound to the log's head ([`Ledger::discard_staged`]) and the views must be replayed; a
//! process killed with commands staged rewinds on open (the `unshared` mark, written with the
//! first staged command, names the log's head then). docs/adr/0026-group-commit.md.

use std::sync::MutexGuard;

use memledger_schemas::{Event, Timestamp};

use crate::error::{AppendError, LedgerError};
use crate::ledger::{Appended, CommandMeta, Ledger, NewEvent, unsealed};
use crate::shared::link_problem;
use crate::store::{Batch, CF_EVENTS};
use crate::tables::{EventsTable, Head, IdempotencyTable, MetaTable, SeqRange};

/// The commands staged in a store's copy and not yet in the shared log.
#[derive(Default)]
pub(crate) struct Staged {
    /// The shared log's head when the first of them was staged (`None`: nothing staged).
    base: Option<Head>,
    commands: Vec<(Option<String>, Vec<Event>)>,
}

impl Staged {
    /// The committed seqs of an idempotency key among the staged commands.
    pub(crate) fn key_range(&self, key: &str) -> Option<SeqRange> {
        self.commands
            .iter()
            .find(|(k, _)| k.as_deref() == Some(key))
            .and_then(|(_, events)| Some(SeqRange { first: events.first()?.seq, last: events.last()?.seq }))
    }
}

impl Ledger {
    fn staged(&self) -> MutexGuard<'_, Staged> {
        self.staged.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether commands are staged and not yet in the shared log.
    pub fn has_staged(&self) -> bool {
        self.staged().base.is_some()
    }

    /// Whether a staged command carries the idempotency key `key`.
    pub fn is_staged_key(&self, key: &str) -> bool {
        self.staged().key_range(key).is_some()
    }

    /// How many commands are staged.
    pub fn staged_commands(&self) -> usize {
        self.staged().commands.len()
    }

    /// Append one command's events to this store's copy ahead of the shared log, if the head is
    /// still `expected_head`: sealed, written unsynced and visible at once, acknowledged only
    /// by a [`Ledger::flush_staged`] that succeeds. Only while this process holds the shared
    /// log's exclusive turn (the caller's duty): the log's head cannot move meanwhile. A key
    /// already staged makes the command `Replayed`; the caller asks the log about keys it holds
    /// ([`Ledger::idempotent`]). Without a shared log, an ordinary synced append.
    pub fn stage(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        events: Vec<NewEvent>,
    ) -> Result<Appended, AppendError> {
        if !self.is_shared() {
            return self.append(expected_head, meta, events);
        }
        let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
        if head.seq != expected_head {
            return Err(AppendError::Conflict { expected: expected_head, actual: head.seq });
        }
        let mut staged = self.staged();
        if let Some(range) = meta.idempotency_key.as_deref().and_then(|key| staged.key_range(key)) {
            return Ok(Appended::Replayed(range));
        }
        if events.is_empty() {
            return Ok(Appended::Committed(Vec::new()));
        }
        let mut batch = Batch::with_capacity(events.len() * 640 + 128);
        if staged.base.is_none() {
            MetaTable::put_unshared(&mut batch, *head);
        }
        let (recorded_at, mut last_at) = self.next_recorded_at(head.seq)?;
        let mut next = *head;
        let mut written = Vec::with_capacity(events.len());
        for (i, new) in events.into_iter().enumerate() {
            let mut event = unsealed(next, recorded_at, meta, i, new);
            EventsTable::put_sealed(&mut batch, &mut event);
            next = Head { seq: event.seq, hash: event.hash };
            written.push(event);
        }
        MetaTable::put_head(&mut batch, next);
        self.store().write(batch, false)?;
        staged.base.get_or_insert(*head);
        staged.commands.push((meta.idempotency_key.clone(), written.clone()));
        *head = next;
        *last_at = Some(recorded_at);
        Ok(Appended::Committed(written))
    }

    /// Append every staged command to the shared log in one transaction. On success they are
    /// acknowledged; on failure the copy is rewound to the log's head (every staged command
    /// lost, none acknowledged) and the error returned: the caller replays its views.
    pub fn flush_staged(&self) -> Result<(), AppendError> {
        let Some(log) = self.shared() else { return Ok(()) };
        let mut staged = self.staged();
        let Some(base) = staged.base else { return Ok(()) };
        match log.append_sealed(base, &staged.commands) {
            Ok(()) => {
                let mut batch = Batch::default();
                MetaTable::clear_unshared(&mut batch);
                self.store().write(batch, false)?;
                *staged = Staged::default();
                Ok(())
            }
            Err(e) => {
                self.rewind(&mut staged, base)?;
                Err(e)
            }
        }
    }

    /// Drop the staged commands from the copy: the events after the log's head then go, and the
    /// head goes back to it. The views have applied them: the caller replays its views.
    pub fn discard_staged(&self) -> Result<(), LedgerError> {
        let mut staged = self.staged();
        match staged.base {
            Some(base) => self.rewind(&mut staged, base),
            None => Ok(()),
        }
    }

    fn rewind(&self, staged: &mut Staged, base: Head) -> Result<(), LedgerError> {
        let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
        let mut batch = Batch::default();
        for seq in base.seq + 1..=head.seq {
            batch.delete(CF_EVENTS, EventsTable::key(seq));
        }
        MetaTable::put_head(&mut batch, base);
        MetaTable::clear_unshared(&mut batch);
        self.store().write(batch, true)?;
        *head = base;
        *self.last_recorded_at.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *staged = Staged::default();
        Ok(())
    }

    /// [`crate::shared::EventLog::append_sealed`] for a store used as another's shared log.
    pub(crate) fn append_sealed(
        &self,
        expected: Head,
        commands: &[(Option<String>, Vec<Event>)],
    ) -> Result<(), AppendError> {
        let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
        if *head != expected {
            return Err(AppendError::Conflict { expected: expected.seq, actual: head.seq });
        }
        let sealed = SealedAppend::of(expected, commands).map_err(LedgerError::Inconsistent)?;
        let Some(recorded_at) = sealed.recorded_at else { return Ok(()) };
        let mut batch = Batch::default();
        for (key, range) in &sealed.keys {
            if IdempotencyTable::get(self.store(), key)?.is_some() {
                return Err(AppendError::Conflict { expected: expected.seq, actual: head.seq });
            }
            IdempotencyTable::put(&mut batch, key, *range);
        }
        for event in &sealed.events {
            EventsTable::put(&mut batch, event);
        }
        MetaTable::put_head(&mut batch, sealed.head);
        self.store().write(batch, true)?;
        *head = sealed.head;
        *self.last_recorded_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(recorded_at);
        Ok(())
    }

    /// On open: when the store was closed (or killed) with commands staged, drop them as
    /// [`Ledger::discard_staged`] does, and say so (the views must be replayed). The shared log
    /// holds them if their flush committed, and the copy reads them again from it.
    pub(crate) fn rewind_unshared_on_open(&self) -> Result<bool, LedgerError> {
        let Some(base) = MetaTable::unshared(self.store())? else { return Ok(false) };
        let mut staged = self.staged();
        self.rewind(&mut staged, base)?;
        Ok(true)
    }
}

/// What [`crate::shared::EventLog::append_sealed`] writes after a head, whatever holds the log.
pub(crate) struct SealedAppend<'a> {
    /// The sealed events in order, each checked to follow the one before.
    pub(crate) events: Vec<&'a Event>,
    /// Each keyed command's seqs.
    pub(crate) keys: Vec<(String, SeqRange)>,
    /// The head after them, and its time (`None`: no events, nothing to write).
    pub(crate) head: Head,
    pub(crate) recorded_at: Option<Timestamp>,
}

impl<'a> SealedAppend<'a> {
    /// `commands`' events after `expected`; a link that does not follow is refused, saying why.
    pub(crate) fn of(expected: Head, commands: &'a [(Option<String>, Vec<Event>)]) -> Result<Self, String> {
        let mut sealed = SealedAppend { events: Vec::new(), keys: Vec::new(), head: expected, recorded_at: None };
        for (key, events) in commands {
            for event in events {
                if let Some(problem) = link_problem(sealed.head, event) {
                    return Err(format!("sealed events refused: {problem}"));
                }
                sealed.head = Head { seq: event.seq, hash: event.hash };
                sealed.recorded_at = Some(event.recorded_at);
                sealed.events.push(event);
            }
            if let (Some(key), Some(first), Some(last)) = (key, events.first(), events.last()) {
                sealed.keys.push((key.clone(), SeqRange { first: first.seq, last: last.seq }));
            }
        }
        Ok(sealed)
    }
}
