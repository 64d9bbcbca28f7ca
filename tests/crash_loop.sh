#!/usr/bin/env bash
# The long crash loop: the SIGKILL test of cli/tests/crash.rs with 1,000 kills (or
# MEMLEDGER_CRASH_KILLS), seed printed (MEMLEDGER_CRASH_SEED replays one). Prints the result line
# that docs/reliability.md records: kills survived, events checked, acknowledged saves present.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/memledger/target}"
export MEMLEDGER_CRASH_KILLS="${MEMLEDGER_CRASH_KILLS:-1000}"
start=$(date +%s)
cargo test --release -p memledger-cli --test main -- crash:: --nocapture --test-threads 1 2>&1 | grep -E "crash loop:|test result|panicked"
echo "crash loop: ${MEMLEDGER_CRASH_KILLS} kills requested, $(( $(date +%s) - start )) s"
