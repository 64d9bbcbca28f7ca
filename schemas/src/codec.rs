//! The one codec: bincode 2, pinned exactly (`=2.0.1`), used nowhere else in the workspace.
//!
//! bincode is unmaintained upstream, so everything that depends on its byte layout goes through
//! this module and is pinned by golden fixtures (`schemas/tests/fixtures/`). A stored event is
//! `format (u16, big-endian) ‖ bincode(Event)`: the prefix lets a later format be read beside an
//! earlier one. Each event is written, hashed and read back in its own format, so a ledger may
//! hold events of several formats and its chain still verifies.
//!
//! - **Format 1**: `bincode(Event)`, every field as derived.
//! - **Format 2**: the same, except in a `pair_classified` body: the `gate` and the name of each
//!   score and threshold are written as a one-byte code from [`NAMES_V2`] (0: the name follows as
//!   a string). Those names were most of a classification's bytes, and a save records about five
//!   classifications (docs/adr/0013-event-format-2.md).
//! - **Format 3**: stored as format 2; the hash covers each of the body's texts
//!   ([`EventBody::texts_mut`]) as its commitment ([`crate::chain::text_commitment`]) instead of
//!   the text: the body with its texts blank, then the commitments. An erasure blanks the texts
//!   and keeps the commitments, and the hash still checks (docs/adr/0017-erasure.md).
//! - **Format 4**: stored and hashed as format 3; its vocabulary adds the `merge_proposed`
//!   event, the `co_enrichment` pair outcome and the `co_enriches` edge
//!   ([`EventBody::needs_format`]; docs/adr/0021-co-enrichments.md).
//! - **Format 5**: as format 4, and the envelope holds the authenticated `principal` after the
//!   fields before it (`prev_hash` last), hashed with them; `memory_observed` ends with its
//!   `evidence` and `conflict_opened` with its `kind` and `needs_authority`; names are coded
//!   from [`NAMES_V2`] followed by [`NAMES_ADDED_V5`]; its vocabulary adds the principal,
//!   proposal and transcript events, the `proposed` pair outcome, the `announced_change` cause
//!   and the `accepted`/`rejected` effects (docs/adr/0029-principals-and-authority.md).
//! - **Format 6**: as format 5, and `memory_observed` ends with its `expires_at` and
//!   `ttl_seconds` (docs/adr/0038-expiry.md).
//! - **Format 7**: as format 6; its vocabulary adds the `head_accepted` event (a store taken
//!   against its witness, docs/adr/0036-signed-checkpoints.md).
//!
//! An erased event of any format is stored with an [`Erased`] record after its body; one of
//! format 1 or 2 keeps its hash, which no longer can be recomputed (only its links are checked).

use bincode::config::{BigEndian, Configuration, Fixint, Limit};
use bincode::de::Decoder;
use bincode::enc::Encoder;
use bincode::error::{DecodeError, EncodeError};
use bincode::{Decode, Encode};

use crate::chain::{Hash, chain_hash, chain_hash_parts, text_commitment};
use crate::event::{
    ConflictOpened, ConflictSide, Erased, Event, EventBody, Evidence, MemoryObserved, ModelVerdict, PairClassified,
};
use crate::ids::{ConflictId, CorrelationId, EventId, MemoryId};
use crate::kinds::{Authority, ConflictKind, MemoryType, Method, PairOutcome, Relation};
use crate::name::Name;
use crate::time::Timestamp;

/// The format new events are written in.
pub const CURRENT_FORMAT: u16 = 7;
/// Formats this build can read (and write, for an imported event that carries one).
pub const READABLE_FORMATS: &[u16] = &[1, 2, 3, 4, 5, 6, 7];
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

/// The stored form of an event, in the event's own format: `format ‖ fields before hash ‖ hash
/// ‖ body`, then `Erased` when it was erased (bincode encodes a struct as its fields one after
/// another).
pub fn encode_event(event: &Event) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&event.format.to_be_bytes());
    encode_envelope_into(event, &mut out);
    out.extend_from_slice(&event.hash.0);
    encode_body_into(event.format, &event.body, &mut out);
    if let Some(erased) = &event.erased {
        encode_into(erased, &mut out);
    }
    out
}

