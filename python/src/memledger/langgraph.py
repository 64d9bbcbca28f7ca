"""``MemledgerStore``: LangGraph's long-term memory (``langgraph.store.base.BaseStore``) kept in
memledger, so what LangGraph agents and LangMem's memory tools write is classified, versioned,
never silently overwritten, and explainable.

How the store's words map onto memledger's:

- a **namespace** is a scope, its labels joined with ``:`` (``("team", "billing")`` is the scope
  ``team:billing``, which grants such as ``team:*`` cover); a label may not hold ``:`` or ``*``;
- a **key** is a fact key; a **put** of a value is a save with that fact key, so a new value
  on an existing key is a new version of that fact: it goes through classification and, when it
  contradicts what is stored, opens a conflict (both stay active) rather than overwrite;
  a value that repeats another key's memory word for word is merged into that memory (memledger
  keeps one belief per claim), so it is found under the first key;
- a **put of None** (``delete``) forgets every active memory of that key (kept in history);
- a **search** with a query is recall (best first, its score on each item); without one, the
  namespace's memories newest first; LangGraph's ``filter`` (exact values, ``$eq``, ``$ne``,
  ``$gt``, ``$gte``, ``$lt``, ``$lte``) and ``limit``/``offset`` apply to the values;
- **list_namespaces** lists the scopes that hold active memories;
- a **ttl** (minutes, on ``put`` or as the store's ``default_ttl``) is the memory's expiry: from
  then every read leaves it out (it reads ``expired`` in memledger, kept in history; nothing is
  deleted, so there is nothing to sweep); a ``put`` without one clears it. With
  ``refresh_on_read`` (LangGraph's default) or ``refresh_ttl=True``, a ``get`` or ``search`` that
  returns a memory with a ttl renews it by that ttl: an update, the belief's next version with the
  same text. An expired memory is never renewed by a read.

Reads and expiries are at the store's ``clock`` (default: the server's clock): a store given a
clock reads at its time (``valid_at``) and computes expiries from it, so a program (or a test) can
say what time it is.

A value is stored as the memory's text: ``{"content": "…"}`` (LangMem's memories) as the content
itself, any other value as its JSON. Items are :class:`MemledgerItem` (and
:class:`MemledgerSearchItem`): an ``Item`` that also carries ``memory_id``, ``root_id``,
``version``, ``conflicts_with`` and ``notice`` (the conflict notice when the memory has a pending
conflict). ``created_at`` is when the fact's first version was saved, ``updated_at`` when this
one was. Memories saved without a fact key (by the CLI, say) show up in searches with their
``root_id`` as the key, and ``get`` finds them by it.

Ops of a batch run in order, each seeing the ones before it (a get after a put of the same key
returns what the put saved), and the results come back in the order of the ops.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Callable, Generator, Iterable
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from . import models as m
from ._async_client import AsyncMemledger
from ._sync_client import Memledger
from .errors import Conflict, NotFound

__all__ = ["MemledgerStore", "MemledgerItem", "MemledgerSearchItem", "scope_of", "namespace_of"]

SEPARATOR = ":"
#: As many memories as a read of one scope asks for.
_ALL = 1_000_000
#: recall answers at most this many.
_RECALL_MAX = 100_000
_MEMORY_ID = re.compile(r"[0-9a-f]{32}")

# A step of an op: (client method, args, kwargs); the client's answer is sent back.
_Call = tuple[str, tuple[Any, ...], dict[str, Any]]
_Steps = Generator[_Call, Any, Any]


class MemledgerItem(Item):
    """An ``Item`` with memledger's ids and, where present, the conflict notice."""

    __slots__ = ("memory_id", "root_id", "version", "conflicts_with", "notice")

    def __init__(
        self,
        *,
        value: dict[str, Any],
        key: str,
        namespace: tuple[str, ...],
        created_at: datetime,
        updated_at: datetime,
        memory_id: str,
        root_id: str,
        version: int,
        conflicts_with: list[str],
    ) -> None:
        super().__init__(value=value, key=key, namespace=namespace, created_at=created_at, updated_at=updated_at)
        self.memory_id = memory_id
        self.root_id = root_id
        self.version = version
        self.conflicts_with = conflicts_with
        self.notice = m.CONFLICT_NOTICE if conflicts_with else None

    def dict(self) -> dict[str, Any]:
        d = super().dict()
        d.update(
            memory_id=self.memory_id,
            root_id=self.root_id,
            version=self.version,
            conflicts_with=list(self.conflicts_with),
            notice=self.notice,
        )
        return d


