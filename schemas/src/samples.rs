//! Deterministic sample events, one of every body variant, for golden fixtures and tests in
//! every crate. Fixed ids and times: the same bytes on every machine, forever.

use crate::chain::{Hash, content_hash};
use crate::effects::{Edge, EdgeKind, Effect};
use crate::event::*;
use crate::ids::{ConflictId, CorrelationId, EventId, MemoryId};
use crate::kinds::*;
use crate::time::Timestamp;

const T0: i64 = 1_783_000_000_000_000; // 2026-07-02T...

/// One body of every variant, in variant order, forming a plausible story.
pub fn sample_bodies() -> Vec<EventBody> {
    let old = MemoryId(0x1111_1111_1111_1111_1111_1111_1111_1111);
    let new = MemoryId(0x2222_2222_2222_2222_2222_2222_2222_2222);
    let merged = MemoryId(0x3333_3333_3333_3333_3333_3333_3333_3333);
    let conflict = ConflictId(0x4444_4444_4444_4444_4444_4444_4444_4444);
    let effects = vec![
        Effect::MadeStale { memory_id: old },
        Effect::Reparented { memory_id: new, from_root: new, from_version: 1, to_root: old, to_version: 2 },
        Effect::EdgeAdded { edge: Edge { kind: EdgeKind::Replaces, from: new, to: old } },
        Effect::Introduced { memory_id: merged, root_id: old, version: 3 },
    ];
    vec![
        EventBody::MemoryObserved(MemoryObserved {
            memory_id: new,
            text: "the staging db runs on Postgres 17".into(),
            memory_type: MemoryType::Fact,
            scope: "personal".into(),
            source: Some("session:42".into()),
            fact_key: Some("staging/db/engine".into()),
            effective_at: Some(Timestamp(T0)),
            content_hash: content_hash("the staging db runs on Postgres 17"),
            dedup: true,
            evidence: None,
            origin: None,
            expires_at: None,
            ttl_seconds: None,
        }),
        EventBody::PairClassified(PairClassified {
            incoming: new,
            candidate: old,
            method: Method::Lexical,
            relation: Relation::Contradictory,
            gate: "value_mismatch".into(),
            reason: "numbers differ: 17 vs 16 while the rest agrees".into(),
            scores: vec![("jaccard".into(), 0.75), ("containment".into(), 0.8)],
            thresholds: vec![("merge_threshold".into(), 0.85), ("related_threshold".into(), 0.55)],
            model: Some(ModelVerdict {
                model: "local-model".into(),
                raw: Some("{\"relation\":\"contradictory\"}".into()),
                relation: Some(Relation::Contradictory),
                reason: Some("versions differ".into()),
                error: None,
            }),
            outcome: PairOutcome::ConflictOpened,
        }),
        EventBody::BeliefAdded(BeliefAdded { memory_id: new }),
        EventBody::BeliefVersioned(BeliefVersioned {
            memory_id: new,
            root_id: old,
            version: 2,
            replaces: old,
            cause: VersionCause::Reworded,
        }),
        EventBody::BeliefMerged(BeliefMerged { memory_id: merged, into: old, kind: MergeKind::ExactDuplicate }),
        EventBody::BeliefHistorical(BeliefHistorical { memory_id: merged, root_id: old, version: 3, current: new }),
        EventBody::BeliefRetired(BeliefRetired { memory_id: old, reason: Some("no longer true".into()) }),
        EventBody::ConflictOpened(ConflictOpened {
            conflict_id: conflict,
            incoming: new,
            candidates: vec![ConflictSide { memory_id: old, root_id: old, version: 1, reason: "16 vs 17".into() }],
            kind: ConflictKind::Contradiction,
            needs_authority: Authority::Stated,
        }),
        EventBody::ConflictResolved(ConflictResolved {
            conflict_id: conflict,
            action: ResolutionAction::KeepNew,
            by: "person:cli:ana".into(),
            rationale: Some("upgraded last week".into()),
            effects: effects.clone(),
        }),
        EventBody::ResolutionReverted(ResolutionReverted { conflict_id: conflict, resolution_seq: 9, undone: effects }),
        EventBody::BeliefEdited(BeliefEdited {
            memory_id: merged,
            root_id: old,
            version: 4,
            replaces: new,
            expected_version: Some(3),
        }),
    ]
}

/// The memory the sample erasure erases, and the events of [`sample_bodies`] that hold its texts.
pub const ERASED_MEMORY: MemoryId = MemoryId(0x2222_2222_2222_2222_2222_2222_2222_2222);
pub const ERASED_EVENTS: [u64; 4] = [1, 2, 8, 9];

