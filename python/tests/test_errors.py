"""Errors named for the CLI's exit codes, carrying problem+json; retries only with an
idempotency key; finding the local server through the store directory."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import Server
from memledger import (
    AsyncMemledger,
    BadInput,
    Conflict,
    Failure,
    Memledger,
    MemledgerError,
    NoServer,
    NotFound,
    NotPermitted,
    Unauthenticated,
)


@pytest.mark.parametrize(
    ("call", "error", "status", "exit_code"),
    [
        (lambda c, s: c.save("", scope=s), BadInput, 422, 2),
        (lambda c, s: c.save("x", type="opinion", scope=s), BadInput, 422, 2),
        (lambda c, s: c.list(status="everything"), BadInput, 422, 2),
        (lambda c, s: c.list(limit=-1), BadInput, 400, 2),
        (lambda c, s: c.show("ffffffffffffffffffffffffffffffff"), NotFound, 404, 4),
        (lambda c, s: c.history("ffffffffffffffffffffffffffffffff"), NotFound, 404, 4),
        (lambda c, s: c.revert("ffffffffffffffffffffffffffffffff"), NotFound, 404, 4),
        (lambda c, s: c.resolve("ffffffffffffffffffffffffffffffff", "keep_new"), NotFound, 404, 4),
    ],
)
def test_each_refusal_is_its_exit_codes_exception(
    client: Any, scope: str, call: Any, error: type[MemledgerError], status: int, exit_code: int
) -> None:
    with pytest.raises(error) as raised:
        call(client, scope)
    e = raised.value
    assert (e.status, e.exit_code) == (status, exit_code)
    assert e.problem["status"] == status and e.problem["exit_code"] == exit_code and e.problem["detail"] == e.detail
    assert e.title


def test_a_stale_expected_version_is_conflict(client: Any, scope: str) -> None:
    saved = client.save("the queue holds 100 jobs", scope=scope)
    client.update(saved.memory_id, "the queue holds 200 jobs")
    with pytest.raises(Conflict) as raised:
        client.update(saved.memory_id, "the queue holds 300 jobs", expect_version=1)
    assert "version" in raised.value.detail and raised.value.exit_code == 3


def test_not_permitted_names_the_verb_and_scope(client: Any, server: Server, scope: str) -> None:
    added = client.add_principal(f"reader-{scope.split(':')[1]}", "agent", grants=[f"{scope}=read"])
    reader = server.client(token=added.token)
    try:
        with pytest.raises(NotPermitted) as refused:
            reader.save("the reader tries to write", scope=scope)
        e = refused.value
        assert (e.status, e.exit_code, e.verb, e.scope) == (403, 5, "write", scope)
        assert reader.list(scope=scope).memories == []
        with pytest.raises(NotPermitted):
            reader.list(scope="personal")
    finally:
        reader.close()


def test_a_wrong_or_revoked_token_is_unauthenticated(client: Any, server: Server, scope: str) -> None:
    with server.client(token="0" * 64) as wrong:
        with pytest.raises(Unauthenticated) as raised:
            wrong.stats()
    assert raised.value.status == 401 and raised.value.exit_code == 5 and raised.value.hint
    added = client.add_principal(f"gone-{scope.split(':')[1]}", "agent")
    client.revoke(added.principal)
    with server.client(token=added.token) as revoked:
        with pytest.raises(Unauthenticated):
            revoked.whoami()


def test_a_server_without_allow_erase_refuses_erasure(tmp_path: Path) -> None:
    plain = Server(tmp_path / "store")
    try:
        with plain.client() as c:
            saved = c.save("keep this one")
            with pytest.raises(BadInput) as refused:
                c.erase(saved.memory_id)
            assert refused.value.status == 403 and "--allow-erase" in (refused.value.hint or "")
            assert c.erase(saved.memory_id, dry_run=True).dry_run
            assert c.show(saved.memory_id).text == "keep this one"
    finally:
        plain.stop()


class LoseTheFirstAnswer(httpx.BaseTransport):
    """Sends every request to the server, and loses the answer of the first one (as a
    connection that breaks after the server committed the save)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.sent = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        response = self.inner.handle_request(request)
        if self.sent == 1:
            response.read()
            response.close()
            raise httpx.ReadError("the connection broke", request=request)
        return response


