//! `memledger serve`: one long-lived process that holds a store, opened once with its caches
//! warm, for every agent and person on a machine (docs/design.md §9,
//! docs/adr/0014-one-server-per-store.md).
//!
//! It listens on a Unix socket in the store directory (mode 0600: only the user connects) and,
//! when asked, on TCP with a bearer token. What it serves: the HTTP API ([`http`]: the CLI's
//! commands with the same JSON, problem+json errors, `/openapi.json`), MCP over streamable HTTP at
//! `/mcp` ([`mcp`], the same tools as `memledger mcp` on stdio), the review page at `/` ([`ui`]),
//! and [`api::Call`]s from the CLI, whose [`api::Reply`] holds the command's typed answer
//! serialized (the CLI renders it as it renders its own).
//!
//! This crate knows transports, not commands: the command layer (`memledger-commands`) executes
//! each call on the open store ([`Store`]). Commands run side by side, writes included (the
//! engine orders appends, and synced saves in flight together share a sync); a rebuild runs alone.

pub mod api;
pub mod client;
mod contract;
pub use memledger_commands::fence;
pub mod http;
pub mod mcp;
pub mod serve;
pub mod ui;
pub mod unit;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use api::{Call, CallRequest, Reply, ServerStatus};
use memledger_commands::host::Host;
use memledger_engine::{Caller, Principal};

/// The store a server holds: the command layer's [`Host`] (which executes every command), and
/// the ledger's head, announced after every command that may have written (whoever sent it: the
/// CLI over the socket, HTTP, an MCP tool) to the MCP sessions that subscribed to resources.
pub struct Store {
    host: Host,
    head: tokio::sync::watch::Sender<u64>,
}

impl Store {
    /// The store of `host`, and the receiver of its head's announcements.
    pub fn new(host: Host) -> (Arc<Store>, tokio::sync::watch::Receiver<u64>) {
        let (head, changes) = tokio::sync::watch::channel(host.head_seq());
        (Arc::new(Store { host, head }), changes)
    }

    fn announce(&self) {
        let now = self.host.head_seq();
        self.head.send_if_modified(|head| std::mem::replace(head, now) != now);
    }

    /// Run `call` for `caller` (blocking): its typed answer serialized, and how it ended.
    pub fn run(&self, call: &Call, caller: &Caller) -> Reply {
        let hosted = self.host.run(call, caller);
        if call.writes() {
            self.announce();
        }
        Reply::answered(hosted)
    }

    /// `import` of an exported stream; `allow_secret`: even if its memories hold credentials.
    pub fn import(&self, stream: &[u8], caller: &Caller, allow_secret: bool) -> Reply {
        let imported = self.host.import(stream, caller, allow_secret);
        self.announce();
        Reply::document(imported)
    }

    /// `export --since`: the event stream `caller` may read into `out`; the events written.
    pub fn export(
        &self,
        since: u64,
        caller: &Caller,
        out: &mut dyn std::io::Write,
    ) -> Result<u64, memledger_commands::CommandError> {
        self.host.export(since, caller, out)
    }

    /// The ledger's head seq.
    pub fn head_seq(&self) -> u64 {
        self.host.head_seq()
    }

    /// The principal a principal's token authenticates (never the store's own token: the server
    /// checks that one itself).
    pub fn authenticate(&self, token: &str) -> Option<Principal> {
        self.host.authenticate(token)
    }
}

/// Whom a call is for: a caller the server authenticated, or (a process relaying calls, as
/// `memledger mcp` does) the token it was given, if any, and whom it acts for.
#[derive(Clone, Debug)]
pub enum Who {
    Caller(Caller),
    Token { token: Option<String>, actor: String },
}

/// A call made asynchronously (the MCP tools' way to run a command): on a blocking thread over
/// the server's store, or, from `memledger mcp`, over the socket of a running server.
pub type CallFn = Arc<dyn Fn(Call, Who) -> Pin<Box<dyn Future<Output = Reply> + Send>> + Send + Sync>;

/// The [`CallFn`] of a server's store: each call on a blocking thread, for the caller the server
/// authenticated (a token relayed is authenticated here).
pub fn call_fn(store: Arc<Store>) -> CallFn {
    Arc::new(move |call, who| {
        let store = store.clone();
        Box::pin(async move {
            let caller = match who {
                Who::Caller(caller) => caller,
                Who::Token { token: None, actor } => Caller::owner(actor),
                Who::Token { token: Some(token), actor } => match authenticate(&store, token).await {
                    Some(principal) => Caller { principal: Arc::new(principal), actor },
                    None => return Reply::unauthenticated(),
                },
            };
            http::run_call(&store, call, caller).await
        })
    })
}

/// The principal `token` authenticates, from async code: reading the principals view blocks
/// (on a shared ledger it follows the ledger first, through the ledger's own runtime), so it runs
/// off the async workers.
pub(crate) async fn authenticate(store: &Arc<Store>, token: String) -> Option<Principal> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || store.authenticate(&token)).await.ok().flatten()
}

/// The file names the server keeps in the store directory.
pub mod files {
    use std::path::{Path, PathBuf};

    /// The Unix socket clients connect to.
    pub const SOCKET: &str = "memledger.sock";
    /// The bearer token of TCP clients (mode 0600).
    pub const TOKEN: &str = "token";
    /// Held (an exclusive lock) by the one server of the store.
    pub const SERVE_LOCK: &str = "serve.lock";

    pub fn socket(dir: &Path) -> PathBuf {
        dir.join(SOCKET)
    }

    pub fn token(dir: &Path) -> PathBuf {
        dir.join(TOKEN)
    }
}

/// The store's own bearer token (the owner's), if it has been made.
pub fn existing_token(dir: &std::path::Path) -> Option<String> {
    let t = std::fs::read_to_string(files::token(dir)).ok()?;
    let t = t.trim();
    (t.len() >= 32).then(|| t.to_string())
}

/// The store's bearer token, generated into the store directory (mode 0600) on first use.
pub fn token(dir: &std::path::Path) -> std::io::Result<String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = files::token(dir);
    if let Ok(t) = std::fs::read_to_string(&path) {
        let t = t.trim().to_string();
        if t.len() >= 32 {
            return Ok(t);
        }
    }
    std::fs::create_dir_all(dir)?;
    let bytes: [u8; 32] = rand::random();
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    // Written whole under another name, then renamed: a reader never sees half a token.
    let tmp = dir.join(format!(".token.{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
    file.write_all(token.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    Ok(token)
}