/// The format prefix of a stored event.
fn format_of(bytes: &[u8]) -> Result<u16, CodecError> {
    match bytes {
        [a, b, ..] => Ok(u16::from_be_bytes([*a, *b])),
        _ => Err(CodecError::Truncated { len: bytes.len() }),
    }
}

/// Decode a stored event of any readable format into the one in-memory form.
pub fn decode_event(bytes: &[u8]) -> Result<Event, CodecError> {
    let format = format_of(bytes)?;
    if !READABLE_FORMATS.contains(&format) {
        return Err(CodecError::UnknownFormat(format));
    }
    let (
        (seq, event_id, stated, recorded_at, actor, correlation_id, causation, idempotency_key, prev_hash),
        principal,
        hash,
        at,
    ) = decode_envelope(format, &bytes[2..])?;
    if stated != format {
        return Err(CodecError::Decode(format!("format prefix {format} disagrees with the event's format {stated}")));
    }
    let body_bytes = &bytes[2 + at..];
    let (body, used) = decode_body(format, body_bytes)?;
    if body.needs_format() > format {
        let (kind, needs) = (body.type_name(), body.needs_format());
        return Err(CodecError::Decode(format!(
            "a {kind} body of format {format} holds what format {needs} introduced"
        )));
    }
    let rest = &body_bytes[used..];
    let erased = if rest.is_empty() { None } else { Some(decode::<Erased>(rest)?) };
    let event = Event {
        seq,
        event_id,
        format,
        recorded_at,
        actor,
        correlation_id,
        causation,
        idempotency_key,
        prev_hash,
        principal,
        hash,
        erased,
        body,
    };
    check_erased(&event)?;
    Ok(event)
}

/// An erased event's texts are blank and, in format 3, each has its commitment: every event has
/// one stored form.
fn check_erased(event: &Event) -> Result<(), CodecError> {
    let Some(erased) = &event.erased else { return Ok(()) };
    let mut body = event.body.clone();
    let texts = body.texts_mut();
    if texts.iter().any(|t| !t.is_empty()) {
        return Err(CodecError::Decode("an erased event still holds text".into()));
    }
    let want = if event.format >= 3 { texts.len() } else { 0 };
    if erased.commitments.len() != want {
        return Err(CodecError::Decode(format!(
            "an erased event of format {} has {} commitments for {} texts",
            event.format,
            erased.commitments.len(),
            texts.len()
        )));
    }
    Ok(())
}

/// The owned form of [`before_hash`]'s fields (same order, same encodings).
type BeforeHash = (u64, EventId, u16, Timestamp, String, CorrelationId, Option<u64>, Option<String>, Hash);

/// A body in `format`, and how many bytes it took.
fn decode_body(format: u16, bytes: &[u8]) -> Result<(EventBody, usize), CodecError> {
    let failed = |e: DecodeError| CodecError::Decode(e.to_string());
    let fields = bytes.get(4..).unwrap_or_default();
    match variant_index(bytes)? {
        PAIR_CLASSIFIED if format >= 5 => {
            let (pair, used): (StoredPair<V5>, usize) = bincode::decode_from_slice(fields, CONFIG).map_err(failed)?;
            Ok((EventBody::PairClassified(pair.into()), used + 4))
        }
        PAIR_CLASSIFIED if format >= 2 => {
            let (pair, used): (StoredPair<V2>, usize) = bincode::decode_from_slice(fields, CONFIG).map_err(failed)?;
            Ok((EventBody::PairClassified(pair.into()), used + 4))
        }
        MEMORY_OBSERVED if format < 5 => {
            let (observed, used): (StoredObservedV1, usize) =
                bincode::decode_from_slice(fields, CONFIG).map_err(failed)?;
            Ok((EventBody::MemoryObserved(observed.into()), used + 4))
        }
        MEMORY_OBSERVED if format < 6 => {
            let (observed, used): (StoredObservedV5, usize) =
                bincode::decode_from_slice(fields, CONFIG).map_err(failed)?;
            Ok((EventBody::MemoryObserved(observed.into()), used + 4))
        }
        CONFLICT_OPENED if format < 5 => {
            let (opened, used): (StoredOpenedV1, usize) = bincode::decode_from_slice(fields, CONFIG).map_err(failed)?;
            Ok((EventBody::ConflictOpened(opened.into()), used + 4))
        }
        _ => bincode::decode_from_slice(bytes, CONFIG).map_err(failed),
    }
}

