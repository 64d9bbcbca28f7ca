//! The ledger as a trait: what holds the events when several machines share one ledger.
//!
//! [`EventLog`] is the ledger's own API (append one command's events against an expected head
//! with idempotency keys, read by seq, head, verify, export/import), implemented by the RocksDB
//! [`Ledger`] and by [`crate::postgres::PgLedger`]. A store opened with a shared log keeps a
//! verified copy of its events in its own `events` table, so the views and the text index are
//! built and replayed from local reads as ever; the shared log is the authority that orders
//! appends (docs/shared-ledger.md). The engine sees a [`Ledger`] either way.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use memledger_schemas::{Event, Hash, MemoryErased};

use crate::error::{AppendError, ImportError, LedgerError, OpenError};
use crate::exchange::{ImportReport, Stream};
use crate::ledger::{Appended, CommandMeta, Ledger, NewEvent};
use crate::signing::{KeyId, KeyRecord, Signer, StoreId};
use crate::tables::{Head, SeqRange, Signed};
use crate::verify::VerifyReport;

/// A shared log's keys and signed checkpoints (a malformed checkpoint is `Err(seq)`).
pub struct LogSignatures {
    pub store_id: StoreId,
    pub keys: Vec<KeyRecord>,
    pub checkpoints: Vec<Result<Signed, u64>>,
}

impl LogSignatures {
    /// Check the log's keys and checkpoints against its chain's `hashes`; `known_signed`: the
    /// log was seen signed before, so a log that has lost its keys fails.
    pub(crate) fn check(self, hashes: &[Hash], known_signed: bool) -> crate::verify::SignatureCheck {
        let signed = known_signed || !self.keys.is_empty();
        crate::verify::check_signatures(self.store_id, &self.keys, signed, self.checkpoints.into_iter(), hashes)
    }
}

/// Events read from a log per round trip.
pub const READ_CHUNK: usize = 2048;

