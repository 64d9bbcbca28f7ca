//! The `memledger` binary: parse the command line, run the command, map errors to exit codes.

/// mimalloc instead of the system allocator: a save and a rebuild make many small, short-lived
/// allocations (events, keys, analysed words), the load mimalloc is made for (measured:
/// bench/runs/2026-11-30-2core-a/README.md), built without transparent huge pages (Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    memledger_cli::main_with_args(std::env::args_os())
}
