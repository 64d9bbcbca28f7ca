//! The `Ledger`: appends against an expected head, idempotency keys, reads and scans.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memledger_schemas::{
    CURRENT_FORMAT, CorrelationId, Event, EventBody, EventId, Hash, HeadAccepted, MemoryErased, Timestamp,
};

use crate::error::{AppendError, LedgerError, OpenError};
use crate::shared::{EventLog, READ_CHUNK, link_problem};
use crate::signing::{KeyId, KeyRecord, Signer, StoreId};
use crate::store::{Batch, CF_EVENTS, Store, Table};
use crate::tables::{CheckpointsTable, EventsTable, IdempotencyTable, MetaTable, STORE_FORMAT, Signed};
pub use crate::tables::{Head, SeqRange};
use crate::witness::{WitnessRecord, WitnessWriter, witness_path};

/// How to open a store.
#[derive(Clone)]
pub struct OpenOptions {
    /// Create the store when it does not exist.
    pub create: bool,
    /// How long to wait for another process's lock.
    pub wait: Duration,
    /// The shared log this store copies and appends through (crate::shared), if any: the
    /// store's `events` table then holds a verified copy of that log's events.
    pub shared: Option<Arc<dyn EventLog>>,
    /// This machine's signing key: the head of every commit is signed with it (crate::signing).
    /// `None` leaves a store that was never signed unsigned. Not used for a copy of a shared log.
    pub signer: Option<Arc<Signer>>,
    /// The directory of this machine's witnesses (crate::witness): a store behind, or different
    /// from, its witness is refused ([`OpenError::Witness`]), and every synced commit moves it.
    pub witness_dir: Option<PathBuf>,
    /// Open a store that disagrees with its witness anyway, to accept its head deliberately
    /// ([`Ledger::witness_disagreement`], [`Ledger::accept_head`]).
    pub accept_witness: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            create: true,
            wait: Duration::from_secs(10),
            shared: None,
            signer: None,
            witness_dir: None,
            accept_witness: false,
        }
    }
}

impl std::fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenOptions")
            .field("create", &self.create)
            .field("wait", &self.wait)
            .field("shared", &self.shared.as_ref().map(|log| log.location()))
            .field("signer", &self.signer.as_ref().map(|s| s.id()))
            .field("witness_dir", &self.witness_dir)
            .field("accept_witness", &self.accept_witness)
            .finish()
    }
}

/// Who and what a command is: shared by all its events.
#[derive(Clone, Debug)]
pub struct CommandMeta {
    /// Whom the command acts for, as the client said (`--actor`).
    pub actor: String,
    /// The authenticated principal appending it (format 5's envelope).
    pub principal: String,
    pub correlation_id: CorrelationId,
    pub idempotency_key: Option<String>,
}

impl CommandMeta {
    /// A command of the store's owner, acting as `actor`.
    pub fn new(actor: impl Into<String>) -> Self {
        CommandMeta::by(memledger_schemas::OWNER, actor)
    }

    /// A command of `principal`, acting as `actor`.
    pub fn by(principal: impl Into<String>, actor: impl Into<String>) -> Self {
        CommandMeta {
            actor: actor.into(),
            principal: principal.into(),
            correlation_id: CorrelationId::random(),
            idempotency_key: None,
        }
    }
}

/// An event before the ledger gives it a seq, an id, a time and a hash.
#[derive(Clone, Debug)]
pub struct NewEvent {
    pub body: EventBody,
    /// The seq this event reacts to, if it is an earlier command's.
    pub causation: Option<u64>,
}

impl From<EventBody> for NewEvent {
    fn from(body: EventBody) -> Self {
        NewEvent { body, causation: None }
    }
}

/// A head accepted although it disagreed with the witness ([`Ledger::accept_head`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Acceptance {
    /// Who accepted it (the actor of the command).
    pub by: String,
    pub at: Timestamp,
    pub reason: String,
    pub head_seq: u64,
    pub head_hash: String,
    /// The witness's head it was accepted instead of, when there was a witness.
    pub instead_of_seq: Option<u64>,
    pub instead_of_hash: Option<String>,
    /// How the store disagreed with the witness when it was opened.
    pub disagreement: Option<String>,
    /// The key that signed the record.
    pub key_id: String,
}

impl Acceptance {
    /// The acceptance a `head_accepted` event records.
    pub fn of(event: &Event) -> Option<Acceptance> {
        let EventBody::HeadAccepted(b) = &event.body else { return None };
        Some(Acceptance {
            by: event.actor.clone(),
            at: event.recorded_at,
            reason: b.reason.clone(),
            head_seq: b.head_seq,
            head_hash: b.head_hash.hex(),
            instead_of_seq: b.instead_of_seq,
            instead_of_hash: b.instead_of_hash.map(|h| h.hex()),
            disagreement: b.disagreement.clone(),
            key_id: b.key_id.clone(),
        })
    }
}

/// The result of an append.
#[derive(Clone, Debug)]
pub enum Appended {
    /// The events were written, durably.
    Committed(Vec<Event>),
    /// The idempotency key was already committed: nothing was written; these seqs hold the
    /// original command's events.
    Replayed(SeqRange),
}

