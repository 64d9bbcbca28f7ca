//! Valid time (docs/design.md §12): which version of a belief is true at the time a read asks
//! about. The belief view stores each version's interval (`valid_from`, `valid_to`,
//! `projector/src/beliefs.rs`); this module evaluates them at a time given as an argument — the
//! CLI passes its clock, tests pass fixed instants — so nothing is written when a scheduled time
//! arrives, and replay never reads the clock.
//!
//! The rules: a lineage's value at time `t` is the version, not retired nor expired at `t`, whose
//! interval holds `t` and started last (an older claim kept as history holds until a
//! later-starting version takes over; among versions starting together, the highest). That
//! version reads `active`; a version whose (non-empty) interval starts after `t` reads
//! `scheduled`; one whose interval holds `t` but whose expiry (`expires_at`, format 6) is at or
//! before `t` reads `expired` (docs/adr/0038-expiry.md); any other reads `stale`, or `retired`. The interval a read reports ends where the next version of the lineage starts, so
//! a timeline of several late-arriving claims never overlaps.

use std::fmt;
use std::str::FromStr;

use memledger_projector::beliefs::MemoryRecord;
use memledger_schemas::{MemoryId, Status, Timestamp};
use serde::Serialize;

use crate::error::{BadInput, EngineError};
use crate::reads::{MemoryView, Reader};

/// The time after every other: a read at it sees every scheduled change as arrived, which is the
/// belief view as stored (the latest version of each belief current).
pub const END_OF_TIME: Timestamp = Timestamp(i64::MAX);

/// A version's status as a read at some valid time sees it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ReadStatus {
    /// The belief's value at the time asked about.
    Active,
    /// Takes effect after the time asked about.
    Scheduled,
    /// Replaced, withdrawn or superseded at the time asked about.
    Stale,
    /// Forgotten.
    Retired,
    /// Proposed, not accepted yet: never current (docs/design.md §13).
    Proposed,
    /// Its expiry had come at the time asked about, and nothing replaced it.
    Expired,
}

impl ReadStatus {
    pub const ALL: &'static [ReadStatus] = &[
        ReadStatus::Active,
        ReadStatus::Scheduled,
        ReadStatus::Stale,
        ReadStatus::Retired,
        ReadStatus::Proposed,
        ReadStatus::Expired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReadStatus::Active => "active",
            ReadStatus::Scheduled => "scheduled",
            ReadStatus::Stale => "stale",
            ReadStatus::Retired => "retired",
            ReadStatus::Proposed => "proposed",
            ReadStatus::Expired => "expired",
        }
    }
}

impl fmt::Display for ReadStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ReadStatus {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ReadStatus::ALL.iter().copied().find(|r| r.as_str() == s).ok_or_else(|| {
            let known = ReadStatus::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
            BadInput::UnknownName(format!("unknown status {s:?} (expected one of: {known}, all)")).into()
        })
    }
}

/// The stored statuses read the same at [`END_OF_TIME`]: a `Status` compares equal to the
/// status of the same name.
impl PartialEq<Status> for ReadStatus {
    fn eq(&self, other: &Status) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<ReadStatus> for Status {
    fn eq(&self, other: &ReadStatus) -> bool {
        self.as_str() == other.as_str()
    }
}

impl From<Status> for ReadStatus {
    fn from(s: Status) -> ReadStatus {
        match s {
            Status::Active => ReadStatus::Active,
            Status::Stale => ReadStatus::Stale,
            Status::Retired => ReadStatus::Retired,
            Status::Proposed => ReadStatus::Proposed,
        }
    }
}

/// A change of a belief that takes effect after the time a read asked about.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ScheduledChange {
    pub memory_id: MemoryId,
    pub version: u32,
    pub text: String,
    pub valid_from: Timestamp,
}

/// Parse a `--valid-at` time (RFC 3339).
pub fn parse_valid_at(text: &str) -> Result<Timestamp, EngineError> {
    Timestamp::parse_rfc3339(text).map_err(|_| BadInput::ValidAt(text.trim().to_string()).into())
}

/// Whether `r` can be true at some time: not retired, not a proposal.
fn counts(r: &MemoryRecord) -> bool {
    !matches!(r.status, Status::Retired | Status::Proposed)
}

