//! The CLI's helpers on the direct route: every command opens the store in its own process
//! (`MEMLEDGER_NO_SERVER=1`), as without `memledger serve`. [`super::server`] has the same
//! functions through a server.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

pub use super::code;

/// Whether these helpers go through a server.
pub const THROUGH_SERVER: bool = false;

/// `memledger --dir DIR`, which opens the store itself.
pub fn memledger(dir: &Path) -> Command {
    let mut command = super::memledger(dir);
    command.env("MEMLEDGER_NO_SERVER", "1");
    command
}

/// Run `memledger --dir DIR ARGS…` to the end.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    super::run_with(memledger(dir), args)
}

/// [`run`], with `stdin` on its standard input.
pub fn run_stdin(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    super::run_stdin_with(memledger(dir), args, stdin)
}

/// `memledger --json ARGS…`, which must succeed: its one JSON value.
pub fn json(dir: &Path, args: &[&str]) -> Value {
    super::value(&run(dir, &[&["--json"], args].concat()), args)
}

/// `memledger --json ARGS…`, which must succeed: its JSON lines.
pub fn json_lines(dir: &Path, args: &[&str]) -> Vec<Value> {
    super::lines(&run(dir, &[&["--json"], args].concat()), args)
}
