//! One line of an import stream (`memledger import`, `memledger_ledger::read_stream`): the line
//! is parsed with serde_json into an `Event` and its hash checked, exactly as read_stream does
//! per line. Any input is an event or an error, never a panic; a parsed event survives a JSON
//! round trip. (read_stream itself lives in memledger-ledger, which links RocksDB; the corpus
//! replay test in tests/tests/fuzz_corpus.rs feeds these same inputs to read_stream.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use memledger_schemas::Event;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else { return };
    if let Ok(event) = serde_json::from_str::<Event>(line) {
        let valid = event.hash_is_valid();
        let text = serde_json::to_string(&event).expect("a parsed event serializes");
        let again: Event = serde_json::from_str(&text).expect("a serialized event parses");
        assert_eq!(again.hash_is_valid(), valid);
        assert_eq!(again.hash, event.hash);
    }
});
