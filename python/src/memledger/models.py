"""The documents the server answers with: the fields of the CLI's ``--json`` output
(docs/cli.md), as the server's ``/openapi.json`` names them. ``tests/test_contract.py`` holds each
model to its schema in that document, field by field, so the package cannot drift from the
server. More fields are welcome (the contract's objects are open): they are kept, as extra
attributes.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Authority",
    "Outcome",
    "Status",
    "ConflictStatus",
    "Action",
    "Model",
    "SaveResult",
    "BatchLineError",
    "Erased",
    "Evidence",
    "Memory",
    "MemoryList",
    "Scheduled",
    "CoEnriched",
    "RecallHit",
    "RecallResult",
    "Version",
    "History",
    "Decision",
    "Why",
    "UpdateResult",
    "ForgetResult",
    "EraseResult",
    "ConflictSide",
    "ConflictRecord",
    "ConflictList",
    "ResolveResult",
    "OpenResult",
    "VerifyReport",
    "Stats",
    "ScopeCount",
    "Scopes",
    "ImportResult",
    "RebuildResult",
    "Side",
    "Candidate",
    "ReviewConflict",
    "ReviewConflicts",
    "EventsPage",
    "NearMiss",
    "NearMisses",
    "Bucket",
    "Timeline",
    "Whoami",
    "Principal",
    "PrincipalList",
    "PrincipalChange",
    "ServerStatus",
    "Refusal",
    "Reply",
    "Event",
    "Report",
    "CONFLICT_NOTICE",
]

#: How much a memory's word counts, lowest first: a save never supersedes a belief of higher
#: authority; it opens a conflict that records the authority needed to settle it.
Authority = Literal["inferred", "imported", "stated", "policy"]
#: What a save did. ``proposed``: a principal that may only propose saved it.
Outcome = Literal["added", "merged", "versioned", "conflict", "historical", "proposed"]
Status = Literal["active", "scheduled", "stale", "retired", "proposed", "expired"]
ConflictStatus = Literal["pending", "resolved"]
#: A decision on a conflict; ``accept`` and ``reject`` are for proposals.
Action = Literal["keep_new", "keep_existing", "keep_both", "merge", "accept", "reject"]

#: What recall says when a result has a pending conflict (``RecallResult.notice``).
CONFLICT_NOTICE = (
    "Some of these memories conflict with each other. Ask the user which is current instead of asserting either."
)


class Model(BaseModel):
    """A document of the contract: its fields typed, any field beyond them kept."""

    model_config = ConfigDict(extra="allow", frozen=False, populate_by_name=True)


class Related(Model):
    """A memory a save was compared with and left standing: for the caller to judge, and to
    declare (``replaces=``, ``contradicts=``) when it knows the new memory changes it."""

    memory_id: str
    text: str
    recorded_at: str
    score: float
    cosine: float | None = None
    gate: str
    relation: str


class SaveResult(Model):
    """``save``: what the save did. ``conflict_id`` when it opened a conflict (or a proposal);
    ``related``: the memories it was compared with and left standing, best first."""

    outcome: Outcome
    memory_id: str
    root_id: str
    version: int
    conflict_id: str | None = None
    replayed: bool
    seqs: list[int]
    settled_by_effective_time: bool
    private_spans_removed: int
    co_enriches: list[str]
    merge_proposal: str | None = None
    source: Authority
    needs_authority: Authority | None = None
    principal: str
    supersedes: list[str]
    related: list[Related]
    expires_at: str | None = None


class BatchLineError(Model):
    """One memory of a batch that was refused (nothing of it written); ``line`` counts from 1."""

    line: int
    error: str


class Erased(Model):
    """An erasure that blanked a text: its event, when, and by whom."""

    seq: int
    at: str
    by: str


class Evidence(Model):
    """Where in a transcript a memory was said (``import sessions``)."""

    agent: str
    session: str | None = None
    file: str
    first_line: int
    last_line: int
    message_ids: list[str]
    excerpt: str
    observed_at: str | None = None


class Memory(Model):
    """``show``, and each of ``list``'s memories."""

    memory_id: str
    root_id: str
    version: int
    status: Status
    type: str
    scope: str
    text: str
    source: str | None = None
    fact_key: str | None = None
    asserted_at: str
    stale_since: str | None = None
    effective_at: str | None = None
    cause: str
    conflicts_with: list[str]
    conflicts: list[str]
    merged_count: int
    retired_reason: str | None = None
    valid_from: str
    valid_to: str | None = None
    sources: list[str]
    independent_sources: int
    authority: Authority
    principal: str
    expires_at: str | None = None
    ttl_seconds: int | None = None
    erased: Erased | None = None
    co_enriches: list[str]
    evidence: Evidence | None = None


