//! The offline lexical classifier (`memledger_engine::classify::lexical::classify`) on two
//! strings: any pair classifies without a panic, and the score is a number in [0, 1].
//!
//! The classifier (`engine/src/classify/lexical/`) depends on std, rustc-hash and rust-stemmers
//! alone, so it is compiled in here from its source files rather than through memledger-engine
//! (which links RocksDB and tantivy): the code fuzzed is the same files. The test command checks
//! that this target builds (scripts/test.sh).
#![no_main]

#[allow(dead_code, unused_imports)]
#[path = "../../engine/src/classify/lexical/mod.rs"]
mod lexical;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // The two texts are split at the first NUL, or the middle; the kinds come from the first byte.
    let (a, b) = match text.find('\0') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => {
            let mut mid = text.len() / 2;
            while !text.is_char_boundary(mid) {
                mid -= 1;
            }
            text.split_at(mid)
        }
    };
    let kinds = [None, Some("fact"), Some("preference"), Some("episode"), Some("procedure")];
    let k = data.first().copied().unwrap_or(0) as usize;
    let cfg = lexical::LexicalConfig::default();
    let v = lexical::classify(a, b, kinds[k % 5], kinds[(k / 5) % 5], &cfg);
    assert!((0.0..=1.0).contains(&v.score), "score {} out of [0, 1]", v.score);
    let _ = format!("{v:?}");
});
