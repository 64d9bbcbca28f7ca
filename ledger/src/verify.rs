//! `verify`: walk the whole chain and name the first seq where it breaks.

use std::collections::BTreeMap;

use memledger_schemas::{EventBody, Hash, Timestamp};
use serde::Serialize;

use crate::error::LedgerError;
use crate::ledger::Ledger;
use crate::store::CF_EVENTS;
use crate::tables::{EventsTable, Head, MetaTable};

/// What `verify` found.
#[derive(Clone, Debug, Serialize)]
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
        }
    }
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
        Ok(VerifyReport::new(events, head, bad, erased_events, erased_unprovable))
    }
}
