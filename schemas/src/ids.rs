//! 128-bit random identifiers, printed as 32 lowercase hex digits.
//!
//! Ids are random rather than sequential so that any 6-character prefix is very likely unique
//! and so that two stores never mint the same id (an exported stream can be imported anywhere).

use std::fmt;
use std::str::FromStr;

use bincode::{Decode, Encode};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An id string that is not 32 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an id: {0:?} (expected 32 hex digits)")]
pub struct IdParseError(pub String);

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode)]
        pub struct $name(pub u128);

        impl $name {
            /// A fresh random id.
            pub fn random() -> Self {
                Self(rand::random::<u128>())
            }
            /// Big-endian bytes: byte order equals numeric order, so ids sort the same as keys.
            pub fn to_bytes(self) -> [u8; 16] {
                self.0.to_be_bytes()
            }
            pub fn from_bytes(bytes: [u8; 16]) -> Self {
                Self(u128::from_be_bytes(bytes))
            }
            /// The full 32-digit hex form.
            pub fn hex(self) -> String {
                format!("{:032x}", self.0)
            }
            /// The first `n` hex digits, for human output.
            pub fn short(self) -> String {
                let mut s = self.hex();
                s.truncate(12);
                s
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:032x}", self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:032x})", stringify!($name), self.0)
            }
        }

        impl FromStr for $name {
            type Err = IdParseError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(IdParseError(s.to_string()));
                }
                u128::from_str_radix(s, 16).map(Self).map_err(|_| IdParseError(s.to_string()))
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.hex())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = String::deserialize(deserializer)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        /// 32 lowercase hex digits, as serialised.
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "pattern": "^[0-9a-f]{32}$" })
            }
        }
    };
}

id_type!(
    /// One observed memory (one version of a belief). The root id of a lineage is the id of its
    /// first version.
    MemoryId
);
id_type!(
    /// One conflict record.
    ConflictId
);
id_type!(
    /// One event, unique across stores.
    EventId
);
id_type!(
    /// Shared by all events that one command appended.
    CorrelationId
);

/// Whether `s` could be an id prefix typed by a person: hex digits only, 1 to 32 of them.
pub fn is_hex_prefix(s: &str) -> bool {
    !s.is_empty() && s.len() <= 32 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_order() {
        let a = MemoryId(1);
        let b = MemoryId(u128::MAX - 3);
        assert_eq!(a.hex().parse::<MemoryId>().unwrap(), a);
        assert_eq!(b.to_string().parse::<MemoryId>().unwrap(), b);
        assert!(a.to_bytes() < b.to_bytes());
        assert!("xyz".parse::<MemoryId>().is_err());
        assert!(is_hex_prefix("abc123"));
        assert!(!is_hex_prefix("abc12g"));
    }
}
