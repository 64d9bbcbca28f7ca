#!/usr/bin/env python3
"""Generate the synchronous client (``_sync_client.py``, ``Memledger``) from the asynchronous
one (``_async_client.py``, ``AsyncMemledger``), so the two have one source. Run it after editing
``_async_client.py``; ``tests/test_contract.py`` fails while the generated file is stale.

Usage: python/scripts/unasync.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "memledger"

# In order: longer and more specific first.
REPLACEMENTS = [
    ('"""``AsyncMemledger``: the client of a running ``memledger serve`` for asyncio programs.',
     '"""``Memledger``: the client of a running ``memledger serve``.'),
    ("This file is the source of both clients: ``_sync_client.py`` (``Memledger``) is generated from it\n"
     "by ``python/scripts/unasync.py``, and a test checks that it is up to date.",
     "Generated from ``_async_client.py`` by ``python/scripts/unasync.py``: edit that file, not this one."),
    ("AsyncMemledger", "Memledger"),
    ("httpx.AsyncClient", "httpx.Client"),
    ("httpx.AsyncHTTPTransport", "httpx.HTTPTransport"),
    ("httpx.AsyncBaseTransport", "httpx.BaseTransport"),
    ("AsyncIterator", "Iterator"),
    ("await asyncio.sleep(", "time.sleep("),
    ("import asyncio\n", "import time\n"),
    ("async def ", "def "),
    ("async with ", "with "),
    ("async for ", "for "),
    ("await ", ""),
    ("__aenter__", "__enter__"),
    ("__aexit__", "__exit__"),
    ("aclose()", "close()"),
    ("def aclose(", "def close("),
    ("aiter_bytes()", "iter_bytes()"),
    ("aread()", "read()"),
]


def generate() -> str:
    text = (PACKAGE / "_async_client.py").read_text()
    for old, new in REPLACEMENTS:
        text = text.replace(old, new)
    return text


def main() -> int:
    target = PACKAGE / "_sync_client.py"
    text = generate()
    if "--check" in sys.argv[1:]:
        if target.read_text() != text:
            print(f"{target} is stale: run python/scripts/unasync.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