class ALoseTheFirstAnswer(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.sent = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        response = await self.inner.handle_async_request(request)
        if self.sent == 1:
            await response.aread()
            await response.aclose()
            raise httpx.ReadError("the connection broke", request=request)
        return response


def test_a_save_with_an_idempotency_key_is_retried_and_answered_once(server: Server, scope: str) -> None:
    transport = LoseTheFirstAnswer(httpx.HTTPTransport())
    with server.client(transport=transport) as c:
        saved = c.save("the retry budget is 3", scope=scope, idempotency_key=f"{scope}-retry")
        assert transport.sent == 2 and saved.replayed
        assert len(c.list(scope=scope).memories) == 1


def test_a_batch_whose_every_memory_has_a_key_is_retried(server: Server, scope: str) -> None:
    transport = LoseTheFirstAnswer(httpx.HTTPTransport())
    with server.client(transport=transport) as c:
        batch = [{"text": f"service {i} listens on port {8000 + i}", "scope": scope, "idempotency_key": f"{scope}-{i}"} for i in range(3)]
        results = c.save_many(batch)
        assert transport.sent == 2 and all(r.replayed for r in results)
        assert len(c.list(scope=scope).memories) == 3


def test_a_save_without_a_key_is_never_retried(server: Server, scope: str) -> None:
    transport = LoseTheFirstAnswer(httpx.HTTPTransport())
    with server.client(transport=transport) as c:
        with pytest.raises(Failure):
            c.save("the retry budget is 4", scope=scope)
        assert transport.sent == 1
        # It was saved once: a retry would have saved it again (or merged it, unseen).
        assert len(c.list(scope=scope).memories) == 1
        assert c.log(memory=c.list(scope=scope).memories[0].memory_id)[0].type == "memory_observed"


def test_async_retries_the_same_way(server: Server, scope: str) -> None:
    async def go() -> None:
        transport = ALoseTheFirstAnswer(httpx.AsyncHTTPTransport())
        async with server.aclient(transport=transport) as c:
            saved = await c.save("the async retry budget is 3", scope=scope, idempotency_key=f"{scope}-a")
            assert transport.sent == 2 and saved.replayed
        transport = ALoseTheFirstAnswer(httpx.AsyncHTTPTransport())
        async with server.aclient(transport=transport) as c:
            with pytest.raises(Failure):
                await c.save("the async retry budget is 4", scope=scope)
            assert transport.sent == 1

    asyncio.run(go())


def test_the_local_server_is_found_through_the_store_directory(
    server: Server, scope: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMLEDGER_URL", raising=False)
    monkeypatch.delenv("MEMLEDGER_TOKEN", raising=False)
    # Over the socket without a token: the store's owner.
    with Memledger(dir=server.dir) as local:
        assert local.where == str(server.dir / "memledger.sock")
        saved = local.save("found through the socket", scope=scope)
        assert saved.principal == "owner" and local.whoami().owner
    monkeypatch.setenv("MEMLEDGER_DIR", str(server.dir))
    with Memledger() as local:
        assert local.show(saved.memory_id).text == "found through the socket"

    async def over_the_socket() -> None:
        async with AsyncMemledger() as a:
            assert (await a.show(saved.memory_id)).scope == scope

    asyncio.run(over_the_socket())
    # Over TCP the store's own token file is the owner's.
    with Memledger(server.url, dir=server.dir) as tcp:
        assert tcp.whoami().owner
    monkeypatch.setenv("MEMLEDGER_URL", server.url)
    with Memledger() as tcp:
        assert tcp.stats().events > 0
    # A principal's token over the socket acts as that principal.
    added = Memledger(dir=server.dir).add_principal(f"sock-{scope.split(':')[1]}", "agent")
    monkeypatch.delenv("MEMLEDGER_URL")
    monkeypatch.setenv("MEMLEDGER_TOKEN", added.token or "")
    with Memledger() as agent:
        assert agent.whoami().principal == added.principal


def test_no_server_is_said_plainly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMLEDGER_URL", raising=False)
    with pytest.raises(NoServer, match="memledger serve"):
        Memledger(dir=tmp_path)
    # A URL nobody listens on: a free port, closed again.
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with Memledger(f"http://127.0.0.1:{port}", token="t" * 64) as c:
        with pytest.raises(NoServer):
            c.stats()