/// The fields before `hash` (with format 5's principal after them), the hash, and where the
/// body starts.
fn decode_envelope(format: u16, bytes: &[u8]) -> Result<(BeforeHash, Option<String>, Hash, usize), CodecError> {
    let failed = |e: DecodeError| CodecError::Decode(e.to_string());
    let (header, mut used): (BeforeHash, usize) = bincode::decode_from_slice(bytes, CONFIG).map_err(failed)?;
    let principal = if format >= 5 {
        let (principal, more): (Option<String>, usize) =
            bincode::decode_from_slice(&bytes[used..], CONFIG).map_err(failed)?;
        used += more;
        principal
    } else {
        None
    };
    let hash = bytes
        .get(used..used + 32)
        .and_then(|b| b.try_into().ok())
        .map(Hash)
        .ok_or(CodecError::Truncated { len: bytes.len() + 2 })?;
    Ok((header, principal, hash, used + 32))
}

/// The variant index bincode writes before a body's fields (a fixed-width big-endian `u32`).
fn variant_index(body: &[u8]) -> Result<u32, CodecError> {
    body.get(..4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]])).ok_or(CodecError::Truncated { len: body.len() })
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
    // Every readable format lays out the variant index alike after the envelope.
    let (header, _, _, at) = decode_envelope(format, &bytes[2..])?;
    let index = variant_index(&bytes[2 + at..])?;
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

/// As [`seal_and_encode`], appending the stored form to `out`.
pub fn seal_and_encode_into(event: &mut Event, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&event.format.to_be_bytes());
    encode_envelope_into(event, out);
    let gap = out.len();
    out.extend_from_slice(&[0u8; 32]);
    encode_body_into(event.format, &event.body, out);
    let hash = if event.format >= 3 {
        // The hash covers the body without its texts, then their commitments.
        let mut hashed = Vec::with_capacity(out.len() - gap);
        hashed_body_v3(event, &mut hashed);
        chain_hash_parts(&event.prev_hash, &[&out[start + 2..gap], &hashed])
    } else {
        chain_hash_parts(&event.prev_hash, &[&out[start + 2..gap], &out[gap + 32..]])
    };
    if let Some(erased) = &event.erased {
        encode_into(erased, out);
    }
    out[gap..gap + 32].copy_from_slice(&hash.0);
    event.hash = hash;
}

/// Append what a format-3 hash covers of the body: the body with its texts blank, then the
/// commitments of the texts (an erased event's, as kept). The texts are put back.
fn hashed_body_v3(event: &mut Event, out: &mut Vec<u8>) {
    let taken: Vec<String> = event.body.texts_mut().into_iter().map(std::mem::take).collect();
    let commitments: Vec<Hash> = match &event.erased {
        Some(erased) => erased.commitments.clone(),
        None => taken.iter().map(|t| text_commitment(t)).collect(),
    };
    encode_body_into(event.format, &event.body, out);
    encode_into(&commitments, out);
    for (slot, text) in event.body.texts_mut().into_iter().zip(taken) {
        *slot = text;
    }
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

/// Append the envelope's fields before `hash`: [`before_hash`], then in format 5 the principal.
fn encode_envelope_into(event: &Event, out: &mut Vec<u8>) {
    debug_assert!(event.format >= 5 || event.principal.is_none(), "a principal in an event of format {}", event.format);
    encode_into(&before_hash(event), out);
    if event.format >= 5 {
        encode_into(&event.principal, out);
    }
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

/// The bytes the hash covers: every field of the event except `hash` (and `erased`), in
/// declaration order, the body's texts in format 3 as their commitments. (bincode encodes a tuple
/// as its members' encodings one after another.)
pub fn hashed_bytes(event: &Event) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + event.actor.len());
    encode_envelope_into(event, &mut out);
    if event.format >= 3 {
        hashed_body_v3(&mut event.clone(), &mut out);
    } else {
        encode_body_into(event.format, &event.body, &mut out);
    }
    out
}

