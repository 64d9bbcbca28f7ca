//! The reads of the review page (`memledger serve` at `/`, docs/review.md): the conflict queue a
//! page at a time with both sides whole, the near misses (pairs examined and dropped), the event
//! log newest first with filters, and counts over time for the charts; and opening a conflict by
//! hand for a pair the gate let through. Every read answers one bounded page: none reads every
//! memory, and the backward scans stop after a fixed number of events with a cursor to go on.

use std::collections::{BTreeMap, HashMap};

use memledger_ledger::{Ledger, NewEvent};
use memledger_projector::beliefs::MemoryRecord;
use memledger_projector::conflicts::{ConflictRecord, ConflictStatus, ResolutionRecord, RevertRecord};
use memledger_schemas::*;
use serde::Serialize;

use crate::access::Readable;
use crate::classify::Classification;
use crate::error::{BadInput, Conflict, EngineError};
use crate::reads::Reader;

/// Events a backward scan reads at most for one page; the page's cursor goes on from there.
pub const SCAN_BUDGET: u64 = 20_000;
/// The most items one page holds.
pub const MAX_PAGE: usize = 500;
/// The gate recorded on a conflict a person opened by hand.
pub const BY_HAND_GATE: &str = "by_hand";

fn check_limit(limit: usize) -> Result<(), EngineError> {
    match limit {
        0 => Err(BadInput::ZeroLimit.into()),
        l if l > MAX_PAGE => Err(BadInput::LimitTooLarge(MAX_PAGE).into()),
        _ => Ok(()),
    }
}

/// One memory as the page shows it beside another: what it says, where, and who saved it when.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Side {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    pub status: Status,
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    pub scope: String,
    pub fact_key: Option<String>,
    pub text: String,
    pub asserted_at: Timestamp,
    /// The actor of the save that observed it.
    pub saved_by: Option<String>,
    pub saved_seq: u64,
    /// The principal that saved it, and the authority it carries.
    pub principal: String,
    pub authority: Authority,
}

/// A conflict with both sides whole and the classification that opened it.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ReviewConflict {
    pub conflict_id: ConflictId,
    pub status: ConflictStatus,
    pub scope: String,
    pub fact_key: Option<String>,
    pub opened_at: Timestamp,
    pub opened_seq: u64,
    /// The newer side.
    pub incoming: Option<Side>,
    /// The existing sides, each with the reason the pair was flagged.
    pub candidates: Vec<Candidate>,
    /// The gate and method of the classification that opened it.
    pub gate: Option<String>,
    pub method: Option<Method>,
    pub resolution: Option<ResolutionRecord>,
    pub resolutions: usize,
    pub reverts: Vec<RevertRecord>,
    /// contradiction, authority, proposal or merge_proposal.
    pub kind: std::borrow::Cow<'static, str>,
    /// The authority a resolution needs.
    pub needs_authority: Authority,
    /// Who proposed the incoming memory, when the entry is a proposal.
    pub proposed_by: Option<String>,
    /// The incoming side is in a scope the caller may not read: shown by its id alone.
    pub incoming_withheld: bool,
    pub incoming_id: MemoryId,
}

/// An existing side of a conflict.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Candidate {
    /// None when the memory is no longer a belief, or is withheld.
    pub memory: Option<Side>,
    pub memory_id: MemoryId,
    pub reason: String,
    /// In a scope the caller may not read: its id alone, no text or reason.
    pub withheld: bool,
}

/// A page of the queue: pending first, grouped by scope and fact key, the newest group first.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ConflictPage {
    pub conflicts: Vec<ReviewConflict>,
    /// Conflicts that match the status filter, over all pages.
    pub total: usize,
    pub pending: usize,
    pub offset: usize,
}

/// A classified pair that was dropped: the near misses a person audits the gate with.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct NearMiss {
    pub seq: u64,
    pub recorded_at: Timestamp,
    pub incoming: Option<Side>,
    pub candidate: Option<Side>,
    pub method: Method,
    pub relation: Relation,
    pub gate: String,
    pub reason: String,
    pub outcome: PairOutcome,
    pub scores: BTreeMap<String, f64>,
    pub thresholds: BTreeMap<String, f64>,
    /// The candidate is in a scope the caller may not read: its id alone, the reason withheld.
    pub candidate_withheld: bool,
    pub candidate_id: MemoryId,
}