class MemoryList(Model):
    """``list``: newest first."""

    memories: list[Memory]


class Scheduled(Model):
    """A change of a belief that takes effect after the valid time asked about."""

    memory_id: str
    version: int
    text: str
    valid_from: str


class CoEnriched(Model):
    """An active memory linked ``co_enriches`` with a recall hit, returned beside it."""

    memory_id: str
    root_id: str
    text: str


class RecallHit(Model):
    memory_id: str
    root_id: str
    version: int
    text: str
    type: str
    scope: str
    fact_key: str | None = None
    score: float
    asserted_at: str
    conflicts_with: list[str]
    bm25: float | None = None
    cosine: float | None = None
    rerank: float | None = None
    status: Status
    valid_from: str
    valid_to: str | None = None
    expires_at: str | None = None
    ttl_seconds: int | None = None
    scheduled: list[Scheduled]
    co_enrichments: list[CoEnriched]
    authority: Authority
    unconfirmed: bool


class RecallResult(Model):
    """``recall``: best first. ``notice`` is :data:`CONFLICT_NOTICE` when a result has a pending
    conflict; ``fenced`` holds the results' texts inside a fence of this answer's own, to hand a
    model as recorded data, never as instructions."""

    results: list[RecallHit]
    notice: str | None = None
    ranking: str
    embedding_error: str | None = None
    rerank_error: str | None = None
    fenced: str


class Version(Model):
    memory_id: str
    version: int
    text: str
    status: Status
    asserted_at: str
    stale_since: str | None = None
    effective_at: str | None = None
    cause: str
    valid_from: str
    valid_to: str | None = None
    principal: str
    authority: Authority
    expires_at: str | None = None
    erased: Erased | None = None


class History(Model):
    """``history``: every version of a belief, newest first."""

    root_id: str
    versions: list[Version]
    edges: list[dict[str, Any]]


class Decision(Model):
    """One classification: a pair examined, whether flagged or dropped, with its scores."""

    seq: int
    incoming: str
    candidate: str
    method: str
    scores: dict[str, Any]
    relation: str
    gate: str
    thresholds: dict[str, Any]
    reason: str
    outcome: str
    principal: str
    actor: str
    recorded_at: str
    model: dict[str, Any] | None = None
    erased: Erased | None = None


class Why(Model):
    """``why``: every classification that involved a memory (or a pair)."""

    memory_id: str
    decisions: list[Decision]
    expires_at: str | None = None
    expired: bool


class UpdateResult(Model):
    memory_id: str
    root_id: str
    version: int
    replaces: str
    seqs: list[int]


class ForgetResult(Model):
    memory_id: str
    root_id: str
    seqs: list[int]


class EraseResult(Model):
    """What was erased (or, for a dry run, would be)."""

    dry_run: bool
    erasure_seq: int | None = None
    memories: list[str]
    content_hashes: list[str]
    conflicts: list[str]
    edges: list[dict[str, Any]]
    events: list[int]
    exports_since: list[dict[str, Any]]


