#!/usr/bin/env bash
# What building memledger needs on a fresh Debian machine with Rust: libclang for RocksDB's
# bindings, and a build cache that survives fresh clones. Sourced by demo.sh, test.sh and
# bench_pg.sh; the test command's own tools are scripts/setup_tests.sh's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/install.sh"

setup_have cargo || { echo "setup: cargo not found: install Rust first (https://rustup.rs)" >&2; exit 1; }

# bindgen (for RocksDB's C++ API) needs libclang itself (libclang-cpp, which Debian images often
# carry, is not enough): on Debian ask dpkg for libclang-dev, elsewhere look for libclang.so.
need_libclang() {
  if setup_have dpkg; then
    ! dpkg -s libclang-dev >/dev/null 2>&1
  else
    ! ldconfig -p 2>/dev/null | grep -q 'libclang\(-[0-9.]*\)\?\.so'
  fi
}
if need_libclang; then
  setup_apt libclang-dev "building RocksDB's bindings" || {
    echo "setup: memledger cannot be built without libclang (Debian: libclang-dev)" >&2
    exit 1
  }
fi

# One build cache outside the clone, reused by every clone on this machine (a fresh machine
# builds from nothing: RocksDB is most of the first build).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/memledger/target}"
mkdir -p "$CARGO_TARGET_DIR"
