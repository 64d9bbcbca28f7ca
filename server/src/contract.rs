//! The JSON documents the API answers with, as docs/cli.md names their fields: the schemas of
//! the OpenAPI document. The documents themselves are what the commands print with `--json`;
//! these types describe them (and the schemathesis check holds every answer to them), so a
//! field named here is a promise, and more fields are welcome (`additionalProperties` stays open).

#![allow(dead_code)]

use serde::Serialize;
use utoipa::ToSchema;

/// Any JSON object (a report whose fields docs/cli.md lists).
#[derive(Serialize, ToSchema)]
pub struct Document {}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Added,
    Merged,
    Versioned,
    Conflict,
    Historical,
    /// A principal that may only propose saved it: not current until someone who may write
    /// accepts it (`conflicts resolve CID --accept`).
    Proposed,
}

/// How much a memory's word counts, lowest first.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Authority {
    Inferred,
    Imported,
    Stated,
    Policy,
}

/// `save`.
#[derive(Serialize, ToSchema)]
pub struct SaveDoc {
    outcome: Outcome,
    memory_id: String,
    root_id: String,
    version: u32,
    conflict_id: Option<String>,
    /// The idempotency key was already committed: nothing new was written.
    replayed: bool,
    seqs: Vec<u64>,
    settled_by_effective_time: bool,
    /// The authority it was saved with.
    source: Authority,
    /// The authority a conflict it opened needs to be settled.
    needs_authority: Option<Authority>,
    /// The principal that saved it.
    principal: String,
    /// How many `<private>…</private>` spans were removed before anything was stored.
    private_spans_removed: u32,
    /// Memories that, like this one, each add a detail of their own to one earlier version.
    co_enriches: Vec<String>,
    /// The conflict-queue entry proposing one text for them, when a chat model proposed it.
    merge_proposal: Option<String>,
    /// Lower-authority memories it restates, superseded at once.
    supersedes: Vec<String>,
    /// The memories of the scope it was compared with and left standing, best first (at most 5).
    related: Vec<RelatedDoc>,
    /// When the memory it left current stops being true unless renewed; null: never.
    expires_at: Option<String>,
}

/// A memory a save was compared with and left standing: for the caller to judge, and to
/// declare (`replaces`, `contradicts`) when it knows the new memory changes it.
#[derive(Serialize, ToSchema)]
pub struct RelatedDoc {
    memory_id: String,
    text: String,
    recorded_at: String,
    /// The lexical similarity in [0, 1].
    score: f64,
    /// The embedder's cosine, when one is configured.
    cosine: Option<f64>,
    /// The rule that decided the pair.
    gate: String,
    /// `complementary`, `unrelated`, or a near miss across kinds.
    relation: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Active,
    /// Takes effect after the valid time asked about.
    Scheduled,
    Stale,
    Retired,
    /// Proposed, not yet accepted.
    Proposed,
    /// Its expiry had come at the valid time asked about, and nothing replaced it.
    Expired,
}

/// A change of a belief that takes effect after the valid time asked about.
#[derive(Serialize, ToSchema)]
pub struct ScheduledDoc {
    memory_id: String,
    version: u32,
    text: String,
    valid_from: String,
}

/// An active memory linked `co_enriches` with a recall hit, returned beside it.
#[derive(Serialize, ToSchema)]
pub struct CoEnrichedDoc {
    memory_id: String,
    root_id: String,
    text: String,
}