/// The bodies a chain in `format` has one of each: [`sample_bodies`], from format 3 on an
/// erasure (of [`ERASED_MEMORY`]), from format 4 on a co-enrichment and a merge proposal, and
/// from format 5 on principals, a proposal, an imported memory and a transcript's progress, from
/// format 6 on memories that expire.
pub fn sample_bodies_in(format: u16) -> Vec<EventBody> {
    let mut bodies = sample_bodies();
    if format >= 3 {
        bodies.push(sample_erasure());
    }
    if format >= 4 {
        bodies.extend(sample_co_enrichment());
    }
    if format >= 5 {
        bodies.extend(sample_format_5());
    }
    if format >= 6 {
        bodies.extend(sample_format_6());
    }
    if format >= 7 {
        bodies.extend(sample_format_7());
    }
    bodies
}

/// Format 7's vocabulary: a head accepted against the witness it disagreed with.
pub fn sample_format_7() -> Vec<EventBody> {
    vec![EventBody::HeadAccepted(HeadAccepted {
        reason: "restored from last night's backup after the disk failed".into(),
        head_seq: 14,
        head_hash: Hash([0x14; 32]),
        instead_of_seq: Some(19),
        instead_of_hash: Some(Hash([0x19; 32])),
        disagreement: Some("its head is seq 14, behind the witness's seq 19".into()),
        key_id: "8ebfde4d4dc6717b".into(),
    })]
}

/// Format 6's vocabulary: memories that expire, one after a time to live and one at an instant,
/// and a version that changes an expiry.
pub fn sample_format_6() -> Vec<EventBody> {
    let on_call = "I'm on call this week";
    let freeze = "the staging freeze lasts until the 15th";
    vec![
        EventBody::MemoryObserved(MemoryObserved {
            memory_id: MemoryId(0xdddd_dddd_dddd_dddd_dddd_dddd_dddd_dddd),
            text: on_call.into(),
            memory_type: MemoryType::Episode,
            scope: "personal".into(),
            source: Some("stated".into()),
            fact_key: None,
            effective_at: None,
            content_hash: content_hash(on_call),
            dedup: true,
            evidence: None,
            origin: None,
            expires_at: Some(Timestamp(T0 + 7 * 86_400_000_000)),
            ttl_seconds: Some(7 * 86_400),
        }),
        EventBody::MemoryObserved(MemoryObserved {
            memory_id: MemoryId(0xeeee_eeee_eeee_eeee_eeee_eeee_eeee_eeee),
            text: freeze.into(),
            memory_type: MemoryType::Fact,
            scope: "team:platform".into(),
            source: Some("stated".into()),
            fact_key: Some("staging/freeze".into()),
            effective_at: None,
            content_hash: content_hash(freeze),
            dedup: true,
            evidence: None,
            origin: Some("standup notes".into()),
            expires_at: Some(Timestamp(T0 + 12 * 86_400_000_000)),
            ttl_seconds: None,
        }),
        EventBody::BeliefVersioned(BeliefVersioned {
            memory_id: MemoryId(0xdddd_dddd_dddd_dddd_dddd_dddd_dddd_dddd),
            root_id: MemoryId(0x9999_9999_9999_9999_9999_9999_9999_9999),
            version: 3,
            replaces: MemoryId(0x9999_9999_9999_9999_9999_9999_9999_9999),
            cause: VersionCause::Expiry,
        }),
    ]
}

