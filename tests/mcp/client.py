#!/usr/bin/env python3
"""Drive memledger's MCP server with the official MCP Python SDK (`pip install mcp`), as an agent would.

Usage: client.py MEMLEDGER_BINARY STORE_DIR      (`memledger mcp` over stdio)
       client.py --http URL TOKEN                (`memledger serve`'s /mcp, streamable HTTP)

initialize → list tools → save a contradiction (the second save is a conflict) → recall (the
conflict notice) → list_conflicts → resolve_conflict keep_new → memory_history → a save holding a
credential (refused, naming the rule) → erase_memory (a dry run; the erasure itself only where the
server was started with --allow-erase, which MEMLEDGER_TEST_ERASE_ALLOWED=1 says). Prints one line
per step and a final `ok`; any failed check raises, and the exit code is then non-zero.
Run by cli/tests/mcp.rs and cli/tests/server.rs.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.types import Implementation

CLIENT_NAME = "memledger-test-client"
EXPECTED_TOOLS = {
    "save_memory",
    "recall_memory",
    "memory_history",
    "why_memory",
    "list_conflicts",
    "resolve_conflict",
    "erase_memory",
    "update_memory",
}
ERASE_ALLOWED = os.environ.get("MEMLEDGER_TEST_ERASE_ALLOWED") == "1"
# Run as a principal whose grants do not reach this scope: a save there must be refused.
REFUSED_SCOPE = os.environ.get("MEMLEDGER_TEST_REFUSED_SCOPE")
# A person's policy the agent may read but not overrule: its declared replacement opens a conflict.
POLICY_ID = os.environ.get("MEMLEDGER_TEST_POLICY_ID")


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def unfence(text):
    """A tool's answer as the document it fences: a notice line, a boundary made for this
    answer on a line of its own before and after the data, then (recall) the document without
    the memories' texts, which are the fence's items."""
    lines = text.split("\n")
    check(lines[0].startswith("The text between"), f"no notice: {text}")
    start = next(i for i, line in enumerate(lines) if line.startswith("<<<memledger-data-"))
    boundary = lines[start][3:]
    end = lines.index(">>>" + boundary)
    check(text.count(boundary) == 2, f"the boundary is nowhere else: {text}")
    inside, rest = lines[start + 1 : end], "\n".join(lines[end + 1 :]).strip()
    if not rest:
        check(inside[0] == "", f"one item, no header: {text}")
        return json.loads("\n".join(inside[1:]))
    document = json.loads(rest)
    texts = []
    for line in inside:
        if line.startswith("[") and "] memory " in line:
            texts.append([])
        elif texts:
            texts[-1].append(line)
    for result in document.get("results", []):
        result["text"] = "\n".join(texts[result["fenced_item"] - 1])
    return document


async def call(session, tool, **arguments):
    result = await session.call_tool(tool, arguments)
    text = "".join(block.text for block in result.content if getattr(block, "type", "") == "text")
    check(not result.is_error, f"{tool} failed: {text}")
    return unfence(text)


async def main(binary, store):
    server = StdioServerParameters(command=binary, args=["--dir", store, "mcp"])
    async with stdio_client(server) as (read, write):
        await scenario(read, write)
    print("ok", flush=True)


async def main_http(url, token):
    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            await scenario(streams[0], streams[1])
    print("ok", flush=True)


async def scenario(read, write):
        async with ClientSession(read, write, client_info=Implementation(name=CLIENT_NAME, version="1.0")) as session:
            init = await session.initialize()
            check(init.server_info.name == "memledger", f"server name {init.server_info.name!r}")
            print(f"initialized: {init.server_info.name} {init.server_info.version}", flush=True)

            tools = {t.name: t for t in (await session.list_tools()).tools}
            check(EXPECTED_TOOLS <= set(tools), f"tools: {sorted(tools)}")
            check("update" not in tools and "forget" not in tools, "unconditional edits stay human")
            check("related" in tools["save_memory"].description and "update_memory" in tools["save_memory"].description,
                  "save_memory tells the agent to read `related` and declare")
            for word in ("fact", "preference", "episode", "procedure"):
                check(word in tools["save_memory"].description, f"save_memory does not teach {word}")
            check("the user" in tools["resolve_conflict"].description, "resolve_conflict: a decision the user gave")
            print(f"tools: {', '.join(sorted(tools))}", flush=True)

            first = await call(session, "save_memory", text="The billing service runs on Postgres 16", scope="team:payments")
            check(first["outcome"] == "added", f"first save: {first}")
            second = await call(session, "save_memory", text="The billing service runs on Postgres 17", scope="team:payments")
            check(second["outcome"] == "conflict", f"second save: {second}")
            check(second.get("conflict_id"), f"second save has no conflict id: {second}")
            check("user" in second.get("notice", ""), f"the conflict notice: {second}")
            conflict = second["conflict_id"]
            print(f"saved: {first['outcome']} then {second['outcome']} (conflict {conflict})", flush=True)

            found = await call(session, "recall_memory", query="which postgres does billing run", scope="team:payments")
            check(len([r for r in found["results"] if "Postgres" in r["text"]]) == 2, f"recall: {found}")
            check(found["notice"], f"recall has no conflict notice: {found}")
            print(f"recall: {len(found['results'])} results, notice: {found['notice']}", flush=True)

            pending = await call(session, "list_conflicts")
            ids = [c["conflict_id"] for c in pending["conflicts"]]
            check(conflict in ids, f"list_conflicts: {ids}")
            print(f"pending conflicts: {len(ids)}", flush=True)

            resolved = await call(session, "resolve_conflict", id=conflict, action="keep_new", note="upgraded last week")
            check(resolved["status"] == "resolved", f"resolve: {resolved}")
            left = await call(session, "list_conflicts")
            check(conflict not in [c["conflict_id"] for c in left["conflicts"]], "still pending after resolve")
            print(f"resolved {conflict}: keep_new", flush=True)

            history = await call(session, "memory_history", id=second["memory_id"])
            versions = history["versions"]
            check(len(versions) == 2, f"history: {history}")
            check(versions[0]["text"].endswith("Postgres 17") and versions[0]["status"] == "active", f"v2: {versions[0]}")
            check(versions[1]["text"].endswith("Postgres 16") and versions[1]["status"] == "stale", f"v1: {versions[1]}")
            print(f"history: v{versions[0]['version']} {versions[0]['text']} / v{versions[1]['version']} {versions[1]['text']}", flush=True)

            why = await call(session, "why_memory", id=second["memory_id"], other=first["memory_id"])
            check(len(why["decisions"]) >= 1, f"why: {why}")
            bad = await session.call_tool("resolve_conflict", {"id": conflict, "action": "merge"})
            check(bad.is_error, "merge without merged_text must be refused")

            # Put together from parts: no whole credential sits in this file.
            secret = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
            refused = await session.call_tool("save_memory", {"text": f"billing uses {secret}"})
            text = "".join(block.text for block in refused.content if getattr(block, "type", "") == "text")
            check(refused.is_error and "stripe-access-token" in text and secret not in text, f"secret save: {text}")
            print("a save holding a credential: refused, naming its rule", flush=True)

            # Two memories the rules cannot relate (no shared word, no embedder): the save names the
            # first as related; the agent judges that the second replaces it and declares it.
            lunch = await call(session, "save_memory", text="Team lunches are ordered from Sweetgreen.", scope="team:payments")
            moved = await call(session, "save_memory", text="We get the Friday food from Dig Inn these days.", scope="team:payments")
            check(moved["outcome"] == "added", f"the rules relate nothing: {moved}")
            related = [r["memory_id"] for r in moved["related"]]
            check(lunch["memory_id"] in related, f"the earlier memory is related: {moved}")
            declared = await call(session, "update_memory", id=lunch["memory_id"],
                                  text="We get the Friday food from Dig Inn these days.")
            check(declared["outcome"] == "versioned", f"the declared replacement: {declared}")
            lineage = await call(session, "memory_history", id=lunch["memory_id"])
            check([v["status"] for v in lineage["versions"]] == ["active", "stale"], f"declared lineage: {lineage}")
            check("Dig Inn" in lineage["versions"][0]["text"], f"the new version: {lineage}")
            decided = await call(session, "why_memory", id=lunch["memory_id"])
            methods = {d["method"] for d in decided["decisions"]}
            check("declared" in methods, f"recorded as declared: {decided}")
            print(f"update_memory: {lunch['memory_id'][:6]} replaced by a declaration ({declared['outcome']})", flush=True)

            if POLICY_ID:
                overrule = await call(session, "update_memory", id=POLICY_ID, text="Billing deploys to staging on Thursdays.")
                check(overrule["outcome"] == "conflict" and overrule["needs_authority"] == "policy", f"overrule: {overrule}")
                check("notice" in overrule, f"the answer says what to do: {overrule}")
                print("update_memory of a person's policy: a conflict that needs policy authority", flush=True)

            if REFUSED_SCOPE:
                refused = await session.call_tool("save_memory", {"text": "x runs on y", "scope": REFUSED_SCOPE})
                text = "".join(block.text for block in refused.content if getattr(block, "type", "") == "text")
                check(refused.is_error and f"may not write in {REFUSED_SCOPE}" in text, f"a save outside the grants: {text}")
                print(f"a save into {REFUSED_SCOPE}: refused, naming the verb and the scope", flush=True)

            dry = await call(session, "erase_memory", id=first["memory_id"], dry_run=True)
            check(dry["dry_run"] and first["memory_id"] in dry["memories"], f"erase dry run: {dry}")
            erase = await session.call_tool("erase_memory", {"id": first["memory_id"], "reason": "the user asked"})
            text = "".join(block.text for block in erase.content if getattr(block, "type", "") == "text")
            if ERASE_ALLOWED:
                check(not erase.is_error and unfence(text)["erasure_seq"], f"erase: {text}")
                gone = await call(session, "memory_history", id=second["memory_id"])
                check(gone["versions"][1]["erased"], f"history after the erasure: {gone}")
                print("erase_memory: erased (the server allows erasures)", flush=True)
            else:
                check(erase.is_error and "memledger erase" in text, f"erase must be refused: {text}")
                print("erase_memory: refused (a person has not allowed erasures)", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--http":
        asyncio.run(main_http(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) == 3:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
    else:
        sys.exit("usage: client.py MEMLEDGER_BINARY STORE_DIR | client.py --http URL TOKEN")