/// A backward page: the items, and the seq to continue below (none: the start was reached).
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_before: Option<u64>,
    /// Events read for this page.
    pub scanned: u64,
    pub head_seq: u64,
}

/// Which dropped pairs a near-miss page lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NearMissKind {
    /// Related, but of different declared kinds (`near_miss`).
    AcrossKinds,
    /// Classified as not the same fact and not a contradiction (`no_effect`, not identical).
    Dropped,
    Both,
}

impl std::str::FromStr for NearMissKind {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self, EngineError> {
        match s {
            "across_kinds" => Ok(NearMissKind::AcrossKinds),
            "dropped" => Ok(NearMissKind::Dropped),
            "all" => Ok(NearMissKind::Both),
            other => {
                Err(BadInput::UnknownName(format!("near-miss kind {other:?}: one of across_kinds, dropped, all"))
                    .into())
            }
        }
    }
}

/// What an event page keeps.
#[derive(Clone, Debug, Default)]
pub struct EventFilter {
    /// Event type names ([`EventBody::type_name`]); empty: every type.
    pub types: Vec<String>,
    /// Actors containing this text.
    pub actor: Option<String>,
}

impl EventFilter {
    pub fn check(&self) -> Result<(), EngineError> {
        for t in &self.types {
            if !EventBody::TYPE_NAMES.contains(&t.as_str()) {
                return Err(BadInput::UnknownName(format!(
                    "event type {t:?}: one of {}",
                    EventBody::TYPE_NAMES.join(", ")
                ))
                .into());
            }
        }
        Ok(())
    }

    fn keeps(&self, e: &Event) -> bool {
        (self.types.is_empty() || self.types.iter().any(|t| t == e.body.type_name()))
            && self.actor.as_deref().is_none_or(|a| e.actor.contains(a))
    }
}

/// Counts in one time bucket.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Bucket {
    pub start: Timestamp,
    /// Event counts by type name.
    pub events: BTreeMap<String, u64>,
    /// Lineages that exist at the end of the bucket.
    pub beliefs: u64,
    /// Conflicts pending at the end of the bucket.
    pub pending_conflicts: u64,
}

/// The ledger over time, for the charts.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Timeline {
    /// `minute`, `hour`, `day` or `week`: whatever gives at most [`MAX_BUCKETS`].
    pub bucket: std::borrow::Cow<'static, str>,
    pub buckets: Vec<Bucket>,
    /// How saves ended: added, merged, versioned, historical, conflict.
    pub save_outcomes: BTreeMap<String, u64>,
    /// Conflicts by scope, then by status.
    pub conflicts_by_scope: BTreeMap<String, BTreeMap<String, u64>>,
    pub events: u64,
}

/// The most buckets a timeline has.
pub const MAX_BUCKETS: i64 = 200;

fn side(ledger: &Ledger, r: MemoryRecord) -> Result<Side, EngineError> {
    let saved_by = ledger.get(r.observed_seq)?.map(|e| e.actor);
    Ok(Side {
        principal: r.principal.clone(),
        authority: r.authority,
        memory_id: r.memory_id,
        root_id: r.root_id,
        version: r.version,
        status: r.status,
        memory_type: r.memory_type,
        scope: r.scope,
        fact_key: r.fact_key,
        text: r.text,
        asserted_at: r.asserted_at,
        saved_by,
        saved_seq: r.observed_seq,
    })
}

fn side_of(reader: Reader<'_>, ledger: &Ledger, id: MemoryId) -> Result<Option<Side>, EngineError> {
    reader.beliefs().get(id)?.map(|r| side(ledger, r)).transpose()
}

/// Whether memory `id` is in a scope of `scopes` (a memory no longer a belief: its observation's).
fn readable(reader: Reader<'_>, scopes: &Readable, id: MemoryId) -> Result<bool, EngineError> {
    let scope = match reader.beliefs().get(id)? {
        Some(r) => r.scope,
        None => reader.beliefs().observation(id)?.map(|o| o.observed.scope).unwrap_or_default(),
    };
    Ok(scopes.covers(&scope))
}

