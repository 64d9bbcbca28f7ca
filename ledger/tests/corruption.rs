//! Corruption: flip bytes in the store's files — the WAL, the SST files, the
//! MANIFEST — and in stored events, and check that opening or `verify` reports it, naming the
//! file or the seq, and that no read ever returns wrong data silently.
//!
//! Each case copies a pristine store, flips one byte at a chosen offset, and classifies what a
//! reader gets: the open fails, `verify` fails, a read fails, or every event, the head and every
//! idempotency key read back exactly as written. Anything else — a read that succeeds with other
//! data, or a write that is gone without an error — fails the test. The RocksDB options that make
//! this hold are in docs/adr/0006-rocksdb-options.md.

use std::path::{Path, PathBuf};

use memledger_ledger::*;
use memledger_schemas::samples::sample_bodies;
use memledger_schemas::*;

fn open(dir: &Path) -> Result<Ledger, OpenError> {
    Ledger::open(
        dir,
        &OpenOptions { create: false, wait: std::time::Duration::from_secs(5), shared: None, ..OpenOptions::default() },
        &[],
    )
}

/// A store of `commands` synced commands (a few events each, each with an idempotency key), and
/// what was written: every event's `(seq, hash)` and every key's seq range.
struct Pristine {
    dir: tempfile::TempDir,
    events: Vec<(u64, Hash)>,
    keys: Vec<(String, SeqRange)>,
    head: Head,
}

fn pristine(commands: usize, flush: bool) -> Pristine {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path(), &OpenOptions::default(), &[]).unwrap();
    let bodies = sample_bodies();
    let mut keys = Vec::new();
    for c in 0..commands {
        let mut meta = CommandMeta::new("corruption-test");
        let key = format!("key-{c}");
        meta.idempotency_key = Some(key.clone());
        let events: Vec<NewEvent> =
            bodies.iter().cycle().skip(c % bodies.len()).take(1 + c % 3).cloned().map(NewEvent::from).collect();
        match ledger.append(ledger.head().seq, &meta, events).unwrap() {
            Appended::Committed(e) => {
                keys.push((key, SeqRange { first: e[0].seq, last: e[e.len() - 1].seq }));
            }
            Appended::Replayed(_) => unreachable!(),
        }
    }
    if flush {
        ledger.store().flush().unwrap();
    }
    let events = ledger.scan(1).unwrap().map(|e| e.map(|e| (e.seq, e.hash))).collect::<Result<Vec<_>, _>>().unwrap();
    let head = ledger.head();
    drop(ledger);
    Pristine { dir, events, keys, head }
}

/// What a reader got from a damaged store.
#[derive(Debug)]
enum Outcome {
    /// Opening failed, with this message.
    OpenRefused(String),
    /// `verify` found a bad seq.
    VerifyFailed(u64, String),
    /// A read returned an error.
    ReadFailed(String),
    /// Everything read back exactly as written (the byte was in unused space, or in a part
    /// RocksDB does not need to answer).
    Intact,
}

/// Open, verify, and read back every event by scan and by key, every idempotency key and the
/// head. Panics on a silent wrong answer.
fn examine(dir: &Path, p: &Pristine, what: &str) -> Outcome {
    let ledger = match open(dir) {
        Ok(l) => l,
        Err(e) => return Outcome::OpenRefused(e.to_string()),
    };
    let report = match ledger.verify() {
        Ok(r) => r,
        Err(e) => return Outcome::ReadFailed(e.to_string()),
    };
    if !report.ok {
        let seq = report.first_bad_seq.expect("a failed verify names a seq");
        return Outcome::VerifyFailed(seq, report.problem.unwrap_or_default());
    }
    // verify says ok: then everything must be exactly what was written.
    assert_eq!(ledger.head(), p.head, "{what}: verify ok but the head moved — a silent wrong answer");
    assert_eq!(report.events, p.events.len() as u64, "{what}: verify ok but events are missing");
    for &(seq, hash) in &p.events {
        match ledger.get(seq) {
            Ok(Some(e)) => {
                assert_eq!((e.seq, e.hash), (seq, hash), "{what}: seq {seq} reads back different");
                assert!(e.hash_is_valid(), "{what}: seq {seq} reads back with a wrong hash");
            }
            Ok(None) => panic!("{what}: verify ok but get({seq}) finds nothing — a silent wrong answer"),
            Err(e) => return Outcome::ReadFailed(e.to_string()),
        }
    }
    for (key, range) in &p.keys {
        match ledger.idempotent(key) {
            Ok(found) => assert_eq!(found, Some(*range), "{what}: idempotency key {key} reads back different"),
            Err(e) => return Outcome::ReadFailed(e.to_string()),
        }
    }
    Outcome::Intact
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() == "LOCK" {
            continue;
        }
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn files(dir: &Path, pred: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| pred(p.file_name().unwrap().to_str().unwrap()))
        .collect();
    out.sort();
    out
}