/// The hash this event should carry, given its `prev_hash` field.
pub fn compute_hash(event: &Event) -> Hash {
    chain_hash(&event.prev_hash, &hashed_bytes(event))
}

/// Append a body's encoding in `format`.
fn encode_body_into(format: u16, body: &EventBody, out: &mut Vec<u8>) {
    match body {
        EventBody::PairClassified(pair) if format >= 5 => {
            encode_into(&PAIR_CLASSIFIED, out);
            encode_into(&PairCoded::<V5>(pair, std::marker::PhantomData), out);
        }
        EventBody::PairClassified(pair) if format >= 2 => {
            encode_into(&PAIR_CLASSIFIED, out);
            encode_into(&PairCoded::<V2>(pair, std::marker::PhantomData), out);
        }
        EventBody::MemoryObserved(b) if format < 5 => {
            encode_into(&MEMORY_OBSERVED, out);
            encode_into(&observed_v1(b), out);
        }
        EventBody::MemoryObserved(b) if format < 6 => {
            encode_into(&MEMORY_OBSERVED, out);
            encode_into(&(observed_v1(b), &b.evidence, &b.origin), out);
        }
        EventBody::ConflictOpened(b) if format < 5 => {
            encode_into(&CONFLICT_OPENED, out);
            encode_into(&(&b.conflict_id, &b.incoming, &b.candidates), out);
        }
        _ => encode_into(body, out),
    }
}

/// The fields of a `memory_observed` body that formats 1 to 4 store, in their order.
#[allow(clippy::type_complexity)]
fn observed_v1(
    b: &MemoryObserved,
) -> (&MemoryId, &String, &MemoryType, &String, &Option<String>, &Option<String>, &Option<Timestamp>, &Hash, &bool) {
    (
        &b.memory_id,
        &b.text,
        &b.memory_type,
        &b.scope,
        &b.source,
        &b.fact_key,
        &b.effective_at,
        &b.content_hash,
        &b.dedup,
    )
}

/// The variant indexes ([`EventBody::TYPE_NAMES`]) of the bodies whose stored form depends on
/// the format.
const MEMORY_OBSERVED: u32 = 0;
const PAIR_CLASSIFIED: u32 = 1;
const CONFLICT_OPENED: u32 = 7;

/// A `memory_observed` body as formats 1 to 4 store it: without `evidence`.
#[derive(Decode)]
struct StoredObservedV1 {
    memory_id: MemoryId,
    text: String,
    memory_type: MemoryType,
    scope: String,
    source: Option<String>,
    fact_key: Option<String>,
    effective_at: Option<Timestamp>,
    content_hash: Hash,
    dedup: bool,
}

impl From<StoredObservedV1> for MemoryObserved {
    fn from(b: StoredObservedV1) -> MemoryObserved {
        MemoryObserved {
            memory_id: b.memory_id,
            text: b.text,
            memory_type: b.memory_type,
            scope: b.scope,
            source: b.source,
            fact_key: b.fact_key,
            effective_at: b.effective_at,
            content_hash: b.content_hash,
            dedup: b.dedup,
            evidence: None,
            origin: None,
            expires_at: None,
            ttl_seconds: None,
        }
    }
}

/// A `memory_observed` body as format 5 stores it: without an expiry.
#[derive(Decode)]
struct StoredObservedV5 {
    v1: StoredObservedV1,
    evidence: Option<Evidence>,
    origin: Option<String>,
}

impl From<StoredObservedV5> for MemoryObserved {
    fn from(b: StoredObservedV5) -> MemoryObserved {
        MemoryObserved { evidence: b.evidence, origin: b.origin, ..b.v1.into() }
    }
}

/// A `conflict_opened` body as formats 1 to 4 store it: a contradiction a person's word settles.
#[derive(Decode)]
struct StoredOpenedV1 {
    conflict_id: ConflictId,
    incoming: MemoryId,
    candidates: Vec<ConflictSide>,
}

impl From<StoredOpenedV1> for ConflictOpened {
    fn from(b: StoredOpenedV1) -> ConflictOpened {
        ConflictOpened {
            conflict_id: b.conflict_id,
            incoming: b.incoming,
            candidates: b.candidates,
            kind: ConflictKind::Contradiction,
            needs_authority: Authority::Stated,
        }
    }
}

