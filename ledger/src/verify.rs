//! `verify`: walk the whole chain and name the first seq where it breaks.

use std::collections::BTreeMap;

use memledger_schemas::{EventBody, Hash, Timestamp};
use serde::Serialize;

use crate::error::LedgerError;
use crate::ledger::Ledger;
use crate::signing::{KeyId, KeyRecord, StoreId, ToCheck, first_failing, verifying_key};
use crate::store::CF_EVENTS;
use crate::tables::{CheckpointsTable, EventsTable, Head, MetaTable, Signed};

/// What `verify` found.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct VerifyReport {
    pub ok: bool,
    pub events: u64,
    pub head_seq: u64,
    pub head_hash: Hash,
    /// The first seq whose record, link or hash is wrong.
    pub first_bad_seq: Option<u64>,
    /// What was wrong there.
    pub problem: Option<String>,
    /// Events whose texts an erasure removed.
    pub erased_events: u64,
    /// Of those, the ones of formats 1 and 2, whose own hash covered the texts: they are checked
    /// by their links alone.
    pub erased_unprovable: u64,
    /// Whether the store is signed (it has a key, or this machine signs it): then every event
    /// must be covered by a signed checkpoint.
    pub signed: bool,
    /// The last seq a valid signed checkpoint covers.
    pub signed_through: Option<u64>,
    /// Signed checkpoints checked.
    pub checkpoints: u64,
    /// The ids of the keys the store's checkpoints may be signed with.
    pub keys: Vec<String>,
}

impl VerifyReport {
    /// The report of a chain of `events` checked against `head`: ok unless `bad` holds the first
    /// wrong seq and what was wrong there.
    pub(crate) fn new(
        events: u64,
        head: Head,
        bad: Option<(u64, String)>,
        erased_events: u64,
        erased_unprovable: u64,
    ) -> VerifyReport {
        VerifyReport {
            ok: bad.is_none(),
            events,
            head_seq: head.seq,
            head_hash: head.hash,
            first_bad_seq: bad.as_ref().map(|(s, _)| *s),
            problem: bad.map(|(_, p)| p),
            erased_events,
            erased_unprovable,
            signed: false,
            signed_through: None,
            checkpoints: 0,
            keys: Vec::new(),
        }
    }

    /// Add what the signature check found; its problem counts when the chain had none.
    pub(crate) fn with_signatures(mut self, check: SignatureCheck) -> VerifyReport {
        self.signed = check.signed;
        self.signed_through = check.signed_through;
        self.checkpoints = check.checkpoints;
        self.keys = check.keys;
        if self.ok
            && let Some((seq, problem)) = check.bad
        {
            self.ok = false;
            self.first_bad_seq = Some(seq);
            self.problem = Some(problem);
        }
        self
    }
}

/// What checking the store's signed checkpoints found.
pub(crate) struct SignatureCheck {
    signed: bool,
    signed_through: Option<u64>,
    checkpoints: u64,
    keys: Vec<String>,
    pub(crate) bad: Option<(u64, String)>,
}