/// Flip every bit of the byte at `offset` of `file` (in the copy at `scratch`) and examine it.
fn flip_and_examine(p: &Pristine, file: &Path, offset: u64, scratch: &Path) -> Outcome {
    let _ = std::fs::remove_dir_all(scratch);
    copy_dir(p.dir.path(), scratch);
    let target = scratch.join(file.file_name().unwrap());
    let mut bytes = std::fs::read(&target).unwrap();
    bytes[offset as usize] ^= 0xff;
    std::fs::write(&target, bytes).unwrap();
    let what = format!("{} byte {offset}", file.file_name().unwrap().to_string_lossy());
    examine(scratch, p, &what)
}

/// Offsets spread over a file: `n` evenly spaced, plus the first and the last bytes.
fn offsets(len: u64, n: u64) -> Vec<u64> {
    let mut out: Vec<u64> = (0..n).map(|k| k * len / n).collect();
    out.push(len - 1);
    out.push(len.saturating_sub(2));
    out.sort();
    out.dedup();
    out
}

/// Runs the flips; returns (tried, detected) and prints each detection.
fn sweep(
    p: &Pristine,
    targets: &[PathBuf],
    per_file: u64,
    must_name: impl Fn(&Path, &Outcome) -> bool,
) -> (usize, usize) {
    let scratch_root = tempfile::tempdir().unwrap();
    let scratch = scratch_root.path().join("copy");
    let (mut tried, mut detected) = (0, 0);
    for file in targets {
        let len = std::fs::metadata(file).unwrap().len();
        for offset in offsets(len, per_file) {
            let outcome = flip_and_examine(p, file, offset, &scratch);
            tried += 1;
            let name = file.file_name().unwrap().to_string_lossy();
            match &outcome {
                Outcome::Intact => println!("  {name} @{offset}: intact (unused byte)"),
                other => {
                    detected += 1;
                    println!("  {name} @{offset}: {other:?}");
                    assert!(must_name(file, other), "{name} @{offset}: the report names neither the file nor a seq");
                }
            }
        }
    }
    (tried, detected)
}

fn names_file(file: &Path, o: &Outcome) -> bool {
    let stem = file.file_stem().unwrap().to_string_lossy().trim_start_matches('0').to_string();
    let text = match o {
        Outcome::OpenRefused(m) | Outcome::ReadFailed(m) | Outcome::VerifyFailed(_, m) => m,
        Outcome::Intact => return false,
    };
    text.contains(&*file.file_name().unwrap().to_string_lossy()) || (!stem.is_empty() && text.contains(&stem))
}

#[test]
fn flipped_bytes_in_the_wal_are_reported_never_silently_wrong() {
    // Nothing flushed: every event is in the write-ahead log.
    let p = pristine(40, false);
    let logs = files(p.dir.path(), |n| n.ends_with(".log") && n != "LOG");
    assert!(!logs.is_empty());
    let logs: Vec<PathBuf> = logs.into_iter().filter(|f| std::fs::metadata(f).unwrap().len() > 0).collect();
    let (tried, detected) = sweep(&p, &logs, 24, names_file);
    println!("WAL: {detected} of {tried} flips detected, none silently wrong");
}

#[test]
fn flipped_bytes_in_sst_files_are_reported_never_silently_wrong() {
    let p = pristine(40, true);
    let ssts = files(p.dir.path(), |n| n.ends_with(".sst"));
    assert!(!ssts.is_empty(), "the flush wrote SST files");
    let (tried, detected) =
        sweep(&p, &ssts, 16, |file, o| names_file(file, o) || matches!(o, Outcome::VerifyFailed(..)));
    println!("SST: {detected} of {tried} flips detected, none silently wrong");
}

#[test]
fn flipped_bytes_in_the_manifest_are_reported_never_silently_wrong() {
    let p = pristine(12, true);
    let manifests = files(p.dir.path(), |n| n.starts_with("MANIFEST-"));
    assert!(!manifests.is_empty());
    let (tried, detected) = sweep(&p, &manifests, 24, |file, o| {
        names_file(file, o) || matches!(o, Outcome::OpenRefused(m) if m.contains("MANIFEST"))
    });
    println!("MANIFEST: {detected} of {tried} flips detected, none silently wrong");
}

