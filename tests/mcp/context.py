#!/usr/bin/env python3
"""memledger's MCP context surfaces, driven by the official MCP Python SDK as a client would:
tool annotations and structured results, resources (list with cursors, read, templates,
subscribe), prompts, completion and logging; and the same surfaces for a principal whose grants
do not reach a scope, which must show it nothing of that scope.

Usage: context.py URL OWNER_TOKEN READER_TOKEN MEMLEDGER_BINARY STORE_DIR

The store (made by cli/tests/mcp_context.rs) holds, in team:payments, "The billing service runs
on Postgres 16" and more than a page of other memories, and in hr:private one memory whose id is
in MEMLEDGER_TEST_HIDDEN_ID and whose text holds the word in MEMLEDGER_TEST_HIDDEN_WORD. The
reader may read team:payments only. A save from the CLI (through the store's server) must reach
the subscriber as notifications/resources/updated: over streamable HTTP (legacy subscribe and
2026-07-28's subscriptions/listen) and through `memledger mcp` on stdio. Prints a line per step and `ok`.
"""

import os
import subprocess
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.client import Client as ModernClient
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation, PromptReference

HIDDEN_ID = os.environ["MEMLEDGER_TEST_HIDDEN_ID"]
HIDDEN_WORD = os.environ["MEMLEDGER_TEST_HIDDEN_WORD"]
SCOPE = "team:payments"
BILLING = "The billing service runs on Postgres 16"
READ_ONLY = {"recall_memory", "memory_history", "why_memory", "list_conflicts"}


def check(condition, message):
    if not condition:
        raise AssertionError(message)


class Client:
    """A session with what the server sent it besides answers."""

    def __init__(self):
        self.updated = []
        self.logs = []
        self.update_seen = anyio.Event()
        self.logged = anyio.Event()

    async def on_message(self, message):
        notification = getattr(message, "root", message)
        if getattr(notification, "method", None) == "notifications/resources/updated":
            self.updated.append(notification.params.uri)
            self.update_seen.set()

    async def on_log(self, params):
        self.logs.append(params)
        self.logged.set()


async def connect(url, token, client, body):
    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(
                read,
                write,
                client_info=Implementation(name="memledger-context-test", version="1.0"),
                message_handler=client.on_message,
                logging_callback=client.on_log,
            ) as session:
                await session.initialize()
                await body(session)


async def all_resources(session):
    resources, cursor, pages = [], None, 0
    while True:
        page = await session.list_resources(params={"cursor": cursor} if cursor else None)
        resources.extend(page.resources)
        pages += 1
        cursor = page.next_cursor
        if not cursor:
            return resources, pages


def text_of(result):
    return "".join(c.text for c in result.contents)


