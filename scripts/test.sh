#!/usr/bin/env bash
# The test command: the whole workspace, in the one profile memledger uses (release).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup_tests.sh
# A throwaway PostgreSQL and NATS server for the shared-ledger tests, stopped on exit.
source scripts/services.sh
cargo test --release --workspace --locked "$@"
