#!/usr/bin/env python3
"""4 agents over MCP (streamable HTTP) and a CLI loop, writing and reading one store at once.

Usage: bench/soak.py MEMLEDGER_BINARY STORE_DIR [SECONDS]

Starts `memledger serve --http` on a free loopback port, runs for SECONDS (default 60), then
checks: nothing failed, no request took over 1 s, every acknowledged save is in the store, and
`memledger verify` is ok. Prints the counts and the slowest request; exits non-zero on a failure.
Needs the MCP Python SDK (`python3 -m pip install mcp==2.3.0`).
"""

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.types import Implementation


async def agent(n, url, token, deadline, acked, slow):
    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write, client_info=Implementation(name=f"soak-agent-{n}", version="1")) as s:
                await s.initialize()
                i = 0
                while time.monotonic() < deadline:
                    for tool, args in (
                        ("save_memory", {"text": f"agent {n} learned fact {i}: service {i % 97} deploys in {i % 13} minutes", "idempotency_key": f"a{n}-{i}"}),
                        ("recall_memory", {"query": f"service {i % 97} deploys"}),
                    ):
                        started = time.monotonic()
                        result = await s.call_tool(tool, args)
                        slow.append(time.monotonic() - started)
                        if result.is_error:
                            raise SystemExit(f"agent {n}: {tool} failed: {result.content}")
                        if tool == "save_memory":
                            acked.append(json.loads(result.content[0].text)["memory_id"])
                    i += 1


def cli_loop(binary, store, deadline, acked, slow):
    i = 0
    while time.monotonic() < deadline:
        for args in (["--json", "save", f"the cli noted item {i}: build {i % 89} is green"], ["--json", "recall", f"build {i % 89}"]):
            started = time.monotonic()
            out = subprocess.run([binary, "--dir", store, *args], capture_output=True, text=True)
            slow.append(time.monotonic() - started)
            if out.returncode != 0:
                raise SystemExit(f"cli {args[1]} failed: {out.stderr}")
            if args[1] == "save":
                acked.append(json.loads(out.stdout)["memory_id"])
        i += 1


def main(binary, store, seconds):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    server = subprocess.Popen([binary, "--dir", store, "serve", "--http", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if subprocess.run([binary, "--dir", store, "--json", "status"], capture_output=True, text=True).stdout.find('"server"') > 0 and \
                    json.loads(subprocess.run([binary, "--dir", store, "--json", "status"], capture_output=True, text=True).stdout)["path"] == "server":
                break
            time.sleep(0.1)
        token = subprocess.run([binary, "--dir", store, "serve", "--print-token"], capture_output=True, text=True).stdout.strip()
        deadline = time.monotonic() + seconds
        acked, slow = [], []
        cli = threading.Thread(target=cli_loop, args=(binary, store, deadline, acked, slow))
        cli.start()

        async def agents():
            await asyncio.gather(*(agent(n, f"http://127.0.0.1:{port}/mcp", token, deadline, acked, slow) for n in range(4)))

        asyncio.run(agents())
        cli.join()
        listed = subprocess.run([binary, "--dir", store, "--json", "list", "--status", "all", "--limit", "100000000"], capture_output=True, text=True)
        present = {m["memory_id"] for m in json.loads(listed.stdout)["memories"]}
        missing = [m for m in set(acked) if m not in present]
        verify = json.loads(subprocess.run([binary, "--dir", store, "--json", "verify"], capture_output=True, text=True).stdout)
        worst = max(slow)
        print(f"{seconds}s: {len(slow)} requests ({len(acked)} acknowledged saves), slowest {worst * 1000:.0f} ms, "
              f"missing {len(missing)}, verify ok {verify['ok'] and verify['views_consistent']}")
        if missing or worst > 1.0 or not (verify["ok"] and verify["views_consistent"]):
            sys.exit(1)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 60)
