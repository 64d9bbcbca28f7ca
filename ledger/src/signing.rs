//! Signed checkpoints: the head is signed at every commit with an Ed25519 key kept outside the
//! store, so a chain recomputed without the key no longer verifies (docs/adr/0036-signed-checkpoints.md).
//!
//! The hash chain makes an edit detectable only to someone who cannot recompute it; its
//! constants are public. A signature over `(store id, seq, hash)` at every commit ties the chain
//! to a key that never enters the store's directory: whoever can write the store's files but not
//! the key can still destroy history, but can no longer rewrite or extend it unnoticed.

use std::io::Write;
use std::path::{Path, PathBuf};

use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};

use crate::tables::Head;

/// What a checkpoint's signature covers, after this prefix: store id ‖ seq (u64 BE) ‖ hash.
const CHECKPOINT_DOMAIN: &[u8] = b"memledger-checkpoint-v1\0";
/// What a key record's endorsement covers, after this prefix: store id ‖ the new public key ‖
/// the seq it signs from (u64 BE).
const KEY_DOMAIN: &[u8] = b"memledger-key-v1\0";
/// The first line of a key file, before the hex of the 32-byte seed.
const KEY_FILE_TAG: &str = "memledger-signing-key-v1";

/// The store's identity: 16 random bytes made when the store is first opened with a signer. Every
/// signature covers it, so a signature cannot be carried from one store to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreId(pub [u8; 16]);

impl StoreId {
    pub fn random() -> StoreId {
        StoreId(rand::random())
    }

    pub fn hex(&self) -> String {
        hex(&self.0)
    }
}

/// A key's short name: the first 8 bytes of the blake3 of its public key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyId(pub [u8; 8]);

impl KeyId {
    pub fn of(public: &[u8; 32]) -> KeyId {
        let digest = blake3::hash(public);
        let mut id = [0u8; 8];
        id.copy_from_slice(&digest.as_bytes()[..8]);
        KeyId(id)
    }

    pub fn hex(&self) -> String {
        hex(&self.0)
    }
}

impl std::fmt::Display for KeyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex())
    }
}

/// A key file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("signing key {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("signing key {}: {reason}", path.display())]
    Malformed { path: PathBuf, reason: String },
}

/// This machine's signing key.
pub struct Signer {
    key: SigningKey,
    id: KeyId,
    path: PathBuf,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer").field("id", &self.id).field("path", &self.path).finish()
    }
}

impl Signer {
    /// The key at `path`, made there (mode 0600, its directory 0700) when there is none.
    pub fn load_or_create(path: &Path) -> Result<Signer, KeyError> {
        match Self::load(path) {
            Err(KeyError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                match Self::create(path) {
                    // Another process made it first: use that one.
                    Err(KeyError::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
                        Self::load(path)
                    }
                    other => other,
                }
            }
            other => other,
        }
    }

    /// The key at `path`.
    pub fn load(path: &Path) -> Result<Signer, KeyError> {
        let io = |source| KeyError::Io { path: path.into(), source };
        let text = std::fs::read_to_string(path).map_err(io)?;
        let malformed = |reason: &str| KeyError::Malformed { path: path.into(), reason: reason.into() };
        let mut lines = text.lines();
        if lines.next() != Some(KEY_FILE_TAG) {
            return Err(malformed(&format!("the first line is not {KEY_FILE_TAG}")));
        }
        let seed = lines.next().and_then(|l| unhex::<32>(l.trim())).ok_or_else(|| malformed("no 32-byte hex seed"))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path).map_err(io)?.permissions().mode();
            if mode & 0o077 != 0 {
                return Err(malformed(&format!("mode {:o} lets others read it: chmod 600 it", mode & 0o777)));
            }
        }
        Ok(Signer::from_seed(seed, path))
    }

    /// Make a new key at `path`, which must not exist.
    pub fn create(path: &Path) -> Result<Signer, KeyError> {
        let io = |source| KeyError::Io { path: path.into(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir).map_err(io)?;
        }
        let seed: [u8; 32] = rand::random();
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path).map_err(io)?;
        file.write_all(format!("{KEY_FILE_TAG}\n{}\n", hex(&seed)).as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(Signer::from_seed(seed, path))
    }

    /// Replace the key at `path` by a new one (key rotation): the old key file moves to
    /// [`Signer::retired_dir`] as `<key id>.key`, a new key takes its place. Each store the old
    /// key signs endorses the new one, retiring the old, when this machine next opens it
    /// (`Ledger::open`): so a crash halfway leaves either key in place, and the stores follow.
    /// The old key and the new one.
    pub fn rotate(path: &Path) -> Result<(Signer, Signer), KeyError> {
        let io = |source| KeyError::Io { path: path.into(), source };
        let old = Signer::load(path)?;
        let next = path.with_extension("next");
        match std::fs::remove_file(&next) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            _ => {}
        }
        let new = Signer::create(&next)?;
        let retired = old.retired_dir();
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&retired).map_err(io)?;
        std::fs::rename(path, retired.join(format!("{}.key", old.id))).map_err(io)?;
        std::fs::rename(&next, path).map_err(io)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        }
        Ok((Signer { path: retired.join(format!("{}.key", old.id)), ..old }, Signer { path: path.into(), ..new }))
    }

    /// Where this machine keeps the keys it rotated away from: `retired/` beside the key.
    pub fn retired_dir(&self) -> PathBuf {
        self.path.parent().unwrap_or(Path::new(".")).join("retired")
    }

    /// The keys this machine rotated away from, which endorse their successor in the stores
    /// they still sign; a file that does not load is passed over.
    pub fn retired(&self) -> Vec<Signer> {
        let Ok(entries) = std::fs::read_dir(self.retired_dir()) else { return Vec::new() };
        entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "key"))
            .filter_map(|p| Signer::load(&p).ok())
            .collect()
    }

    fn from_seed(seed: [u8; 32], path: &Path) -> Signer {
        let key = SigningKey::from_bytes(&seed);
        let id = KeyId::of(key.verifying_key().as_bytes());
        Signer { key, id, path: path.into() }
    }

    pub fn id(&self) -> KeyId {
        self.id
    }

    pub fn public(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The signature of the checkpoint `head` of store `store`.
    pub fn sign_checkpoint(&self, store: StoreId, head: Head) -> [u8; 64] {
        self.key.sign(&checkpoint_message(store, head)).to_bytes()
    }

    /// This key's endorsement of `public` as a key of store `store` signing from seq `from_seq`.
    pub fn endorse(&self, store: StoreId, public: &[u8; 32], from_seq: u64) -> [u8; 64] {
        self.key.sign(&key_message(store, public, from_seq)).to_bytes()
    }
}

