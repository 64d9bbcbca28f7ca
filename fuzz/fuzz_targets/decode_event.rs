//! The stored-event decoder: any bytes decode to an event or an error, never a panic; an event
//! that decodes re-encodes to bytes that decode to the same event, and peeking at it (a replay
//! skipping types) reads its seq and type.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memledger_schemas::codec::{decode_event, encode_event, peek_event};

fuzz_target!(|data: &[u8]| {
    let peeked = peek_event(data);
    if let Ok(event) = decode_event(data) {
        assert_eq!(peeked.expect("a decoded event peeks"), (event.seq, event.body.type_name()));
        let again = decode_event(&encode_event(&event)).expect("a decoded event re-encodes");
        assert_eq!(again.hash, event.hash);
        assert_eq!(again.seq, event.seq);
        let _ = event.hash_is_valid();
    }
});
