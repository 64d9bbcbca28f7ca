//! The hash chain: `hash = blake3(prev_hash ‖ encoded event)`, keyed by a domain-separation
//! context so that a memledger hash can never be confused with any other blake3 digest.

use std::fmt;

use bincode::{Decode, Encode};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The blake3 `derive_key` context of the event chain. Frozen: changing it breaks every store.
pub const CHAIN_CONTEXT: &str = "memledger 2026-11-30 event chain v1";
/// The context of content hashes (exact-duplicate detection).
pub const CONTENT_CONTEXT: &str = "memledger 2026-11-30 memory content v1";
/// The context of a text's commitment: what a format-3 event's hash covers in place of a text
/// an erasure may remove.
pub const TEXT_CONTEXT: &str = "memledger 2026-12-01 erasable text v1";

/// A 32-byte blake3 digest.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Encode, Decode)]
pub struct Hash(pub [u8; 32]);

impl Hash {
    /// The `prev_hash` of the first event.
    pub const GENESIS: Hash = Hash([0u8; 32]);

    pub fn hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }

    pub fn parse_hex(s: &str) -> Option<Hash> {
        if s.len() != 64 || !s.is_ascii() {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Hash(out))
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", &self.hex()[..16])
    }
}

impl Serialize for Hash {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.hex())
    }
}

impl<'de> Deserialize<'de> for Hash {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Hash::parse_hex(&s).ok_or_else(|| serde::de::Error::custom(format!("not a 64-digit hex hash: {s:?}")))
    }
}

/// 64 lowercase hex digits, as serialised.
impl schemars::JsonSchema for Hash {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Hash".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "pattern": "^[0-9a-f]{64}$" })
    }
}

/// `blake3_derive_key(CHAIN_CONTEXT, prev_hash ‖ encoded)`, where `encoded` is the codec's
/// encoding of every field of the event except the hash itself.
pub fn chain_hash(prev_hash: &Hash, encoded: &[u8]) -> Hash {
    chain_hash_parts(prev_hash, &[encoded])
}

/// [`chain_hash`] of `encoded` given in consecutive parts.
pub fn chain_hash_parts(prev_hash: &Hash, parts: &[&[u8]]) -> Hash {
    // Keying the hasher hashes the context string: do it once, copy the keyed state per event.
    static KEYED: std::sync::LazyLock<blake3::Hasher> =
        std::sync::LazyLock::new(|| blake3::Hasher::new_derive_key(CHAIN_CONTEXT));
    let mut hasher = KEYED.clone();
    hasher.update(&prev_hash.0);
    for part in parts {
        hasher.update(part);
    }
    Hash(*hasher.finalize().as_bytes())
}

/// The content hash of a memory's text: exact duplicates share it.
pub fn content_hash(text: &str) -> Hash {
    let mut hasher = blake3::Hasher::new_derive_key(CONTENT_CONTEXT);
    hasher.update(text.as_bytes());
    Hash(*hasher.finalize().as_bytes())
}

/// What a format-3 event's hash covers in place of `text` (`codec.rs`), so that the text can be
/// erased and the hash still checked.
pub fn text_commitment(text: &str) -> Hash {
    static KEYED: std::sync::LazyLock<blake3::Hasher> =
        std::sync::LazyLock::new(|| blake3::Hasher::new_derive_key(TEXT_CONTEXT));
    let mut hasher = KEYED.clone();
    hasher.update(text.as_bytes());
    Hash(*hasher.finalize().as_bytes())
}
