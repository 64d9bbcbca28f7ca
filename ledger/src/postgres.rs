//! The shared ledger on PostgreSQL: the [`EventLog`] a team's machines append through.
//!
//! Global order has one serialisation point, the row of `memledger_head`, locked `FOR UPDATE` by
//! every append transaction: seqs are gap-free and in commit order, and the appender computes
//! the blake3 chain while it holds the lock. Idempotency keys are a unique table, `UPDATE`,
//! `DELETE` and `TRUNCATE` of the events are refused by triggers (but for an erasure's
//! redaction of the events it names, in the erasure's own transaction), and each commit notifies
//! `memledger_events` so that other machines wake (polling is the fallback). Tables are created
//! and versioned by memledger; a newer schema is refused. Every connection is made over TLS as the
//! URL's `sslmode` asks ([`crate::pg_tls`]). See docs/shared-ledger.md.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use memledger_schemas::codec::{decode_event, encode_event, seal_and_encode};
use memledger_schemas::{Event, Hash, MemoryErased, Timestamp};
use tokio::sync::watch;
use tokio_postgres::error::SqlState;
use tokio_postgres::{AsyncMessage, IsolationLevel};

use crate::error::{AppendError, ImportError, LedgerError, OpenError};
use crate::exchange::{ImportReport, Stream, idempotency_ranges};
use crate::ledger::{Appended, CommandMeta, NewEvent, erasure_event, unsealed};
use crate::pg_signing::{PgSigning, SCHEMA_V3, checkpoint_of_row, log_store_id, read_checkpoints, read_keys};
use crate::pg_tls::PgConnect;
use crate::shared::{EventLog, LogSignatures, Turn};
use crate::signing::{KeyId, KeyRecord, Signer, StoreId};
use crate::staging::SealedAppend;
use crate::tables::{Head, SeqRange, Signed};

/// The version of the tables below; a database with a newer one is refused.
pub const SCHEMA_VERSION: i32 = 3;

/// The notification channel of appends; its payload is the new head's seq.
const CHANNEL: &str = "memledger_events";

/// Version 1 of the schema, created in one transaction.
const SCHEMA_V1: &str = r#"
CREATE TABLE memledger_head (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    seq bigint NOT NULL,
    hash bytea NOT NULL,
    recorded_at bigint NOT NULL
);
INSERT INTO memledger_head (one, seq, hash, recorded_at)
    VALUES (true, 0, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea, 0);
CREATE TABLE memledger_events (
    seq bigint PRIMARY KEY CHECK (seq > 0),
    hash bytea NOT NULL,
    prev_hash bytea NOT NULL,
    event bytea NOT NULL
);
CREATE TABLE memledger_idempotency (
    key text PRIMARY KEY,
    first_seq bigint NOT NULL,
    last_seq bigint NOT NULL
);
CREATE FUNCTION memledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'memledger: % of % refused: the ledger is append-only', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER memledger_events_append_only BEFORE UPDATE OR DELETE ON memledger_events
    FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
CREATE TRIGGER memledger_events_no_truncate BEFORE TRUNCATE ON memledger_events
    FOR EACH STATEMENT EXECUTE FUNCTION memledger_append_only();
CREATE TRIGGER memledger_idempotency_append_only BEFORE UPDATE OR DELETE ON memledger_idempotency
    FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
CREATE TRIGGER memledger_idempotency_no_truncate BEFORE TRUNCATE ON memledger_idempotency
    FOR EACH STATEMENT EXECUTE FUNCTION memledger_append_only();
"#;

/// Version 2: erasure (docs/adr/0023-erasure-on-a-shared-ledger.md). An erasure event's row
/// lists the seqs it erases (`erases`); an erased row names its erasure (`erased_by`). The one
/// `UPDATE` of an event the trigger lets through replaces a row's stored form, once, in the
/// transaction that appended the erasure event naming it, keeping its seq and chain columns;
/// everything else is refused as before.
const SCHEMA_V2: &str = r#"
ALTER TABLE memledger_events ADD COLUMN erases bigint[], ADD COLUMN erased_by bigint;
CREATE FUNCTION memledger_events_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE'
        AND NEW.seq = OLD.seq AND NEW.hash = OLD.hash AND NEW.prev_hash = OLD.prev_hash
        AND NEW.erases IS NOT DISTINCT FROM OLD.erases
        AND OLD.erased_by IS NULL AND NEW.erased_by > OLD.seq
        AND EXISTS (
            SELECT 1 FROM memledger_events AS erasure
            WHERE erasure.seq = NEW.erased_by AND OLD.seq = ANY (erasure.erases)
                AND erasure.xmin::text::bigint = pg_current_xact_id()::text::bigint % 4294967296)
    THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'memledger: % of % refused: the ledger is append-only', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;
DROP TRIGGER memledger_events_append_only ON memledger_events;
CREATE TRIGGER memledger_events_append_only BEFORE UPDATE OR DELETE ON memledger_events
    FOR EACH ROW EXECUTE FUNCTION memledger_events_guard();
"#;

