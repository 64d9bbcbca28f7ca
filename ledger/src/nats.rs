//! The NATS JetStream mirror of a ledger: each event one message on a subject, in seq order.
//!
//! Every message carries `Nats-Msg-Id` = the event's seq and
//! `Nats-Expected-Last-Subject-Sequence` = the stream sequence of the previous event's message
//! (0 for the first), so JetStream stores a message only right after its predecessor: the
//! subject is a gap-free, duplicate-free copy of the ledger whatever is killed when. The resume
//! point is the subject's last message, read from JetStream. Publishes are pipelined: each
//! expects the sequence its predecessor will get when nothing else writes to the stream, and a
//! wrong guess is refused by JetStream like any other moved mirror (the streamer reads the
//! resume point again). The stream is created when no stream captures the subject
//! (docs/adr/0022-event-stream-mirror.md says why its limits are what they are).

use std::collections::VecDeque;
use std::time::Duration;

use async_nats::header::{NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, NATS_MESSAGE_ID};
use async_nats::jetstream::{self, context::PublishErrorKind, stream};
use memledger_schemas::Event;

use crate::sink::{EventSink, SinkError, event_line};
use crate::tables::Head;

/// The subject a URL without one publishes to.
pub const DEFAULT_SUBJECT: &str = "memledger.events";

/// How long JetStream remembers a `Nats-Msg-Id` (a duplicate within it is dropped): the window of
/// a publish retried after its acknowledgement was lost. The expected-sequence check, not this
/// window, is what keeps the mirror exact.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(120);

/// Publishes awaiting their acknowledgement at once.
const IN_FLIGHT: usize = 256;

/// How long a connection, a request or an acknowledgement may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A JetStream subject that mirrors a ledger.
pub struct NatsSink {
    runtime: tokio::runtime::Runtime,
    jetstream: jetstream::Context,
    stream: stream::Stream,
    subject: String,
    location: String,
    /// The stream sequence of the subject's last message (0: none), once the resume point or a
    /// publish has read it.
    last_message: u64,
    /// The stream sequence the next message is expected to get.
    next_message: u64,
}

impl NatsSink {
    /// Connect to `nats://HOST:PORT[/SUBJECT]` and find the stream that captures the subject,
    /// creating one (named after the subject) when there is none.
    pub fn connect(url: &str) -> Result<NatsSink, SinkError> {
        let (server, subject) = parse_url(url)?;
        let location = format!("nats://{}/{subject}", redact(&server));
        let failed = |message: String| SinkError::Failed { location: location.clone(), message };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("memledger-nats")
            .enable_all()
            .build()
            .map_err(|e| failed(format!("cannot start its client: {e}")))?;
        let (jetstream, stream) = runtime.block_on(async {
            let client = async_nats::ConnectOptions::new()
                .name("memledger stream")
                .connection_timeout(TIMEOUT)
                .connect(format!("nats://{server}"))
                .await
                .map_err(|e| failed(format!("cannot connect: {e}")))?;
            let mut jetstream = jetstream::new(client);
            jetstream.set_timeout(TIMEOUT);
            let stream = match jetstream.stream_by_subject(subject.clone()).await {
                Ok(name) => jetstream.get_stream(&name).await.map_err(|e| failed(format!("stream {name}: {e}")))?,
                Err(e) if e.kind() == jetstream::context::GetStreamByNameErrorKind::NotFound => jetstream
                    .create_stream(stream_config(&subject))
                    .await
                    .map_err(|e| failed(format!("no stream captures {subject} and creating one failed: {e}")))?,
                Err(e) => return Err(failed(format!("cannot look up the stream of {subject}: {e}"))),
            };
            Ok((jetstream, stream))
        })?;
        let location = format!("{location} (stream {})", stream.cached_info().config.name);
        Ok(NatsSink { runtime, jetstream, stream, subject, location, last_message: 0, next_message: 1 })
    }

    fn failed(&self, message: impl std::fmt::Display) -> SinkError {
        SinkError::Failed { location: self.location.clone(), message: message.to_string() }
    }

    async fn read_resume_point(&mut self) -> Result<Head, SinkError> {
        let stream_last = match self.stream.info().await {
            Ok(info) => info.state.last_sequence,
            Err(e) => return Err(self.failed(format!("cannot read the stream's state: {e}"))),
        };
        let last = match self.stream.get_last_raw_message_by_subject(&self.subject).await {
            Ok(message) => message,
            Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => {
                (self.last_message, self.next_message) = (0, stream_last + 1);
                return Ok(Head::EMPTY);
            }
            Err(e) => return Err(self.failed(format!("cannot read the subject's last message: {e}"))),
        };
        let diverged = |message: String| SinkError::Diverged { location: self.location.clone(), message };
        let id = last.headers.get(NATS_MESSAGE_ID).map(|v| v.as_str().to_string());
        let event: Event = serde_json::from_slice(&last.payload).map_err(|e| {
            diverged(format!("its last message (stream sequence {}) is not a ledger event: {e}", last.sequence))
        })?;
        if id.as_deref() != Some(event.seq.to_string().as_str()) {
            return Err(diverged(format!(
                "its last message (stream sequence {}) has Nats-Msg-Id {id:?}, not its event's seq {}",
                last.sequence, event.seq
            )));
        }
        (self.last_message, self.next_message) = (last.sequence, stream_last.max(last.sequence) + 1);
        Ok(Head { seq: event.seq, hash: event.hash })
    }

