//! The engine's error: each variant maps to one exit code of the CLI contract ([`Exit`]), and
//! each kind of refusal is a value that says what was wrong, with the error that caused it kept
//! as its source.

use memledger_ledger::{AppendError, ImportError, LedgerError, OpenError};
use memledger_projector::ProjectError;
use memledger_schemas::{ConflictId, Effect, MemoryId, ResolutionAction, Status, TimeParseError};

use crate::models::CallError;

/// The exit codes of the CLI contract (docs/cli.md), named once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Done.
    Ok = 0,
    /// A runtime or storage error.
    Failure = 1,
    /// Bad input or usage: nothing was written.
    BadInput = 2,
    /// The state is not what the caller expected: nothing was written.
    Conflict = 3,
    /// No such memory or conflict.
    NotFound = 4,
    /// The caller may not do this (its grants do not reach): nothing was written.
    NotPermitted = 5,
    /// The store disagrees with its witness (restored from an older copy, truncated, replaced or
    /// rewritten): refused, nothing was done (docs/reliability.md).
    Witness = 6,
}

impl Exit {
    /// The process exit status.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The exit a status names, as a reply from the store's server carries it; a number the
    /// contract does not name is a failure.
    pub fn from_code(code: i32) -> Exit {
        match code {
            0 => Exit::Ok,
            2 => Exit::BadInput,
            3 => Exit::Conflict,
            4 => Exit::NotFound,
            5 => Exit::NotPermitted,
            6 => Exit::Witness,
            _ => Exit::Failure,
        }
    }
}