/// What a reason reads where the caller may not read the memory it is about.
pub const WITHHELD: &str = "[withheld: a memory in a scope this principal may not read]";

/// A page of the conflict queue (`status` `None`: every conflict).
pub(crate) fn conflict_page(
    reader: Reader<'_>,
    ledger: &Ledger,
    status: Option<ConflictStatus>,
    offset: usize,
    limit: usize,
    scopes: &Readable,
) -> Result<ConflictPage, EngineError> {
    check_limit(limit)?;
    // A conflict with a side the caller may read, its other sides withheld.
    let mut all = Vec::new();
    for c in reader.conflict_queue().list(status)? {
        let mut seen = readable(reader, scopes, c.incoming)?;
        for s in &c.candidates {
            seen = seen || readable(reader, scopes, s.memory_id)?;
        }
        if seen {
            all.push(c);
        }
    }
    let pending = all.iter().filter(|c| c.status == ConflictStatus::Pending).count();
    let mut keyed: Vec<(ConflictRecord, String, Option<String>)> = Vec::with_capacity(all.len());
    for c in all {
        let (scope, key) = match reader.beliefs().get(c.incoming)? {
            Some(r) => (r.scope, r.fact_key),
            None => (String::new(), None),
        };
        keyed.push((c, scope, key));
    }
    // Groups (status, scope, fact key) ordered by their newest conflict; newest first within.
    let mut newest: HashMap<(bool, String, Option<String>), u64> = HashMap::new();
    for (c, scope, key) in &keyed {
        let group = (c.status != ConflictStatus::Pending, scope.clone(), key.clone());
        let n = newest.entry(group).or_default();
        *n = (*n).max(c.opened_seq);
    }
    keyed.sort_by(|(a, sa, ka), (b, sb, kb)| {
        let ga = (a.status != ConflictStatus::Pending, sa.clone(), ka.clone());
        let gb = (b.status != ConflictStatus::Pending, sb.clone(), kb.clone());
        ga.0.cmp(&gb.0).then(newest[&gb].cmp(&newest[&ga])).then(ga.cmp(&gb)).then(b.opened_seq.cmp(&a.opened_seq))
    });
    let total = keyed.len();
    let mut conflicts = Vec::new();
    for (c, scope, fact_key) in keyed.into_iter().skip(offset).take(limit) {
        let opening = reader.why(c.incoming, c.candidates.first().map(|s| s.memory_id))?;
        let opened = opening.iter().rev().find(|d| d.seq < c.opened_seq);
        let mut candidates = Vec::new();
        for s in &c.candidates {
            let withheld = !readable(reader, scopes, s.memory_id)?;
            candidates.push(Candidate {
                memory: if withheld { None } else { side_of(reader, ledger, s.memory_id)? },
                memory_id: s.memory_id,
                reason: if withheld { WITHHELD.to_string() } else { s.reason.clone() },
                withheld,
            });
        }
        let incoming_withheld = !readable(reader, scopes, c.incoming)?;
        conflicts.push(ReviewConflict {
            kind: c.kind().into(),
            needs_authority: c.needs_authority,
            proposed_by: c.proposed_by().map(str::to_string),
            incoming_withheld,
            incoming_id: c.incoming,
            conflict_id: c.conflict_id,
            status: c.status,
            scope,
            fact_key,
            opened_at: c.opened_at,
            opened_seq: c.opened_seq,
            incoming: if incoming_withheld { None } else { side_of(reader, ledger, c.incoming)? },
            candidates,
            gate: opened.map(|d| d.gate.clone()),
            method: opened.map(|d| d.method),
            resolution: c.resolution,
            resolutions: c.resolutions.len(),
            reverts: c.reverts,
        });
    }
    Ok(ConflictPage { conflicts, total, pending, offset })
}

/// The seq a backward page starts below: `before`, or past the head.
fn start_below(ledger: &Ledger, before: Option<u64>) -> u64 {
    let head = ledger.head().seq;
    before.map_or(head + 1, |b| b.min(head + 1))
}