/// Format 2's name codes: the name at index `i` is written as the byte `i + 1`. Frozen with
/// format 2, like the fixtures: a name added here would change how an event that already holds it
/// (as a string) encodes, and so its hash. A name not listed is written as `0 ‖ string`.
pub const NAMES_V2: &[&str] = &[
    // Lexical scores.
    "score",
    "jaccard",
    "containment",
    "content_words_a",
    "content_words_b",
    "agreements",
    "only_a",
    "only_b",
    "negations_a",
    "negations_b",
    "polarity_flips",
    "evidence",
    "rest_jaccard",
    "rest_agreements",
    "rest_substitutions",
    "negation_scope_match",
    "inserted",
    "inversions",
    // Other methods' scores.
    "exact",
    "cosine",
    "llm_confidence",
    // Thresholds.
    "merge_threshold",
    "related_threshold",
    "min_conflict_words",
    "min_agreements",
    "min_conflict_jaccard",
    "prefix_min_len",
    "max_value_substitutions",
    "max_negation_substitutions",
    "min_negation_scope_match",
    "min_containment_words",
    "short_fact_words",
    "short_link_score",
    "top_k",
    "cosine_min",
    "cosine_identical_min",
    // Gates.
    "exact_text",
    "merge_band",
    "related_band",
    "below_band",
    "no_content",
    "kind_mismatch",
    "negation",
    "value_mismatch",
    "antonym",
    "qualifier_differs",
    "qualifier_added",
    "rest_differs",
    "too_few_words",
    "narrower",
    "order_differs",
];

/// The names format 5 codes after [`NAMES_V2`]'s (its codes go on from `NAMES_V2.len() + 1`):
/// the gates and scores recorded since format 2 was frozen that no event held before they were
/// listed (a name an event already holds as a string cannot be listed: its bytes, and so its
/// hash, would change). Append only.
pub const NAMES_ADDED_V5: &[&str] = &[
    // The announced change and the role of one holder (docs/adr/0030-announced-changes-and-roles.md).
    "announced_change",
    "changed_from_other",
    "role_holder",
    "change_topic_words",
    "change_old_words",
    // A guess denied (docs/adr/0033-one-value-by-category.md).
    "denied_guess",
    "guess_claim_covered",
    // Denials, restrictions and joint deeds split (docs/adr/0034-denials-restrictions-splits.md).
    "denied_clause",
    "restricted",
    "joint_split",
    "denied_clause_covered",
    // Fact identity: updates written in other words (docs/adr/0035-fact-identity.md).
    "ended_value",
    "named_old_value",
    "reversed_rule",
    "changed_value",
    "identity_topic_words",
    "identity_coverage",
    "cosine_related_min",
    "identity_elsewhere",
    // A relation the caller declared (docs/design.md §15).
    "declared_replaces",
    "declared_contradicts",
    // The cosine of vectors centred on the scope's mean, which ranks a save's `related`
    // (docs/models.md).
    "cosine_centred",
];

/// A format's table of name codes: the name at index `i` is written as the byte `i + 1`. Each is
/// frozen with its format, like the fixtures: a name added to one would change how an event that
/// already holds it (as a string) encodes, and so its hash. A name not listed is written as
/// `0 ‖ string`.
trait NameTable: 'static {
    /// The name of `code`, from 1.
    fn name(code: u8) -> Option<&'static str>;
    /// The code of a listed name.
    fn code(name: &str) -> Option<u8>;
}

/// Formats 2 to 4: [`NAMES_V2`]. (`Decode` reads nothing: the derived decoders of the stored
/// forms generic over a table ask for it.)
#[derive(Decode)]
struct V2;
/// Format 5: [`NAMES_V2`], then [`NAMES_ADDED_V5`].
#[derive(Decode)]
struct V5;

impl NameTable for V2 {
    fn name(code: u8) -> Option<&'static str> {
        NAMES_V2.get(usize::from(code).checked_sub(1)?).copied()
    }

    fn code(name: &str) -> Option<u8> {
        name_code(name).filter(|&c| usize::from(c) <= NAMES_V2.len())
    }
}

