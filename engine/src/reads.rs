//! Reads of one store's views: what `show`, `list`, `history`, `why`, `conflicts`, `log` and
//! `stats` answer, the id prefixes they take, and the lookups the commands that write make
//! before they plan (`Reader`); and the check that every view equals a fresh replay.

use std::collections::HashMap;

use memledger_ledger::store::Store;
use memledger_ledger::{Ledger, OpenOptions, VerifyReport};
use memledger_projector::Views;
use memledger_projector::audit::AuditReader;
use memledger_projector::beliefs::{BeliefReader, ErasedMark, MemoryRecord};
use memledger_projector::conflicts::{ConflictReader, ConflictRecord, ConflictStatus};
use memledger_projector::edges::{EdgeReader, EdgeRecord};
use memledger_schemas::ids::is_hex_prefix;
use memledger_schemas::*;
use serde::Serialize;

use crate::access::Readable;
use crate::error::{BadInput, Conflict, EngineError, NotFound};
use crate::validity::{self, ReadStatus};

/// The shortest id prefix accepted.
pub const MIN_PREFIX: usize = 6;

/// A page of a scope's active memories, newest first ([`crate::Memledger::browse`]).
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct BrowsePage {
    pub memories: Vec<MemoryView>,
    /// Whether memories follow this page.
    pub more: bool,
    /// The scopes browsed that hold active memories, with how many each.
    pub scopes: Vec<(String, u64)>,
}

/// A memory as `show` and `list` print it (docs/cli.md), at the valid time the read asked about.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct MemoryView {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    /// At the time asked about (engine/src/validity.rs).
    pub status: ReadStatus,
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    pub scope: String,
    pub text: String,
    pub source: Option<String>,
    pub fact_key: Option<String>,
    pub asserted_at: Timestamp,
    pub stale_since: Option<Timestamp>,
    pub effective_at: Option<Timestamp>,
    pub cause: String,
    /// Active memories this one is in a pending conflict with.
    pub conflicts_with: Vec<MemoryId>,
    pub conflicts: Vec<ConflictId>,
    pub merged_count: u32,
    pub retired_reason: Option<String>,
    /// When this version is true in the world from: its effective time, else when asserted.
    pub valid_from: Timestamp,
    /// When it stopped (or stops) being true: the next version's `valid_from`; null while open.
    pub valid_to: Option<Timestamp>,
    /// The distinct named sources of its observations.
    pub sources: Vec<String>,
    /// Distinct sources, observations without a source counting as one: the same source saying
    /// the same thing again is provenance, not another vote.
    pub independent_sources: u32,
    /// When and by whom the text was erased (`text` is empty then); `null` otherwise.
    pub erased: Option<ErasedMark>,
    /// Active memories that each add, like this one, a detail of their own to one earlier version
    /// (linked `co_enriches`, engine/src/co_enrich.rs).
    pub co_enriches: Vec<MemoryId>,
    /// How much its word counts (docs/design.md §13).
    pub authority: Authority,
    /// The principal that saved it.
    pub principal: String,
    /// Where in a transcript it was said, when it was imported from one.
    pub evidence: Option<Evidence>,
    /// When it stops being true unless renewed (`status` reads `expired` from then); null: never.
    pub expires_at: Option<Timestamp>,
    /// The time to live its expiry was given as, in seconds (what a refresh renews it by).
    pub ttl_seconds: Option<u64>,
}

/// One version in `history`.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct VersionView {
    pub memory_id: MemoryId,
    pub version: u32,
    pub text: String,
    /// At the time asked about.
    pub status: ReadStatus,
    pub asserted_at: Timestamp,
    pub stale_since: Option<Timestamp>,
    pub effective_at: Option<Timestamp>,
    pub cause: String,
    pub valid_from: Timestamp,
    pub valid_to: Option<Timestamp>,
    /// When and by whom the text was erased (`text` is empty then); `null` otherwise.
    pub erased: Option<ErasedMark>,
    /// The principal that saved this version, and its authority.
    pub principal: String,
    pub authority: Authority,
    /// When this version stops being true unless renewed; null: never.
    pub expires_at: Option<Timestamp>,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct HistoryView {
    pub root_id: MemoryId,
    /// Newest first.
    pub versions: Vec<VersionView>,
    pub edges: Vec<EdgeRecord>,
}