/// The event store.
pub struct Ledger {
    store: Store,
    /// The head, guarded: appends are serialised within the process (RocksDB's lock serialises
    /// processes).
    pub(crate) head: Mutex<Head>,
    /// The `recorded_at` of the head event, once read (time in the ledger never runs backwards).
    /// Only touched under the `head` lock; `None` means "read it from the store".
    pub(crate) last_recorded_at: Mutex<Option<Timestamp>>,
    /// Whether unsynced appends moved the head past the stored head record. The record is
    /// written with every synced write, by [`Ledger::sync`] and on drop, not with each unsynced
    /// append (a second key for every append, where one per sync is enough); on open, the events
    /// after the record are followed link by link. Only changed under the `head` lock.
    pub(crate) record_behind: AtomicBool,
    /// The shared log that orders appends, when the store copies one (crate::shared).
    shared: Option<Arc<dyn EventLog>>,
    /// Commands in the copy ahead of the shared log (group commit, crate::staging).
    pub(crate) staged: Mutex<crate::staging::Staged>,
    /// Whether opening dropped commands staged when the store was last closed: the views are
    /// ahead of the ledger and must be replayed.
    rewound_on_open: AtomicBool,
    /// The store's identity, which its checkpoints' signatures cover.
    store_id: StoreId,
    /// The key that signs each commit's head, when the store is signed on this machine.
    signer: Option<Arc<Signer>>,
    /// Why appends are refused: this machine's key is not one of the store's keys, or the head
    /// it would extend is not signed.
    foreign_key: Option<String>,
    /// This store's witness file, when witnesses are kept.
    witness: Option<PathBuf>,
    /// The thread that writes it, and the store's canonical path the records name.
    witness_writer: Option<(WitnessWriter, PathBuf)>,
    /// How the store disagreed with its witness when it was opened with `accept_witness`.
    witness_disagreement: Option<String>,
}

impl Ledger {
    /// Open the ledger at `path`, with the view tables a projector will use.
    pub fn open(path: &Path, options: &OpenOptions, view_tables: &[Table]) -> Result<Ledger, OpenError> {
        let store = Store::open(path, view_tables, options.create, options.wait)?;
        match MetaTable::store_format(&store)? {
            Some(STORE_FORMAT) => {}
            Some(other) => {
                return Err(OpenError::Unusable {
                    path: path.into(),
                    reason: format!("store format {other} is not one this build reads ({STORE_FORMAT})"),
                });
            }
            None => {
                // A store without its format record holds no events and no table files (the
                // record is its first write): either without it means the meta table was lost
                // (a damaged manifest), never a new, empty ledger.
                let has_tables = std::fs::read_dir(path)
                    .map(|d| d.flatten().any(|f| f.path().extension().is_some_and(|x| x == "sst")))
                    .unwrap_or(false);
                if has_tables || store.scan_from(CF_EVENTS, &[])?.next().is_some() {
                    return Err(OpenError::Unusable {
                        path: path.into(),
                        reason: "it holds events but no format record: its meta table is damaged or missing".into(),
                    });
                }
                let mut batch = Batch::default();
                MetaTable::put_store_format(&mut batch);
                store.write(batch, true)?;
            }
        }
        let recorded = MetaTable::head(&store)?;
        let head = Self::follow_unrecorded(&store, recorded).map_err(|reason| OpenError::Unusable {
            path: path.into(),
            reason: format!("{reason}: the store is damaged after its last synced write"),
        })?;
        let (store_id, fresh) = match MetaTable::store_id(&store)? {
            Some(id) => (id, false),
            None => {
                let id = StoreId::random();
                let mut batch = Batch::default();
                MetaTable::put_store_id(&mut batch, id);
                store.write(batch, true)?;
                (id, head.seq == 0)
            }
        };
        let signer = options.signer.clone().filter(|_| options.shared.is_none());
        let mut ledger = Ledger {
            store,
            head: Mutex::new(head),
            last_recorded_at: Mutex::new(None),
            record_behind: AtomicBool::new(head != recorded),
            shared: options.shared.clone(),
            staged: Mutex::default(),
            rewound_on_open: AtomicBool::new(false),
            store_id,
            signer,
            foreign_key: None,
            witness: options.witness_dir.as_ref().map(|dir| witness_path(dir, path)),
            witness_writer: None,
            witness_disagreement: None,
        };
        if let Some(log) = &ledger.shared {
            ledger.rewound_on_open.store(ledger.rewind_unshared_on_open()?, Ordering::Relaxed);
            ledger.attach(path, log.as_ref())?;
            // Each machine signs its appends to a shared log with its own key (crate::pg_signing).
            if let Some(signer) = &options.signer
                && let Some(first) = log.sign_with(signer.clone(), &machine_name())?
            {
                ledger.remember_shared_first_key(first)?;
            }
        }
        if !fresh && let Some(disagreement) = ledger.disagreement_with_witness()? {
            if !options.accept_witness {
                return Err(OpenError::Witness { path: path.into(), reason: disagreement });
            }
            ledger.witness_disagreement = Some(disagreement);
        }
        if let Some(file) = ledger.witness.clone().filter(|_| ledger.signer.is_some()) {
            let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            ledger.witness_writer = Some((WitnessWriter::start(file), canonical));
        }
        ledger.enrol_signer()?;
        Ok(ledger)
    }

    /// The store's identity.
    pub fn store_id(&self) -> StoreId {
        self.store_id
    }

    /// The key signing this store's commits on this machine, if it is signed here.
    pub fn signer(&self) -> Option<&Signer> {
        self.signer.as_deref().filter(|_| self.foreign_key.is_none())
    }