/// Times a transaction is tried again after a serialisation failure or a deadlock (40001,
/// 40P01): the retries a serialisable engine (CockroachDB, YugabyteDB) asks of its clients.
const SERIALIZATION_RETRIES: u32 = 16;

/// Connections in a process's pool: a process appends under one lock, so a few serve its
/// reads beside the append.
const POOL_SIZE: usize = 4;

/// The advisory lock that orders savers: every append takes it shared for its transaction, a
/// process holding [`EventLog::exclusive_turn`] takes it exclusive for its session. PostgreSQL
/// queues a shared request behind a waiting exclusive one, so the turn comes.
const TURN_LOCK: i64 = 0x6d65_6d6c_6564_6772; // "memledgr"

/// A ledger in a PostgreSQL database.
pub struct PgLedger {
    runtime: tokio::runtime::Runtime,
    pool: Pool,
    location: String,
    /// How every connection is made (TLS as the URL's `sslmode` asks), and explains its failures.
    connect: PgConnect,
    id: String,
    /// The highest head seq a notification announced (0 until one does).
    notified: watch::Receiver<u64>,
    /// This process holds the exclusive turn: its appends do not ask for the shared lock.
    turn_held: Arc<AtomicBool>,
    /// What the log's checkpoints are bound to ([`log_store_id`]).
    store_id: StoreId,
    /// This machine's signing key on the log, once given ([`EventLog::sign_with`]).
    signing: OnceLock<PgSigning>,
    /// This connect migrated an unsigned schema (version 1 or 2): the first machine to give its
    /// key signs the log from its head.
    migrated_unsigned: AtomicBool,
}

/// [`PgLedger`]'s exclusive turn: the session holding the advisory lock.
struct PgTurn {
    client: Option<deadpool_postgres::Object>,
    runtime: tokio::runtime::Handle,
    held: Arc<AtomicBool>,
}

impl Drop for PgTurn {
    fn drop(&mut self) {
        self.held.store(false, Ordering::SeqCst);
        if let Some(client) = self.client.take() {
            let unlocked = self.runtime.block_on(client.execute("SELECT pg_advisory_unlock($1)", &[&TURN_LOCK]));
            if unlocked.is_err() {
                // The session goes, and the lock with it.
                drop(deadpool_postgres::Object::take(client));
            }
        }
    }
}

impl PgLedger {
    /// Connect to the database `url` names, creating the tables when it has none and refusing
    /// a schema newer than this build's.
    pub fn connect(url: &str) -> Result<PgLedger, OpenError> {
        let location = redact(url);
        let bad = |reason: String| OpenError::Shared { location: location.clone(), reason };
        let connect = PgConnect::from_url(url).map_err(bad)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("memledger-pg")
            .enable_all()
            .build()
            .map_err(|e| bad(format!("cannot start its client: {e}")))?;
        let manager = Manager::from_config(
            connect.config.clone(),
            connect.tls.clone(),
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(Duration::from_secs(10)))
            .wait_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(|e| bad(e.to_string()))?;
        let (tx, notified) = watch::channel(0);
        let mut ledger = PgLedger {
            runtime,
            pool,
            location: location.clone(),
            connect: connect.clone(),
            id: String::new(),
            notified,
            turn_held: Arc::default(),
            store_id: StoreId([0; 16]),
            signing: OnceLock::new(),
            migrated_unsigned: AtomicBool::new(false),
        };
        ledger.id = ledger.runtime.block_on(ledger.migrate()).map_err(|e| match e {
            LedgerError::Shared { location, message } => OpenError::Shared { location, reason: message },
            other => OpenError::Storage(other),
        })?;
        ledger.store_id = log_store_id(&ledger.id);
        ledger.runtime.spawn(listen(connect, tx));
        Ok(ledger)
    }

    /// Create the tables (schema version 1) when the database has none; refuse a newer
    /// version. Returns the ledger's id. Processes racing to create them retry.
    async fn migrate(&self) -> Result<String, LedgerError> {
        let mut attempt = 0;
        loop {
            match self.try_migrate().await {
                Err(Failure::Db(e)) if attempt < SERIALIZATION_RETRIES && is_creation_race(&e) => attempt += 1,
                other => return other.map_err(|f| self.fail(f)),
            }
        }
    }

