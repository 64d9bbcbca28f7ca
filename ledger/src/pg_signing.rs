//! Signed checkpoints on a shared PostgreSQL ledger: each machine signs the heads it commits
//! with its own key, and a key signs only once an administrator's machine has registered it
//! (docs/adr/0036-signed-checkpoints.md, docs/shared-ledger.md).
//!
//! The keys and the checkpoints are tables of the log (append-only, like its events): a key
//! record is endorsed by a key registered before it (the log's first by itself), and every
//! append transaction inserts the signature of the head it commits beside its events. A
//! machine signs nothing on top of a head no registered key signed, so a tail appended by
//! someone who can write the database but holds no key is not laundered by the next save.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use deadpool_postgres::Transaction;

use crate::postgres::Failure;
use crate::signing::{KeyId, KeyRecord, Signer, StoreId, checkpoint_holds, hex};
use crate::tables::{Head, Signed};
use crate::verify::{InForce, keys_in_force};

/// Version 3 of the schema: the keys that may sign and the signed checkpoints.
pub(crate) const SCHEMA_V3: &str = r#"
CREATE TABLE memledger_keys (
    id bytea PRIMARY KEY,
    public bytea NOT NULL,
    from_seq bigint NOT NULL,
    endorsed_by bytea NOT NULL,
    endorsement bytea NOT NULL,
    retires boolean NOT NULL,
    machine text NOT NULL,
    registered_by text NOT NULL,
    registered_at bigint NOT NULL,
    ordinal bigserial UNIQUE
);
CREATE TABLE memledger_checkpoints (
    seq bigint PRIMARY KEY CHECK (seq > 0),
    key_id bytea NOT NULL,
    signature bytea NOT NULL
);
CREATE TRIGGER memledger_keys_append_only BEFORE UPDATE OR DELETE ON memledger_keys
    FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
CREATE TRIGGER memledger_keys_no_truncate BEFORE TRUNCATE ON memledger_keys
    FOR EACH STATEMENT EXECUTE FUNCTION memledger_append_only();
CREATE TRIGGER memledger_checkpoints_append_only BEFORE UPDATE OR DELETE ON memledger_checkpoints
    FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
CREATE TRIGGER memledger_checkpoints_no_truncate BEFORE TRUNCATE ON memledger_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION memledger_append_only();
"#;

/// The columns of a key record, in [`KeyRecord`]'s order.
const KEY_COLUMNS: &str = "id, public, from_seq, endorsed_by, endorsement, retires, machine";

/// This machine's key on the log, and the log's keys as last read.
pub(crate) struct PgSigning {
    signer: Arc<Signer>,
    machine: String,
    keys: Mutex<Keys>,
    /// The last head this process signed: a head equal to it (seq and hash) is one it signed.
    last_signed: Mutex<Option<Head>>,
}

/// The log's key records and, of them, the keys in force (or why they do not verify).
#[derive(Clone)]
struct Keys {
    records: Vec<KeyRecord>,
    in_force: Result<BTreeMap<KeyId, InForce>, String>,
}

impl Default for Keys {
    fn default() -> Keys {
        Keys { records: Vec::new(), in_force: Ok(BTreeMap::new()) }
    }
}

/// The identity a shared log's signatures are bound to: derived from its id, so that a
/// checkpoint of one log never verifies on another.
pub(crate) fn log_store_id(log_id: &str) -> StoreId {
    let digest = blake3::hash(format!("memledger-shared-log\0{log_id}").as_bytes());
    StoreId(digest.as_bytes()[..16].try_into().unwrap_or([0; 16]))
}

impl PgSigning {
    pub(crate) fn new(signer: Arc<Signer>, machine: &str) -> PgSigning {
        PgSigning { signer, machine: machine.to_string(), keys: Mutex::default(), last_signed: Mutex::default() }
    }

    pub(crate) fn key_id(&self) -> KeyId {
        self.signer.id()
    }