    /// Register this machine's key in a store that has none yet (its first key, endorsed by
    /// itself), and sign the head it finds: a store written before checkpoints existed is
    /// covered from here on. A store whose keys do not include this machine's is opened, but its
    /// appends are refused.
    fn enrol_signer(&mut self) -> Result<(), LedgerError> {
        let Some(signer) = self.signer.clone() else { return Ok(()) };
        let mut keys = CheckpointsTable::keys(&self.store)?;
        // A key rotated away from: whatever signs with it from the seq its successor took over
        // counts for nothing.
        if let Some(successor) = keys.iter().find(|k| k.retires && k.endorsed_by == signer.id() && k.id != signer.id())
        {
            self.foreign_key = Some(format!(
                "this machine's signing key {} ({}) was retired from seq {} by key {}: appends are refused; use the key \
                 that replaced it",
                signer.id(),
                signer.path().display(),
                successor.from_seq,
                successor.id
            ));
            return Ok(());
        }
        // This machine rotated its key (`memledger checkpoint --rotate-key`): the key it
        // retired, still in force here, endorses the new one from the next seq on.
        if !keys.iter().any(|k| k.id == signer.id())
            && let Some(record) = self.rotation_from_retired(&signer, &keys)?
        {
            keys.push(record);
        }
        if keys.iter().any(|k| k.id == signer.id()) {
            // Appending signs the new head, which would vouch for everything before it: the head
            // found must be signed already, or events were appended without the key.
            let head = self.head();
            let signed = head.seq == 0
                || CheckpointsTable::signature(&self.store, head.seq)?.is_some_and(|cp| {
                    keys.iter().find(|k| k.id == cp.key).is_some_and(|k| {
                        crate::signing::checkpoint_holds(&k.public, self.store_id, head, &cp.signature)
                    })
                });
            if !signed {
                self.foreign_key = Some(format!(
                    "the store's head (seq {}) is not signed: events were appended or rewritten without the key; \
                     nothing is appended on top of them (see `memledger verify`)",
                    head.seq
                ));
            }
            return Ok(());
        }
        if !keys.is_empty() {
            let ids: Vec<String> = keys.iter().map(|k| k.id.hex()).collect();
            self.foreign_key = Some(format!(
                "this machine's signing key {} ({}) is not one of this store's keys ({}): appends are refused; use \
                 the key file of the machine that signs it (MEMLEDGER_SIGNING_KEY)",
                signer.id(),
                signer.path().display(),
                ids.join(", ")
            ));
            return Ok(());
        }
        let head = self.head();
        let record = KeyRecord {
            id: signer.id(),
            public: signer.public(),
            from_seq: head.seq.max(1),
            endorsed_by: signer.id(),
            endorsement: [0; 64],
            retires: false,
            machine: machine_name(),
        };
        let record =
            KeyRecord { endorsement: signer.endorse(self.store_id, &record.public, record.from_seq), ..record };
        let mut batch = Batch::default();
        CheckpointsTable::put_key(&mut batch, &record);
        let signature = self.seal(&mut batch, head);
        self.store.write(batch, true)?;
        if let Some(signature) = signature {
            self.write_witness(head, &signature);
        }
        Ok(())
    }

    /// The key record by which one of `signer`'s retired keys, still in force in this store,
    /// hands it over to `signer` from the seq after the head, written (synced); `None` when no
    /// retired key of this machine signs the store. The head must be signed by the retired key
    /// (as before any append): a tail appended without a key is not endorsed by a rotation.
    fn rotation_from_retired(&self, signer: &Signer, keys: &[KeyRecord]) -> Result<Option<KeyRecord>, LedgerError> {
        let retired_ids: Vec<KeyId> =
            keys.iter().filter(|k| k.retires && k.id != k.endorsed_by).map(|k| k.endorsed_by).collect();
        let Some(old) = signer
            .retired()
            .into_iter()
            .find(|r| keys.iter().any(|k| k.id == r.id()) && !retired_ids.contains(&r.id()))
        else {
            return Ok(None);
        };
        let head = self.head();
        let head_signed_by_old = head.seq == 0
            || CheckpointsTable::signature(&self.store, head.seq)?.is_some_and(|cp| {
                cp.key == old.id()
                    && crate::signing::checkpoint_holds(&old.public(), self.store_id, head, &cp.signature)
            });
        if !head_signed_by_old {
            return Ok(None);
        }
        let from_seq = head.seq + 1;
        let record = KeyRecord {
            id: signer.id(),
            public: signer.public(),
            from_seq,
            endorsed_by: old.id(),
            endorsement: old.endorse(self.store_id, &signer.public(), from_seq),
            retires: true,
            machine: machine_name(),
        };
        let mut batch = Batch::default();
        CheckpointsTable::put_key(&mut batch, &record);
        self.store.write(batch, true)?;
        Ok(Some(record))
    }

    /// The store's keys, oldest first: each key's id, the seq it signs from, the key that
    /// endorsed it, whether it retired that key, and the machine it was made on.
    pub fn keys(&self) -> Result<Vec<KeyRecord>, LedgerError> {
        let mut keys = CheckpointsTable::keys(&self.store)?;
        keys.sort_by_key(|k| (k.from_seq, k.endorsed_by != k.id));
        Ok(keys)
    }

    /// Register another machine's key on the shared log this store copies, endorsed by this
    /// machine's key (docs/shared-ledger.md); `by` names the administrator who asked.
    pub fn register_key(&self, public: [u8; 32], machine: &str, by: &str) -> Result<KeyRecord, LedgerError> {
        let Some(log) = &self.shared else {
            return Err(LedgerError::Inconsistent(
                "this store is not on a shared ledger: its own machine's key signs it, and no other may".into(),
            ));
        };
        log.register_key(public, machine, by)
    }

    /// Sign the shared log this store copies, which has no keys, from its head as it is, with
    /// this machine's key (an administrator's deliberate step, after `verify`).
    pub fn enrol_shared(&self) -> Result<KeyRecord, LedgerError> {
        let Some(log) = &self.shared else {
            return Err(LedgerError::Inconsistent("this store is not on a shared ledger".into()));
        };
        let record = log.enrol()?;
        self.remember_shared_first_key(record.id)?;
        Ok(record)
    }

    /// Keep the shared log's first key as this machine first saw it (`verify` fails when the log
    /// later shows another, or none); one seen already stays.
    fn remember_shared_first_key(&self, first: KeyId) -> Result<(), LedgerError> {
        if MetaTable::shared_first_key(&self.store)?.is_some() {
            return Ok(());
        }
        let mut batch = Batch::default();
        MetaTable::put_shared_first_key(&mut batch, first);
        self.store.write(batch, true)
    }

    /// Add the signed checkpoint of `head` to `batch` (nothing for an empty ledger or an
    /// unsigned store): its signature.
    pub(crate) fn seal(&self, batch: &mut Batch, head: Head) -> Option<[u8; 64]> {
        let signer = self.sealing_key(head)?;
        let signature = signer.sign_checkpoint(self.store_id, head);
        CheckpointsTable::put_signature(batch, head.seq, signer.id(), &signature);
        Some(signature)
    }