impl NameTable for V5 {
    fn name(code: u8) -> Option<&'static str> {
        let i = usize::from(code).checked_sub(1)?;
        NAMES_V2.get(i).or_else(|| NAMES_ADDED_V5.get(i.checked_sub(NAMES_V2.len())?)).copied()
    }

    fn code(name: &str) -> Option<u8> {
        name_code(name)
    }
}

/// The code of `name` in format 5's table, which begins with format 2's.
fn name_code(name: &str) -> Option<u8> {
    // A save encodes about 140 names, mostly in the same order every time (a classification's
    // scores, then its thresholds): the name listed after the last one found is tried first, one
    // comparison; otherwise one hash and one comparison, where a binary search makes half a
    // dozen.
    static CODES: std::sync::LazyLock<rustc_hash::FxHashMap<&'static str, u8>> =
        std::sync::LazyLock::new(|| NAMES_V2.iter().chain(NAMES_ADDED_V5).copied().zip(1u8..).collect());
    thread_local! {
        /// The code after the last one found on this thread.
        static NEXT: std::cell::Cell<u8> = const { std::cell::Cell::new(1) };
    }
    NEXT.with(|next| {
        let guess = next.get();
        let code = if V5::name(guess) == Some(name) { Some(guess) } else { CODES.get(name).copied() };
        if let Some(code) = code {
            next.set(code.saturating_add(1));
        }
        code
    })
}

/// A [`Name`] is encoded as the `String` it spells (in both formats; format 2 codes listed names
/// in `pair_classified` bodies on top of this, below).
impl Encode for Name {
    fn encode<E: Encoder>(&self, encoder: &mut E) -> Result<(), EncodeError> {
        self.as_str().encode(encoder)
    }
}

impl<Context> Decode<Context> for Name {
    fn decode<D: Decoder<Context = Context>>(decoder: &mut D) -> Result<Self, DecodeError> {
        Ok(Name::from(String::decode(decoder)?))
    }
}

bincode::impl_borrow_decode!(Name);

/// A name as formats 2 to 5 write it, coded from table `T`.
struct NameRef<'a, T>(&'a str, std::marker::PhantomData<T>);

impl<T: NameTable> Encode for NameRef<'_, T> {
    fn encode<E: Encoder>(&self, encoder: &mut E) -> Result<(), EncodeError> {
        match T::code(self.0) {
            Some(code) => code.encode(encoder),
            None => {
                0u8.encode(encoder)?;
                self.0.encode(encoder)
            }
        }
    }
}

/// A name as formats 2 to 5 read it, coded from table `T`. A listed name written as a string is
/// refused: each event has exactly one stored form, so a decoded event encodes back to the bytes
/// it came from.
struct StoredName<T>(Name, std::marker::PhantomData<T>);

impl<Context, T: NameTable> Decode<Context> for StoredName<T> {
    fn decode<D: Decoder<Context = Context>>(decoder: &mut D) -> Result<Self, DecodeError> {
        let name = match u8::decode(decoder)? {
            0 => {
                let name = String::decode(decoder)?;
                if T::code(&name).is_some() {
                    return Err(DecodeError::OtherString(format!("name {name:?} written out instead of as its code")));
                }
                Name::from(name)
            }
            code => T::name(code)
                .map(Name::from)
                .ok_or_else(|| DecodeError::OtherString(format!("unknown name code {code}")))?,
        };
        Ok(StoredName(name, std::marker::PhantomData))
    }
}

impl<'de, Context, T: NameTable> bincode::BorrowDecode<'de, Context> for StoredName<T> {
    fn borrow_decode<D: bincode::de::BorrowDecoder<'de, Context = Context>>(
        decoder: &mut D,
    ) -> Result<Self, DecodeError> {
        <Self as Decode<Context>>::decode(decoder)
    }
}

/// Named values as formats 2 to 5 write them: the count (as a `Vec`'s), then each name and value.
fn encode_named<E: Encoder, T: NameTable>(values: &[(Name, f64)], encoder: &mut E) -> Result<(), EncodeError> {
    (values.len() as u64).encode(encoder)?;
    for (name, value) in values {
        NameRef::<T>(name, std::marker::PhantomData).encode(encoder)?;
        value.encode(encoder)?;
    }
    Ok(())
}