/// `show`, and each of `list`'s memories.
#[derive(Serialize, ToSchema)]
pub struct MemoryDoc {
    memory_id: String,
    root_id: String,
    version: u32,
    status: Status,
    #[serde(rename = "type")]
    memory_type: String,
    scope: String,
    text: String,
    source: Option<String>,
    fact_key: Option<String>,
    asserted_at: String,
    stale_since: Option<String>,
    effective_at: Option<String>,
    cause: String,
    conflicts_with: Vec<String>,
    conflicts: Vec<String>,
    merged_count: u32,
    /// Why it was retired (`forget --reason`), when it was.
    retired_reason: Option<String>,
    /// Its effective time, else when asserted.
    valid_from: String,
    /// The next version's `valid_from`; null while open.
    valid_to: Option<String>,
    sources: Vec<String>,
    /// Distinct sources (observations without one count as one).
    independent_sources: u32,
    /// How much its word counts.
    authority: Authority,
    /// The principal that saved it.
    principal: String,
    /// When it stops being true unless renewed (`status` reads `expired` from then); null: never.
    expires_at: Option<String>,
    /// The time to live its expiry was given as, in seconds.
    ttl_seconds: Option<u64>,
    /// The erasure that blanked its text, if one did.
    erased: Option<ErasedDoc>,
    /// Memories that, like this one, each add a detail of their own to one earlier version.
    co_enriches: Vec<String>,
    /// Where in a transcript it was said (`import sessions`).
    evidence: Option<EvidenceDoc>,
}

/// An erasure that blanked a text: its event, when, and by whom.
#[derive(Serialize, ToSchema)]
pub struct ErasedDoc {
    seq: u64,
    at: String,
    by: String,
}

/// Where in a transcript a memory was said.
#[derive(Serialize, ToSchema)]
pub struct EvidenceDoc {
    /// `claude-code`, `codex` or `plain`.
    agent: String,
    session: Option<String>,
    file: String,
    first_line: u32,
    last_line: u32,
    message_ids: Vec<String>,
    excerpt: String,
    observed_at: Option<String>,
}

/// `list`: newest first.
#[derive(Serialize, ToSchema)]
pub struct ListDoc {
    memories: Vec<MemoryDoc>,
}

#[derive(Serialize, ToSchema)]
pub struct RecallHitDoc {
    memory_id: String,
    root_id: String,
    version: u32,
    text: String,
    #[serde(rename = "type")]
    memory_type: String,
    scope: String,
    /// The fact key it was saved with, if any.
    fact_key: Option<String>,
    score: f64,
    asserted_at: String,
    conflicts_with: Vec<String>,
    bm25: Option<f64>,
    cosine: Option<f64>,
    /// The reranker's relevance, when it reordered the first results (they are ordered by it).
    rerank: Option<f64>,
    /// `active`, or `scheduled` when nothing of the belief is true yet at the valid time.
    status: Status,
    valid_from: String,
    valid_to: Option<String>,
    /// When it stops being true unless renewed; null: never.
    expires_at: Option<String>,
    /// The time to live its expiry was given as, in seconds.
    ttl_seconds: Option<u64>,
    /// Changes that take effect after the valid time, soonest first.
    scheduled: Vec<ScheduledDoc>,
    /// Active memories that each add, like this one, a detail of their own to one earlier version.
    co_enrichments: Vec<CoEnrichedDoc>,
    /// How much its word counts.
    authority: Authority,
    /// Nothing of higher authority confirms it and a belief of higher authority in the scope
    /// disagrees with it: ranked after the confirmed results.
    unconfirmed: bool,
}

/// `recall`: best first.
#[derive(Serialize, ToSchema)]
pub struct RecallDoc {
    results: Vec<RecallHitDoc>,
    /// The conflict notice when a result has a pending conflict.
    notice: Option<String>,
    /// `bm25`, or `bm25+cosine`; `+rerank` after either when a reranker reordered the first results.
    ranking: String,
    embedding_error: Option<String>,
    /// Why the results were not reranked although a reranker is configured.
    rerank_error: Option<String>,
    /// The results' texts inside a fence with a boundary made for this answer, which no memory
    /// text holds: recorded data to quote, never instructions to follow.
    fenced: String,
}

#[derive(Serialize, ToSchema)]
pub struct VersionDoc {
    memory_id: String,
    version: u32,
    text: String,
    status: Status,
    asserted_at: String,
    stale_since: Option<String>,
    effective_at: Option<String>,
    cause: String,
    valid_from: String,
    valid_to: Option<String>,
    /// The principal that saved this version.
    principal: String,
    authority: Authority,
    /// When this version stops being true unless renewed; null: never.
    expires_at: Option<String>,
    /// The erasure that blanked its text, if one did.
    erased: Option<ErasedDoc>,
}

