//! `Memledger`: a store opened for commands. One writer at a time within the process (a mutex)
//! and across processes (RocksDB's lock).

use rustc_hash::FxHashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use memledger_ledger::{Appended, CommandMeta, Ledger, NewEvent, OpenOptions, SeqRange};
use memledger_projector::Views;
use memledger_projector::audit::AuditProjector;
use memledger_projector::beliefs::{BeliefReader, BeliefsProjector};
use memledger_projector::conflicts::{ConflictReader, ConflictsProjector};
use memledger_projector::edges::{EdgeReader, EdgesProjector};
use memledger_schemas::*;
use serde::Serialize;

use crate::classify::{INDEX_TERMS_VERSION, index_terms};
use crate::config::EngineConfig;
use crate::error::EngineError;
use crate::input::{SaveRequest, validate_actor};
use crate::pipeline::PreparedSave;

/// When a write must be on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Synced before the call returns.
    Synced,
    /// Written, visible, and durable at the next `sync` (group commit).
    Deferred,
}

/// What a save did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Added,
    Merged,
    Versioned,
    Conflict,
    Historical,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Added => "added",
            Outcome::Merged => "merged",
            Outcome::Versioned => "versioned",
            Outcome::Conflict => "conflict",
            Outcome::Historical => "historical",
        }
    }
}

/// The result of `save`, as docs/cli.md names it.
#[derive(Clone, Debug, Serialize)]
pub struct SaveResult {
    pub outcome: Outcome,
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    pub conflict_id: Option<ConflictId>,
    pub replayed: bool,
    pub seqs: Vec<u64>,
    /// The conflict was opened and settled at once by effective time.
    pub settled_by_effective_time: bool,
}

/// An open store.
pub struct Memledger {
    pub(crate) ledger: Ledger,
    pub(crate) views: Views,
    /// The recall index over active memories, kept in step by `commit_with` (engine/src/recall.rs).
    pub(crate) text: memledger_projector::TextIndex,
    pub(crate) config: EngineConfig,
    /// The models over HTTP, when configured (engine/src/models).
    pub(crate) models: crate::models::Models,
    /// Analyses of candidate texts, reused across saves (engine/src/pipeline.rs).
    pub(crate) analyses: Mutex<FxHashMap<MemoryId, Arc<crate::classify::lexical::Analysis>>>,
    /// The candidate terms' postings as far as candidate search has read them from the text
    /// index, kept in step by `commit_with` (engine/src/term_cache.rs).
    pub(crate) terms: Mutex<crate::term_cache::TermCache>,
    write: Mutex<()>,
    notes: Vec<String>,
    /// Events this process wrote to the ledger or replayed into views: past
    /// [`FLUSH_ON_CLOSE_AFTER`], closing flushes RocksDB's memtables so that the next open does not
    /// replay a long write-ahead log.
    pub(crate) written: std::sync::atomic::AtomicU64,
}

/// See [`Memledger::written`]. About 100 MB of write-ahead log at the benchmark's mix of events:
/// a longer log would make the next command's open slow to replay it.
const FLUSH_ON_CLOSE_AFTER: u64 = 50_000;

fn all_views() -> Views {
    Views::new(vec![
        Box::new(BeliefsProjector),
        Box::new(EdgesProjector),
        Box::new(ConflictsProjector),
        Box::new(AuditProjector),
    ])
}

impl Memledger {
    /// Open (or, with `options.create`, create) the store at `dir` and bring its views up to date.
    pub fn open(dir: &Path, options: &OpenOptions) -> Result<Memledger, EngineError> {
        Self::open_with(dir, options, EngineConfig::default())
    }

    pub fn open_with(dir: &Path, options: &OpenOptions, config: EngineConfig) -> Result<Memledger, EngineError> {
        let views = all_views();
        // The embedding cache is a table of its own, not a view: rebuilds never clear it.
        let tables = [views.tables(), vec![crate::models::embed::EMBED_TABLE.into()]].concat();
        let ledger = Ledger::open(dir, options, &tables)?;
        // Belief records are read several times per save (ledger/src/read_cache.rs).
        ledger.store().cache_point_reads(memledger_projector::beliefs::TABLE);
        // Unsynced writes (a bulk save's, every view's) go to a writer thread, so the next save
        // is planned while RocksDB inserts this one's keys (ledger/src/write_behind.rs).
        ledger.store().write_behind();
        let mut notes = views.catch_up(&ledger)?;
        let (text, text_notes) = memledger_projector::TextIndex::open(&ledger, index_terms, INDEX_TERMS_VERSION)?;
        notes.extend(text_notes);
        let models = crate::models::Models::new(config.models.clone());
        notes.extend(models.open_notes(ledger.store()));
        Ok(Memledger {
            ledger,
            views,
            text,
            config,
            models,
            analyses: Mutex::new(FxHashMap::default()),
            terms: Mutex::new(Default::default()),
            write: Mutex::new(()),
            notes,
            written: Default::default(),
        })
    }

