"""``AsyncMemledger``: the client of a running ``memledger serve`` for asyncio programs.

This file is the source of both clients: ``_sync_client.py`` (``Memledger``) is generated from it
by ``python/scripts/unasync.py``, and a test checks that it is up to date.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
import os
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, TypedDict, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from . import models as m
from .discovery import resolve as _endpoint
from .errors import ExportInterrupted, Failure, MemledgerError, NoServer, Unavailable, error_for

__all__ = ["AsyncMemledger", "SaveRequest", "Evidence"]

_M = TypeVar("_M", bound=BaseModel)
_List = list
_VERSION = "0.1.0"


class Evidence(TypedDict, total=False):
    """Where in a transcript a memory was said (``agent``, ``file``, ``first_line`` and
    ``last_line`` are required)."""

    agent: str
    session: str
    file: str
    first_line: int
    last_line: int
    message_ids: list[str]
    excerpt: str
    observed_at: str


class SaveRequest(TypedDict, total=False):
    """One memory of :meth:`AsyncMemledger.save_many`: the fields of :meth:`AsyncMemledger.save`
    (only ``text`` is required)."""

    text: str
    type: str
    scope: str
    source: str
    origin: str
    evidence: Evidence
    effective_at: str
    fact_key: str
    idempotency_key: str
    no_dedup: bool
    allow_secret: bool
    replaces: str
    contradicts: str
    expires_at: str
    ttl: str
    no_expiry: bool


def _given(**fields: Any) -> dict[str, Any]:
    """The fields that were given: ``None`` and ``False`` are the server's defaults."""
    return {k: v for k, v in fields.items() if v is not None and v is not False}


def _path(value: str) -> str:
    return quote(value, safe="")


def _problem(response: httpx.Response) -> MemledgerError:
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if not isinstance(problem, dict):
        problem = None
    return error_for(response.status_code, problem, f"HTTP {response.status_code}: {response.text[:200]}")


def _seq_of(line: str) -> int | None:
    seq = jsonlib.loads(line).get("seq")
    return seq if isinstance(seq, int) else None