/// `history`: newest first.
#[derive(Serialize, ToSchema)]
pub struct HistoryDoc {
    root_id: String,
    versions: Vec<VersionDoc>,
    edges: Vec<Document>,
}

#[derive(Serialize, ToSchema)]
pub struct DecisionDoc {
    seq: u64,
    incoming: String,
    candidate: String,
    method: String,
    scores: Document,
    relation: String,
    gate: String,
    thresholds: Document,
    reason: String,
    outcome: String,
    /// The principal whose save made the decision.
    principal: String,
    /// Who acted for it (`--actor`).
    actor: String,
    recorded_at: String,
    /// The chat model's verdict on the pair, when one was asked.
    model: Option<Document>,
    /// The erasure that blanked the reason and the model's answer, if one did.
    erased: Option<ErasedDoc>,
}

/// `why`.
#[derive(Serialize, ToSchema)]
pub struct WhyDoc {
    /// The memory asked about.
    memory_id: String,
    decisions: Vec<DecisionDoc>,
    /// When the memory stops being true unless renewed; null: never.
    expires_at: Option<String>,
    /// Its expiry had come when asked.
    expired: bool,
}

/// `update`.
#[derive(Serialize, ToSchema)]
pub struct UpdateDoc {
    memory_id: String,
    root_id: String,
    version: u32,
    replaces: String,
    seqs: Vec<u64>,
}

/// `erase`: what was erased (or, with `dry_run`, would be).
#[derive(Serialize, ToSchema)]
pub struct EraseDoc {
    dry_run: bool,
    /// The seq of the erasure event (null for a dry run).
    erasure_seq: Option<u64>,
    memories: Vec<String>,
    content_hashes: Vec<String>,
    conflicts: Vec<String>,
    /// The edges joining the memories to others (they stay: ids only).
    edges: Vec<Document>,
    /// The seqs of the events whose texts go.
    events: Vec<u64>,
    /// Exports made since the first of those events (`at`, `since`, `through`): copies outside the store.
    exports_since: Vec<Document>,
}