impl From<Exit> for i32 {
    fn from(exit: Exit) -> Self {
        i32::from(exit.code())
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Bad input or usage: nothing was written ([`Exit::BadInput`]).
    #[error(transparent)]
    BadInput(#[from] BadInput),
    /// The state is not what the caller expected: nothing was written ([`Exit::Conflict`]).
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// No such memory or conflict ([`Exit::NotFound`]).
    #[error(transparent)]
    NotFound(#[from] NotFound),
    /// The caller's grants do not reach: nothing was written ([`Exit::NotPermitted`]).
    #[error(transparent)]
    NotPermitted(#[from] crate::access::NotPermitted),
    /// The token given authenticates no principal (wrong, rotated or revoked); it is never
    /// repeated ([`Exit::NotPermitted`]).
    #[error("the token does not authenticate: it is not one this store issued, or it was rotated or revoked")]
    Unauthenticated,
    /// A model was needed and could not be used ([`Exit::Failure`]).
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The candidate-terms cache could not be brought up to date after an earlier error: every
    /// candidate search fails until the store is opened again (or a later reset succeeds).
    #[error("text index: the candidate index could not be brought up to date after an earlier error; reopen the store")]
    StaleTermCache,
    /// `rebuild` refuses a ledger that does not verify: nothing was written ([`Exit::Failure`]).
    #[error(
        "the ledger does not verify at seq {seq} ({problem}): refusing to rebuild the views from it; nothing was written"
    )]
    Unverified { seq: u64, problem: String },
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Storage(#[from] LedgerError),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Import(#[from] ImportError),
}

/// What was wrong with the input; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum BadInput {
    #[error("the memory text is empty")]
    EmptyText,
    #[error("a save declares one relation: --replaces or --contradicts, not both")]
    TwoDeclaredRelations,
    #[error(
        "a save that declares a relation (--replaces, --contradicts) is compared: it cannot also skip comparing (--no-dedup)"
    )]
    DeclaredWithoutDedup,
    #[error(
        "{target} is in scope {target_scope:?}; this save is in {scope:?}: a declared relation stays within one scope"
    )]
    DeclaredAcrossScopes { target: MemoryId, target_scope: String, scope: String },
    #[error("the memory text is {len} bytes; the limit is {max} (64 KiB)")]
    TextTooLong { len: usize, max: usize },
    #[error("the memory text contains a NUL byte")]
    NulInText,
    #[error("--{field} is empty")]
    EmptyField { field: &'static str },
    #[error("--{field} is longer than {max} bytes")]
    FieldTooLong { field: &'static str, max: usize },
    #[error("--{field} contains control characters")]
    ControlInField { field: &'static str },
    /// Not one of the closed vocabulary's names (the message names the choices).
    #[error("{0}")]
    UnknownName(String),
    #[error("--effective-at: {0}")]
    EffectiveAt(#[source] TimeParseError),
    #[error("--expires-at takes an RFC 3339 time (example: 2026-12-15T00:00:00Z), not {0:?}")]
    ExpiresAt(String),
    #[error("--ttl takes a time to live from 1s to 100 years: a number with s, m, h, d or w (30m, 14d), not {0:?}")]
    Ttl(String),
    #[error("an update gives a new text, an expiry (--expires-at, --ttl) or --no-expiry")]
    UpdateChangesNothing,
    #[error("--no-expiry clears the expiry: it cannot come with --expires-at or --ttl")]
    ExpiryAndNoExpiry,
    #[error("evidence.observed_at: {0}")]
    ObservedAt(#[source] TimeParseError),
    #[error("evidence lines {first} to {last}: lines count from 1 and the last is not before the first")]
    EvidenceLines { first: u32, last: u32 },
    /// A principal's name that is not one (the message says what one is).
    #[error("{0}")]
    Principal(String),
    #[error("a principal named {0:?} exists already (a name is never reused, even once revoked)")]
    PrincipalExists(String),
    #[error("principal {0:?} is revoked: its grants and token cannot change any more")]
    PrincipalRevoked(String),
    /// A grant that is not one (the message says how to write one).
    #[error("{0}")]
    Grant(String),
    #[error("principal {principal:?} holds no grant on {pattern:?}")]
    NoSuchGrant { principal: String, pattern: String },
    #[error("not an id: {0:?} (ids are hex digits)")]
    NotAnId(String),
    #[error("id prefix {prefix:?} is too short: give at least {min} digits")]
    PrefixTooShort { prefix: String, min: usize },
    #[error("id prefix {prefix} is ambiguous: it matches {matches} and more; type more digits")]
    AmbiguousMemoryPrefix { prefix: String, matches: String },
    #[error("conflict id prefix {0} is ambiguous; type more digits")]
    AmbiguousConflictPrefix(String),
    #[error("--merge needs the reconciled text")]
    MergeNeedsText,
    #[error("memory {0} is already erased")]
    AlreadyErased(String),
    #[error("--retired-before takes a date (2026-01-31) or an RFC 3339 time (2026-01-31T12:00:00Z), not {0:?}")]
    RetiredBefore(String),
    /// A text holds what a credential rule matched (engine/src/secrets.rs); the message names
    /// the rules, never the text.
    #[error(
        "the {field} holds what looks like a credential: {found}; nothing was saved. Remove it, keep it between \
         <private> and </private>, or save it on purpose with --allow-secret (allow_secret over HTTP and MCP)"
    )]
    SecretInText { field: &'static str, found: String },
    /// An `update` or a merged text holds what a credential rule matched: a revision is never
    /// written with one (a person can still `save --allow-secret`).
    #[error(
        "the {what} holds what looks like a credential: {found}; nothing was written. Remove it or keep it between \
         <private> and </private>; a revision never carries one (`save --allow-secret` saves one on purpose)"
    )]
    SecretInRevision { what: &'static str, found: String },
    /// An import stream's memories hold credentials; nothing was imported.
    #[error(
        "the stream holds what looks like credentials, so nothing was imported: {found}. Erase them in the store \
         the stream came from (`memledger erase`) and export again, or import it on purpose with --allow-secret"
    )]
    SecretsInStream { found: String },
    #[error("no view named {name:?} (views: {known})")]
    UnknownView { name: String, known: String },
    #[error("recall needs a query: some words to look for")]
    EmptyQuery,
    #[error("--limit must be at least 1")]
    ZeroLimit,
    #[error("--limit must be at most {0}")]
    LimitTooLarge(usize),
    #[error("--as-of: seq {0} is too large")]
    AsOfSeqTooLarge(String),
    #[error("--as-of takes a ledger seq or an RFC 3339 time, not {0:?}")]
    AsOf(String),
    #[error("--valid-at takes an RFC 3339 time (example: 2026-07-01T00:00:00Z), not {0:?}")]
    ValidAt(String),
    #[error("no embedder is configured: set MEMLEDGER_EMBED_URL and MEMLEDGER_EMBED_MODEL")]
    NoEmbedder,
    #[error(
        "conflicts auto needs a model, and none is configured: set MEMLEDGER_LLM_URL and \
         MEMLEDGER_LLM_MODEL (see docs/models.md); nothing was written"
    )]
    NoChatModel,
}

