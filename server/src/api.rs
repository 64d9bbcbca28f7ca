//! The transport of the commands: how the CLI sends a [`Call`] and what comes back. The calls
//! themselves, and their answers, are the command layer's (`memledger-commands`).

use memledger_engine::error::Exit;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use memledger_commands::request::*;

/// A call as the CLI sends it: the call, and who acts.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CallRequest {
    pub call: Call,
    /// Accepted and ignored: the answer is always the command's JSON document, which the CLI
    /// renders as human text in its own process.
    #[serde(default)]
    pub json: bool,
    /// Accepted and ignored (as `json`).
    #[serde(default)]
    pub color: bool,
    /// Who is acting (`--actor`); else the server's default for the connection.
    #[serde(default)]
    pub actor: Option<String>,
}

/// What a command answered and how it ended: its typed answer serialized (what `--json` prints)
/// and the exit code the CLI would end with.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct Reply {
    /// The answer: the command's `--json` document (JSON Lines for `save --from` and `log`).
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
    /// What a host's command answered: its document, its notes (and the warning of a failed
    /// verification) for standard error, and its error.
    pub fn answered(hosted: memledger_commands::host::Hosted) -> Reply {
        let memledger_commands::host::Hosted { executed, verify_failed } = hosted;
        let mut stderr: String = executed.notes.iter().map(|n| format!("{n}\n")).collect();
        if let Some(failed) = &verify_failed {
            stderr.push_str(&format!("memledger: warning: {failed}\n"));
        }
        // Lines refused are the error only when no other error stopped the batch.
        let stopped = executed.error.as_ref().is_some_and(|e| e.exit() != Exit::BadInput);
        let refused = match &executed.answer {
            Some(memledger_commands::Answer::SaveLines(_)) if stopped => 0,
            Some(memledger_commands::Answer::SaveLines(lines)) => {
                lines.iter().filter(|l| matches!(l, memledger_commands::answer::LineAnswer::Refused { .. })).count()
            }
            _ => 0,
        };
        let stdout = match executed.answer.as_ref().map(memledger_commands::Answer::json_lines) {
            None => String::new(),
            Some(Ok(lines)) => lines,
            Some(Err(e)) => return Reply::failure(format!("the answer could not be serialized: {e}")),
        };
        let reply = Reply { stdout, stderr, refused, verify_failed, ..Reply::default() };
        match executed.error {
            None => reply,
            Some(e) => Reply::error(e, reply),
        }
    }

    /// A command's document, or its error.
    pub fn document<T: Serialize>(result: Result<T, memledger_commands::CommandError>) -> Reply {
        match result.map(|doc| serde_json::to_string(&doc)) {
            Ok(Ok(json)) => Reply { stdout: json + "\n", ..Reply::default() },
            Ok(Err(e)) => Reply::failure(format!("the answer could not be serialized: {e}")),
            Err(e) => Reply::error(e, Reply::default()),
        }
    }

    /// `reply` ended by `e`.
    fn error(e: memledger_commands::CommandError, reply: Reply) -> Reply {
        Reply {
            exit_code: e.exit().into(),
            error: Some(e.message().to_string()),
            hint: e.hint().map(str::to_string),
            refusal: e.refusal().map(|(verb, scope)| Refusal { verb: verb.into(), scope: scope.into() }),
            ..reply
        }
    }

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