/// `forget`.
#[derive(Serialize, ToSchema)]
pub struct ForgetDoc {
    memory_id: String,
    root_id: String,
    seqs: Vec<u64>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConflictStatus {
    Pending,
    Resolved,
}

/// One conflict (`conflicts show`, and each of `conflicts list`'s).
#[derive(Serialize, ToSchema)]
pub struct ConflictDoc {
    conflict_id: String,
    status: ConflictStatus,
    incoming: String,
    candidates: Vec<String>,
    reasons: Vec<String>,
    /// The incoming memory as the caller may read it.
    incoming_memory: ConflictSideDoc,
    /// Each candidate as the caller may read it, with its reason.
    candidate_memories: Vec<ConflictSideDoc>,
    opened_at: String,
    opened_seq: u64,
    /// Who opened it.
    opened_by: String,
    /// The text a chat model proposed for memories that each add a detail: `text`, `revision`,
    /// `model`, `reason`.
    proposal: Option<Document>,
    resolution: Option<Document>,
    resolutions: Vec<Document>,
    reverts: Vec<Document>,
    /// contradiction, authority (a save would have superseded a belief of higher authority),
    /// proposal, or merge_proposal.
    kind: String,
    /// The authority a resolution needs.
    needs_authority: Authority,
    /// Who proposed the incoming memory, when the entry is a proposal.
    proposed_by: Option<String>,
    /// The sides the caller may not read: their ids only, never their text.
    withheld: Vec<String>,
}

/// A memory on one side of a conflict: its id, and (unless `withheld`) what it says.
#[derive(Serialize, ToSchema)]
pub struct ConflictSideDoc {
    memory_id: String,
    /// It is in a scope the caller may not read: only its id is given.
    withheld: Option<bool>,
    text: Option<String>,
    status: Option<Status>,
    version: Option<u32>,
    scope: Option<String>,
    authority: Option<Authority>,
    principal: Option<String>,
    /// Where in a transcript it was said (`import sessions`): the file and lines.
    file: Option<String>,
    first_line: Option<u32>,
    last_line: Option<u32>,
    /// The transcript's words it came from.
    excerpt: Option<String>,
    observed_at: Option<String>,
    /// Why it conflicts (a candidate's).
    reason: Option<String>,
}

/// `conflicts list`.
#[derive(Serialize, ToSchema)]
pub struct ConflictsDoc {
    conflicts: Vec<ConflictDoc>,
}

/// `conflicts resolve` and `conflicts revert`.
#[derive(Serialize, ToSchema)]
pub struct ResolveDoc {
    conflict_id: String,
    status: String,
    action: Option<String>,
    effects: Vec<Document>,
    merged_memory_id: Option<String>,
    seqs: Vec<u64>,
}

/// `verify`.
#[derive(Serialize, ToSchema)]
pub struct VerifyDoc {
    ok: bool,
    events: u64,
    head_seq: u64,
    head_hash: String,
    first_bad_seq: Option<u64>,
    problem: Option<String>,
    /// Events whose texts an erasure removed.
    erased_events: u64,
    /// Of those, the ones of formats 1 and 2, checked by their links alone.
    erased_unprovable: u64,
    /// Whether the store is signed: then every event must be covered by a signed checkpoint.
    signed: bool,
    /// The last seq a valid signed checkpoint covers.
    signed_through: Option<u64>,
    /// Signed checkpoints checked.
    checkpoints: u64,
    /// The ids of the keys the store's checkpoints may be signed with.
    keys: Vec<String>,
    views_consistent: bool,
    inconsistent_views: Vec<String>,
}

/// `stats`.
#[derive(Serialize, ToSchema)]
pub struct StatsDoc {
    events: u64,
    memories: std::collections::BTreeMap<String, u64>,
    by_type: std::collections::BTreeMap<String, u64>,
    conflicts: std::collections::BTreeMap<String, u64>,
    merged_observations: u64,
    /// The store's last verification, if it was ever verified.
    last_verify: Option<LastVerifyDoc>,
}

/// A scope and how many active memories it holds.
#[derive(Serialize, ToSchema)]
pub struct ScopeCountDoc {
    scope: String,
    memories: u64,
}

/// `scopes`: each scope the caller may read that holds active memories, by name.
#[derive(Serialize, ToSchema)]
pub struct ScopesDoc {
    scopes: Vec<ScopeCountDoc>,
}

/// Tokens, as the chat model's API counted them.
#[derive(Serialize, ToSchema)]
pub struct TokensDoc {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    calls: u64,
}

/// One principal's tokens today and this month.
#[derive(Serialize, ToSchema)]
pub struct PrincipalTokensDoc {
    principal: String,
    today: TokensDoc,
    month: TokensDoc,
}

/// `usage`: the chat model's tokens counted in the store (UTC days).
#[derive(Serialize, ToSchema)]
pub struct UsageDoc {
    /// `YYYY-MM-DD`.
    day: String,
    /// `YYYY-MM`.
    month: String,
    today: TokensDoc,
    this_month: TokensDoc,
    /// Every principal for the store's administrators, else the caller's own.
    by_principal: Vec<PrincipalTokensDoc>,
    /// The caller's.
    yours: PrincipalTokensDoc,
    /// Tokens a principal may spend a day (`MEMLEDGER_DAILY_TOKENS`), if set.
    daily_budget: Option<u64>,
}

/// What the last `verify` found (until one passes, a failure is said by every command through
/// the server).
#[derive(Serialize, ToSchema)]
pub struct LastVerifyDoc {
    /// When (RFC 3339).
    at: String,
    ok: bool,
    first_bad_seq: Option<u64>,
    problem: Option<String>,
}

/// `import`.
#[derive(Serialize, ToSchema)]
pub struct ImportDoc {
    read: u64,
    already_present: u64,
    appended: u64,
    head_seq: u64,
}

/// `rebuild`.
#[derive(Serialize, ToSchema)]
pub struct RebuildDoc {
    events: u64,
    views: Vec<String>,
    elapsed_ms: u64,
}

/// One memory beside another on the review page.
#[derive(Serialize, ToSchema)]
pub struct SideDoc {
    memory_id: String,
    root_id: String,
    version: u32,
    status: Status,
    #[serde(rename = "type")]
    memory_type: String,
    scope: String,
    fact_key: Option<String>,
    text: String,
    asserted_at: String,
    /// The actor of the save that observed it.
    saved_by: Option<String>,
    saved_seq: u64,
    /// The principal that saved it.
    principal: String,
    authority: Authority,
}

#[derive(Serialize, ToSchema)]
pub struct CandidateDoc {
    memory: Option<SideDoc>,
    memory_id: String,
    reason: String,
    /// It is in a scope the caller may not read.
    withheld: bool,
}

#[derive(Serialize, ToSchema)]
pub struct ReviewConflictDoc {
    conflict_id: String,
    status: ConflictStatus,
    scope: String,
    fact_key: Option<String>,
    opened_at: String,
    opened_seq: u64,
    incoming: Option<SideDoc>,
    candidates: Vec<CandidateDoc>,
    gate: Option<String>,
    method: Option<String>,
    resolution: Option<Document>,
    resolutions: u64,
    reverts: Vec<Document>,
    kind: String,
    needs_authority: Authority,
    proposed_by: Option<String>,
    /// The incoming memory is in a scope the caller may not read (`incoming` is null).
    incoming_withheld: bool,
    incoming_id: String,
}

/// A page of the conflict queue: pending first, grouped by scope and fact key, newest first.
#[derive(Serialize, ToSchema)]
pub struct ReviewConflictsDoc {
    conflicts: Vec<ReviewConflictDoc>,
    total: u64,
    pending: u64,
    offset: u64,
}

/// A page of events, newest first; `next_before` continues below (null: the start was reached).
#[derive(Serialize, ToSchema)]
pub struct EventsDoc {
    /// Events as `memledger log --json` prints them.
    items: Vec<Document>,
    next_before: Option<u64>,
    scanned: u64,
    head_seq: u64,
}

#[derive(Serialize, ToSchema)]
pub struct NearMissDoc {
    seq: u64,
    recorded_at: String,
    incoming: Option<SideDoc>,
    candidate: Option<SideDoc>,
    method: String,
    relation: String,
    gate: String,
    reason: String,
    outcome: String,
    scores: Document,
    thresholds: Document,
    /// The candidate is in a scope the caller may not read (`candidate` is null).
    candidate_withheld: bool,
    candidate_id: String,
}

/// A page of near misses, newest first.
#[derive(Serialize, ToSchema)]
pub struct NearMissesDoc {
    items: Vec<NearMissDoc>,
    next_before: Option<u64>,
    scanned: u64,
    head_seq: u64,
}

#[derive(Serialize, ToSchema)]
pub struct BucketDoc {
    start: String,
    /// Event counts by type.
    events: Document,
    beliefs: u64,
    pending_conflicts: u64,
}

/// The ledger over time.
#[derive(Serialize, ToSchema)]
pub struct TimelineDoc {
    /// minute, hour, day or week.
    bucket: String,
    buckets: Vec<BucketDoc>,
    save_outcomes: Document,
    conflicts_by_scope: Document,
    events: u64,
}

/// `conflicts open`.
#[derive(Serialize, ToSchema)]
pub struct OpenDoc {
    conflict_id: String,
    seqs: Vec<u64>,
}

/// `whoami`: the caller's principal.
#[derive(Serialize, ToSchema)]
pub struct WhoamiDoc {
    principal: String,
    /// person, agent or service.
    kind: String,
    /// The scope its saves go to when a request names none.
    own_scope: String,
    /// `SCOPE=VERB,…[@AUTHORITY]`, one per grant.
    grants: Vec<String>,
    /// The store's owner, with every verb.
    owner: bool,
    /// Who acts for it (`--actor`, the `memledger-actor` header).
    actor: String,
}

/// A principal (never its token).
#[derive(Serialize, ToSchema)]
pub struct PrincipalDoc {
    principal: String,
    kind: String,
    grants: Vec<String>,
    own_scope: String,
    added_at: String,
    added_by: String,
    rotated_at: Option<String>,
    revoked: bool,
    revoked_at: Option<String>,
    revoked_by: Option<String>,
    revoked_reason: Option<String>,
}

/// `principals list`.
#[derive(Serialize, ToSchema)]
pub struct PrincipalsDoc {
    principals: Vec<PrincipalDoc>,
}

/// `principals add|grant|revoke|rotate`: the principal as it now stands.
#[derive(Serialize, ToSchema)]
pub struct PrincipalChangeDoc {
    principal: String,
    kind: String,
    grants: Vec<String>,
    own_scope: String,
    added_at: String,
    added_by: String,
    rotated_at: Option<String>,
    revoked: bool,
    revoked_at: Option<String>,
    revoked_by: Option<String>,
    revoked_reason: Option<String>,
    /// Only from `add` and `rotate`: the token, shown this once.
    token: Option<String>,
    seqs: Vec<u64>,
}

/// The contract is checked against the typed answers the command layer serializes: every field
/// an answer carries is a field of its document here (and so of OpenAPI, of the MCP tools'
/// output schemas drawn from it, and of the Python models checked against it), and no document
/// promises a field its answer lacks.
#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use memledger_commands::answer;
    use memledger_engine::{principals, reads, recall, resolve, review, validity};
    use serde_json::Value;

