//! Property tests of the codec: encode→decode is the identity in every format; arbitrary bytes
//! never panic.

use memledger_schemas::codec::{decode, decode_event, encode_event, peek_event};
use memledger_schemas::samples::{chain_in, chain_of, sample_bodies};
use memledger_schemas::*;
use proptest::prelude::*;

fn arb_text() -> impl Strategy<Value = String> {
    "\\PC{0,40}"
}

fn arb_body() -> impl Strategy<Value = EventBody> {
    let samples = sample_bodies();
    (
        0..samples.len(),
        arb_text(),
        any::<u128>(),
        any::<u32>(),
        proptest::option::of(-62_135_596_800_000_000i64..253_402_300_799_000_000i64),
        -1e6f64..1e6,
    )
        .prop_map(move |(i, text, id, version, micros, score)| {
            let mut body = samples[i].clone();
            match &mut body {
                EventBody::MemoryObserved(b) => {
                    b.text = text;
                    b.memory_id = MemoryId(id);
                    b.effective_at = micros.map(Timestamp);
                }
                EventBody::PairClassified(b) => {
                    b.reason = text;
                    b.scores.push(("extra".into(), score));
                    b.incoming = MemoryId(id);
                }
                EventBody::BeliefVersioned(b) => {
                    b.version = version;
                    b.root_id = MemoryId(id);
                }
                EventBody::BeliefRetired(b) => b.reason = Some(text),
                EventBody::ConflictResolved(b) => b.rationale = Some(text),
                EventBody::BeliefEdited(b) => b.expected_version = Some(version),
                _ => {}
            }
            body
        })
}

proptest! {
    #[test]
    fn encode_decode_round_trip(bodies in proptest::collection::vec(arb_body(), 1..12), format in 1u16..=3) {
        // A classification's "extra" score has no format-2 code: it is written as a string.
        for event in chain_in(bodies, format) {
            let bytes = encode_event(&event);
            let back = decode_event(&bytes).unwrap();
            prop_assert_eq!(peek_event(&bytes).unwrap(), (event.seq, event.body.type_name()));
            prop_assert!(back.hash_is_valid());
            prop_assert_eq!(&back, &event);
            let json = serde_json::to_string(&event).unwrap();
            let from_json: Event = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(from_json, event);
        }
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_event(&bytes);
        let _ = decode::<EventBody>(&bytes);
        for format in [1u8, 2, 3] {
            let mut prefixed = vec![0u8, format];
            prefixed.extend_from_slice(&bytes);
            let _ = decode_event(&prefixed);
            let _ = peek_event(&prefixed);
        }
    }

    #[test]
    fn a_flipped_byte_is_caught(idx in any::<usize>(), bit in 0u8..8) {
        let event = chain_of(sample_bodies()).remove(1);
        let mut bytes = encode_event(&event);
        let i = idx % bytes.len();
        bytes[i] ^= 1 << bit;
        if let Ok(back) = decode_event(&bytes) {
            // Either the bytes no longer decode, or the decoded event no longer hashes.
            prop_assert!(back != event);
            prop_assert!(!back.hash_is_valid() || back.hash != event.hash);
        }
    }
}

/// Format 2 writes a listed name as its code and any other name as a string, and reads back only
/// what it writes: a listed name spelled out, or a code past the list, is refused.
#[test]
fn format_2_names_have_one_stored_form() {
    use memledger_schemas::codec::NAMES_V2;
    let mut names = NAMES_V2.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), NAMES_V2.len(), "no name is listed twice");
    assert!(NAMES_V2.len() < 255, "codes are one byte, 0 meaning a string follows");

    let mut event = chain_in(sample_bodies(), 2).remove(1);
    let EventBody::PairClassified(pair) = &mut event.body else { panic!("the second sample is a classification") };
    pair.scores.push(("not_listed".into(), 0.5));
    event.seal();
    let bytes = encode_event(&event);
    assert_eq!(decode_event(&bytes).unwrap(), event);

    // The same bytes with the listed gate's code replaced by the gate spelled out.
    let gate = "value_mismatch";
    let code = NAMES_V2.iter().position(|n| *n == gate).unwrap() as u8 + 1;
    let reason = b"numbers differ";
    let at = bytes.windows(reason.len()).position(|w| w == reason).unwrap() - 8 - 1;
    assert_eq!(bytes[at], code, "the gate's code sits right before the reason's length");
    let mut spelled = bytes[..at].to_vec();
    spelled.push(0);
    spelled.extend_from_slice(&(gate.len() as u64).to_be_bytes());
    spelled.extend_from_slice(gate.as_bytes());
    spelled.extend_from_slice(&bytes[at + 1..]);
    let refused = decode_event(&spelled).unwrap_err().to_string();
    assert!(refused.contains("written out instead of as its code"), "{refused}");

    let mut unknown = bytes.clone();
    unknown[at] = 255;
    let refused = decode_event(&unknown).unwrap_err().to_string();
    assert!(refused.contains("unknown name code 255"), "{refused}");
}