/// A key the store knows: registered at `from_seq` (its first checkpoint is at or after it),
/// endorsed by itself (the store's first key) or by a key registered before it. A key endorsed
/// with `retires` set replaces its endorser: the endorser signs nothing after `from_seq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRecord {
    pub id: KeyId,
    pub public: [u8; 32],
    pub from_seq: u64,
    pub endorsed_by: KeyId,
    pub endorsement: [u8; 64],
    pub retires: bool,
    /// Where the key lives, as its machine names itself (for people reading `verify`).
    pub machine: String,
}

impl KeyRecord {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + 32 + 8 + 8 + 64 + 1 + self.machine.len());
        out.extend_from_slice(&self.id.0);
        out.extend_from_slice(&self.public);
        out.extend_from_slice(&self.from_seq.to_be_bytes());
        out.extend_from_slice(&self.endorsed_by.0);
        out.extend_from_slice(&self.endorsement);
        out.push(u8::from(self.retires));
        out.extend_from_slice(self.machine.as_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> Option<KeyRecord> {
        if bytes.len() < 121 {
            return None;
        }
        Some(KeyRecord {
            id: KeyId(bytes[..8].try_into().ok()?),
            public: bytes[8..40].try_into().ok()?,
            from_seq: u64::from_be_bytes(bytes[40..48].try_into().ok()?),
            endorsed_by: KeyId(bytes[48..56].try_into().ok()?),
            endorsement: bytes[56..120].try_into().ok()?,
            retires: bytes[120] == 1,
            machine: String::from_utf8(bytes[121..].to_vec()).ok()?,
        })
    }

    /// Whether `endorser` (this record's own public key for a store's first key) signed it.
    pub fn endorsement_holds(&self, store: StoreId, endorser: &[u8; 32]) -> bool {
        KeyId::of(&self.public) == self.id
            && verify(endorser, &key_message(store, &self.public, self.from_seq), &self.endorsement)
    }
}

/// Whether `signature` by `public` covers checkpoint `head` of store `store`.
pub fn checkpoint_holds(public: &[u8; 32], store: StoreId, head: Head, signature: &[u8; 64]) -> bool {
    verify(public, &checkpoint_message(store, head), signature)
}

/// A checkpoint to check: its head, the key that says it signed it, the signature.
pub struct ToCheck {
    pub head: Head,
    pub key: VerifyingKey,
    pub signature: [u8; 64],
}

/// The public key as a point, once (decompressing it costs a third of a verification).
pub fn verifying_key(public: &[u8; 32]) -> Option<VerifyingKey> {
    VerifyingKey::from_bytes(public).ok()
}

/// Checkpoints verified together: a batch verification costs about half as much per signature
/// as one at a time.
const BATCH: usize = 64;

