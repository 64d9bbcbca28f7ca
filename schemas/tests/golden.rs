//! Golden fixtures: the bytes of formats 1 to 6, and of each erased, are frozen. These files were written once by
//! `MEMLEDGER_BLESS=1 cargo test -p memledger-schemas --test main -- golden` (which writes only a fixture
//! that is missing) and must load forever.

use std::collections::BTreeSet;
use std::path::PathBuf;

use memledger_schemas::codec::{decode_event, encode_event, peek_event};
use memledger_schemas::json_schema::{EVENT_LINE_SCHEMA, event_line_schema};
use memledger_schemas::samples::{ERASED_EVENTS, erased_chain_in, sample_chain, sample_chain_in};
use memledger_schemas::{Event, EventBody, Hash};

use crate::manifest_dir;

fn fixture(name: &str) -> PathBuf {
    manifest_dir().join("tests/fixtures").join(name)
}

/// A format's fixture: each event as `u32 length (BE) ‖ stored bytes`.
fn encode_all(events: &[Event]) -> Vec<u8> {
    let mut out = Vec::new();
    for event in events {
        let bytes = encode_event(event);
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(&bytes);
    }
    out
}

fn decode_all(mut bytes: &[u8]) -> Vec<Event> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let len = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
        out.push(decode_event(&bytes[4..4 + len]).expect("a fixture event must always decode"));
        bytes = &bytes[4 + len..];
    }
    out
}

/// The fixture of `format` decodes to the sample chain in that format, encodes back to the same
/// bytes, carries valid hashes, and its exported JSON is frozen too.
fn events_decode_forever(format: u16) {
    fixture_decodes_forever(&format!("format-{format}"), sample_chain_in(format));
}

/// The fixture `name` (`.events.bin` and `.events.jsonl`) holds `events`, and they it.
fn fixture_decodes_forever(name: &str, events: Vec<Event>) {
    let format = name;
    let bin = fixture(&format!("{name}.events.bin"));
    let json = fixture(&format!("{name}.events.jsonl"));
    if std::env::var_os("MEMLEDGER_BLESS").is_some() && !bin.exists() {
        std::fs::write(&bin, encode_all(&events)).unwrap();
        let lines: Vec<String> = events.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
        std::fs::write(&json, lines.join("\n") + "\n").unwrap();
    }
    let stored = std::fs::read(&bin).expect("golden fixture missing: bless it once");
    let decoded = decode_all(&stored);
    assert_eq!(decoded, events, "format {format} decodes to the same events");
    assert_eq!(encode_all(&decoded), stored, "format {format} encodes to the same bytes");

    // The chain in the fixture is valid, and every hash is pinned.
    let mut prev = Hash::GENESIS;
    for event in &decoded {
        assert_eq!(event.prev_hash, prev);
        assert!(event.hash_is_valid(), "seq {} hash", event.seq);
        prev = event.hash;
    }

    // The exported JSON form is frozen too, and parses back to the same events.
    let text = std::fs::read_to_string(&json).unwrap();
    let from_json: Vec<Event> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(from_json, events);
    for (line, event) in text.lines().zip(&events) {
        assert_eq!(line, serde_json::to_string(event).unwrap());
    }
}

#[test]
fn format_1_events_decode_forever() {
    events_decode_forever(1);
}

#[test]
fn format_2_events_decode_forever() {
    events_decode_forever(2);
}

#[test]
fn format_3_events_decode_forever() {
    events_decode_forever(3);
}

#[test]
fn format_4_events_decode_forever() {
    events_decode_forever(4);
}

#[test]
fn format_5_events_decode_forever() {
    events_decode_forever(5);
}

#[test]
fn format_6_events_decode_forever() {
    events_decode_forever(6);
}

#[test]
fn format_7_events_decode_forever() {
    events_decode_forever(7);
}