/// The state is not what the command was asked about; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum Conflict {
    /// The ledger's head moved between planning and appending.
    #[error(
        "the ledger moved while deciding (expected head {expected}, found {actual}); nothing was written, try again"
    )]
    HeadMoved { expected: u64, actual: u64 },
    #[error("belief {} has no active version (it was retired or superseded)", .root.short())]
    NoActiveVersion { root: MemoryId },
    #[error("expected version {expected} but the current version is {current} ({memory_id}); nothing was written")]
    VersionMoved { expected: u32, current: u32, memory_id: MemoryId },
    #[error(
        "conflict {} is already resolved{}; revert it first to resolve it another way",
        .conflict.short(), resolved_by(.resolution)
    )]
    AlreadyResolved { conflict: ConflictId, resolution: Option<(ResolutionAction, String)> },
    #[error(
        "the incoming memory {} changed since the conflict opened (now {status} v{version}); nothing was written",
        .memory.short()
    )]
    IncomingChanged { memory: MemoryId, status: Status, version: u32 },
    #[error("memory {} changed since the conflict opened (now {status} v{version}); nothing was written", .memory.short())]
    SideChanged { memory: MemoryId, status: Status, version: u32 },
    #[error("the conflict has no candidates")]
    NoCandidates,
    #[error("conflict {} is pending: there is no resolution to revert", .0.short())]
    NothingToRevert(ConflictId),
    #[error(
        "the beliefs this resolution touched have changed since (effect {0:?} no longer holds); nothing was written"
    )]
    EffectNoLongerHolds(Effect),
    #[error("that idempotency key belongs to a command that was not a save")]
    KeyOfAnotherCommand,
    #[error("no conflict can be opened for this pair: {0}; nothing was written")]
    NotOpenable(String),
}

/// " (keep_new by person:ana)", or nothing when the resolution is not known.
fn resolved_by(resolution: &Option<(ResolutionAction, String)>) -> String {
    resolution.as_ref().map(|(action, by)| format!(" ({action} by {by})")).unwrap_or_default()
}

/// No such memory or conflict.
#[derive(Debug, thiserror::Error)]
pub enum NotFound {
    #[error("no memory {0}")]
    Memory(MemoryId),
    #[error("memory {0} is not a belief")]
    NotABelief(MemoryId),
    #[error("no conflict {0}")]
    Conflict(ConflictId),
    #[error("no memory id starts with {0}")]
    MemoryPrefix(String),
    #[error("no conflict id starts with {0}")]
    ConflictPrefix(String),
    #[error("no principal named {0:?} (`memledger principals list`)")]
    Principal(String),
}

/// A model that was needed could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the embedder answered the wrong number of vectors ({embedded} of {texts} texts were embedded and kept)")]
    WrongVectorCount { embedded: usize, texts: usize },
    #[error("the embedder failed: {source} ({embedded} of {texts} texts were embedded and kept)")]
    Embedder { source: CallError, embedded: usize, texts: usize },
}

impl From<AppendError> for EngineError {
    fn from(e: AppendError) -> Self {
        match e {
            AppendError::Conflict { expected, actual } => Conflict::HeadMoved { expected, actual }.into(),
            AppendError::Storage(s) => EngineError::Storage(s),
        }
    }
}

impl EngineError {
    /// The exit code of docs/cli.md.
    pub fn exit(&self) -> Exit {
        match self {
            EngineError::BadInput(_) => Exit::BadInput,
            EngineError::Conflict(_) => Exit::Conflict,
            EngineError::NotFound(_) => Exit::NotFound,
            EngineError::NotPermitted(_) | EngineError::Unauthenticated => Exit::NotPermitted,
            EngineError::Open(OpenError::Witness { .. }) => Exit::Witness,
            EngineError::Import(
                ImportError::Parse { .. } | ImportError::Chain { .. } | ImportError::Diverged { .. },
            ) => Exit::BadInput,
            _ => Exit::Failure,
        }
    }

    /// [`EngineError::exit`] as the number the process exits with.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.exit().code())
    }
}
