#!/usr/bin/env bash
# The shared ledger's benchmark beside pgbench: starts a throwaway PostgreSQL (as the tests do,
# scripts/services.sh) and runs `memledger-bench pg` against it. Arguments go to the benchmark:
# [SECONDS per measurement, default 10] [MEMORIES for the catch-up, default 20000].
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/services.sh
cargo build --release --workspace --all-targets --locked
"$CARGO_TARGET_DIR/release/memledger-bench" pg "$MEMLEDGER_TEST_PG_URL" "$@"
