//! Typed access to the ledger's column families: one small type per table with its key and
//! value layout (see docs/format.md). Integer keys are big-endian so byte order is numeric order.

use memledger_schemas::codec::{decode_event, encode_event, peek_event};
use memledger_schemas::{Event, Hash};

use crate::error::LedgerError;
use crate::signing::{KeyId, KeyRecord, StoreId};
use crate::store::{Batch, CF_EVENTS, CF_IDEMPOTENCY, CF_META, Store};

/// `events`: seq (u64 BE) → `format ‖ bincode(Event)`.
pub struct EventsTable;

impl EventsTable {
    pub fn key(seq: u64) -> [u8; 8] {
        seq.to_be_bytes()
    }

    pub fn put(batch: &mut Batch, event: &Event) {
        batch.put(CF_EVENTS, Self::key(event.seq), encode_event(event));
    }

    /// Seal `event` (set its hash) and put its stored form
    /// ([`memledger_schemas::codec::seal_and_encode_into`]), encoded straight into the batch.
    pub fn put_sealed(batch: &mut Batch, event: &mut Event) {
        batch.put_with(CF_EVENTS, Self::key(event.seq), |out| {
            memledger_schemas::codec::seal_and_encode_into(event, out)
        });
    }

    pub fn get(store: &Store, seq: u64) -> Result<Option<Event>, LedgerError> {
        match store.get(CF_EVENTS, &Self::key(seq))? {
            None => Ok(None),
            Some(bytes) => decode_event(&bytes).map(Some).map_err(|source| LedgerError::Corrupt {
                table: CF_EVENTS,
                key: format!("seq {seq}"),
                source,
            }),
        }
    }

    /// Decode a raw `(key, value)` row, checking that the key and the event agree.
    pub fn decode_row(key: &[u8], value: &[u8]) -> Result<Event, (u64, String)> {
        let seq = key.try_into().map(u64::from_be_bytes).map_err(|_| (0, format!("bad key of {} bytes", key.len())))?;
        let event = decode_event(value).map_err(|e| (seq, e.to_string()))?;
        if event.seq != seq {
            return Err((seq, format!("stored under seq {seq} but says seq {}", event.seq)));
        }
        Ok(event)
    }

    /// As [`EventsTable::decode_row`] for an event whose type is not in `skip`; one whose type
    /// is comes as its seq alone (still checked against the key), its body never decoded.
    pub fn decode_row_unless(key: &[u8], value: &[u8], skip: &[&str]) -> Result<(u64, Option<Event>), (u64, String)> {
        if skip.is_empty() {
            return Self::decode_row(key, value).map(|event| (event.seq, Some(event)));
        }
        let seq = key.try_into().map(u64::from_be_bytes).map_err(|_| (0, format!("bad key of {} bytes", key.len())))?;
        let (stored, event_type) = peek_event(value).map_err(|e| (seq, e.to_string()))?;
        if stored != seq {
            return Err((seq, format!("stored under seq {seq} but says seq {stored}")));
        }
        if skip.contains(&event_type) {
            return Ok((seq, None));
        }
        Self::decode_row(key, value).map(|event| (seq, Some(event)))
    }
}

/// A contiguous run of seqs: the events one command appended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqRange {
    pub first: u64,
    pub last: u64,
}

/// `idempotency`: the caller's key (UTF-8) → first seq ‖ last seq (u64 BE each).
pub struct IdempotencyTable;

impl IdempotencyTable {
    pub fn put(batch: &mut Batch, key: &str, range: SeqRange) {
        let mut value = Vec::with_capacity(16);
        value.extend_from_slice(&range.first.to_be_bytes());
        value.extend_from_slice(&range.last.to_be_bytes());
        batch.put(CF_IDEMPOTENCY, key.as_bytes(), value);
    }

    pub fn get(store: &Store, key: &str) -> Result<Option<SeqRange>, LedgerError> {
        match store.get(CF_IDEMPOTENCY, key.as_bytes())? {
            None => Ok(None),
            Some(v) if v.len() == 16 => Ok(Some(SeqRange {
                first: u64::from_be_bytes(v[..8].try_into().unwrap_or_default()),
                last: u64::from_be_bytes(v[8..].try_into().unwrap_or_default()),
            })),
            Some(v) => Err(LedgerError::Inconsistent(format!("idempotency entry {key:?} has {} bytes", v.len()))),
        }
    }
}

