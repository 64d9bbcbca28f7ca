//! `memledger checkpoint`: the newest signed checkpoint as a witness, written where a team keeps
//! it, and the deliberate acceptance of a store that disagrees with its witness.

use memledger_engine::EngineError;
use memledger_engine::WitnessPlace;
use memledger_engine::error::Exit;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Print the store's newest signed checkpoint (its head, seq and hash, signed with this
/// machine's key) as a witness record, or keep it where a team keeps witnesses (`--to`: a file,
/// an HTTP(S) URL it is PUT to, or a NATS subject it is published to) for `memledger verify
/// --witness` to check any copy of the store against. A witness kept there is replaced only by a
/// checkpoint of the same store that continues its history (else exit 6, nothing kept), or by
/// one accepted instead of it (`--accept`). With `--accept`, take a store that disagrees with
/// its witness (restored from a backup on purpose) as its history from now on: who accepted
/// which head instead of which is recorded as an event, and shown by `checkpoint --accepted`. With
/// `--rotate-key`, replace this machine's signing key: the new key signs from the next seq on,
/// endorsed by the old one, which signs nothing after; this machine's other stores take the new
/// key the same way when next opened. Needs the store to itself (stop its server first).
///
/// Example: memledger checkpoint --to nats://127.0.0.1:4222/memledger.witness.laptop
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Keep the witness record here instead of printing it: a file, `http(s)://…` (PUT, with
    /// MEMLEDGER_WITNESS_TOKEN as a bearer token if set) or `nats://HOST:PORT/SUBJECT`.
    #[arg(long, value_name = "FILE|URL", conflicts_with_all = ["accept", "accepted"])]
    pub to: Option<String>,
    /// Accept the store's head against its witness, saying why.
    #[arg(long, value_name = "REASON", conflicts_with = "accepted")]
    pub accept: Option<String>,
    /// List the heads accepted so far.
    #[arg(long)]
    pub accepted: bool,
    /// Replace this machine's signing key by a new one (the old key file is kept under
    /// `retired/` beside it, so that this machine's other stores can hand over to the new key).
    #[arg(long, conflicts_with_all = ["to", "accept", "accepted"])]
    pub rotate_key: bool,
    /// Print this machine's signing key (its id and public key), for an administrator to
    /// register on a shared ledger.
    #[arg(long, conflicts_with_all = ["to", "accept", "accepted", "rotate_key"])]
    pub key: bool,
    /// On a shared ledger, let another machine's key (its public key, as `--key` prints it there)
    /// sign appends from the next seq on, endorsed by this machine's key. An administrator's
    /// command.
    #[arg(long, value_name = "PUBLIC_KEY", conflicts_with_all = ["to", "accept", "accepted", "rotate_key", "key"])]
    pub register_key: Option<String>,
    /// The name of the machine whose key `--register-key` registers (shown by `verify`).
    #[arg(long, value_name = "NAME", requires = "register_key")]
    pub machine: Option<String>,
    /// On a shared ledger that has no signing keys (never signed, or its keys were removed:
    /// check it with `verify` first), make this machine's key its first and sign its head as it
    /// is. An administrator's command.
    #[arg(long, conflicts_with_all = ["to", "accept", "accepted", "rotate_key", "key", "register_key"])]
    pub enrol: bool,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    // The machine's key is not the store's: shown whether or not a server holds the store.
    if args.key {
        return show_key(ctx, out);
    }
    if crate::backend::Server::connect(&ctx.dir, None).is_some() {
        return Err(CliError::new(
            Exit::Failure,
            format!("a memledger server holds the store at {}", ctx.dir.display()),
            Some("stop it first: checkpoints are read and accepted with the store to itself".into()),
        ));
    }
    if args.rotate_key {
        return rotate_key(ctx, out);
    }
    if args.enrol {
        return enrol(ctx, out);
    }
    if let Some(public) = &args.register_key {
        return register_key(ctx, public, args.machine.as_deref(), out);
    }
    if let Some(reason) = &args.accept {
        if reason.trim().is_empty() {
            return Err(CliError::bad_input("--accept needs a reason (who restored what, and why)"));
        }
        let ctx = Context { accept_witness: true, ..ctx.clone() };
        let ml = ctx.open_direct(false)?;
        // Taking a history in place of the witnessed one is the store's administrators' call.
        let caller = ctx.caller(&ml)?;
        if !caller.access().administers_store() {
            let refusal = caller.access().refusal(memledger_schemas::Verb::Admin, "*", " (accepting a head)".into());
            return Err(EngineError::from(refusal).into());
        }
        let by = memledger_engine::CommandMeta::by(caller.principal.name.clone(), ctx.actor.clone());
        let acceptance = ml.ledger().accept_head(by, reason.trim()).map_err(EngineError::from)?;
        if out.json {
            return out.json_line(&acceptance);
        }
        return match &acceptance.disagreement {
            Some(d) => out.line(format!(
                "accepted head seq {} ({}) as {}: {d}",
                acceptance.head_seq, acceptance.head_hash, acceptance.by
            )),
            None => out.line(format!(
                "the store agreed with its witness; its head seq {} accepted again by {} (recorded at seq {})",
                acceptance.head_seq,
                acceptance.by,
                acceptance.head_seq + 1
            )),
        };
    }
    let ml = ctx.open_direct(false)?;
    if args.accepted {
        let all = ml.ledger().acceptances().map_err(EngineError::from)?;
        if out.json {
            return out.json_line(&serde_json::json!({ "accepted": all }));
        }
        if all.is_empty() {
            return out.line("no head was ever accepted against a witness");
        }
        for a in all {
            out.line(format!(
                "{}  {} accepted seq {} instead of {}: {}",
                a.at,
                a.by,
                a.head_seq,
                a.instead_of_seq.map_or("no witness".into(), |s| format!("seq {s}")),
                a.reason
            ))?;
        }
        return Ok(());
    }
    let Some(witness) = ml.ledger().checkpoint().map_err(EngineError::from)? else {
        return Err(CliError::new(
            Exit::Failure,
            "the store's head is not signed",
            Some("an empty store, or one this machine does not sign: see `memledger verify`".into()),
        ));
    };
    let Some(to) = &args.to else { return out.json_line(&witness) };
    let place = WitnessPlace::parse(to).map_err(|e| CliError::bad_input(e.to_string()))?;
    if let Some(kept) = place.read().map_err(EngineError::from)? {
        // what was accepted instead of the kept witness may replace it
        let accepted =
            ml.ledger().acceptances().map_err(EngineError::from)?.iter().any(|a| {
                a.instead_of_seq == Some(kept.seq) && a.instead_of_hash.as_deref() == Some(kept.hash.as_str())
            });
        let disagreement = ml.ledger().disagreement_with(&kept, &place.shown()).map_err(EngineError::from)?;
        // An acceptance moves a witness of this store only, never another store's.
        let accepted = accepted && kept.store_id == witness.store_id;
        if let Some(problem) = disagreement.filter(|_| !accepted) {
            return Err(CliError::new(
                Exit::Witness,
                format!("kept nothing: the checkpoint at seq {} would move the witness back: {problem}", witness.seq),
                Some(
                    "keep each store's witness at a place of its own; a restore taken on purpose is `memledger \
                     checkpoint --accept REASON` first"
                        .into(),
                ),
            ));
        }
    }
    place.keep(&witness).map_err(EngineError::from)?;
    if out.json {
        out.json_line(&witness)
    } else {
        out.line(format!("kept the checkpoint at seq {} at {}", witness.seq, place.shown()))
    }
}

