//! Replays the saved fuzz corpus (fuzz/corpus/<target>/, grown by scripts/fuzz.sh) through the
//! same functions the cargo-fuzz targets call, on the stable toolchain, so CI catches a
//! regression on any input the fuzzer ever found interesting. Each input must give a value or an
//! error, never a panic.

use std::io::Cursor;
use std::path::PathBuf;

use memledger_engine::classify::lexical::{LexicalConfig, classify};
use memledger_schemas::Event;
use memledger_schemas::codec::{decode_event, encode_event, peek_event};

use crate::manifest_dir;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = manifest_dir().join("../fuzz/corpus").join(target);
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no corpus", dir.display());
    files
}

#[test]
fn decode_event_corpus() {
    let files = corpus("decode_event");
    let mut decoded = 0;
    for (path, data) in &files {
        let peeked = peek_event(data);
        if let Ok(event) = decode_event(data) {
            let peeked = peeked.unwrap_or_else(|e| panic!("{}: decodes but does not peek: {e}", path.display()));
            assert_eq!(peeked, (event.seq, event.body.type_name()), "{}", path.display());
            let again = decode_event(&encode_event(&event)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(again.hash, event.hash, "{}", path.display());
            decoded += 1;
        }
    }
    println!("decode_event: {} inputs replayed, {decoded} decoded", files.len());
}

#[test]
fn import_line_corpus() {
    let files = corpus("import_line");
    let mut parsed = 0;
    for (path, data) in &files {
        // The whole import reader on the input as a stream …
        let _ = memledger_engine::read_stream(&mut Cursor::new(data.as_slice()));
        // … and the per-line parse the fuzz target runs.
        if let Ok(line) = std::str::from_utf8(data)
            && let Ok(event) = serde_json::from_str::<Event>(line)
        {
            let text = serde_json::to_string(&event).unwrap();
            let again: Event = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(again.hash_is_valid(), event.hash_is_valid(), "{}", path.display());
            parsed += 1;
        }
    }
    println!("import_line: {} inputs replayed, {parsed} parsed as events", files.len());
}

#[test]
fn lexical_classify_corpus() {
    let files = corpus("lexical_classify");
    let cfg = LexicalConfig::default();
    let kinds = [None, Some("fact"), Some("preference"), Some("episode"), Some("procedure")];
    for (path, data) in &files {
        let Ok(text) = std::str::from_utf8(data) else { continue };
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
        let k = data.first().copied().unwrap_or(0) as usize;
        let v = classify(a, b, kinds[k % 5], kinds[(k / 5) % 5], &cfg);
        assert!((0.0..=1.0).contains(&v.score), "{}: score {}", path.display(), v.score);
    }
    println!("lexical_classify: {} inputs replayed", files.len());
}