    fn keys(&self) -> Keys {
        self.keys.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Remember the log's key records and which of them are in force.
    fn remember(&self, store: StoreId, records: Vec<KeyRecord>) -> Keys {
        let in_force = keys_in_force(store, &records).map_err(|(_, why)| why);
        let keys = Keys { records, in_force };
        *self.keys.lock().unwrap_or_else(|p| p.into_inner()) = keys.clone();
        keys
    }

    /// Read the log's keys (outside any lock) and remember them; the first key's id, if any.
    pub(crate) async fn load(
        &self,
        client: &impl deadpool_postgres::GenericClient,
        store: StoreId,
    ) -> Result<Option<KeyId>, Failure> {
        let keys = self.remember(store, read_keys(client).await?);
        Ok(keys.records.first().map(|k| k.id))
    }

    /// Make this machine's key the log's first (endorsed by itself) and sign the head it finds,
    /// in the caller's transaction, which holds the head row: a log written before checkpoints
    /// is covered from here on (trust on first use). A log with keys is left as it is. The
    /// log's first key either way.
    pub(crate) async fn enrol(&self, tx: &Transaction<'_>, store: StoreId, head: Head) -> Result<KeyRecord, Failure> {
        let keys = read_keys(tx).await?;
        if let Some(first) = keys.first().cloned() {
            self.remember(store, keys);
            return Ok(first);
        }
        let record = self.record_for(store, self.signer.public(), head.seq.max(1), &self.machine);
        insert_key_record(tx, &record, "first machine").await?;
        if head.seq > 0 {
            self.sign(tx, store, head).await?;
        }
        self.remember(store, vec![record.clone()]);
        Ok(record)
    }

    /// A key record for `public`, endorsed by this machine's key, signing from `from_seq`.
    fn record_for(&self, store: StoreId, public: [u8; 32], from_seq: u64, machine: &str) -> KeyRecord {
        KeyRecord {
            id: KeyId::of(&public),
            public,
            from_seq,
            endorsed_by: self.signer.id(),
            endorsement: self.signer.endorse(store, &public, from_seq),
            retires: false,
            machine: machine.to_string(),
        }
    }

    /// Register another machine's key, endorsed by this machine's (which must sign here), to
    /// sign from the seq after `head`; a key registered already is returned as it was.
    pub(crate) async fn register(
        &self,
        tx: &Transaction<'_>,
        store: StoreId,
        head: Head,
        public: [u8; 32],
        machine: &str,
        by: &str,
    ) -> Result<KeyRecord, Failure> {
        let keys = self.remember(store, read_keys(tx).await?);
        self.refusal(&keys, head.seq + 1).map_or(Ok(()), |why| Err(Failure::Refused(why)))?;
        if let Some(known) = keys.records.iter().find(|k| k.public == public) {
            return Ok(known.clone());
        }
        let record = self.record_for(store, public, head.seq + 1, machine);
        insert_key_record(tx, &record, by).await?;
        let mut records = keys.records;
        records.push(record.clone());
        self.remember(store, records);
        Ok(record)
    }

    /// Why this machine may not sign seq `seq` on the log with `keys`, if it may not: only a
    /// key endorsed by one in force counts (a row written straight into the table does not).
    fn refusal(&self, keys: &Keys, seq: u64) -> Option<String> {
        let id = self.signer.id();
        let in_force = match &keys.in_force {
            Ok(in_force) => in_force,
            Err(why) => {
                return Some(format!(
                    "the shared ledger's signing keys do not verify ({why}): nothing is appended (see `memledger verify`)"
                ));
            }
        };
        match in_force.get(&id) {
            Some(key) if key.signs(seq) => None,
            Some(key) if key.until <= seq => {
                Some(format!("this machine's signing key {id} was retired from seq {}: appends are refused", key.until))
            }
            _ => Some(format!(
                "this machine's signing key {id} ({}) is not registered with the shared ledger, so its appends are \
                 refused (it may read); an administrator of the store registers it from a machine that signs there: \
                 `memledger checkpoint --register-key {} --machine {}`",
                self.signer.path().display(),
                hex(&self.signer.public()),
                self.machine
            )),
        }
    }

    /// Check, in an append's transaction, that this machine may sign on top of `head` (whose
    /// checkpoint, if any, is `head_checkpoint`): its key is in force, and the head is signed by
    /// a key in force there. Keys not among those remembered have the keys read again.
    pub(crate) async fn may_sign(
        &self,
        tx: &Transaction<'_>,
        store: StoreId,
        head: Head,
        head_checkpoint: Option<Signed>,
    ) -> Result<(), Failure> {
        let mut keys = self.keys();
        let known = |keys: &Keys| {
            keys.in_force.as_ref().is_ok_and(|in_force| {
                in_force.contains_key(&self.signer.id())
                    && head_checkpoint.is_none_or(|cp| in_force.contains_key(&cp.key))
            })
        };
        if !known(&keys) {
            keys = self.remember(store, read_keys(tx).await?);
        }
        if keys.records.is_empty() && head.seq > 0 {
            return Err(Failure::Refused(format!(
                "the shared ledger holds {} events but no signing keys (removed, or it was never signed): nothing is \
                 appended; if it was never signed, an administrator signs it with `memledger checkpoint --enrol` \
                 after checking it (see `memledger verify`)",
                head.seq
            )));
        }
        self.refusal(&keys, head.seq + 1).map_or(Ok(()), |why| Err(Failure::Refused(why)))?;
        let own = *self.last_signed.lock().unwrap_or_else(|p| p.into_inner()) == Some(head);
        let signed = head.seq == 0
            || head_checkpoint.is_some_and(|cp| {
                if own && cp.key == self.signer.id() {
                    return true;
                }
                let in_force = keys.in_force.as_ref().ok();
                in_force
                    .and_then(|k| k.get(&cp.key))
                    .is_some_and(|k| k.signs(head.seq) && checkpoint_holds(&k.public, store, head, &cp.signature))
            });
        if !signed {
            return Err(Failure::Refused(format!(
                "the shared ledger's head (seq {}) is not signed by a registered key: events were appended or \
                 rewritten without one; nothing is appended on top of them (see `memledger verify`)",
                head.seq
            )));
        }
        Ok(())
    }

    /// The signed checkpoint of `head`, which this process commits: remembered, so that the
    /// next append on top of it need not verify its own signature.
    pub(crate) fn signature(&self, store: StoreId, head: Head) -> (KeyId, [u8; 64]) {
        *self.last_signed.lock().unwrap_or_else(|p| p.into_inner()) = Some(head);
        (self.signer.id(), self.signer.sign_checkpoint(store, head))
    }

    /// Insert the signed checkpoint of `head` (a head found unsigned, when enrolling).
    async fn sign(&self, tx: &Transaction<'_>, store: StoreId, head: Head) -> Result<(), Failure> {
        let signature = self.signer.sign_checkpoint(store, head);
        tx.execute(
            "INSERT INTO memledger_checkpoints (seq, key_id, signature) VALUES ($1, $2, $3)",
            &[&(head.seq as i64), &self.signer.id().0.as_slice(), &signature.as_slice()],
        )
        .await?;
        Ok(())
    }
}

/// The log's key records, in the order they were registered.
pub(crate) async fn read_keys(tx: &impl deadpool_postgres::GenericClient) -> Result<Vec<KeyRecord>, Failure> {
    let rows = tx.query(&format!("SELECT {KEY_COLUMNS} FROM memledger_keys ORDER BY ordinal"), &[]).await?;
    rows.iter()
        .map(|row| {
            let bytes = |i: usize| row.get::<_, Vec<u8>>(i);
            let bad = || Failure::Refused("a key record of the shared ledger is malformed".into());
            Ok(KeyRecord {
                id: KeyId(bytes(0).try_into().map_err(|_| bad())?),
                public: bytes(1).try_into().map_err(|_| bad())?,
                from_seq: row.get::<_, i64>(2) as u64,
                endorsed_by: KeyId(bytes(3).try_into().map_err(|_| bad())?),
                endorsement: bytes(4).try_into().map_err(|_| bad())?,
                retires: row.get(5),
                machine: row.get(6),
            })
        })
        .collect()
}

/// The log's signed checkpoints up to seq `through`, by seq; a malformed one is `Err(seq)`.
pub(crate) async fn read_checkpoints(
    client: &impl deadpool_postgres::GenericClient,
    through: u64,
) -> Result<Vec<Result<Signed, u64>>, Failure> {
    let rows = client
        .query(
            "SELECT seq, key_id, signature FROM memledger_checkpoints WHERE seq <= $1 ORDER BY seq",
            &[&(through.min(i64::MAX as u64) as i64)],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|row| {
            let seq = row.get::<_, i64>(0) as u64;
            checkpoint_of_row(seq, row.get(1), row.get(2)).ok_or(seq)
        })
        .collect())
}

/// The checkpoint at `seq` a row's key id and signature columns hold; `None` when either is
/// missing or not of its size.
pub(crate) fn checkpoint_of_row(seq: u64, key: Option<Vec<u8>>, signature: Option<Vec<u8>>) -> Option<Signed> {
    Some(Signed { seq, key: KeyId(key?.try_into().ok()?), signature: signature?.try_into().ok()? })
}

async fn insert_key_record(tx: &Transaction<'_>, record: &KeyRecord, by: &str) -> Result<(), Failure> {
    tx.execute(
        &format!(
            "INSERT INTO memledger_keys ({KEY_COLUMNS}, registered_by, registered_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ),
        &[
            &record.id.0.as_slice(),
            &record.public.as_slice(),
            &(record.from_seq as i64),
            &record.endorsed_by.0.as_slice(),
            &record.endorsement.as_slice(),
            &record.retires,
            &record.machine,
            &by,
            &memledger_schemas::Timestamp::now().micros(),
        ],
    )
    .await?;
    Ok(())
}