    /// Notes from opening (views rebuilt because their version changed).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    pub fn views(&self) -> &Views {
        &self.views
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub(crate) fn beliefs(&self) -> BeliefReader<'_> {
        BeliefReader::new(self.ledger.store())
    }

    pub(crate) fn conflict_queue(&self) -> ConflictReader<'_> {
        ConflictReader::new(self.ledger.store())
    }

    pub(crate) fn edges(&self) -> EdgeReader<'_> {
        EdgeReader::new(self.ledger.store())
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, ()> {
        self.write.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Append one command's events against `expected_head` and apply them to the views.
    pub(crate) fn commit(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        events: Vec<NewEvent>,
    ) -> Result<CommitResult, EngineError> {
        self.commit_with(expected_head, meta, events, Durability::Synced)
    }

    /// [`Memledger::commit`] with a choice of durability: `Deferred` writes become durable at the
    /// next [`Memledger::sync`] (group commit for the bulk path).
    pub(crate) fn commit_with(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        events: Vec<NewEvent>,
        durability: Durability,
    ) -> Result<CommitResult, EngineError> {
        let sync = durability == Durability::Synced;
        let touched = self.activeness_of(&events)?;
        match self.ledger.append_with(expected_head, meta, events, sync)? {
            Appended::Committed(events) => {
                self.written.fetch_add(events.len() as u64, std::sync::atomic::Ordering::Relaxed);
                if let Err(e) = self.views.apply(&self.ledger, &events) {
                    let _ = self.reset_term_cache();
                    return Err(e.into());
                }
                if self.follow_activeness(touched).is_err() {
                    // The command is committed; only the cache is unsure: start it again.
                    let _ = self.reset_term_cache();
                }
                // A merged save's memory never becomes active: no save will meet it again.
                for event in &events {
                    if let EventBody::BeliefMerged(b) = &event.body {
                        self.forget_analysis(b.memory_id);
                    }
                }
                // The text index follows the belief view. Its (fsync-heavy) commit waits for the
                // next recall or for close: the ledger is the record, and an index that missed a
                // commit catches up from its checkpoint on open (docs/adr/0005-text-index-commits.md).
                // The memories this command analysed (a save's new memory) give the index their
                // terms, so the indexing thread does not analyse their text again.
                let applied = self.text.apply_known(self.ledger.store(), &events, &|id| self.known_index_terms(id));
                if applied.is_err() || self.term_cache().needs_reset(self.config.term_cache_max_ids) {
                    let _ = self.reset_term_cache();
                }
                applied?;
                Ok(CommitResult::Committed(events))
            }
            Appended::Replayed(range) => Ok(CommitResult::Replayed(range)),
        }
    }

    /// Whether the in-memory term cache agrees with the belief view (`None`), or the first place
    /// it does not: each cached term's holders against the active memories whose text gives that
    /// term. For tests; reads every memory. Commits nothing, so a cache entry loaded from a stale
    /// commit of the text index shows.
    #[doc(hidden)]
    pub fn term_cache_disagreement(&self) -> Result<Option<String>, EngineError> {
        let _guard = self.lock();
        let (truth, _) = self.candidate_terms_of_beliefs()?;
        let truth =
            |scope: &str, term: &str| truth.get(&(scope.to_string(), term.to_string())).cloned().unwrap_or_default();
        Ok(self.term_cache().disagreement(&truth))
    }

    /// What candidate search should find, from the belief view alone: per (scope, index term),
    /// the active memories whose text gives the term, in id order; and how many are active.
    #[allow(clippy::type_complexity)]
    pub(crate) fn candidate_terms_of_beliefs(
        &self,
    ) -> Result<(FxHashMap<(String, String), Vec<MemoryId>>, u64), EngineError> {
        let mut truth: FxHashMap<(String, String), Vec<MemoryId>> = FxHashMap::default();
        let mut active = 0u64;
        for r in self.beliefs().scan(|r| r.status == Status::Active, usize::MAX)? {
            active += 1;
            for term in index_terms(&r.text) {
                truth.entry((r.scope.clone(), term)).or_default().push(r.memory_id);
            }
        }
        Ok((truth, active))
    }

    /// Bring the text index up to the belief view and commit it, then empty the term cache
    /// (whose invariant needs the commit: engine/src/term_cache.rs). Under the write lock. When
    /// the index cannot be committed, the cache stays unusable (every candidate search an
    /// error) until a later reset succeeds.
    pub(crate) fn reset_term_cache(&self) -> Result<(), EngineError> {
        let mut cache = self.term_cache();
        cache.mark_stale();
        self.sync_text_index()?;
        cache.clear();
        Ok(())
    }

    pub(crate) fn term_cache(&self) -> MutexGuard<'_, crate::term_cache::TermCache> {
        self.terms.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether each memory is an active belief now (before a command's events apply).
    /// A memory observed by the same command is not a belief yet: no read.
    fn activeness_of(&self, events: &[NewEvent]) -> Result<Vec<(MemoryId, bool)>, EngineError> {
        let beliefs = self.beliefs();
        let observed =
            |id: MemoryId| events.iter().any(|e| matches!(&e.body, EventBody::MemoryObserved(b) if b.memory_id == id));
        touched_memories(events)
            .into_iter()
            .map(|id| {
                let active = !observed(id) && beliefs.get(id)?.is_some_and(|r| r.status == Status::Active);
                Ok((id, active))
            })
            .collect()
    }

    /// Tell the term cache about every memory whose activeness the applied command changed.
    fn follow_activeness(&self, before: Vec<(MemoryId, bool)>) -> Result<(), EngineError> {
        let beliefs = self.beliefs();
        for (id, was) in before {
            let Some(r) = beliefs.get(id)? else { continue };
            let now = r.status == Status::Active;
            if now != was {
                let analysis = self.analysis_of(&r);
                self.term_cache().changed(&self.text, &r.scope, analysis.index_terms(), id, now)?;
            }
            if !now {
                self.forget_analysis(id);
            }
        }
        Ok(())
    }

    /// Save one memory through the belief pipeline; durable when it returns.
    pub fn save(&self, request: SaveRequest, actor: &str) -> Result<SaveResult, EngineError> {
        self.save_with(request, actor, Durability::Synced)
    }

    /// Make every `Deferred` write so far durable (one fsync for the whole group).
    pub fn sync(&self) -> Result<(), EngineError> {
        Ok(self.ledger.sync()?)
    }

    /// Save with a choice of durability. A `Deferred` save is visible to the next save at once
    /// (its candidates, its idempotency key) but is acknowledged only after [`Memledger::sync`].
    pub fn save_with(
        &self,
        request: SaveRequest,
        actor: &str,
        durability: Durability,
    ) -> Result<SaveResult, EngineError> {
        // The actor is checked before the request, as its error comes first.
        let actor = validate_actor(actor)?;
        self.save_checked(PreparedSave::validated(request)?, actor, durability)
    }

    /// Save a [`PreparedSave`] (validated and analysed ahead, off the write lock), as
    /// [`Memledger::save_with`] saves a request.
    pub fn save_prepared(
        &self,
        prepared: PreparedSave,
        actor: &str,
        durability: Durability,
    ) -> Result<SaveResult, EngineError> {
        self.save_checked(prepared, validate_actor(actor)?, durability)
    }

    /// The save itself, once the actor and the request have been checked.
    fn save_checked(
        &self,
        prepared: PreparedSave,
        actor: String,
        durability: Durability,
    ) -> Result<SaveResult, EngineError> {
        let save = &prepared.save;
        let _guard = self.lock();
        if self.term_cache().needs_reset(self.config.term_cache_max_ids) {
            self.reset_term_cache()?;
        }
        if let Some(key) = &save.idempotency_key
            && let Some(range) = self.ledger.idempotent(key)?
        {
            return self.replayed(range);
        }
        let head = self.ledger.head().seq;
        let plan = self.plan_save(&prepared, head)?;
        let mut meta = CommandMeta::new(actor);
        meta.idempotency_key = save.idempotency_key.clone();
        match self.commit_with(head, &meta, plan, durability)? {
            CommitResult::Committed(events) => self.summarize(&events, false),
            CommitResult::Replayed(range) => self.replayed(range),
        }
    }

    fn replayed(&self, range: SeqRange) -> Result<SaveResult, EngineError> {
        let events = self.ledger.range(range)?;
        self.summarize(&events, true)
    }

    /// The save result a command's events amount to.
    pub(crate) fn summarize(&self, events: &[Event], replayed: bool) -> Result<SaveResult, EngineError> {
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        let observed = events
            .iter()
            .find_map(|e| match &e.body {
                EventBody::MemoryObserved(b) => Some(b.memory_id),
                _ => None,
            })
            .ok_or_else(|| {
                EngineError::Conflict("that idempotency key belongs to a command that was not a save".into())
            })?;
        let mut result = SaveResult {
            outcome: Outcome::Added,
            memory_id: observed,
            root_id: observed,
            version: 1,
            conflict_id: None,
            replayed,
            seqs,
            settled_by_effective_time: false,
        };
        for e in events {
            match &e.body {
                EventBody::BeliefMerged(b) => {
                    result.outcome = Outcome::Merged;
                    result.memory_id = b.into;
                    if let Some(r) = self.beliefs().get(b.into)? {
                        result.root_id = r.root_id;
                        result.version = r.version;
                    }
                }
                EventBody::BeliefVersioned(b) => {
                    result.outcome = Outcome::Versioned;
                    result.root_id = b.root_id;
                    result.version = b.version;
                }
                EventBody::BeliefHistorical(b) => {
                    result.outcome = Outcome::Historical;
                    result.root_id = b.root_id;
                    result.version = b.version;
                }
                EventBody::ConflictOpened(b) => {
                    result.outcome = Outcome::Conflict;
                    result.conflict_id = Some(b.conflict_id);
                }
                EventBody::ConflictResolved(b) => {
                    result.settled_by_effective_time = true;
                    result.outcome = match b.action {
                        ResolutionAction::KeepNew => Outcome::Versioned,
                        _ => Outcome::Historical,
                    };
                    for effect in &b.effects {
                        if let Effect::Reparented { memory_id, to_root, to_version, .. } = effect
                            && *memory_id == observed
                        {
                            result.root_id = *to_root;
                            result.version = *to_version;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(result)
    }
}

impl Drop for Memledger {
    /// Commit what the text index has applied, so the next open need not catch it up. Best
    /// effort: a failure here only costs that catch-up.
    fn drop(&mut self) {
        let flush_store = self.written.load(std::sync::atomic::Ordering::Relaxed) >= FLUSH_ON_CLOSE_AFTER;
        // The index's commit and RocksDB's flush of its memtables are independent, and both are
        // long after a bulk save: they run side by side. (The commit writes the log buffer out
        // first, as always, so it never gets ahead of the ledger.)
        std::thread::scope(|scope| {
            if flush_store {
                let store = self.ledger.store();
                scope.spawn(move || {
                    let _ = store.flush();
                });
            }
            let _ = self.text.flush();
        });
        // Freeing a large store's caches is one deallocation per entry; a process about to exit
        // need not wait for that, so a thread of its own frees them.
        let analyses = std::mem::take(self.analyses.get_mut().unwrap_or_else(|p| p.into_inner()));
        let terms = std::mem::take(self.terms.get_mut().unwrap_or_else(|p| p.into_inner()));
        if analyses.len() >= FREE_BEHIND_ANALYSES {
            std::thread::spawn(move || drop((analyses, terms)));
        }
    }
}

/// How many cached analyses make closing a store free its caches on a thread of their own.
const FREE_BEHIND_ANALYSES: usize = 10_000;

/// The memories a command's events may make active or inactive: every subject of a belief
/// event or of a resolution's effect. Must cover every status change `BeliefsProjector` makes.
fn touched_memories(events: &[NewEvent]) -> Vec<MemoryId> {
    let mut out = Vec::new();
    let effects = |effects: &[Effect], out: &mut Vec<MemoryId>| {
        for effect in effects {
            match *effect {
                Effect::MadeStale { memory_id } | Effect::Introduced { memory_id, .. } => out.push(memory_id),
                Effect::Reparented { .. } | Effect::EdgeAdded { .. } => {}
            }
        }
    };
    for e in events {
        match &e.body {
            EventBody::BeliefAdded(b) => out.push(b.memory_id),
            EventBody::BeliefVersioned(b) => out.extend([b.memory_id, b.replaces]),
            EventBody::BeliefEdited(b) => out.extend([b.memory_id, b.replaces]),
            EventBody::BeliefHistorical(b) => out.push(b.memory_id),
            EventBody::BeliefRetired(b) => out.push(b.memory_id),
            EventBody::ConflictResolved(b) => effects(&b.effects, &mut out),
            EventBody::ResolutionReverted(b) => effects(&b.undone, &mut out),
            EventBody::MemoryObserved(_)
            | EventBody::PairClassified(_)
            | EventBody::BeliefMerged(_)
            | EventBody::ConflictOpened(_) => {}
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What [`Memledger::commit`] did.
pub(crate) enum CommitResult {
    Committed(Vec<Event>),
    Replayed(SeqRange),
}