/// An accepted head in an event of an earlier format is refused on read, and a format-7 event
/// of it reads back as itself.
#[test]
fn format_7_vocabulary_needs_format_7() {
    for body in memledger_schemas::samples::sample_format_7() {
        assert_eq!(body.needs_format(), 7, "{}", body.type_name());
        let mut event = memledger_schemas::samples::chain_in(vec![body], 6).remove(0);
        assert!(decode_event(&encode_event(&event)).is_err(), "refused in format 6");
        event.format = 7;
        event.seal();
        assert_eq!(decode_event(&encode_event(&event)).unwrap(), event);
    }
}

/// An expiry in an event of an earlier format is refused on read, and a format-6 event of it
/// reads back as itself; a format-5 memory reads back without one.
#[test]
fn format_6_vocabulary_needs_format_6() {
    for body in memledger_schemas::samples::sample_format_6() {
        assert_eq!(body.needs_format(), 6, "{}", body.type_name());
        let mut event = memledger_schemas::samples::chain_in(vec![body], 5).remove(0);
        let old = decode_event(&encode_event(&event));
        assert!(old.is_err() || old.as_ref().ok() != Some(&event), "{old:?}");
        event.format = 6;
        event.seal();
        assert_eq!(decode_event(&encode_event(&event)).unwrap(), event);
    }
    for event in sample_chain_in(5) {
        assert_eq!(decode_event(&encode_event(&event)).unwrap(), event);
    }
}

/// Format 5's vocabulary (principals, proposals, evidence, conflicts of other kinds, announced
/// changes, transcript progress) in an event of an earlier format is refused on read, and a
/// format-5 event of it reads back as itself.
#[test]
fn format_5_vocabulary_needs_format_5() {
    for body in memledger_schemas::samples::sample_format_5() {
        assert_eq!(body.needs_format(), 5, "{}", body.type_name());
        let mut event = memledger_schemas::samples::chain_in(vec![body], 4).remove(0);
        let old = decode_event(&encode_event(&event));
        assert!(old.is_err() || old.as_ref().ok() != Some(&event), "{}: {old:?}", event.body.type_name());
        event.format = 5;
        event.principal = Some("ana".into());
        event.seal();
        assert_eq!(decode_event(&encode_event(&event)).unwrap(), event);
    }
}

/// The principal is part of what a format-5 event's hash covers.
#[test]
fn a_format_5_events_principal_is_hashed() {
    let event = sample_chain_in(5).remove(0);
    assert_eq!(event.principal.as_deref(), Some("owner"));
    for principal in [None, Some("mallory".to_string())] {
        let mut changed = event.clone();
        changed.principal = principal;
        assert!(!changed.hash_is_valid());
    }
}

/// An imported memory's excerpt is erased with its text, and its event still proves its hash.
#[test]
fn erasing_an_imported_memory_blanks_its_excerpt_and_keeps_its_hash() {
    let mut event = sample_chain_in(5)
        .into_iter()
        .find(|e| matches!(&e.body, EventBody::MemoryObserved(b) if b.evidence.is_some()))
        .unwrap();
    let hash = event.hash;
    event.redact(99, event.recorded_at, "person:ana");
    let EventBody::MemoryObserved(b) = &event.body else { unreachable!() };
    assert!(b.text.is_empty() && b.evidence.as_ref().unwrap().excerpt.is_empty());
    assert_eq!(event.erased.as_ref().unwrap().commitments.len(), 2);
    assert_eq!(event.hash, hash);
    assert!(event.hash_is_valid() && event.hash_is_checkable());
    let stored = encode_event(&event);
    assert!(!String::from_utf8_lossy(&stored).contains("GitLab"));
    assert_eq!(decode_event(&stored).unwrap(), event);
}

