//! What one MCP session holds beyond its calls: the resources it subscribed to, and the level
//! of the log messages it asked for. Each subscription remembers whom it reads for and a digest
//! of what it last read; after every change to the ledger (the store's head moved: a write by
//! any session, the CLI, HTTP) the session reads each subscribed resource again, as its
//! subscriber, and sends `notifications/resources/updated` for those that read differently.
//! A resource the subscriber may no longer read counts as changed, and its read then says why.
//!
//! Logging is what the clients in use speak (protocol 2025-11-25 and before); SEP-2577
//! deprecates it for 2026-07-28, hence the `allow` below. Only this module names it.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ResourceUpdatedNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::watch;

use crate::{CallFn, Who};

/// The name log messages go out under.
const LOGGER: &str = "memledger";

/// How a resource read as a subscriber reads it: a digest of its answer, or of its error.
pub type Digest = [u8; 32];

struct Subscription {
    who: Who,
    digest: Digest,
}

/// One session's subscriptions and log level.
#[derive(Default)]
pub struct Session {
    subscriptions: Mutex<BTreeMap<String, Subscription>>,
    /// The least severe level the client wants; unset: warnings and above.
    level: Mutex<Option<LoggingLevel>>,
    /// The task watching the ledger for this session's subscriptions, started by the first.
    watching: Mutex<bool>,
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl Session {
    pub fn set_level(&self, level: LoggingLevel) {
        *self.level.lock() = Some(level);
    }

    /// `logging/setLevel`.
    pub fn set_level_from(&self, request: &rmcp::model::SetLevelRequestParams) {
        self.set_level(request.level);
    }

    /// A command's name and exit code, at `debug`.
    pub async fn log_command(&self, peer: &Peer<RoleServer>, data: Value) {
        self.log(peer, LoggingLevel::Debug, data).await;
    }

    /// A command's note or refusal, at `warning`.
    pub async fn log_warning(&self, peer: &Peer<RoleServer>, data: Value) {
        self.log(peer, LoggingLevel::Warning, data).await;
    }

    /// Whether a message at `level` goes out.
    pub fn logs(&self, level: LoggingLevel) -> bool {
        rank(level) >= rank(self.level.lock().unwrap_or(LoggingLevel::Warning))
    }

    /// Send `data` at `level` when the client asked for that level. Memory text never goes
    /// above `debug`: callers pass ids, counts and the command's notes, not texts.
    pub async fn log(&self, peer: &Peer<RoleServer>, level: LoggingLevel, data: Value) {
        if self.logs(level) {
            let message = LoggingMessageNotificationParam::new(level, data).with_logger(LOGGER);
            // A client that went away takes its messages with it.
            let _ = peer.notify_logging_message(message).await;
        }
    }

    pub fn subscribe(&self, uri: String, who: Who, digest: Digest) {
        self.subscriptions.lock().insert(uri, Subscription { who, digest });
    }

    pub fn unsubscribe(&self, uri: &str) {
        self.subscriptions.lock().remove(uri);
    }

    /// Start watching `changes` for this session's subscriptions (once per session), sending
    /// their updates to `peer` until the session ends.
    pub fn watch(self: &Arc<Self>, changes: Option<watch::Receiver<u64>>, call: CallFn, peer: Peer<RoleServer>) {
        // Not marked seen: a head moved since the server started wakes the loop once at once,
        // and a write between the subscription's first read and this start is not missed.
        let Some(mut changes) = changes else { return };
        {
            let mut watching = self.watching.lock();
            if *watching {
                return;
            }
            *watching = true;
        }
        let session = Arc::downgrade(self);
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                let Some(session) = session.upgrade() else { return };
                let subscribed: Vec<(String, Who)> =
                    session.subscriptions.lock().iter().map(|(u, s)| (u.clone(), s.who.clone())).collect();
                for (uri, who) in subscribed {
                    let digest = super::resources::digest(&call, &uri, who).await;
                    let changed = match session.subscriptions.lock().get_mut(&uri) {
                        Some(s) if s.digest != digest => {
                            s.digest = digest;
                            true
                        }
                        _ => false,
                    };
                    if changed
                        && peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_err()
                    {
                        return;
                    }
                }
                if peer.is_transport_closed() {
                    return;
                }
            }
        });
    }
}

/// The resources of one `subscriptions/listen` stream (protocol 2026-07-28): each with whom it
/// reads for and how it last read.
pub struct Listened {
    entries: Vec<(String, Who, Digest)>,
}

impl Listened {
    /// The resources of `uris` that `who` may read (the others are never reported: the stream's
    /// acknowledgment goes out before a read could check them).
    pub async fn new(call: &CallFn, uris: Vec<String>, who: &Who) -> Listened {
        let mut entries = Vec::with_capacity(uris.len());
        for uri in uris {
            if !super::resources::readable(call, &uri, who.clone()).await {
                continue;
            }
            let digest = super::resources::digest(call, &uri, who.clone()).await;
            entries.push((uri, who.clone(), digest));
        }
        Listened { entries }
    }

    /// The resources that read differently than last time.
    pub async fn changed(&mut self, call: &CallFn) -> Vec<String> {
        let mut out = Vec::new();
        for (uri, who, last) in &mut self.entries {
            let digest = super::resources::digest(call, uri, who.clone()).await;
            if digest != *last {
                *last = digest;
                out.push(uri.clone());
            }
        }
        out
    }
}
