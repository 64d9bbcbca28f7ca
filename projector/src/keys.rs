//! Key building for view tables: a one-byte kind tag, then fixed-width big-endian parts.

/// The reserved key of a view's checkpoint. Every data key starts with an ASCII letter.
pub const CHECKPOINT_KEY: &[u8] = b"\x00checkpoint";

/// Concatenate key parts.
pub fn key(tag: u8, parts: &[&[u8]]) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + parts.iter().map(|p| p.len()).sum::<usize>());
    k.push(tag);
    for p in parts {
        k.extend_from_slice(p);
    }
    k
}

/// An 8-byte digest of a string (scope, fact key), for fixed-width keys.
pub fn digest8(s: &str) -> [u8; 8] {
    let h = blake3::hash(s.as_bytes());
    let mut out = [0u8; 8];
    out.copy_from_slice(&h.as_bytes()[..8]);
    out
}
