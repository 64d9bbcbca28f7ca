//! The `memledger` command-line tool: one module per command (`commands/`), human and `--json`
//! output (`output`), the exit codes of the CLI contract (docs/cli.md), and traces over OTLP when
//! the environment asks for them (`telemetry`).

pub mod app;
pub mod backend;
pub mod commands;
pub mod config;
pub mod exclude;
pub mod follow;
pub mod output;
pub mod style;
pub mod telemetry;

pub use app::main_with_args;
