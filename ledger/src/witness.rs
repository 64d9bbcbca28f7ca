//! The witness: the newest signed checkpoint of a store, kept outside it (beside the signing
//! key), so that a store restored from an older copy, truncated, or rewritten from its start is
//! refused when it is opened (docs/adr/0036-signed-checkpoints.md).
//!
//! Every file in the store's directory can be copied back from a backup together; the witness
//! cannot be, because it is not there. It names the store by its canonical path and its
//! [`StoreId`], and holds the head (seq, hash) of the last synced commit with its signature.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use memledger_schemas::Hash;
use serde::{Deserialize, Serialize};

use crate::error::LedgerError;
use crate::signing::{KeyId, StoreId, hex, unhex};
use crate::tables::Head;

/// A witness as its file holds it (JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WitnessRecord {
    /// The layout of this record: 1.
    pub version: u32,
    /// The store's directory, canonical, when the witness was written.
    pub store: String,
    pub store_id: String,
    pub seq: u64,
    pub hash: String,
    /// The key that signed the checkpoint, and its signature.
    pub key_id: String,
    pub signature: String,
}

impl WitnessRecord {
    pub fn new(store: &Path, store_id: StoreId, head: Head, key: KeyId, signature: &[u8; 64]) -> WitnessRecord {
        WitnessRecord {
            version: 1,
            store: store.display().to_string(),
            store_id: store_id.hex(),
            seq: head.seq,
            hash: head.hash.hex(),
            key_id: key.hex(),
            signature: hex(signature),
        }
    }

    /// The parts, or what is wrong with the record.
    pub fn parts(&self) -> Result<(StoreId, Head, KeyId, [u8; 64]), String> {
        let store_id = unhex::<16>(&self.store_id).ok_or("store_id is not 32 hex digits")?;
        let hash = Hash::parse_hex(&self.hash).ok_or("hash is not 64 hex digits")?;
        let key = unhex::<8>(&self.key_id).ok_or("key_id is not 16 hex digits")?;
        let signature = unhex::<64>(&self.signature).ok_or("signature is not 128 hex digits")?;
        Ok((StoreId(store_id), Head { seq: self.seq, hash }, KeyId(key), signature))
    }

    /// Read a witness file.
    pub fn read(path: &Path) -> Result<WitnessRecord, LedgerError> {
        let bytes = std::fs::read(path)?;
        serde_json::from_slice(&bytes).map_err(|e| {
            LedgerError::Inconsistent(format!("the witness {} is not a witness record: {e}", path.display()))
        })
    }

    /// The record as its file holds it: pretty JSON and a newline.
    pub fn to_json(&self) -> Result<Vec<u8>, LedgerError> {
        let mut json = serde_json::to_vec_pretty(self).map_err(|e| LedgerError::Inconsistent(e.to_string()))?;
        json.push(b'\n');
        Ok(json)
    }

    /// Write it to `path` whole: a temporary file renamed over it, so a reader never meets half
    /// of one.
    pub fn write(&self, path: &Path) -> Result<(), LedgerError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, self.to_json()?)?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    }
}

/// The witness file of the store at `store` in the witness directory `dir`: named by the
/// blake3 of the store's canonical path, so a store moved elsewhere starts a witness of its own.
pub fn witness_path(dir: &Path, store: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(store).unwrap_or_else(|_| store.to_path_buf());
    let digest = blake3::hash(canonical.as_os_str().as_encoded_bytes());
    dir.join(format!("{}.json", &digest.to_hex()[..32]))
}

/// How often at most the witness file is rewritten while commits keep coming.
const WRITE_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// Writes a store's witness on a thread of its own, the newest record winning: a synced commit
/// hands its checkpoint over and returns, instead of waiting for a file to be written and
/// renamed, and a stream of commits rewrites the file at most every [`WRITE_EVERY`]. Dropping it
/// writes what is pending at once. A witness lost to a kill lags behind the store,
/// which weakens the check and breaks nothing.
pub(crate) struct WitnessWriter {
    shared: Arc<(Mutex<Pending>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct Pending {
    record: Option<WitnessRecord>,
    /// The highest seq submitted: a sync that finishes after a later commit's never moves the
    /// witness back.
    newest: u64,
    stop: bool,
}

impl WitnessWriter {
    pub(crate) fn start(path: PathBuf) -> WitnessWriter {
        let shared: Arc<(Mutex<Pending>, Condvar)> = Arc::default();
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("memledger-witness".into())
            .spawn(move || {
                let (lock, wake) = &*theirs;
                loop {
                    let (record, stop) = {
                        let mut pending = lock.lock().unwrap_or_else(|p| p.into_inner());
                        while pending.record.is_none() && !pending.stop {
                            pending = wake.wait(pending).unwrap_or_else(|p| p.into_inner());
                        }
                        (pending.record.take(), pending.stop)
                    };
                    if let Some(record) = record {
                        let _ = record.write(&path);
                    }
                    if stop {
                        return;
                    }
                    // At most one file a tick: commits in between only move the newest record.
                    let pending = lock.lock().unwrap_or_else(|p| p.into_inner());
                    let _ = wake.wait_timeout_while(pending, WRITE_EVERY, |p| !p.stop);
                }
            })
            .ok();
        WitnessWriter { shared, thread }
    }

    /// Write `record` soon, unless a newer one comes first (or came before).
    pub(crate) fn submit(&self, record: WitnessRecord) {
        let (lock, wake) = &*self.shared;
        let mut pending = lock.lock().unwrap_or_else(|p| p.into_inner());
        if record.seq < pending.newest {
            return;
        }
        pending.newest = record.seq;
        pending.record = Some(record);
        drop(pending);
        wake.notify_one();
    }
}

impl Drop for WitnessWriter {
    fn drop(&mut self) {
        let (lock, wake) = &*self.shared;
        lock.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
