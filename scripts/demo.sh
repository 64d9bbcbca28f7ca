#!/usr/bin/env bash
# The main job: a tour of memledger on a temporary store — save, dedup, conflict, resolve,
# revert, history, why, rebuild, verify, export/import. Fails loudly if anything misbehaves.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo build --release --locked -p memledger-cli
ML="$CARGO_TARGET_DIR/release/memledger"
STORE="$(mktemp -d)/store"
trap 'rm -rf "$(dirname "$STORE")"' EXIT

step() { printf '\n\033[1m$ memledger %s\033[0m\n' "$*"; "$ML" --dir "$STORE" --actor cli:demo "$@"; }
field() { grep -o "\"$1\":\"[0-9a-f]*\"" | head -1 | cut -d'"' -f4; }
expect() { if [ "$1" != "$2" ]; then echo "demo: expected $2, got $1" >&2; exit 1; fi; }
outcome() { "$ML" --dir "$STORE" --actor cli:demo --json save "$@" | grep -o '"outcome":"[a-z]*"' | cut -d'"' -f4; }

echo "memledger demo on a temporary store: $STORE"
step save "The billing service runs on Postgres 16"
OLD=$("$ML" --dir "$STORE" --json list | field memory_id)

echo; echo "# the same text again is merged (provenance only)"
expect "$(outcome "The billing service runs on Postgres 16")" merged
step save "deploy Tuesday"
echo "# an enrichment becomes the next version; a later restatement is merged"
expect "$(outcome "deploy Tuesday after integration tests pass")" versioned
expect "$(outcome "deploy Tuesday")" merged

echo; echo "# a contradiction opens a conflict; both stay active"
OUT=$("$ML" --dir "$STORE" --actor cli:demo --json save "The billing service runs on Postgres 17")
echo "$OUT"
CID=$(echo "$OUT" | field conflict_id)
NEW=$(echo "$OUT" | field memory_id)
step conflicts list
step conflicts show "${CID:0:8}"
step why "${NEW:0:8}" "${OLD:0:8}"

echo; echo "# resolve: keep the new one (it continues the old lineage), then look at history"
step conflicts resolve "${CID:0:8}" --keep-new --note "upgraded in March"
step history "${OLD:0:8}"
echo; echo "# revert is a compensating event: both active again, the conflict pending"
step conflicts revert "${CID:0:8}"
step list
step conflicts resolve "${CID:0:8}" --merge "The billing service runs on Postgres 17 since March"
step history "${OLD:0:8}"

echo; echo "# effective time is evidence of change: an older claim arriving late is history"
step save --effective-at 2026-03-02T09:00:00Z "The billing team deploys to staging on Thursdays"
expect "$(outcome --effective-at 2026-01-05T09:00:00Z "The billing team deploys to staging on Tuesdays")" historical

echo; echo "# the ledger: every decision is an event; views are rebuilt from it"
step log --limit 8
step rebuild
step verify
step stats
EXPORT="$(dirname "$STORE")/stream.jsonl"
step export -o "$EXPORT"
"$ML" --dir "$(dirname "$STORE")/copy" import "$EXPORT"
"$ML" --dir "$(dirname "$STORE")/copy" verify
echo; echo "demo: all steps behaved as expected"
