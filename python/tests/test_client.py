"""Every method of the client, each test run with ``Memledger`` and with ``AsyncMemledger``
(the ``client`` fixture), against a real ``memledger serve``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memledger import CONFLICT_NOTICE, BadInput, Conflict, NotFound, models as m


def test_save_and_show(client: Any, scope: str) -> None:
    saved = client.save("the staging db runs on Postgres 16", scope=scope, type="fact", origin="slack:#infra")
    assert isinstance(saved, m.SaveResult)
    assert saved.outcome == "added" and saved.version == 1 and saved.conflict_id is None
    assert saved.root_id == saved.memory_id and saved.seqs and not saved.replayed
    assert saved.principal == "owner" and saved.source == "stated"
    shown = client.show(saved.memory_id)
    assert isinstance(shown, m.Memory)
    assert (shown.text, shown.scope, shown.type, shown.status) == (
        "the staging db runs on Postgres 16",
        scope,
        "fact",
        "active",
    )
    assert shown.authority == "stated" and shown.principal == "owner"
    # A unique prefix of 6+ characters names it too.
    assert client.show(saved.memory_id[:12]).memory_id == saved.memory_id


def test_save_with_every_option(client: Any, scope: str) -> None:
    saved = client.save(
        "deploys freeze on Fridays",
        scope=scope,
        type="procedure",
        source="policy",
        fact_key="deploy.freeze",
        effective_at="2026-01-05T00:00:00Z",
        idempotency_key=f"{scope}-freeze",
        origin="handbook",
        evidence={"agent": "plain", "file": "/tmp/notes.txt", "first_line": 1, "last_line": 2, "excerpt": "freeze"},
    )
    assert saved.outcome == "added" and saved.source == "policy"
    again = client.save("deploys freeze on Fridays", scope=scope, idempotency_key=f"{scope}-freeze")
    assert again.replayed and again.memory_id == saved.memory_id
    shown = client.show(saved.memory_id)
    assert shown.fact_key == "deploy.freeze" and shown.type == "procedure" and shown.authority == "policy"
    assert shown.effective_at is not None and shown.effective_at.startswith("2026-01-05")
    dup = client.save("deploys freeze on Fridays", scope=scope, no_dedup=True)
    assert dup.outcome == "added" and dup.memory_id != saved.memory_id


def test_save_many_in_order_with_a_refused_line(client: Any, scope: str) -> None:
    results = client.save_many(
        [
            {"text": "Ana leads the billing team", "scope": scope},
            {"text": "", "scope": scope},
            {"text": "Bo owns the payments runbook", "scope": scope, "type": "fact", "fact_key": "runbook.owner"},
        ]
    )
    assert [type(r).__name__ for r in results] == ["SaveResult", "BatchLineError", "SaveResult"]
    assert results[1].line == 2 and results[1].error
    assert [r.outcome for r in results if isinstance(r, m.SaveResult)] == ["added", "added"]
    listed = client.list(scope=scope)
    assert {x.text for x in listed.memories} == {"Ana leads the billing team", "Bo owns the payments runbook"}


def test_a_contradiction_opens_a_conflict_and_recall_says_so(client: Any, scope: str) -> None:
    first = client.save("the staging db runs on Postgres 16", scope=scope)
    second = client.save("the staging db runs on Postgres 17", scope=scope)
    assert second.outcome == "conflict" and second.conflict_id
    recalled = client.recall("which postgres does the staging db run", scope=scope)
    assert isinstance(recalled, m.RecallResult)
    assert recalled.notice == CONFLICT_NOTICE
    assert {h.memory_id for h in recalled.results} == {first.memory_id, second.memory_id}
    assert all(h.conflicts_with for h in recalled.results)
    assert all(h.version == 1 and h.fact_key is None and h.scope == scope for h in recalled.results)
    # The answer's texts inside a fence of its own: data, never instructions.
    assert "Postgres 16" in recalled.fenced and "Postgres 17" in recalled.fenced
    conflict = client.conflict(second.conflict_id)
    assert isinstance(conflict, m.ConflictRecord)
    assert conflict.status == "pending" and conflict.kind == "contradiction"
    assert conflict.incoming == second.memory_id and conflict.candidates == [first.memory_id]
    assert conflict.needs_authority == "stated" and conflict.withheld == []
    assert second.conflict_id in {c.conflict_id for c in client.conflicts().conflicts}

    resolved = client.resolve(second.conflict_id, "keep_new", note="upgraded in March")
    assert isinstance(resolved, m.ResolveResult) and resolved.status == "resolved" and resolved.action == "keep_new"
    assert client.show(first.memory_id).status == "stale"
    assert client.recall("staging db postgres", scope=scope).notice is None
    assert second.conflict_id in {c.conflict_id for c in client.conflicts(status="resolved").conflicts}
    with pytest.raises(Conflict):
        client.resolve(second.conflict_id, "keep_existing")

    reverted = client.revert(second.conflict_id)
    assert reverted.status == "pending"
    assert client.show(first.memory_id).status == "active"
    merged = client.resolve(second.conflict_id, "merge", merged_text="the staging db runs on Postgres 17 since March")
    assert merged.merged_memory_id is not None


def test_recall_options(client: Any, scope: str) -> None:
    client.save("the office opens at nine", scope=scope, type="fact")
    client.save("prefers tea over coffee", scope=scope, type="preference")
    head = client.status().head_seq
    client.save("the office wifi is called ledger-guest", scope=scope)
    prefs = client.recall("tea coffee office", scope=scope, type="preference", limit=5)
    assert [h.text for h in prefs.results] == ["prefers tea over coffee"]
    assert prefs.ranking.startswith("bm25")
    past = client.recall("office", scope=scope, as_of=head)
    assert "the office wifi is called ledger-guest" not in {h.text for h in past.results}
    assert "the office opens at nine" in {h.text for h in past.results}
    future = client.recall("office", scope=scope, valid_at="2100-01-01T00:00:00Z", limit=1)
    assert len(future.results) == 1
    with pytest.raises(BadInput):
        client.recall("   ", scope=scope)


def test_update_with_expected_version_forget_and_history(client: Any, scope: str) -> None:
    saved = client.save("the cache TTL is 5 minutes", scope=scope)
    updated = client.update(saved.memory_id, "the cache TTL is 10 minutes", expect_version=1)
    assert isinstance(updated, m.UpdateResult)
    assert updated.version == 2 and updated.root_id == saved.root_id and updated.replaces == saved.memory_id
    with pytest.raises(Conflict) as refused:
        client.update(updated.memory_id, "the cache TTL is 20 minutes", expect_version=1)
    assert refused.value.exit_code == 3 and refused.value.status == 409
    history = client.history(saved.memory_id)
    assert isinstance(history, m.History) and history.root_id == saved.root_id
    assert [(v.version, v.text) for v in history.versions] == [
        (2, "the cache TTL is 10 minutes"),
        (1, "the cache TTL is 5 minutes"),
    ]
    assert history.versions[0].principal == "owner" and history.versions[0].authority == "stated"
    assert client.history(saved.memory_id, valid_at="2100-01-01T00:00:00Z").versions
    assert client.history(saved.memory_id, as_of=saved.seqs[-1]).versions[0].version == 1
    forgot = client.forget(updated.memory_id, reason="moved to the config repo")
    assert isinstance(forgot, m.ForgetResult) and forgot.root_id == saved.root_id
    assert client.show(updated.memory_id).status == "retired"
    assert client.list(scope=scope).memories == []
    assert {x.status for x in client.list(scope=scope, status="all").memories} == {"retired", "stale"}
    assert client.show(saved.memory_id, valid_at="2100-01-01T00:00:00Z").memory_id == saved.memory_id


def test_list_filters(client: Any, scope: str) -> None:
    client.save("Ana prefers window seats", scope=scope, type="preference", fact_key="ana.seat")
    client.save("Ana works from Lisbon", scope=scope, fact_key="ana.city")
    client.save("Bo works from Porto", scope=scope)
    assert len(client.list(scope=scope).memories) == 3
    assert [x.text for x in client.list(scope=scope, type="preference").memories] == ["Ana prefers window seats"]
    assert [x.text for x in client.list(scope=scope, fact_key="ana.city").memories] == ["Ana works from Lisbon"]
    assert len(client.list(scope=scope, limit=2).memories) == 2
    # A scope pattern: every scope it covers.
    assert len(client.list(scope=scope[:-2] + "*").memories) >= 3


def test_why_explains_pairs_flagged_and_dropped(client: Any, scope: str) -> None:
    a = client.save("the build server runs Ubuntu 22.04", scope=scope)
    b = client.save("the build server runs Ubuntu 24.04", scope=scope)
    why = client.why(b.memory_id)
    assert isinstance(why, m.Why) and why.decisions
    d = why.decisions[0]
    assert (d.incoming, d.candidate) == (b.memory_id, a.memory_id)
    assert d.relation == "contradictory" and d.method == "lexical" and d.scores and d.thresholds
    assert client.why(b.memory_id, a.memory_id).decisions[0].seq == d.seq


def test_conflicts_open_scan_and_the_review_reads(client: Any, scope: str) -> None:
    a = client.save("Ana joined in 2019", scope=scope)
    b = client.save("Ana moved to the platform team", scope=scope)
    opened = client.open_conflict(a.memory_id, b.memory_id, note="she cannot be on both")
    assert isinstance(opened, m.OpenResult) and opened.seqs
    assert client.conflict(opened.conflict_id).kind == "contradiction"
    scan = client.scan(scope=scope, dry_run=True, max_pairs=10, min_confidence=0.5)
    assert isinstance(scan, m.Report) and scan.model_extra is not None and scan.model_extra["dry_run"] is True
    page = client.review_conflicts(status="pending", limit=500)
    assert isinstance(page, m.ReviewConflicts) and opened.conflict_id in {c.conflict_id for c in page.conflicts}
    mine = next(c for c in page.conflicts if c.conflict_id == opened.conflict_id)
    assert mine.scope == scope and mine.gate == "by_hand" and mine.incoming is not None
    events = client.events(limit=5, type="conflict_opened")
    assert isinstance(events, m.EventsPage) and events.items
    assert all(e["type"] == "conflict_opened" for e in events.items)
    actor = events.items[0]["actor"]
    assert all(e["actor"] == actor for e in client.events(limit=3, actor=actor).items)
    near = client.near_misses(limit=5, kind="all", scope=scope)
    assert isinstance(near, m.NearMisses)
    timeline = client.timeline()
    assert isinstance(timeline, m.Timeline) and timeline.events > 0


def test_models_needed_say_so(client: Any) -> None:
    with pytest.raises(BadInput, match="model"):
        client.auto(dry_run=True)
    with pytest.raises(BadInput):
        client.embed(dry_run=True)


def test_the_ledger_reads(client: Any, scope: str) -> None:
    saved = client.save("the release train leaves on Tuesdays", scope=scope)
    events = client.log(memory=saved.memory_id)
    assert events and all(isinstance(e, m.Event) for e in events)
    assert events[0].type == "memory_observed" and events[0].body["text"] == "the release train leaves on Tuesdays"
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert events[0].principal == "owner"
    assert len(client.log(since=saved.seqs[0], limit=1)) == 1
    assert client.log(by="owner", limit=3)
    verify = client.verify()
    assert isinstance(verify, m.VerifyReport) and verify.ok and verify.views_consistent and verify.first_bad_seq is None
    stats = client.stats()
    assert isinstance(stats, m.Stats) and stats.events >= verify.head_seq - 0 and stats.memories["active"] >= 1
    assert stats.last_verify is not None and stats.last_verify.ok
    scopes = client.scopes()
    assert isinstance(scopes, m.Scopes)
    assert [s.scope for s in scopes.scopes] == sorted(s.scope for s in scopes.scopes)
    assert next(s for s in scopes.scopes if s.scope == scope).memories >= 1
    usage = client.usage()
    assert isinstance(usage, m.Usage) and usage.yours.principal == "owner" and len(usage.day) == 10
    assert usage.today.total_tokens == usage.today.prompt_tokens + usage.today.completion_tokens
    status = client.status()
    assert isinstance(status, m.ServerStatus) and status.server == "memledger serve" and status.http


def test_rebuild_keeps_every_answer(client: Any, scope: str) -> None:
    client.save("the on-call rotation changes on Mondays", scope=scope)
    before = client.list(scope=scope)
    rebuilt = client.rebuild(view="beliefs")
    assert isinstance(rebuilt, m.RebuildResult) and rebuilt.views == ["beliefs"] and rebuilt.events > 0
    assert client.list(scope=scope) == before
    assert client.verify().ok


def test_erase(client: Any, scope: str) -> None:
    saved = client.save("the door code is written on the fridge", scope=scope)
    dry = client.erase(saved.memory_id, dry_run=True)
    assert isinstance(dry, m.EraseResult) and dry.dry_run and dry.memories == [saved.memory_id]
    assert client.show(saved.memory_id).text
    erased = client.erase(saved.memory_id, lineage=True, reason="a person asked")
    assert not erased.dry_run and erased.erasure_seq is not None
    assert client.show(saved.memory_id).text == ""
    assert client.verify().ok


def test_principals_tokens_grants_and_proposals(client: Any, server: Any, scope: str) -> None:
    name = f"agent-{scope.split(':')[1]}"
    added = client.add_principal(name, "agent", grants=[f"{scope}=read,write"])
    assert isinstance(added, m.PrincipalChange) and added.token and added.grants == [f"{scope}=read,write"]
    agent = server.client(token=added.token)
    try:
        me = agent.whoami()
        assert (me.principal, me.kind, me.owner) == (name, "agent", False)
        saved = agent.save("the nightly backup runs at 02:00", scope=scope)
        assert saved.principal == name and saved.source == "inferred"
        # A stated belief outranks the agent's inference: the agent cannot supersede it.
        stated = client.save("the nightly backup runs at 03:00", scope=scope, source="stated")
        inferred = agent.save("the nightly backup runs at 04:00", scope=scope)
        assert inferred.outcome == "conflict" and inferred.needs_authority == "stated"
        assert agent.conflict(inferred.conflict_id).needs_authority == "stated"
        assert stated.outcome in ("conflict", "versioned")
    finally:
        agent.close()

    names = {p.principal for p in client.principals().principals}
    assert name in names
    granted = client.grant(name, [f"{scope}:proposals=read,propose"])
    assert f"{scope}:proposals=read,propose" in granted.grants
    rotated = client.rotate(name)
    assert rotated.token and rotated.token != added.token
    proposer = server.client(token=rotated.token)
    try:
        proposed = proposer.save("the standup moves to 10:00", scope=f"{scope}:proposals")
        assert proposed.outcome == "proposed" and proposed.conflict_id
        entry = client.conflict(proposed.conflict_id)
        assert entry.kind == "proposal" and entry.proposed_by == name
        accepted = client.accept(proposed.conflict_id, note="agreed in the retro")
        assert accepted.status == "resolved"
        assert client.show(proposed.memory_id).status == "active"
        second = proposer.save("the standup moves to 11:00", scope=f"{scope}:proposals")
        assert client.reject(second.conflict_id).status == "resolved"
        assert client.show(second.memory_id).status != "active"
    finally:
        proposer.close()
    taken = client.revoke(name, grants=[f"{scope}:proposals"])
    assert f"{scope}:proposals=read,propose" not in taken.grants and not taken.revoked
    gone = client.revoke(name, reason="the agent was retired")
    assert gone.revoked


def test_call_runs_any_command_as_the_cli(client: Any, scope: str) -> None:
    client.save("lunch is at noon", scope=scope)
    reply = client.call({"command": "stats"})
    assert isinstance(reply, m.Reply) and reply.exit_code == 0 and json.loads(reply.stdout)["events"] > 0
    refused = client.call({"command": "show", "id": "ffffffffffff"})
    assert refused.exit_code == 4 and refused.error
    # The answer is the command's typed document either way: the CLI renders human text itself.
    listed = client.call({"command": "list", "scope": scope}, json=False)
    assert json.loads(listed.stdout)["memories"][0]["text"] == "lunch is at noon"


def test_import_into_another_store(client: Any, server: Any, scope: str, tmp_path: Any) -> None:
    from conftest import Server

    client.save("exports are JSON Lines", scope=scope)
    stream = "".join(line + "\n" for line in client.export_lines())
    other = Server(tmp_path / "other")
    try:
        c = other.client()
        imported = c.import_events(stream)
        assert isinstance(imported, m.ImportResult) and imported.appended == imported.read > 0
        assert c.import_events(stream.encode()).appended == 0
        assert c.verify().ok
        assert "exports are JSON Lines" in {x.text for x in c.list(scope=scope).memories}
        c.close()
    finally:
        other.stop()


def test_not_found(client: Any) -> None:
    with pytest.raises(NotFound) as missing:
        client.show("0123456789abcdef0123456789abcdef")
    assert missing.value.exit_code == 4 and missing.value.status == 404 and missing.value.problem["detail"]
    with pytest.raises(NotFound):
        client.conflict("0123456789abcdef0123456789abcdef")