/// Format 4's vocabulary in an event of an earlier format is refused on read: each event has
/// one stored form, and an older build stops at the format number instead.
#[test]
fn format_4_vocabulary_needs_format_4() {
    for body in memledger_schemas::samples::sample_co_enrichment() {
        assert_eq!(body.needs_format(), 4);
        let mut event = memledger_schemas::samples::chain_in(vec![body], 3).remove(0);
        assert!(decode_event(&encode_event(&event)).is_err(), "{}", event.body.type_name());
        event.format = 4;
        event.seal();
        assert_eq!(decode_event(&encode_event(&event)).unwrap(), event);
    }
}

/// An erasure's stored forms are frozen too: the events it blanked, in each format, and the
/// erasure event after them.
#[test]
fn erased_events_decode_forever() {
    for format in [1, 2, 3, 4, 5, 6] {
        fixture_decodes_forever(&format!("format-{format}.erased"), erased_chain_in(format));
    }
}

/// Erasing a format-3 event keeps its hash checkable: its texts are gone, their commitments
/// stay. Any other change to it is still caught, and so is a commitment changed or a text put
/// back.
#[test]
fn an_erased_format_3_event_still_proves_its_hash() {
    let before = sample_chain_in(3);
    let after = erased_chain_in(3);
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(old.hash, new.hash, "seq {}", old.seq);
        assert!(new.hash_is_valid() && new.hash_is_checkable(), "seq {}", new.seq);
        let stored = encode_event(new);
        if ERASED_EVENTS.contains(&new.seq) {
            assert!(new.erased.is_some());
            assert!(!String::from_utf8_lossy(&stored).contains("Postgres"), "seq {}: the text is gone", new.seq);
            let mut changed = new.clone();
            changed.actor.push('x');
            assert!(!changed.hash_is_valid(), "seq {}: a changed field", new.seq);
            let mut changed = new.clone();
            changed.erased.as_mut().unwrap().commitments[0].0[0] ^= 1;
            assert!(!changed.hash_is_valid(), "seq {}: a changed commitment", new.seq);
            let mut changed = new.clone();
            *changed.body.texts_mut()[0] = "put back".into();
            assert!(decode_event(&encode_event(&changed)).is_err(), "seq {}: text in an erased event", new.seq);
        }
    }
    // An erased format-2 event keeps its hash, but cannot prove it: only its links can.
    for event in erased_chain_in(2).iter().filter(|e| ERASED_EVENTS.contains(&e.seq)) {
        assert!(!event.hash_is_checkable() && event.hash_is_valid());
    }
}

/// Format 2 differs from format 1 only in how a classification names its gate, scores and
/// thresholds: every other event is stored byte for byte alike (but for the format prefix and
/// the format field, and so the hash), and the classification is smaller.
#[test]
fn format_2_codes_the_names_of_a_classification() {
    for (one, two) in sample_chain_in(1).iter().zip(sample_chain_in(2)) {
        let (a, b) = (encode_event(one), encode_event(&two));
        if one.body.type_name() == "pair_classified" {
            // gate, 2 scores, 2 thresholds: each name's 8-byte length and its text become one byte.
            let names = ["value_mismatch", "jaccard", "containment", "merge_threshold", "related_threshold"];
            let saved: usize = names.iter().map(|n| 8 + n.len() - 1).sum();
            assert_eq!(a.len() - b.len(), saved);
        } else {
            assert_eq!(a.len(), b.len(), "{}", one.body.type_name());
        }
    }
}

#[test]
fn every_body_variant_is_in_the_fixture() {
    let mut names: Vec<&str> = sample_chain().iter().map(|e| e.body.type_name()).collect();
    names.sort();
    names.dedup();
    let mut all = EventBody::TYPE_NAMES.to_vec();
    all.sort();
    assert_eq!(names, all);
}