/// `--rotate-key`: a new key file in place of this machine's, and the store's key record by
/// which the old key hands over to it (written when the store is opened with the new key).
fn rotate_key(ctx: &Context, out: &mut Output) -> Result<(), CliError> {
    let failure = |e: &dyn std::fmt::Display| CliError::new(Exit::Failure, e.to_string(), None);
    let Some(path) = crate::config::signing_key_path() else {
        return Err(CliError::new(
            Exit::Failure,
            "there is no signing key to rotate: no home directory to keep one in",
            Some("set MEMLEDGER_SIGNING_KEY to a key file of mode 0600".into()),
        ));
    };
    // Only a key that signs this store is rotated here: one it does not hold would retire nothing.
    {
        let ml = ctx.open_direct(false)?;
        if ml.ledger().signer().is_none() {
            return Err(CliError::new(
                Exit::Failure,
                "this store is not signed with this machine's key, so there is no key of it to rotate",
                Some("see `memledger verify` for the store's keys".into()),
            ));
        }
    }
    let (old, new) = memledger_engine::Signer::rotate(&path).map_err(|e| failure(&e))?;
    let ml = ctx.open_direct(false)?;
    let keys = ml.ledger().keys().map_err(EngineError::from)?;
    let Some(record) = keys.iter().find(|k| k.id == new.id()) else {
        return Err(failure(&format!(
            "the new key {} was made ({}) but the store did not take it: see `memledger verify`",
            new.id(),
            path.display()
        )));
    };
    let report = serde_json::json!({
        "key_id": record.id.hex(),
        "previous_key_id": old.id().hex(),
        "from_seq": record.from_seq,
        "key_file": path,
        "retired_key_file": old.path(),
    });
    if out.json {
        return out.json_line(&report);
    }
    out.line(format!(
        "key {} signs this store from seq {} on, endorsed by key {}, which signs nothing after",
        record.id,
        record.from_seq,
        old.id()
    ))?;
    out.line(format!(
        "the old key is kept at {} for this machine's other stores, which take the new key when next opened; \
         delete it once they have",
        old.path().display()
    ))
}

