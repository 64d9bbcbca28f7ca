//! The one codec: bincode 2, pinned exactly (`=2.0.1`), used nowhere else in the workspace.
//!
//! bincode is unmaintained upstream, so everything that depends on its byte layout goes through
//! this module and is pinned by golden fixtures (`schemas/tests/fixtures/`). A stored event is
//! `format (u16, big-endian) ‖ bincode(Event)`: the prefix lets a future format be upcast on read.

use bincode::config::{BigEndian, Configuration, Fixint, Limit};
use bincode::{Decode, Encode};

use crate::chain::{Hash, chain_hash, chain_hash_parts};
use crate::event::{Event, EventBody};
use crate::ids::{CorrelationId, EventId};
use crate::time::Timestamp;

/// The format new events are written in.
pub const CURRENT_FORMAT: u16 = 1;
/// Formats this build can read.
pub const READABLE_FORMATS: &[u16] = &[1];
/// No single record may claim more than this when decoding: bounds allocation on bad bytes.
pub const MAX_RECORD_BYTES: usize = 16 * 1024 * 1024;

type Config = Configuration<BigEndian, Fixint, Limit<MAX_RECORD_BYTES>>;

/// Format 1's bincode configuration: big-endian, fixed-width integers, bounded decode.
/// Frozen with format 1.
const CONFIG: Config =
    bincode::config::standard().with_big_endian().with_fixed_int_encoding().with_limit::<MAX_RECORD_BYTES>();

/// Bytes that are not a valid record.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("record is truncated: {len} bytes")]
    Truncated { len: usize },
    #[error("unknown format version {0} (this build reads {READABLE_FORMATS:?})")]
    UnknownFormat(u16),
    #[error("undecodable record: {0}")]
    Decode(String),
    #[error("{trailing} trailing bytes after the record")]
    Trailing { trailing: usize },
    #[error("cannot encode record: {0}")]
    Encode(String),
}

/// Encode any view or ledger record.
pub fn encode<T: Encode>(value: &T) -> Vec<u8> {
    // Encoding into a Vec cannot fail for our types (no I/O, lengths fit u64).
    bincode::encode_to_vec(value, CONFIG).unwrap_or_default()
}

/// Decode a record that must fill `bytes` exactly.
pub fn decode<T: Decode<()>>(bytes: &[u8]) -> Result<T, CodecError> {
    let (value, used) = bincode::decode_from_slice(bytes, CONFIG).map_err(|e| CodecError::Decode(e.to_string()))?;
    if used != bytes.len() {
        return Err(CodecError::Trailing { trailing: bytes.len() - used });
    }
    Ok(value)
}

/// The stored form of an event: `format ‖ bincode(event)`.
pub fn encode_event(event: &Event) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&event.format.to_be_bytes());
    out.extend_from_slice(&encode(event));
    out
}

/// The format prefix of a stored event.
fn format_of(bytes: &[u8]) -> Result<u16, CodecError> {
    match bytes {
        [a, b, ..] => Ok(u16::from_be_bytes([*a, *b])),
        _ => Err(CodecError::Truncated { len: bytes.len() }),
    }
}

/// Decode a stored event, upcasting older formats to the current in-memory form.
pub fn decode_event(bytes: &[u8]) -> Result<Event, CodecError> {
    let format = format_of(bytes)?;
    match format {
        1 => {
            let event: Event = decode(&bytes[2..])?;
            if event.format != format {
                return Err(CodecError::Decode(format!(
                    "format prefix {format} disagrees with the event's format {}",
                    event.format
                )));
            }
            Ok(event)
        }
        other => Err(CodecError::UnknownFormat(other)),
    }
}

