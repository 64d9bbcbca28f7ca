//! As-of reads: the answer as it stood at a ledger seq or a time, built from the ledger prefix
//! (jj's `--at-op` is the model). The prefix is replayed into a scratch store that lives as long
//! as the [`Snapshot`]; the live store is never touched.

use std::ops::Deref;
use std::path::PathBuf;
use std::str::FromStr;

use memledger_ledger::{OpenOptions, Stream};
use memledger_schemas::{MemoryId, Timestamp};

use crate::error::EngineError;
use crate::memledger::Memledger;

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
            return s
                .parse()
                .map(AsOf::Seq)
                .map_err(|_| EngineError::BadInput(format!("--as-of: seq {s} is too large")));
        }
        Timestamp::parse_rfc3339(s)
            .map(AsOf::Time)
            .map_err(|_| EngineError::BadInput(format!("--as-of takes a ledger seq or an RFC 3339 time, not {s:?}")))
    }
}

/// A read-only view of the store as of a point: either the live store (the point is the head)
/// or a scratch replay of the prefix, removed when dropped.
pub enum Snapshot<'a> {
    Live(&'a Memledger),
    Past { ml: Box<Memledger>, dir: PathBuf, seq: u64 },
}

impl Snapshot<'_> {
    /// The last seq this snapshot includes.
    pub fn seq(&self) -> u64 {
        match self {
            Snapshot::Live(ml) => ml.ledger().head().seq,
            Snapshot::Past { seq, .. } => *seq,
        }
    }
}

impl Deref for Snapshot<'_> {
    type Target = Memledger;
    fn deref(&self) -> &Memledger {
        match self {
            Snapshot::Live(ml) => ml,
            Snapshot::Past { ml, .. } => ml,
        }
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        if let Snapshot::Past { dir, .. } = self {
            let _ = std::fs::remove_dir_all(&*dir);
        }
    }
}

impl Memledger {
    /// The seq a point in the past names.
    pub fn seq_as_of(&self, point: AsOf) -> Result<u64, EngineError> {
        let head = self.ledger.head().seq;
        match point {
            AsOf::Seq(seq) => Ok(seq.min(head)),
            AsOf::Time(t) => {
                // recorded_at never decreases along the ledger: binary search for the last event
                // recorded at or before `t`.
                let (mut lo, mut hi) = (0u64, head);
                while lo < hi {
                    let mid = lo + (hi - lo).div_ceil(2);
                    let at = self.ledger.get(mid)?.map(|e| e.recorded_at);
                    if at.is_some_and(|at| at <= t) { lo = mid } else { hi = mid - 1 }
                }
                Ok(lo)
            }
        }
    }

    /// The store as it stood at `point`, or the live store when `point` is `None` or the head.
    pub fn as_of(&self, point: Option<AsOf>) -> Result<Snapshot<'_>, EngineError> {
        let Some(point) = point else { return Ok(Snapshot::Live(self)) };
        let seq = self.seq_as_of(point)?;
        if seq == self.ledger.head().seq {
            return Ok(Snapshot::Live(self));
        }
        let dir = std::env::temp_dir().join(format!("memledger-as-of-{}", MemoryId::random().hex()));
        let build = || -> Result<Memledger, EngineError> {
            let events = self.ledger.range(memledger_ledger::SeqRange { first: 1, last: seq })?;
            let past = Memledger::open_with(&dir, &OpenOptions::default(), self.config.clone())?;
            if !events.is_empty() {
                past.import_stream(Stream::from_events(events)?)?;
            }
            // Recall there fuses cosine ranking too: lend it the vectors this store has.
            self.lend_vectors(&past)?;
            Ok(past)
        };
        match build() {
            Ok(ml) => Ok(Snapshot::Past { ml: Box::new(ml), dir, seq }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }
}
