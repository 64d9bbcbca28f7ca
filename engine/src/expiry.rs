//! Expiry (docs/adr/0038-expiry.md): a memory that stops being true at a time the caller gives
//! ("I'm on call this week", `--ttl 7d`; "the freeze lasts until the 15th", `--expires-at`).
//! A save or an update says what happens to the expiry; the observation records the instant
//! (and the time to live it came from), and reads decide `expired` from the time they ask about
//! (engine/src/validity.rs), so nothing is written when the time comes.

use memledger_schemas::Timestamp;

use crate::error::{BadInput, EngineError};

/// Longest time to live: a hundred years (longer is no expiry).
const MAX_TTL_SECONDS: u64 = 100 * 365 * 86_400;

/// What a save or an update says of the expiry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExpiryChange {
    /// Nothing: a new memory does not expire; a restatement or an edit keeps the expiry of the
    /// version it restates.
    #[default]
    Keep,
    /// The memory no longer expires (`--no-expiry`).
    Clear,
    /// It expires at `at`; `ttl_seconds` when it was given as a time to live.
    At { at: Timestamp, ttl_seconds: Option<u64> },
}

impl ExpiryChange {
    /// The expiry a caller gave: an instant (`expires_at`, RFC 3339), a time to live from `now`
    /// (`ttl`: `90s`, `30m`, `12h`, `14d`, `2w`), both (the instant, and the time to live a
    /// refresh renews it by), or `clear`. A time to live alone expires at `now` plus it.
    pub fn of(
        expires_at: Option<&str>,
        ttl: Option<&str>,
        clear: bool,
        now: Timestamp,
    ) -> Result<ExpiryChange, EngineError> {
        let ttl_seconds = ttl.map(parse_ttl).transpose()?;
        let at = expires_at
            .map(|s| Timestamp::parse_rfc3339(s).map_err(|_| BadInput::ExpiresAt(s.trim().to_string())))
            .transpose()?;
        match (at, ttl_seconds, clear) {
            (None, None, false) => Ok(ExpiryChange::Keep),
            (None, None, true) => Ok(ExpiryChange::Clear),
            (_, _, true) => Err(BadInput::ExpiryAndNoExpiry.into()),
            (Some(at), ttl_seconds, false) => Ok(ExpiryChange::At { at, ttl_seconds }),
            (None, Some(ttl), false) => Ok(ExpiryChange::At { at: after(now, ttl), ttl_seconds: Some(ttl) }),
        }
    }

    /// What this says of `held` (an expiry and its time to live) at `now`: an expiry said
    /// nothing of stays, unless it has passed — a claim said again after its expiry holds anew,
    /// for its time to live again if it had one, else with no end.
    pub fn against(self, held: (Option<Timestamp>, Option<u64>), now: Timestamp) -> ExpiryChange {
        match (self, held) {
            (ExpiryChange::Keep, (Some(at), ttl)) if at <= now => match ttl {
                Some(ttl) => ExpiryChange::At { at: after(now, ttl), ttl_seconds: Some(ttl) },
                None => ExpiryChange::Clear,
            },
            _ => self,
        }
    }

    /// The expiry a new version carries, given the one of the version it restates (`held`,
    /// with its time to live).
    pub fn applied_to(self, held: (Option<Timestamp>, Option<u64>)) -> (Option<Timestamp>, Option<u64>) {
        match self {
            ExpiryChange::Keep => held,
            ExpiryChange::Clear => (None, None),
            ExpiryChange::At { at, ttl_seconds } => (Some(at), ttl_seconds),
        }
    }

    /// The expiry of a memory that restates nothing.
    pub fn of_new(self) -> (Option<Timestamp>, Option<u64>) {
        self.applied_to((None, None))
    }

    /// Whether this change gives `held` another expiry than it has.
    pub fn changes(self, held: Option<Timestamp>) -> bool {
        match self {
            ExpiryChange::Keep => false,
            ExpiryChange::Clear => held.is_some(),
            ExpiryChange::At { at, .. } => held != Some(at),
        }
    }
}

