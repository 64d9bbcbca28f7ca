#!/usr/bin/env python3
"""The Python package's overhead and its LangGraph store's search, against a real server.

Usage: bench/python_client.py MEMLEDGER_BINARY [STORE_MEMORIES] [ROUNDS]

Starts `memledger serve --http 127.0.0.1:0` on a temporary store and measures:

1. recall through `Memledger.recall` (typed models) beside a bare httpx request to the same
   route (`POST /v1/recall`, the same body, the body read) on the same connection settings,
   alternated, ROUNDS each (default 2000), over TCP and over the Unix socket, on a scope of
   2,000 memories: medians and p95, and the ratio of the medians (target: at most 1.2);
2. `MemledgerStore.search` (LangGraph's BaseStore) on one namespace of STORE_MEMORIES memories
   (default 20,000) with a query and limit 10, and without a query (the namespace's newest 10),
   beside LangGraph's `InMemoryStore` holding the same items: p50 and p95 over 300 searches.

Needs the package and langgraph: `python3 -m pip install ./python langgraph` (or the test
requirements, python/requirements-test.txt). Prints one table; writes nothing else.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python" / "tests"))

import httpx  # noqa: E402
from conftest import Server  # noqa: E402  (the tests' server: started, ready when it prints its address)
from langgraph.store.memory import InMemoryStore  # noqa: E402

from memledger import Memledger  # noqa: E402
from memledger.langgraph import MemledgerStore, encode_value  # noqa: E402

PEOPLE = ["Ana", "Bruno", "Chen", "Dara", "Elif", "Farah", "Goran", "Hana", "Ines", "Jonas", "Kofi", "Lena"]
SYSTEMS = ["billing", "search", "ledger", "gateway", "scheduler", "inbox", "catalog", "payments", "auth", "metrics"]
THINGS = ["runbook", "dashboard", "migration", "alert", "deploy", "backup", "index", "queue", "cache", "schema"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def memory(rng: random.Random, i: int) -> str:
    p, s, t, d = rng.choice(PEOPLE), rng.choice(SYSTEMS), rng.choice(THINGS), rng.choice(DAYS)
    return rng.choice(
        [
            f"{p} owns the {s} {t} number {i} and reviews it every {d}",
            f"the {s} {t} {i} moved to region r{i % 17} after the {d} outage",
            f"{p} prefers to run the {s} {t} {i} checks on {d} mornings",
            f"the {t} of {s} service {i} keeps {i % 90 + 10} days of history",
        ]
    )


def queries(rng: random.Random, n: int) -> list[str]:
    return [f"who owns the {rng.choice(SYSTEMS)} {rng.choice(THINGS)} on {rng.choice(DAYS)}" for _ in range(n)]


def ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def fill(client: Memledger, scope: str, n: int, rng: random.Random, keyed: bool) -> list[tuple[str, str]]:
    items = []
    for start in range(0, n, 1000):
        batch = []
        for i in range(start, min(n, start + 1000)):
            text = memory(rng, i)
            items.append((f"m{i}", text))
            batch.append({"text": text, "scope": scope, "no_dedup": True, **({"fact_key": f"m{i}"} if keyed else {})})
        client.save_many(batch)
    return items


def recall_overhead(server: Server, via: str, rounds: int, rng: random.Random) -> tuple[float, float, float, float]:
    if via == "tcp":
        typed = Memledger(server.url, token=server.token)
        raw = httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {server.token}"}, timeout=30)
    else:
        typed = Memledger(dir=server.dir)
        raw = httpx.Client(base_url="http://localhost", transport=httpx.HTTPTransport(uds=str(server.socket)), timeout=30)
    asked = queries(rng, rounds)
    typed_s, raw_s = [], []
    for q in asked[:50]:  # warm both connections and the server's caches
        typed.recall(q, scope="bench:recall", limit=10)
        raw.post("/v1/recall", json={"query": q, "scope": "bench:recall", "limit": 10}).read()
    for i, q in enumerate(asked):
        order = (0, 1) if i % 2 else (1, 0)
        for which in order:
            started = time.perf_counter()
            if which == 0:
                typed.recall(q, scope="bench:recall", limit=10)
                typed_s.append(time.perf_counter() - started)
            else:
                r = raw.post("/v1/recall", json={"query": q, "scope": "bench:recall", "limit": 10})
                r.read()
                assert r.status_code == 200
                raw_s.append(time.perf_counter() - started)
    typed.close()
    raw.close()
    return statistics.median(typed_s) * 1000, ms(typed_s, 0.95), statistics.median(raw_s) * 1000, ms(raw_s, 0.95)


def store_search(server: Server, n: int, rng: random.Random) -> dict[str, tuple[float, float]]:
    ns = ("bench", "store")
    with Memledger(server.url, token=server.token) as client:
        items = fill(client, "bench:store", n, rng, keyed=True)
        ours = MemledgerStore(client)
        theirs = InMemoryStore()
        for key, text in items:
            theirs.put(ns, key, {"content": text})
        assert encode_value({"content": items[0][1]}) == items[0][1]
        asked = queries(rng, 300)
        out: dict[str, tuple[float, float]] = {}
        for name, store in (("MemledgerStore", ours), ("InMemoryStore", theirs)):
            for label, kwargs in (("query", True), ("no query", False)):
                for q in asked[:20]:
                    store.search(ns, query=q if kwargs else None, limit=10)
                samples = []
                for q in asked:
                    started = time.perf_counter()
                    found = store.search(ns, query=q if kwargs else None, limit=10)
                    samples.append(time.perf_counter() - started)
                    assert len(found) == 10
                out[f"{name}, {label}"] = (ms(samples, 0.5), ms(samples, 0.95))
        return out


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    import os

    os.environ["MEMLEDGER_BIN"] = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20_000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "store")
        try:
            with Memledger(server.url, token=server.token) as client:
                fill(client, "bench:recall", 2000, rng, keyed=False)
            print(f"recall, scope of 2,000 memories, limit 10, {rounds} rounds each, alternated")
            print("| path | Memledger.recall p50 / p95 | bare httpx p50 / p95 | ratio of medians |")
            print("|---|---|---|---|")
            for via in ("tcp", "unix"):
                t50, t95, r50, r95 = recall_overhead(server, via, rounds, rng)
                print(f"| {via} | {t50:.3f} / {t95:.3f} ms | {r50:.3f} / {r95:.3f} ms | {t50 / r50:.2f} |")
            print()
            print(f"BaseStore.search, one namespace of {n:,} memories, limit 10, 300 searches")
            print("| store, search | p50 | p95 |")
            print("|---|---|---|")
            for name, (p50, p95) in store_search(server, n, rng).items():
                print(f"| {name} | {p50:.3f} ms | {p95:.3f} ms |")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