/// `--key`: this machine's signing key, as an administrator registers it.
fn show_key(ctx: &Context, out: &mut Output) -> Result<(), CliError> {
    let Some(signer) = ctx.signer()? else {
        return Err(CliError::new(
            Exit::Failure,
            "this machine has no signing key: no home directory to keep one in",
            Some("set MEMLEDGER_SIGNING_KEY to a key file of mode 0600".into()),
        ));
    };
    let report = serde_json::json!({
        "key_id": signer.id().hex(),
        "public_key": memledger_engine::signing::hex(&signer.public()),
        "key_file": signer.path(),
    });
    if out.json {
        return out.json_line(&report);
    }
    out.line(format!("key {}  public {}", signer.id(), memledger_engine::signing::hex(&signer.public())))?;
    out.line(format!("kept at {}", signer.path().display()))
}

/// The store opened on its shared ledger, for an administrator of it (`--register-key`,
/// `--enrol`): a store of its own is bad input, another principal is refused.
fn administered_shared(ctx: &Context, what: &str) -> Result<(memledger_engine::Memledger, String), CliError> {
    let ml = ctx.open_direct(false)?;
    if !ml.ledger().is_shared() {
        return Err(CliError::bad_input(
            "this store is not on a shared ledger: only its own machine's key signs it (see --rotate-key)",
        ));
    }
    let caller = ctx.caller(&ml)?;
    if !caller.access().administers_store() {
        let refusal = caller.access().refusal(memledger_schemas::Verb::Admin, "*", format!(" ({what})"));
        return Err(EngineError::from(refusal).into());
    }
    let by = caller.principal.name.clone();
    Ok((ml, by))
}

/// `--enrol`: sign a shared ledger that has no keys, from its head as it is, with this
/// machine's key.
fn enrol(ctx: &Context, out: &mut Output) -> Result<(), CliError> {
    let (ml, by) = administered_shared(ctx, "signing the shared ledger")?;
    let record = ml.ledger().enrol_shared().map_err(EngineError::from)?;
    let report = serde_json::json!({
        "key_id": record.id.hex(),
        "machine": record.machine,
        "from_seq": record.from_seq,
        "enrolled_by": by,
    });
    if out.json {
        return out.json_line(&report);
    }
    out.line(format!(
        "key {} ({}) is the shared ledger's first key: it signs from seq {} on",
        record.id, record.machine, record.from_seq
    ))
}

/// `--register-key`: another machine's key may sign appends to the shared ledger from the next
/// seq on, endorsed by this machine's; only an administrator of the store registers keys.
fn register_key(ctx: &Context, public: &str, machine: Option<&str>, out: &mut Output) -> Result<(), CliError> {
    let public = public.trim();
    let Some(key) = memledger_engine::signing::unhex::<32>(public) else {
        return Err(CliError::bad_input(format!(
            "{public:?} is not a public key: 64 hex digits, as `memledger checkpoint --key` prints it on that machine"
        )));
    };
    if memledger_engine::signing::verifying_key(&key).is_none() {
        return Err(CliError::bad_input(format!("{public} is not a valid Ed25519 public key")));
    }
    let machine = machine.map(str::trim).filter(|m| !m.is_empty()).unwrap_or("unnamed");
    let (ml, by) = administered_shared(ctx, "registering a signing key")?;
    let record = ml.ledger().register_key(key, machine, &by).map_err(EngineError::from)?;
    let report = serde_json::json!({
        "key_id": record.id.hex(),
        "machine": record.machine,
        "from_seq": record.from_seq,
        "endorsed_by": record.endorsed_by.hex(),
        "registered_by": by,
    });
    if out.json {
        return out.json_line(&report);
    }
    out.line(format!(
        "key {} ({}) signs appends to the shared ledger from seq {} on, endorsed by key {}",
        record.id, record.machine, record.from_seq, record.endorsed_by
    ))
}
