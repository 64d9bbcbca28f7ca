//! Transcript import progress (`memledger import sessions`, docs/import.md): for each transcript
//! file the offset its import reached and the hash of the bytes before it, and for each
//! transcript (its agent and session, else its file) the chunks whose extraction was committed.
//! Rebuilt from the `transcript_progressed` events like every view, so an import asks this view
//! where to resume instead of scanning the ledger.
//!
//! Table `transcripts`, keys (see docs/format.md):
//! - `f ‖ file` → [`FileProgress`], the file's latest progress (a file read again from its start,
//!   rewritten under its name, moves it back)
//! - `c ‖ digest8(identity) ‖ chunk_hash` → the seq (u64 BE) of the event that committed it

use bincode::{Decode, Encode};
use memledger_ledger::store::Store;
use memledger_schemas::*;
use serde::Serialize;

use crate::error::ProjectError;
use crate::framework::{Projector, ViewTxn};
use crate::keys::{digest8, key};

pub const TABLE: &str = "transcripts";
const VERSION: u32 = 1;

/// Where an import of one file stands.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct FileProgress {
    pub agent: String,
    pub file: String,
    pub session: Option<String>,
    /// Bytes of the file read and committed.
    pub offset: u64,
    /// blake3 of those bytes.
    pub prefix_hash: Hash,
    /// The last line committed.
    pub last_line: u32,
    /// Chunks committed for the file, and the memories they saved, over every import of it.
    pub chunks: u64,
    pub memories: u64,
    /// The seq and time of its latest progress event.
    pub seq: u64,
    pub at: Timestamp,
}

/// What makes two transcripts one: the agent and its session, else the file (as
/// [`MemoryObserved::source_identity`] names an imported memory's source).
pub fn identity(agent: &str, session: Option<&str>, file: &str) -> String {
    match session {
        Some(s) => format!("{agent}:{s}"),
        None => format!("{agent}:{file}"),
    }
}

fn fkey(file: &str) -> Vec<u8> {
    key(b'f', &[file.as_bytes()])
}

fn ckey(identity: &str, chunk: &Hash) -> Vec<u8> {
    key(b'c', &[&digest8(identity)[..], &chunk.0[..]])
}

pub struct TranscriptsProjector;

impl Projector for TranscriptsProjector {
    fn name(&self) -> &'static str {
        TABLE
    }

    fn version(&self) -> u32 {
        VERSION
    }

    fn ignores(&self, event_type: &str) -> bool {
        event_type != "transcript_progressed"
    }

    fn apply(&self, event: &Event, txn: &mut ViewTxn<'_>) -> Result<(), ProjectError> {
        let EventBody::TranscriptProgressed(b) = &event.body else { return Ok(()) };
        let before: Option<FileProgress> = txn.get_record(&fkey(&b.file))?;
        let (chunks, memories) = before.map_or((0, 0), |p| (p.chunks, p.memories));
        let record = FileProgress {
            agent: b.agent.clone(),
            file: b.file.clone(),
            session: b.session.clone(),
            offset: b.offset,
            prefix_hash: b.prefix_hash,
            last_line: b.last_line,
            chunks: chunks + 1,
            memories: memories + b.memories.len() as u64,
            seq: event.seq,
            at: event.recorded_at,
        };
        txn.put_record(fkey(&b.file), &record);
        let id = identity(&b.agent, b.session.as_deref(), &b.file);
        txn.put(ckey(&id, &b.chunk_hash), event.seq.to_be_bytes().to_vec());
        Ok(())
    }
}

/// Read queries over the import progress.
pub struct TranscriptReader<'a> {
    store: &'a Store,
}

impl<'a> TranscriptReader<'a> {
    pub fn new(store: &'a Store) -> Self {
        TranscriptReader { store }
    }

    /// Where the import of `file` stands, if it ever committed a chunk.
    pub fn file(&self, file: &str) -> Result<Option<FileProgress>, ProjectError> {
        self.store
            .get(TABLE, &fkey(file))?
            .map(|bytes| {
                memledger_schemas::codec::decode(&bytes).map_err(|source| ProjectError::Codec { view: TABLE, source })
            })
            .transpose()
    }

    /// The chunks committed for the transcript `identity` ([`identity`]).
    pub fn chunks(&self, identity: &str) -> Result<Vec<Hash>, ProjectError> {
        let prefix = key(b'c', &[&digest8(identity)[..]]);
        let mut out = Vec::new();
        for item in self.store.scan_prefix(TABLE, &prefix)? {
            let (k, _) = item?;
            if let Ok(bytes) = <[u8; 32]>::try_from(&k[prefix.len()..]) {
                out.push(Hash(bytes));
            }
        }
        Ok(out)
    }
}