class ConflictSide(Model):
    """A memory on one side of a conflict: its id, and (unless ``withheld``) what it says."""

    memory_id: str
    withheld: bool | None = None
    text: str | None = None
    status: Status | None = None
    version: int | None = None
    scope: str | None = None
    authority: Authority | None = None
    principal: str | None = None
    file: str | None = None
    first_line: int | None = None
    last_line: int | None = None
    excerpt: str | None = None
    observed_at: str | None = None
    reason: str | None = None


class ConflictRecord(Model):
    """One conflict. ``kind``: ``contradiction``, ``authority`` (a save would have superseded a
    belief of higher authority), ``proposal`` or ``merge_proposal``; ``needs_authority`` is the
    authority a resolution needs; ``withheld`` the sides the caller may not read (ids only)."""

    conflict_id: str
    status: ConflictStatus
    incoming: str
    candidates: list[str]
    reasons: list[str]
    incoming_memory: ConflictSide
    candidate_memories: list[ConflictSide]
    opened_at: str
    opened_seq: int
    opened_by: str
    proposal: dict[str, Any] | None = None
    resolution: dict[str, Any] | None = None
    resolutions: list[dict[str, Any]]
    reverts: list[dict[str, Any]]
    kind: str
    needs_authority: Authority
    proposed_by: str | None = None
    withheld: list[str]


class ConflictList(Model):
    conflicts: list[ConflictRecord]


class ResolveResult(Model):
    """``conflicts resolve`` and ``conflicts revert``."""

    conflict_id: str
    status: str
    action: str | None = None
    effects: list[dict[str, Any]]
    merged_memory_id: str | None = None
    seqs: list[int]


class OpenResult(Model):
    """``conflicts open``: a conflict by a person's word."""

    conflict_id: str
    seqs: list[int]


class VerifyReport(Model):
    ok: bool
    events: int
    head_seq: int
    head_hash: str
    first_bad_seq: int | None = None
    problem: str | None = None
    erased_events: int
    erased_unprovable: int
    signed: bool
    signed_through: int | None = None
    checkpoints: int
    keys: list[str]
    views_consistent: bool
    inconsistent_views: list[str]


class LastVerify(Model):
    at: str
    ok: bool
    first_bad_seq: int | None = None
    problem: str | None = None


class Stats(Model):
    events: int
    memories: dict[str, int]
    by_type: dict[str, int]
    conflicts: dict[str, int]
    merged_observations: int
    #: The store's last verification (`memledger verify`), if it was ever verified.
    last_verify: LastVerify | None = None


class ScopeCount(Model):
    scope: str
    #: How many active memories the scope holds.
    memories: int


class Scopes(Model):
    #: Each scope the caller may read that holds active memories, by name.
    scopes: list[ScopeCount]


class Tokens(Model):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    calls: int


class PrincipalTokens(Model):
    principal: str
    today: Tokens
    month: Tokens


class Usage(Model):
    """The chat model's tokens counted in the store (``memledger usage``), by UTC day."""

    day: str
    month: str
    today: Tokens
    this_month: Tokens
    by_principal: list[PrincipalTokens]
    yours: PrincipalTokens
    daily_budget: int | None = None


class ImportResult(Model):
    read: int
    already_present: int
    appended: int
    head_seq: int


class RebuildResult(Model):
    events: int
    views: list[str]
    elapsed_ms: int


class Side(Model):
    """One memory beside another on the review page."""

    memory_id: str
    root_id: str
    version: int
    status: Status
    type: str
    scope: str
    fact_key: str | None = None
    text: str
    asserted_at: str
    saved_by: str | None = None
    saved_seq: int
    principal: str
    authority: Authority


class Candidate(Model):
    memory: Side | None = None
    memory_id: str
    reason: str
    withheld: bool


class ReviewConflict(Model):
    conflict_id: str
    status: ConflictStatus
    scope: str
    fact_key: str | None = None
    opened_at: str
    opened_seq: int
    incoming: Side | None = None
    candidates: list[Candidate]
    gate: str | None = None
    method: str | None = None
    resolution: dict[str, Any] | None = None
    resolutions: int
    reverts: list[dict[str, Any]]
    kind: str
    needs_authority: Authority
    proposed_by: str | None = None
    incoming_withheld: bool
    incoming_id: str