/// The ledger head: the last seq and its hash (seq 0 and the genesis hash when empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub seq: u64,
    pub hash: Hash,
}

impl Head {
    pub const EMPTY: Head = Head { seq: 0, hash: Hash::GENESIS };
}

/// `meta`: `b"head"` → seq (u64 BE) ‖ hash (32 bytes); `b"store_format"` → u16 BE;
/// `b"purge"` → the seq (u64 BE) of an erasure whose old bytes may still be in the store's files.
/// `b"shared_log"` → the id (UTF-8) of the shared log the store copies, when it copies one.
/// `b"unshared"` → the shared log's head (as `b"head"`) when commands were staged ahead of it
/// (crate::staging), until they are flushed or dropped. `b"store_id"` → 16 random bytes, the
/// store's identity in its checkpoints' signatures (crate::signing).
pub struct MetaTable;

const HEAD_KEY: &[u8] = b"head";
const PURGE_KEY: &[u8] = b"purge";
const STORE_FORMAT_KEY: &[u8] = b"store_format";
const SHARED_LOG_KEY: &[u8] = b"shared_log";
/// `meta` key of the first signing key of the shared log, as this machine first saw it.
const SHARED_FIRST_KEY: &[u8] = b"shared_log_first_key";
const UNSHARED_KEY: &[u8] = b"unshared";
const STORE_ID_KEY: &[u8] = b"store_id";
/// The layout version of the tables above.
pub const STORE_FORMAT: u16 = 1;

impl MetaTable {
    pub fn put_head(batch: &mut Batch, head: Head) {
        Self::put_head_at(batch, HEAD_KEY, head);
    }

    pub fn head(store: &Store) -> Result<Head, LedgerError> {
        Ok(Self::head_at(store, HEAD_KEY)?.unwrap_or(Head::EMPTY))
    }

    /// Mark commands as staged ahead of the shared log, whose head was `base`.
    pub fn put_unshared(batch: &mut Batch, base: Head) {
        Self::put_head_at(batch, UNSHARED_KEY, base);
    }

    pub fn clear_unshared(batch: &mut Batch) {
        batch.delete(CF_META, UNSHARED_KEY);
    }

    /// The shared log's head when the commands still staged were staged, if any are.
    pub fn unshared(store: &Store) -> Result<Option<Head>, LedgerError> {
        Self::head_at(store, UNSHARED_KEY)
    }

    fn head_at(store: &Store, key: &[u8]) -> Result<Option<Head>, LedgerError> {
        match store.get(CF_META, key)? {
            None => Ok(None),
            Some(v) if v.len() == 40 => {
                let mut hash = [0u8; 32];
                hash.copy_from_slice(&v[8..]);
                Ok(Some(Head { seq: u64::from_be_bytes(v[..8].try_into().unwrap_or_default()), hash: Hash(hash) }))
            }
            Some(v) => {
                Err(LedgerError::Inconsistent(format!("{} record has {} bytes", String::from_utf8_lossy(key), v.len())))
            }
        }
    }

    fn put_head_at(batch: &mut Batch, key: &'static [u8], head: Head) {
        let mut value = Vec::with_capacity(40);
        value.extend_from_slice(&head.seq.to_be_bytes());
        value.extend_from_slice(&head.hash.0);
        batch.put(CF_META, key, value);
    }

    /// Mark an erasure as not yet purged from the files (written with the erasure, when no
    /// earlier one is still marked: the mark is the earliest erasure not purged).
    pub fn put_purge(batch: &mut Batch, seq: u64) {
        batch.put(CF_META, PURGE_KEY, seq.to_be_bytes());
    }

    pub fn clear_purge(batch: &mut Batch) {
        batch.delete(CF_META, PURGE_KEY);
    }