    async fn try_migrate(&self) -> Result<String, Failure> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS memledger_meta (key text PRIMARY KEY, value text NOT NULL)")
            .await?;
        let version: Option<String> = tx
            .query_opt("SELECT value FROM memledger_meta WHERE key = 'schema_version' FOR UPDATE", &[])
            .await?
            .map(|row| row.get(0));
        match version.as_deref().map(str::parse::<i32>) {
            None => {
                tx.batch_execute(SCHEMA_V1).await?;
                tx.batch_execute(SCHEMA_V2).await?;
                tx.batch_execute(SCHEMA_V3).await?;
                let id = memledger_schemas::CorrelationId::random().hex();
                tx.execute(
                    "INSERT INTO memledger_meta (key, value) VALUES ('schema_version', $1), ('ledger_id', $2)",
                    &[&SCHEMA_VERSION.to_string(), &id],
                )
                .await?;
                tx.commit().await?;
                Ok(id)
            }
            Some(Ok(SCHEMA_VERSION)) => {
                let id: String =
                    tx.query_one("SELECT value FROM memledger_meta WHERE key = 'ledger_id'", &[]).await?.get(0);
                tx.commit().await?;
                Ok(id)
            }
            Some(Ok(old @ (1 | 2))) => {
                if old == 1 {
                    tx.batch_execute(SCHEMA_V2).await?;
                }
                tx.batch_execute(SCHEMA_V3).await?;
                self.migrated_unsigned.store(true, Ordering::SeqCst);
                tx.execute(
                    "UPDATE memledger_meta SET value = $1 WHERE key = 'schema_version'",
                    &[&SCHEMA_VERSION.to_string()],
                )
                .await?;
                let id: String =
                    tx.query_one("SELECT value FROM memledger_meta WHERE key = 'ledger_id'", &[]).await?.get(0);
                tx.commit().await?;
                Ok(id)
            }
            Some(Ok(newer)) if newer > SCHEMA_VERSION => Err(Failure::Refused(format!(
                "its schema is version {newer}, newer than this memledger's ({SCHEMA_VERSION}): upgrade memledger"
            ))),
            Some(other) => Err(Failure::Refused(format!("its schema version {other:?} is not one memledger wrote"))),
        }
    }

    /// Enrol this machine's key as the log's first in one transaction holding the head row; the
    /// log's first key either way.
    async fn enrol_once(&self, signing: &PgSigning) -> Result<KeyRecord, Failure> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let (head, _, _, _) = head_for_update(&tx).await?;
        let first = signing.enrol(&tx, self.store_id, head).await?;
        tx.commit().await?;
        Ok(first)
    }

    fn fail(&self, failure: Failure) -> LedgerError {
        let message = match failure {
            Failure::Db(e) => self.describe(&e),
            Failure::Pool(e) => match e {
                deadpool_postgres::PoolError::Backend(e) => self.describe(&e),
                other => other.to_string(),
            },
            Failure::Refused(message) => message,
            Failure::Conflict { .. } => "the head moved".into(),
        };
        LedgerError::Shared { location: self.location.clone(), message }
    }

    /// A client error: its TLS set-up's failure explained, else as [`describe`] gives it.
    fn describe(&self, e: &tokio_postgres::Error) -> String {
        self.connect.explain(e).unwrap_or_else(|| describe(e))
    }

    /// An append's outcome as the trait gives it: a moved head is the `Conflict`.
    fn appended<T>(&self, expected_head: u64, outcome: Result<T, Failure>) -> Result<T, AppendError> {
        match outcome {
            Err(Failure::Conflict { actual }) => Err(AppendError::Conflict { expected: expected_head, actual }),
            other => other.map_err(|f| self.fail(f).into()),
        }
    }

    /// Run `attempt` until it does not fail on serialisation (bounded).
    fn run<T, F, Fut>(&self, attempt: F) -> Result<T, Failure>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        self.runtime.block_on(async {
            let mut tries = 0;
            loop {
                match attempt().await {
                    Err(Failure::Db(e)) if tries < SERIALIZATION_RETRIES && is_serialization_failure(&e) => {
                        tries += 1;
                        tokio::time::sleep(Duration::from_millis(1 << tries.min(6))).await;
                    }
                    other => return other,
                }
            }
        })
    }

    /// Take this transaction's share of the turn (unless this process holds the exclusive
    /// turn) and lock the head row for its append; the head, and the time to record (never
    /// before the head's, whatever any machine's clock does). A head other than
    /// `expected_head` is the moved-head conflict.
    async fn lock_head(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        expected_head: u64,
    ) -> Result<(Head, Timestamp), Failure> {
        if !self.turn_held.load(Ordering::SeqCst) {
            tx.execute("SELECT pg_advisory_xact_lock_shared($1)", &[&TURN_LOCK]).await?;
        }
        let (head, recorded_at, checkpoint, signed_log) = head_for_update(tx).await?;
        if head.seq != expected_head {
            return Err(Failure::Conflict { actual: head.seq });
        }
        self.may_sign(tx, head, checkpoint, signed_log).await?;
        Ok((head, Timestamp::now().max(recorded_at)))
    }

    /// Refuse an append this machine may not sign on top of `head` ([`PgSigning::may_sign`]);
    /// without a key, refuse one to a log that is signed.
    async fn may_sign(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        head: Head,
        checkpoint: Option<Signed>,
        signed_log: bool,
    ) -> Result<(), Failure> {
        match self.signing.get() {
            Some(signing) => signing.may_sign(tx, self.store_id, head, checkpoint).await,
            None => {
                if signed_log {
                    return Err(Failure::Refused(
                        "the shared ledger is signed and this process has no signing key: its appends are refused \
                         (set MEMLEDGER_SIGNING_KEY)"
                            .into(),
                    ));
                }
                Ok(())
            }
        }
    }

    /// The checkpoint of `head` signed with this machine's key (none without one), for
    /// [`set_head`] to insert.
    fn checkpoint_of(&self, head: Head) -> Option<(KeyId, [u8; 64])> {
        self.signing.get().map(|signing| signing.signature(self.store_id, head))
    }

    async fn append_once(
        &self,
        expected_head: u64,
        commands: &[(CommandMeta, Vec<NewEvent>)],
    ) -> Result<Vec<Appended>, Failure> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let (head, recorded_at) = self.lock_head(&tx, expected_head).await?;
        let lookup = tx.prepare("SELECT first_seq, last_seq FROM memledger_idempotency WHERE key = $1").await?;
        let mut next = head;
        let mut results = Vec::with_capacity(commands.len());
        let mut group_keys: Vec<(String, SeqRange)> = Vec::new();
        let (mut seqs, mut hashes, mut prev_hashes, mut stored) = (vec![], vec![], vec![], vec![]);
        for (meta, events) in commands {
            if let Some(key) = &meta.idempotency_key {
                if let Some(row) = tx.query_opt(&lookup, &[key]).await? {
                    let range = SeqRange { first: row.get::<_, i64>(0) as u64, last: row.get::<_, i64>(1) as u64 };
                    results.push(Appended::Replayed(range));
                    continue;
                }
                if let Some((_, range)) = group_keys.iter().find(|(k, _)| k == key) {
                    results.push(Appended::Replayed(*range));
                    continue;
                }
            }
            let first = next.seq + 1;
            let mut written = Vec::with_capacity(events.len());
            for (i, new) in events.iter().enumerate() {
                let mut event = unsealed(next, recorded_at, meta, i, new.clone());
                let bytes = seal_and_encode(&mut event);
                seqs.push(event.seq as i64);
                hashes.push(event.hash.0.to_vec());
                prev_hashes.push(event.prev_hash.0.to_vec());
                stored.push(bytes);
                next = Head { seq: event.seq, hash: event.hash };
                written.push(event);
            }
            if let (Some(key), false) = (&meta.idempotency_key, written.is_empty()) {
                group_keys.push((key.clone(), SeqRange { first, last: next.seq }));
            }
            results.push(Appended::Committed(written));
        }
        if next.seq == head.seq {
            tx.rollback().await?;
            return Ok(results);
        }
        insert_events(&tx, &seqs, &hashes, &prev_hashes, &stored).await?;
        insert_keys(&tx, &group_keys).await?;
        set_head(&tx, next, recorded_at, self.checkpoint_of(next)).await?;
        tx.commit().await?;
        Ok(results)
    }

    /// [`EventLog::append_sealed`]'s transaction: the events go in as they were sealed, after a
    /// check that they follow the head.
    async fn append_sealed_once(
        &self,
        expected: Head,
        commands: &[(Option<String>, Vec<Event>)],
    ) -> Result<(), Failure> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let (head, _) = self.lock_head(&tx, expected.seq).await?;
        if head != expected {
            return Err(Failure::Conflict { actual: head.seq });
        }
        let sealed = SealedAppend::of(expected, commands).map_err(Failure::Refused)?;
        let Some(recorded_at) = sealed.recorded_at else { return Ok(()) };
        let lookup = tx.prepare("SELECT 1 FROM memledger_idempotency WHERE key = $1").await?;
        for (key, _) in &sealed.keys {
            if tx.query_opt(&lookup, &[key]).await?.is_some() {
                return Err(Failure::Conflict { actual: head.seq });
            }
        }
        let seqs: Vec<i64> = sealed.events.iter().map(|e| e.seq as i64).collect();
        let hashes: Vec<Vec<u8>> = sealed.events.iter().map(|e| e.hash.0.to_vec()).collect();
        let prev_hashes: Vec<Vec<u8>> = sealed.events.iter().map(|e| e.prev_hash.0.to_vec()).collect();
        let stored: Vec<Vec<u8>> = sealed.events.iter().map(|e| encode_event(e)).collect();
        insert_events(&tx, &seqs, &hashes, &prev_hashes, &stored).await?;
        insert_keys(&tx, &sealed.keys).await?;
        set_head(&tx, sealed.head, recorded_at, self.checkpoint_of(sealed.head)).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn erase_once(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        erasure: &MemoryErased,
    ) -> Result<Event, Failure> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let (head, recorded_at) = self.lock_head(&tx, expected_head).await?;
        let mut event = erasure_event(head, recorded_at, meta, erasure.clone());
        let targets: Vec<i64> = erasure.events.iter().map(|&s| s as i64).collect();
        let rows = tx
            .query("SELECT seq, event FROM memledger_events WHERE seq = ANY($1) ORDER BY seq FOR UPDATE", &[&targets])
            .await?;
        let mut forms = Vec::with_capacity(rows.len());
        for row in &rows {
            let seq = row.get::<_, i64>(0) as u64;
            let mut target = decode_event(row.get(1))
                .map_err(|e| Failure::Refused(format!("the event at seq {seq} is unreadable: {e}")))?;
            if target.erased.is_some() {
                return Err(Failure::Refused(format!("seq {seq} is erased already")));
            }
            target.redact(event.seq, recorded_at, &meta.actor);
            forms.push(memledger_schemas::codec::encode_event(&target));
        }
        if rows.len() != targets.len() {
            return Err(Failure::Refused("the erasure names an event the ledger does not hold".into()));
        }
        let stored = seal_and_encode(&mut event);
        tx.execute(
            "INSERT INTO memledger_events (seq, hash, prev_hash, event, erases) VALUES ($1, $2, $3, $4, $5)",
            &[&(event.seq as i64), &event.hash.0.as_slice(), &event.prev_hash.0.as_slice(), &stored, &targets],
        )
        .await?;
        let seqs: Vec<i64> = rows.iter().map(|row| row.get::<_, i64>(0)).collect();
        tx.execute(
            "UPDATE memledger_events AS e SET event = u.event, erased_by = $1 \
             FROM UNNEST($2::bigint[], $3::bytea[]) AS u(seq, event) WHERE e.seq = u.seq",
            &[&(event.seq as i64), &seqs, &forms],
        )
        .await?;
        let erased = Head { seq: event.seq, hash: event.hash };
        set_head(&tx, erased, recorded_at, self.checkpoint_of(erased)).await?;
        tx.commit().await?;
        Ok(event)
    }

    async fn read_once(&self, from_seq: u64, limit: usize) -> Result<Vec<Event>, Failure> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                "SELECT seq, event FROM memledger_events WHERE seq >= $1 ORDER BY seq LIMIT $2",
                &[&(from_seq.max(1) as i64), &(limit as i64)],
            )
            .await?;
        rows.iter()
            .map(|row| {
                let seq = row.get::<_, i64>(0) as u64;
                let event = decode_event(row.get(1))
                    .map_err(|e| Failure::Refused(format!("the event at seq {seq} is unreadable: {e}")))?;
                if event.seq != seq {
                    return Err(Failure::Refused(format!("stored under seq {seq} but says seq {}", event.seq)));
                }
                Ok(event)
            })
            .collect()
    }

    async fn import_once(&self, stream: &[&Event]) -> Result<ImportReport, ImportFailure> {
        let read = stream.len() as u64;
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let (head, _, checkpoint, signed_log) = head_for_update(&tx).await?;
        let Some(first) = stream.first() else {
            return Ok(ImportReport { read: 0, already_present: 0, appended: 0, head_seq: head.seq });
        };
        if first.seq > head.seq + 1 {
            return Err(ImportFailure::Diverged {
                seq: first.seq,
                message: format!("the stream starts at seq {} but this ledger ends at seq {}", first.seq, head.seq),
            });
        }
        // Every event the ledger holds already, and the one before the stream, must be the same.
        let stored = tx
            .query(
                "SELECT seq, hash FROM memledger_events WHERE seq >= $1 AND seq <= $2 ORDER BY seq",
                &[&(first.seq as i64 - 1), &(head.seq as i64)],
            )
            .await?;
        let stored_hash = |seq: u64| -> Option<Vec<u8>> {
            stored.iter().find(|r| r.get::<_, i64>(0) as u64 == seq).map(|r| r.get::<_, Vec<u8>>(1))
        };
        if first.seq > 1 && stored_hash(first.seq - 1).as_deref() != Some(&first.prev_hash.0[..]) {
            return Err(ImportFailure::Diverged {
                seq: first.seq,
                message: "its first event does not link to this ledger's event before it".into(),
            });
        }
        let mut already_present = 0;
        let (mut seqs, mut hashes, mut prev_hashes, mut bytes) = (vec![], vec![], vec![], vec![]);
        let mut next = head;
        let mut recorded_at = Timestamp::from_micros(0);
        for event in stream {
            if event.seq <= head.seq {
                if stored_hash(event.seq).as_deref() != Some(&event.hash.0[..]) {
                    return Err(ImportFailure::Diverged {
                        seq: event.seq,
                        message: "a different event is stored there".into(),
                    });
                }
                already_present += 1;
                continue;
            }
            seqs.push(event.seq as i64);
            hashes.push(event.hash.0.to_vec());
            prev_hashes.push(event.prev_hash.0.to_vec());
            bytes.push(memledger_schemas::codec::encode_event(event));
            next = Head { seq: event.seq, hash: event.hash };
            recorded_at = recorded_at.max(event.recorded_at);
        }
        let appended = next.seq - head.seq;
        if appended > 0 {
            self.may_sign(&tx, head, checkpoint, signed_log).await?;
            insert_events(&tx, &seqs, &hashes, &prev_hashes, &bytes).await?;
            let keys = idempotency_ranges(stream.iter().copied().filter(|e| e.seq > head.seq));
            insert_keys(&tx, &keys).await?;
            set_head(&tx, next, recorded_at, self.checkpoint_of(next)).await?;
            tx.commit().await?;
        }
        Ok(ImportReport { read, already_present, appended, head_seq: next.seq })
    }
}

