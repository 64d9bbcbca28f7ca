//! Group commit on a shared ledger: the saves one process makes at once reach the shared ledger
//! in one transaction, not one each.
//!
//! The rules (docs/adr/0026-group-commit.md):
//! - A synced save that finds other saves waiting for the store's write lock, or commands
//!   already staged, takes the ledger's exclusive turn (no other machine appends while it is
//!   held), decides, and *stages* its events in the store's copy (ledger/src/staging.rs): the
//!   views apply them at once, so the next save decides on them, but none is acknowledged yet.
//! - It then lets the write lock go and takes it again: by then the saves queued behind it have
//!   staged theirs. The first of them to hold the lock with commands staged flushes them all to
//!   the shared ledger in one transaction and gives the turn back; the others find theirs
//!   acknowledged. A save alone in its process appends on its own, as before.
//! - Any other command flushes what is staged before it runs, so it sees acknowledged state only.
//! - A flush that fails loses every staged command (the copy is rewound, the views replayed) and
//!   each of their saves gets the failure: a moved head (the turn was lost with its session)
//!   decides again, anything else is the save's error. A deferred save (`save --from`) learns of
//!   it at the next `sync`.
//! - Reads do not take the write lock: they may see staged commands before they are
//!   acknowledged, as they see a deferred save before its sync.

use memledger_ledger::shared::Turn;
use memledger_ledger::{AppendError, LedgerError};
use rustc_hash::FxHashMap;

use crate::error::{Conflict, EngineError};

/// Staged commands at most in one group: past this many, the save that staged the last one
/// flushes at once (a bulk save does not hold the exclusive turn for its whole input).
pub(crate) const GROUP_MAX_COMMANDS: usize = 64;

/// A staged save's place in its group.
pub(crate) type Ticket = u64;

/// Why a group's flush failed, as each of its saves reports it.
#[derive(Clone, Debug)]
pub(crate) struct GroupFailure {
    /// The head moved under the group (its turn was lost): decide again.
    moved: Option<(u64, u64)>,
    location: String,
    message: String,
}

impl GroupFailure {
    pub(crate) fn of(error: &AppendError, location: String) -> GroupFailure {
        match error {
            AppendError::Conflict { expected, actual } => {
                GroupFailure { moved: Some((*expected, *actual)), location, message: error.to_string() }
            }
            AppendError::Storage(LedgerError::Shared { location, message }) => {
                GroupFailure { moved: None, location: location.clone(), message: message.clone() }
            }
            AppendError::Storage(other) => GroupFailure { moved: None, location, message: other.to_string() },
        }
    }

    /// Whether the save decides again (the head moved), rather than failing.
    pub(crate) fn decide_again(&self) -> bool {
        self.moved.is_some()
    }

    pub(crate) fn error(&self) -> EngineError {
        match self.moved {
            Some((expected, actual)) => Conflict::HeadMoved { expected, actual }.into(),
            None => EngineError::Storage(LedgerError::Shared {
                location: self.location.clone(),
                message: format!("{}; the commands grouped with this one were not acknowledged", self.message),
            }),
        }
    }
}

/// Where a staged save stands.
pub(crate) enum TicketState {
    Staged,
    Acknowledged,
    Failed(GroupFailure),
}

/// The group commit state of one open store, guarded by its write lock.
#[derive(Default)]
pub(crate) struct Group {
    /// The shared ledger's exclusive turn, held while commands are staged.
    turn: Option<Turn>,
    next_ticket: Ticket,
    /// The synced saves staged and not yet flushed.
    staged: Vec<Ticket>,
    /// Deferred saves are staged too (acknowledged by `sync`).
    deferred: bool,
    failed: FxHashMap<Ticket, GroupFailure>,
    deferred_failure: Option<GroupFailure>,
    /// The views hold commands the copy no longer does (a failed flush): replay them before
    /// any other work.
    views_ahead: bool,
}

impl Group {
    pub(crate) fn holds_turn(&self) -> bool {
        self.turn.is_some()
    }

    pub(crate) fn hold_turn(&mut self, turn: Option<Turn>) {
        self.turn = turn;
    }

    /// A synced save staged: its ticket.
    pub(crate) fn staged(&mut self) -> Ticket {
        self.next_ticket += 1;
        self.staged.push(self.next_ticket);
        self.next_ticket
    }

    pub(crate) fn staged_deferred(&mut self) {
        self.deferred = true;
    }

    /// Where `ticket` stands; a failure is told once.
    pub(crate) fn state(&mut self, ticket: Ticket) -> TicketState {
        if self.staged.contains(&ticket) {
            TicketState::Staged
        } else if let Some(failure) = self.failed.remove(&ticket) {
            TicketState::Failed(failure)
        } else {
            TicketState::Acknowledged
        }
    }

    /// The group was flushed (or failed): its saves learn the outcome, the turn goes back.
    pub(crate) fn flushed(&mut self, outcome: Result<(), GroupFailure>) {
        if let Err(failure) = outcome {
            for ticket in self.staged.iter() {
                self.failed.insert(*ticket, failure.clone());
            }
            if self.deferred {
                self.deferred_failure.get_or_insert(failure);
            }
        }
        self.staged.clear();
        self.deferred = false;
        self.turn = None;
    }

    pub(crate) fn views_ahead(&self) -> bool {
        self.views_ahead
    }

    pub(crate) fn set_views_ahead(&mut self) {
        self.views_ahead = true;
    }

    pub(crate) fn views_replayed(&mut self) {
        self.views_ahead = false;
    }

    /// The failure of a flush that lost deferred saves, once.
    pub(crate) fn take_deferred_failure(&mut self) -> Option<GroupFailure> {
        self.deferred_failure.take()
    }
}