    /// The seq of the earliest erasure not yet purged from the files, if any.
    pub fn purge(store: &Store) -> Result<Option<u64>, LedgerError> {
        Ok(store.get(CF_META, PURGE_KEY)?.and_then(|v| v.try_into().ok().map(u64::from_be_bytes)))
    }

    pub fn put_store_format(batch: &mut Batch) {
        batch.put(CF_META, STORE_FORMAT_KEY, STORE_FORMAT.to_be_bytes());
    }

    pub fn store_format(store: &Store) -> Result<Option<u16>, LedgerError> {
        Ok(store.get(CF_META, STORE_FORMAT_KEY)?.and_then(|v| v.try_into().ok().map(u16::from_be_bytes)))
    }

    /// The store's secret `name`, if it has one (see `EventLog::secret`).
    pub fn secret(store: &Store, name: &str) -> Result<Option<[u8; 32]>, LedgerError> {
        match store.get(CF_META, &secret_key(name))? {
            None => Ok(None),
            Some(v) => v
                .try_into()
                .map(Some)
                .map_err(|v: Vec<u8>| LedgerError::Inconsistent(format!("secret {name:?} has {} bytes", v.len()))),
        }
    }

    pub fn put_secret(batch: &mut Batch, name: &str, secret: &[u8; 32]) {
        batch.put(CF_META, secret_key(name), secret);
    }

    /// The store's identity, which every checkpoint signature covers (crate::signing).
    pub fn store_id(store: &Store) -> Result<Option<StoreId>, LedgerError> {
        match store.get(CF_META, STORE_ID_KEY)? {
            None => Ok(None),
            Some(v) => v
                .try_into()
                .map(|id| Some(StoreId(id)))
                .map_err(|v: Vec<u8>| LedgerError::Inconsistent(format!("store_id record has {} bytes", v.len()))),
        }
    }

    pub fn put_store_id(batch: &mut Batch, id: StoreId) {
        batch.put(CF_META, STORE_ID_KEY, id.0);
    }

    pub fn put_shared_log(batch: &mut Batch, id: &str) {
        batch.put(CF_META, SHARED_LOG_KEY, id.as_bytes());
    }

    /// The first signing key of the shared log this store copies, as this machine first saw it:
    /// a log that later shows no keys, or another first key, had them removed or replaced.
    pub fn put_shared_first_key(batch: &mut Batch, key: KeyId) {
        batch.put(CF_META, SHARED_FIRST_KEY, key.0);
    }

    pub fn shared_first_key(store: &Store) -> Result<Option<KeyId>, LedgerError> {
        Ok(store.get(CF_META, SHARED_FIRST_KEY)?.and_then(|v| v.try_into().ok()).map(KeyId))
    }

    pub fn shared_log(store: &Store) -> Result<Option<String>, LedgerError> {
        match store.get(CF_META, SHARED_LOG_KEY)? {
            None => Ok(None),
            Some(v) => String::from_utf8(v)
                .map(Some)
                .map_err(|_| LedgerError::Inconsistent("the shared log's id is not UTF-8".into())),
        }
    }
}

/// The meta key of the store's secret `name`.
fn secret_key(name: &str) -> Vec<u8> {
    [b"secret:".as_slice(), name.as_bytes()].concat()
}

/// Checkpoints, in `meta` under the prefix `b"checkpoint/"`: then `b"s"` ‖ seq (u64 BE) → key id (8 bytes) ‖ Ed25519 signature (64 bytes) of the
/// checkpoint at that seq, written in the same batch as the events it ends; `b"k"` ‖ key id →
/// a [`KeyRecord`], written with the first checkpoint the key signs (crate::signing); `b"a"` ‖
/// time (i64 BE, µs) → signature (64 bytes) ‖ JSON of a head accepted against its witness.
pub struct CheckpointsTable;

/// The table the checkpoints live in, and the prefix of their keys there.
pub const CF_CHECKPOINTS: &str = CF_META;
const PREFIX: &[u8] = b"checkpoint/";
/// The prefix of the signatures' keys.
const SIGNATURES: &[u8] = b"checkpoint/s";

