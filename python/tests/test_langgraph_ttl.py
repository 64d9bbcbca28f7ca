"""LangGraph's TTL behaviours on ``MemledgerStore``: the ones LangGraph's own stores are tested
for (``libs/checkpoint-sqlite/tests/test_ttl.py``: a default ttl, a ttl per item overriding it,
refresh on read, search, expired items left out of every read path, a refresh never resurrecting
an expired item, filtering before limit and offset), each on a real server. Where LangGraph's
tests sleep, these advance the store's clock: a read asks about the store's time and an expiry
is computed from it, so nothing here waits."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from langgraph.store.base import GetOp, PutOp, SearchOp

from conftest import Server
from memledger.langgraph import MemledgerStore


class Clock:
    """The store's time, moved by hand. It starts a day ahead of the real clock, so every event
    the server records (at its own time) is in the past of every read the store makes."""

    def __init__(self) -> None:
        self.now = datetime.now(timezone.utc) + timedelta(days=1)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def ns() -> tuple[str, ...]:
    """A namespace no other test writes to."""
    return ("ttl", uuid.uuid4().hex[:10])


SECOND = 1 / 60  # LangGraph's ttls are in minutes.


def test_the_store_supports_ttl() -> None:
    assert MemledgerStore.supports_ttl is True


def test_ttl_basic(server: Server, ns: tuple[str, ...]) -> None:
    clock = Clock()
    with server.client() as client:
        store = MemledgerStore(client, ttl={"default_ttl": SECOND}, clock=clock)
        store.put(ns, "item1", {"value": "test"})
        item = store.get(ns, "item1")
        assert item is not None and item.value["value"] == "test"
        clock.advance(2)
        assert store.get(ns, "item1") is None
        # Kept in history: expired, not deleted.
        assert client.show(item.memory_id, valid_at=clock().isoformat()).status == "expired"


def test_ttl_refresh(server: Server, ns: tuple[str, ...]) -> None:
    clock = Clock()
    with server.client() as client:
        store = MemledgerStore(client, ttl={"default_ttl": SECOND, "refresh_on_read": True}, clock=clock)
        store.put(ns, "item1", {"value": "test"})
        clock.advance(0.5)
        # Read and refreshed: it now lives a second from here.
        assert store.get(ns, "item1", refresh_ttl=True) is not None
        clock.advance(0.75)
        item = store.get(ns, "item1")
        assert item is not None and item.value["value"] == "test"
        # Not refreshed again: gone a second after the last refresh.
        clock.advance(1.75)
        assert store.get(ns, "item1", refresh_ttl=False) is None
        # Each refresh was an update of the expiry alone: the same text, one version each.
        history = client.history(item.root_id)
        assert len(history.versions) == 3 and {v.text for v in history.versions} == {'{"value":"test"}'}


def test_ttl_custom_value(server: Server, ns: tuple[str, ...]) -> None:
    clock = Clock()
    with server.client() as client:
        store = MemledgerStore(client, clock=clock)
        store.put(ns, "item1", {"value": "short"}, ttl=SECOND)
        store.put(ns, "item2", {"value": "long"}, ttl=3 * SECOND)
        clock.advance(2)
        assert store.get(ns, "item1") is None
        assert store.get(ns, "item2", refresh_ttl=False) is not None
        clock.advance(4)
        assert store.get(ns, "item2") is None


def test_ttl_override_default(server: Server, ns: tuple[str, ...]) -> None:
    # The override is the behaviour under test, so the reads do not refresh.
    clock = Clock()
    with server.client() as client:
        store = MemledgerStore(client, ttl={"default_ttl": 5 * SECOND, "refresh_on_read": False}, clock=clock)
        store.put(ns, "item1", {"value": "override"}, ttl=SECOND)
        store.put(ns, "item2", {"value": "default"})
        store.put(ns, "item3", {"value": "permanent"}, ttl=None)
        clock.advance(2)
        assert store.get(ns, "item1") is None
        assert store.get(ns, "item2") is not None
        assert store.get(ns, "item3") is not None
        clock.advance(4)
        assert store.get(ns, "item2") is None
        assert store.get(ns, "item3") is not None


def test_search_with_ttl(server: Server, ns: tuple[str, ...]) -> None:
    clock = Clock()
    with server.client() as client:
        store = MemledgerStore(client, ttl={"default_ttl": SECOND}, clock=clock)
        store.put(ns, "item1", {"value": "apple"})
        store.put(ns, "item2", {"value": "banana"})
        results = store.search(ns, filter={"value": "apple"}, refresh_ttl=False)
        assert [r.key for r in results] == ["item1"]
        clock.advance(2)
        assert store.search(ns, filter={"value": "apple"}) == []


def test_expired_items_are_left_out_of_every_read_path(server: Server) -> None:
    clock = Clock()
    label = uuid.uuid4().hex[:10]
    expired_ns, control_ns = ("omit", label, "expired"), ("omit", label, "control")
    with server.client() as client:
        store = MemledgerStore(client, ttl={"default_ttl": 5}, clock=clock)
        store.put(expired_ns, "e", {"data": "the freeze lasts until Friday"}, ttl=SECOND)
        store.put(control_ns, "c", {"data": "the freeze policy is written down"}, ttl=None)
        clock.advance(2)
        assert store.get(expired_ns, "e") is None
        assert store.get(control_ns, "c") is not None
        assert store.search(expired_ns) == []
        assert [i.key for i in store.search(control_ns)] == ["c"]
        assert [i.key for i in store.search(("omit", label), query="freeze")] == ["c"]
        namespaces = store.list_namespaces(prefix=("omit", label))
        assert expired_ns not in namespaces and control_ns in namespaces
        # Asked about a time before the expiry, it is there.
        earlier = MemledgerStore(client, clock=lambda: clock() - timedelta(seconds=1.5))
        assert earlier.get(expired_ns, "e", refresh_ttl=False) is not None


def test_a_refresh_never_resurrects_an_expired_item_and_renews_live_ones(server: Server, ns: tuple[str, ...]) -> None:
    clock = Clock()
    with server.client() as client:
        store = MemledgerStore(client, ttl={"default_ttl": 5, "refresh_on_read": True}, clock=clock)
        store.put(ns, "expired", {"n": 0}, ttl=SECOND)
        store.put(ns, "live_get", {"n": 1})
        store.put(ns, "live_search", {"n": 2})
        before = {k: store.get(ns, k, refresh_ttl=False) for k in ("expired", "live_get", "live_search")}
        expires = {k: client.show(i.memory_id).expires_at for k, i in before.items() if i is not None}
        clock.advance(2)
        assert store.get(ns, "expired", refresh_ttl=True) is None
        assert "expired" not in [i.key for i in store.search(ns, refresh_ttl=True)]
        assert client.show(before["expired"].memory_id).expires_at == expires["expired"]  # type: ignore[union-attr]
        got = store.get(ns, "live_get", refresh_ttl=True)
        assert got is not None
        after = {k: client.list(scope=":".join(ns), fact_key=k, valid_at=clock().isoformat()).memories for k in expires}
        assert after["expired"] == []
        assert after["live_get"][0].expires_at > expires["live_get"]  # type: ignore[operator]
        assert after["live_search"][0].expires_at > expires["live_search"]  # type: ignore[operator]
        assert got.memory_id == after["live_get"][0].memory_id


def test_expired_items_are_filtered_before_limit_and_offset(server: Server, ns: tuple[str, ...]) -> None:
    clock = Clock()
    with server.client() as client:
        store = MemledgerStore(client, ttl={"default_ttl": 5, "refresh_on_read": False}, clock=clock)
        store.put(ns, "c", {"k": "c"})
        store.put(ns, "b", {"k": "b"})
        store.put(ns, "expired", {"k": "x"}, ttl=SECOND)
        store.put(ns, "a", {"k": "a"})
        clock.advance(2)
        # Newest first: a, (expired), b, c.
        assert [i.key for i in store.search(ns, limit=2, offset=0)] == ["a", "b"]
        assert [i.key for i in store.search(ns, limit=2, offset=2)] == ["c"]


def test_a_put_without_a_ttl_clears_it_and_a_batch_put_carries_one(server: Server, ns: tuple[str, ...]) -> None:
    clock = Clock()
    with server.client() as client:
        store = MemledgerStore(client, clock=clock)
        store.batch([PutOp(ns, "k", {"v": 1}, ttl=SECOND)])
        store.put(ns, "k", {"v": 1}, ttl=None)
        clock.advance(60)
        item = store.get(ns, "k")
        assert item is not None and item.version == 2
        assert client.show(item.memory_id).expires_at is None
        assert store.batch([GetOp(ns, "k", refresh_ttl=False), SearchOp(ns)])[0] is not None


def test_async_ttl_basic(server: Server, ns: tuple[str, ...]) -> None:
    clock = Clock()

    async def go() -> None:
        async with server.aclient() as aclient:
            store = MemledgerStore(aclient, ttl={"default_ttl": SECOND}, clock=clock)
            await store.aput(ns, "item1", {"value": "test"})
            item = await store.aget(ns, "item1")
            assert item is not None and item.value["value"] == "test"
            clock.advance(2)
            assert await store.aget(ns, "item1") is None
            assert await store.asearch(ns) == []

    asyncio.run(go())