/// One classification in `why`.
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Decision {
    pub seq: u64,
    pub recorded_at: Timestamp,
    pub incoming: MemoryId,
    pub candidate: MemoryId,
    pub method: Method,
    pub scores: serde_json::Map<String, serde_json::Value>,
    pub relation: Relation,
    pub gate: String,
    pub thresholds: serde_json::Map<String, serde_json::Value>,
    pub reason: String,
    pub outcome: PairOutcome,
    pub model: Option<ModelVerdict>,
    /// When and by whom the reason (and the model's answer) was erased; `null` otherwise.
    pub erased: Option<ErasedMark>,
    /// The principal whose save made the decision, and whom it acted for.
    pub principal: String,
    pub actor: String,
}

/// Counts for `stats`.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Stats {
    pub events: u64,
    pub memories: std::collections::BTreeMap<String, u64>,
    pub by_type: std::collections::BTreeMap<String, u64>,
    pub conflicts: std::collections::BTreeMap<String, u64>,
    pub merged_observations: u64,
}

/// What `verify` reports (docs/cli.md).
#[derive(Clone, Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct VerifyView {
    #[serde(flatten)]
    pub ledger: VerifyReport,
    pub views_consistent: bool,
    /// Views whose content differs from a fresh replay.
    pub inconsistent_views: Vec<String>,
}

fn to_map(pairs: &[(Name, f64)]) -> serde_json::Map<String, serde_json::Value> {
    pairs.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect()
}