/// Whether `r`'s interval holds `t`, its expiry aside.
fn in_interval(r: &MemoryRecord, t: Timestamp) -> bool {
    counts(r) && r.valid_from <= t && r.valid_to.is_none_or(|end| t < end)
}

/// Whether `r`'s expiry is at or before `t`.
pub fn expired_at(r: &MemoryRecord, t: Timestamp) -> bool {
    r.expires_at.is_some_and(|e| e <= t)
}

/// Whether `r` is true at `t`: its interval holds `t` and it has not expired by then.
pub fn holds(r: &MemoryRecord, t: Timestamp) -> bool {
    in_interval(r, t) && !expired_at(r, t)
}

/// Whether `r` has a non-empty interval that starts after `t`.
fn starts_after(r: &MemoryRecord, t: Timestamp) -> bool {
    counts(r) && r.valid_from > t && r.valid_to.is_none_or(|end| end > r.valid_from)
}

/// A lineage's value at `t`: of the versions whose interval holds `t`, the one of the highest
/// authority (a claim of lower authority never takes over a higher one's time, docs/design.md
/// §13), then the one that started last, then the highest version; if any.
pub fn value_at(lineage: &[MemoryRecord], t: Timestamp) -> Option<&MemoryRecord> {
    lineage.iter().filter(|r| holds(r, t)).max_by_key(|r| (r.authority, r.valid_from, r.version))
}

/// The version the belief view holds current: the lineage's value once every scheduled change
/// has arrived, expiry aside (the text index and the pipeline's candidates hold it).
pub fn head(lineage: &[MemoryRecord]) -> Option<&MemoryRecord> {
    lineage.iter().filter(|r| in_interval(r, END_OF_TIME)).max_by_key(|r| (r.authority, r.valid_from, r.version))
}