/// Walk the ledger backwards from below `before`, at most [`SCAN_BUDGET`] events, handing each
/// to `take` until it has `limit` items.
fn backwards<T>(
    ledger: &Ledger,
    before: Option<u64>,
    limit: usize,
    mut take: impl FnMut(Event) -> Result<Option<T>, EngineError>,
) -> Result<Page<T>, EngineError> {
    check_limit(limit)?;
    let head_seq = ledger.head().seq;
    let mut seq = start_below(ledger, before);
    let mut items = Vec::new();
    let mut scanned = 0;
    while seq > 1 && items.len() < limit && scanned < SCAN_BUDGET {
        seq -= 1;
        scanned += 1;
        if let Some(event) = ledger.get(seq)?
            && let Some(item) = take(event)?
        {
            items.push(item);
        }
    }
    Ok(Page { items, next_before: (seq > 1).then_some(seq), scanned, head_seq })
}

/// The event log newest first, filtered.
pub(crate) fn event_page(
    ledger: &Ledger,
    before: Option<u64>,
    limit: usize,
    filter: &EventFilter,
    visible: &dyn Fn(&Event) -> Result<bool, EngineError>,
) -> Result<Page<Event>, EngineError> {
    filter.check()?;
    backwards(ledger, before, limit, |e| Ok((filter.keeps(&e) && visible(&e)?).then_some(e)))
}

/// Dropped pairs newest first, optionally of one scope.
pub(crate) fn near_miss_page(
    reader: Reader<'_>,
    ledger: &Ledger,
    before: Option<u64>,
    limit: usize,
    kind: NearMissKind,
    scope: Option<&str>,
    scopes: &Readable,
) -> Result<Page<NearMiss>, EngineError> {
    backwards(ledger, before, limit, |e| {
        let EventBody::PairClassified(b) = e.body else { return Ok(None) };
        let wanted = match b.outcome {
            PairOutcome::NearMiss => kind != NearMissKind::Dropped,
            PairOutcome::NoEffect => kind != NearMissKind::AcrossKinds && b.relation != Relation::Identical,
            _ => false,
        };
        if !wanted {
            return Ok(None);
        }
        if !readable(reader, scopes, b.incoming)? {
            return Ok(None);
        }
        let incoming = side_of(reader, ledger, b.incoming)?;
        if scope.is_some_and(|s| incoming.as_ref().is_none_or(|i| i.scope != s)) {
            return Ok(None);
        }
        let candidate_withheld = !readable(reader, scopes, b.candidate)?;
        Ok(Some(NearMiss {
            seq: e.seq,
            recorded_at: e.recorded_at,
            incoming,
            candidate: if candidate_withheld { None } else { side_of(reader, ledger, b.candidate)? },
            candidate_withheld,
            candidate_id: b.candidate,
            method: b.method,
            relation: b.relation,
            gate: b.gate.to_string(),
            reason: if candidate_withheld { WITHHELD.to_string() } else { b.reason },
            outcome: b.outcome,
            scores: b.scores.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            thresholds: b.thresholds.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }))
    })
}

/// The width of the buckets that cover `span` micros in at most [`MAX_BUCKETS`].
fn bucket_width(span: i64) -> (&'static str, i64) {
    const MINUTE: i64 = 60_000_000;
    let widths = [("minute", MINUTE), ("hour", 60 * MINUTE), ("day", 24 * 60 * MINUTE), ("week", 7 * 24 * 60 * MINUTE)];
    for (name, w) in widths {
        if span / w < MAX_BUCKETS {
            return (name, w);
        }
    }
    let (name, w) = widths[3];
    (name, w.max(span / MAX_BUCKETS + 1))
}