/// A replay that skips the events a view ignores reads each one's seq and type without
/// decoding its body: the names are in the order of bincode's variant index.
#[test]
fn peeking_reads_the_seq_and_type_of_every_fixture_event() {
    let mut names: Vec<&str> = Vec::new();
    for event in [1, 2, 3, 4, 5].into_iter().flat_map(sample_chain_in) {
        let (seq, name) = peek_event(&encode_event(&event)).unwrap();
        assert_eq!((seq, name), (event.seq, event.body.type_name()));
        names.push(name);
    }
    names.sort();
    // Formats 1 and 2 have every type but the erasure, which format 3 introduced, and the merge
    // proposal, which format 4 did; format 4 adds a second classification (a co-enrichment);
    // format 5 adds its own types and a third classification, a second resolution and a second
    // observation, conflict and version.
    let until = |last: &str| -> Vec<&str> {
        let end = EventBody::TYPE_NAMES.iter().position(|n| *n == last).unwrap();
        EventBody::TYPE_NAMES[..=end].to_vec()
    };
    let mut all = [
        until("belief_edited"),
        until("belief_edited"),
        until("memory_erased"),
        until("merge_proposed"),
        until("transcript_progressed"),
    ]
    .concat();
    all.push("pair_classified");
    all.extend([
        "pair_classified",
        "pair_classified",
        "conflict_opened",
        "conflict_resolved",
        "conflict_resolved",
        "memory_observed",
        "belief_versioned",
    ]);
    all.sort();
    assert_eq!(names, all, "each format's fixture has every type of its format once, and the extra ones said");
    assert!(peek_event(&[0, 1, 0]).is_err());
    assert!(peek_event(&[0, 9]).is_err());
}

#[test]
fn any_changed_field_breaks_the_hash() {
    let event = sample_chain()[1].clone();
    let mut changed = vec![event.clone(); 6];
    changed[0].seq += 1;
    changed[1].actor.push('x');
    changed[2].recorded_at.0 += 1;
    changed[3].causation = None;
    changed[4].prev_hash.0[0] ^= 1;
    if let memledger_schemas::EventBody::PairClassified(b) = &mut changed[5].body {
        b.scores[0].1 += 1e-9;
    }
    for c in &changed {
        assert!(!c.hash_is_valid());
    }
}

/// The JSON Schema of an exported line is generated from the types the line is serialised from
/// (memledger_schemas::json_schema); the copy kept in the repository is byte for byte what they
/// give. After a change to those types, `MEMLEDGER_BLESS=1` rewrites it (unlike a fixture, which
/// is frozen, the schema follows the types).
#[test]
fn the_event_line_schema_is_what_the_types_give() {
    let path = manifest_dir().join(EVENT_LINE_SCHEMA);
    let generated = event_line_schema();
    if std::env::var_os("MEMLEDGER_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let kept = std::fs::read_to_string(&path).unwrap();
    assert!(
        kept == generated,
        "{} is not what the types give; `MEMLEDGER_BLESS=1 cargo test --release -p memledger-schemas` rewrites it",
        path.display()
    );
}

/// Every field of every exported line is one the schema names, and every field it names is in
/// some sample line of its type (a field left out of JSON when empty, such as a memory's
/// `evidence`, is in the sample that has one): the envelope's, then the body's of the line's type.
#[test]
fn exported_lines_have_exactly_the_fields_of_the_schema() {
    let schema: serde_json::Value = serde_json::from_str(&event_line_schema()).unwrap();
    let keys = |v: &serde_json::Value| -> BTreeSet<String> { v.as_object().unwrap().keys().cloned().collect() };
    let def = |v: &serde_json::Value| match v["$ref"].as_str() {
        Some(r) => schema["$defs"][r.trim_start_matches("#/$defs/")].clone(),
        None => v.clone(),
    };
    let mut seen: std::collections::BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = Default::default();
    for event in sample_chain() {
        let line = serde_json::to_value(&event).unwrap();
        let variant = schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["properties"]["type"]["const"] == line["type"])
            .unwrap_or_else(|| panic!("{} is not a type of the schema", line["type"]));
        let mut named = keys(&schema["properties"]);
        named.extend(keys(&variant["properties"]));
        // Only an erased event has `erased`.
        named.remove("erased");
        assert!(keys(&line).is_subset(&named), "{}: {:?} not in {:?}", event.body.type_name(), keys(&line), named);
        let body = def(&variant["properties"]["body"]);
        assert!(keys(&line["body"]).is_subset(&keys(&body["properties"])), "{}", event.body.type_name());
        for required in body["required"].as_array().unwrap() {
            assert!(line["body"].get(required.as_str().unwrap()).is_some(), "{}: {required}", event.body.type_name());
        }
        let entry = seen
            .entry(event.body.type_name().to_string())
            .or_insert_with(|| (named.clone(), keys(&body["properties"])));
        entry.0 = entry.0.difference(&keys(&line)).cloned().collect();
        entry.1 = entry.1.difference(&keys(&line["body"])).cloned().collect();
    }
    for (kind, (envelope, body)) in seen {
        assert!(envelope.is_empty() && body.is_empty(), "{kind}: no sample line has {envelope:?} {body:?}");
    }
}