#[test]
fn a_damaged_stored_event_is_named_by_seq_through_every_read() {
    let p = pristine(10, false);
    let n = p.events.len() as u64;
    let scratch_root = tempfile::tempdir().unwrap();
    let mut detected = 0;
    // For a few seqs: flip one byte of the stored value (through the ledger's own write path,
    // as a bad disk or a stray writer could), at several positions of the record.
    for seq in [1, n / 2, n] {
        for position in [0usize, 1, 2, 20, 60, usize::MAX] {
            let scratch = scratch_root.path().join(format!("s{seq}-{position}"));
            copy_dir(p.dir.path(), &scratch);
            {
                let ledger = open(&scratch).unwrap();
                let key = tables::EventsTable::key(seq);
                let mut raw = ledger.store().get(store::CF_EVENTS, &key).unwrap().unwrap();
                let at = position.min(raw.len() - 1);
                raw[at] ^= 0x5a;
                let mut batch = store::Batch::default();
                batch.put(store::CF_EVENTS, key, raw);
                ledger.store().write(batch, true).unwrap();
            }
            let what = format!("seq {seq} byte {position}");
            match examine(&scratch, &p, &what) {
                Outcome::VerifyFailed(bad, problem) => {
                    assert_eq!(bad, seq, "{what}: verify names the damaged seq ({problem})");
                    detected += 1;
                }
                other => panic!("{what}: expected verify to name seq {seq}, got {other:?}"),
            }
            // A point read of that seq is an error naming it, never another event.
            let ledger = open(&scratch).unwrap();
            match ledger.get(seq) {
                Err(e) => assert!(e.to_string().contains(&format!("seq {seq}")), "{what}: {e}"),
                Ok(Some(e)) => assert!(!e.hash_is_valid() || e.seq != seq || e.hash != p.events[seq as usize - 1].1),
                Ok(None) => panic!("{what}: the damaged event vanished"),
            }
        }
    }
    // A missing event and an event stored under another seq.
    let scratch = scratch_root.path().join("missing");
    copy_dir(p.dir.path(), &scratch);
    {
        let ledger = open(&scratch).unwrap();
        let mut batch = store::Batch::default();
        batch.delete(store::CF_EVENTS, tables::EventsTable::key(3));
        ledger.store().write(batch, true).unwrap();
    }
    assert!(matches!(examine(&scratch, &p, "seq 3 deleted"), Outcome::VerifyFailed(3, _)));
    let scratch = scratch_root.path().join("moved");
    copy_dir(p.dir.path(), &scratch);
    {
        let ledger = open(&scratch).unwrap();
        let raw = ledger.store().get(store::CF_EVENTS, &tables::EventsTable::key(5)).unwrap().unwrap();
        let mut batch = store::Batch::default();
        batch.put(store::CF_EVENTS, tables::EventsTable::key(4), raw);
        ledger.store().write(batch, true).unwrap();
    }
    match examine(&scratch, &p, "seq 5 copied over seq 4") {
        Outcome::VerifyFailed(4, problem) => assert!(problem.contains("seq"), "{problem}"),
        other => panic!("expected seq 4 named, got {other:?}"),
    }
    println!("stored events: {} damaged records named by seq", detected + 2);
}

#[test]
fn a_torn_wal_tail_loses_only_whole_trailing_commands() {
    // A crash while writing leaves an incomplete last record. RocksDB drops it at open
    // (TolerateCorruptedTailRecords); what remains must be whole commands, each as written.
    let p = pristine(20, false);
    let log = files(p.dir.path(), |n| n.ends_with(".log") && n != "LOG").pop().unwrap();
    let len = std::fs::metadata(&log).unwrap().len();
    let scratch_root = tempfile::tempdir().unwrap();
    let boundaries: Vec<u64> = p.keys.iter().map(|(_, r)| r.last).collect();
    for cut in [1u64, 7, 50, 200] {
        let scratch = scratch_root.path().join(format!("cut{cut}"));
        copy_dir(p.dir.path(), &scratch);
        let f = std::fs::OpenOptions::new().write(true).open(scratch.join(log.file_name().unwrap())).unwrap();
        f.set_len(len - cut).unwrap();
        drop(f);
        let ledger = open(&scratch).unwrap_or_else(|e| panic!("cut {cut}: a torn tail blocks opening: {e}"));
        let report = ledger.verify().unwrap();
        assert!(report.ok, "cut {cut}: {report:?}");
        let head = ledger.head().seq;
        assert!(head < p.head.seq, "cut {cut}: the torn record was not dropped");
        assert!(boundaries.contains(&head), "cut {cut}: head {head} splits a command");
        for &(seq, hash) in &p.events[..head as usize] {
            assert_eq!(ledger.get(seq).unwrap().map(|e| e.hash), Some(hash), "cut {cut}: seq {seq}");
        }
        println!("torn tail, {cut} bytes cut: open ok, head {head} of {}, whole commands only", p.head.seq);
    }
}