impl Ledger {
    /// Check every event: it decodes, its seq follows the previous one, its `prev_hash` is the
    /// previous hash and its hash matches its fields; the chain ends at the ledger's head, and
    /// the head record names an event of the chain (the last one, or an earlier one when
    /// unsynced appends followed it: see [`Ledger::sync`]). An erased event must name a later
    /// erasure that names it back, recorded at the time and by the actor it says.
    /// With a shared log, the store first copies what it lacks, and its copy must agree with the
    /// log's head.
    pub fn verify(&self) -> Result<VerifyReport, LedgerError> {
        self.catch_up_shared()?;
        let shared_head = self.shared().map(|log| log.head()).transpose()?;
        let head = self.head();
        let record = MetaTable::head(self.store())?;
        let mut hash_at_record = (record.seq == 0).then_some(Hash::GENESIS);
        let mut prev_hash = Hash::GENESIS;
        let mut events = 0u64;
        // Every event's hash, by seq - 1, for the signature check.
        let mut hashes: Vec<Hash> = Vec::new();
        let mut bad: Option<(u64, String)> = None;
        // The erased events met so far, by the erasure they name: (seq, when, by whom).
        let mut erased: BTreeMap<u64, Vec<(u64, Timestamp, String)>> = BTreeMap::new();
        let (mut erased_events, mut erased_unprovable) = (0u64, 0u64);
        for item in self.store().scan_from(CF_EVENTS, &[])? {
            let expected_seq = events + 1;
            let (key, value) = match item {
                Ok(row) => row,
                Err(e) => {
                    bad = Some((expected_seq, format!("storage error while reading: {e}")));
                    break;
                }
            };
            let event = match EventsTable::decode_row(&key, &value) {
                Ok(e) => e,
                Err((seq, message)) => {
                    bad = Some((seq.max(expected_seq).min(expected_seq), message));
                    break;
                }
            };
            if event.seq != expected_seq {
                bad = Some((expected_seq, format!("seq {expected_seq} is missing (found {})", event.seq)));
                break;
            }
            if event.prev_hash != prev_hash {
                bad = Some((event.seq, "prev_hash does not match the previous event's hash".into()));
                break;
            }
            if !event.hash_is_valid() {
                bad = Some((event.seq, "hash does not match the event's contents".into()));
                break;
            }
            if let Some(mark) = &event.erased {
                if mark.seq <= event.seq {
                    bad = Some((event.seq, format!("erased by seq {}, which is not after it", mark.seq)));
                    break;
                }
                erased.entry(mark.seq).or_default().push((event.seq, mark.at, mark.actor.clone()));
                erased_events += 1;
                erased_unprovable += u64::from(!event.hash_is_checkable());
            }
            if let EventBody::MemoryErased(b) = &event.body {
                let met = erased.remove(&event.seq).unwrap_or_default();
                let mut named = b.events.clone();
                named.sort_unstable();
                let seqs: Vec<u64> = met.iter().map(|(seq, _, _)| *seq).collect();
                if seqs != named || met.iter().any(|(_, at, by)| *at != event.recorded_at || *by != event.actor) {
                    bad = Some((event.seq, "the erasure and the events it erased disagree".into()));
                    break;
                }
            }
            prev_hash = event.hash;
            hashes.push(event.hash);
            if event.seq == record.seq {
                hash_at_record = Some(event.hash);
            }
            events += 1;
        }
        if bad.is_none()
            && let Some((seq, met)) = erased.first_key_value()
        {
            bad = Some((met[0].0, format!("erased by seq {seq}, which is no erasure")));
        }
        if bad.is_none() {
            if record.seq > events {
                bad = Some((
                    events + 1,
                    format!("head record says seq {} but the chain ends at seq {events}", record.seq),
                ));
            } else if hash_at_record != Some(record.hash) {
                bad = Some((record.seq, format!("head record's hash is not the hash of seq {}", record.seq)));
            } else if head.seq != events || head.hash != prev_hash {
                bad = Some((
                    (events + 1).min(head.seq.max(1)),
                    format!("the ledger's head is seq {} but the chain ends at seq {events}", head.seq),
                ));
            }
        }
        if bad.is_none()
            && let Some(shared) = shared_head
            && shared.seq <= events
            && self.get(shared.seq)?.map(|e| e.hash) != Some(shared.hash)
        {
            bad = Some((shared.seq, format!("this store's copy differs from the shared ledger at seq {}", shared.seq)));
        }
        let signatures = self.check_store_signatures(&hashes, shared_head)?;
        Ok(VerifyReport::new(events, head, bad, erased_events, erased_unprovable).with_signatures(signatures))
    }

    /// Check this store's keys and signed checkpoints against the chain's hashes, or, for a copy
    /// of a shared log, the log's ([`crate::shared::EventLog::signatures`]).
    /// A copy is checked as far as the log's head (`shared_head`): a command staged ahead of it is
    /// signed when the log takes it.
    fn check_store_signatures(
        &self,
        hashes: &[Hash],
        shared_head: Option<Head>,
    ) -> Result<SignatureCheck, LedgerError> {
        if let (Some(log), Some(shared_head)) = (self.shared(), shared_head) {
            let through = shared_head.seq.min(hashes.len() as u64);
            let first_seen = MetaTable::shared_first_key(self.store())?;
            return Ok(match log.signatures(through)? {
                Some(s) => {
                    let first = s.keys.first().map(|k| k.id);
                    let mut check = s.check(&hashes[..through as usize], first_seen.is_some());
                    // Named before anything else: the other problems follow from it.
                    if let Some(seen) = first_seen
                        && first != Some(seen)
                    {
                        check.bad = Some((
                            1,
                            format!(
                                "the shared ledger's first signing key is {}, not key {seen}, which this machine saw \
                                 first: its keys were removed or replaced",
                                first.map_or("missing".to_string(), |k| k.to_string())
                            ),
                        ));
                    }
                    check
                }
                None => SignatureCheck { signed: false, signed_through: None, checkpoints: 0, keys: vec![], bad: None },
            });
        }
        let keys = self.keys()?;
        let signed = !keys.is_empty() || self.signer().is_some();
        Ok(check_signatures(self.store_id(), &keys, signed, CheckpointsTable::signatures(self.store())?, hashes))
    }
}

/// A key in force: its public key, the first seq it signs and the seq it was retired at.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InForce {
    pub public: [u8; 32],
    pub from: u64,
    pub until: u64,
}

impl InForce {
    /// Whether the key may sign the checkpoint at `seq`.
    pub fn signs(&self, seq: u64) -> bool {
        self.from <= seq && seq < self.until
    }
}