/// A `pair_classified` body as formats 2 to 5 write it: [`PairClassified`]'s fields in order,
/// the gate and the names of scores and thresholds as [`NameRef`]s of table `T`.
struct PairCoded<'a, T>(&'a PairClassified, std::marker::PhantomData<T>);

impl<T: NameTable> Encode for PairCoded<'_, T> {
    fn encode<E: Encoder>(&self, encoder: &mut E) -> Result<(), EncodeError> {
        let p = self.0;
        p.incoming.encode(encoder)?;
        p.candidate.encode(encoder)?;
        p.method.encode(encoder)?;
        p.relation.encode(encoder)?;
        NameRef::<T>(p.gate.as_str(), std::marker::PhantomData).encode(encoder)?;
        p.reason.encode(encoder)?;
        encode_named::<E, T>(&p.scores, encoder)?;
        encode_named::<E, T>(&p.thresholds, encoder)?;
        p.model.encode(encoder)?;
        p.outcome.encode(encoder)
    }
}

/// A `pair_classified` body as formats 2 to 5 read it (the layout [`PairCoded`] writes).
#[derive(Decode)]
struct StoredPair<T: NameTable> {
    incoming: MemoryId,
    candidate: MemoryId,
    method: Method,
    relation: Relation,
    gate: StoredName<T>,
    reason: String,
    scores: Vec<(StoredName<T>, f64)>,
    thresholds: Vec<(StoredName<T>, f64)>,
    model: Option<ModelVerdict>,
    outcome: PairOutcome,
}

impl<T: NameTable> From<StoredPair<T>> for PairClassified {
    fn from(p: StoredPair<T>) -> PairClassified {
        let named = |v: Vec<(StoredName<T>, f64)>| v.into_iter().map(|(n, x)| (n.0, x)).collect();
        PairClassified {
            incoming: p.incoming,
            candidate: p.candidate,
            method: p.method,
            relation: p.relation,
            gate: p.gate.0,
            reason: p.reason,
            scores: named(p.scores),
            thresholds: named(p.thresholds),
            model: p.model,
            outcome: p.outcome,
        }
    }
}

impl Event {
    /// Set `hash` from the other fields.
    pub fn seal(&mut self) {
        self.hash = compute_hash(self);
    }

    /// Whether `hash` matches the other fields. An erased event of format 1 or 2 lost what its
    /// hash covered: it is taken as valid here, and only its links (the `prev_hash` of the event
    /// after it) check it ([`Event::hash_is_checkable`]).
    pub fn hash_is_valid(&self) -> bool {
        !self.hash_is_checkable() || self.hash == compute_hash(self)
    }

    /// Whether the hash can be recomputed from the event: not for an erased event of format 1
    /// or 2.
    pub fn hash_is_checkable(&self) -> bool {
        self.erased.is_none() || self.format >= 3
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A name encodes to the bytes of the same `String`, borrowed or owned, and reads back equal.
    #[test]
    fn a_name_is_encoded_as_its_string() {
        let config = bincode::config::standard();
        for name in [Name::from("jaccard"), Name::from("only_a".to_string()), Name::from("")] {
            let bytes = bincode::encode_to_vec(&name, config).unwrap();
            assert_eq!(bytes, bincode::encode_to_vec(name.as_str().to_string(), config).unwrap());
            let (back, read): (Name, usize) = bincode::decode_from_slice(&bytes, config).unwrap();
            assert_eq!((back, read), (name, bytes.len()));
        }
        assert_eq!(serde_json::to_string(&Name::from("gate")).unwrap(), "\"gate\"");
    }

    proptest! {
        /// A name's code is its place in the frozen list (from 1), whatever names came before it
        /// on the thread (the guess from the last one is only a shortcut), and an unlisted name
        /// has none.
        #[test]
        fn name_codes_are_places_in_the_list(picks in proptest::collection::vec(0usize..NAMES_V2.len() + 3, 0..200)) {
            for pick in picks {
                let (name, want) = match NAMES_V2.get(pick) {
                    Some(name) => (name.to_string(), Some(pick as u8 + 1)),
                    None => (format!("unlisted_{pick}"), None),
                };
                prop_assert_eq!(name_code(&name), want);
            }
        }
    }
}