    /// As [`Ledger::seal`] for an unsynced write, which no witness follows: the signature is
    /// made as the batch is written (by the write-behind thread, beside the next append).
    fn seal_later(&self, batch: &mut Batch, head: Head) {
        let Some(signer) = self.sealing_key(head).cloned() else { return };
        let (store, key) = (self.store_id, signer.id());
        CheckpointsTable::put_signature_later(batch, head.seq, key, move || signer.sign_checkpoint(store, head));
    }

    /// The key that signs the checkpoint of `head`: none for an empty ledger, an unsigned store
    /// or one whose keys do not include this machine's.
    fn sealing_key(&self, head: Head) -> Option<&Arc<Signer>> {
        self.signer.as_ref().filter(|_| head.seq > 0 && self.foreign_key.is_none())
    }

    /// Appends are refused while this machine's key is not one of the store's.
    pub(crate) fn may_append(&self) -> Result<(), LedgerError> {
        match &self.foreign_key {
            Some(reason) => Err(LedgerError::Unsigned(reason.clone())),
            None => Ok(()),
        }
    }

    /// Move the witness to `head`, durable and signed. Best effort: a witness that could not be
    /// written lags behind the store, which weakens the check and breaks nothing.
    pub(crate) fn write_witness(&self, head: Head, signature: &[u8; 64]) {
        let (Some((writer, store)), Some(signer)) = (&self.witness_writer, &self.signer) else { return };
        writer.submit(WitnessRecord::new(store, self.store_id, head, signer.id(), signature));
    }

    /// How the store disagrees with `witness` (another store, a head behind it, a different
    /// event at its seq, a signature no key of the store made), if it does.
    pub fn disagreement_with(&self, witness: &WitnessRecord, source: &str) -> Result<Option<String>, LedgerError> {
        let (store_id, at, key, signature) = match witness.parts() {
            Ok(parts) => parts,
            Err(problem) => return Ok(Some(format!("the witness {source} is unreadable: {problem}"))),
        };
        let head = self.head();
        if store_id != self.store_id {
            return Ok(Some(format!(
                "the witness {source} is of store {} at seq {}, and this is store {} (head seq {}): the store was \
                 replaced by another",
                store_id.hex(),
                at.seq,
                self.store_id.hex(),
                head.seq
            )));
        }
        if head.seq < at.seq {
            return Ok(Some(format!(
                "the store's head is seq {} but its witness {source} has seen seq {}: the store was restored from an \
                 older copy or truncated",
                head.seq, at.seq
            )));
        }
        if EventsTable::get(&self.store, at.seq)?.map(|e| e.hash) != Some(at.hash) {
            return Ok(Some(format!(
                "the store's event at seq {} is not the one its witness {source} signed (head seq {}): its history was \
                 rewritten",
                at.seq, head.seq
            )));
        }
        let keys = CheckpointsTable::keys(&self.store)?;
        let signed = keys
            .iter()
            .find(|k| k.id == key)
            .is_some_and(|k| crate::signing::checkpoint_holds(&k.public, self.store_id, at, &signature));
        if !signed {
            return Ok(Some(format!(
                "the witness {source} at seq {} is not signed by a key of this store (key {})",
                at.seq,
                key.hex()
            )));
        }
        Ok(None)
    }