class ReviewConflicts(Model):
    """A page of the conflict queue: pending first, grouped by scope and fact key."""

    conflicts: list[ReviewConflict]
    total: int
    pending: int
    offset: int


class EventsPage(Model):
    """A page of events, newest first; ``next_before`` continues below (None: the start)."""

    items: list[dict[str, Any]]
    next_before: int | None = None
    scanned: int
    head_seq: int


class NearMiss(Model):
    seq: int
    recorded_at: str
    incoming: Side | None = None
    candidate: Side | None = None
    method: str
    relation: str
    gate: str
    reason: str
    outcome: str
    scores: dict[str, Any]
    thresholds: dict[str, Any]
    candidate_withheld: bool
    candidate_id: str


class NearMisses(Model):
    items: list[NearMiss]
    next_before: int | None = None
    scanned: int
    head_seq: int


class Bucket(Model):
    start: str
    events: dict[str, Any]
    beliefs: int
    pending_conflicts: int


class Timeline(Model):
    bucket: str
    buckets: list[Bucket]
    save_outcomes: dict[str, Any]
    conflicts_by_scope: dict[str, Any]
    events: int


class Whoami(Model):
    """The caller's principal: ``own_scope`` is where its saves go when none is named."""

    principal: str
    kind: str
    own_scope: str
    grants: list[str]
    owner: bool
    actor: str


class Principal(Model):
    """A principal (never its token)."""

    principal: str
    kind: str
    grants: list[str]
    own_scope: str
    added_at: str
    added_by: str
    rotated_at: str | None = None
    revoked: bool
    revoked_at: str | None = None
    revoked_by: str | None = None
    revoked_reason: str | None = None


class PrincipalList(Model):
    principals: list[Principal]


class PrincipalChange(Model):
    """A principal as it now stands; ``token`` only from ``add`` and ``rotate`` (shown once)."""

    principal: str
    kind: str
    grants: list[str]
    own_scope: str
    added_at: str
    added_by: str
    rotated_at: str | None = None
    revoked: bool
    revoked_at: str | None = None
    revoked_by: str | None = None
    revoked_reason: str | None = None
    token: str | None = None
    seqs: list[int]


class ServerStatus(Model):
    server: str
    version: str
    pid: int
    dir: str
    socket: str
    http: str | None = None
    idle_exit_secs: int | None = None
    ui_actor: str
    uptime_secs: int
    head_seq: int


class Refusal(Model):
    verb: str
    scope: str


class Reply(Model):
    """What a command printed and how it ended (``POST /v1/call``, the CLI's own transport)."""

    stdout: str
    stderr: str
    exit_code: int
    error: str | None = None
    hint: str | None = None
    refused: int = 0
    refusal: Refusal | None = None
    #: The store's last verification failed: when and what (until one passes).
    verify_failed: str | None = None


class Event(Model):
    """One event of the ledger, as ``memledger log`` and ``export`` print it (one JSON line;
    schemas/json/event-line.schema.json). ``body`` is the event's own fields, ``type`` its name."""

    seq: int
    event_id: str
    format: int
    type: str
    recorded_at: str
    actor: str
    correlation_id: str
    causation: int | None = None
    idempotency_key: str | None = None
    prev_hash: str
    hash: str
    #: Format 5: the authenticated principal that appended it (``owner`` for the store's owner).
    principal: str | None = None
    #: Set when an erasure removed this event's texts (they are blank in ``body``).
    erased: dict[str, Any] | None = None
    body: dict[str, Any]


class Report(Model):
    """A report whose fields docs/cli.md lists (``conflicts auto``, ``conflicts scan``,
    ``embed``): the contract types it as an open object, so every field is kept as it came."""


SaveLine = Union[SaveResult, BatchLineError]