#[test]
fn sealing_while_encoding_writes_the_fixture_bytes() {
    for format in [1, 2, 3, 4, 5] {
        sealing_while_encoding_writes(format);
    }
}

fn sealing_while_encoding_writes(format: u16) {
    // The ledger seals and encodes in one pass; it must write exactly what the format froze.
    let stored =
        std::fs::read(fixture(&format!("format-{format}.events.bin"))).expect("golden fixture missing: bless it once");
    let mut at = 0;
    // The ledger appends each event to a batch buffer that already holds other keys and values.
    let mut batch_buffer = b"bytes already in the batch".to_vec();
    for event in sample_chain_in(format) {
        let mut unsealed = event.clone();
        unsealed.hash = Hash::GENESIS;
        let bytes = memledger_schemas::codec::seal_and_encode(&mut unsealed);
        assert_eq!(unsealed.hash, event.hash, "seq {}: the same hash", event.seq);
        let mut unsealed = event.clone();
        unsealed.hash = Hash::GENESIS;
        let start = batch_buffer.len();
        memledger_schemas::codec::seal_and_encode_into(&mut unsealed, &mut batch_buffer);
        assert_eq!(unsealed.hash, event.hash, "seq {}: the same hash appended to a buffer", event.seq);
        assert_eq!(&batch_buffer[start..], &bytes[..], "seq {}: the same bytes appended to a buffer", event.seq);
        assert_eq!(bytes, encode_event(&event), "seq {}: the same bytes as encode_event", event.seq);
        let len = u32::from_be_bytes(stored[at..at + 4].try_into().unwrap()) as usize;
        assert_eq!(bytes, &stored[at + 4..at + 4 + len], "seq {}: the same bytes as the fixture", event.seq);
        at += 4 + len;
    }
    assert_eq!(at, stored.len());
}

/// A store written by a format-1 build goes on in format 2: each event is hashed over its own
/// stored bytes, so the chain links across the change and every event decodes to itself.
#[test]
fn a_chain_links_across_a_change_of_format() {
    let mut chain = sample_chain_in(1);
    chain.truncate(3);
    let mut prev = chain.last().unwrap().hash;
    for mut event in sample_chain_in(2).into_iter().skip(1) {
        event.seq += 2;
        event.prev_hash = prev;
        event.seal();
        prev = event.hash;
        chain.push(event);
    }
    assert!(chain.iter().any(|e| e.format == 2 && e.body.type_name() == "pair_classified"));
    let mut prev = Hash::GENESIS;
    for event in &chain {
        let back = decode_event(&encode_event(event)).unwrap();
        assert_eq!(&back, event);
        assert_eq!(back.prev_hash, prev, "seq {}", event.seq);
        assert!(back.hash_is_valid(), "seq {} (format {})", event.seq, event.format);
        prev = back.hash;
    }
}
