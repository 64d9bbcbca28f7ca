//! One module per command, each an `Args` struct (its doc comment is the help text) and `run`.

pub mod checkpoint;
pub mod classify;
pub mod completions;
pub mod conflicts;
pub mod embed;
pub mod erase;
pub mod export;
pub mod forget;
pub mod history;
pub mod hooks;
pub mod import;
pub mod list;
pub mod log;
pub mod mcp;
pub mod migrate;
pub mod principals;
pub mod rebuild;
pub mod recall;
pub mod save;
pub mod serve;
pub mod sessions;
pub mod show;
pub mod stats;
pub mod status;
pub mod stream;
pub mod ui;
pub mod update;
pub mod usage;
pub mod verify;
pub mod why;

use std::io::Read;

use memledger_commands::{Answer, Call, Executed};
use memledger_engine::{Caller, Memledger};
use memledger_server::api::Reply;

use crate::output::{CliError, Output};

/// Run a store command on an open store for `caller` (the command layer executes it) and print
/// its answer as the command does.
pub fn execute(ml: &Memledger, caller: &Caller, call: &Call, out: &mut Output) -> Result<(), CliError> {
    let executed = memledger_commands::execute(ml, caller, call, &settings());
    print_executed(executed, out)
}

/// What this process brings to the commands it executes: the daily token budget of its
/// settings, and a progress bar for a long rebuild.
pub fn settings() -> memledger_commands::Settings {
    let bar = std::sync::Arc::new(std::sync::Mutex::new(None::<indicatif::ProgressBar>));
    let progress = move |done: u64, total: u64| {
        let mut bar = bar.lock().unwrap_or_else(|p| p.into_inner());
        let bar = bar.get_or_insert_with(|| crate::style::progress(Some(total), "rebuilding"));
        bar.set_position(done);
        if done >= total {
            bar.finish_and_clear();
        }
    };
    let daily_budget =
        usage::daily_budget().map_err(|e| memledger_commands::CommandError::new(e.code, e.message, e.hint));
    memledger_commands::Settings { daily_budget, progress: Some(std::sync::Arc::new(progress)) }
}

/// Print what a command answered: its notes, its answer (`--json`: the document; else the human
/// text), then its error (`save --from`'s refused lines are one, after their answers).
pub fn print_executed(executed: Executed, out: &mut Output) -> Result<(), CliError> {
    for note in &executed.notes {
        out.note(note);
    }
    if let Some(answer) = &executed.answer {
        print_answer(answer, out)?;
    }
    match executed.error {
        Some(e) => {
            out.flush()?;
            Err(e.into())
        }
        None => Ok(()),
    }
}

/// How a command's answer reads for people (its `--json` output is the document itself). Each
/// command's module renders its own answer; one with no human text prints its document.
pub trait Render: serde::Serialize {
    /// `command` is the call's name (`Call::name`): one document may answer several commands (a
    /// principal added, granted, revoked or rotated).
    fn render(&self, out: &mut Output, _command: &str) -> Result<(), CliError> {
        let mut document = String::new();
        memledger_commands::answer::form::doc::write(&mut document, self).map_err(std::io::Error::from)?;
        out.text(&document)
    }
}

impl<T: Render> Render for Box<T> {
    fn render(&self, out: &mut Output, command: &str) -> Result<(), CliError> {
        (**self).render(out, command)
    }
}

// The review page's and the importer's reads have no human text: their document.
impl Render for memledger_commands::answer::BrowseDoc {}
impl Render for memledger_commands::answer::ProgressDoc {}
impl Render for memledger_commands::answer::ChunkDoc {}
impl Render for memledger_engine::review::ConflictPage {}
impl Render for memledger_engine::review::Timeline {}
impl<T: serde::Serialize> Render for memledger_engine::review::Page<T> {}

/// `print_answer` for every command of the command layer's list (`with_commands!`): the
/// compiler names an answer no module renders.
macro_rules! print_answer {
    ($(
        $(#[$meta:meta])*
        $name:literal $call:ident($request:ty) -> $answer:ty { $($how:tt)* }
    )*) => {
        /// An answer as `--json` prints it, or its human text ([`Render`]).
        pub fn print_answer(answer: &Answer, out: &mut Output) -> Result<(), CliError> {
            if out.json {
                return out.text(&answer.json_lines().map_err(std::io::Error::from)?);
            }
            match answer {
                $( Answer::$call(document) => document.render(out, $name), )*
            }
        }
    };
}
memledger_commands::with_commands!(print_answer);

/// Read a text argument, where `-` means standard input.
pub fn text_arg(text: &str) -> Result<String, CliError> {
    if text != "-" {
        return Ok(text.to_string());
    }
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes)?;
    String::from_utf8(bytes).map_err(|_| CliError::bad_input("standard input is not valid UTF-8"))
}
/// A command that failed before the command layer answered (the store could not be opened, the
/// caller not authenticated), for a client: its error, and the notes printed into `out`.
pub fn reply_failed(e: CliError, out: Output) -> Reply {
    let (stdout, stderr) = out.into_parts();
    Reply {
        stdout,
        stderr,
        exit_code: e.code.into(),
        error: Some(e.message),
        hint: e.hint,
        refused: 0,
        refusal: e.refusal.map(|(verb, scope)| memledger_server::api::Refusal { verb, scope }),
        verify_failed: None,
    }
}
