//! Managing principals (docs/design.md §13): adding one with its first grants and a token,
//! granting and revoking, rotating its token, and authenticating a token. Each change is an
//! event the engine checks before appending: names are unique and never reused, only who
//! administers the store adds, rotates or revokes a principal, and a grant is given or taken
//! back only by who administers a pattern covering it, never beyond the authority it holds.
//!
//! The token is made here and returned once; the ledger keeps its verifier, a keyed hash under
//! the store's verifier secret ([`VERIFIER_SECRET`]), which the ledger keeps outside its events.

use memledger_ledger::NewEvent;
use memledger_projector::principals::{PrincipalReader, PrincipalRecord};
use memledger_schemas::*;
use serde::Serialize;

use crate::access::{Access, Principal, check_name, check_pattern, grant_text, new_token, verifier};
use crate::error::{BadInput, EngineError, NotFound};

/// The name of the ledger's secret that keys tokens' verifiers.
pub const VERIFIER_SECRET: &str = "token-verifier";

/// A principal as commands answer: its name, kind, grants (as written), and when it was made,
/// rotated or revoked. Never its token or verifier.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PrincipalView {
    pub principal: String,
    pub kind: PrincipalKind,
    /// `SCOPE=VERB,…[@AUTHORITY]`, one per grant.
    pub grants: Vec<String>,
    /// The scope its saves go to when a request names none.
    pub own_scope: String,
    pub added_at: Timestamp,
    pub added_by: String,
    pub rotated_at: Option<Timestamp>,
    pub revoked: bool,
    pub revoked_at: Option<Timestamp>,
    pub revoked_by: Option<String>,
    pub revoked_reason: Option<String>,
}

impl PrincipalView {
    pub fn of(r: &PrincipalRecord) -> PrincipalView {
        let principal = Principal { name: r.name.clone(), kind: r.kind, grants: r.grants.clone(), owner: false };
        PrincipalView {
            principal: r.name.clone(),
            kind: r.kind,
            grants: r.grants.iter().map(grant_text).collect(),
            own_scope: principal.own_scope(),
            added_at: r.added_at,
            added_by: r.added_by.clone(),
            rotated_at: r.rotated_at,
            revoked: r.revoked.is_some(),
            revoked_at: r.revoked.as_ref().map(|v| v.at),
            revoked_by: r.revoked.as_ref().map(|v| v.by.clone()),
            revoked_reason: r.revoked.as_ref().and_then(|v| v.reason.clone()),
        }
    }
}

/// What a change to a principal did: the principal as it now stands, the token when one was
/// made (shown this once), and the seqs appended.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PrincipalChange {
    #[serde(flatten)]
    pub principal: PrincipalView,
    /// Only when the command made one (`add`, `rotate`): it is never shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    pub seqs: Vec<u64>,
}

/// A record as the principal it is to [`Access`].
pub fn principal_of(r: &PrincipalRecord) -> Principal {
    Principal { name: r.name.clone(), kind: r.kind, grants: r.grants.clone(), owner: false }
}

fn known(reader: &PrincipalReader<'_>, name: &str) -> Result<PrincipalRecord, EngineError> {
    reader.get(name)?.ok_or_else(|| NotFound::Principal(name.to_string()).into())
}

fn live(reader: &PrincipalReader<'_>, name: &str) -> Result<PrincipalRecord, EngineError> {
    let record = known(reader, name)?;
    if record.revoked.is_some() {
        return Err(BadInput::PrincipalRevoked(name.to_string()).into());
    }
    Ok(record)
}

/// Whether `access` may give (or take back) `grant`: `admin` on a pattern covering it, and
/// (unless it administers the store) no higher authority than it may claim there itself.
fn check_grant(access: Access<'_>, grant: &Grant, kind: PrincipalKind) -> Result<(), EngineError> {
    check_pattern(&grant.pattern).map_err(BadInput::Grant)?;
    if !access.administers(&grant.pattern) {
        return Err(access.refusal(Verb::Admin, &grant.pattern, String::new()).into());
    }
    if access.administers_store() {
        return Ok(());
    }
    let asked = grant.authority.unwrap_or_else(|| kind.default_authority());
    let held = access.authority_cap_within(&grant.pattern);
    if held.is_none_or(|held| asked > held) {
        let held = held.map_or("none".to_string(), |h| h.to_string());
        return Err(access
            .refusal(Verb::Admin, &grant.pattern, format!(" giving {asked} authority: it holds {held} there"))
            .into());
    }
    Ok(())
}

