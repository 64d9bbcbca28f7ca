//! Where a team keeps a store's witness besides the machine's own copy: a file (a shared mount),
//! an HTTP(S) URL (PUT keeps it, GET reads it back), or a NATS subject (JetStream keeps its last
//! messages), each named by one string as `memledger checkpoint --to` and `memledger verify
//! --witness` take it (docs/adr/0036-signed-checkpoints.md). A machine's disk can be restored
//! from a backup together with its local witness; a witness kept elsewhere cannot.

use std::path::PathBuf;
use std::time::Duration;

use async_nats::jetstream::{self, stream};

use crate::error::LedgerError;
use crate::witness::WitnessRecord;

/// The bearer token sent with an HTTP witness's requests, if set.
pub const TOKEN_VAR: &str = "MEMLEDGER_WITNESS_TOKEN";

/// How long a connection, a request or an acknowledgement may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// How many witness records a stream made for a subject keeps per subject: the newest, and a few
/// before it to look back at.
const KEPT_PER_SUBJECT: i64 = 16;

/// A place a witness is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WitnessPlace {
    File(PathBuf),
    /// `http://…` or `https://…`.
    Http(String),
    /// `nats://[user[:password]@]host:port/SUBJECT`.
    Nats {
        server: String,
        subject: String,
    },
}

impl WitnessPlace {
    /// The place `s` names: a URL by its scheme, else a file path.
    pub fn parse(s: &str) -> Result<WitnessPlace, LedgerError> {
        if s.starts_with("http://") || s.starts_with("https://") {
            return Ok(WitnessPlace::Http(s.to_string()));
        }
        if s.starts_with("nats://") {
            // a witness is one store's: the URL names its subject (no default shared by all)
            let (server, subject) = crate::nats::parse_url_or(s, "").map_err(|e| LedgerError::WitnessPlace {
                location: crate::nats::redact(s),
                message: format!("{e} (e.g. memledger.witness.laptop, one subject per store)"),
            })?;
            return Ok(WitnessPlace::Nats { server, subject });
        }
        Ok(WitnessPlace::File(PathBuf::from(s)))
    }

    /// The place as it may be shown (a password left out).
    pub fn shown(&self) -> String {
        match self {
            WitnessPlace::File(path) => path.display().to_string(),
            WitnessPlace::Http(url) => crate::nats::redact(url),
            WitnessPlace::Nats { server, subject } => format!("nats://{}/{subject}", crate::nats::redact(server)),
        }
    }

    fn failed(&self, message: impl std::fmt::Display) -> LedgerError {
        LedgerError::WitnessPlace { location: self.shown(), message: message.to_string() }
    }

    /// The witness kept here; `None` when nothing is kept here yet (no file, HTTP 404, no
    /// message on the subject).
    pub fn read(&self) -> Result<Option<WitnessRecord>, LedgerError> {
        let bytes = match self {
            WitnessPlace::File(path) => {
                return match WitnessRecord::read(path) {
                    Ok(witness) => Ok(Some(witness)),
                    Err(LedgerError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(e),
                };
            }
            WitnessPlace::Http(url) => match self.block_on(http_get(url))? {
                Some(bytes) => bytes,
                None => return Ok(None),
            },
            WitnessPlace::Nats { server, subject } => match self.block_on(nats_last(server, subject))? {
                Some(bytes) => bytes,
                None => return Ok(None),
            },
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| self.failed(format!("what is kept there is not a witness record: {e}")))
    }

    /// Keep `witness` here, replacing what was kept (a file whole, by rename; an HTTP PUT; a
    /// message published and acknowledged).
    pub fn keep(&self, witness: &WitnessRecord) -> Result<(), LedgerError> {
        match self {
            WitnessPlace::File(path) => witness.write(path),
            WitnessPlace::Http(url) => self.block_on(http_put(url, witness.to_json()?)),
            WitnessPlace::Nats { server, subject } => self.block_on(nats_publish(server, subject, witness.to_json()?)),
        }
    }

    fn block_on<T>(&self, work: impl Future<Output = Result<T, String>>) -> Result<T, LedgerError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| self.failed(format!("cannot start its client: {e}")))?;
        runtime
            .block_on(async { tokio::time::timeout(TIMEOUT * 3, work).await })
            .map_err(|_| self.failed("timed out"))?
            .map_err(|e| self.failed(e))
    }
}

fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder().timeout(TIMEOUT).build().map_err(|e| format!("cannot start its client: {e}"))
}

fn authorized(request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    match std::env::var(TOKEN_VAR) {
        Ok(token) if !token.is_empty() => request.bearer_auth(token),
        _ => request,
    }
}

async fn http_get(url: &str) -> Result<Option<Vec<u8>>, String> {
    let response = authorized(http_client()?.get(url)).send().await.map_err(|e| e.without_url().to_string())?;
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !response.status().is_success() {
        return Err(format!("GET answered {}", response.status()));
    }
    response.bytes().await.map(|b| Some(b.to_vec())).map_err(|e| e.without_url().to_string())
}

async fn http_put(url: &str, body: Vec<u8>) -> Result<(), String> {
    let request = http_client()?.put(url).header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
    let response = authorized(request).send().await.map_err(|e| e.without_url().to_string())?;
    if !response.status().is_success() {
        return Err(format!("PUT answered {}", response.status()));
    }
    Ok(())
}

/// A JetStream context on `server`, and the stream that captures `subject`, made (keeping the
/// last few messages of each subject, on disk) when none does.
async fn nats_stream(server: &str, subject: &str) -> Result<(jetstream::Context, stream::Stream), String> {
    let client = async_nats::ConnectOptions::new()
        .name("memledger witness")
        .connection_timeout(TIMEOUT)
        .connect(format!("nats://{server}"))
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    let mut js = jetstream::new(client);
    js.set_timeout(TIMEOUT);
    let stream = match js.stream_by_subject(subject.to_string()).await {
        Ok(name) => js.get_stream(&name).await.map_err(|e| format!("stream {name}: {e}"))?,
        Err(e) if e.kind() == jetstream::context::GetStreamByNameErrorKind::NotFound => js
            .create_stream(stream::Config {
                name: crate::nats::stream_name(subject),
                description: Some(
                    "memledger witnesses: a store's newest signed checkpoint (memledger checkpoint --to)".into(),
                ),
                subjects: vec![subject.to_string()],
                max_messages_per_subject: KEPT_PER_SUBJECT,
                storage: stream::StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|e| format!("no stream captures {subject} and creating one failed: {e}"))?,
        Err(e) => return Err(format!("cannot look up the stream of {subject}: {e}")),
    };
    Ok((js, stream))
}

async fn nats_last(server: &str, subject: &str) -> Result<Option<Vec<u8>>, String> {
    let (_, stream) = nats_stream(server, subject).await?;
    match stream.get_last_raw_message_by_subject(subject).await {
        Ok(message) => Ok(Some(message.payload.to_vec())),
        Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(None),
        Err(e) => Err(format!("cannot read the last message of {subject}: {e}")),
    }
}

async fn nats_publish(server: &str, subject: &str, body: Vec<u8>) -> Result<(), String> {
    let (js, _) = nats_stream(server, subject).await?;
    js.publish(subject.to_string(), body.into())
        .await
        .map_err(|e| format!("cannot publish: {e}"))?
        .await
        .map_err(|e| format!("the publish was not acknowledged: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_is_named_by_its_scheme() {
        assert_eq!(WitnessPlace::parse("/mnt/w.json").unwrap(), WitnessPlace::File("/mnt/w.json".into()));
        assert_eq!(
            WitnessPlace::parse("https://w.example/laptop").unwrap(),
            WitnessPlace::Http("https://w.example/laptop".into())
        );
        let nats = WitnessPlace::parse("nats://ann:secret@127.0.0.1:4222/memledger.witness.laptop").unwrap();
        assert_eq!(nats.shown(), "nats://ann:***@127.0.0.1:4222/memledger.witness.laptop");
        let err = WitnessPlace::parse("nats://127.0.0.1:4222").unwrap_err().to_string();
        assert!(err.contains("name the subject") && err.contains("one subject per store"), "{err}");
        assert!(WitnessPlace::parse("nats://127.0.0.1:4222/a.*").is_err());
    }
}
