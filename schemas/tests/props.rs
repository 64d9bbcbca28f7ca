//! Property tests of the codec: encode→decode is the identity; arbitrary bytes never panic.

use memledger_schemas::codec::{decode, decode_event, encode_event, peek_event};
use memledger_schemas::samples::{chain_of, sample_bodies};
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
    fn encode_decode_round_trip(bodies in proptest::collection::vec(arb_body(), 1..12)) {
        for event in chain_of(bodies) {
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
        let _ = decode::<Event>(&bytes);
        let mut prefixed = vec![0u8, 1u8];
        prefixed.extend_from_slice(&bytes);
        let _ = decode_event(&prefixed);
        let _ = peek_event(&prefixed);
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
