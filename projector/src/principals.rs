//! The principals: who may act on the store besides its owner, with their grants and the
//! verifier of their current token (docs/design.md §13). Rebuilt from the principal events like
//! every view, so a revocation is an append that every machine following the ledger applies.
//!
//! Table `principals`, keys (see docs/format.md):
//! - `p ‖ name` → [`PrincipalRecord`]
//! - `v ‖ verifier` → name, for the current token of every principal not revoked
//!
//! The engine checks a command before it appends (a name is added once, a grant names a known
//! principal); a stream that breaks those rules anyway (an import of a hand-made stream) is
//! applied as far as it makes sense and never fails replay: an event about an unknown or revoked
//! principal changes nothing.

use bincode::{Decode, Encode};
use memledger_ledger::store::Store;
use memledger_schemas::*;
use serde::Serialize;

use crate::error::ProjectError;
use crate::framework::{Projector, ViewTxn};
use crate::keys::key;

pub const TABLE: &str = "principals";
const VERSION: u32 = 1;

/// A principal as the view holds it.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PrincipalRecord {
    pub name: String,
    pub kind: PrincipalKind,
    #[serde(skip)]
    pub verifier: Hash,
    pub grants: Vec<Grant>,
    /// The seq of its `principal_added` event, when, and by whom.
    pub added_seq: u64,
    pub added_at: Timestamp,
    pub added_by: String,
    /// When its token was last replaced.
    pub rotated_at: Option<Timestamp>,
    /// When it was revoked, by whom, and why: its token no longer authenticates.
    pub revoked: Option<Revocation>,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Revocation {
    pub seq: u64,
    pub at: Timestamp,
    pub by: String,
    pub reason: Option<String>,
}

pub struct PrincipalsProjector;

fn pkey(name: &str) -> Vec<u8> {
    key(b'p', &[name.as_bytes()])
}

fn vkey(verifier: &Hash) -> Vec<u8> {
    key(b'v', &[&verifier.0])
}

/// Who appended an event: its principal (format 5), else its actor.
fn by(event: &Event) -> String {
    event.principal.clone().unwrap_or_else(|| event.actor.clone())
}

impl Projector for PrincipalsProjector {
    fn name(&self) -> &'static str {
        TABLE
    }

    fn version(&self) -> u32 {
        VERSION
    }

    fn ignores(&self, event_type: &str) -> bool {
        !event_type.starts_with("principal_") && event_type != "grant_revoked"
    }

    fn apply(&self, event: &Event, txn: &mut ViewTxn<'_>) -> Result<(), ProjectError> {
        let Some(name) = event.body.principal_named() else { return Ok(()) };
        let existing: Option<PrincipalRecord> = txn.get_record(&pkey(name))?;
        let record = match (&event.body, existing) {
            (EventBody::PrincipalAdded(b), None) => {
                txn.put(vkey(&b.verifier), b.name.as_bytes().to_vec());
                PrincipalRecord {
                    name: b.name.clone(),
                    kind: b.kind,
                    verifier: b.verifier,
                    grants: b.grants.clone(),
                    added_seq: event.seq,
                    added_at: event.recorded_at,
                    added_by: by(event),
                    rotated_at: None,
                    revoked: None,
                }
            }
            (_, Some(record)) if record.revoked.is_some() => return Ok(()),
            (EventBody::PrincipalGranted(b), Some(mut record)) => {
                for grant in &b.grants {
                    match record.grants.iter_mut().find(|g| g.pattern == grant.pattern) {
                        Some(held) => *held = grant.clone(),
                        None => record.grants.push(grant.clone()),
                    }
                }
                record
            }
            (EventBody::GrantRevoked(b), Some(mut record)) => {
                record.grants.retain(|g| !b.patterns.contains(&g.pattern));
                record
            }
            (EventBody::PrincipalRotated(b), Some(mut record)) => {
                txn.delete(vkey(&record.verifier));
                txn.put(vkey(&b.verifier), record.name.as_bytes().to_vec());
                record.verifier = b.verifier;
                record.rotated_at = Some(event.recorded_at);
                record
            }
            (EventBody::PrincipalRevoked(b), Some(mut record)) => {
                txn.delete(vkey(&record.verifier));
                record.revoked =
                    Some(Revocation { seq: event.seq, at: event.recorded_at, by: by(event), reason: b.reason.clone() });
                record
            }
            _ => return Ok(()),
        };
        txn.put_record(pkey(name), &record);
        Ok(())
    }
}

/// Read queries over the principals.
pub struct PrincipalReader<'a> {
    store: &'a Store,
}

impl<'a> PrincipalReader<'a> {
    pub fn new(store: &'a Store) -> Self {
        PrincipalReader { store }
    }

    fn decode(&self, bytes: &[u8]) -> Result<PrincipalRecord, ProjectError> {
        memledger_schemas::codec::decode(bytes).map_err(|source| ProjectError::Codec { view: TABLE, source })
    }

    /// The principal named `name`, revoked or not.
    pub fn get(&self, name: &str) -> Result<Option<PrincipalRecord>, ProjectError> {
        self.store.get(TABLE, &pkey(name))?.map(|bytes| self.decode(&bytes)).transpose()
    }

    /// The principal whose current token has this verifier, if one does and it is not revoked.
    pub fn by_verifier(&self, verifier: &Hash) -> Result<Option<PrincipalRecord>, ProjectError> {
        let Some(name) = self.store.get(TABLE, &vkey(verifier))? else { return Ok(None) };
        let name = String::from_utf8_lossy(&name).into_owned();
        Ok(self.get(&name)?.filter(|p| p.revoked.is_none() && p.verifier == *verifier))
    }

    /// Every principal, by name.
    pub fn all(&self) -> Result<Vec<PrincipalRecord>, ProjectError> {
        let mut out = Vec::new();
        for item in self.store.scan_prefix(TABLE, b"p")? {
            let (_, v) = item?;
            out.push(self.decode(&v)?);
        }
        Ok(out)
    }
}
