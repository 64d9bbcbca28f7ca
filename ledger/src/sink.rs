//! Sinks: where `memledger stream` mirrors the ledger, event by event, so that the mirror holds
//! exactly the ledger's events in order — none skipped, none twice — across restarts.
//!
//! A sink says where its mirror stands by reading the mirror itself ([`EventSink::resume_point`]),
//! never from a checkpoint of the streamer's, so a streamer killed at any point resumes right.
//! Each publish is conditional on the mirror's last message being the one the streamer expects,
//! so two streamers (or a stale one) cannot interleave. NATS JetStream is the one
//! implementation ([`crate::nats::NatsSink`]); docs/shared-ledger.md says what a Kafka sink
//! would take.

use memledger_schemas::Event;

use crate::tables::Head;

/// A mirror of the ledger outside it.
pub trait EventSink: Send {
    /// Where the mirror is, for messages (a URL without its password, the stream's name).
    fn location(&self) -> String;
    /// The last event the mirror holds (its seq and hash; [`Head::EMPTY`] when it holds none),
    /// read from the mirror. Publishing continues from the event after it.
    fn resume_point(&mut self) -> Result<Head, SinkError>;
    /// Publish `events`, which follow the resume point (or the previous publish) without a gap,
    /// and return once the mirror has acknowledged every one.
    fn publish(&mut self, events: &[Event]) -> Result<(), SinkError>;
}

/// A sink refused or failed a publish.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// Someone else published to the mirror since its resume point was read: read it again.
    #[error("{location}: the mirror moved under this streamer: {message}")]
    Moved { location: String, message: String },
    /// The mirror holds what is not this ledger's prefix (another ledger's events, or more).
    #[error("{location}: {message}")]
    Diverged { location: String, message: String },
    /// The URL is not one a sink understands.
    #[error("{url}: {message}")]
    BadUrl { url: String, message: String },
    /// The mirror's server could not be reached or refused: nothing more was acknowledged.
    #[error("{location}: {message}")]
    Failed { location: String, message: String },
}

/// The payload of an event in a mirror: the line `memledger export` prints for it, without the
/// newline that ends the line.
pub fn event_line(event: &Event) -> Vec<u8> {
    serde_json::to_vec(event).expect("an event serialises to JSON")
}

/// Connect to the mirror a URL names (`nats://HOST:PORT[/SUBJECT]`), creating it when missing.
pub fn connect(url: &str) -> Result<Box<dyn EventSink>, SinkError> {
    if url.starts_with("nats://") {
        Ok(Box::new(crate::nats::NatsSink::connect(url)?))
    } else {
        Err(SinkError::BadUrl {
            url: url.into(),
            message: "not a sink URL this build knows (nats://HOST:PORT[/SUBJECT])".into(),
        })
    }
}
