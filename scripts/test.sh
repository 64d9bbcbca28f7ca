#!/usr/bin/env bash
# The test command: the whole workspace, in the one profile memledger uses (release).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup_tests.sh
# A throwaway PostgreSQL and NATS server for the shared-ledger tests, stopped on exit.
source scripts/services.sh
cargo test --release --workspace --locked "$@"
# The fuzz targets build: fuzz/ is a workspace of its own (scripts/fuzz.sh runs it; its saved
# corpus is replayed above, by tests/tests/fuzz_corpus.rs).
cargo check --manifest-path fuzz/Cargo.toml --bins --locked --quiet --target-dir "$CARGO_TARGET_DIR-fuzz"
# The Python package (python/), installed as a user would, against the binary cargo just built.
if [ -x "${MEMLEDGER_PYTHON_VENV:-}/bin/python" ]; then
  "$MEMLEDGER_PYTHON_VENV/bin/python" -m pip install --quiet --no-build-isolation ./python
  MEMLEDGER_BIN="$CARGO_TARGET_DIR/release/memledger" "$MEMLEDGER_PYTHON_VENV/bin/python" -m pytest python/tests -q -p no:cacheprovider
fi
