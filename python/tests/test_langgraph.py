"""memledger.langgraph.MemledgerStore: LangGraph's BaseStore operations against a real server,
beside LangGraph's own InMemoryStore where the two promise the same, inside a LangGraph graph,
and LangMem's memory tools writing and searching through it."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime
from typing import Any

import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from conftest import Server
from memledger import CONFLICT_NOTICE
from memledger.langgraph import MemledgerItem, MemledgerSearchItem, MemledgerStore, decode_value, encode_value


@pytest.fixture
def ns() -> tuple[str, ...]:
    """A namespace no other test writes to."""
    return ("lg", uuid.uuid4().hex[:10])


def test_put_get_update_delete(server: Server, ns: tuple[str, ...]) -> None:
    with server.client() as client:
        store = MemledgerStore(client)
        store.put(ns, "favourite-editor", {"content": "Ana prefers dark mode in every editor"})
        item = store.get(ns, "favourite-editor")
        assert isinstance(item, MemledgerItem)
        assert (item.namespace, item.key, item.value) == (
            ns,
            "favourite-editor",
            {"content": "Ana prefers dark mode in every editor"},
        )
        assert item.version == 1 and item.root_id == item.memory_id and item.notice is None
        assert isinstance(item.created_at, datetime) and item.created_at == item.updated_at
        shown = client.show(item.memory_id)
        assert (shown.scope, shown.fact_key) == (":".join(ns), "favourite-editor")

        # The same value again: a restatement, merged, nothing new.
        assert store.save(ns, "favourite-editor", {"content": "Ana prefers dark mode in every editor"}).outcome == "merged"
        # A richer value on the key: the next version of the fact.
        saved = store.save(ns, "favourite-editor", {"content": "Ana prefers dark mode in every editor and terminal"})
        assert saved.outcome == "versioned"
        again = store.get(ns, "favourite-editor")
        assert again is not None and again.value == {"content": "Ana prefers dark mode in every editor and terminal"}
        assert again.version == 2 and again.root_id == item.root_id
        assert again.created_at == item.created_at and again.updated_at > item.updated_at
        assert [v.version for v in client.history(again.memory_id).versions] == [2, 1]

        store.delete(ns, "favourite-editor")
        assert store.get(ns, "favourite-editor") is None
        assert client.show(again.memory_id).status == "retired"
        assert store.get(ns, "never-put") is None


def test_a_contradicting_put_opens_a_conflict_instead_of_overwriting(server: Server, ns: tuple[str, ...]) -> None:
    with server.client() as client:
        store = MemledgerStore(client)
        store.put(ns, "home-city", {"content": "Ana lives in Lisbon"})
        first = store.get(ns, "home-city")
        saved = store.save(ns, "home-city", {"content": "Ana lives in Berlin"})
        assert saved.outcome == "conflict" and saved.conflict_id
        item = store.get(ns, "home-city")
        assert item is not None and item.value == {"content": "Ana lives in Berlin"}
        assert item.notice == CONFLICT_NOTICE and first is not None and item.conflicts_with == [first.memory_id]
        # Both are kept until a person decides.
        assert client.show(first.memory_id).status == "active"
        client.resolve(saved.conflict_id, "keep_existing")
        kept = store.get(ns, "home-city")
        assert kept is not None and kept.value == {"content": "Ana lives in Lisbon"} and kept.notice is None
        found = store.search(ns, query="where does Ana live")
        assert [(i.key, i.value["content"]) for i in found] == [("home-city", "Ana lives in Lisbon")]


def test_values_round_trip() -> None:
    for value in [
        {"content": "plain words"},
        {"content": "{not json"},
        {"content": '{"a": 1}'},
        {"kind": "preference", "content": "dark mode", "weight": 0.5, "tags": ["ui"]},
        {"nested": {"a": [1, 2, {"b": None}]}},
    ]:
        assert decode_value(encode_value(value)) == value, value
    assert encode_value({"content": "plain words"}) == "plain words"


def test_batch_runs_in_order_and_answers_in_order(server: Server, ns: tuple[str, ...]) -> None:
    with server.client() as client:
        store = MemledgerStore(client)
        results = store.batch(
            [
                GetOp(ns, "a"),
                PutOp(ns, "a", {"content": "the build uses Bazel"}),
                GetOp(ns, "a"),
                PutOp(ns, "b", {"content": "the linter is Ruff"}),
                SearchOp(ns, query="linter", limit=5),
                ListNamespacesOp(match_conditions=(MatchCondition("prefix", ns),)),
                PutOp(ns, "a", None),
                GetOp(ns, "a"),
                GetOp(ns, "b"),
            ]
        )
        assert len(results) == 9
        assert results[0] is None and results[1] is None and results[3] is None and results[6] is None
        assert results[2].value == {"content": "the build uses Bazel"}
        assert [i.key for i in results[4]] == ["b"]
        assert results[5] == [ns]
        assert results[7] is None
        assert results[8].value == {"content": "the linter is Ruff"}


def test_search_filter_limit_offset_and_prefixes(server: Server, ns: tuple[str, ...]) -> None:
    with server.client() as client:
        store = MemledgerStore(client)
        for i in range(6):
            store.put(
                (*ns, "docs"),
                f"doc{i}",
                {"content": f"runbook {i} for the payments service", "team": "payments" if i % 2 else "search", "rank": i},
            )
        store.put((*ns, "other"), "x", {"content": "runbook for the search cluster", "team": "search", "rank": 9})
        store.put((ns[0], ns[1] + "x"), "y", {"content": "runbook outside the prefix", "team": "search", "rank": 9})

        everything = store.search(ns, limit=100)
        assert {i.namespace for i in everything} == {(*ns, "docs"), (*ns, "other")}
        assert all(isinstance(i, MemledgerSearchItem) and i.score is None for i in everything)
        # Without a query: newest first.
        assert [i.key for i in store.search((*ns, "docs"), limit=3)] == ["doc5", "doc4", "doc3"]
        assert [i.key for i in store.search((*ns, "docs"), limit=2, offset=2)] == ["doc3", "doc2"]
        payments = store.search(ns, filter={"team": "payments"}, limit=100)
        assert sorted(i.key for i in payments) == ["doc1", "doc3", "doc5"]
        assert sorted(i.key for i in store.search(ns, filter={"rank": {"$gte": 4}}, limit=100)) == ["doc4", "doc5", "x"]
        assert sorted(i.key for i in store.search(ns, filter={"team": {"$ne": "payments"}, "rank": {"$lt": 3}})) == [
            "doc0",
            "doc2",
        ]
        # With a query: recall, best first, each with its score.
        hits = store.search(ns, query="search cluster runbook", limit=3)
        assert hits[0].key == "x" and all(h.score is not None for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        filtered = store.search(ns, query="runbook payments", filter={"team": "search"}, limit=2)
        assert len(filtered) == 2 and all(h.value["team"] == "search" for h in filtered)
        assert all(h.namespace[:2] == ns for h in filtered)


def test_list_namespaces(server: Server, ns: tuple[str, ...]) -> None:
    with server.client() as client:
        store = MemledgerStore(client)
        for path in [("a", "x"), ("a", "y"), ("b",), ("b", "z", "deep")]:
            store.put((*ns, *path), "k", {"content": f"memory in {'/'.join(path)}"})
        mine = MatchCondition("prefix", ns)
        assert store.list_namespaces(prefix=ns) == [(*ns, "a", "x"), (*ns, "a", "y"), (*ns, "b"), (*ns, "b", "z", "deep")]
        assert store.list_namespaces(prefix=ns, max_depth=3) == [(*ns, "a"), (*ns, "b")]
        assert store.list_namespaces(prefix=ns, suffix=("y",)) == [(*ns, "a", "y")]
        assert store.list_namespaces(prefix=(*ns, "*", "x")) == [(*ns, "a", "x")]
        assert store.list_namespaces(prefix=ns, limit=2, offset=1) == [(*ns, "a", "y"), (*ns, "b")]
        assert store.batch([ListNamespacesOp(match_conditions=(mine, MatchCondition("suffix", ("deep",))))]) == [
            [(*ns, "b", "z", "deep")]
        ]
        store.delete((*ns, "b"), "k")
        assert (*ns, "b") not in store.list_namespaces(prefix=ns)


def test_namespaces_langgraph_and_memledger_refuse(server: Server) -> None:
    with server.client() as client:
        store = MemledgerStore(client)
        for bad in [(), ("a.b",), ("",), ("a:b",), ("team*",), ("langgraph", "x")]:
            with pytest.raises(InvalidNamespaceError):
                store.put(bad, "k", {"content": "x"})
        with pytest.raises(InvalidNamespaceError):
            store.batch([PutOp(("a:b",), "k", {"content": "x"})])


def test_memories_saved_without_a_key_are_found_by_their_root_id(server: Server, ns: tuple[str, ...]) -> None:
    with server.client() as client:
        saved = client.save("saved by the CLI, no fact key", scope=":".join(ns))
        store = MemledgerStore(client)
        [found] = store.search(ns)
        assert found.key == saved.root_id and found.value == {"content": "saved by the CLI, no fact key"}
        item = store.get(ns, saved.root_id)
        assert item is not None and item.memory_id == saved.memory_id
        assert store.get(("elsewhere",), saved.root_id) is None


def test_the_async_store(server: Server, ns: tuple[str, ...]) -> None:
    async def go() -> None:
        async with server.aclient() as aclient:
            store = MemledgerStore(aclient)
            await store.aput(ns, "tz", {"content": "the team works in CET"})
            item = await store.aget(ns, "tz")
            assert item is not None and item.value == {"content": "the team works in CET"}
            saved = await store.asave(ns, "tz", {"content": "the team works in CET, and Bo in PST"})
            assert saved.outcome in ("versioned", "added", "conflict")
            results = await store.abatch([GetOp(ns, "tz"), SearchOp(ns, query="team timezone"), ListNamespacesOp()])
            assert results[0] is not None and results[1] and ns in results[2]
            # Concurrent calls, as a graph's parallel nodes make them.
            await asyncio.gather(*(store.aput(ns, f"k{i}", {"content": f"fact number {i} about region r{i}"}) for i in range(5)))
            assert len(await store.asearch(ns, limit=100)) == 6
            await store.adelete(ns, "k0")
            assert await store.aget(ns, "k0") is None
            assert await store.alist_namespaces(prefix=ns) == [ns]
            with pytest.raises(TypeError):
                store.get(ns, "tz")

    asyncio.run(go())


def test_a_sync_client_serves_the_async_methods_on_a_thread(server: Server, ns: tuple[str, ...]) -> None:
    with server.client() as client:
        store = MemledgerStore(client)

        async def go() -> None:
            await store.aput(ns, "k", {"content": "threads carry the sync client"})
            item = await store.aget(ns, "k")
            assert item is not None and item.value["content"] == "threads carry the sync client"

        asyncio.run(go())


def test_the_same_answers_as_langgraphs_in_memory_store(server: Server, ns: tuple[str, ...]) -> None:
    """What both stores promise alike: puts, gets, deletes, filtered listing by namespace,
    offsets and limits, and namespace listing. (Ordering differs: memledger lists newest first,
    the in-memory store in insertion order; ranking differs: recall against embeddings.)"""
    with server.client() as client:
        ours = MemledgerStore(client)
        theirs = InMemoryStore()
        script = [
            ("put", (*ns, "u1"), "name", {"content": "Ana", "age": 41}),
            ("put", (*ns, "u1"), "lang", {"content": "Portuguese", "age": 0}),
            ("put", (*ns, "u2"), "name", {"content": "Bo", "age": 35}),
            ("put", (*ns, "u2", "prefs"), "theme", {"content": "dark", "age": 2}),
            ("delete", (*ns, "u1"), "lang", None),
        ]
        for verb, namespace, key, value in script:
            for s in (ours, theirs):
                if verb == "put":
                    s.put(namespace, key, value)
                else:
                    s.delete(namespace, key)
        # (Not a namespace nothing was put in: the in-memory store's get of one lists it after.)
        for namespace, key in [((*ns, "u1"), "name"), ((*ns, "u1"), "lang"), ((*ns, "u2", "prefs"), "theme")]:
            a, b = ours.get(namespace, key), theirs.get(namespace, key)
            assert (a is None) == (b is None), (namespace, key)
            if a is not None and b is not None:
                assert (a.namespace, a.key, a.value) == (b.namespace, b.key, b.value)

        def keyed(items: list[Any]) -> set[tuple[tuple[str, ...], str]]:
            return {(i.namespace, i.key) for i in items}

        for prefix, flt in [(ns, None), ((*ns, "u2"), None), (ns, {"age": {"$gt": 10}}), (ns, {"content": "dark"})]:
            assert keyed(ours.search(prefix, filter=flt, limit=50)) == keyed(theirs.search(prefix, filter=flt, limit=50))
        assert len(ours.search(ns, limit=2)) == len(theirs.search(ns, limit=2)) == 2
        assert len(ours.search(ns, limit=2, offset=2)) == len(theirs.search(ns, limit=2, offset=2)) == 1
        for kw in [{"prefix": ns}, {"prefix": ns, "max_depth": 3}, {"prefix": ns, "suffix": ("prefs",)}, {"prefix": ns, "limit": 1, "offset": 1}]:
            assert ours.list_namespaces(**kw) == sorted(theirs.list_namespaces(**kw)), kw


def test_the_store_in_a_langgraph_graph(server: Server, ns: tuple[str, ...]) -> None:
    from langgraph.graph import END, START, StateGraph
    from langgraph.runtime import Runtime
    from typing_extensions import TypedDict

    class State(TypedDict):
        text: str
        recalled: list[str]

    def remember(state: State, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is not None
        runtime.store.put(ns, "note", {"content": state["text"]})
        return {}

    def recall(state: State, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is not None
        return {"recalled": [i.value["content"] for i in runtime.store.search(ns, query="deploy window")]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    with server.client() as client:
        app = graph.compile(store=MemledgerStore(client))
        out = app.invoke({"text": "the deploy window is Tuesday 10:00 to 12:00", "recalled": []})
        assert out["recalled"] == ["the deploy window is Tuesday 10:00 to 12:00"]

    async def go() -> None:
        async with server.aclient() as aclient:
            app = graph.compile(store=MemledgerStore(aclient))
            # Nodes are sync functions: LangGraph runs them on threads and they call the sync
            # methods; an async-only store refuses those, so give it both clients.
            with server.client() as client:
                app = graph.compile(store=MemledgerStore(client, aclient=aclient))
                out = await app.ainvoke({"text": "the deploy window is Thursday 14:00 to 16:00", "recalled": []})
                assert "the deploy window is Thursday 14:00 to 16:00" in out["recalled"]

    asyncio.run(go())


def test_langmem_memory_tools_write_and_search_through_the_store(server: Server, ns: tuple[str, ...]) -> None:
    from langmem import create_manage_memory_tool, create_search_memory_tool

    with server.client() as client:
        store = MemledgerStore(client)
        manage = create_manage_memory_tool(namespace=ns, store=store)
        search = create_search_memory_tool(namespace=ns, store=store, response_format="content_and_artifact")

        created = manage.invoke({"content": "The user prefers dark mode in every editor", "action": "create"})
        memory_id = created.split()[-1]
        uuid.UUID(memory_id)
        manage.invoke({"content": "The user deploys with Kubernetes on Fridays", "action": "create"})

        found = search.invoke({"query": "which mode does the user prefer", "limit": 5})
        # content_and_artifact through invoke gives the content; the artifact by calling the function.
        assert "dark mode" in str(found)
        content, raw = search.func(query="which mode does the user prefer", limit=5)
        memories = json.loads(content)
        assert raw[0].key == memory_id and raw[0].value == {"content": "The user prefers dark mode in every editor"}
        assert memories[0]["key"] == memory_id and memories[0]["value"]["content"].startswith("The user prefers")

        # An update through the tool is a new version of that memory; a contradiction a conflict.
        manage.invoke({"id": memory_id, "content": "The user prefers dark mode in every editor and terminal", "action": "update"})
        item = store.get(ns, memory_id)
        assert item is not None and item.version == 2 and item.notice is None
        manage.invoke({"id": memory_id, "content": "The user prefers light mode in every editor and terminal", "action": "update"})
        item = store.get(ns, memory_id)
        assert item is not None and item.notice == CONFLICT_NOTICE
        pending = [c for c in client.conflicts().conflicts if c.incoming == item.memory_id]
        assert len(pending) == 1

        manage.invoke({"id": memory_id, "action": "delete"})
        assert store.get(ns, memory_id) is None
        assert [m["value"]["content"] for m in json.loads(search.func(query="kubernetes fridays")[0])] == [
            "The user deploys with Kubernetes on Fridays"
        ]


def test_langmem_tools_async(server: Server, ns: tuple[str, ...]) -> None:
    from langmem import create_manage_memory_tool, create_search_memory_tool

    async def go() -> None:
        async with server.aclient() as aclient:
            store = MemledgerStore(aclient)
            manage = create_manage_memory_tool(namespace=ns, store=store)
            search = create_search_memory_tool(namespace=ns, store=store)
            await manage.ainvoke({"content": "The user's cat is called Miso", "action": "create"})
            found = await search.ainvoke({"query": "what is the cat called"})
            assert "Miso" in str(found)

    asyncio.run(go())
