#!/usr/bin/env bash
# The test command: the whole workspace, in the one profile memledger uses (release).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
exec cargo test --release --workspace --locked "$@"
