//! As-of reads: the answer as it stood at a ledger seq or a time, built from the ledger prefix
//! (jj's `--at-op` is the model). [`AsOf`] names the point and [`seq_as_of`] finds its seq; the
//! prefix is replayed into a scratch store that lives as long as the `Snapshot` made of it
//! (`Memledger::as_of`), and the live store is never touched. [`valid_time`] is the valid time
//! such a read asks about when it names none.

use std::str::FromStr;

use memledger_ledger::Ledger;
use memledger_schemas::Timestamp;

use crate::error::{BadInput, EngineError};

/// A point in the ledger's past.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsOf {
    /// After the event with this seq (0: before anything).
    Seq(u64),
    /// After the last event recorded at or before this time.
    Time(Timestamp),
}

impl FromStr for AsOf {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            return s.parse().map(AsOf::Seq).map_err(|_| BadInput::AsOfSeqTooLarge(s.to_string()).into());
        }
        Timestamp::parse_rfc3339(s).map(AsOf::Time).map_err(|_| BadInput::AsOf(s.to_string()).into())
    }
}

/// The seq a point in `ledger`'s past names.
pub fn seq_as_of(ledger: &Ledger, point: AsOf) -> Result<u64, EngineError> {
    let head = ledger.head().seq;
    match point {
        AsOf::Seq(seq) => Ok(seq.min(head)),
        AsOf::Time(t) => {
            // recorded_at never decreases along the ledger: binary search for the last event
            // recorded at or before `t`.
            let (mut lo, mut hi) = (0u64, head);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                let at = ledger.get(mid)?.map(|e| e.recorded_at);
                if at.is_some_and(|at| at <= t) { lo = mid } else { hi = mid - 1 }
            }
            Ok(lo)
        }
    }
}

/// The valid time a read asks about: `valid_at` when given; else, for an as-of read, the time of
/// that point (the answer a read then would have given); else `clock`, the caller's clock (the
/// engine never reads one).
pub fn valid_time(
    ledger: &Ledger,
    point: Option<AsOf>,
    valid_at: Option<Timestamp>,
    clock: Timestamp,
) -> Result<Timestamp, EngineError> {
    if let Some(t) = valid_at {
        return Ok(t);
    }
    match point {
        None => Ok(clock),
        Some(AsOf::Time(t)) => Ok(t),
        Some(seq @ AsOf::Seq(_)) => {
            let seq = seq_as_of(ledger, seq)?;
            Ok(ledger.get(seq)?.map_or(clock, |e| e.recorded_at))
        }
    }
}
