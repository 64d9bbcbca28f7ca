#!/usr/bin/env bash
# Extraction quality of `import sessions` on LoCoMo (../shared/eval/locomo-dev.json) and its speed
# (docs/quality.md, docs/performance.md). Quality needs a chat model: MEMLEDGER_LLM_URL and
# MEMLEDGER_LLM_MODEL (an embedder in MEMLEDGER_EMBED_URL adds cosine ≥ 0.85 matches). Without one,
# it runs the scripted model that answers the gold facts, which checks the scoring itself.
#
#   scripts/eval_import.sh                  # quality (configured model, else scripted) and speed
#   scripts/eval_import.sh --scripted       # the scoring check alone
set -euo pipefail
cd "$(dirname "$0")/.."

EVAL_DIR="${EVAL_DIR:-../shared/eval}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/memledger/target}"
BIN="$CARGO_TARGET_DIR/release/memledger"
DATA="$EVAL_DIR/locomo-dev.json"
[ -f "$DATA" ] || { echo "eval_import: no $DATA (set EVAL_DIR)" >&2; exit 2; }
cargo build --release --workspace --locked --quiet
if [ "${1:-}" = "--scripted" ] || [ -z "${MEMLEDGER_LLM_URL:-}" ]; then
  echo "== extraction, scripted model answering the gold facts (checks the scoring)"
  python3 scripts/eval_import.py --bin "$BIN" --scripted "$DATA"
  [ "${1:-}" = "--scripted" ] && exit 0
else
  echo "== extraction with $MEMLEDGER_LLM_MODEL"
  python3 scripts/eval_import.py --bin "$BIN" "$DATA"
fi
echo "== import speed (20,000 turns, scripted model on loopback)"
python3 scripts/bench_import.py --bin "$BIN" --turns 20000
