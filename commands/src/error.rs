//! A command's error, typed once for every surface: the CLI prints it with its exit code, HTTP
//! answers its status in a problem document, MCP returns it as a tool error (docs/cli.md "Exit
//! codes", docs/http.md).

use memledger_engine::EngineError;
use memledger_engine::error::Exit;
use serde::{Deserialize, Serialize};

/// Why a command did not run to its end. Every variant but `Failure` means nothing was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CommandError {
    /// A runtime or storage error (exit 1, HTTP 500).
    #[error("{message}")]
    Failure { message: String, hint: Option<String> },
    /// Another process holds the store (exit 1, HTTP 503): try again, or go through its server.
    #[error("{message}")]
    Unavailable { message: String, hint: Option<String> },
    /// Bad input or usage (exit 2, HTTP 422).
    #[error("{message}")]
    BadInput { message: String, hint: Option<String> },
    /// The state is not what the caller expected (exit 3, HTTP 409).
    #[error("{message}")]
    Conflict { message: String, hint: Option<String> },
    /// No such memory or conflict (exit 4, HTTP 404).
    #[error("{message}")]
    NotFound { message: String, hint: Option<String> },
    /// The caller may not do this (exit 5, HTTP 403): the verb it lacked, and where, when a grant
    /// refused it (none when its token authenticates no one).
    #[error("{message}")]
    NotPermitted { message: String, hint: Option<String>, verb: Option<String>, scope: Option<String> },
    /// The store disagrees with its witness (exit 6, HTTP 500): refused, nothing was done.
    #[error("{message}")]
    Witness { message: String, hint: Option<String> },
}

/// The words of a store another process holds: the engine's lock error says them.
const HELD_ELSEWHERE: &str = "another memledger process holds the store";

impl CommandError {
    /// An error of the kind `exit` names.
    pub fn new(exit: Exit, message: impl Into<String>, hint: Option<String>) -> CommandError {
        let message = message.into();
        match exit {
            Exit::BadInput => CommandError::BadInput { message, hint },
            Exit::Conflict => CommandError::Conflict { message, hint },
            Exit::NotFound => CommandError::NotFound { message, hint },
            Exit::NotPermitted => CommandError::NotPermitted { message, hint, verb: None, scope: None },
            Exit::Witness => CommandError::Witness { message, hint },
            Exit::Failure | Exit::Ok if message.contains(HELD_ELSEWHERE) => CommandError::Unavailable { message, hint },
            Exit::Failure | Exit::Ok => CommandError::Failure { message, hint },
        }
    }

    pub fn bad_input(message: impl Into<String>) -> CommandError {
        CommandError::BadInput { message: message.into(), hint: None }
    }

    pub fn failure(message: impl Into<String>) -> CommandError {
        CommandError::Failure { message: message.into(), hint: None }
    }

    /// The exit code of docs/cli.md.
    pub fn exit(&self) -> Exit {
        match self {
            CommandError::Failure { .. } | CommandError::Unavailable { .. } => Exit::Failure,
            CommandError::BadInput { .. } => Exit::BadInput,
            CommandError::Conflict { .. } => Exit::Conflict,
            CommandError::NotFound { .. } => Exit::NotFound,
            CommandError::NotPermitted { .. } => Exit::NotPermitted,
            CommandError::Witness { .. } => Exit::Witness,
        }
    }

    /// The HTTP status it answers with.
    pub fn http_status(&self) -> u16 {
        match self {
            CommandError::Failure { .. } | CommandError::Witness { .. } => 500,
            CommandError::Unavailable { .. } => 503,
            CommandError::BadInput { .. } => 422,
            CommandError::Conflict { .. } => 409,
            CommandError::NotFound { .. } => 404,
            CommandError::NotPermitted { .. } => 403,
        }
    }

    pub fn message(&self) -> &str {
        let (CommandError::Failure { message, .. }
        | CommandError::Unavailable { message, .. }
        | CommandError::BadInput { message, .. }
        | CommandError::Conflict { message, .. }
        | CommandError::NotFound { message, .. }
        | CommandError::NotPermitted { message, .. }
        | CommandError::Witness { message, .. }) = self;
        message
    }

    /// What to do about it, when there is something to say.
    pub fn hint(&self) -> Option<&str> {
        let (CommandError::Failure { hint, .. }
        | CommandError::Unavailable { hint, .. }
        | CommandError::BadInput { hint, .. }
        | CommandError::Conflict { hint, .. }
        | CommandError::NotFound { hint, .. }
        | CommandError::NotPermitted { hint, .. }
        | CommandError::Witness { hint, .. }) = self;
        hint.as_deref()
    }

    /// When a grant refused the caller: the verb it lacked, and the scope.
    pub fn refusal(&self) -> Option<(&str, &str)> {
        match self {
            CommandError::NotPermitted { verb: Some(verb), scope: Some(scope), .. } => Some((verb, scope)),
            _ => None,
        }
    }
}

impl From<EngineError> for CommandError {
    fn from(e: EngineError) -> Self {
        let hint = match &e {
            EngineError::Conflict(_) => Some("nothing was written; look at the current state and try again".into()),
            EngineError::NotPermitted(_) => {
                Some("nothing was written; `memledger whoami` lists this principal's grants".into())
            }
            _ => None,
        };
        let mut error = CommandError::new(e.exit(), e.to_string(), hint);
        if let (EngineError::NotPermitted(n), CommandError::NotPermitted { verb, scope, .. }) = (&e, &mut error) {
            (*verb, *scope) = (Some(n.verb.to_string()), Some(n.scope.clone()));
        }
        error
    }
}

impl From<memledger_engine::NotPermitted> for CommandError {
    fn from(e: memledger_engine::NotPermitted) -> Self {
        CommandError::from(EngineError::from(e))
    }
}

impl From<std::io::Error> for CommandError {
    fn from(e: std::io::Error) -> Self {
        CommandError::failure(format!("i/o error: {e}"))
    }
}
