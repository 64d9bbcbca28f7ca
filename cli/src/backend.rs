//! Where a command runs: through the store's server when one answers on its socket (or one
//! `--autostart` starts), else on the store opened by this process. Either way the command is
//! an [`api::Call`] the command layer executes, and this process renders its typed answer, so
//! the output and the exit code are the same (docs/adr/0014-one-server-per-store.md).

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use memledger_engine::Memledger;
use memledger_engine::error::Exit;
use memledger_server::api::{Call, CallRequest, Reply};
use memledger_server::client::{Client, ClientError};

use crate::app::Context;
use crate::output::{CliError, Output};

/// A connection to the store's server.
pub struct Server {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

impl Server {
    /// Connect to the server of `dir`, if one answers; every call made as the principal `token`
    /// authenticates (none: the store's owner).
    pub fn connect(dir: &Path, token: Option<&str>) -> Option<Server> {
        let socket = memledger_server::files::socket(dir);
        if !socket.exists() {
            return None;
        }
        let runtime = memledger_server::client::runtime().ok()?;
        let client = runtime.block_on(Client::connect(&socket)).ok()?.with_token(token.map(str::to_string));
        Some(Server { runtime, client })
    }

    /// Run a call on the server: its typed answer serialized, and how it ended.
    pub fn call(&mut self, ctx: &Context, call: Call) -> Result<Reply, CliError> {
        // `json: true` for a server of an earlier version, which printed human text otherwise.
        let request = CallRequest { call, json: true, color: false, actor: Some(ctx.actor.clone()) };
        self.runtime.block_on(self.client.call(&request)).map_err(unreachable)
    }

    /// Import a stream through the server: its report serialized, and how it ended.
    pub fn import(&mut self, ctx: &Context, stream: Vec<u8>, allow_secret: bool) -> Result<Reply, CliError> {
        // JSON, for a server of an earlier version, which printed human text otherwise.
        self.runtime.block_on(self.client.import(stream, true, false, &ctx.actor, allow_secret)).map_err(unreachable)
    }

    pub fn export(&mut self, since: u64, out: &mut dyn std::io::Write) -> Result<(), CliError> {
        self.runtime.block_on(self.client.export(since, out)).map_err(unreachable)
    }

    pub fn status(&mut self) -> Result<memledger_server::ServerStatus, CliError> {
        self.runtime.block_on(self.client.status()).map_err(unreachable)
    }
}

fn unreachable(e: ClientError) -> CliError {
    CliError::new(
        Exit::Failure,
        e.to_string(),
        Some("the server may have stopped; MEMLEDGER_NO_SERVER=1 opens the store directly".into()),
    )
}

/// Print what the server answered `call` as this process prints its own answers (the typed
/// answer rendered here, `--json` or human text); its error, unless `batch` (a `save --from`
/// batch, whose refusals the caller counts).
pub fn print_reply(call: &Call, reply: &Reply, out: &mut Output, batch: bool) -> Result<(), CliError> {
    for note in reply.stderr.lines() {
        out.note(note);
    }
    if !reply.stdout.trim().is_empty() {
        match memledger_commands::Answer::parse(call, &reply.stdout) {
            Ok(answer) => crate::commands::print_answer(&answer, out)?,
            Err(e) => unreadable(&e, &reply.stdout, out)?,
        }
    }
    reply_error(reply, out, batch)
}

/// An answer of a server of another version: what it did is done, so the answer is shown as it
/// came, with a warning.
fn unreadable(e: &serde_json::Error, answer: &str, out: &mut Output) -> Result<(), CliError> {
    out.note(format!("memledger: warning: the server's answer is not this version's ({e}); restart `memledger serve`"));
    out.text(answer)
}

/// Print the server's answer to an import.
pub fn print_import_reply(reply: &Reply, out: &mut Output) -> Result<(), CliError> {
    for note in reply.stderr.lines() {
        out.note(note);
    }
    if !reply.stdout.trim().is_empty() {
        match serde_json::from_str::<memledger_engine::ImportReport>(reply.stdout.trim()) {
            Ok(report) => crate::commands::import::render(out, &report)?,
            Err(e) => unreadable(&e, &reply.stdout, out)?,
        }
    }
    reply_error(reply, out, false)
}

/// The error a reply ended with, if any (a batch's refused lines are counted by its caller).
fn reply_error(reply: &Reply, out: &mut Output, batch: bool) -> Result<(), CliError> {
    let exit = Exit::from_code(reply.exit_code);
    if exit == Exit::Ok || (batch && exit == Exit::BadInput && reply.refused > 0) {
        return Ok(());
    }
    out.flush()?;
    let mut error =
        CliError::new(exit, reply.error.clone().unwrap_or_else(|| "the command failed".into()), reply.hint.clone());
    error.refusal = reply.refusal.as_ref().map(|r| (r.verb.clone(), r.scope.clone()));
    Err(error)
}

/// Whether a directory holds a store.
pub fn store_exists(dir: &Path) -> bool {
    dir.join("CURRENT").exists()
}

/// Start a server for `dir` in the background (it exits after `idle`) and wait until it
/// answers, at most a few seconds. Its messages go to `<dir>/serve.log`. `serve_args` go to
/// `memledger serve` (`--http ADDR` for the review page).
pub fn autostart(
    dir: &Path,
    idle: Duration,
    wait: Duration,
    serve_args: &[String],
    token: Option<&str>,
) -> Option<Server> {
    let exe = std::env::current_exe().ok()?;
    let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("serve.log")).ok()?;
    let idle = format!("{}ms", idle.as_millis());
    let spawned = std::process::Command::new(exe)
        .arg("--dir")
        .arg(dir)
        .args(["--no-server", "serve", "--idle-exit", &idle])
        .args(serve_args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn();
    let mut child = spawned.ok()?;
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    while started.elapsed() < wait.max(Duration::from_secs(5)) {
        if let Some(server) = Server::connect(dir, token) {
            // The child runs on by itself; reap it if it already exited (another server won).
            let _ = child.try_wait();
            return Some(server);
        }
        // A server that could not start (another one is starting) exits: keep waiting for that one.
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
    None
}

/// A store opened by this process for one command: the store, or an empty one standing in for
/// a store that does not exist yet (removed when dropped).
pub enum Opened {
    Store(Memledger),
    Empty { ml: Box<Memledger>, dir: PathBuf },
}

impl Deref for Opened {
    type Target = Memledger;
    fn deref(&self) -> &Memledger {
        match self {
            Opened::Store(ml) => ml,
            Opened::Empty { ml, .. } => ml,
        }
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        if let Opened::Empty { dir, .. } = self {
            let _ = std::fs::remove_dir_all(&*dir);
        }
    }
}
