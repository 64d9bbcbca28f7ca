//! One module per command, each an `Args` struct (its doc comment is the help text) and `run`.

pub mod classify;
pub mod completions;
pub mod conflicts;
pub mod embed;
pub mod export;
pub mod forget;
pub mod history;
pub mod import;
pub mod list;
pub mod log;
pub mod mcp;
pub mod rebuild;
pub mod recall;
pub mod save;
pub mod show;
pub mod stats;
pub mod update;
pub mod verify;
pub mod why;

use std::io::Read;

use crate::output::CliError;

/// Read a text argument, where `-` means standard input.
pub fn text_arg(text: &str) -> Result<String, CliError> {
    if text != "-" {
        return Ok(text.to_string());
    }
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes)?;
    String::from_utf8(bytes).map_err(|_| CliError::bad_input("standard input is not valid UTF-8"))
}
