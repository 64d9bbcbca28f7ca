//! UTC timestamps with microsecond precision.
//!
//! Stored as microseconds since the Unix epoch (compact and exact in the binary codec) and shown
//! as RFC 3339 with six fractional digits, so that a JSON export round-trips to the same bytes.

use std::fmt;

use bincode::{Decode, Encode};
use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time, UTC, microsecond precision.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode)]
pub struct Timestamp(pub i64);

/// A time string that is not RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an RFC 3339 time: {input:?} (example: 2026-07-10T09:12:00Z)")]
pub struct TimeParseError {
    pub input: String,
}

impl Timestamp {
    /// The current time: the ledger's append path, and the CLI for the valid time a read asks
    /// about when it names none. Replay and the engine's reads never read the clock.
    pub fn now() -> Self {
        Self(Utc::now().timestamp_micros())
    }

    pub fn from_micros(micros: i64) -> Self {
        Self(micros)
    }

    pub fn micros(self) -> i64 {
        self.0
    }

    /// Parse RFC 3339 with any offset; sub-microsecond digits are truncated.
    pub fn parse_rfc3339(s: &str) -> Result<Self, TimeParseError> {
        DateTime::parse_from_rfc3339(s.trim())
            .map(|t| Self(t.with_timezone(&Utc).timestamp_micros()))
            .map_err(|_| TimeParseError { input: s.to_string() })
    }

    /// RFC 3339, UTC, six fractional digits: the exact, lossless text form.
    pub fn to_rfc3339(self) -> String {
        match Utc.timestamp_micros(self.0).single() {
            Some(t) => t.to_rfc3339_opts(SecondsFormat::Micros, true),
            None => format!("@{}us", self.0),
        }
    }

    /// RFC 3339 to the second, for people.
    pub fn to_human(self) -> String {
        match Utc.timestamp_micros(self.0).single() {
            Some(t) => t.to_rfc3339_opts(SecondsFormat::Secs, true),
            None => format!("@{}us", self.0),
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({})", self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Self::parse_rfc3339(&s).map_err(serde::de::Error::custom)
    }
}

/// RFC 3339 in UTC to the microsecond, as serialised.
impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trip_is_exact() {
        let t = Timestamp::parse_rfc3339("2026-07-10T11:12:00.123456+02:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-07-10T09:12:00.123456Z");
        assert_eq!(Timestamp::parse_rfc3339(&t.to_rfc3339()).unwrap(), t);
        assert!(Timestamp::parse_rfc3339("yesterday").is_err());
        assert!(Timestamp::parse_rfc3339("2026-13-01T00:00:00Z").is_err());
    }
}
