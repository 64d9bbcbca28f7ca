//! The belief view: every memory that became a belief, with its lineage position and status,
//! plus the indexes the save pipeline asks: active memories by content hash and by fact key, and
//! observations that were merged. Candidate retrieval by term is the text index's
//! (`text_index.rs`, docs/adr/0010-candidate-terms-in-the-text-index.md).
//!
//! Table `beliefs`, keys (see docs/format.md):
//! - `m ‖ memory_id` → [`MemoryRecord`]
//! - `o ‖ memory_id` → [`Observation`] (every observed memory; `merged_into` once merged)
//! - `l ‖ root_id ‖ version (u32 BE)` → memory_id
//! - `h ‖ digest8(scope) ‖ content_hash` → the active memories' ids, ascending
//! - `k ‖ digest8(scope) ‖ digest8(fact_key)` → the active memories' ids, ascending
//! - `c ‖ conflict_id` → the conflict's members (memory ids)
//!
//! The two indexes are one key per (scope, hash) and (scope, fact key), read with one point read
//! (which the store's read cache answers) instead of a prefix scan per save.
//!
//! Each version holds its validity interval (docs/design.md §12): `valid_from` is its effective
//! time, else when it was asserted (a rewording, enrichment or edit without a time of its own
//! never takes effect before the version it restates); `valid_to` is the `valid_from` of the
//! version that replaced it, open while none has. A version withdrawn without a successor (the
//! losing side of a person's `keep_existing`, a merge's input, an undone merge) gets an empty
//! interval. A version that expires (format 6) keeps its interval and its `expires_at` beside it:
//! the interval is derived from events alone, and whether a version is scheduled or expired
//! depends on the time a read asks about, never on the clock during replay.

use bincode::{Decode, Encode};
use memledger_ledger::store::Store;
use memledger_schemas::*;
use serde::Serialize;

use crate::error::ProjectError;
use crate::framework::{Projector, ViewTxn};
use crate::keys::{digest8, key};

pub const TABLE: &str = "beliefs";
/// 5: the term postings (`t`, `n`) left for the text index; a store of version 4 is rebuilt,
/// which drops them. 6: the content-hash and fact-key indexes hold one list of ids per key
/// instead of a key per memory. 7: records hold their validity interval and their sources.
/// 8: records and observations say when their text was erased. 9: records and observations
/// hold their authority and the principal that saved them; proposals. 10: records and
/// observations hold their expiry. 11: records hold when their observation was recorded.
const VERSION: u32 = 11;

/// When and by whom a memory's text was erased (the `memory_erased` event).
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ErasedMark {
    pub seq: u64,
    pub at: Timestamp,
    pub by: String,
}

impl ErasedMark {
    /// The mark an erased event carries.
    pub fn of(erased: &Erased) -> ErasedMark {
        ErasedMark { seq: erased.seq, at: erased.at, by: erased.actor.clone() }
    }

    /// What reads show where the text was: `[erased at …, by …]`.
    pub fn describe(&self) -> String {
        format!("[erased at {}, by {}]", self.at.to_human(), self.by)
    }
}

