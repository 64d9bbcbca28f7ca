//! The `memledger` binary: parse the command line, run the command, map errors to exit codes.

fn main() -> std::process::ExitCode {
    memledger_cli::main_with_args(std::env::args_os())
}
