//! Export and import of the event stream as JSON Lines (schema: `schemas/json/event-line.schema.json`).
//!
//! Import is all-or-nothing: every line is parsed and the whole chain is checked before one byte
//! is written. A stream that shares this store's prefix appends only what is new; a tampered,
//! reordered or diverging stream is refused.

use std::io::{BufRead, Write};

use memledger_schemas::{Event, Hash};
use serde::Serialize;

use crate::error::{ImportError, LedgerError};
use crate::ledger::Ledger;
use crate::store::Batch;
use crate::tables::{EventsTable, Head, IdempotencyTable, MetaTable, SeqRange};

/// What an import did.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ImportReport {
    /// Events in the stream.
    pub read: u64,
    /// Events already in the store.
    pub already_present: u64,
    /// Events appended.
    pub appended: u64,
    pub head_seq: u64,
}

impl Ledger {
    /// Write every event with `seq >= since` as one JSON line each. Returns the count.
    pub fn export(&self, since: u64, out: &mut dyn Write) -> Result<u64, LedgerError> {
        let mut n = 0;
        for event in self.scan(since)? {
            let event = event?;
            serde_json::to_writer(&mut *out, &event).map_err(|e| LedgerError::Io(e.into()))?;
            out.write_all(b"\n")?;
            n += 1;
        }
        out.flush()?;
        Ok(n)
    }

    /// Import a JSON Lines stream. Nothing is written unless the whole stream is valid.
    pub fn import(&self, input: &mut dyn BufRead) -> Result<ImportReport, ImportError> {
        let stream = read_stream(input)?;
        self.import_stream(stream)
    }

    /// Import a stream already read and checked by [`read_stream`].
    pub fn import_stream(&self, stream: Stream) -> Result<ImportReport, ImportError> {
        if let Some(log) = self.shared() {
            // Into the shared log, which orders it; this store copies the result.
            let report = log.import_stream(stream)?;
            self.catch_up_shared()?;
            return Ok(report);
        }
        let stream = stream.events;
        let read = stream.len() as u64;
        // 3. Under the append lock: it must share this store's prefix.
        self.may_append()?;
        let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
        let Some((_, first)) = stream.first() else {
            return Ok(ImportReport { read: 0, already_present: 0, appended: 0, head_seq: head.seq });
        };
        if first.seq > head.seq + 1 {
            return Err(ImportError::Diverged {
                seq: first.seq,
                message: format!("the stream starts at seq {} but this store ends at seq {}", first.seq, head.seq),
            });
        }
        if first.seq > 1 {
            let anchor = EventsTable::get(self.store(), first.seq - 1)?
                .ok_or_else(|| LedgerError::Inconsistent(format!("seq {} missing", first.seq - 1)))?;
            if anchor.hash != first.prev_hash {
                return Err(ImportError::Diverged {
                    seq: first.seq,
                    message: "its first event does not link to this store's event before it".into(),
                });
            }
        }
        let mut already_present = 0;
        let mut batch = Batch::default();
        let mut next = *head;
        for (_, event) in &stream {
            if event.seq <= head.seq {
                let stored = EventsTable::get(self.store(), event.seq)?;
                if stored.as_ref().map(|s| s.hash) != Some(event.hash) {
                    return Err(ImportError::Diverged {
                        seq: event.seq,
                        message: "a different event is stored there".into(),
                    });
                }
                already_present += 1;
                continue;
            }
            EventsTable::put(&mut batch, event);
            next = Head { seq: event.seq, hash: event.hash };
        }
        let new_events = stream.iter().map(|(_, e)| e).filter(|e| e.seq > head.seq);
        for (key, range) in idempotency_ranges(new_events) {
            IdempotencyTable::put(&mut batch, &key, range);
        }
        let appended = next.seq - head.seq;
        if appended > 0 {
            MetaTable::put_head(&mut batch, next);
            // This machine vouches for what it imported: the new head is signed as an append's.
            let signature = self.seal(&mut batch, next);
            self.store().write(batch, true)?;
            *head = next;
            if let Some(signature) = signature {
                self.write_witness(next, &signature);
            }
            self.record_behind.store(false, std::sync::atomic::Ordering::Relaxed);
            // The imported events carry their own times: read the head's again on next append.
            *self.last_recorded_at.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
        Ok(ImportReport { read, already_present, appended, head_seq: head.seq })
    }
}

/// The idempotency keys of consecutive events, each with its command's seqs: a key is on the
/// first event of its command, whose later events share its correlation id and carry no key.
pub fn idempotency_ranges<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<(String, SeqRange)> {
    let mut out: Vec<(String, SeqRange)> = Vec::new();
    let mut open: Option<(memledger_schemas::CorrelationId, usize)> = None;
    for event in events {
        match open {
            Some((corr, at)) if corr == event.correlation_id && event.idempotency_key.is_none() => {
                out[at].1.last = event.seq;
            }
            _ => {
                open = event.idempotency_key.as_ref().map(|key| {
                    out.push((key.clone(), SeqRange { first: event.seq, last: event.seq }));
                    (event.correlation_id, out.len() - 1)
                });
            }
        }
    }
    out
}

/// A parsed event stream whose chain has been checked: consecutive seqs, each event linked to the
/// one before and hashed correctly. Whether it fits a store is checked on import.
pub struct Stream {
    events: Vec<(usize, Event)>,
}

impl Stream {
    /// A stream of events already in memory (a prefix of a ledger, say), its chain checked.
    pub fn from_events(events: Vec<Event>) -> Result<Stream, ImportError> {
        let events: Vec<(usize, Event)> = events.into_iter().enumerate().map(|(i, e)| (i + 1, e)).collect();
        check_chain(&events)?;
        Ok(Stream { events })
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }
    /// The events, in order.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.events.iter().map(|(_, e)| e)
    }
    /// The events with the line of the stream each was read from.
    pub fn numbered(&self) -> impl Iterator<Item = (usize, &Event)> {
        self.events.iter().map(|(line, e)| (*line, e))
    }
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// Read and check a JSON Lines stream, touching no store.
pub fn read_stream(input: &mut dyn BufRead) -> Result<Stream, ImportError> {
    // 1. Parse every line.
    let mut stream: Vec<(usize, Event)> = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let number = i + 1;
        let line = match line {
            Ok(line) => line,
            // Bytes that are not UTF-8 are bad input on that line, not an i/o failure.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(ImportError::Parse { line: number, message: "the line is not valid UTF-8".into() });
            }
            Err(e) => return Err(e.into()),
        };
        if line.trim().is_empty() {
            continue;
        }
        let event: Event =
            serde_json::from_str(&line).map_err(|e| ImportError::Parse { line: number, message: e.to_string() })?;
        stream.push((number, event));
    }

    check_chain(&stream)?;
    Ok(Stream { events: stream })
}

