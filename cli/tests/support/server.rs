//! The CLI's helpers through a server: a store's first command starts one for it
//! (`MEMLEDGER_AUTOSTART=1`; it exits after 5 s without a request) and every later command goes
//! through it. The same functions as [`super::direct`], and the same answers.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

pub use super::code;

/// Whether these helpers go through a server.
pub const THROUGH_SERVER: bool = true;

/// `memledger --dir DIR`, through the store's server, started when none runs.
pub fn memledger(dir: &Path) -> Command {
    let mut command = super::memledger(dir);
    command.env("MEMLEDGER_AUTOSTART", "1").env("MEMLEDGER_IDLE_EXIT", "5s");
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