/// Counts over time: one pass over the ledger (the text of saves and classifications is not
/// decoded), and the conflict view for conflicts by scope.
pub(crate) fn timeline(
    reader: Reader<'_>,
    ledger: &Ledger,
    scopes: &Readable,
    visible: &dyn Fn(&Event) -> Result<bool, EngineError>,
) -> Result<Timeline, EngineError> {
    // Seq and time of every event that moves a chart; the rest are counted by type only.
    let mut marks: Vec<(i64, &'static str)> = Vec::new();
    let mut events = 0u64;
    for item in ledger.scan_skipping(1, &["memory_observed", "pair_classified"])? {
        let (_, event) = item?;
        events += 1;
        if let Some(e) = event
            && visible(&e)?
        {
            marks.push((e.recorded_at.micros(), e.body.type_name()));
        }
    }
    let first = marks.first().map_or(0, |m| m.0);
    let last = marks.last().map_or(0, |m| m.0);
    let (bucket, width) = bucket_width(last - first);
    let origin = first - first.rem_euclid(width);
    let mut buckets: Vec<Bucket> = Vec::new();
    let (mut beliefs, mut pending) = (0u64, 0u64);
    let mut save_outcomes: BTreeMap<String, u64> = BTreeMap::new();
    for (at, kind) in marks {
        let start = origin + (at - origin) / width * width;
        if buckets.last().is_none_or(|b| b.start.micros() != start) {
            buckets.push(Bucket {
                start: Timestamp::from_micros(start),
                events: BTreeMap::new(),
                beliefs,
                pending_conflicts: pending,
            });
        }
        match kind {
            "belief_added" => beliefs += 1,
            "conflict_opened" | "resolution_reverted" => pending += 1,
            "conflict_resolved" => pending = pending.saturating_sub(1),
            _ => {}
        }
        let outcome = match kind {
            "belief_added" => Some("added"),
            "belief_merged" => Some("merged"),
            "belief_versioned" => Some("versioned"),
            "belief_historical" => Some("historical"),
            "conflict_opened" => Some("conflict"),
            _ => None,
        };
        if let Some(o) = outcome {
            *save_outcomes.entry(o.into()).or_default() += 1;
        }
        if let Some(b) = buckets.last_mut() {
            *b.events.entry(kind.into()).or_default() += 1;
            b.beliefs = beliefs;
            b.pending_conflicts = pending;
        }
    }
    let mut conflicts_by_scope: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for c in reader.conflict_queue().list(None)? {
        let scope = reader.beliefs().get(c.incoming)?.map_or_else(String::new, |r| r.scope);
        if scopes.covers(&scope) {
            *conflicts_by_scope.entry(scope).or_default().entry(c.status.as_str().into()).or_default() += 1;
        }
    }
    Ok(Timeline { bucket: bucket.into(), buckets, save_outcomes, conflicts_by_scope, events })
}

/// The events that open a conflict by a person's word between two active memories of one
/// scope that have no record together yet: the same `pair_classified` + `conflict_opened` as a
/// save or a scan, the classification's gate [`BY_HAND_GATE`] with the lexical scores beside it.
pub(crate) fn plan_open_by_hand(
    reader: Reader<'_>,
    a: MemoryId,
    b: MemoryId,
    note: Option<&str>,
    lexical: impl FnOnce(&MemoryRecord, &MemoryRecord) -> Classification,
) -> Result<(ConflictId, Vec<NewEvent>), EngineError> {
    let refuse = |why: String| -> EngineError { Conflict::NotOpenable(why).into() };
    let ra = reader.record(a)?;
    let rb = reader.record(b)?;
    if ra.root_id == rb.root_id {
        return Err(refuse("the two memories are versions of one belief".into()));
    }
    for r in [&ra, &rb] {
        if r.status != Status::Active {
            return Err(refuse(format!("memory {} is {}, not active", r.memory_id.short(), r.status)));
        }
    }
    if ra.scope != rb.scope {
        return Err(refuse(format!("the memories are in different scopes ({} and {})", ra.scope, rb.scope)));
    }
    // The later first version is "new": that is the side a resolution can move.
    let first = |r: &MemoryRecord| r.root_id == r.memory_id && r.version == 1;
    let (incoming, candidate) = match (first(&ra), first(&rb)) {
        (true, false) => (&ra, &rb),
        (false, true) => (&rb, &ra),
        (true, true) if ra.observed_seq >= rb.observed_seq => (&ra, &rb),
        (true, true) => (&rb, &ra),
        (false, false) => {
            return Err(refuse("neither memory is a first version, so no resolution could apply".into()));
        }
    };
    let mut class = lexical(incoming, candidate);
    class.relation = Relation::Contradictory;
    class.gate = BY_HAND_GATE.into();
    class.reason = note.map_or_else(|| "a person says these cannot both be true".into(), str::to_string);
    match crate::scan::plan_open_scanned(reader, incoming, candidate, &class, None, "opened by hand")? {
        Some(planned) => Ok(planned),
        None => Err(refuse("the pair already has a record (a conflict in some state, or keep_both)".into())),
    }
}