/// A memory as the belief view holds it.
#[derive(Clone, Debug, PartialEq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct MemoryRecord {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    pub status: Status,
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    pub scope: String,
    pub text: String,
    pub source: Option<String>,
    pub fact_key: Option<String>,
    #[serde(skip)]
    pub content_hash: Hash,
    /// When this version became the belief.
    pub asserted_at: Timestamp,
    /// When it stopped being the belief.
    pub stale_since: Option<Timestamp>,
    pub effective_at: Option<Timestamp>,
    /// How this version came to be: `added`, `reworded`, `enriched`, `edited`, `historical`,
    /// `keep_new`, `merge`, `effective_time`, `fact_key`.
    pub cause: String,
    /// Pending conflicts this memory is part of.
    pub conflicts: Vec<ConflictId>,
    /// Later observations merged into this one (provenance).
    pub merged_count: u32,
    pub retired_reason: Option<String>,
    /// The seq of the `memory_observed` event.
    pub observed_seq: u64,
    /// When this version is true in the world from: its effective time, else when asserted.
    pub valid_from: Timestamp,
    /// When it stopped being true: the `valid_from` of the version that replaced it; open while
    /// none has. Equal to `valid_from` (empty) for a version withdrawn without a successor.
    pub valid_to: Option<Timestamp>,
    /// The distinct named sources of this belief's observations, first seen first: the same
    /// source saying it again adds nothing here.
    pub sources: Vec<String>,
    /// Some observation of it named no source (those count as one source together).
    pub unsourced: bool,
    /// Set once the text was erased (it is blank then), at every point in time.
    pub erased: Option<ErasedMark>,
    /// How much its word counts (docs/design.md §13): the authority of its observation.
    pub authority: Authority,
    /// The principal that saved it (before format 5: the store's owner).
    pub principal: String,
    /// When it stops being true unless renewed (format 6): a read at a later valid time finds
    /// it expired. Its observation's expiry; nothing is written when the time comes.
    pub expires_at: Option<Timestamp>,
    /// The time to live the expiry was given as, in seconds: what a refresh renews it by.
    pub ttl_seconds: Option<u64>,
    /// When its observation was recorded (its `memory_observed` event's time): what a save's
    /// `related` shows, read with the record rather than from the observation.
    pub recorded_at: Timestamp,
}

impl MemoryRecord {
    /// How many independent sources support this belief: the distinct named sources, and one for
    /// all the observations that named none.
    pub fn independent_sources(&self) -> u32 {
        self.sources.len() as u32 + u32::from(self.unsourced)
    }

    /// Count `source` (an observation's [`MemoryObserved::source_identity`]) among this belief's
    /// sources, once however often it says the same thing.
    fn add_source(&mut self, source: &Option<String>) {
        match source {
            Some(s) if !self.sources.contains(s) => self.sources.push(s.clone()),
            Some(_) => {}
            None => self.unsourced = true,
        }
    }
}

/// An observed memory, whatever became of it.
#[derive(Clone, Debug, PartialEq, Encode, Decode)]
pub struct Observation {
    pub observed: MemoryObserved,
    pub seq: u64,
    pub recorded_at: Timestamp,
    pub merged_into: Option<MemoryId>,
    /// Set once the text was erased.
    pub erased: Option<ErasedMark>,
    /// Its authority, read with its event's format ([`MemoryObserved::authority`]).
    pub authority: Authority,
    /// What makes it one source ([`MemoryObserved::source_identity`]).
    pub identity: Option<String>,
    /// The principal that saved it (before format 5: the store's owner).
    pub principal: String,
}

/// The belief projector.
pub struct BeliefsProjector;

fn mkey(id: MemoryId) -> Vec<u8> {
    key(b'm', &[&id.to_bytes()])
}
fn okey(id: MemoryId) -> Vec<u8> {
    key(b'o', &[&id.to_bytes()])
}
fn lkey(root: MemoryId, version: u32) -> Vec<u8> {
    key(b'l', &[&root.to_bytes(), &version.to_be_bytes()])
}
fn ckey(id: ConflictId) -> Vec<u8> {
    key(b'c', &[&id.to_bytes()])
}
/// Keys under a scope take its 8-byte digest, computed once per memory indexed.
type ScopeDigest = [u8; 8];
fn hkey(scope: &ScopeDigest, hash: &Hash) -> Vec<u8> {
    key(b'h', &[scope, &hash.0])
}
fn kkey(scope: &ScopeDigest, fact_key: &str) -> Vec<u8> {
    key(b'k', &[scope, &digest8(fact_key)])
}

/// The ids of an index entry's value: 16 bytes each, ascending. A value of another length is
/// reported, never read in part.
fn ids_of(value: &[u8]) -> Result<Vec<MemoryId>, ProjectError> {
    if !value.len().is_multiple_of(16) {
        return Err(ProjectError::Malformed {
            view: TABLE,
            reason: format!("an index entry of {} bytes is not a list of 16-byte ids", value.len()),
        });
    }
    Ok(value.chunks_exact(16).filter_map(|b| b.try_into().ok()).map(MemoryId::from_bytes).collect())
}