async def owner(session, client, binary, store):
    tools = {t.name: t for t in (await session.list_tools()).tools}
    for name, tool in tools.items():
        hints = tool.annotations
        check(hints is not None and tool.title, f"{name} has no annotations or title")
        check(hints.open_world_hint is False, f"{name}: a memory store is a closed world")
        check(hints.read_only_hint is (name in READ_ONLY), f"{name}: readOnlyHint {hints.read_only_hint}")
        check(hints.destructive_hint is (name == "erase_memory"), f"{name}: destructiveHint {hints.destructive_hint}")
        check(tool.output_schema and tool.output_schema.get("type") == "object", f"{name} has no outputSchema")
    print(f"tools: {len(tools)} annotated, each with an outputSchema", flush=True)

    saved = await session.call_tool("save_memory", {"text": "Invoices are sent on the first of the month", "scope": SCOPE})
    check(not saved.is_error and saved.structured_content["outcome"] == "added", f"save: {saved}")
    found = await session.call_tool("recall_memory", {"query": "billing postgres", "scope": SCOPE})
    hits = found.structured_content["results"]
    check(any(h["text"] == BILLING for h in hits), f"recall's structuredContent: {found.structured_content}")
    billing = next(h["memory_id"] for h in hits if h["text"] == BILLING)
    print("structuredContent: save and recall answer their documents", flush=True)

    resources, pages = await all_resources(session)
    uris = [r.uri for r in resources]
    check(uris[0] == "memledger://conflicts", f"first: {uris[:3]}")
    check(f"memledger://scopes/{SCOPE}" in uris and "memledger://scopes/hr:private" in uris, f"scopes: {uris[:5]}")
    check(pages >= 2 and len(uris) == len(set(uris)), f"{pages} pages, {len(uris)} resources")
    check(f"memledger://memories/{billing}" in uris, "the billing memory is listed")
    templates = (await session.list_resource_templates()).resource_templates
    check({t.uri_template for t in templates} == {"memledger://memories/{id}", "memledger://scopes/{scope}"}, templates)
    memory = text_of(await session.read_resource(f"memledger://memories/{billing}"))
    check("<<<memledger-data-" in memory and BILLING in memory and '"versions"' in memory, memory)
    scope_page = text_of(await session.read_resource(f"memledger://scopes/{SCOPE}"))
    check("<<<memledger-data-" in scope_page and f"More: memledger://scopes/{SCOPE}?offset=50" in scope_page, scope_page)
    print(f"resources: {len(uris)} over {pages} pages; a memory and a scope read, fenced", flush=True)

    await session.set_logging_level("debug")
    await session.call_tool("recall_memory", {"query": "invoices", "scope": SCOPE})
    with anyio.fail_after(60):
        while not any(l.level == "debug" for l in client.logs):
            client.logged = anyio.Event()
            await client.logged.wait()
    print(f"logging: {len(client.logs)} messages at debug", flush=True)

    await session.subscribe_resource(f"memledger://memories/{billing}")
    await session.subscribe_resource("memledger://conflicts")
    # A person saves from the CLI, through the store's server.
    cli_save(binary, store, SCOPE, "The billing service runs on Postgres 17")
    with anyio.fail_after(60):
        while not {"memledger://conflicts", f"memledger://memories/{billing}"} <= set(client.updated):
            client.update_seen = anyio.Event()
            await client.update_seen.wait()
    print(f"subscriptions: updated {sorted(set(client.updated))}", flush=True)
    words = {BILLING, "Postgres 17", "Invoices"}
    for log in client.logs:
        if log.level != "debug":
            check(not any(w in str(log.data) for w in words), f"memory text in a {log.level} message: {log.data}")

    prompts = {p.name: p for p in (await session.list_prompts()).prompts}
    check({"recall-first", "review-conflicts", "remember-session"} <= set(prompts), sorted(prompts))
    recalled = await session.get_prompt("recall-first", {"topic": "billing postgres", "scope": SCOPE})
    check(BILLING in recalled.messages[0].content.text, recalled)
    review = await session.get_prompt("review-conflicts", {})
    check("Postgres 17" in review.messages[0].content.text, review)
    remember = await session.get_prompt("remember-session", {"scope": SCOPE})
    check("<private>" in remember.messages[0].content.text, remember)
    scopes = await session.complete(PromptReference(type="ref/prompt", name="recall-first"), {"name": "scope", "value": "team"})
    check(scopes.completion.values == [SCOPE], scopes)
    conflicts = await session.complete(PromptReference(type="ref/prompt", name="review-conflicts"), {"name": "conflict_id", "value": ""})
    check(len(conflicts.completion.values) == 1, conflicts)
    print("prompts: recall-first, review-conflicts, remember-session rendered; completion of scopes and conflicts", flush=True)
    return billing