/// The right to append alone (see [`EventLog::exclusive_turn`]), given back when dropped.
pub struct Turn(#[allow(dead_code)] Box<dyn Send>);

impl Turn {
    pub fn new(guard: impl Send + 'static) -> Turn {
        Turn(Box::new(guard))
    }
}

/// An append-only, hash-chained log of events that orders appends.
pub trait EventLog: Send + Sync {
    /// Where the log is, for messages (a URL without its password, a path).
    fn location(&self) -> String;
    /// The log's identity, fixed when it was created: a store copies one log only.
    fn log_id(&self) -> Result<String, LedgerError>;
    fn head(&self) -> Result<Head, LedgerError>;
    /// The committed seqs of an idempotency key, if any.
    fn idempotent(&self, key: &str) -> Result<Option<SeqRange>, LedgerError>;
    /// Append several commands' events in one durable write if the head is still
    /// `expected_head`, each command keeping its own idempotency key (a key already committed, or
    /// repeated earlier in the group, makes that command `Replayed`). A moved head is
    /// [`AppendError::Conflict`], and nothing is written.
    fn append_group(
        &self,
        expected_head: u64,
        commands: Vec<(CommandMeta, Vec<NewEvent>)>,
    ) -> Result<Vec<Appended>, AppendError>;
    /// Append an erasure if the head is still `expected_head`, and in the same durable write
    /// replace each event it names by its redacted form ([`Event::redact`]: texts blank, hash
    /// kept): the one exception to append-only (docs/adr/0017-erasure.md,
    /// docs/adr/0023-erasure-on-a-shared-ledger.md). A moved head is [`AppendError::Conflict`].
    fn append_erasure(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        erasure: MemoryErased,
    ) -> Result<Event, AppendError>;
    /// Append commands whose events this machine sealed itself (seq, `prev_hash`, hash, time)
    /// while it held [`EventLog::exclusive_turn`], in one durable write, if the head is still
    /// `expected` (seq and hash), recording each command's idempotency key (crate::staging).
    /// A moved head, or a key already committed, is [`AppendError::Conflict`]; events that do
    /// not follow the head are refused; either way nothing is written.
    fn append_sealed(&self, expected: Head, commands: &[(Option<String>, Vec<Event>)]) -> Result<(), AppendError>;
    /// Up to `limit` events from `from_seq` on, in order.
    fn read(&self, from_seq: u64, limit: usize) -> Result<Vec<Event>, LedgerError>;
    /// Import a checked stream all-or-nothing: a prefix already present is compared, the rest
    /// appended; a diverging stream is refused.
    fn import_stream(&self, stream: Stream) -> Result<ImportReport, ImportError>;
    /// Return once the head may have passed `seq` (a notification), or after `timeout` (the
    /// polling fallback); the caller reads the head again either way.
    fn wait_past(&self, seq: u64, timeout: Duration) -> Result<(), LedgerError>;
    /// The log's secret `name`, kept beside its events and never among them (never exported,
    /// streamed or logged): the one it holds, else `fresh` (if given), held from now on. Every
    /// machine of a shared log gets the same one.
    fn secret(&self, name: &str, fresh: Option<&[u8; 32]>) -> Result<Option<[u8; 32]>, LedgerError>;

    /// Sign this machine's appends to the log with `signer` (crate::pg_signing): the log's
    /// first key when it is empty or was just upgraded to signing (the head found signed at
    /// once); else appends are refused until an administrator registers the key
    /// ([`EventLog::register_key`]). Reads the keys without locking anything. A log that orders
    /// one machine's appends only (RocksDB) is signed by its store instead.
    /// Returns the log's first key (`None`: the log has no keys, and its appends are refused
    /// until an administrator enrols one, [`EventLog::enrol`]).
    fn sign_with(&self, _signer: Arc<Signer>, _machine: &str) -> Result<Option<KeyId>, LedgerError> {
        Ok(None)
    }

    /// Make this machine's key the first of a log that has none, and sign its head as it is
    /// (trust on first use: `verify` it first). A log with keys keeps them.
    fn enrol(&self) -> Result<KeyRecord, LedgerError> {
        Err(LedgerError::Inconsistent("only a shared ledger is enrolled; a store of one machine signs itself".into()))
    }

    /// The log's keys and its signed checkpoints up to seq `through`, for `verify`; `None` for a
    /// log its store signs itself.
    fn signatures(&self, _through: u64) -> Result<Option<LogSignatures>, LedgerError> {
        Ok(None)
    }

    /// Register another machine's key (`public`, on `machine`) to sign appends from the next
    /// seq on, endorsed by this machine's; `by` names who asked. A key registered already is
    /// returned as it was.
    fn register_key(&self, _public: [u8; 32], _machine: &str, _by: &str) -> Result<KeyRecord, LedgerError> {
        Err(LedgerError::Inconsistent(
            "keys are registered on a shared ledger; a store of one machine is signed by that machine's key".into(),
        ))
    }

    /// The right to append alone: while the turn lives no other process appends, so a command
    /// decided under it cannot find the head moved by another machine. For a save that lost the
    /// race to other machines; `None` where no other process appends.
    fn exclusive_turn(&self) -> Result<Option<Turn>, LedgerError> {
        Ok(None)
    }

    /// Walk the whole chain: seqs gap-free from 1, each `prev_hash` the hash before it, each
    /// hash its event's, ending at the head.
    fn verify(&self) -> Result<VerifyReport, LedgerError> {
        let head = self.head()?;
        let mut prev = Head::EMPTY;
        let mut bad: Option<(u64, String)> = None;
        let mut hashes: Vec<Hash> = Vec::new();
        let (mut erased_events, mut erased_unprovable) = (0, 0);
        'chunks: loop {
            let events = self.read(prev.seq + 1, READ_CHUNK)?;
            if events.is_empty() {
                break;
            }
            for event in events {
                if let Some(problem) = link_problem(prev, &event) {
                    bad = Some((prev.seq + 1, problem));
                    break 'chunks;
                }
                if event.erased.is_some() {
                    erased_events += 1;
                    erased_unprovable += u64::from(event.format < 3);
                }
                prev = Head { seq: event.seq, hash: event.hash };
                hashes.push(event.hash);
            }
        }
        if bad.is_none() && (prev.seq < head.seq || prev.hash != head.hash) {
            bad =
                Some((prev.seq + 1, format!("the head says seq {} but the chain ends at seq {}", head.seq, prev.seq)));
        }
        let report = VerifyReport::new(prev.seq, head, bad, erased_events, erased_unprovable);
        Ok(match self.signatures(prev.seq)? {
            Some(s) => report.with_signatures(s.check(&hashes, false)),
            None => report,
        })
    }

    /// Write every event with `seq >= since` as one JSON line each. Returns the count.
    fn export(&self, since: u64, out: &mut dyn Write) -> Result<u64, LedgerError> {
        let mut next = since.max(1);
        let mut n = 0;
        loop {
            let events = self.read(next, READ_CHUNK)?;
            let Some(last) = events.last() else { break };
            next = last.seq + 1;
            for event in &events {
                serde_json::to_writer(&mut *out, event).map_err(|e| LedgerError::Io(e.into()))?;
                out.write_all(b"\n")?;
                n += 1;
            }
        }
        out.flush()?;
        Ok(n)
    }
}

/// What is wrong with `event` as the event after `prev`, if anything.
pub fn link_problem(prev: Head, event: &Event) -> Option<String> {
    if event.seq != prev.seq + 1 {
        Some(format!("seq {} is missing (found {})", prev.seq + 1, event.seq))
    } else if event.prev_hash != prev.hash {
        Some(format!("seq {}'s prev_hash does not match the previous event's hash", event.seq))
    } else if !event.hash_is_valid() {
        Some(format!("seq {}'s hash does not match the event's contents", event.seq))
    } else {
        None
    }
}

/// Connect to the shared log a URL names (`postgres://…` or `postgresql://…`), creating or
/// migrating its tables.
pub fn connect(url: &str) -> Result<Arc<dyn EventLog>, OpenError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(crate::postgres::PgLedger::connect(url)?))
    } else {
        Err(OpenError::Shared {
            location: url.into(),
            reason: "not a ledger URL this build knows (postgres://… or postgresql://…)".into(),
        })
    }
}