/// The head row, locked for the caller's transaction, its time, the checkpoint that signs it,
/// if any, and whether the log has signing keys: one round trip.
async fn head_for_update(
    tx: &deadpool_postgres::Transaction<'_>,
) -> Result<(Head, Timestamp, Option<Signed>, bool), Failure> {
    let row = tx
        .query_one(
            "SELECT h.seq, h.hash, h.recorded_at, c.key_id, c.signature, \
             EXISTS (SELECT 1 FROM memledger_keys) FROM memledger_head AS h \
             LEFT JOIN memledger_checkpoints AS c ON c.seq = h.seq FOR UPDATE OF h",
            &[],
        )
        .await?;
    let head = Head { seq: row.get::<_, i64>(0) as u64, hash: hash_of(row.get(1))? };
    let checkpoint = checkpoint_of_row(head.seq, row.get(3), row.get(4));
    Ok((head, Timestamp::from_micros(row.get(2)), checkpoint, row.get(5)))
}

/// Insert events (their stored form, and the chain's columns for SQL-side checks) in one
/// statement.
async fn insert_events(
    tx: &deadpool_postgres::Transaction<'_>,
    seqs: &[i64],
    hashes: &[Vec<u8>],
    prev_hashes: &[Vec<u8>],
    stored: &[Vec<u8>],
) -> Result<(), tokio_postgres::Error> {
    tx.execute(
        "INSERT INTO memledger_events (seq, hash, prev_hash, event) \
         SELECT * FROM UNNEST($1::bigint[], $2::bytea[], $3::bytea[], $4::bytea[])",
        &[&seqs, &hashes, &prev_hashes, &stored],
    )
    .await?;
    Ok(())
}