class AsyncMemledger:
    """A client of the store's server.

    ``AsyncMemledger()`` finds the local store's server on its Unix socket
    (``<store>/memledger.sock``; the store directory as the CLI finds it: ``dir=``,
    ``$MEMLEDGER_DIR``, …) and acts as the store's owner, or as the principal of ``token=`` /
    ``$MEMLEDGER_TOKEN``. ``AsyncMemledger(url="http://127.0.0.1:7878", token=…)`` talks HTTP
    (``$MEMLEDGER_URL``; without a token, the store's own token file is used when readable).

    Every method returns the typed document of the command's ``--json`` output and raises a
    :class:`~memledger.errors.MemledgerError` subclass named for the CLI's exit code otherwise.
    A request is retried (``retries`` times, on a transport error or a 503) only when it carries
    an idempotency key: a save with ``idempotency_key=``, or a batch whose every memory has one.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        dir: str | os.PathLike[str] | None = None,
        actor: str | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        endpoint = _endpoint(url, token, dir)
        headers = {"user-agent": f"memledger-python/{_VERSION}"}
        if endpoint.token:
            headers["authorization"] = f"Bearer {endpoint.token}"
        if actor:
            headers["memledger-actor"] = actor
        if transport is None and endpoint.uds is not None:
            transport = httpx.AsyncHTTPTransport(uds=endpoint.uds)
        self.where = endpoint.uds or endpoint.base_url
        self.retries = retries
        self._http = httpx.AsyncClient(
            base_url=endpoint.base_url, headers=headers, timeout=timeout, transport=transport
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemledger:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # The transport.

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        retry: bool = False,
    ) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    method, path, params=params, json=json, content=content, headers=headers
                )
            except httpx.TransportError as e:
                if retry and attempt < self.retries:
                    attempt += 1
                    await asyncio.sleep(0.05 * 2**attempt)
                    continue
                if isinstance(e, httpx.ConnectError):
                    raise NoServer(f"no memledger server answers at {self.where}: {e}") from e
                raise Failure(f"the request to {self.where} failed: {e!r}") from e
            if response.status_code >= 400:
                error = _problem(response)
                if isinstance(error, Unavailable) and retry and attempt < self.retries:
                    attempt += 1
                    await asyncio.sleep(0.05 * 2**attempt)
                    continue
                raise error
            return response

    async def _doc(self, model: type[_M], method: str, path: str, **kw: Any) -> _M:
        response = await self._request(method, path, **kw)
        return model.model_validate_json(response.content)

    async def _lines(self, method: str, path: str, **kw: Any) -> _List[dict[str, Any]]:
        response = await self._request(method, path, **kw)
        return [jsonlib.loads(line) for line in response.text.splitlines() if line.strip()]

    # Writing.

    async def save(
        self,
        text: str,
        *,
        type: str | None = None,
        scope: str | None = None,
        source: str | None = None,
        origin: str | None = None,
        evidence: Evidence | None = None,
        effective_at: str | None = None,
        fact_key: str | None = None,
        idempotency_key: str | None = None,
        no_dedup: bool = False,
        allow_secret: bool = False,
        replaces: str | None = None,
        contradicts: str | None = None,
        expires_at: str | None = None,
        ttl: str | None = None,
        no_expiry: bool = False,
    ) -> m.SaveResult:
        """Save one memory: ``.outcome`` (added, merged, versioned, conflict, historical,
        proposed), ``.memory_id``, ``.conflict_id``, ``.related`` (what it was compared with and
        left standing). ``source`` is its authority (``stated``, ``policy``, ``inferred``,
        ``imported``); default: the caller's in the scope. ``replaces`` / ``contradicts``: your
        own judgement that it replaces (is the next version of) or contradicts that memory.
        ``expires_at`` (RFC 3339) or ``ttl`` (``"30m"``, ``"14d"``): when it stops being true;
        the same text saved with another expiry (or ``no_expiry``) renews or clears it."""
        body = _given(
            text=text,
            type=type,
            scope=scope,
            source=source,
            origin=origin,
            evidence=evidence,
            effective_at=effective_at,
            fact_key=fact_key,
            idempotency_key=idempotency_key,
            no_dedup=no_dedup,
            allow_secret=allow_secret,
            replaces=replaces,
            contradicts=contradicts,
            expires_at=expires_at,
            ttl=ttl,
            no_expiry=no_expiry,
        )
        return await self._doc(m.SaveResult, "POST", "/v1/memories", json=body, retry=idempotency_key is not None)

    async def save_many(self, memories: Iterable[SaveRequest]) -> _List[m.SaveResult | m.BatchLineError]:
        """Save many memories in one request, in order: one result per memory, a
        :class:`~memledger.models.BatchLineError` for each refused one (the rest go on)."""
        batch = [_given(**memory) for memory in memories]
        retry = bool(batch) and all(memory.get("idempotency_key") for memory in batch)
        lines = await self._lines("POST", "/v1/memories/batch", json={"memories": batch}, retry=retry)
        return [
            m.BatchLineError.model_validate(line) if "error" in line else m.SaveResult.model_validate(line)
            for line in lines
        ]

    async def update(
        self,
        id: str,
        text: str | None = None,
        *,
        expect_version: int | None = None,
        expires_at: str | None = None,
        ttl: str | None = None,
        no_expiry: bool = False,
    ) -> m.UpdateResult:
        """A new version of a memory, unconditionally; with ``expect_version``, only if the
        belief is still at that version (else :class:`~memledger.errors.Conflict`). Without a
        ``text`` it keeps its text and only its expiry changes (``expires_at``, ``ttl``,
        ``no_expiry``); an update that names no expiry keeps the current one."""
        body = _given(text=text, expect_version=expect_version, expires_at=expires_at, ttl=ttl, no_expiry=no_expiry)
        return await self._doc(m.UpdateResult, "POST", f"/v1/memories/{_path(id)}/update", json=body)

    async def forget(self, id: str, *, reason: str | None = None) -> m.ForgetResult:
        """Retire a belief: out of recall, kept in history."""
        return await self._doc(m.ForgetResult, "POST", f"/v1/memories/{_path(id)}/forget", json=_given(reason=reason))

    async def erase(
        self, id: str, *, lineage: bool = False, reason: str | None = None, dry_run: bool = False
    ) -> m.EraseResult:
        """Erase a memory's text everywhere (only a server started with ``--allow-erase`` does;
        a dry run is always answered)."""
        body = _given(lineage=lineage, reason=reason, dry_run=dry_run)
        return await self._doc(m.EraseResult, "POST", f"/v1/memories/{_path(id)}/erase", json=body)

    # Reading.

    async def show(self, id: str, *, as_of: str | int | None = None, valid_at: str | None = None) -> m.Memory:
        params = _given(as_of=as_of, valid_at=valid_at)
        return await self._doc(m.Memory, "GET", f"/v1/memories/{_path(id)}", params=params)

    async def list(
        self,
        *,
        type: str | None = None,
        scope: str | None = None,
        fact_key: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        as_of: str | int | None = None,
        valid_at: str | None = None,
    ) -> m.MemoryList:
        """Memories, newest first (``status`` default ``active``; ``all`` for every one).
        ``scope`` may be a pattern ending in ``*``; ``fact_key`` keeps the memories saved with it."""
        params = _given(
            type=type, scope=scope, fact_key=fact_key, status=status, limit=limit, as_of=as_of, valid_at=valid_at
        )
        return await self._doc(m.MemoryList, "GET", "/v1/memories", params=params)

    async def recall(
        self,
        query: str,
        *,
        type: str | None = None,
        scope: str | None = None,
        limit: int | None = None,
        as_of: str | int | None = None,
        valid_at: str | None = None,
    ) -> m.RecallResult:
        """Active memories for a question, best first: ``.results``, ``.notice`` (the conflict
        notice, else None) and ``.fenced`` (the texts fenced as recorded data, for a prompt)."""
        body = _given(
            query=query,
            type=type,
            scope=scope,
            limit=limit,
            as_of=None if as_of is None else str(as_of),
            valid_at=valid_at,
        )
        return await self._doc(m.RecallResult, "POST", "/v1/recall", json=body)

    async def history(self, id: str, *, as_of: str | int | None = None, valid_at: str | None = None) -> m.History:
        """Every version of the belief of any of its versions' ids, newest first."""
        params = _given(as_of=as_of, valid_at=valid_at)
        return await self._doc(m.History, "GET", f"/v1/memories/{_path(id)}/history", params=params)

    async def why(self, id: str, other: str | None = None) -> m.Why:
        """Every classification that involved this memory (or this pair), dropped ones too."""
        params = _given(other=other)
        return await self._doc(m.Why, "GET", f"/v1/memories/{_path(id)}/why", params=params)

    # Conflicts.

    async def conflicts(self, *, status: str | None = None, as_of: str | int | None = None) -> m.ConflictList:
        """The conflict queue (``status``: pending by default, resolved or all)."""
        params = _given(status=status, as_of=as_of)
        return await self._doc(m.ConflictList, "GET", "/v1/conflicts", params=params)

    async def conflict(self, id: str) -> m.ConflictRecord:
        return await self._doc(m.ConflictRecord, "GET", f"/v1/conflicts/{_path(id)}")

    async def resolve(
        self, id: str, action: m.Action, *, merged_text: str | None = None, note: str | None = None
    ) -> m.ResolveResult:
        """Decide a conflict: ``keep_new``, ``keep_existing``, ``keep_both``, ``merge`` (with
        ``merged_text``), or for a proposal ``accept`` / ``reject``."""
        body = _given(action=action, merged_text=merged_text, note=note)
        return await self._doc(m.ResolveResult, "POST", f"/v1/conflicts/{_path(id)}/resolve", json=body)

    async def accept(self, id: str, *, note: str | None = None) -> m.ResolveResult:
        """Accept a proposal: it becomes current."""
        return await self.resolve(id, "accept", note=note)

    async def reject(self, id: str, *, note: str | None = None) -> m.ResolveResult:
        """Reject a proposal: it never becomes current."""
        return await self.resolve(id, "reject", note=note)

    async def revert(self, id: str) -> m.ResolveResult:
        """Undo a conflict's resolution (a compensating event): it is pending again."""
        return await self._doc(m.ResolveResult, "POST", f"/v1/conflicts/{_path(id)}/revert")

    async def auto(self, *, dry_run: bool = False) -> m.Report:
        """The LLM judge over the pending conflicts (needs a model: else BadInput)."""
        return await self._doc(m.Report, "POST", "/v1/conflicts/auto", json=_given(dry_run=dry_run))

    async def scan(
        self,
        *,
        max_pairs: int | None = None,
        min_confidence: float | None = None,
        scope: str | None = None,
        dry_run: bool = False,
    ) -> m.Report:
        """The contradiction scan over stored memories."""
        body = _given(max_pairs=max_pairs, min_confidence=min_confidence, scope=scope, dry_run=dry_run)
        return await self._doc(m.Report, "POST", "/v1/conflicts/scan", json=body)

    async def open_conflict(self, a: str, b: str, *, note: str | None = None) -> m.OpenResult:
        """Open a conflict by hand between two active memories of one scope."""
        return await self._doc(m.OpenResult, "POST", "/v1/conflicts/open", json=_given(a=a, b=b, note=note))

    async def embed(self, *, dry_run: bool = False) -> m.Report:
        """Vectors for the active memories that have none (needs an embedder: else BadInput)."""
        return await self._doc(m.Report, "POST", "/v1/embed", json=_given(dry_run=dry_run))

    # The ledger.

    async def log(
        self, *, since: int | None = None, limit: int | None = None, memory: str | None = None, by: str | None = None
    ) -> _List[m.Event]:
        """Events from ``since`` (default 1), at most ``limit`` (default 1000); of one memory,
        or appended by one principal."""
        params = _given(since=since, limit=limit, memory=memory, by=by)
        return [m.Event.model_validate(line) for line in await self._lines("GET", "/v1/log", params=params)]

    async def export_lines(self, *, since: int = 1) -> AsyncIterator[str]:
        """The event stream from ``since`` as it arrives, one JSON line at a time (without its
        newline), as ``memledger export`` prints it. Only whole lines are yielded: a stream cut
        short raises :class:`~memledger.errors.ExportInterrupted` with the last seq received."""
        last_seq: int | None = None
        try:
            async with self._http.stream("GET", "/v1/export", params={"since": since}) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _problem(response)
                pending = b""
                async for chunk in response.aiter_bytes():
                    pending += chunk
                    if b"\n" not in chunk:
                        continue
                    *whole, pending = pending.split(b"\n")
                    for raw in whole:
                        if raw.strip():
                            line = raw.decode()
                            last_seq = _seq_of(line)
                            yield line
                if pending.strip():
                    raise ExportInterrupted(
                        f"the export from {self.where} ended inside an event (after seq {last_seq})",
                        last_seq=last_seq,
                    )
        except httpx.TransportError as e:
            raise ExportInterrupted(
                f"the export from {self.where} stopped after seq {last_seq}: {e!r}", last_seq=last_seq
            ) from e

    async def export(self, *, since: int = 1) -> AsyncIterator[m.Event]:
        """The event stream from ``since``, streamed: each event as it arrives (see
        :meth:`export_lines`). Stop iterating at any time: the request is closed."""
        async for line in self.export_lines(since=since):
            yield m.Event.model_validate_json(line)

    async def import_events(self, stream: bytes | str, *, allow_secret: bool = False) -> m.ImportResult:
        """Append an exported stream (JSON Lines) to the store: empty, or sharing its prefix."""
        content = stream.encode() if isinstance(stream, str) else bytes(stream)
        params = _given(allow_secret=allow_secret)
        headers = {"content-type": "application/x-ndjson"}
        return await self._doc(
            m.ImportResult, "POST", "/v1/import", params=params, content=content, headers=headers
        )

    async def verify(self) -> m.VerifyReport:
        """The hash chain and the views checked; ``.ok`` False says where it is wrong."""
        return await self._doc(m.VerifyReport, "GET", "/v1/verify")

    async def stats(self) -> m.Stats:
        return await self._doc(m.Stats, "GET", "/v1/stats")

    async def scopes(self) -> m.Scopes:
        """The scopes the caller may read that hold active memories, and how many each."""
        return await self._doc(m.Scopes, "GET", "/v1/scopes")

    async def usage(self) -> m.Usage:
        """The chat model's tokens today and this month, and the daily budget."""
        return await self._doc(m.Usage, "GET", "/v1/usage")

    async def rebuild(self, *, view: str | None = None) -> m.RebuildResult:
        """Drop and replay the views (or one)."""
        return await self._doc(m.RebuildResult, "POST", "/v1/rebuild", json=_given(view=view))

    async def status(self) -> m.ServerStatus:
        """Who serves, since when, and the ledger's head."""
        return await self._doc(m.ServerStatus, "GET", "/v1/status")

    # The review page's reads.

    async def review_conflicts(
        self, *, status: str | None = None, offset: int | None = None, limit: int | None = None
    ) -> m.ReviewConflicts:
        params = _given(status=status, offset=offset, limit=limit)
        return await self._doc(m.ReviewConflicts, "GET", "/v1/review/conflicts", params=params)

    async def events(
        self, *, before: int | None = None, limit: int | None = None, type: str | None = None, actor: str | None = None
    ) -> m.EventsPage:
        params = _given(before=before, limit=limit, type=type, actor=actor)
        return await self._doc(m.EventsPage, "GET", "/v1/events", params=params)

    async def near_misses(
        self, *, before: int | None = None, limit: int | None = None, kind: str | None = None, scope: str | None = None
    ) -> m.NearMisses:
        params = _given(before=before, limit=limit, kind=kind, scope=scope)
        return await self._doc(m.NearMisses, "GET", "/v1/near-misses", params=params)

    async def timeline(self) -> m.Timeline:
        return await self._doc(m.Timeline, "GET", "/v1/timeline")

    # Principals.

    async def whoami(self) -> m.Whoami:
        """The caller's principal, its own scope and grants."""
        return await self._doc(m.Whoami, "GET", "/v1/whoami")

    async def principals(self) -> m.PrincipalList:
        return await self._doc(m.PrincipalList, "GET", "/v1/principals")

    async def add_principal(self, name: str, kind: str, *, grants: Iterable[str] = ()) -> m.PrincipalChange:
        """A new principal (``kind``: person, agent or service) with grants
        ``SCOPE=VERB,…[@AUTHORITY]``; ``.token`` is its bearer token, shown this once."""
        body = {"name": name, "kind": kind, "grants": _List(grants)}
        return await self._doc(m.PrincipalChange, "POST", "/v1/principals", json=body)

    async def grant(self, name: str, grants: Iterable[str]) -> m.PrincipalChange:
        body = {"grants": _List(grants)}
        return await self._doc(m.PrincipalChange, "POST", f"/v1/principals/{_path(name)}/grant", json=body)

    async def revoke(
        self, name: str, *, grants: Iterable[str] = (), reason: str | None = None
    ) -> m.PrincipalChange:
        """Take back the grants of these scope patterns, or (none named) revoke the principal."""
        body = _given(grants=_List(grants) or None, reason=reason)
        return await self._doc(m.PrincipalChange, "POST", f"/v1/principals/{_path(name)}/revoke", json=body)

    async def rotate(self, name: str) -> m.PrincipalChange:
        """A new token for the principal (``.token``); the old one stops working at once."""
        return await self._doc(m.PrincipalChange, "POST", f"/v1/principals/{_path(name)}/rotate")

    # The CLI's own transport.

    async def call(self, call: Mapping[str, Any], *, json: bool = True, actor: str | None = None) -> m.Reply:
        """Run any store command as the CLI would (``{"command": "stats"}``): its answer's JSON
        document in ``stdout`` (``json`` is kept for compatibility: the CLI renders human text
        itself) and its exit code, never an exception for a refusal."""
        body = _given(call=dict(call), json=json, actor=actor)
        return await self._doc(m.Reply, "POST", "/v1/call", json=body)
