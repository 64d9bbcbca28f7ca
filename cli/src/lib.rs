//! The `memledger` command-line tool: one module per command (`commands/`), human and `--json`
//! output (`output`), and the exit codes of the CLI contract (docs/cli.md).

pub mod app;
pub mod backend;
pub mod commands;
pub mod config;
pub mod exclude;
pub mod follow;
pub mod output;
pub mod style;

pub use app::main_with_args;