impl BeliefsProjector {
    /// Add an active memory to (or remove it from) the pipeline's indexes by content and fact key.
    fn set_indexed(&self, txn: &mut ViewTxn<'_>, r: &MemoryRecord, on: bool) -> Result<(), ProjectError> {
        let scope = digest8(&r.scope);
        let mut keys = vec![hkey(&scope, &r.content_hash)];
        if let Some(fk) = &r.fact_key {
            keys.push(kkey(&scope, fk));
        }
        for k in keys {
            let mut ids = txn.get(&k)?.map(|v| ids_of(&v)).transpose()?.unwrap_or_default();
            match (ids.binary_search(&r.memory_id), on) {
                (Err(at), true) => ids.insert(at, r.memory_id),
                (Ok(at), false) => {
                    ids.remove(at);
                }
                _ => continue,
            }
            if ids.is_empty() {
                txn.delete(k);
            } else {
                txn.put(k, ids.iter().flat_map(|id| id.to_bytes()).collect());
            }
        }
        Ok(())
    }

    fn load(&self, txn: &ViewTxn<'_>, id: MemoryId, seq: u64) -> Result<MemoryRecord, ProjectError> {
        txn.get_record(&mkey(id))?.ok_or_else(|| ProjectError::Inapplicable {
            view: TABLE,
            seq,
            reason: format!("memory {id} is not a belief"),
        })
    }

    fn observation(&self, txn: &ViewTxn<'_>, id: MemoryId, seq: u64) -> Result<Observation, ProjectError> {
        txn.get_record(&okey(id))?.ok_or_else(|| ProjectError::Inapplicable {
            view: TABLE,
            seq,
            reason: format!("memory {id} was never observed"),
        })
    }

    /// Turn an observation into an active (or, for history, stale) belief at a lineage position.
    /// Without an effective time of its own it is valid from when it was asserted, or from
    /// `floor` (the version it restates) when that is later.
    #[allow(clippy::too_many_arguments)]
    fn create(
        &self,
        txn: &mut ViewTxn<'_>,
        event: &Event,
        id: MemoryId,
        root: MemoryId,
        version: u32,
        status: Status,
        cause: &str,
        floor: Option<Timestamp>,
    ) -> Result<MemoryRecord, ProjectError> {
        let obs = self.observation(txn, id, event.seq)?;
        let o = obs.observed;
        let source = obs.identity;
        let valid_from =
            o.effective_at.unwrap_or_else(|| floor.map_or(event.recorded_at, |f| f.max(event.recorded_at)));
        let mut record = MemoryRecord {
            memory_id: id,
            root_id: root,
            version,
            status,
            memory_type: o.memory_type,
            scope: o.scope,
            text: o.text,
            source: o.source,
            fact_key: o.fact_key,
            content_hash: o.content_hash,
            asserted_at: event.recorded_at,
            stale_since: if matches!(status, Status::Active | Status::Proposed) {
                None
            } else {
                Some(event.recorded_at)
            },
            effective_at: o.effective_at,
            cause: cause.to_string(),
            conflicts: Vec::new(),
            merged_count: 0,
            retired_reason: None,
            observed_seq: obs.seq,
            valid_from,
            valid_to: None,
            sources: Vec::new(),
            unsourced: false,
            erased: obs.erased,
            authority: obs.authority,
            principal: obs.principal,
            expires_at: o.expires_at,
            ttl_seconds: o.ttl_seconds,
            recorded_at: obs.recorded_at,
        };
        record.add_source(&source);
        if status == Status::Active {
            self.set_indexed(txn, &record, true)?;
        }
        txn.put(lkey(root, version), id.to_bytes().to_vec());
        txn.put_record(mkey(id), &record);
        Ok(record)
    }