/// Where `r`'s interval ends in its lineage's timeline: its own end, or the start of the next
/// version that takes over from it, whichever is first. An empty interval stays empty.
pub fn timeline_end(r: &MemoryRecord, lineage: &[MemoryRecord]) -> Option<Timestamp> {
    if r.valid_to.is_some_and(|end| end <= r.valid_from) {
        return r.valid_to;
    }
    let next = lineage
        .iter()
        .filter(|m| m.memory_id != r.memory_id && counts(m) && m.valid_from > r.valid_from)
        .filter(|m| m.valid_to.is_none_or(|end| end > m.valid_from))
        .map(|m| m.valid_from)
        .min();
    match (r.valid_to, next) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The status of `r` at `t`, where `value` is its lineage's value at `t`.
pub fn status_at(r: &MemoryRecord, value: Option<MemoryId>, t: Timestamp) -> ReadStatus {
    if r.status == Status::Retired {
        ReadStatus::Retired
    } else if r.status == Status::Proposed {
        ReadStatus::Proposed
    } else if value == Some(r.memory_id) {
        ReadStatus::Active
    } else if starts_after(r, t) {
        ReadStatus::Scheduled
    } else if in_interval(r, t) && expired_at(r, t) {
        ReadStatus::Expired
    } else {
        ReadStatus::Stale
    }
}

/// The versions of a lineage that take effect after `t`, soonest first.
pub fn scheduled_after(lineage: &[MemoryRecord], t: Timestamp) -> Vec<&MemoryRecord> {
    let mut out: Vec<&MemoryRecord> = lineage.iter().filter(|r| starts_after(r, t)).collect();
    out.sort_by(|a, b| a.valid_from.cmp(&b.valid_from).then(a.version.cmp(&b.version)));
    out
}

/// What a read at `t` says of `lineage` (every version, as the belief view holds them), whose
/// newest active version is `head`: its value at `t` (or, when nothing of it holds yet, `head`
/// itself, scheduled), with the versions that take effect after `t` beside it. `None` when
/// nothing of it is true at `t` nor scheduled.
pub(crate) fn in_time(
    reader: Reader<'_>,
    lineage: &[MemoryRecord],
    head: MemoryRecord,
    t: Timestamp,
) -> Result<Option<(MemoryView, Vec<ScheduledChange>)>, EngineError> {
    let value = value_at(lineage, t).map(|v| v.memory_id);
    let shown = match value {
        Some(id) => id,
        None if starts_after_id(lineage, head.memory_id, t) => head.memory_id,
        None => return Ok(None),
    };
    let scheduled = scheduled_after(lineage, t)
        .into_iter()
        .filter(|r| r.memory_id != shown)
        .map(|r| ScheduledChange {
            memory_id: r.memory_id,
            version: r.version,
            text: r.text.clone(),
            valid_from: r.valid_from,
        })
        .collect();
    let record = if shown == head.memory_id {
        head
    } else {
        match lineage.iter().find(|r| r.memory_id == shown) {
            Some(r) => r.clone(),
            None => return Ok(None),
        }
    };
    Ok(Some((reader.view(record, lineage, t)?, scheduled)))
}

fn starts_after_id(lineage: &[MemoryRecord], id: MemoryId, t: Timestamp) -> bool {
    lineage.iter().any(|r| r.memory_id == id && starts_after(r, t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use memledger_schemas::{Hash, MemoryType};

    fn at(s: &str) -> Timestamp {
        Timestamp::parse_rfc3339(s).unwrap()
    }

    fn version(v: u32, from: &str, to: Option<&str>, status: Status) -> MemoryRecord {
        MemoryRecord {
            memory_id: MemoryId::random(),
            root_id: MemoryId::from_bytes([0; 16]),
            version: v,
            status,
            memory_type: MemoryType::Fact,
            scope: "personal".into(),
            text: format!("v{v}"),
            source: None,
            fact_key: None,
            content_hash: Hash([0; 32]),
            asserted_at: at("2026-01-01T00:00:00Z"),
            stale_since: None,
            effective_at: None,
            cause: "added".into(),
            conflicts: Vec::new(),
            merged_count: 0,
            retired_reason: None,
            observed_seq: 1,
            valid_from: at(from),
            valid_to: to.map(at),
            sources: Vec::new(),
            unsourced: true,
            erased: None,
            authority: memledger_schemas::Authority::Stated,
            principal: "owner".into(),
            expires_at: None,
            ttl_seconds: None,
            recorded_at: at("2026-01-01T00:00:00Z"),
        }
    }

    /// Tuesday from June, Thursday scheduled from January: each read time sees its own value.
    #[test]
    fn a_scheduled_version_is_current_only_from_its_time() {
        let lineage = vec![
            version(1, "2026-06-01T00:00:00Z", Some("2027-01-10T00:00:00Z"), Status::Stale),
            version(2, "2027-01-10T00:00:00Z", None, Status::Active),
        ];
        let before = at("2026-12-01T00:00:00Z");
        assert_eq!(value_at(&lineage, before).map(|r| r.version), Some(1));
        assert_eq!(status_at(&lineage[1], Some(lineage[0].memory_id), before), ReadStatus::Scheduled);
        assert_eq!(scheduled_after(&lineage, before).len(), 1);
        let after = at("2027-01-10T00:00:00Z");
        assert_eq!(value_at(&lineage, after).map(|r| r.version), Some(2));
        assert_eq!(status_at(&lineage[0], Some(lineage[1].memory_id), after), ReadStatus::Stale);
        assert!(scheduled_after(&lineage, after).is_empty());
        assert_eq!(value_at(&lineage, at("2026-01-01T00:00:00Z")), None);
        assert_eq!(value_at(&lineage, END_OF_TIME).map(|r| r.version), Some(2));
    }

    /// An empty interval (withdrawn) is never current nor scheduled; a retired version neither.
    #[test]
    fn withdrawn_and_retired_versions_are_never_current() {
        let withdrawn = version(2, "2026-06-01T00:00:00Z", Some("2026-06-01T00:00:00Z"), Status::Stale);
        let retired = version(3, "2026-07-01T00:00:00Z", None, Status::Retired);
        let lineage = vec![withdrawn, retired];
        for t in ["2026-05-01T00:00:00Z", "2026-06-01T00:00:00Z", "2026-08-01T00:00:00Z"] {
            assert_eq!(value_at(&lineage, at(t)), None, "{t}");
            assert!(scheduled_after(&lineage, at(t)).is_empty(), "{t}");
        }
        assert_eq!(status_at(&lineage[1], None, at("2026-05-01T00:00:00Z")), ReadStatus::Retired);
    }
}
