"""memledger for Python: the client of a running ``memledger serve``.

    from memledger import Memledger

    m = Memledger()                     # the local store's server, through its socket
    saved = m.save("the staging db runs on Postgres 16", scope="team:infra")
    hits = m.recall("which postgres does staging run", scope="team:infra")
    print(hits.notice, [h.text for h in hits.results])

``AsyncMemledger`` is the same for asyncio. ``memledger.langgraph.MemledgerStore`` is a
LangGraph ``BaseStore`` over either. Errors: :mod:`memledger.errors`.
"""

from . import errors, models
from ._async_client import AsyncMemledger, Evidence, SaveRequest
from ._sync_client import Memledger
from .errors import (
    BadInput,
    Conflict,
    ExportInterrupted,
    Failure,
    MemledgerError,
    NoServer,
    NotFound,
    NotPermitted,
    Unauthenticated,
    Unavailable,
)
from .models import CONFLICT_NOTICE

__version__ = "0.1.0"

__all__ = [
    "Memledger",
    "AsyncMemledger",
    "SaveRequest",
    "Evidence",
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
    "CONFLICT_NOTICE",
    "errors",
    "models",
]