    /// A version replaced by `successor` stops being valid where the successor starts; one
    /// withdrawn without a successor was never valid (an empty interval).
    fn end_validity(
        &self,
        txn: &mut ViewTxn<'_>,
        event: &Event,
        id: MemoryId,
        successor: Option<MemoryId>,
    ) -> Result<(), ProjectError> {
        let mut r = self.load(txn, id, event.seq)?;
        r.valid_to = Some(match successor {
            Some(s) => self.load(txn, s, event.seq)?.valid_from,
            None => r.valid_from,
        });
        txn.put_record(mkey(id), &r);
        Ok(())
    }

    /// Replace `replaced` by a new version `id` (a save's versioning or an explicit edit).
    #[allow(clippy::too_many_arguments)]
    fn replace(
        &self,
        txn: &mut ViewTxn<'_>,
        event: &Event,
        id: MemoryId,
        root: MemoryId,
        version: u32,
        replaced: MemoryId,
        cause: &str,
        restates: bool,
    ) -> Result<(), ProjectError> {
        let old = self.set_status(txn, event, replaced, Status::Stale)?;
        let floor = restates.then_some(old.valid_from);
        let mut new = self.create(txn, event, id, root, version, Status::Active, cause, floor)?;
        if restates {
            // The same fact restated: the evidence for it carries over.
            for s in &old.sources {
                new.add_source(&Some(s.clone()));
            }
            new.unsourced |= old.unsourced;
            txn.put_record(mkey(id), &new);
        }
        self.end_validity(txn, event, replaced, Some(id))
    }

    /// Change a belief's status, keeping the indexes in step.
    fn set_status(
        &self,
        txn: &mut ViewTxn<'_>,
        event: &Event,
        id: MemoryId,
        status: Status,
    ) -> Result<MemoryRecord, ProjectError> {
        let mut r = self.load(txn, id, event.seq)?;
        if r.status == Status::Active && status != Status::Active {
            self.set_indexed(txn, &r, false)?;
        }
        if r.status != Status::Active && status == Status::Active {
            self.set_indexed(txn, &r, true)?;
        }
        r.status = status;
        r.stale_since =
            if matches!(status, Status::Active | Status::Proposed) { None } else { Some(event.recorded_at) };
        if matches!(status, Status::Active | Status::Proposed) {
            r.valid_to = None;
        }
        txn.put_record(mkey(id), &r);
        Ok(r)
    }

    /// Apply (or undo) one effect of a resolution whose effects are `all`; `cause` names the
    /// resolution for lineage moves.
    fn apply_effect(
        &self,
        txn: &mut ViewTxn<'_>,
        event: &Event,
        effect: &Effect,
        all: &[Effect],
        undo: bool,
        cause: &str,
    ) -> Result<(), ProjectError> {
        match *effect {
            Effect::MadeStale { memory_id } if undo => {
                self.set_status(txn, event, memory_id, Status::Active)?;
            }
            Effect::MadeStale { memory_id } => {
                self.set_status(txn, event, memory_id, Status::Stale)?;
                // What replaced it, by the resolution's own `replaces` edge.
                let successor = all.iter().find_map(|e| match e {
                    Effect::EdgeAdded { edge } if edge.kind == EdgeKind::Replaces && edge.to == memory_id => {
                        Some(edge.from)
                    }
                    _ => None,
                });
                self.end_validity(txn, event, memory_id, successor)?;
            }
            Effect::Reparented { memory_id, from_root, from_version, to_root, to_version } => {
                let (old, new) = if undo {
                    ((to_root, to_version), (from_root, from_version))
                } else {
                    ((from_root, from_version), (to_root, to_version))
                };
                let mut r = self.load(txn, memory_id, event.seq)?;
                txn.delete(lkey(old.0, old.1));
                txn.put(lkey(new.0, new.1), memory_id.to_bytes().to_vec());
                r.root_id = new.0;
                r.version = new.1;
                // A memory only ever moves out of its own lineage, where it was added.
                r.cause = if undo { "added".to_string() } else { cause.to_string() };
                txn.put_record(mkey(memory_id), &r);
            }
            Effect::EdgeAdded { .. } => {}
            Effect::Accepted { memory_id } | Effect::Rejected { memory_id } if undo => {
                self.set_status(txn, event, memory_id, Status::Proposed)?;
            }
            Effect::Accepted { memory_id } => {
                self.set_status(txn, event, memory_id, Status::Active)?;
            }
            Effect::Rejected { memory_id } => {
                // Never current: an empty interval.
                self.set_status(txn, event, memory_id, Status::Stale)?;
                self.end_validity(txn, event, memory_id, None)?;
            }
            Effect::Introduced { memory_id, root_id, version } => {
                if undo {
                    self.set_status(txn, event, memory_id, Status::Stale)?;
                    self.end_validity(txn, event, memory_id, None)?;
                } else if txn.get(&mkey(memory_id))?.is_some() {
                    self.set_status(txn, event, memory_id, Status::Active)?;
                } else {
                    self.create(txn, event, memory_id, root_id, version, Status::Active, "merge", None)?;
                }
            }
        }
        Ok(())
    }