/// Format 5's vocabulary: a principal's life (added, granted, a grant revoked, rotated,
/// revoked), an agent's proposal and the conflict-queue entry it opens, its acceptance, an
/// announced change, an imported memory with its evidence and the transcript's progress.
pub fn sample_format_5() -> Vec<EventBody> {
    let policy = MemoryId(0x9999_9999_9999_9999_9999_9999_9999_9999);
    let proposal = MemoryId(0xaaaa_aaaa_aaaa_aaaa_aaaa_aaaa_aaaa_aaaa);
    let imported = MemoryId(0xbbbb_bbbb_bbbb_bbbb_bbbb_bbbb_bbbb_bbbb);
    let conflict = ConflictId(0xcccc_cccc_cccc_cccc_cccc_cccc_cccc_cccc);
    let grant =
        |pattern: &str, verbs: &[Verb], authority| Grant { pattern: pattern.into(), verbs: verbs.to_vec(), authority };
    let observed = "we moved CI to GitLab";
    vec![
        EventBody::PrincipalAdded(PrincipalAdded {
            name: "billing-bot".into(),
            kind: PrincipalKind::Agent,
            verifier: Hash([0x5a; 32]),
            grants: vec![grant("team:billing", &[Verb::Read, Verb::Propose], None)],
        }),
        EventBody::PrincipalGranted(PrincipalGranted {
            name: "billing-bot".into(),
            grants: vec![grant("project:*", &[Verb::Read, Verb::Write, Verb::Resolve], Some(Authority::Imported))],
        }),
        EventBody::GrantRevoked(GrantRevoked { name: "billing-bot".into(), patterns: vec!["project:*".into()] }),
        EventBody::PrincipalRotated(PrincipalRotated { name: "billing-bot".into(), verifier: Hash([0x6b; 32]) }),
        EventBody::PairClassified(PairClassified {
            incoming: proposal,
            candidate: policy,
            method: Method::Lexical,
            relation: Relation::Contradictory,
            gate: "value_mismatch".into(),
            reason: "weekdays differ: thursdays vs tuesdays while the rest agrees".into(),
            scores: vec![("jaccard".into(), 0.7)],
            thresholds: vec![("merge_threshold".into(), 0.85)],
            model: None,
            outcome: PairOutcome::Proposed,
        }),
        EventBody::BeliefProposed(BeliefProposed { memory_id: proposal }),
        EventBody::ConflictOpened(ConflictOpened {
            conflict_id: conflict,
            incoming: proposal,
            candidates: vec![ConflictSide {
                memory_id: policy,
                root_id: policy,
                version: 1,
                reason: "weekdays differ".into(),
            }],
            kind: ConflictKind::Proposal,
            needs_authority: Authority::Policy,
        }),
        EventBody::ConflictResolved(ConflictResolved {
            conflict_id: conflict,
            action: ResolutionAction::KeepExisting,
            by: "person:ana".into(),
            rationale: Some("the release policy says tuesdays".into()),
            effects: vec![Effect::Rejected { memory_id: proposal }],
        }),
        EventBody::ConflictResolved(ConflictResolved {
            conflict_id: conflict,
            action: ResolutionAction::KeepNew,
            by: "person:ana".into(),
            rationale: None,
            effects: vec![Effect::Accepted { memory_id: proposal }],
        }),
        EventBody::MemoryObserved(MemoryObserved {
            memory_id: imported,
            text: observed.into(),
            memory_type: MemoryType::Fact,
            scope: "team:billing".into(),
            source: Some("imported".into()),
            fact_key: None,
            effective_at: Some(Timestamp(T0 - 86_400_000_000)),
            content_hash: content_hash(observed),
            dedup: true,
            evidence: Some(Evidence {
                agent: "claude-code".into(),
                session: Some("7c1e2f4a-0b5d-4c3e-9a8f-2d6b1e0c9f31".into()),
                file: "/home/ana/.claude/projects/-home-ana-billing/7c1e2f4a-0b5d-4c3e-9a8f-2d6b1e0c9f31.jsonl".into(),
                first_line: 41,
                last_line: 44,
                message_ids: vec!["msg_01".into(), "msg_02".into()],
                excerpt: "user: we moved CI to GitLab last week".into(),
                observed_at: Some(Timestamp(T0 - 86_400_000_000)),
            }),
            origin: Some("standup notes".into()),
            expires_at: None,
            ttl_seconds: None,
        }),
        EventBody::BeliefVersioned(BeliefVersioned {
            memory_id: imported,
            root_id: policy,
            version: 2,
            replaces: policy,
            cause: VersionCause::AnnouncedChange,
        }),
        EventBody::TranscriptProgressed(TranscriptProgressed {
            agent: "claude-code".into(),
            file: "/home/ana/.claude/projects/-home-ana-billing/7c1e2f4a-0b5d-4c3e-9a8f-2d6b1e0c9f31.jsonl".into(),
            session: Some("7c1e2f4a-0b5d-4c3e-9a8f-2d6b1e0c9f31".into()),
            offset: 18_342,
            prefix_hash: Hash([0x7c; 32]),
            chunk_hash: Hash([0x8d; 32]),
            first_line: 1,
            last_line: 60,
            memories: vec![imported],
        }),
        EventBody::PrincipalRevoked(PrincipalRevoked {
            name: "billing-bot".into(),
            reason: Some("token leaked".into()),
        }),
    ]
}