fn require_store_admin(access: Access<'_>, what: &str) -> Result<(), EngineError> {
    if access.administers_store() {
        Ok(())
    } else {
        Err(access.refusal(Verb::Admin, "*", format!(" ({what} needs admin on every scope)")).into())
    }
}

/// Plan adding principal `name`: its events and its new token.
pub(crate) fn plan_add(
    access: Access<'_>,
    reader: &PrincipalReader<'_>,
    secret: &[u8; 32],
    name: &str,
    kind: PrincipalKind,
    grants: Vec<Grant>,
) -> Result<(Vec<NewEvent>, String), EngineError> {
    check_name(name).map_err(BadInput::Principal)?;
    require_store_admin(access, "adding a principal")?;
    if reader.get(name)?.is_some() {
        return Err(BadInput::PrincipalExists(name.to_string()).into());
    }
    for grant in &grants {
        check_grant(access, grant, kind)?;
    }
    let token = new_token();
    let body = PrincipalAdded { name: name.into(), kind, verifier: verifier(secret, &token), grants };
    Ok((vec![EventBody::PrincipalAdded(body).into()], token))
}

/// Plan granting `grants` to `name`, each replacing its grant of the same pattern.
pub(crate) fn plan_grant(
    access: Access<'_>,
    reader: &PrincipalReader<'_>,
    name: &str,
    grants: Vec<Grant>,
) -> Result<Vec<NewEvent>, EngineError> {
    let record = live(reader, name)?;
    if grants.is_empty() {
        return Err(BadInput::Grant("give at least one --grant SCOPE=VERB,…".into()).into());
    }
    for grant in &grants {
        check_grant(access, grant, record.kind)?;
    }
    Ok(vec![EventBody::PrincipalGranted(PrincipalGranted { name: name.into(), grants }).into()])
}

/// Plan revoking `name`'s grants of `patterns`, or (`patterns` empty) the principal itself.
pub(crate) fn plan_revoke(
    access: Access<'_>,
    reader: &PrincipalReader<'_>,
    name: &str,
    patterns: Vec<String>,
    reason: Option<String>,
) -> Result<Vec<NewEvent>, EngineError> {
    let record = live(reader, name)?;
    if patterns.is_empty() {
        require_store_admin(access, "revoking a principal")?;
        return Ok(vec![EventBody::PrincipalRevoked(PrincipalRevoked { name: name.into(), reason }).into()]);
    }
    for pattern in &patterns {
        let Some(grant) = record.grants.iter().find(|g| &g.pattern == pattern) else {
            return Err(BadInput::NoSuchGrant { principal: name.into(), pattern: pattern.clone() }.into());
        };
        check_grant(access, grant, record.kind)?;
    }
    Ok(vec![EventBody::GrantRevoked(GrantRevoked { name: name.into(), patterns }).into()])
}

/// Plan replacing `name`'s token: its event and the new token.
pub(crate) fn plan_rotate(
    access: Access<'_>,
    reader: &PrincipalReader<'_>,
    secret: &[u8; 32],
    name: &str,
) -> Result<(Vec<NewEvent>, String), EngineError> {
    live(reader, name)?;
    require_store_admin(access, "rotating a principal's token")?;
    let token = new_token();
    let body = PrincipalRotated { name: name.into(), verifier: verifier(secret, &token) };
    Ok((vec![EventBody::PrincipalRotated(body).into()], token))
}

/// The principal `token` authenticates, if any: its verifier looked up (a keyed hash, so the
/// lookup reveals nothing of the token), then compared in constant time.
pub(crate) fn authenticate(
    reader: &PrincipalReader<'_>,
    secret: Option<&[u8; 32]>,
    token: &str,
) -> Result<Principal, EngineError> {
    let Some(secret) = secret else { return Err(EngineError::Unauthenticated) };
    let given = verifier(secret, token);
    match reader.by_verifier(&given)? {
        Some(record) if crate::access::same_verifier(&record.verifier, &given) => Ok(principal_of(&record)),
        _ => Err(EngineError::Unauthenticated),
    }
}
