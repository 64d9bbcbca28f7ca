#!/usr/bin/env bash
# The team set-up of docs/principals.md, run for real on a temporary store and printed as the
# page shows it: one person, two agents, a shared team scope and a private person scope.
# Usage: scripts/principals_example.sh [MEMLEDGER_BIN]   (default: memledger on the PATH)
set -uo pipefail
BIN="$(command -v "${1:-memledger}")" || { echo "no memledger binary: pass its path" >&2; exit 1; }
memledger() { "$BIN" "$@"; }
export -f memledger 2>/dev/null
export BIN
export MEMLEDGER_DIR="$(mktemp -d)/store" USER="${USER:-ana}"
unset MEMLEDGER_TOKEN MEMLEDGER_NO_SERVER MEMLEDGER_AUTOSTART
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token() { memledger --json principals add "$@" | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])'; }
ANA=$(token ana --kind person --grant 'team:payments=read,write,resolve,admin@policy' --grant 'team:*=read')
CODER=$(token coder --kind agent --grant 'team:payments=read,write')
TRIAGE=$(token triage --kind agent --grant 'team:payments=read,propose')
memledger serve --http "127.0.0.1:$PORT" >/dev/null 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null; wait $SERVE 2>/dev/null; rm -rf "$(dirname "$MEMLEDGER_DIR")"' EXIT
while [ ! -S "$MEMLEDGER_DIR/memledger.sock" ]; do
  kill -0 $SERVE 2>/dev/null || { echo "memledger serve did not start" >&2; exit 1; }
  sleep 0.1
done
hide() { sed -e "s/$ANA/\$ANA/g; s/$CODER/\$CODER/g; s/$TRIAGE/\$TRIAGE/g; s/127.0.0.1:$PORT/127.0.0.1:7878/g"; }
# Print a command as typed, then what it printed (stdout and stderr) and a failing exit code.
show() {
  echo "\$ $*" | hide
  eval "$@" 2>&1 | hide
  local rc=${PIPESTATUS[0]}
  [ "$rc" != 0 ] && echo "(exit $rc)"
  echo
}
first_conflict() {
  MEMLEDGER_TOKEN=$ANA memledger --json conflicts list --status pending |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["conflicts"][0]["conflict_id"][:12])'
}
show memledger principals list
show MEMLEDGER_TOKEN=\$ANA memledger save --scope team:payments --source policy "'payments deploys to staging on Tuesdays'"
show MEMLEDGER_TOKEN=\$ANA memledger save "'I prefer code reviews in the morning'"
show MEMLEDGER_TOKEN=\$CODER memledger --actor claude-code save --scope team:payments "'payments deploys to staging on Thursdays'"
show MEMLEDGER_TOKEN=\$CODER memledger recall "'which day does payments deploy to staging'"
show MEMLEDGER_TOKEN=\$CODER memledger recall --scope person:ana "'code reviews'"
CID=$(first_conflict)
show MEMLEDGER_TOKEN=\$CODER memledger conflicts resolve "$CID" --keep-new
show MEMLEDGER_TOKEN=\$ANA memledger conflicts show "$CID"
show MEMLEDGER_TOKEN=\$ANA memledger conflicts resolve "$CID" --keep-existing --note "'the release policy says Tuesday'"
show MEMLEDGER_TOKEN=\$TRIAGE memledger save --scope team:payments "'payments on-call rotates every Monday'"
PID=$(first_conflict)
show MEMLEDGER_TOKEN=\$ANA memledger conflicts resolve "$PID" --keep-new
show memledger log --by coder
show MEMLEDGER_TOKEN=\$CODER memledger whoami
show memledger principals revoke coder --reason "'replaced by a new agent'"
show MEMLEDGER_TOKEN=\$CODER memledger recall deploys
show curl -s -w "'\\n'" -H "'Authorization: Bearer $TRIAGE'" -H "'content-type: application/json'" \
  -d "'{\"text\": \"Ana prefers evening reviews\", \"scope\": \"person:ana\"}'" "http://127.0.0.1:$PORT/v1/memories"
