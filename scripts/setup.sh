#!/usr/bin/env bash
# Installs what a fresh Debian machine with Rust lacks, and points cargo at a build cache that
# survives fresh clones. Sourced by demo.sh, test.sh and .ci/run.
set -euo pipefail

# bindgen (for RocksDB's C++ API) needs libclang itself (libclang-cpp, which Debian images often
# carry, is not enough): on Debian ask dpkg for libclang-dev, elsewhere look for libclang.so.
need_libclang() {
  if command -v dpkg >/dev/null 2>&1; then
    ! dpkg -s libclang-dev >/dev/null 2>&1
  else
    ! ldconfig -p 2>/dev/null | grep -q 'libclang\(-[0-9.]*\)\?\.so'
  fi
}
if need_libclang; then
  echo "setup: installing libclang-dev (needed to build RocksDB's bindings)…" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libclang-dev >/dev/null
fi
command -v cargo >/dev/null || { echo "setup: cargo not found: install Rust (rustup) first" >&2; exit 1; }

# One build cache outside the clone, reused by every clone on this machine (a fresh machine
# builds from nothing: RocksDB alone takes most of half an hour on 2 cores).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/memledger/target}"
mkdir -p "$CARGO_TARGET_DIR"

# The real-client MCP test (cli/tests/mcp.rs) drives `memledger mcp` with the official MCP Python
# SDK; without it that test is skipped. Pinned, so CI runs the client the test was written against.
if command -v python3 >/dev/null && ! python3 -c "import mcp" >/dev/null 2>&1; then
  echo "setup: installing the MCP Python SDK (mcp==2.3.0) for the MCP client test…" >&2
  python3 -m pip install --quiet mcp==2.3.0
fi

# The API check (cli/tests/schemathesis.rs) runs schemathesis against `memledger serve`'s
# /openapi.json; without it that test is skipped (and fails under CI=true). Pinned likewise.
if command -v python3 >/dev/null && ! command -v schemathesis >/dev/null 2>&1; then
  echo "setup: installing schemathesis==4.32.5 for the API check…" >&2
  python3 -m pip install --quiet schemathesis==4.32.5
fi

# The review page's browser test (cli/tests/ui.rs) drives Debian's Chromium with playwright-core
# and runs axe-core in the page; the npm packages are pinned by server/e2e/package-lock.json. No
# browser is downloaded: Chromium comes from apt. Without them the test is skipped (and fails
# under CI=true).
ui_e2e="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/server/e2e"
if command -v apt-get >/dev/null 2>&1 && { [ ! -x /usr/bin/chromium ] || ! command -v npm >/dev/null 2>&1; }; then
  echo "setup: installing chromium, nodejs and npm for the review page's browser test…" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium nodejs npm >/dev/null
fi
if command -v npm >/dev/null 2>&1 &&
  { [ ! -f "$ui_e2e/node_modules/.package-lock.json" ] || [ "$ui_e2e/package-lock.json" -nt "$ui_e2e/node_modules/.package-lock.json" ]; }; then
  echo "setup: installing the review page's test packages (npm ci in server/e2e)…" >&2
  (cd "$ui_e2e" && npm ci --no-audit --no-fund --silent)
fi
