//! A store held open for many callers at once (`memledger serve`, docs/adr/0014): the commands
//! run side by side, writes included (the engine's write lock orders appends, and synced saves
//! in flight together share one sync, docs/adr/0040); a rebuild or an import takes the store
//! alone. Every answer says so while the store's last verification failed.

use std::sync::{Mutex, RwLock};

use memledger_engine::{Caller, EngineError, ImportReport, Memledger, Principal};
use memledger_schemas::{Event, Verb};

use crate::answer::Executed;
use crate::error::CommandError;
use crate::request::{Call, ERASE_REFUSED, ERASE_REFUSED_HINT};
use crate::{Settings, execute};

/// The open store, and what its holder decided when it opened it.
pub struct Host {
    ml: Memledger,
    gate: RwLock<()>,
    /// Erasures are carried out (`serve --allow-erase`); a dry run is always answered.
    allow_erase: bool,
    /// What every answer says while the store's last verification failed: read at start and
    /// after each `verify` (with a server up, every verification runs through it).
    verify_failed: Mutex<Option<String>>,
    settings: Settings,
}

/// A command run by a host: what it answered, and the store's failed verification, if any.
pub struct Hosted {
    pub executed: Executed,
    pub verify_failed: Option<String>,
}

impl Host {
    pub fn new(ml: Memledger, allow_erase: bool, settings: Settings) -> Host {
        let verify_failed = Mutex::new(verify_failed(&ml));
        Host { ml, gate: RwLock::new(()), allow_erase, verify_failed, settings }
    }

    /// Run `call` for `caller`, beside the other commands (a rebuild alone).
    pub fn run(&self, call: &Call, caller: &Caller) -> Hosted {
        let executed = match call {
            Call::Erase(b) if !b.dry_run && !self.allow_erase => Executed::failed(CommandError::BadInput {
                message: ERASE_REFUSED.into(),
                hint: Some(ERASE_REFUSED_HINT.into()),
            }),
            _ if call.exclusive() => {
                let _alone = self.gate.write().unwrap_or_else(|p| p.into_inner());
                execute(&self.ml, caller, call, &self.settings)
            }
            _ => {
                let _beside = self.gate.read().unwrap_or_else(|p| p.into_inner());
                execute(&self.ml, caller, call, &self.settings)
            }
        };
        let mut failed = self.verify_failed.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(call, Call::Verify(_)) {
            *failed = verify_failed(&self.ml);
        }
        Hosted { executed, verify_failed: failed.clone() }
    }

    /// `import` of an exported stream, all or nothing, with the store alone; `allow_secret`:
    /// even if its memories hold credentials.
    pub fn import(&self, stream: &[u8], caller: &Caller, allow_secret: bool) -> Result<ImportReport, CommandError> {
        if !caller.access().administers_store() {
            return Err(caller.access().refusal(Verb::Admin, "*", " (import appends a stream)".into()).into());
        }
        let _alone = self.gate.write().unwrap_or_else(|p| p.into_inner());
        import(&self.ml, stream, allow_secret)
    }

    /// `export --since`: the event stream `caller` may read into `out`; the events written.
    pub fn export(&self, since: u64, caller: &Caller, out: &mut dyn std::io::Write) -> Result<u64, CommandError> {
        let _beside = self.gate.read().unwrap_or_else(|p| p.into_inner());
        Ok(export(&self.ml, since, caller, out)?)
    }

    /// The ledger's head seq.
    pub fn head_seq(&self) -> u64 {
        self.ml.ledger().head().seq
    }

    /// The principal a principal's token authenticates; `None` for a wrong, rotated or revoked
    /// one (never the store's own token: the server checks that one itself).
    pub fn authenticate(&self, token: &str) -> Option<Principal> {
        // On a shared ledger a revocation another machine appended counts at once.
        if self.ml.ledger().is_shared() {
            let _beside = self.gate.read().unwrap_or_else(|p| p.into_inner());
            let _ = self.ml.catch_up();
        }
        self.ml.authenticate(token).ok()
    }
}

/// The warning a failed last verification of `ml` gives, if it failed.
fn verify_failed(ml: &Memledger) -> Option<String> {
    let last = ml.last_verification().ok().flatten().filter(|last| !last.ok)?;
    Some(format!(
        "the last verification of this store failed ({}{}: {}); run `memledger verify`",
        last.at,
        last.first_bad_seq.map(|s| format!(", first bad seq {s}")).unwrap_or_default(),
        last.problem.as_deref().unwrap_or("unknown")
    ))
}

/// Append an exported stream: the whole chain checked first, and (unless `allow_secret`)
/// refused whole if its memories hold what looks like a credential.
pub fn import(ml: &Memledger, bytes: &[u8], allow_secret: bool) -> Result<ImportReport, CommandError> {
    let stream = memledger_engine::read_stream(&mut std::io::BufReader::new(bytes)).map_err(EngineError::from)?;
    if !allow_secret {
        memledger_engine::input::refuse_secrets_in_stream(&stream)?;
    }
    Ok(ml.import_stream(stream)?)
}

/// The events since `since` that `caller` may read, as an exported stream into `out`.
pub fn export(ml: &Memledger, since: u64, caller: &Caller, out: &mut dyn std::io::Write) -> Result<u64, EngineError> {
    let access = caller.access();
    let keep = |e: &Event| crate::store::visible(ml, caller, e);
    let keep: Option<&dyn Fn(&Event) -> Result<bool, EngineError>> =
        if access.reads_everything() && access.administers_store() { None } else { Some(&keep) };
    ml.export_kept(since, out, keep)
}