/// The stream must be one unbroken chain: consecutive seqs, each linked and hashed.
fn check_chain(stream: &[(usize, Event)]) -> Result<(), ImportError> {
    for (k, (line, event)) in stream.iter().enumerate() {
        if !memledger_schemas::codec::READABLE_FORMATS.contains(&event.format) {
            return Err(ImportError::Chain {
                line: *line,
                seq: event.seq,
                message: format!("unknown format {}", event.format),
            });
        }
        if event.body.needs_format() > event.format {
            return Err(ImportError::Chain {
                line: *line,
                seq: event.seq,
                message: format!(
                    "a {} event needs format {}, but this one says format {}",
                    event.body.type_name(),
                    event.body.needs_format(),
                    event.format
                ),
            });
        }
        if event.seq == 0 {
            return Err(ImportError::Chain { line: *line, seq: 0, message: "seqs start at 1".into() });
        }
        if !event.hash_is_valid() {
            return Err(ImportError::Chain {
                line: *line,
                seq: event.seq,
                message: "hash does not match the event's contents (tampered or corrupted)".into(),
            });
        }
        if k > 0 {
            let prev = &stream[k - 1].1;
            if event.seq != prev.seq + 1 {
                return Err(ImportError::Chain {
                    line: *line,
                    seq: event.seq,
                    message: format!(
                        "expected seq {} after seq {} (lines missing or out of order)",
                        prev.seq + 1,
                        prev.seq
                    ),
                });
            }
            if event.prev_hash != prev.hash {
                return Err(ImportError::Chain {
                    line: *line,
                    seq: event.seq,
                    message: "prev_hash does not link to the previous line".into(),
                });
            }
        } else if event.seq == 1 && event.prev_hash != Hash::GENESIS {
            return Err(ImportError::Chain {
                line: *line,
                seq: 1,
                message: "the first event must link to the genesis hash".into(),
            });
        }
    }

    Ok(())
}