    fn set_conflict(
        &self,
        txn: &mut ViewTxn<'_>,
        event: &Event,
        cid: ConflictId,
        pending: bool,
    ) -> Result<(), ProjectError> {
        let members: Vec<MemoryId> = txn.get_record(&ckey(cid))?.unwrap_or_default();
        for id in members {
            let mut r = self.load(txn, id, event.seq)?;
            r.conflicts.retain(|c| *c != cid);
            if pending {
                r.conflicts.push(cid);
            }
            txn.put_record(mkey(id), &r);
        }
        Ok(())
    }
}

impl Projector for BeliefsProjector {
    fn name(&self) -> &'static str {
        TABLE
    }

    fn version(&self) -> u32 {
        // Versions up to 4 carried the term function's version in the units (4001).
        VERSION * 1000
    }

    fn ignores(&self, event_type: &str) -> bool {
        matches!(
            event_type,
            "pair_classified"
                | "principal_added"
                | "principal_granted"
                | "grant_revoked"
                | "principal_revoked"
                | "principal_rotated"
                | "transcript_progressed"
                | "head_accepted"
        )
    }

    fn apply(&self, event: &Event, txn: &mut ViewTxn<'_>) -> Result<(), ProjectError> {
        match &event.body {
            EventBody::MemoryObserved(b) => {
                let obs = Observation {
                    observed: b.clone(),
                    seq: event.seq,
                    recorded_at: event.recorded_at,
                    merged_into: None,
                    erased: event.erased.as_ref().map(ErasedMark::of),
                    authority: b.authority(event.format),
                    identity: b.source_identity(event.format),
                    principal: event.principal.clone().unwrap_or_else(|| OWNER.to_string()),
                };
                txn.put_record(okey(b.memory_id), &obs);
            }
            EventBody::BeliefProposed(b) => {
                self.create(txn, event, b.memory_id, b.memory_id, 1, Status::Proposed, "proposed", None)?;
            }
            // Principals, a transcript's progress and an accepted head are not beliefs.
            EventBody::PrincipalAdded(_)
            | EventBody::PrincipalGranted(_)
            | EventBody::GrantRevoked(_)
            | EventBody::PrincipalRevoked(_)
            | EventBody::PrincipalRotated(_)
            | EventBody::TranscriptProgressed(_)
            | EventBody::HeadAccepted(_) => {}
            // A proposed merge changes no belief until a person accepts it (a resolution).
            EventBody::PairClassified(_) | EventBody::MergeProposed(_) => {}
            EventBody::BeliefAdded(b) => {
                self.create(txn, event, b.memory_id, b.memory_id, 1, Status::Active, "added", None)?;
            }
            EventBody::BeliefVersioned(b) => {
                let restates =
                    matches!(b.cause, VersionCause::Reworded | VersionCause::Enriched | VersionCause::Expiry);
                self.replace(txn, event, b.memory_id, b.root_id, b.version, b.replaces, b.cause.as_str(), restates)?;
            }
            EventBody::BeliefEdited(b) => {
                self.replace(txn, event, b.memory_id, b.root_id, b.version, b.replaces, "edited", true)?;
            }
            EventBody::BeliefHistorical(b) => {
                self.create(txn, event, b.memory_id, b.root_id, b.version, Status::Stale, "historical", None)?;
                // An older claim: valid until the current belief took effect.
                self.end_validity(txn, event, b.memory_id, Some(b.current))?;
            }
            EventBody::BeliefMerged(b) => {
                let mut obs = self.observation(txn, b.memory_id, event.seq)?;
                obs.merged_into = Some(b.into);
                let source = obs.identity.clone();
                txn.put_record(okey(b.memory_id), &obs);
                let mut target = self.load(txn, b.into, event.seq)?;
                target.merged_count += 1;
                target.add_source(&source);
                txn.put_record(mkey(b.into), &target);
            }
            EventBody::BeliefRetired(b) => {
                let mut r = self.set_status(txn, event, b.memory_id, Status::Retired)?;
                r.retired_reason = b.reason.clone();
                txn.put_record(mkey(b.memory_id), &r);
            }
            EventBody::ConflictOpened(b) => {
                let members: Vec<MemoryId> =
                    std::iter::once(b.incoming).chain(b.candidates.iter().map(|c| c.memory_id)).collect();
                txn.put_record(ckey(b.conflict_id), &members);
                self.set_conflict(txn, event, b.conflict_id, true)?;
            }
            EventBody::ConflictResolved(b) => {
                self.set_conflict(txn, event, b.conflict_id, false)?;
                let cause = match (b.by.as_str(), b.action) {
                    ("effective_time", ResolutionAction::KeepNew) => "effective_time",
                    ("effective_time", _) => "historical",
                    (_, action) => action.as_str(),
                };
                for effect in &b.effects {
                    self.apply_effect(txn, event, effect, &b.effects, false, cause)?;
                }
            }
            EventBody::ResolutionReverted(b) => {
                for effect in b.undone.iter().rev() {
                    self.apply_effect(txn, event, effect, &b.undone, true, "added")?;
                }
                self.set_conflict(txn, event, b.conflict_id, true)?;
            }
            EventBody::MemoryErased(b) => {
                // The texts go, and the beliefs leave recall; what the replay of the blanked
                // events gives, byte for byte.
                let mark = ErasedMark { seq: event.seq, at: event.recorded_at, by: event.actor.clone() };
                for &id in &b.memory_ids {
                    if let Some(mut obs) = txn.get_record::<Observation>(&okey(id))? {
                        obs.observed.text.clear();
                        if let Some(evidence) = &mut obs.observed.evidence {
                            evidence.excerpt.clear();
                        }
                        obs.erased = Some(mark.clone());
                        txn.put_record(okey(id), &obs);
                    }
                    if txn.get(&mkey(id))?.is_some() {
                        let mut r = self.set_status(txn, event, id, Status::Retired)?;
                        r.text.clear();
                        if let Some(reason) = &mut r.retired_reason {
                            reason.clear();
                        }
                        r.erased = Some(mark.clone());
                        txn.put_record(mkey(id), &r);
                    }
                }
            }
        }
        Ok(())
    }
}

