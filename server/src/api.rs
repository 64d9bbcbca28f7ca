//! The transport of the commands: how the CLI sends a [`Call`] and what comes back. The calls
//! themselves, and their answers, are the command layer's (`memledger-commands`).

use memledger_engine::error::Exit;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use memledger_commands::request::*;

/// A call as the CLI sends it: the call, how to print, and who acts.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CallRequest {
    pub call: Call,
    /// `--json` output; else the human text.
    #[serde(default)]
    pub json: bool,
    /// Colours in the human text.
    #[serde(default)]
    pub color: bool,
    /// Who is acting (`--actor`); else the server's default for the connection.
    #[serde(default)]
    pub actor: Option<String>,
}

/// What a command printed and how it ended: identical to the same command run in the CLI.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct Reply {
    /// Standard output: the `--json` document(s), or the human text.
    pub stdout: String,
    /// Notes for standard error (not errors: `error` is the error).
    pub stderr: String,
    /// The exit code of docs/cli.md.
    pub exit_code: i32,
    /// The error, when `exit_code` is not 0.
    pub error: Option<String>,
    pub hint: Option<String>,
    /// `save --from` lines refused in this call.
    #[serde(default)]
    pub refused: usize,
    /// When the caller was not permitted (exit 5): the verb it lacked, and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
    /// The store's last verification failed: when and what (until one passes). Also a note on
    /// standard error, and over HTTP the `memledger-verify-failed` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_failed: Option<String>,
}

/// What a refused caller lacked: a verb in a scope (or scope pattern).
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct Refusal {
    pub verb: String,
    pub scope: String,
}

impl Reply {
    /// A command that could not run to its end ([`Exit::Failure`]), printing nothing.
    pub fn failure(error: String) -> Reply {
        Reply { exit_code: Exit::Failure.into(), error: Some(error), ..Reply::default() }
    }

    /// A call whose token authenticates no one ([`Exit::NotPermitted`]): nothing ran.
    pub fn unauthenticated() -> Reply {
        Reply {
            exit_code: Exit::NotPermitted.into(),
            error: Some(memledger_engine::EngineError::Unauthenticated.to_string()),
            hint: Some(UNAUTHENTICATED_HINT.into()),
            ..Reply::default()
        }
    }
}

/// What to do about a token that authenticates no one.
pub const UNAUTHENTICATED_HINT: &str = "use the token `memledger principals add` or `principals rotate` printed \
    (MEMLEDGER_TOKEN, --token, or `Authorization: Bearer`); the store's own token is `memledger serve --print-token`";

/// Who serves a store (`GET /v1/status`).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct ServerStatus {
    pub server: String,
    pub version: String,
    pub pid: u32,
    pub dir: String,
    pub socket: String,
    /// The loopback (or, with --allow-remote, other) address HTTP listens on, if any.
    pub http: Option<String>,
    /// Seconds without a request after which it exits, if set.
    pub idle_exit_secs: Option<u64>,
    /// The actor of the review page's decisions: `ui:<user>`.
    pub ui_actor: String,
    pub uptime_secs: u64,
    pub head_seq: u64,
}