/// The keys of `keys` (in the order they took effect) that count: the first endorsed by itself,
/// each other by a key in force at its `from_seq`, a key's `retires` ending its endorser's term.
/// The first that does not count is the error: the seq it would sign from, and why.
pub(crate) fn keys_in_force(store_id: StoreId, keys: &[KeyRecord]) -> Result<BTreeMap<KeyId, InForce>, (u64, String)> {
    let mut in_force: BTreeMap<KeyId, InForce> = BTreeMap::new();
    for (i, key) in keys.iter().enumerate() {
        let endorser = if i == 0 {
            (key.endorsed_by == key.id).then_some(key.public)
        } else {
            in_force.get(&key.endorsed_by).filter(|k| k.signs(key.from_seq)).map(|k| k.public)
        };
        if !endorser.is_some_and(|public| key.endorsement_holds(store_id, &public)) {
            return Err((
                key.from_seq,
                format!(
                    "key {} is not endorsed by a key of this store: checkpoints it signs count for nothing",
                    key.id
                ),
            ));
        }
        if key.retires
            && i > 0
            && let Some(old) = in_force.get_mut(&key.endorsed_by)
        {
            old.until = key.from_seq;
        }
        in_force.insert(key.id, InForce { public: key.public, from: key.from_seq, until: u64::MAX });
    }
    Ok(in_force)
}

/// Check `keys` (in the order they took effect) and the checkpoints against the chain's hashes:
/// every key is the ledger's first (endorsed by itself) or endorsed by a key in force before it;
/// every checkpoint is signed by a key in force at its seq over the hash there; and, when
/// `signed`, the last valid checkpoint covers the last event. The problem names the first seq no
/// valid signature covers.
pub(crate) fn check_signatures(
    store_id: StoreId,
    keys: &[KeyRecord],
    signed: bool,
    checkpoints: impl Iterator<Item = Result<Signed, u64>>,
    hashes: &[Hash],
) -> SignatureCheck {
    let events = hashes.len() as u64;
    let mut check = SignatureCheck {
        signed,
        signed_through: None,
        checkpoints: 0,
        keys: keys.iter().map(|k| k.id.hex()).collect(),
        bad: None,
    };
    let in_force = match keys_in_force(store_id, keys) {
        Ok(in_force) => in_force,
        Err(bad) => {
            check.bad = Some(bad);
            return check;
        }
    };
    if !signed {
        return check;
    }
    // Read every checkpoint first, then verify their signatures together.
    let mut checks: Vec<ToCheck> = Vec::new();
    let mut seqs: Vec<u64> = Vec::new();
    let points: BTreeMap<KeyId, ed25519_dalek::VerifyingKey> =
        in_force.iter().filter_map(|(id, k)| Some((*id, verifying_key(&k.public)?))).collect();
    // The first record that cannot count, before any signature is verified: (index, why).
    let mut unusable: Option<(usize, String)> = None;
    for item in checkpoints {
        let index = seqs.len();
        let cp = match item {
            Ok(cp) => cp,
            Err(seq) => {
                unusable = Some((index, format!("the checkpoint record at seq {seq} does not decode")));
                break;
            }
        };
        check.checkpoints += 1;
        let Some(hash) = cp.seq.checked_sub(1).and_then(|i| hashes.get(i as usize)) else {
            unusable = Some((
                index,
                format!("a checkpoint signs seq {} but the chain ends at seq {events}: events were removed", cp.seq),
            ));
            break;
        };
        let key = in_force.get(&cp.key).filter(|k| k.signs(cp.seq)).and_then(|_| points.get(&cp.key));
        let Some(key) = key else {
            unusable =
                Some((index, format!("the checkpoint at seq {} names key {}, which may not sign it", cp.seq, cp.key)));
            break;
        };
        seqs.push(cp.seq);
        checks.push(ToCheck { head: Head { seq: cp.seq, hash: *hash }, key: *key, signature: cp.signature });
    }
    let failing = first_failing(store_id, &checks);
    let covered_before = |index: usize| if index == 0 { 0 } else { seqs[index - 1] };
    let bad = match (failing, unusable) {
        (Some(f), Some((u, _))) if f < u => Some((f, None)),
        (_, Some((u, why))) => Some((u, Some(why))),
        (Some(f), None) => Some((f, None)),
        (None, None) => None,
    };
    if let Some((index, why)) = bad {
        let covered = covered_before(index);
        check.signed_through = (covered > 0).then_some(covered);
        let why = why.unwrap_or_else(|| {
            format!(
                "the checkpoint at seq {} does not match the chain (a history rewritten without the key)",
                seqs[index]
            )
        });
        check.bad = Some((covered + 1, format!("no valid signature covers seq {}: {why}", covered + 1)));
        return check;
    }
    let covered = seqs.last().copied().unwrap_or(0);
    check.signed_through = (covered > 0).then_some(covered);
    if covered < events {
        check.bad = Some((
            covered + 1,
            format!(
                "seqs {} to {events} follow the last signed checkpoint (seq {covered}): an unsigned tail, appended \
                     without the key",
                covered + 1
            ),
        ));
    }
    check
}