fn decode<T: bincode::Decode<()>>(bytes: &[u8]) -> Result<T, ProjectError> {
    memledger_schemas::codec::decode(bytes).map_err(|source| ProjectError::Codec { view: TABLE, source })
}

fn id_at(k: &[u8], offset: usize) -> Option<MemoryId> {
    k.get(offset..offset + 16).and_then(|b| b.try_into().ok()).map(MemoryId::from_bytes)
}

/// Read queries over the belief view.
pub struct BeliefReader<'a> {
    store: &'a Store,
}

impl<'a> BeliefReader<'a> {
    pub fn new(store: &'a Store) -> Self {
        BeliefReader { store }
    }

    pub fn get(&self, id: MemoryId) -> Result<Option<MemoryRecord>, ProjectError> {
        self.store.get(TABLE, &mkey(id))?.map(|b| decode(&b)).transpose()
    }

    pub fn observation(&self, id: MemoryId) -> Result<Option<Observation>, ProjectError> {
        self.store.get(TABLE, &okey(id))?.map(|b| decode(&b)).transpose()
    }

    /// Every observed memory id starting with the hex digits `prefix` (beliefs and merged ones).
    pub fn ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<MemoryId>, ProjectError> {
        let even = &prefix[..prefix.len() & !1];
        let mut bytes = vec![b'o'];
        for i in (0..even.len()).step_by(2) {
            bytes.push(u8::from_str_radix(&even[i..i + 2], 16).unwrap_or(0));
        }
        let mut out = Vec::new();
        for item in self.store.scan_prefix(TABLE, &bytes)? {
            let (k, _) = item?;
            if let Some(id) = id_at(&k, 1)
                && id.hex().starts_with(prefix)
            {
                out.push(id);
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// The versions of a lineage, oldest first.
    pub fn lineage(&self, root: MemoryId) -> Result<Vec<MemoryRecord>, ProjectError> {
        let prefix = key(b'l', &[&root.to_bytes()]);
        let mut out = Vec::new();
        for item in self.store.scan_prefix(TABLE, &prefix)? {
            let (_, v) = item?;
            let id = v.as_ref().try_into().map(MemoryId::from_bytes).map_err(|_| ProjectError::Inapplicable {
                view: TABLE,
                seq: 0,
                reason: "bad lineage entry".into(),
            })?;
            if let Some(r) = self.get(id)? {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// The current belief of a lineage: its newest active version.
    pub fn current(&self, root: MemoryId) -> Result<Option<MemoryRecord>, ProjectError> {
        Ok(self.lineage(root)?.into_iter().rev().find(|r| r.status == Status::Active))
    }

    /// Every memory, in id order, passing `keep`.
    pub fn scan(
        &self,
        mut keep: impl FnMut(&MemoryRecord) -> bool,
        limit: usize,
    ) -> Result<Vec<MemoryRecord>, ProjectError> {
        let mut out = Vec::new();
        for item in self.store.scan_prefix(TABLE, b"m")? {
            let (_, v) = item?;
            let r: MemoryRecord = decode(&v)?;
            if keep(&r) {
                out.push(r);
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Active memories in `scope` with exactly this content.
    pub fn active_by_hash(&self, scope: &str, hash: &Hash) -> Result<Vec<MemoryId>, ProjectError> {
        self.ids_at(&hkey(&digest8(scope), hash))
    }

    /// The active memories of `scope` when it holds at most `limit` of them, else `None`: read
    /// off the content-hash index, so at most `limit + 1` entries are read however large the
    /// scope.
    pub fn active_in_scope_up_to(&self, scope: &str, limit: usize) -> Result<Option<Vec<MemoryId>>, ProjectError> {
        let prefix = key(b'h', &[&digest8(scope)]);
        let mut out = Vec::new();
        for item in self.store.scan_prefix(TABLE, &prefix)? {
            let (_, v) = item?;
            out.extend(ids_of(&v)?);
            if out.len() > limit {
                return Ok(None);
            }
        }
        Ok(Some(out))
    }

    /// Active memories in `scope` with this fact key.
    pub fn active_by_fact_key(&self, scope: &str, fact_key: &str) -> Result<Vec<MemoryId>, ProjectError> {
        self.ids_at(&kkey(&digest8(scope), fact_key))
    }

    /// An index entry's ids, in id order.
    fn ids_at(&self, key: &[u8]) -> Result<Vec<MemoryId>, ProjectError> {
        Ok(self.store.get(TABLE, key)?.map(|v| ids_of(&v)).transpose()?.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index entry whose length is not a whole number of ids is reported, not read in part.
    #[test]
    fn a_malformed_index_entry_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &[TABLE.into()], true, std::time::Duration::from_secs(1)).unwrap();
        let hash = Hash([7; 32]);
        let mut batch = memledger_ledger::store::Batch::default();
        batch.put(TABLE, hkey(&digest8("personal"), &hash), [1u8; 17]);
        store.write(batch, false).unwrap();
        let err = BeliefReader::new(&store).active_by_hash("personal", &hash).unwrap_err();
        assert!(err.to_string().contains("not a list of 16-byte ids"), "{err}");
        assert!(BeliefReader::new(&store).active_by_hash("other", &hash).unwrap().is_empty());
    }
}