impl CheckpointsTable {
    pub fn signature_key(seq: u64) -> Vec<u8> {
        [PREFIX, b"s", &seq.to_be_bytes()].concat()
    }

    pub fn put_signature(batch: &mut Batch, seq: u64, key: KeyId, signature: &[u8; 64]) {
        batch.put(CF_CHECKPOINTS, Self::signature_key(seq), Self::signature_value(key, signature));
    }

    /// A signature's stored value: key id ‖ signature.
    fn signature_value(key: KeyId, signature: &[u8; 64]) -> [u8; 72] {
        let mut value = [0u8; 72];
        value[..8].copy_from_slice(&key.0);
        value[8..].copy_from_slice(signature);
        value
    }

    /// The signature at `seq` that `value` stores, if it is one.
    fn signed_value(seq: u64, value: &[u8]) -> Option<Signed> {
        Some(Signed {
            seq,
            key: KeyId(value.get(..8)?.try_into().ok()?),
            signature: value.get(8..).filter(|s| s.len() == 64)?.try_into().ok()?,
        })
    }

    /// As [`CheckpointsTable::put_signature`], the signature made by `sign` when the batch is
    /// written, and left out when a later batch of the same write is signed ([`Batch::put_vouching`]).
    pub fn put_signature_later(
        batch: &mut Batch,
        seq: u64,
        key: KeyId,
        sign: impl Fn() -> [u8; 64] + Send + Sync + 'static,
    ) {
        batch.put_vouching(CF_CHECKPOINTS, Self::signature_key(seq), move || {
            Self::signature_value(key, &sign()).to_vec()
        });
    }

    pub fn put_key(batch: &mut Batch, record: &KeyRecord) {
        batch.put(CF_CHECKPOINTS, [PREFIX, b"k", &record.id.0].concat(), record.encode());
    }

    /// Every key record, in key-id order.
    pub fn keys(store: &Store) -> Result<Vec<KeyRecord>, LedgerError> {
        let mut out = Vec::new();
        for row in store.scan_prefix(CF_CHECKPOINTS, b"checkpoint/k")? {
            let (key, value) = row?;
            out.push(KeyRecord::decode(&value).ok_or_else(|| {
                LedgerError::Inconsistent(format!(
                    "key record {} does not decode",
                    crate::signing::hex(&key[PREFIX.len() + 1..])
                ))
            })?);
        }
        Ok(out)
    }

    /// Every signature, by seq ascending: (seq, key id, signature), or the seq of a record that
    /// does not decode.
    pub fn signatures(store: &Store) -> Result<impl Iterator<Item = Result<Signed, u64>> + '_, LedgerError> {
        Ok(store.scan_prefix(CF_CHECKPOINTS, SIGNATURES)?.map(Self::signed))
    }

    /// The first checkpoint at `seq` or after it: the one written with the event at `seq` (an
    /// unsynced append's is left out when the next append's, written with it, vouches for both).
    pub fn signature_from(store: &Store, seq: u64) -> Result<Option<Signed>, LedgerError> {
        let mut rows = store.scan_from(CF_CHECKPOINTS, &Self::signature_key(seq))?;
        Ok(rows
            .next()
            .transpose()?
            .filter(|(key, _)| key.starts_with(SIGNATURES))
            .and_then(|row| Self::signed(Ok(row)).ok()))
    }

    /// A signature's record: (seq, key id, signature), or the seq of a record that does not decode.
    fn signed(row: Result<crate::store::Row, LedgerError>) -> Result<Signed, u64> {
        let (key, value) = row.map_err(|_| 0u64)?;
        let at = SIGNATURES.len();
        let seq = key.get(at..at + 8).and_then(|k| k.try_into().ok()).map(u64::from_be_bytes).ok_or(0u64)?;
        Self::signed_value(seq, &value).ok_or(seq)
    }

    /// The accepted heads recorded beside the checkpoints by builds before the `head_accepted`
    /// event (event format 7), oldest first.
    pub fn acceptances(store: &Store) -> Result<Vec<crate::ledger::Acceptance>, LedgerError> {
        let mut out = Vec::new();
        for row in store.scan_prefix(CF_CHECKPOINTS, b"checkpoint/a")? {
            let (_, value) = row?;
            let body = value.get(64..).unwrap_or_default();
            out.push(
                serde_json::from_slice(body)
                    .map_err(|e| LedgerError::Inconsistent(format!("an accepted-head record does not decode: {e}")))?,
            );
        }
        Ok(out)
    }

    /// The signature at `seq`, if one is stored.
    pub fn signature(store: &Store, seq: u64) -> Result<Option<Signed>, LedgerError> {
        Ok(store.get(CF_CHECKPOINTS, &Self::signature_key(seq))?.and_then(|value| Self::signed_value(seq, &value)))
    }
}

