"""Errors, one class per exit code of the CLI (docs/cli.md), each carrying the server's
problem+json document (RFC 9457): ``status``, ``title``, ``detail``, ``exit_code``, ``hint`` and,
for a refusal, the ``verb`` and ``scope`` the caller lacked.

A refused request wrote nothing (exit codes 2, 3, 4 and 5 promise it); a :class:`Failure` may
have, which is why only requests with an idempotency key are retried.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MemledgerError",
    "Failure",
    "BadInput",
    "Conflict",
    "NotFound",
    "NotPermitted",
    "Unauthenticated",
    "Unavailable",
    "NoServer",
    "ExportInterrupted",
    "error_for",
]


class MemledgerError(Exception):
    """Anything memledger refused or failed to do. ``problem`` is the problem+json document."""

    exit_code: int = 1

    def __init__(self, detail: str, *, status: int | None = None, problem: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.problem: dict[str, Any] = dict(problem or {})
        code = self.problem.get("exit_code")
        if isinstance(code, int):
            self.exit_code = code

    @property
    def title(self) -> str | None:
        title = self.problem.get("title")
        return title if isinstance(title, str) else None

    @property
    def hint(self) -> str | None:
        hint = self.problem.get("hint")
        return hint if isinstance(hint, str) else None

    def __str__(self) -> str:
        return f"{self.detail} (hint: {self.hint})" if self.hint else self.detail


class Failure(MemledgerError):
    """Exit 1: a runtime or storage error (HTTP 500), or no answer at all."""

    exit_code = 1


class BadInput(MemledgerError):
    """Exit 2: bad input or usage (HTTP 400, 413 or 422); nothing was written."""

    exit_code = 2


class Conflict(MemledgerError):
    """Exit 3: the state is not what the caller expected (an expected revision, a conflict
    already resolved; HTTP 409); nothing was written."""

    exit_code = 3


class NotFound(MemledgerError):
    """Exit 4: no such memory, conflict or principal (HTTP 404)."""

    exit_code = 4


class NotPermitted(MemledgerError):
    """Exit 5: the caller's grants do not reach (HTTP 403); nothing was written. ``verb`` and
    ``scope`` say what it lacked, where the server said."""

    exit_code = 5

    @property
    def verb(self) -> str | None:
        verb = self.problem.get("verb")
        return verb if isinstance(verb, str) else None

    @property
    def scope(self) -> str | None:
        scope = self.problem.get("scope")
        return scope if isinstance(scope, str) else None


class Unauthenticated(NotPermitted):
    """HTTP 401: no token, or one that is wrong, rotated or revoked."""


class Unavailable(Failure):
    """HTTP 503: another memledger process holds the store, for now."""


class NoServer(Failure):
    """No memledger server answers where the client looked (the store's socket, or the URL)."""


class ExportInterrupted(Failure):
    """A streamed export stopped before its end. Every event yielded before it was whole;
    ``last_seq`` is the seq of the last one (``export(since=last_seq + 1)`` resumes)."""

    def __init__(self, detail: str, *, last_seq: int | None) -> None:
        super().__init__(detail)
        self.last_seq = last_seq


_BY_EXIT: dict[int, type[MemledgerError]] = {1: Failure, 2: BadInput, 3: Conflict, 4: NotFound, 5: NotPermitted}


def error_for(status: int, problem: dict[str, Any] | None, fallback: str) -> MemledgerError:
    """The exception of an HTTP error answer: by its status, then by its exit code."""
    problem = problem or {}
    detail = problem.get("detail")
    detail = detail if isinstance(detail, str) and detail else fallback
    cls: type[MemledgerError]
    if status == 401:
        cls = Unauthenticated
    elif status == 503:
        cls = Unavailable
    else:
        code = problem.get("exit_code")
        if isinstance(code, int) and code in _BY_EXIT:
            cls = _BY_EXIT[code]
        elif status in (400, 413, 422):
            cls = BadInput
        elif status == 409:
            cls = Conflict
        elif status == 404:
            cls = NotFound
        elif status == 403:
            cls = NotPermitted
        else:
            cls = Failure
    return cls(detail, status=status, problem=problem)