class MemledgerSearchItem(SearchItem):
    """A ``SearchItem`` with memledger's ids and, where present, the conflict notice."""

    __slots__ = ("memory_id", "root_id", "version", "conflicts_with", "notice")

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float | None = None,
        *,
        memory_id: str,
        root_id: str,
        version: int,
        conflicts_with: list[str],
    ) -> None:
        super().__init__(namespace, key, value, created_at, updated_at, score)
        self.memory_id = memory_id
        self.root_id = root_id
        self.version = version
        self.conflicts_with = conflicts_with
        self.notice = m.CONFLICT_NOTICE if conflicts_with else None

    def dict(self) -> dict[str, Any]:
        d = super().dict()
        d.update(
            memory_id=self.memory_id,
            root_id=self.root_id,
            version=self.version,
            conflicts_with=list(self.conflicts_with),
            notice=self.notice,
        )
        return d


def _check_labels(namespace: tuple[str, ...]) -> None:
    for label in namespace:
        if not isinstance(label, str) or not label:
            raise InvalidNamespaceError(f"namespace labels are non-empty strings: {namespace!r}")
        if SEPARATOR in label or "*" in label or "." in label:
            raise InvalidNamespaceError(
                f"namespace label {label!r} holds ':', '*' or '.': memledger joins labels with ':' into a scope, "
                "and '*' makes a scope pattern"
            )
        if label != label.strip() or any(ch.isspace() and ch != " " for ch in label) or "\x00" in label:
            raise InvalidNamespaceError(f"namespace label {label!r} starts or ends with a space, or holds a control")


def scope_of(namespace: tuple[str, ...]) -> str:
    """The scope of a namespace: its labels joined with ``:``."""
    _check_labels(namespace)
    if not namespace:
        raise InvalidNamespaceError("a namespace has at least one label")
    return SEPARATOR.join(namespace)


def namespace_of(scope: str) -> tuple[str, ...]:
    return tuple(scope.split(SEPARATOR))


def _within(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return namespace[: len(prefix)] == prefix


def encode_value(value: dict[str, Any]) -> str:
    """The text a value is saved as: a lone string ``content`` as itself, else its JSON."""
    content = value.get("content")
    if set(value) == {"content"} and isinstance(content, str) and not content.lstrip().startswith("{"):
        return content
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def decode_value(text: str) -> dict[str, Any]:
    """The value of a memory's text (see :func:`encode_value`)."""
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"content": text}


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _rfc3339(value: datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


# LangGraph's filter semantics (as its InMemoryStore applies them).


def _compare(item_value: Any, filter_value: Any) -> bool:
    if isinstance(filter_value, dict):
        if any(k.startswith("$") for k in filter_value):
            return all(_operator(item_value, op, v) for op, v in filter_value.items())
        if not isinstance(item_value, dict):
            return False
        return all(_compare(item_value.get(k), v) for k, v in filter_value.items())
    if isinstance(filter_value, (list, tuple)):
        return (
            isinstance(item_value, (list, tuple))
            and len(item_value) == len(filter_value)
            and all(_compare(a, b) for a, b in zip(item_value, filter_value))
        )
    return bool(item_value == filter_value)


def _operator(value: Any, op: str, expected: Any) -> bool:
    if op == "$eq":
        return bool(value == expected)
    if op == "$ne":
        return bool(value != expected)
    try:
        if op == "$gt":
            return bool(value > expected)
        if op == "$gte":
            return bool(value >= expected)
        if op == "$lt":
            return bool(value < expected)
        if op == "$lte":
            return bool(value <= expected)
    except TypeError:
        return False
    raise ValueError(f"unsupported filter operator: {op}")


def matches(value: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    """Whether a value passes a LangGraph search filter."""
    return not filter or all(_compare(value.get(k), v) for k, v in filter.items())


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path))
    )
    if condition.match_type not in ("prefix", "suffix"):
        raise ValueError(f"unsupported match type: {condition.match_type}")
    return all(p == "*" or k == p for k, p in pairs)


