#!/usr/bin/env bash
# Run each cargo-fuzz target for N minutes (default 2): scripts/fuzz.sh [MINUTES] [TARGET...]
# Works on the stable toolchain through RUSTC_BOOTSTRAP=1 (cargo-fuzz needs -Z flags); fuzz/ is
# its own workspace with its own target dir. The corpus grows in fuzz/corpus/<target>/; keep it
# small before committing (cargo fuzz cmin). CI replays it: tests/tests/fuzz_corpus.rs.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
minutes="${1:-2}"; shift || true
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(decode_event import_line lexical_classify)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
export RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$PWD/target}"
cargo fuzz build -O
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  echo "== $t for $minutes min"
  cargo fuzz run -O "$t" "corpus/$t" -- -max_total_time=$((minutes * 60)) -max_len=4096 -print_final_stats=1 2>&1 \
    | tee "/tmp/fuzz-$t.log" | grep -E "stat::number_of_executed_units|Done|ERROR|panicked" || true
done