/// `seconds` after `now`.
fn after(now: Timestamp, seconds: u64) -> Timestamp {
    Timestamp(now.0.saturating_add(seconds as i64 * 1_000_000))
}

/// A time to live: a positive number with `s`, `m`, `h`, `d` or `w` (a bare number is seconds),
/// in whole seconds.
pub fn parse_ttl(text: &str) -> Result<u64, EngineError> {
    let bad = || EngineError::from(BadInput::Ttl(text.trim().to_string()));
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number.parse().map_err(|_| bad())?;
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        "w" => 7.0 * 86_400.0,
        _ => return Err(bad()),
    };
    let seconds = (n * scale).round();
    if !(seconds >= 1.0 && seconds <= MAX_TTL_SECONDS as f64) {
        return Err(bad());
    }
    Ok(seconds as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_to_live_in_their_units() {
        for (text, seconds) in
            [("90", 90), ("90s", 90), ("30m", 1800), ("1.5h", 5400), ("14d", 1_209_600), ("2w", 1_209_600)]
        {
            assert_eq!(parse_ttl(text).unwrap(), seconds, "{text}");
        }
        for text in ["", "0", "0s", "-1d", "d", "14 days", "1e9w", "0.1s"] {
            assert!(parse_ttl(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn a_ttl_alone_expires_from_now_and_an_instant_wins_over_it() {
        let now = Timestamp::parse_rfc3339("2026-12-01T00:00:00Z").unwrap();
        let week = ExpiryChange::of(None, Some("7d"), false, now).unwrap();
        let at = Timestamp::parse_rfc3339("2026-12-08T00:00:00Z").unwrap();
        assert_eq!(week, ExpiryChange::At { at, ttl_seconds: Some(604_800) });
        let given = ExpiryChange::of(Some("2026-12-15T00:00:00Z"), Some("7d"), false, now).unwrap();
        assert!(matches!(given, ExpiryChange::At { ttl_seconds: Some(604_800), .. }));
        assert_eq!(ExpiryChange::of(None, None, false, now).unwrap(), ExpiryChange::Keep);
        assert_eq!(ExpiryChange::of(None, None, true, now).unwrap(), ExpiryChange::Clear);
        assert!(ExpiryChange::of(None, Some("7d"), true, now).is_err());
        assert!(ExpiryChange::of(Some("next week"), None, false, now).is_err());
    }

    #[test]
    fn keep_carries_the_held_expiry_and_clear_drops_it() {
        let at = Timestamp(5);
        assert_eq!(ExpiryChange::Keep.applied_to((Some(at), Some(3))), (Some(at), Some(3)));
        assert_eq!(ExpiryChange::Clear.applied_to((Some(at), Some(3))), (None, None));
        assert!(ExpiryChange::Clear.changes(Some(at)) && !ExpiryChange::Clear.changes(None));
        assert!(!ExpiryChange::At { at, ttl_seconds: None }.changes(Some(at)));
    }

    #[test]
    fn a_claim_said_again_after_its_expiry_holds_anew() {
        let now = Timestamp(10_000_000);
        // Passed, with a time to live: renewed by it from now; without one: no end.
        let renewed = ExpiryChange::Keep.against((Some(Timestamp(5)), Some(3)), now);
        assert_eq!(renewed, ExpiryChange::At { at: Timestamp(13_000_000), ttl_seconds: Some(3) });
        assert_eq!(ExpiryChange::Keep.against((Some(Timestamp(5)), None), now), ExpiryChange::Clear);
        // Not passed, or said: as it is.
        let later = (Some(Timestamp(20_000_000)), None);
        assert_eq!(ExpiryChange::Keep.against(later, now), ExpiryChange::Keep);
        assert_eq!(ExpiryChange::Clear.against((Some(Timestamp(5)), None), now), ExpiryChange::Clear);
    }
}