    /// The properties of an object schema, with those of the schemas it is made of (a flattened
    /// field's).
    fn properties(schema: &Value, defs: &serde_json::Map<String, Value>, out: &mut BTreeSet<String>) {
        if let Some(Value::String(reference)) = schema.get("$ref") {
            let name = reference.rsplit('/').next().unwrap_or_default();
            if let Some(target) = defs.get(name) {
                properties(target, defs, out);
            }
            return;
        }
        if let Some(Value::Object(props)) = schema.get("properties") {
            out.extend(props.keys().cloned());
        }
        for combined in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(parts)) = schema.get(combined) {
                parts.iter().for_each(|part| properties(part, defs, out));
            }
        }
    }

    fn typed<T: schemars::JsonSchema>() -> BTreeSet<String> {
        let schema = serde_json::to_value(schemars::schema_for!(T)).expect("a schema is JSON");
        let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut out = BTreeSet::new();
        properties(&schema, &defs, &mut out);
        out
    }

    fn documented(openapi: &Value, name: &str) -> BTreeSet<String> {
        let defs = openapi["components"]["schemas"].as_object().cloned().unwrap_or_default();
        let schema = defs.get(name).unwrap_or_else(|| panic!("the contract has no {name}"));
        let mut out = BTreeSet::new();
        properties(schema, &defs, &mut out);
        out
    }

    #[test]
    fn every_document_names_exactly_the_fields_of_its_typed_answer() {
        let openapi = serde_json::to_value(crate::http::api().1).expect("the OpenAPI document is JSON");
        let pairs: Vec<(&str, BTreeSet<String>)> = vec![
            ("SaveDoc", typed::<memledger_engine::SaveResult>()),
            ("RelatedDoc", typed::<memledger_engine::pipeline::Related>()),
            ("MemoryDoc", typed::<reads::MemoryView>()),
            ("ListDoc", typed::<answer::ListDoc>()),
            ("RecallHitDoc", typed::<recall::RecallHit>()),
            ("RecallDoc", typed::<answer::RecallDoc>()),
            ("ScheduledDoc", typed::<validity::ScheduledChange>()),
            ("CoEnrichedDoc", typed::<recall::CoEnrichedMemory>()),
            ("VersionDoc", typed::<reads::VersionView>()),
            ("HistoryDoc", typed::<reads::HistoryView>()),
            ("DecisionDoc", typed::<reads::Decision>()),
            ("WhyDoc", typed::<answer::WhyDoc>()),
            ("UpdateDoc", typed::<resolve::UpdateResult>()),
            ("EraseDoc", typed::<memledger_engine::erase::EraseResult>()),
            ("ForgetDoc", typed::<resolve::ForgetResult>()),
            ("ConflictDoc", typed::<answer::ConflictDoc>()),
            ("ConflictsDoc", typed::<answer::ConflictsDoc>()),
            ("ResolveDoc", typed::<resolve::ResolveResult>()),
            ("VerifyDoc", typed::<reads::VerifyView>()),
            ("StatsDoc", typed::<answer::StatsDoc>()),
            ("ScopeCountDoc", typed::<answer::ScopeCount>()),
            ("ScopesDoc", typed::<memledger_commands::store::ScopesDoc>()),
            ("TokensDoc", typed::<answer::Tokens>()),
            ("PrincipalTokensDoc", typed::<answer::PrincipalTokens>()),
            ("UsageDoc", typed::<answer::UsageDoc>()),
            ("LastVerifyDoc", typed::<memledger_engine::LastVerify>()),
            ("ImportDoc", typed::<memledger_engine::ImportReport>()),
            ("RebuildDoc", typed::<answer::RebuildDoc>()),
            ("SideDoc", typed::<review::Side>()),
            ("CandidateDoc", typed::<review::Candidate>()),
            ("ReviewConflictDoc", typed::<review::ReviewConflict>()),
            ("ReviewConflictsDoc", typed::<review::ConflictPage>()),
            ("EventsDoc", typed::<review::Page<memledger_schemas::Event>>()),
            ("NearMissDoc", typed::<review::NearMiss>()),
            ("NearMissesDoc", typed::<review::Page<review::NearMiss>>()),
            ("BucketDoc", typed::<review::Bucket>()),
            ("TimelineDoc", typed::<review::Timeline>()),
            ("OpenDoc", typed::<answer::OpenedDoc>()),
            ("WhoamiDoc", typed::<answer::WhoamiDoc>()),
            ("PrincipalDoc", typed::<principals::PrincipalView>()),
            ("PrincipalsDoc", typed::<answer::PrincipalsDoc>()),
            ("PrincipalChangeDoc", typed::<principals::PrincipalChange>()),
        ];
        let mut drift = Vec::new();
        for (name, emitted) in pairs {
            let promised = documented(&openapi, name);
            let missing: Vec<_> = emitted.difference(&promised).collect();
            let extra: Vec<_> = promised.difference(&emitted).collect();
            if !missing.is_empty() || !extra.is_empty() {
                drift.push(format!(
                    "{name}: emitted but not documented {missing:?}; documented but not emitted {extra:?}"
                ));
            }
        }
        assert!(drift.is_empty(), "the contract drifted from the typed answers:\n{}", drift.join("\n"));
    }

    /// The reference pages that list the documents' fields: docs/cli.md (each command's
    /// `--json` fields) and docs/review.md (the review page's reads).
    fn reference_pages() -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        ["docs/cli.md", "docs/review.md"]
            .iter()
            .map(|page| std::fs::read_to_string(root.join(page)).expect("a reference page"))
            .collect()
    }

    #[test]
    fn every_field_of_every_document_is_named_on_a_reference_page() {
        let openapi = serde_json::to_value(crate::http::api().1).expect("the OpenAPI document is JSON");
        let pages = reference_pages();
        let mut unnamed = Vec::new();
        for (name, schema) in openapi["components"]["schemas"].as_object().into_iter().flatten() {
            if !name.ends_with("Doc") {
                continue;
            }
            for field in schema["properties"].as_object().into_iter().flatten().map(|(f, _)| f) {
                if !pages.contains(&format!("`{field}`")) {
                    unnamed.push(format!("{name}.{field}"));
                }
            }
        }
        assert!(unnamed.is_empty(), "fields no reference page names (as `field`): {unnamed:?}");
    }
}