class MemledgerStore(BaseStore):
    """A LangGraph ``BaseStore`` in a memledger store, through a :class:`~memledger.Memledger`
    (for ``batch`` and the sync methods) and/or an :class:`~memledger.AsyncMemledger` (for
    ``abatch``; without one, ``abatch`` runs ``batch`` on a worker thread).

    ``source`` is the authority the store's saves claim (default: the caller's in the scope,
    ``inferred`` for an agent's token); ``type`` the memory type (default ``fact``); ``ttl``
    LangGraph's ``TTLConfig`` (``default_ttl`` in minutes, ``refresh_on_read``); ``clock`` the
    time the store reads at and computes expiries from (default: the server's).
    """

    supports_ttl = True

    def __init__(
        self,
        client: Memledger | AsyncMemledger | None = None,
        *,
        aclient: AsyncMemledger | None = None,
        source: str | None = None,
        type: str | None = None,
        ttl: TTLConfig | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if isinstance(client, AsyncMemledger):
            client, aclient = None, client
        if client is None and aclient is None:
            client = Memledger()
        self.client: Memledger | None = client
        self.aclient: AsyncMemledger | None = aclient
        self.source = source
        self.type = type
        self.ttl_config = ttl
        self.clock = clock
        # A lineage's first version never changes: when each root was saved, by root id.
        self._created: dict[str, datetime] = {}

    # Running an op's steps on a client.

    def _run(self, steps: _Steps) -> Any:
        if self.client is None:
            raise TypeError("MemledgerStore.batch needs a Memledger (this store was given only an AsyncMemledger)")
        answer: Any = None
        error: BaseException | None = None
        while True:
            try:
                name, args, kwargs = steps.throw(error) if error is not None else steps.send(answer)
            except StopIteration as done:
                return done.value
            error = None
            try:
                answer = getattr(self.client, name)(*args, **kwargs)
            except (NotFound, Conflict) as e:
                error = e

    async def _arun(self, steps: _Steps) -> Any:
        assert self.aclient is not None
        answer: Any = None
        error: BaseException | None = None
        while True:
            try:
                name, args, kwargs = steps.throw(error) if error is not None else steps.send(answer)
            except StopIteration as done:
                return done.value
            error = None
            try:
                answer = await getattr(self.aclient, name)(*args, **kwargs)
            except (NotFound, Conflict) as e:
                error = e

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(self._op(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self.aclient is None:
            ops = list(ops)
            return await asyncio.get_running_loop().run_in_executor(None, self.batch, ops)
        return [await self._arun(self._op(op)) for op in ops]

    # Saving with the outcome (BaseStore.put answers None).

    def _ttl(self, ttl: float | None | NotProvided) -> float | None:
        """A put's ttl in minutes: the one given, else the store's ``default_ttl``."""
        if isinstance(ttl, NotProvided):
            return self.ttl_config.get("default_ttl") if self.ttl_config else None
        return ttl

    def save(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> m.SaveResult:
        """``put``, answering what memledger did with it (``.outcome``, ``.conflict_id``)."""
        result: m.SaveResult = self._run(self._put(PutOp(tuple(namespace), key, value, ttl=self._ttl(ttl))))
        return result

    async def asave(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> m.SaveResult:
        if self.aclient is None:
            return await asyncio.get_running_loop().run_in_executor(None, self.save, namespace, key, value, ttl)
        result: m.SaveResult = await self._arun(self._put(PutOp(tuple(namespace), key, value, ttl=self._ttl(ttl))))
        return result

    # Time: what reads ask about, and expiries.

    def _at(self) -> dict[str, Any]:
        """The valid time a read asks about: the store's clock, else the server's."""
        return {"valid_at": _rfc3339(self.clock())} if self.clock is not None else {}

    def _expiry(self, seconds: int) -> dict[str, Any]:
        """An expiry `seconds` from now (the store's clock, else the server's)."""
        fields: dict[str, Any] = {"ttl": f"{seconds}s"}
        if self.clock is not None:
            fields["expires_at"] = _rfc3339(self.clock() + timedelta(seconds=seconds))
        return fields

    def _expiry_of_put(self, ttl: float | None) -> dict[str, Any]:
        if ttl is None:
            return {"no_expiry": True}
        return self._expiry(max(1, round(ttl * 60)))

    def _refresh(self, memory: m.Memory | m.RecallHit) -> _Steps:
        """Renew a memory's expiry by its ttl (a read's refresh): its next version, unless it
        moved meanwhile. The memory's ids as they then stand."""
        if not memory.ttl_seconds or memory.status != "active":
            return memory.memory_id, memory.version
        if self.clock is not None and memory.expires_at is not None:
            if _time(memory.expires_at) >= self.clock() + timedelta(seconds=memory.ttl_seconds):
                # Renewed as far as this refresh would (at this time already): nothing to write.
                return memory.memory_id, memory.version
        try:
            renewed: m.UpdateResult = yield (
                "update",
                (memory.memory_id,),
                {"expect_version": memory.version, **self._expiry(memory.ttl_seconds)},
            )
        except Conflict:
            return memory.memory_id, memory.version
        return renewed.memory_id, renewed.version

    # The ops, as steps.

    def _op(self, op: Op) -> _Steps:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put_op(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown operation: {type(op).__name__}")

    def _created_at(self, memory: m.Memory | m.RecallHit, version: int) -> _Steps:
        if version == 1 or memory.memory_id == memory.root_id:
            return _time(memory.asserted_at)
        created = self._created.get(memory.root_id)
        if created is None:
            root: m.Memory = yield ("show", (memory.root_id,), {})
            created = _time(root.asserted_at)
            self._created[memory.root_id] = created
        return created

    def _item(self, memory: m.Memory) -> _Steps:
        created = yield from self._created_at(memory, memory.version)
        return MemledgerItem(
            value=decode_value(memory.text),
            key=memory.fact_key or memory.root_id,
            namespace=namespace_of(memory.scope),
            created_at=created,
            updated_at=_time(memory.asserted_at),
            memory_id=memory.memory_id,
            root_id=memory.root_id,
            version=memory.version,
            conflicts_with=list(memory.conflicts_with),
        )

    def _active_of_key(self, scope: str, key: str) -> _Steps:
        found: m.MemoryList = yield (
            "list",
            (),
            {"scope": scope, "fact_key": key, "status": "active", "limit": _ALL, **self._at()},
        )
        return found.memories

    def _get(self, op: GetOp) -> _Steps:
        scope = scope_of(op.namespace)
        memories = yield from self._active_of_key(scope, op.key)
        if not memories:
            # A memory saved without a fact key is found by its root id.
            if not _MEMORY_ID.fullmatch(op.key):
                return None
            try:
                memory: m.Memory = yield ("show", (op.key,), self._at())
            except NotFound:
                return None
            if memory.scope != scope or memory.status != "active" or memory.fact_key or memory.root_id != op.key:
                return None
            memories = [memory]
        # Newest first: in a pending conflict both sides are active, and the item is the newest
        # with the conflict notice.
        item: MemledgerItem = yield from self._item(memories[0])
        if op.refresh_ttl:
            item.memory_id, item.version = yield from self._refresh(memories[0])
        return item

    def _put(self, op: PutOp) -> _Steps:
        scope = scope_of(op.namespace)
        if op.value is None:
            memories = yield from self._active_of_key(scope, op.key)
            for memory in memories:
                yield ("forget", (memory.memory_id,), {"reason": "deleted through the LangGraph store"})
            return None
        saved: m.SaveResult = yield (
            "save",
            (encode_value(dict(op.value)),),
            {
                "scope": scope,
                "fact_key": op.key,
                "type": self.type,
                "source": self.source,
                # A retry of this put is answered with what it saved, never saved twice.
                "idempotency_key": f"langgraph-put-{uuid.uuid4().hex}",
                **self._expiry_of_put(op.ttl),
            },
        )
        return saved

    def _put_op(self, op: PutOp) -> _Steps:
        # A put answers None in a batch (BaseStore's contract); `save` answers the outcome.
        yield from self._put(op)
        return None

    def _search(self, op: SearchOp) -> _Steps:
        _check_labels(op.namespace_prefix)
        prefix = tuple(op.namespace_prefix)
        pattern = SEPARATOR.join(prefix) + "*" if prefix else None
        wanted = op.offset + op.limit
        fetch = max(wanted * 2, 20)
        while True:
            if op.query:
                limit = min(fetch, _RECALL_MAX)
                answer: m.RecallResult = yield (
                    "recall",
                    (op.query,),
                    {"scope": pattern, "limit": limit, **self._at()},
                )
                hits: list[Any] = list(answer.results)
                scored = True
            else:
                limit = fetch
                listed: m.MemoryList = yield (
                    "list",
                    (),
                    {"scope": pattern, "status": "active", "limit": limit, **self._at()},
                )
                hits = list(listed.memories)
                scored = False
            kept = [
                h
                for h in hits
                if _within(namespace_of(h.scope), prefix) and matches(decode_value(h.text), op.filter)
            ]
            exhausted = len(hits) < limit or (op.query and limit >= _RECALL_MAX)
            if len(kept) >= wanted or exhausted:
                break
            fetch *= 4
        items = []
        for h in kept[op.offset : wanted]:
            created = yield from self._created_at(h, h.version)
            memory_id, version = (yield from self._refresh(h)) if op.refresh_ttl else (h.memory_id, h.version)
            items.append(
                MemledgerSearchItem(
                    namespace_of(h.scope),
                    h.fact_key or h.root_id,
                    decode_value(h.text),
                    created,
                    _time(h.asserted_at),
                    h.score if scored else None,
                    memory_id=memory_id,
                    root_id=h.root_id,
                    version=version,
                    conflicts_with=list(h.conflicts_with),
                )
            )
        return items

    def _list_namespaces(self, op: ListNamespacesOp) -> _Steps:
        conditions = tuple(op.match_conditions or ())
        for condition in conditions:
            _check_labels(tuple(p for p in condition.path if p != "*"))
        # The scope pattern of a leading prefix condition without wildcards narrows the read.
        pattern = None
        for condition in conditions:
            if condition.match_type == "prefix" and condition.path and "*" not in condition.path:
                pattern = SEPARATOR.join(condition.path) + "*"
                break
        listed: m.MemoryList = yield ("list", (), {"scope": pattern, "status": "active", "limit": _ALL, **self._at()})
        namespaces = {namespace_of(x.scope) for x in listed.memories}
        found = [ns for ns in namespaces if all(_does_match(c, ns) for c in conditions)]
        if op.max_depth is not None:
            found = list({ns[: op.max_depth] for ns in found})
        found.sort()
        return found[op.offset : op.offset + op.limit]