/// The views of one store as the commands read them. Cheap to copy: it holds the ledger, and
/// each view's reader is made when asked for.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    ledger: &'a Ledger,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(ledger: &'a Ledger) -> Self {
        Reader { ledger }
    }

    pub(crate) fn store(&self) -> &'a Store {
        self.ledger.store()
    }

    pub(crate) fn beliefs(&self) -> BeliefReader<'a> {
        BeliefReader::new(self.ledger.store())
    }

    pub(crate) fn conflict_queue(&self) -> ConflictReader<'a> {
        ConflictReader::new(self.ledger.store())
    }

    pub(crate) fn edges(&self) -> EdgeReader<'a> {
        EdgeReader::new(self.ledger.store())
    }

    /// A belief by id.
    pub(crate) fn record(&self, id: MemoryId) -> Result<MemoryRecord, EngineError> {
        match self.beliefs().get(id)? {
            Some(r) => Ok(r),
            None => match self.beliefs().observation(id)? {
                Some(o) => match o.merged_into {
                    Some(into) => self.beliefs().get(into)?.ok_or(NotFound::Memory(into).into()),
                    None => Err(NotFound::NotABelief(id).into()),
                },
                None => Err(NotFound::Memory(id).into()),
            },
        }
    }

    /// The current (newest active) version of the lineage `id` belongs to.
    pub(crate) fn current_of(&self, id: MemoryId) -> Result<MemoryRecord, EngineError> {
        let record = self.record(id)?;
        self.beliefs().current(record.root_id)?.ok_or_else(|| Conflict::NoActiveVersion { root: record.root_id }.into())
    }

    /// The next free version number of a lineage.
    pub(crate) fn next_version(&self, root: MemoryId) -> Result<u32, EngineError> {
        Ok(self.beliefs().lineage(root)?.iter().map(|r| r.version).max().unwrap_or(0) + 1)
    }

    /// A conflict by id.
    pub(crate) fn conflict(&self, id: ConflictId) -> Result<ConflictRecord, EngineError> {
        self.conflict_queue().get(id)?.ok_or(NotFound::Conflict(id).into())
    }

    /// A memory id from a full id or a unique prefix of at least 6 hex digits.
    pub(crate) fn resolve_memory_id(&self, text: &str) -> Result<MemoryId, EngineError> {
        let text = text.trim().to_ascii_lowercase();
        check_prefix(&text)?;
        if let Ok(id) = text.parse::<MemoryId>() {
            return Ok(id);
        }
        let found = self.beliefs().ids_with_prefix(&text, 2)?;
        match found.as_slice() {
            [one] => Ok(*one),
            [] => Err(NotFound::MemoryPrefix(text).into()),
            many => {
                let matches = many.iter().map(|i| i.short()).collect::<Vec<_>>().join(", ");
                Err(BadInput::AmbiguousMemoryPrefix { prefix: text, matches }.into())
            }
        }
    }

    /// A conflict id from a full id or a unique prefix of at least 6 hex digits.
    pub(crate) fn resolve_conflict_id(&self, text: &str) -> Result<ConflictId, EngineError> {
        let text = text.trim().to_ascii_lowercase();
        check_prefix(&text)?;
        if let Ok(id) = text.parse::<ConflictId>() {
            return Ok(id);
        }
        let found = self.conflict_queue().ids_with_prefix(&text)?;
        match found.as_slice() {
            [one] => Ok(*one),
            [] => Err(NotFound::ConflictPrefix(text).into()),
            _ => Err(BadInput::AmbiguousConflictPrefix(text).into()),
        }
    }

    /// `r` as a read at valid time `t` sees it, in its lineage (every version of it).
    pub(crate) fn view(
        &self,
        r: MemoryRecord,
        lineage: &[MemoryRecord],
        t: Timestamp,
    ) -> Result<MemoryView, EngineError> {
        let value = validity::value_at(lineage, t).map(|v| v.memory_id);
        let valid_to = validity::timeline_end(&r, lineage);
        let mut conflicts_with = Vec::new();
        for cid in &r.conflicts {
            if let Some(c) = self.conflict_queue().get(*cid)? {
                for other in std::iter::once(c.incoming).chain(c.candidates.iter().map(|s| s.memory_id)) {
                    if other != r.memory_id
                        && !conflicts_with.contains(&other)
                        && self.beliefs().get(other)?.is_some_and(|o| o.status == Status::Active)
                    {
                        conflicts_with.push(other);
                    }
                }
            }
        }
        let status = validity::status_at(&r, value, t);
        let independent_sources = r.independent_sources();
        let evidence = self.beliefs().observation(r.memory_id)?.and_then(|o| o.observed.evidence);

        Ok(MemoryView {
            memory_id: r.memory_id,
            root_id: r.root_id,
            version: r.version,
            status,
            memory_type: r.memory_type,
            scope: r.scope,
            text: r.text,
            source: r.source,
            fact_key: r.fact_key,
            asserted_at: r.asserted_at,
            stale_since: r.stale_since,
            effective_at: r.effective_at,
            cause: r.cause,
            conflicts_with,
            conflicts: r.conflicts,
            merged_count: r.merged_count,
            retired_reason: r.retired_reason,
            valid_from: r.valid_from,
            valid_to,
            sources: r.sources,
            independent_sources,
            erased: r.erased,
            // Filled in by the reads that give it (`show_linked`, `list`), not by recall's
            // candidates.
            co_enriches: Vec::new(),
            authority: r.authority,
            principal: r.principal,
            evidence,
            expires_at: r.expires_at,
            ttl_seconds: r.ttl_seconds,
        })
    }

    /// A memory as a read at valid time `t` sees it.
    pub(crate) fn show(&self, id: MemoryId, t: Timestamp) -> Result<MemoryView, EngineError> {
        let r = self.record(id)?;
        let lineage = self.beliefs().lineage(r.root_id)?;
        self.view(r, &lineage, t)
    }

    /// [`Reader::show`] with the memory's co-enrichments (`co_enriches`).
    pub(crate) fn show_linked(&self, id: MemoryId, t: Timestamp) -> Result<MemoryView, EngineError> {
        let mut m = self.show(id, t)?;
        m.co_enriches = self.co_enriches(m.memory_id)?;
        Ok(m)
    }

    /// The active memories linked `co_enriches` with `id`.
    pub(crate) fn co_enriches(&self, id: MemoryId) -> Result<Vec<MemoryId>, EngineError> {
        Ok(crate::co_enrich::siblings(*self, id)?.into_iter().map(|s| s.memory_id).collect())
    }

    /// Memories filtered by type, scope and their status at valid time `t` (`None` status: all).
    pub(crate) fn list(
        &self,
        memory_type: Option<MemoryType>,
        scopes: &Readable,
        status: Option<ReadStatus>,
        limit: usize,
        t: Timestamp,
    ) -> Result<Vec<MemoryView>, EngineError> {
        let all = self.beliefs().scan(|_| true, usize::MAX)?;
        // Each lineage's value at `t`, from the records just read.
        let mut lineages: HashMap<MemoryId, Vec<MemoryRecord>> = HashMap::new();
        for r in &all {
            lineages.entry(r.root_id).or_default().push(r.clone());
        }
        let values: HashMap<MemoryId, MemoryId> = lineages
            .iter()
            .filter_map(|(root, versions)| validity::value_at(versions, t).map(|v| (*root, v.memory_id)))
            .collect();
        let mut records: Vec<MemoryRecord> = all
            .into_iter()
            .filter(|r| {
                memory_type.is_none_or(|ty| r.memory_type == ty)
                    && scopes.covers(&r.scope)
                    && status.is_none_or(|s| validity::status_at(r, values.get(&r.root_id).copied(), t) == s)
            })
            .collect();
        records.sort_by(|a, b| b.asserted_at.cmp(&a.asserted_at).then(b.observed_seq.cmp(&a.observed_seq)));
        records.truncate(limit);
        records
            .into_iter()
            .map(|r| {
                let lineage = lineages.get(&r.root_id).map(Vec::as_slice).unwrap_or_default();
                let mut m = self.view(r, lineage, t)?;
                m.co_enriches = self.co_enriches(m.memory_id)?;
                Ok(m)
            })
            .collect()
    }

    /// Every version of the lineage `id` belongs to, newest first, with its interval and its
    /// status at valid time `t`.
    pub(crate) fn history(&self, id: MemoryId, t: Timestamp) -> Result<HistoryView, EngineError> {
        let r = self.record(id)?;
        let lineage = self.beliefs().lineage(r.root_id)?;
        let value = validity::value_at(&lineage, t).map(|v| v.memory_id);
        let mut versions: Vec<VersionView> = lineage
            .iter()
            .cloned()
            .map(|v| VersionView {
                status: validity::status_at(&v, value, t),
                valid_to: validity::timeline_end(&v, &lineage),
                memory_id: v.memory_id,
                version: v.version,
                text: v.text,
                asserted_at: v.asserted_at,
                stale_since: v.stale_since,
                effective_at: v.effective_at,
                cause: v.cause,
                valid_from: v.valid_from,
                erased: v.erased,
                principal: v.principal,
                authority: v.authority,
                expires_at: v.expires_at,
            })
            .collect();
        versions.reverse();
        let mut edges = Vec::new();
        for v in &versions {
            for e in self.edges().touching(v.memory_id)? {
                if !edges.contains(&e) {
                    edges.push(e);
                }
            }
        }
        Ok(HistoryView { root_id: r.root_id, versions, edges })
    }

    /// Every classification that involved `id` (or the pair `id`–`other`), flagged or dropped.
    pub(crate) fn why(&self, id: MemoryId, other: Option<MemoryId>) -> Result<Vec<Decision>, EngineError> {
        let audit = AuditReader::new(self.ledger.store());
        let mut out = Vec::new();
        for seq in audit.seqs(id, other)? {
            let Some(event) = self.ledger.get(seq)? else { continue };
            let erased = event.erased.as_ref().map(ErasedMark::of);
            let principal = event.principal.clone().unwrap_or_else(|| OWNER.to_string());
            let actor = event.actor.clone();
            if let EventBody::PairClassified(b) = event.body {
                out.push(Decision {
                    seq,
                    recorded_at: event.recorded_at,
                    incoming: b.incoming,
                    candidate: b.candidate,
                    method: b.method,
                    scores: to_map(&b.scores),
                    relation: b.relation,
                    gate: b.gate.to_string(),
                    thresholds: to_map(&b.thresholds),
                    reason: b.reason,
                    outcome: b.outcome,
                    model: b.model,
                    erased,
                    principal,
                    actor,
                });
            }
        }
        Ok(out)
    }

    pub(crate) fn conflicts(&self, status: Option<ConflictStatus>) -> Result<Vec<ConflictRecord>, EngineError> {
        Ok(self.conflict_queue().list(status)?)
    }

    /// Events from `since`, at most `limit`, optionally only those naming `memory`.
    pub(crate) fn log(
        &self,
        since: u64,
        limit: usize,
        memory: Option<MemoryId>,
        keep: &dyn Fn(&Event) -> Result<bool, EngineError>,
    ) -> Result<Vec<Event>, EngineError> {
        let mut out = Vec::new();
        for event in self.ledger.scan(since)? {
            let event = event?;
            if memory.is_none_or(|m| event.body.memory_ids().contains(&m)) && keep(&event)? {
                out.push(event);
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Counts of the memories and conflicts in `scopes` (the ledger's events, all of them).
    pub(crate) fn stats(&self, scopes: &Readable) -> Result<Stats, EngineError> {
        let mut stats = Stats { events: self.ledger.head().seq, ..Stats::default() };
        let mut visible = std::collections::HashSet::new();
        for r in self.beliefs().scan(|r| scopes.covers(&r.scope), usize::MAX)? {
            visible.insert(r.memory_id);
            *stats.memories.entry(r.status.to_string()).or_default() += 1;
            if r.status == Status::Active {
                *stats.by_type.entry(r.memory_type.to_string()).or_default() += 1;
            }
            stats.merged_observations += r.merged_count as u64;
        }
        for c in self.conflict_queue().list(None)? {
            if visible.contains(&c.incoming) || c.candidates.iter().any(|s| visible.contains(&s.memory_id)) {
                *stats.conflicts.entry(c.status.as_str().to_string()).or_default() += 1;
            }
        }
        Ok(stats)
    }
}

/// Views whose stored content in `ledger`'s store differs from a replay into a scratch store.
pub(crate) fn inconsistent_views(ledger: &Ledger, views: &Views) -> Result<Vec<String>, EngineError> {
    let scratch = std::env::temp_dir().join(format!("memledger-verify-{}", MemoryId::random().hex()));
    let result = (|| -> Result<Vec<String>, EngineError> {
        let store = Store::open(&scratch, &views.tables(), true, OpenOptions::default().wait)?;
        views.replay_into(ledger, &store)?;
        let mut bad = Vec::new();
        for table in views.names() {
            if views.dump_store(ledger.store(), table)? != views.dump_store(&store, table)? {
                bad.push(table.to_string());
            }
        }
        Ok(bad)
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn check_prefix(text: &str) -> Result<(), EngineError> {
    if !is_hex_prefix(text) {
        return Err(BadInput::NotAnId(text.to_string()).into());
    }
    if text.len() < MIN_PREFIX {
        return Err(BadInput::PrefixTooShort { prefix: text.to_string(), min: MIN_PREFIX }.into());
    }
    Ok(())
}