    fn disagreement_with_witness(&self) -> Result<Option<String>, LedgerError> {
        let Some(path) = &self.witness else { return Ok(None) };
        let witness = match WitnessRecord::read(path) {
            Ok(w) => w,
            Err(LedgerError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Ok(Some(e.to_string())),
        };
        self.disagreement_with(&witness, &path.display().to_string())
    }

    /// How the store disagreed with its witness when it was opened to accept it.
    pub fn witness_disagreement(&self) -> Option<&str> {
        self.witness_disagreement.as_deref()
    }

    /// The newest checkpoint, as a witness record: the head and its signature, if it is signed.
    pub fn checkpoint(&self) -> Result<Option<WitnessRecord>, LedgerError> {
        let Some((head, signed)) = self.signed_from(self.head())? else { return Ok(None) };
        let store = std::fs::canonicalize(self.store.path()).unwrap_or_else(|_| self.store.path().to_path_buf());
        Ok(Some(WitnessRecord::new(&store, self.store_id, head, signed.key, &signed.signature)))
    }

    /// Take this store's head as its history from now on although it disagrees with its witness
    /// (a restore from a backup, on purpose): a `head_accepted` event of `by` saying which head
    /// instead of which and why, appended and signed like any commit, which moves the witness
    /// on to it.
    pub fn accept_head(&self, by: CommandMeta, reason: &str) -> Result<Acceptance, LedgerError> {
        self.may_append()?;
        let signer = self.signer().ok_or_else(|| {
            LedgerError::Unsigned("this store is not signed on this machine: there is no witness to accept".into())
        })?;
        let head = self.head();
        let witness = self.witness.as_ref().and_then(|p| WitnessRecord::read(p).ok());
        let body = HeadAccepted {
            reason: reason.into(),
            head_seq: head.seq,
            head_hash: head.hash,
            instead_of_seq: witness.as_ref().map(|w| w.seq),
            instead_of_hash: witness.as_ref().and_then(|w| Hash::parse_hex(&w.hash)),
            disagreement: self.witness_disagreement.clone(),
            key_id: signer.id().hex(),
        };
        let appended =
            self.append_group(head.seq, vec![(by, vec![NewEvent::from(EventBody::HeadAccepted(body))])], true);
        let appended = appended.map_err(|e| match e {
            AppendError::Storage(e) => e,
            conflict => LedgerError::Inconsistent(format!("{conflict} while the head was accepted")),
        })?;
        let event = match appended.into_iter().next() {
            Some(Appended::Committed(events)) => events.into_iter().next(),
            _ => None,
        };
        event
            .as_ref()
            .and_then(Acceptance::of)
            .ok_or_else(|| LedgerError::Inconsistent("the accepted head's event was not written".into()))
    }

    /// Every accepted head, oldest first: the `head_accepted` events (and the signed records of
    /// the builds before them).
    pub fn acceptances(&self) -> Result<Vec<Acceptance>, LedgerError> {
        let mut all = CheckpointsTable::acceptances(&self.store)?;
        let skip: Vec<&str> = EventBody::TYPE_NAMES.iter().copied().filter(|name| *name != "head_accepted").collect();
        for item in self.scan_skipping(1, &skip)? {
            if let (_, Some(event)) = item? {
                all.extend(Acceptance::of(&event));
            }
        }
        Ok(all)
    }

    /// Check that this store copies `log` (or holds nothing yet, and from now on does), that
    /// the log holds everything the store does, and catch up with it.
    fn attach(&self, path: &Path, log: &dyn EventLog) -> Result<(), OpenError> {
        let unusable = |reason: String| OpenError::Unusable { path: path.into(), reason };
        let id = log.log_id()?;
        let head = self.head();
        match MetaTable::shared_log(&self.store)? {
            Some(copied) if copied == id => {}
            Some(copied) => {
                return Err(unusable(format!(
                    "it copies another shared ledger (id {copied}), not the one at {} (id {id})",
                    log.location()
                )));
            }
            None if head.seq > 0 => {
                return Err(unusable(format!(
                    "it holds a ledger of its own ({} events); `memledger migrate --to URL` copies it into an \
                     empty shared ledger",
                    head.seq
                )));
            }
            None => {
                let mut batch = Batch::default();
                MetaTable::put_shared_log(&mut batch, &id);
                self.store.write(batch, true)?;
            }
        }
        let shared_head = log.head()?;
        if shared_head.seq < head.seq {
            return Err(unusable(format!(
                "it holds {} events but the shared ledger at {} only {} (restored from an older backup?)",
                head.seq,
                log.location(),
                shared_head.seq
            )));
        }
        self.catch_up_shared()?;
        Ok(())
    }

    /// Whether opening dropped commands that were staged and never reached the shared log
    /// (crate::staging): the views saw them, so they must be replayed.
    pub fn rewound_on_open(&self) -> bool {
        self.rewound_on_open.load(Ordering::Relaxed)
    }

    /// Whether appends go through a shared log, so that other machines may move the head.
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// The shared log's [`EventLog::exclusive_turn`]; `None` without a shared log.
    pub fn exclusive_turn(&self) -> Result<Option<crate::shared::Turn>, LedgerError> {
        match &self.shared {
            Some(log) => log.exclusive_turn(),
            None => Ok(None),
        }
    }

    /// The shared log, if the store copies one.
    pub fn shared(&self) -> Option<&Arc<dyn EventLog>> {
        self.shared.as_ref()
    }

    /// The ledger's secret `name` (`EventLog::secret`): on a shared log the log's, copied into
    /// this store once read; else this store's own, made from `fresh` on first use (synced).
    /// Without `fresh`, none is made: `None` when there is none yet.
    pub fn secret(&self, name: &str, fresh: Option<&[u8; 32]>) -> Result<Option<[u8; 32]>, LedgerError> {
        if let Some(kept) = MetaTable::secret(&self.store, name)? {
            return Ok(Some(kept));
        }
        let secret = match &self.shared {
            Some(log) => log.secret(name, fresh)?,
            None => fresh.copied(),
        };
        if let Some(secret) = &secret {
            let mut batch = Batch::default();
            MetaTable::put_secret(&mut batch, name, secret);
            self.store.write(batch, true)?;
        }
        Ok(secret)
    }

    /// This store's own secret `name`, made from `fresh` when it has none (and one is given).
    pub(crate) fn local_secret(&self, name: &str, fresh: Option<&[u8; 32]>) -> Result<Option<[u8; 32]>, LedgerError> {
        if let Some(kept) = MetaTable::secret(&self.store, name)? {
            return Ok(Some(kept));
        }
        let Some(fresh) = fresh else { return Ok(None) };
        let mut batch = Batch::default();
        MetaTable::put_secret(&mut batch, name, fresh);
        self.store.write(batch, true)?;
        Ok(Some(*fresh))
    }

    /// Copy the events other machines appended to the shared log since this store's head, each
    /// checked to follow the one before (seq, `prev_hash`, hash). Returns how many; none
    /// without a shared log.
    pub fn catch_up_shared(&self) -> Result<u64, LedgerError> {
        Ok(self.catch_up_shared_keeping(0)?.0)
    }

    /// As [`Ledger::catch_up_shared`], also giving back the events copied when there were at
    /// most `keep` of them (`None` otherwise), so that a caller applying them need not read
    /// them back from the store.
    pub fn catch_up_shared_keeping(&self, keep: usize) -> Result<(u64, Option<Vec<Event>>), LedgerError> {
        let Some(log) = &self.shared else { return Ok((0, Some(Vec::new()))) };
        let (mut copied, mut kept) = (0, Some(Vec::new()));
        loop {
            let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
            let events = log.read(head.seq + 1, READ_CHUNK)?;
            if events.is_empty() {
                return Ok((copied, kept));
            }
            copied += events.len() as u64;
            self.copy_in(&mut head, &events)?;
            kept = kept.filter(|k: &Vec<Event>| k.len() + events.len() <= keep).map(|mut k| {
                k.extend(events);
                k
            });
        }
    }

    /// Write events of the shared log that follow `head` into this store's copy. Unsynced: the
    /// shared log is the record, and a copy that lost its tail reads it again.
    fn copy_in(&self, head: &mut Head, events: &[Event]) -> Result<(), LedgerError> {
        let Some(last) = events.last() else { return Ok(()) };
        let mut batch = Batch::with_capacity(events.len() * 640 + 64);
        let mut next = *head;
        let mut erasure = None;
        for event in events {
            if let Some(problem) = link_problem(next, event) {
                return Err(LedgerError::Inconsistent(format!(
                    "the shared ledger's events do not follow this store's copy: {problem}"
                )));
            }
            EventsTable::put(&mut batch, event);
            next = Head { seq: event.seq, hash: event.hash };
            if let EventBody::MemoryErased(erased) = &event.body {
                self.blank_copies(&mut batch, event, erased, &events[..(event.seq - events[0].seq) as usize])?;
                erasure.get_or_insert(event.seq);
            }
        }
        // The mark keeps the earliest erasure not purged yet: everything from it on is purged.
        if let Some(seq) = erasure
            && MetaTable::purge(&self.store)?.is_none()
        {
            MetaTable::put_purge(&mut batch, seq);
        }
        MetaTable::put_head(&mut batch, next);
        self.store.write(batch, false)?;
        *head = next;
        *self.last_recorded_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(last.recorded_at);
        Ok(())
    }

    /// Replace this store's copies of the events an erasure copied from the shared log names by
    /// their redacted forms, as [`Ledger::append_erasure`] writes them on a store of its own:
    /// the same bytes the shared log holds. `before` is the chunk copied ahead of the erasure
    /// (read after it, so already redacted there); the rest are in the store.
    fn blank_copies(
        &self,
        batch: &mut Batch,
        erasure: &Event,
        erased: &MemoryErased,
        before: &[Event],
    ) -> Result<(), LedgerError> {
        for &target in &erased.events {
            let first_in_chunk = before.first().map_or(u64::MAX, |e| e.seq);
            let copy = if target >= first_in_chunk {
                before.get((target - first_in_chunk) as usize).cloned()
            } else {
                EventsTable::get(&self.store, target)?
            };
            let mut copy = copy.filter(|e| e.seq == target && target < erasure.seq).ok_or_else(|| {
                LedgerError::Inconsistent(format!("the shared ledger erases seq {target}, which is not an event"))
            })?;
            if copy.erased.is_none() {
                copy.redact(erasure.seq, erasure.recorded_at, &erasure.actor);
                EventsTable::put(batch, &copy);
            }
        }
        Ok(())
    }

    /// The head after `recorded`: unsynced appends that reached the log before the process
    /// stopped without writing the head record, each checked to follow the one before (seq,
    /// link and hash). One that does not is damage, not a crash (RocksDB drops a torn write
    /// whole): refused.
    fn follow_unrecorded(store: &Store, recorded: Head) -> Result<Head, String> {
        let mut head = recorded;
        let start = EventsTable::key(recorded.seq + 1);
        for item in store.scan_from(CF_EVENTS, &start).map_err(|e| e.to_string())? {
            let (key, value) = item.map_err(|e| e.to_string())?;
            let expected = head.seq + 1;
            let event = EventsTable::decode_row(&key, &value).map_err(|(seq, message)| {
                format!("event at seq {seq}, after the head record, is unreadable: {message}")
            })?;
            if event.seq != expected || event.prev_hash != head.hash || !event.hash_is_valid() {
                return Err(format!(
                    "the event stored after seq {} does not follow it (found seq {})",
                    head.seq, event.seq
                ));
            }
            head = Head { seq: event.seq, hash: event.hash };
        }
        Ok(head)
    }

    /// The underlying store, for the projections' tables.
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn head(&self) -> Head {
        *self.head.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The committed seqs of an idempotency key, if any. With a shared log, the log answers
    /// (another machine may have committed the key), and a range this store has not copied yet
    /// is copied before the answer.
    pub fn idempotent(&self, key: &str) -> Result<Option<SeqRange>, LedgerError> {
        let Some(log) = &self.shared else { return IdempotencyTable::get(&self.store, key) };
        if let Some(range) = self.staged.lock().unwrap_or_else(|p| p.into_inner()).key_range(key) {
            return Ok(Some(range));
        }
        let range = log.idempotent(key)?;
        if range.is_some_and(|r| r.last > self.head().seq) {
            self.catch_up_shared()?;
        }
        Ok(range)
    }

    /// Append one command's events in one synced write, if the head is still `expected_head`.
    pub fn append(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        events: Vec<NewEvent>,
    ) -> Result<Appended, AppendError> {
        self.append_with(expected_head, meta, events, true)
    }

    /// As [`Ledger::append`]; with `sync = false` the write is durable only after the next
    /// [`Ledger::sync`] (group commit: many commands, one fsync).
    pub fn append_with(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        events: Vec<NewEvent>,
        sync: bool,
    ) -> Result<Appended, AppendError> {
        let mut out = self.append_group(expected_head, vec![(meta.clone(), events)], sync)?;
        Ok(out.pop().unwrap_or(Appended::Committed(Vec::new())))
    }

    /// Make every append so far durable, with the head record. The head lock is held only to
    /// write the record (unsynced), not across the sync: appends go on beside it, and the
    /// sync, the write-ahead log being sequential, covers the record and everything before it.
    pub fn sync(&self) -> Result<(), LedgerError> {
        let recorded = {
            let head = self.head.lock().unwrap_or_else(|p| p.into_inner());
            if self.record_behind.load(Ordering::Relaxed) {
                self.write_head_record(*head, false)?;
                self.record_behind.store(false, Ordering::Relaxed);
                Some(*head)
            } else {
                None
            }
        };
        if let Err(e) = self.store.sync_wal() {
            if recorded.is_some() {
                self.record_behind.store(true, Ordering::Relaxed);
            }
            return Err(e);
        }
        // The checkpoint the head was written with: at the head, or at a later append written
        // with it (durable with it, whatever was written since).
        if let Some(head) = recorded
            && self.witness.is_some()
            && let Some((at, signed)) = self.signed_from(head)?
        {
            self.write_witness(at, &signed.signature);
        }
        Ok(())
    }

    /// The first checkpoint at `head` or after it, with the head it signs.
    fn signed_from(&self, head: Head) -> Result<Option<(Head, Signed)>, LedgerError> {
        let Some(signed) = CheckpointsTable::signature_from(&self.store, head.seq)? else { return Ok(None) };
        if signed.seq == head.seq {
            return Ok(Some((head, signed)));
        }
        Ok(EventsTable::get(&self.store, signed.seq)?.map(|e| (Head { seq: e.seq, hash: e.hash }, signed)))
    }

    /// Write the head record alone (the synced writes of appends carry it in their batch).
    fn write_head_record(&self, head: Head, sync: bool) -> Result<(), LedgerError> {
        let mut batch = Batch::default();
        MetaTable::put_head(&mut batch, head);
        self.store.write(batch, sync)
    }

    /// Group commit: several commands' events in one write (synced once when `sync`), each
    /// command keeping its own idempotency key. A key already committed (or repeated earlier in
    /// the group) makes that command `Replayed`.
    pub fn append_group(
        &self,
        expected_head: u64,
        commands: Vec<(CommandMeta, Vec<NewEvent>)>,
        sync: bool,
    ) -> Result<Vec<Appended>, AppendError> {
        self.may_append()?;
        let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
        if head.seq != expected_head {
            return Err(AppendError::Conflict { expected: expected_head, actual: head.seq });
        }
        if let Some(log) = &self.shared {
            // The shared log orders the append and makes it durable; this store copies it.
            let results = log.append_group(expected_head, commands)?;
            let written: Vec<Event> = results
                .iter()
                .filter_map(|r| match r {
                    Appended::Committed(events) => Some(events.iter().cloned()),
                    Appended::Replayed(_) => None,
                })
                .flatten()
                .collect();
            self.copy_in(&mut head, &written)?;
            let replayed_past_head =
                results.iter().any(|r| matches!(r, Appended::Replayed(range) if range.last > head.seq));
            drop(head);
            if replayed_past_head {
                self.catch_up_shared()?;
            }
            return Ok(results);
        }
        // A typical event is 200–600 bytes stored; the head record and idempotency keys are small.
        let events_in_group: usize = commands.iter().map(|(_, events)| events.len()).sum();
        let mut batch = Batch::with_capacity(events_in_group * 640 + 128);
        let mut next = *head;
        let mut results = Vec::with_capacity(commands.len());
        let mut group_keys: Vec<(String, SeqRange)> = Vec::new();
        let (recorded_at, mut last_at) = self.next_recorded_at(next.seq)?;
        for (meta, events) in commands {
            if let Some(key) = &meta.idempotency_key {
                if let Some(range) = IdempotencyTable::get(&self.store, key)? {
                    results.push(Appended::Replayed(range));
                    continue;
                }
                if let Some((_, range)) = group_keys.iter().find(|(k, _)| k == key) {
                    results.push(Appended::Replayed(*range));
                    continue;
                }
            }
            if events.is_empty() {
                results.push(Appended::Committed(Vec::new()));
                continue;
            }
            let first = next.seq + 1;
            let mut written = Vec::with_capacity(events.len());
            for (i, new) in events.into_iter().enumerate() {
                let mut event = unsealed(next, recorded_at, &meta, i, new);
                EventsTable::put_sealed(&mut batch, &mut event);
                next = Head { seq: event.seq, hash: event.hash };
                written.push(event);
            }
            let range = SeqRange { first, last: next.seq };
            if let Some(key) = &meta.idempotency_key {
                IdempotencyTable::put(&mut batch, key, range);
                group_keys.push((key.clone(), range));
            }
            results.push(Appended::Committed(written));
        }
        if next.seq != head.seq {
            if sync {
                MetaTable::put_head(&mut batch, next);
            }
            let signature = if sync {
                self.seal(&mut batch, next)
            } else {
                self.seal_later(&mut batch, next);
                None
            };
            self.store.write(batch, sync)?;
            *head = next;
            *last_at = Some(recorded_at);
            self.record_behind.store(!sync, Ordering::Relaxed);
            if let Some(signature) = signature {
                self.write_witness(next, &signature);
            }
        }
        Ok(results)
    }

    /// The time of the next append after the head `head_seq` (the wall clock, but never before
    /// the head event's), and the lock on the last time, to update after the write.
    pub(crate) fn next_recorded_at(
        &self,
        head_seq: u64,
    ) -> Result<(Timestamp, std::sync::MutexGuard<'_, Option<Timestamp>>), LedgerError> {
        let mut recorded_at = Timestamp::now();
        let mut last_at = self.last_recorded_at.lock().unwrap_or_else(|p| p.into_inner());
        if last_at.is_none() && head_seq > 0 {
            *last_at = EventsTable::get(&self.store, head_seq)?.map(|e| e.recorded_at);
        }
        if let Some(last) = *last_at {
            // Time in the ledger never runs backwards, whatever the wall clock does.
            recorded_at = recorded_at.max(last);
        }
        Ok((recorded_at, last_at))
    }

    /// Append an erasure, if the head is still `expected_head`, and in the same synced write
    /// replace each event it names by its redacted form ([`Event::redact`]: texts blank, hash
    /// kept), and mark the store as holding the old bytes in its files until
    /// [`Ledger::purge`]. The one exception to append-only (docs/adr/0017-erasure.md).
    pub fn append_erasure(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        erasure: MemoryErased,
    ) -> Result<Event, AppendError> {
        self.may_append()?;
        let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
        if head.seq != expected_head {
            return Err(AppendError::Conflict { expected: expected_head, actual: head.seq });
        }
        if let Some(log) = &self.shared {
            // The shared log appends the erasure and blanks its copies in one transaction; this
            // store copies the erasure in, which blanks its own copies the same way.
            let event = log.append_erasure(expected_head, meta, erasure)?;
            self.copy_in(&mut head, std::slice::from_ref(&event))?;
            return Ok(event);
        }
        let (recorded_at, mut last_at) = self.next_recorded_at(head.seq)?;
        let mut batch = Batch::default();
        let seq = head.seq + 1;
        for &target in &erasure.events {
            let mut event = EventsTable::get(&self.store, target)?
                .filter(|e| e.erased.is_none() && target < seq)
                .ok_or_else(|| LedgerError::Inconsistent(format!("seq {target} is not an event to erase")))?;
            event.redact(seq, recorded_at, &meta.actor);
            EventsTable::put(&mut batch, &event);
        }
        let mut event = erasure_event(*head, recorded_at, meta, erasure);
        EventsTable::put_sealed(&mut batch, &mut event);
        let next = Head { seq, hash: event.hash };
        MetaTable::put_head(&mut batch, next);
        if MetaTable::purge(&self.store)?.is_none() {
            MetaTable::put_purge(&mut batch, seq);
        }
        let signature = self.seal(&mut batch, next);
        self.store.write(batch, true)?;
        if let Some(signature) = signature {
            self.write_witness(next, &signature);
        }
        *head = next;
        *last_at = Some(recorded_at);
        self.record_behind.store(false, Ordering::Relaxed);
        Ok(event)
    }

    /// The seq of the earliest erasure whose old bytes may still be in the store's files, if any.
    pub fn purge_pending(&self) -> Result<Option<u64>, LedgerError> {
        MetaTable::purge(&self.store)
    }

    /// Rewrite the store's files without the old bytes of every erasure so far
    /// ([`crate::store::Store::purge`]), then clear the mark. Call once everything kept outside
    /// the ledger's tables has dropped the erased texts too.
    pub fn purge(&self) -> Result<(), LedgerError> {
        self.store.purge()?;
        let mut batch = Batch::default();
        MetaTable::clear_purge(&mut batch);
        self.store.write(batch, true)
    }

    /// One event by seq, checked against its hash ([`LedgerError::Tampered`] if it was altered).
    pub fn get(&self, seq: u64) -> Result<Option<Event>, LedgerError> {
        EventsTable::get(&self.store, seq)?.map(|e| checked(e, seq)).transpose()
    }

    /// Events with `from <= seq <= to`, in order.
    pub fn range(&self, range: SeqRange) -> Result<Vec<Event>, LedgerError> {
        let mut out = Vec::new();
        for item in self.scan(range.first)? {
            let event = item?;
            if event.seq > range.last {
                break;
            }
            out.push(event);
        }
        Ok(out)
    }

    /// Every event from `from_seq` on, in order. A record that does not decode, or whose hash
    /// does not match its contents ([`LedgerError::Tampered`]), is an error item: nothing
    /// altered is served.
    pub fn scan(&self, from_seq: u64) -> Result<impl Iterator<Item = Result<Event, LedgerError>> + '_, LedgerError> {
        let start = EventsTable::key(from_seq.max(1));
        Ok(self.store.scan_from(CF_EVENTS, &start)?.map(|item| {
            let (k, v) = item?;
            checked(EventsTable::decode_row(&k, &v).map_err(unreadable)?, key_seq(&k))
        }))
    }

    /// As [`Ledger::scan`], but the events whose type ([`EventBody::type_name`]) is in `skip` are
    /// not decoded (nor served, so not checked): each comes as its seq alone. For replaying views that ignore those types.
    pub fn scan_skipping<'a>(
        &'a self,
        from_seq: u64,
        skip: &'a [&'a str],
    ) -> Result<impl Iterator<Item = Result<(u64, Option<Event>), LedgerError>> + 'a, LedgerError> {
        let start = EventsTable::key(from_seq.max(1));
        Ok(self.store.scan_from(CF_EVENTS, &start)?.map(move |item| {
            let (k, v) = item?;
            match EventsTable::decode_row_unless(&k, &v, skip).map_err(unreadable)? {
                (seq, Some(event)) => Ok((seq, Some(checked(event, seq)?))),
                skipped => Ok(skipped),
            }
        }))
    }
}