async fn insert_keys(
    tx: &deadpool_postgres::Transaction<'_>,
    keys: &[(String, SeqRange)],
) -> Result<(), tokio_postgres::Error> {
    if keys.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
    let firsts: Vec<i64> = keys.iter().map(|(_, r)| r.first as i64).collect();
    let lasts: Vec<i64> = keys.iter().map(|(_, r)| r.last as i64).collect();
    tx.execute(
        "INSERT INTO memledger_idempotency (key, first_seq, last_seq) \
         SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::bigint[])",
        &[&names, &firsts, &lasts],
    )
    .await?;
    Ok(())
}

/// Move the head row (locked by the caller), insert its signed checkpoint (when this machine
/// signs) and notify the machines listening, on commit: one statement, one round trip.
async fn set_head(
    tx: &deadpool_postgres::Transaction<'_>,
    head: Head,
    recorded_at: Timestamp,
    checkpoint: Option<(KeyId, [u8; 64])>,
) -> Result<(), tokio_postgres::Error> {
    let (key, signature) = match &checkpoint {
        Some((key, signature)) => (Some(key.0.as_slice()), Some(signature.as_slice())),
        None => (None, None),
    };
    tx.execute(
        "WITH checkpoint AS (\
             INSERT INTO memledger_checkpoints (seq, key_id, signature) \
             SELECT $1, $4::bytea, $5::bytea WHERE $4::bytea IS NOT NULL), \
         head AS (UPDATE memledger_head SET seq = $1, hash = $2, recorded_at = $3 RETURNING seq) \
         SELECT pg_notify($6, $7) FROM head",
        &[
            &(head.seq as i64),
            &head.hash.0.as_slice(),
            &recorded_at.micros(),
            &key,
            &signature,
            &CHANNEL,
            &head.seq.to_string(),
        ],
    )
    .await?;
    Ok(())
}