/// The RocksDB ledger is a log too: the one a single machine uses.
impl EventLog for Ledger {
    fn location(&self) -> String {
        self.store().path().display().to_string()
    }
    fn log_id(&self) -> Result<String, LedgerError> {
        Ok(self.location())
    }
    fn head(&self) -> Result<Head, LedgerError> {
        Ok(Ledger::head(self))
    }
    fn idempotent(&self, key: &str) -> Result<Option<SeqRange>, LedgerError> {
        Ledger::idempotent(self, key)
    }
    fn append_group(
        &self,
        expected_head: u64,
        commands: Vec<(CommandMeta, Vec<NewEvent>)>,
    ) -> Result<Vec<Appended>, AppendError> {
        Ledger::append_group(self, expected_head, commands, true)
    }
    fn append_erasure(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        erasure: MemoryErased,
    ) -> Result<Event, AppendError> {
        Ledger::append_erasure(self, expected_head, meta, erasure)
    }
    fn append_sealed(&self, expected: Head, commands: &[(Option<String>, Vec<Event>)]) -> Result<(), AppendError> {
        Ledger::append_sealed(self, expected, commands)
    }
    fn read(&self, from_seq: u64, limit: usize) -> Result<Vec<Event>, LedgerError> {
        self.scan(from_seq)?.take(limit).collect()
    }
    fn import_stream(&self, stream: Stream) -> Result<ImportReport, ImportError> {
        Ledger::import_stream(self, stream)
    }
    fn wait_past(&self, seq: u64, timeout: Duration) -> Result<(), LedgerError> {
        // One process holds a RocksDB store: its head moves only by this process's appends.
        if Ledger::head(self).seq <= seq {
            std::thread::sleep(timeout);
        }
        Ok(())
    }
    fn secret(&self, name: &str, fresh: Option<&[u8; 32]>) -> Result<Option<[u8; 32]>, LedgerError> {
        Ledger::local_secret(self, name, fresh)
    }
    fn verify(&self) -> Result<VerifyReport, LedgerError> {
        Ledger::verify(self)
    }
    fn export(&self, since: u64, out: &mut dyn Write) -> Result<u64, LedgerError> {
        Ledger::export(self, since, out)
    }
}

/// What [`Ledger::copy_to`] did.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CopyReport {
    /// Events the target held already (an earlier, interrupted copy's).
    pub already_present: u64,
    pub copied: u64,
    pub head_seq: u64,
    pub head_hash: Hash,
}

/// Commands copied per import, at least: a chunk ends where a command does, so that each
/// idempotency key's range is whole.
const COPY_CHUNK: usize = 4096;

impl Ledger {
    /// Copy this store's ledger into `target`, which must be empty or hold a prefix of it (an
    /// earlier copy that stopped): what it holds is compared, the rest imported in chunks, and
    /// the copy is checked end to end (the same head, seq and hash). Run it again to resume.
    pub fn copy_to(&self, target: &dyn EventLog) -> Result<CopyReport, ImportError> {
        let head = self.head();
        let start = target.head()?;
        if start.seq > head.seq {
            return Err(ImportError::Diverged {
                seq: head.seq + 1,
                message: format!(
                    "{} holds {} events, more than this store's {}",
                    target.location(),
                    start.seq,
                    head.seq
                ),
            });
        }
        if start.seq > 0 && self.get(start.seq)?.map(|e| e.hash) != Some(start.hash) {
            return Err(ImportError::Diverged {
                seq: start.seq,
                message: format!("{} holds another ledger", target.location()),
            });
        }
        let mut chunk: Vec<Event> = Vec::with_capacity(COPY_CHUNK);
        let mut copied = 0;
        for event in self.scan(start.seq + 1)? {
            let event = event?;
            let command_ends = chunk.last().is_some_and(|last: &Event| last.correlation_id != event.correlation_id);
            if chunk.len() >= COPY_CHUNK && command_ends {
                copied += target.import_stream(Stream::from_events(std::mem::take(&mut chunk))?)?.appended;
            }
            chunk.push(event);
        }
        if !chunk.is_empty() {
            copied += target.import_stream(Stream::from_events(chunk)?)?.appended;
        }
        let end = target.head()?;
        if end != head {
            return Err(ImportError::Diverged {
                seq: end.seq.min(head.seq),
                message: format!(
                    "after the copy {} ends at seq {} ({}) but this store at seq {} ({})",
                    target.location(),
                    end.seq,
                    end.hash.hex(),
                    head.seq,
                    head.hash.hex()
                ),
            });
        }
        Ok(CopyReport { already_present: start.seq, copied, head_seq: end.seq, head_hash: end.hash })
    }

    /// After [`Ledger::copy_to`] reached the same head: record that this store copies `log`, so
    /// it can be opened with it.
    pub fn adopt(&self, log: &dyn EventLog) -> Result<(), LedgerError> {
        let mut batch = crate::store::Batch::default();
        crate::tables::MetaTable::put_shared_log(&mut batch, &log.log_id()?);
        self.store().write(batch, true)
    }
}
