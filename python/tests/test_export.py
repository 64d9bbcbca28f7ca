"""The streamed export: events as they arrive, whole lines only, a stream cut short raising
ExportInterrupted with the last seq received (and resumable from it), a reader that stops early
closing the request without harm."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest

from conftest import Server
from memledger import AsyncMemledger, ExportInterrupted, Memledger, models as m


class CuttingProxy:
    """A loopback TCP proxy in front of the server that forwards the first ``limit`` bytes of
    each answer and then closes both connections: a stream cut at a known byte."""

    def __init__(self, target: str, limit: int) -> None:
        host, port = target.removeprefix("http://").rsplit(":", 1)
        self.target = (host, int(port))
        self.limit = limit
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(client,), daemon=True).start()

    def _one(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.target)

        def forward_requests() -> None:
            try:
                while data := client.recv(65536):
                    upstream.sendall(data)
            except OSError:
                pass

        threading.Thread(target=forward_requests, daemon=True).start()
        sent = 0
        try:
            while sent < self.limit and (data := upstream.recv(min(65536, self.limit - sent))):
                client.sendall(data)
                sent += len(data)
        except OSError:
            pass
        for s in (client, upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(scope="module")
def ledger(server: Server) -> list[m.Event]:
    """A ledger long enough that its export is many chunks."""
    with server.client() as c:
        c.save_many([{"text": f"export test memory {i}: host h{i} serves region r{i % 7}", "scope": "test:export"} for i in range(400)])
        return c.log(limit=100_000)


def test_the_export_streams_every_event_in_order(client: Any, ledger: list[m.Event]) -> None:
    exported = list(client.export())
    assert [e.seq for e in exported[: len(ledger)]] == [e.seq for e in ledger]
    assert all(isinstance(e, m.Event) for e in exported)
    assert exported[0].seq == 1 and exported[0].prev_hash
    since = ledger[-10].seq
    assert [e.seq for e in client.export(since=since)][:10] == [e.seq for e in ledger[-10:]]
    lines = list(client.export_lines(since=since))
    assert m.Event.model_validate_json(lines[0]).seq == since


def test_a_reader_that_stops_early_closes_the_request(server: Server, ledger: list[m.Event]) -> None:
    with server.client() as c:
        stream = c.export()
        first = [next(stream) for _ in range(3)]
        stream.close()  # as a `break` out of a for loop does
        assert [e.seq for e in first] == [1, 2, 3]
        # The server goes on answering, and the store is sound.
        assert c.verify().ok
        assert len(list(c.export(since=ledger[-1].seq))) >= 1

    async def go() -> None:
        async with server.aclient() as a:
            async for event in a.export():
                if event.seq == 5:
                    break
            assert (await a.verify()).ok

    asyncio.run(go())


@pytest.mark.parametrize("cut", [900, 70_000, 200_000])
def test_a_stream_cut_short_raises_with_the_last_seq_and_resumes(
    server: Server, ledger: list[m.Event], cut: int
) -> None:
    proxy = CuttingProxy(server.url, cut)
    try:
        got: list[m.Event] = []
        with server.client() as whole, server.client() as direct:
            everything = [e.seq for e in whole.export()]
            with Memledger(proxy.url, token=server.token) as c:
                with pytest.raises(ExportInterrupted) as interrupted:
                    for event in c.export():
                        got.append(event)
            last = interrupted.value.last_seq
            assert last == (got[-1].seq if got else None)
            # Every event yielded was whole, in order; resuming gives exactly the rest.
            assert [e.seq for e in got] == everything[: len(got)]
            rest = [e.seq for e in direct.export(since=(last or 0) + 1)]
            assert [e.seq for e in got] + rest == everything
    finally:
        proxy.close()


def test_async_stream_cut_short(server: Server, ledger: list[m.Event]) -> None:
    proxy = CuttingProxy(server.url, 70_000)

    async def go() -> tuple[list[int], int | None]:
        got: list[int] = []
        async with AsyncMemledger(proxy.url, token=server.token) as a:
            with pytest.raises(ExportInterrupted) as interrupted:
                async for event in a.export():
                    got.append(event.seq)
        return got, interrupted.value.last_seq

    try:
        got, last = asyncio.run(go())
        assert got and last == got[-1] and got == list(range(1, len(got) + 1))
    finally:
        proxy.close()