async def reader(session, client):
    resources, _ = await all_resources(session)
    for r in resources:
        check("hr:private" not in r.uri and HIDDEN_ID not in r.uri, f"the reader sees {r.uri}")
        check(HIDDEN_WORD not in (r.title or "") + (r.description or ""), f"the reader sees {r.title}")
    for uri in (f"memledger://memories/{HIDDEN_ID}", "memledger://scopes/hr:private"):
        try:
            result = await session.read_resource(uri)
        except MCPError as e:
            check(HIDDEN_WORD not in str(e), f"the refusal quotes the memory: {e}")
        else:
            raise AssertionError(f"the reader read {uri}: {text_of(result)}")
        try:
            await session.subscribe_resource(uri)
        except MCPError:
            pass
        else:
            raise AssertionError(f"the reader subscribed to {uri}")
    prompt = await session.get_prompt("recall-first", {"topic": HIDDEN_WORD})
    check(HIDDEN_WORD not in prompt.messages[0].content.text.split("\n\n", 1)[1], "the prompt shows the hidden memory")
    scopes = await session.complete(PromptReference(type="ref/prompt", name="recall-first"), {"name": "scope", "value": ""})
    check(scopes.completion.values == [SCOPE], f"the reader is offered {scopes.completion.values}")
    print(f"reader: {len(resources)} resources, none of hr:private; its reads and subscriptions refused", flush=True)


def cli_save(binary, store, scope, text):
    done = subprocess.run([binary, "--dir", store, "--json", "save", "--scope", scope, text], capture_output=True, text=True)
    check(done.returncode == 0, f"the CLI's save failed: {done.stderr}")


async def listened(url, token, uris, write, expected):
    """Protocol 2026-07-28: a `subscriptions/listen` stream of `uris`; after `write()` (saves from
    the CLI), the first update must be `expected`."""
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with ModernClient(streamable_http_client(url, http_client=http), cache=None) as client:
            check(client.session.protocol_version == "2026-07-28", f"negotiated {client.session.protocol_version}")
            async with client.listen(resource_subscriptions=uris) as sub:
                write()
                with anyio.fail_after(60):
                    async for event in sub:
                        check(event.uri == expected, f"the first update is {event.uri}, not {expected}")
                        return


async def main(url, owner_token, reader_token, binary, store):
    client = Client()
    billing = []
    async def run_owner(session):
        billing.append(await owner(session, client, binary, store))
    await connect(url, owner_token, client, run_owner)
    other = Client()
    await connect(url, reader_token, other, lambda s: reader(s, other))

    billing_uri = f"memledger://memories/{billing[0]}"
    write = lambda: cli_save(binary, store, SCOPE, "The billing service runs on Postgres 18")
    await listened(url, owner_token, [billing_uri], write, billing_uri)
    print("listen (2026-07-28): a save from the CLI updates the memory", flush=True)
    # The reader listens to a memory it may not read and to its scope; the hidden memory changes
    # first, then the scope: the first update it gets must be the scope's.
    hidden_uri = f"memledger://memories/{HIDDEN_ID}"
    scope_uri = f"memledger://scopes/{SCOPE}"
    def both():
        cli_save(binary, store, "hr:private", f"The CEO's {HIDDEN_WORD} review moved to March 10")
        cli_save(binary, store, SCOPE, "Refunds are processed within five days")
    await listened(url, reader_token, [hidden_uri, scope_uri], both, scope_uri)
    print("listen (2026-07-28): the reader hears of its scope, never of hr:private", flush=True)

    # `memledger mcp` on stdio, forwarding to the running server, hears of another process's save.
    stdio = Client()
    server = StdioServerParameters(command=binary, args=["--dir", store, "mcp"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=stdio.on_message) as session:
            await session.initialize()
            await session.subscribe_resource(scope_uri)
            cli_save(binary, store, SCOPE, "Chargebacks are answered within two days")
            with anyio.fail_after(60):
                while scope_uri not in stdio.updated:
                    stdio.update_seen = anyio.Event()
                    await stdio.update_seen.wait()
    print("stdio: a save from the CLI updates the subscribed scope", flush=True)
    print("ok", flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:6])