/// A memory that enriches the same version as another (a `co_enrichment` pair) and the merge
/// a model proposed for the two.
pub fn sample_co_enrichment() -> Vec<EventBody> {
    let revision = MemoryId(0x5555_5555_5555_5555_5555_5555_5555_5555);
    let first = MemoryId(0x6666_6666_6666_6666_6666_6666_6666_6666);
    let second = MemoryId(0x7777_7777_7777_7777_7777_7777_7777_7777);
    let reason = "both enrich version 1 of the belief".to_string();
    vec![
        EventBody::PairClassified(PairClassified {
            incoming: second,
            candidate: first,
            method: Method::Lexical,
            relation: Relation::Complementary,
            gate: "related_band".into(),
            reason: reason.clone(),
            scores: vec![("jaccard".into(), 0.5), ("containment".into(), 0.75)],
            thresholds: vec![("merge_threshold".into(), 0.85)],
            model: None,
            outcome: PairOutcome::CoEnrichment,
        }),
        EventBody::MergeProposed(MergeProposed {
            conflict_id: ConflictId(0x8888_8888_8888_8888_8888_8888_8888_8888),
            incoming: second,
            candidates: vec![ConflictSide { memory_id: first, root_id: revision, version: 2, reason }],
            revision,
            text: "Ana works at Acme in Lisbon as a data engineer".into(),
            model: ModelVerdict {
                model: "local-model".into(),
                raw: Some("{\"text\":\"Ana works at Acme in Lisbon as a data engineer\"}".into()),
                relation: None,
                reason: Some("keeps the role and the city".into()),
                error: None,
            },
        }),
    ]
}

/// The erasure of [`ERASED_MEMORY`]'s texts from [`ERASED_EVENTS`].
pub fn sample_erasure() -> EventBody {
    EventBody::MemoryErased(MemoryErased {
        memory_ids: vec![ERASED_MEMORY],
        content_hashes: vec![content_hash("the staging db runs on Postgres 17")],
        conflicts: vec![ConflictId(0x4444_4444_4444_4444_4444_4444_4444_4444)],
        events: ERASED_EVENTS.to_vec(),
        reason: Some("saved by mistake".into()),
    })
}

/// The sample bodies sealed into a valid chain from seq 1, in the current format.
pub fn sample_chain() -> Vec<Event> {
    sample_chain_in(crate::codec::CURRENT_FORMAT)
}

/// The sample bodies of `format` sealed into a valid chain from seq 1, every event in `format`.
pub fn sample_chain_in(format: u16) -> Vec<Event> {
    chain_in(sample_bodies_in(format), format)
}

/// [`sample_bodies`] in `format`, then (in format 3, or `format` from 4 on) the erasure of [`ERASED_MEMORY`],
/// applied: the events it names blanked, as a store holds them after the erasure.
pub fn erased_chain_in(format: u16) -> Vec<Event> {
    let mut chain = chain_in(sample_bodies(), format);
    let last = chain.last().cloned().unwrap_or_else(|| unreachable!("the sample bodies are not empty"));
    let mut erasure = chain_in(vec![sample_erasure()], format.max(3)).remove(0);
    erasure.seq = last.seq + 1;
    erasure.event_id = EventId(0xe000_0000_0000_0000_0000_0000_0000_0000 + erasure.seq as u128);
    erasure.recorded_at = Timestamp(last.recorded_at.0 + 1_000_001);
    erasure.causation = Some(last.seq);
    erasure.idempotency_key = None;
    erasure.prev_hash = last.hash;
    erasure.seal();
    for event in chain.iter_mut().filter(|e| ERASED_EVENTS.contains(&e.seq)) {
        event.redact(erasure.seq, erasure.recorded_at, &erasure.actor);
    }
    chain.push(erasure);
    chain
}

/// Seal bodies into a valid chain from seq 1 with fixed ids and times, in the current format.
pub fn chain_of(bodies: Vec<EventBody>) -> Vec<Event> {
    chain_in(bodies, crate::codec::CURRENT_FORMAT)
}

/// Seal bodies into a valid chain from seq 1 with fixed ids and times, in `format`.
pub fn chain_in(bodies: Vec<EventBody>, format: u16) -> Vec<Event> {
    let mut prev = Hash::GENESIS;
    let mut out = Vec::new();
    for (i, body) in bodies.into_iter().enumerate() {
        let seq = i as u64 + 1;
        let mut event = Event {
            seq,
            event_id: EventId(0xe000_0000_0000_0000_0000_0000_0000_0000 + seq as u128),
            format,
            recorded_at: Timestamp(T0 + seq as i64 * 1_000_001),
            actor: "cli:sample".into(),
            correlation_id: CorrelationId(0xc0),
            causation: if seq > 1 { Some(seq - 1) } else { None },
            idempotency_key: if seq == 1 { Some("sample-key".into()) } else { None },
            prev_hash: prev,
            principal: (format >= 5).then(|| "owner".to_string()),
            hash: Hash::GENESIS,
            erased: None,
            body,
        };
        event.seal();
        prev = event.hash;
        out.push(event);
    }
    out
}