/// The index of the first checkpoint whose signature does not hold, if any: verified on every
/// core, each thread a contiguous share, in batches of [`BATCH`]. A batch that fails is checked
/// one signature at a time (strictly), to name the first that does not hold. A batch accepts
/// what each signature's strict check accepts, and may besides accept a signature crafted by
/// the key's holder to pass only in a batch: no one without the key can make either.
pub fn first_failing(store: StoreId, all: &[ToCheck]) -> Option<usize> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let per_thread = all.len().div_ceil(threads).max(256);
    let one_fails = |c: &ToCheck| {
        let message = checkpoint_message(store, c.head);
        c.key.verify_strict(&message, &Signature::from_bytes(&c.signature)).is_err()
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = all
            .chunks(per_thread)
            .enumerate()
            .map(|(t, part)| {
                scope.spawn(move || {
                    part.chunks(BATCH).enumerate().find_map(|(b, batch)| {
                        let messages: Vec<Vec<u8>> = batch.iter().map(|c| checkpoint_message(store, c.head)).collect();
                        let messages: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
                        let signatures: Vec<Signature> =
                            batch.iter().map(|c| Signature::from_bytes(&c.signature)).collect();
                        let keys: Vec<VerifyingKey> = batch.iter().map(|c| c.key).collect();
                        if ed25519_dalek::verify_batch(&messages, &signatures, &keys).is_ok() {
                            return None;
                        }
                        batch.iter().position(one_fails).map(|i| t * per_thread + b * BATCH + i)
                    })
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok().flatten()).min()
    })
}

fn verify(public: &[u8; 32], message: &[u8], signature: &[u8; 64]) -> bool {
    VerifyingKey::from_bytes(public).is_ok_and(|key| key.verify(message, &Signature::from_bytes(signature)).is_ok())
}

fn checkpoint_message(store: StoreId, head: Head) -> Vec<u8> {
    [CHECKPOINT_DOMAIN, &store.0, &head.seq.to_be_bytes(), &head.hash.0].concat()
}

fn key_message(store: StoreId, public: &[u8; 32], from_seq: u64) -> Vec<u8> {
    [KEY_DOMAIN, &store.0, public, &from_seq.to_be_bytes()].concat()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != 2 * N || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use memledger_schemas::Hash;

    use super::*;

    #[test]
    fn a_checkpoint_verifies_only_for_its_store_seq_and_hash() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer::load_or_create(&dir.path().join("keys/signing.key")).unwrap();
        let store = StoreId([7; 16]);
        let head = Head { seq: 3, hash: Hash([1; 32]) };
        let sig = signer.sign_checkpoint(store, head);
        assert!(checkpoint_holds(&signer.public(), store, head, &sig));
        assert!(!checkpoint_holds(&signer.public(), StoreId([8; 16]), head, &sig));
        assert!(!checkpoint_holds(&signer.public(), store, Head { seq: 4, ..head }, &sig));
        assert!(!checkpoint_holds(&signer.public(), store, Head { hash: Hash([2; 32]), ..head }, &sig));
        let again = Signer::load_or_create(&dir.path().join("keys/signing.key")).unwrap();
        assert_eq!(again.id(), signer.id(), "the key is read back, not made again");
    }

    #[test]
    fn batched_verification_names_the_first_checkpoint_that_does_not_hold() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer::create(&dir.path().join("signing.key")).unwrap();
        let other = Signer::create(&dir.path().join("other.key")).unwrap();
        let store = StoreId([5; 16]);
        let key = verifying_key(&signer.public()).unwrap();
        let all: Vec<ToCheck> = (1..=1000u64)
            .map(|seq| {
                let head = Head { seq, hash: Hash([(seq % 251) as u8; 32]) };
                ToCheck { head, key, signature: signer.sign_checkpoint(store, head) }
            })
            .collect();
        assert_eq!(first_failing(store, &all), None);
        // Wrong in several batches and threads' shares: the first is named, whichever finds it.
        for bad in [[0usize, 999], [63, 64], [700, 701], [255, 900]] {
            let mut forged: Vec<ToCheck> =
                all.iter().map(|c| ToCheck { head: c.head, key: c.key, signature: c.signature }).collect();
            for &i in &bad {
                forged[i].signature = other.sign_checkpoint(store, forged[i].head);
            }
            assert_eq!(first_failing(store, &forged), Some(bad[0]), "{bad:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("signing.key");
        Signer::create(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = Signer::load(&path).unwrap_err().to_string();
        assert!(err.contains("chmod 600"), "{err}");
    }

    #[test]
    fn a_key_record_reads_back_and_its_endorsement_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let old = Signer::create(&dir.path().join("old.key")).unwrap();
        let new = Signer::create(&dir.path().join("new.key")).unwrap();
        let store = StoreId([3; 16]);
        let record = KeyRecord {
            id: new.id(),
            public: new.public(),
            from_seq: 12,
            endorsed_by: old.id(),
            endorsement: old.endorse(store, &new.public(), 12),
            retires: true,
            machine: "laptop".into(),
        };
        assert_eq!(KeyRecord::decode(&record.encode()), Some(record.clone()));
        assert!(record.endorsement_holds(store, &old.public()));
        assert!(!record.endorsement_holds(store, &new.public()));
        assert!(!KeyRecord { from_seq: 13, ..record }.endorsement_holds(store, &old.public()));
    }
}