/// The `i`th event of a command, to follow `prev`: its hash is set when it is sealed.
pub(crate) fn unsealed(prev: Head, recorded_at: Timestamp, meta: &CommandMeta, i: usize, new: NewEvent) -> Event {
    Event {
        seq: prev.seq + 1,
        event_id: EventId::random(),
        format: CURRENT_FORMAT,
        recorded_at,
        actor: meta.actor.clone(),
        correlation_id: meta.correlation_id,
        causation: new.causation,
        idempotency_key: if i == 0 { meta.idempotency_key.clone() } else { None },
        prev_hash: prev.hash,
        principal: Some(meta.principal.clone()),
        hash: Hash::GENESIS,
        erased: None,
        body: new.body,
    }
}

/// The erasure event to follow `prev`, unsealed: its hash is set when it is sealed. An
/// erasure carries no idempotency key (erasing what is erased already is refused).
pub(crate) fn erasure_event(prev: Head, recorded_at: Timestamp, meta: &CommandMeta, erasure: MemoryErased) -> Event {
    let new = NewEvent { body: EventBody::MemoryErased(erasure), causation: None };
    Event { idempotency_key: None, ..unsealed(prev, recorded_at, meta, 0, new) }
}

/// The event stored under `seq`, if its hash matches its contents (the error names the seq it
/// is stored under: its own may be what was altered).
fn checked(event: Event, seq: u64) -> Result<Event, LedgerError> {
    if event.hash_is_valid() { Ok(event) } else { Err(LedgerError::Tampered { seq }) }
}

/// The seq an `events` key names.
fn key_seq(key: &[u8]) -> u64 {
    key.try_into().map(u64::from_be_bytes).unwrap_or(0)
}

/// This machine's name, as key records carry it.
/// This machine's name, as key records give it (for people reading `verify`).
pub fn machine_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// A stored event that does not decode, met while scanning.
fn unreadable((seq, message): (u64, String)) -> LedgerError {
    LedgerError::Inconsistent(format!("event at seq {seq} is unreadable: {message}"))
}

impl Drop for Ledger {
    /// Write the head record if unsynced appends moved the head (unsynced: close writes the log
    /// buffer out). Best effort: without it the next open follows the events after the record.
    fn drop(&mut self) {
        if self.record_behind.load(Ordering::Relaxed) {
            let _ = self.write_head_record(self.head(), false);
        }
    }
}

#[cfg(test)]
mod tests;