/// Keep a connection that listens for appends, reconnecting when it drops; `tx` gets each
/// notified head. A server without LISTEN (CockroachDB) leaves the readers polling.
async fn listen(connect: PgConnect, tx: watch::Sender<u64>) {
    let mut backoff = Duration::from_millis(50);
    loop {
        if let Ok((client, mut connection)) = connect.config.connect(connect.tls.clone()).await {
            // The connection is driven below; the client asks LISTEN and is then held, so the
            // connection stays open until it drops.
            let listener = tokio::spawn(async move {
                if client.batch_execute(&format!("LISTEN {CHANNEL}")).await.is_ok() {
                    std::future::pending::<()>().await;
                }
            });
            while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                match message {
                    Ok(AsyncMessage::Notification(n)) => {
                        if let Ok(seq) = n.payload().parse::<u64>() {
                            tx.send_if_modified(|last| {
                                let newer = seq > *last;
                                *last = (*last).max(seq);
                                newer
                            });
                        }
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            listener.abort();
            backoff = Duration::from_millis(50);
        }
        if tx.is_closed() {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}

impl EventLog for PgLedger {
    fn exclusive_turn(&self) -> Result<Option<Turn>, LedgerError> {
        let client = self
            .run(|| async {
                let client = self.pool.get().await?;
                client.execute("SELECT pg_advisory_lock($1)", &[&TURN_LOCK]).await?;
                Ok(client)
            })
            .map_err(|f| self.fail(f))?;
        self.turn_held.store(true, Ordering::SeqCst);
        let turn =
            PgTurn { client: Some(client), runtime: self.runtime.handle().clone(), held: self.turn_held.clone() };
        Ok(Some(Turn::new(turn)))
    }

    fn location(&self) -> String {
        self.location.clone()
    }

    fn log_id(&self) -> Result<String, LedgerError> {
        Ok(self.id.clone())
    }

    fn head(&self) -> Result<Head, LedgerError> {
        self.run(|| async {
            let client = self.pool.get().await?;
            let row = client.query_one("SELECT seq, hash FROM memledger_head", &[]).await?;
            Ok(Head { seq: row.get::<_, i64>(0) as u64, hash: hash_of(row.get(1))? })
        })
        .map_err(|f| self.fail(f))
    }

    fn idempotent(&self, key: &str) -> Result<Option<SeqRange>, LedgerError> {
        self.run(|| async {
            let client = self.pool.get().await?;
            let row = client
                .query_opt("SELECT first_seq, last_seq FROM memledger_idempotency WHERE key = $1", &[&key])
                .await?;
            Ok(row.map(|row| SeqRange { first: row.get::<_, i64>(0) as u64, last: row.get::<_, i64>(1) as u64 }))
        })
        .map_err(|f| self.fail(f))
    }

    fn append_group(
        &self,
        expected_head: u64,
        commands: Vec<(CommandMeta, Vec<NewEvent>)>,
    ) -> Result<Vec<Appended>, AppendError> {
        self.appended(expected_head, self.run(|| self.append_once(expected_head, &commands)))
    }

    fn append_sealed(&self, expected: Head, commands: &[(Option<String>, Vec<Event>)]) -> Result<(), AppendError> {
        self.appended(expected.seq, self.run(|| self.append_sealed_once(expected, commands)))
    }

    fn append_erasure(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        erasure: MemoryErased,
    ) -> Result<Event, AppendError> {
        self.appended(expected_head, self.run(|| self.erase_once(expected_head, meta, &erasure)))
    }

    fn read(&self, from_seq: u64, limit: usize) -> Result<Vec<Event>, LedgerError> {
        self.run(|| self.read_once(from_seq, limit)).map_err(|f| self.fail(f))
    }

    fn import_stream(&self, stream: Stream) -> Result<ImportReport, ImportError> {
        let events: Vec<&Event> = stream.events().collect();
        self.runtime.block_on(async {
            let mut tries = 0;
            loop {
                match self.import_once(&events).await {
                    Err(ImportFailure::Db(e)) if tries < SERIALIZATION_RETRIES && is_serialization_failure(&e) => {
                        tries += 1;
                    }
                    Ok(report) => return Ok(report),
                    Err(ImportFailure::Diverged { seq, message }) => {
                        return Err(ImportError::Diverged { seq, message });
                    }
                    Err(ImportFailure::Db(e)) => return Err(self.fail(Failure::Db(e)).into()),
                    Err(ImportFailure::Other(f)) => return Err(self.fail(f).into()),
                }
            }
        })
    }

    fn wait_past(&self, seq: u64, timeout: Duration) -> Result<(), LedgerError> {
        let mut notified = self.notified.clone();
        self.runtime.block_on(async {
            let _ = tokio::time::timeout(timeout, notified.wait_for(|head| *head > seq)).await;
        });
        Ok(())
    }

    fn sign_with(&self, signer: Arc<Signer>, machine: &str) -> Result<Option<KeyId>, LedgerError> {
        let id = signer.id();
        let signing = self.signing.get_or_init(|| PgSigning::new(signer, machine));
        if signing.key_id() != id {
            return Err(self.fail(Failure::Refused(format!(
                "this connection signs with key {} already, not {id}",
                signing.key_id()
            ))));
        }
        self.run(|| async {
            let client = self.pool.get().await?;
            if let Some(first) = signing.load(&client, self.store_id).await? {
                return Ok(Some(first));
            }
            // No keys: an empty log, or one this connect just upgraded, is signed from here on;
            // any other was signed once and lost its keys, or needs an administrator's `enrol`.
            let head: i64 = client.query_one("SELECT seq FROM memledger_head", &[]).await?.get(0);
            if head > 0 && !self.migrated_unsigned.load(Ordering::SeqCst) {
                return Ok(None);
            }
            drop(client);
            self.enrol_once(signing).await.map(|record| Some(record.id))
        })
        .map_err(|f| self.fail(f))
    }

    fn enrol(&self) -> Result<KeyRecord, LedgerError> {
        let Some(signing) = self.signing.get() else {
            return Err(
                self.fail(Failure::Refused("this machine has no signing key (set MEMLEDGER_SIGNING_KEY)".into()))
            );
        };
        self.run(|| self.enrol_once(signing)).map_err(|f| self.fail(f))
    }

    fn signatures(&self, through: u64) -> Result<Option<LogSignatures>, LedgerError> {
        let (keys, checkpoints) = self
            .run(|| async {
                let mut client = self.pool.get().await?;
                // One snapshot: the keys and the checkpoints as of the same moment.
                let tx = client.build_transaction().isolation_level(IsolationLevel::RepeatableRead).start().await?;
                let keys = read_keys(&tx).await?;
                let checkpoints = read_checkpoints(&tx, through).await?;
                tx.commit().await?;
                Ok((keys, checkpoints))
            })
            .map_err(|f| self.fail(f))?;
        Ok(Some(LogSignatures { store_id: self.store_id, keys, checkpoints }))
    }

    fn register_key(&self, public: [u8; 32], machine: &str, by: &str) -> Result<KeyRecord, LedgerError> {
        let Some(signing) = self.signing.get() else {
            return Err(self.fail(Failure::Refused(
                "this machine has no signing key to endorse another with (set MEMLEDGER_SIGNING_KEY)".into(),
            )));
        };
        self.run(|| async {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            let (head, _, _, _) = head_for_update(&tx).await?;
            let record = signing.register(&tx, self.store_id, head, public, machine, by).await?;
            tx.commit().await?;
            Ok(record)
        })
        .map_err(|f| self.fail(f))
    }

    fn secret(&self, name: &str, fresh: Option<&[u8; 32]>) -> Result<Option<[u8; 32]>, LedgerError> {
        let key = format!("secret:{name}");
        let fresh: Option<String> = fresh.map(|f| f.iter().map(|b| format!("{b:02x}")).collect());
        let kept: Option<String> = self
            .run(|| async {
                let client = self.pool.get().await?;
                // The first machine to ask makes it; every other reads that one.
                if let Some(fresh) = &fresh {
                    client
                        .execute(
                            "INSERT INTO memledger_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                            &[&key, fresh],
                        )
                        .await?;
                }
                let row = client.query_opt("SELECT value FROM memledger_meta WHERE key = $1", &[&key]).await?;
                Ok(row.map(|row| row.get::<_, String>(0)))
            })
            .map_err(|f| self.fail(f))?;
        let Some(kept) = kept else { return Ok(None) };
        let bytes: Vec<u8> = (0..kept.len())
            .step_by(2)
            .filter_map(|i| kept.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
            .collect();
        bytes.try_into().map(Some).map_err(|_| {
            LedgerError::Inconsistent(format!("the shared ledger's secret {name:?} is not 32 bytes of hex"))
        })
    }
}

/// Why a transaction did not commit.
pub(crate) enum Failure {
    Db(tokio_postgres::Error),
    Pool(deadpool_postgres::PoolError),
    Refused(String),
    Conflict { actual: u64 },
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        Failure::Db(e)
    }
}

impl From<deadpool_postgres::PoolError> for Failure {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        Failure::Pool(e)
    }
}

/// Why an import did not commit.
enum ImportFailure {
    Db(tokio_postgres::Error),
    Diverged { seq: u64, message: String },
    Other(Failure),
}

impl From<tokio_postgres::Error> for ImportFailure {
    fn from(e: tokio_postgres::Error) -> Self {
        ImportFailure::Db(e)
    }
}

impl From<deadpool_postgres::PoolError> for ImportFailure {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        ImportFailure::Other(Failure::Pool(e))
    }
}

impl From<Failure> for ImportFailure {
    fn from(f: Failure) -> Self {
        ImportFailure::Other(f)
    }
}

fn hash_of(bytes: &[u8]) -> Result<Hash, Failure> {
    let bytes: [u8; 32] =
        bytes.try_into().map_err(|_| Failure::Refused(format!("a stored hash has {} bytes, not 32", bytes.len())))?;
    Ok(Hash(bytes))
}

fn is_serialization_failure(e: &tokio_postgres::Error) -> bool {
    matches!(e.code(), Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED)
}

/// Two processes creating the tables at once: one fails on a catalogue row the other wrote.
fn is_creation_race(e: &tokio_postgres::Error) -> bool {
    is_serialization_failure(e)
        || matches!(e.code(), Some(c) if *c == SqlState::UNIQUE_VIOLATION || *c == SqlState::DUPLICATE_TABLE
            || *c == SqlState::DUPLICATE_OBJECT || *c == SqlState::DUPLICATE_FUNCTION)
}

/// A client error with the server's message, when the server sent one.
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

/// The URL without its password (after the user name, or as a `password=` parameter).
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.into() };
    let (credentials, host) = match rest.split_once('@') {
        Some((user, host)) if user.contains(':') => {
            (format!("{}:***@", user.split(':').next().unwrap_or_default()), host)
        }
        Some((user, host)) => (format!("{user}@"), host),
        None => (String::new(), rest),
    };
    let host = match host.split_once('?') {
        Some((path, query)) => {
            let params: Vec<&str> =
                query.split('&').map(|p| if p.starts_with("password=") { "password=***" } else { p }).collect();
            format!("{path}?{}", params.join("&"))
        }
        None => host.to_string(),
    };
    format!("{scheme}://{credentials}{host}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_password_is_never_in_the_location() {
        assert_eq!(super::redact("postgres://me:pw@db/x?sslmode=require"), "postgres://me:***@db/x?sslmode=require");
        assert_eq!(
            super::redact("postgresql://db/x?user=me&password=pw&sslmode=verify-full"),
            "postgresql://db/x?user=me&password=***&sslmode=verify-full"
        );
        assert_eq!(super::redact("postgres://me@db/x"), "postgres://me@db/x");
    }
}