    async fn publish_all(&mut self, events: &[Event]) -> Result<(), SinkError> {
        let mut pending: VecDeque<(u64, jetstream::context::PublishAckFuture)> = VecDeque::new();
        let (mut expected_last, mut next) = (self.last_message, self.next_message);
        let mut outcome = Ok(());
        for event in events {
            if pending.len() >= IN_FLIGHT {
                let (seq, ack) = pending.pop_front().expect("a publish in flight");
                if let Err(e) = self.acknowledged(seq, ack.await) {
                    outcome = Err(e);
                    break;
                }
            }
            let mut headers = async_nats::HeaderMap::new();
            headers.insert(NATS_MESSAGE_ID, event.seq.to_string().as_str());
            headers.insert(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, expected_last.to_string().as_str());
            let sent = self
                .jetstream
                .publish_with_headers(self.subject.clone(), headers, event_line(event).into())
                .await
                .map_err(|e| self.failed(format!("cannot publish seq {}: {e}", event.seq)));
            match sent {
                Ok(ack) => pending.push_back((event.seq, ack)),
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
            (expected_last, next) = (next, next + 1);
        }
        // Every publish sent is awaited, so that none is left to land after a retry.
        for (seq, ack) in pending {
            let result = self.acknowledged(seq, ack.await);
            if outcome.is_ok() {
                outcome = result;
            }
        }
        outcome
    }

    /// Take in one acknowledgement: where the subject now ends.
    fn acknowledged(
        &mut self,
        seq: u64,
        ack: Result<jetstream::publish::PublishAck, jetstream::context::PublishError>,
    ) -> Result<(), SinkError> {
        match ack {
            Ok(ack) => {
                (self.last_message, self.next_message) = (ack.sequence, ack.sequence + 1);
                Ok(())
            }
            Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => Err(SinkError::Moved {
                location: self.location.clone(),
                message: format!("seq {seq} was refused: the subject does not end where this streamer expected"),
            }),
            Err(e) => Err(self.failed(format!("seq {seq} was not acknowledged: {e}"))),
        }
    }
}

impl EventSink for NatsSink {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn resume_point(&mut self) -> Result<Head, SinkError> {
        let runtime = tokio::runtime::Handle::clone(self.runtime.handle());
        runtime.block_on(self.read_resume_point())
    }

    fn publish(&mut self, events: &[Event]) -> Result<(), SinkError> {
        let runtime = tokio::runtime::Handle::clone(self.runtime.handle());
        runtime.block_on(self.publish_all(events))
    }
}

/// The stream made for a subject no stream captures: every message kept (limits retention, no
/// maximum), on disk, and neither a message deleted nor the stream purged, as the ledger is
/// append-only.
fn stream_config(subject: &str) -> stream::Config {
    stream::Config {
        name: stream_name(subject),
        description: Some("memledger's events, one message per event in seq order (memledger stream)".into()),
        subjects: vec![subject.to_string()],
        retention: stream::RetentionPolicy::Limits,
        storage: stream::StorageType::File,
        discard: stream::DiscardPolicy::New,
        duplicate_window: DUPLICATE_WINDOW,
        deny_delete: true,
        deny_purge: true,
        ..Default::default()
    }
}

/// A stream's name for a subject: its tokens joined by `_` (stream names cannot hold dots).
pub fn stream_name(subject: &str) -> String {
    subject.replace('.', "_")
}

/// The server part (`[user[:password]@]host:port`) and the subject of a `nats://` URL
/// ([`DEFAULT_SUBJECT`] when it names none).
fn parse_url(url: &str) -> Result<(String, String), SinkError> {
    parse_url_or(url, DEFAULT_SUBJECT)
}

/// [`parse_url`] with `default` for the subject a URL leaves out ("": it must name one).
pub(crate) fn parse_url_or(url: &str, default: &str) -> Result<(String, String), SinkError> {
    let bad = |message: &str| SinkError::BadUrl { url: redact(url), message: message.into() };
    let rest = url.strip_prefix("nats://").ok_or_else(|| bad("not a nats:// URL"))?;
    let (server, subject) = match rest.split_once('/') {
        Some((server, "")) => (server, default),
        Some((server, subject)) => (server, subject),
        None => (rest, default),
    };
    if subject.is_empty() {
        return Err(bad("name the subject: nats://HOST:PORT/SUBJECT"));
    }
    if server.is_empty() {
        return Err(bad("no server: nats://HOST:PORT[/SUBJECT]"));
    }
    let token_ok = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !subject.split('.').all(token_ok) {
        return Err(bad(
            "the subject must be dot-separated tokens of letters, digits, '-' and '_' (no wildcards): e.g. memledger.events",
        ));
    }
    Ok((server.to_string(), subject.to_string()))
}

/// A URL (or its server part) without the password.
pub(crate) fn redact(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").map_or(("", url), |(s, r)| (s, r));
    let shown = match rest.split_once('@') {
        Some((user, host)) if user.contains(':') => {
            format!("{}:***@{host}", user.split(':').next().unwrap_or_default())
        }
        _ => rest.to_string(),
    };
    if scheme.is_empty() { shown } else { format!("{scheme}://{shown}") }
}