/// A stored checkpoint signature.
#[derive(Clone, Copy, Debug)]
pub struct Signed {
    pub seq: u64,
    pub key: KeyId,
    pub signature: [u8; 64],
}

/// Model usage, in `meta` under the prefix `b"usage/"`: then the UTC day (`YYYY-MM-DD`) ‖ `/` ‖
/// the principal's name → prompt tokens ‖ completion tokens ‖ calls (each u64 BE). Counts for
/// budgets (`memledger usage`), not part of the ledger's history: never replicated, never hashed.
pub struct UsageTable;

const USAGE_PREFIX: &[u8] = b"usage/";

impl UsageTable {
    fn key(day: &str, principal: &str) -> Vec<u8> {
        [USAGE_PREFIX, day.as_bytes(), b"/", principal.as_bytes()].concat()
    }

    fn decode(value: &[u8]) -> [u64; 3] {
        let at = |i: usize| value.get(i * 8..i * 8 + 8).and_then(|b| b.try_into().ok()).map_or(0, u64::from_be_bytes);
        [at(0), at(1), at(2)]
    }

    /// The counts of `principal` on `day` (zeros when none).
    pub fn get(store: &Store, day: &str, principal: &str) -> Result<[u64; 3], LedgerError> {
        Ok(store.get(CF_META, &Self::key(day, principal))?.map_or([0; 3], |v| Self::decode(&v)))
    }

    pub fn put(batch: &mut Batch, day: &str, principal: &str, counts: [u64; 3]) {
        let value: Vec<u8> = counts.iter().flat_map(|n| n.to_be_bytes()).collect();
        batch.put(CF_META, Self::key(day, principal), value);
    }

    /// Every (day, principal, counts) whose day starts with `days` (`2026-12` for a month).
    pub fn scan(store: &Store, days: &str) -> Result<Vec<(String, String, [u64; 3])>, LedgerError> {
        let mut out = Vec::new();
        for row in store.scan_prefix(CF_META, &[USAGE_PREFIX, days.as_bytes()].concat())? {
            let (key, value) = row?;
            let rest = String::from_utf8_lossy(&key[USAGE_PREFIX.len()..]).into_owned();
            if let Some((day, principal)) = rest.split_once('/') {
                out.push((day.to_string(), principal.to_string(), Self::decode(&value)));
            }
        }
        Ok(out)
    }
}

/// The last verification, in `meta` under `b"last_verify"`: JSON of [`LastVerify`]. `status` and
/// every command through a server report a failed one until a later one passes.
pub struct LastVerifyTable;

const LAST_VERIFY_KEY: &[u8] = b"last_verify";

/// When the store was last verified, and what was found.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LastVerify {
    /// RFC 3339.
    pub at: String,
    pub ok: bool,
    /// The first seq that failed, when the chain did.
    pub first_bad_seq: Option<u64>,
    /// What was wrong (the chain's problem, or the views that differ from a replay).
    pub problem: Option<String>,
}

impl LastVerifyTable {
    pub fn put(batch: &mut Batch, last: &LastVerify) {
        batch.put(CF_META, LAST_VERIFY_KEY, serde_json::to_vec(last).unwrap_or_default());
    }

    pub fn get(store: &Store) -> Result<Option<LastVerify>, LedgerError> {
        Ok(store.get(CF_META, LAST_VERIFY_KEY)?.and_then(|v| serde_json::from_slice(&v).ok()))
    }
}