/// The seq and body type ([`EventBody::TYPE_NAMES`]) of a stored event, read without decoding
/// its body: a replay of views that ignore some types of event skips decoding those.
///
/// The stored form is `format ‖ fields before hash ‖ hash ‖ body`, and bincode writes an enum
/// as its variant index (a `u32`, here fixed-width big-endian) before the variant's fields.
pub fn peek_event(bytes: &[u8]) -> Result<(u64, &'static str), CodecError> {
    let format = format_of(bytes)?;
    if !READABLE_FORMATS.contains(&format) {
        return Err(CodecError::UnknownFormat(format));
    }
    // The owned form of `before_hash`'s fields (same order, same encodings).
    type BeforeHash = (u64, EventId, u16, Timestamp, String, CorrelationId, Option<u64>, Option<String>, Hash);
    let (header, used): (BeforeHash, usize) =
        bincode::decode_from_slice(&bytes[2..], CONFIG).map_err(|e| CodecError::Decode(e.to_string()))?;
    let at = 2 + used + 32;
    let index = bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(CodecError::Truncated { len: bytes.len() })?;
    let name = EventBody::TYPE_NAMES
        .get(index as usize)
        .ok_or_else(|| CodecError::Decode(format!("unknown event type index {index}")))?;
    Ok((header.0, name))
}

/// Set `event.hash` from its other fields and return its stored form, encoding the event once.
///
/// bincode encodes a struct (and a tuple) as its fields' encodings one after another, so the
/// stored form `format ‖ fields before hash ‖ hash ‖ body` holds the hashed bytes
/// ([`hashed_bytes`]) around a 32-byte gap: encode with the gap, hash the two sides, fill it in.
/// Byte for byte what [`encode_event`] writes after [`Event::seal`] (tested).
pub fn seal_and_encode(event: &mut Event) -> Vec<u8> {
    let mut out = Vec::with_capacity(512 + event.actor.len());
    seal_and_encode_into(event, &mut out);
    out
}

/// As [`seal_and_encode`], appending the stored form to `out` (a write batch's buffer).
pub fn seal_and_encode_into(event: &mut Event, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&event.format.to_be_bytes());
    encode_into(&before_hash(event), out);
    let gap = out.len();
    out.extend_from_slice(&[0u8; 32]);
    encode_into(&event.body, out);
    let hash = chain_hash_parts(&event.prev_hash, &[&out[start + 2..gap], &out[gap + 32..]]);
    out[gap..gap + 32].copy_from_slice(&hash.0);
    event.hash = hash;
}

/// Every field of an event declared before `hash`, in declaration order.
#[allow(clippy::type_complexity)]
fn before_hash(
    e: &Event,
) -> (u64, EventId, u16, Timestamp, &String, CorrelationId, Option<u64>, &Option<String>, Hash) {
    (
        e.seq,
        e.event_id,
        e.format,
        e.recorded_at,
        &e.actor,
        e.correlation_id,
        e.causation,
        &e.idempotency_key,
        e.prev_hash,
    )
}

/// Append the encoding of `value` to `out`.
fn encode_into<T: Encode>(value: &T, out: &mut Vec<u8>) {
    // Encoding into a Vec cannot fail for our types (no I/O, lengths fit u64).
    let _ = bincode::encode_into_writer(value, AppendTo(out), CONFIG);
}

/// bincode's writer for appending to a `Vec`: each field is one `extend_from_slice` (its
/// `std::io::Write` adapter costs more per field, and an event has dozens of fields).
struct AppendTo<'a>(&'a mut Vec<u8>);

impl bincode::enc::write::Writer for AppendTo<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), bincode::error::EncodeError> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }
}

/// The bytes the hash covers: every field of the event except `hash`, in declaration order.
/// (bincode encodes a tuple as its members' encodings one after another.)
pub fn hashed_bytes(event: &Event) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + event.actor.len());
    encode_into(&before_hash(event), &mut out);
    encode_into(&event.body, &mut out);
    out
}

/// The hash this event should carry, given its `prev_hash` field.
pub fn compute_hash(event: &Event) -> Hash {
    chain_hash(&event.prev_hash, &hashed_bytes(event))
}

impl Event {
    /// Set `hash` from the other fields.
    pub fn seal(&mut self) {
        self.hash = compute_hash(self);
    }

    /// Whether `hash` matches the other fields.
    pub fn hash_is_valid(&self) -> bool {
        self.hash == compute_hash(self)
    }
}
