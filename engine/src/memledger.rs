//! `Memledger`: a store opened for commands. One writer at a time within the process (a mutex)
//! and across processes (RocksDB's lock).
//!
//! This module holds the store's parts and keeps them in step: the ledger, the views, the text
//! index with its term cache (`Index`) and the analysis cache. Every command that writes takes
//! the write lock, has its events planned by the module of its concept (`pipeline` for a save,
//! `resolve`, `scan`, `models::judge`), and appends them through `Memledger::commit_with`,
//! the one write path; reads go to `Reader`, `recall` and `models`. The methods here are thin
//! on purpose: what a command decides lives with its concept, not with the store.

use std::io::{BufRead, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::{Mutex, MutexGuard};

use memledger_ledger::{
    AppendError, Appended, CommandMeta, ImportReport, Ledger, NewEvent, OpenOptions, SeqRange, Stream, read_stream,
};
use memledger_projector::Views;
use memledger_projector::audit::AuditProjector;
use memledger_projector::beliefs::{BeliefsProjector, MemoryRecord};
use memledger_projector::conflicts::{ConflictRecord, ConflictStatus, ConflictsProjector};
use memledger_projector::edges::EdgesProjector;
use memledger_projector::principals::{PrincipalReader, PrincipalsProjector};
use memledger_projector::text_index::{Scopes, TEXT_VIEW, TextIndex, TextRebuild};
use memledger_projector::transcripts::{FileProgress, TranscriptReader, TranscriptsProjector};
use memledger_schemas::*;

use crate::access::{Caller, Principal, Readable};
use crate::analysis_cache::AnalysisCache;
use crate::asof::{AsOf, seq_as_of};
use crate::candidates::CandidateSearch;
use crate::classify::{Classification, classify_lexical};
use crate::config::EngineConfig;
use crate::durable::Syncs;
use crate::erase::EraseResult;
use crate::error::{BadInput, Conflict, EngineError, NotFound};
use crate::expiry::ExpiryChange;
use crate::group_commit::{GROUP_MAX_COMMANDS, Group, GroupFailure, TicketState};
use crate::index::{Index, activeness_of};
use crate::input::{SaveRequest, validate_actor, validate_text};
use crate::models::Models;
use crate::models::embed::{self, EmbedReport};
use crate::models::judge::{self, JudgeReport};
use crate::pipeline::{Planner, PreparedSave, SaveResult, summarize};
use crate::principals::{self, PrincipalChange, PrincipalView};
use crate::reads::{self, Decision, HistoryView, MemoryView, Reader, Stats, VerifyView};
use crate::recall::{self, RecallResult};
use crate::resolve::{self, ForgetResult, ResolveResult, UpdateResult};
use crate::review;
use crate::scan::{self, ScanOptions, ScanReport};
use crate::validity::{END_OF_TIME, ReadStatus};

/// When a write must be on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Synced before the call returns.
    Synced,
    /// Written, visible, and durable at the next `sync` (group commit).
    Deferred,
}

/// Which events an export keeps ([`Memledger::export_kept`]).
pub type Keep<'a> = &'a dyn Fn(&Event) -> Result<bool, EngineError>;

/// An open store.
pub struct Memledger {
    ledger: Ledger,
    views: Views,
    /// The recall index over active memories and the candidate terms' cache, kept in step by
    /// [`Memledger::commit_with`].
    index: Index,
    config: EngineConfig,
    /// The models over HTTP, when configured (engine/src/models).
    models: Models,
    /// Analyses of candidate texts, reused across saves.
    analyses: AnalysisCache,
    /// The write lock: every command that appends, and the follow of a shared ledger, run under
    /// it; it guards the group commit's state (engine/src/group_commit.rs).
    write: Mutex<Group>,
    /// Saves waiting for the write lock: a save that sees one on a shared ledger stages its
    /// events for a group commit instead of appending alone.
    saves_waiting: AtomicUsize,
    /// The seq through which the ledger is known durable, and the syncs running: the synced
    /// saves of a local store commit under the write lock and sync after it (crate::durable).
    syncs: Syncs,
    notes: Vec<String>,
    /// Events this process wrote to the ledger or replayed into views: past
    /// [`FLUSH_ON_CLOSE_AFTER`], closing flushes RocksDB's memtables so that the next open does not
    /// replay a long write-ahead log.
    written: AtomicU64,
}

/// How many times a save decides again when another machine moved the shared ledger's head.
const SHARED_REDECISIONS: u32 = 32;

/// After how many lost races a save decides holding the shared ledger's exclusive turn.
const SHARED_ALONE_AFTER: u32 = 8;

/// Events copied from a shared ledger at most that [`Memledger::follow_shared`] applies as this
/// machine's own commands' events (the term cache kept); a longer catch-up replays the views in
/// chunks and starts the term cache again.
const FOLLOW_IN_STEP_MAX: usize = 4096;

/// See [`Memledger::written`]. About 100 MB of write-ahead log at the benchmark's mix of events:
/// a longer log would make the next command's open slow to replay it.
const FLUSH_ON_CLOSE_AFTER: u64 = 50_000;

/// How many cached analyses make closing a store free its caches on a thread of their own.
const FREE_BEHIND_ANALYSES: usize = 10_000;

fn all_views() -> Views {
    Views::new(vec![
        Box::new(BeliefsProjector),
        Box::new(EdgesProjector),
        Box::new(ConflictsProjector),
        Box::new(AuditProjector),
        Box::new(PrincipalsProjector),
        Box::new(TranscriptsProjector),
    ])
}

/// What [`Memledger::commit`] did.
enum CommitResult {
    Committed(Vec<Event>),
    Replayed(SeqRange),
}

impl CommitResult {
    /// The seqs of the command's events.
    fn seqs(&self) -> Vec<u64> {
        match self {
            CommitResult::Committed(events) => events.iter().map(|e| e.seq).collect(),
            CommitResult::Replayed(r) => (r.first..=r.last).collect(),
        }
    }
}

/// Opening, the parts, and the one write path.
impl Memledger {
    /// Open (or, with `options.create`, create) the store at `dir` and bring its views up to date.
    pub fn open(dir: &Path, options: &OpenOptions) -> Result<Memledger, EngineError> {
        Self::open_with(dir, options, EngineConfig::default())
    }

    pub fn open_with(dir: &Path, options: &OpenOptions, config: EngineConfig) -> Result<Memledger, EngineError> {
        let views = all_views();
        // The embedding cache is a table of its own, not a view: rebuilds never clear it.
        let tables = [views.tables(), vec![embed::EMBED_TABLE.into(), crate::exports::EXPORTS_TABLE.into()]].concat();
        let ledger = Ledger::open(dir, options, &tables)?;
        // Belief records are read several times per save (ledger/src/read_cache.rs).
        ledger.store().cache_point_reads(memledger_projector::beliefs::TABLE);
        // Unsynced writes (a bulk save's, every view's) go to a writer thread, so the next save
        // is planned while RocksDB inserts this one's keys (ledger/src/write_behind.rs).
        ledger.store().write_behind();
        // Commands staged for a group commit when the store was last closed never reached the
        // shared ledger (or did, and were copied back): the views saw them, so they are replayed.
        let rewound = ledger.rewound_on_open();
        if rewound {
            views.rebuild(&ledger, None)?;
        }
        let mut notes = views.catch_up(&ledger)?;
        let (index, text_notes) = Index::open(&ledger)?;
        notes.extend(text_notes);
        if rewound {
            index.text().rebuild(&ledger)?;
            notes.push(
                "commands staged for the shared ledger when the store closed were dropped: views replayed".into(),
            );
        }
        let models = Models::new(config.models.clone());
        notes.extend(models.open_notes(ledger.store()));
        if let Some(seq) = ledger.purge_pending()? {
            // Erasures committed (or copied from a shared ledger) before their purge finished (a
            // killed process, a machine opening after others erased): finish every one of them.
            for event in ledger.scan(seq)? {
                if let EventBody::MemoryErased(b) = event?.body {
                    embed::forget_vectors(ledger.store(), &b.content_hashes)?;
                }
            }
            index.text().purge()?;
            ledger.purge()?;
        }
        Ok(Memledger {
            ledger,
            views,
            index,
            config,
            models,
            analyses: AnalysisCache::default(),
            write: Mutex::new(Group::default()),
            saves_waiting: AtomicUsize::new(0),
            syncs: Syncs::default(),
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

    /// The models this store was opened with.
    pub fn models(&self) -> &Models {
        &self.models
    }

    /// The text index, for inspection (its checkpoint, document count) and maintenance.
    pub fn text_index(&self) -> &TextIndex {
        self.index.text()
    }

    fn reader(&self) -> Reader<'_> {
        Reader::new(&self.ledger)
    }

    fn candidate_search(&self) -> CandidateSearch<'_> {
        CandidateSearch {
            reader: self.reader(),
            index: &self.index,
            top_k: self.config.top_k,
            budget: self.config.candidate_budget,
        }
    }

    /// The write lock, with nothing staged: commands staged for a group commit are flushed to
    /// the shared ledger first, so the caller sees acknowledged state only.
    fn lock(&self) -> Result<MutexGuard<'_, Group>, EngineError> {
        let mut group = self.write.lock();
        self.flush_group(&mut group)?;
        Ok(group)
    }

    /// The write lock for a save, which may join the commands staged (engine/src/group_commit.rs).
    fn lock_for_save(&self) -> Result<MutexGuard<'_, Group>, EngineError> {
        self.saves_waiting.fetch_add(1, Ordering::SeqCst);
        let mut group = self.write.lock();
        self.saves_waiting.fetch_sub(1, Ordering::SeqCst);
        if group.views_ahead() {
            self.replay_views(&mut group)?;
        }
        Ok(group)
    }

    /// Send the staged commands to the shared ledger in one transaction and give the exclusive
    /// turn back; their saves learn the outcome from `group`. When the flush fails the copy has
    /// been rewound, so the views, which applied the staged commands, are replayed. Under the
    /// write lock.
    fn flush_group(&self, group: &mut Group) -> Result<(), EngineError> {
        if group.views_ahead() {
            self.replay_views(group)?;
        }
        if !self.ledger.has_staged() {
            group.flushed(Ok(()));
            return Ok(());
        }
        match self.ledger.flush_staged() {
            Ok(()) => {
                group.flushed(Ok(()));
                Ok(())
            }
            Err(e) => {
                let location = self.ledger.shared().map(|log| log.location()).unwrap_or_default();
                group.flushed(Err(GroupFailure::of(&e, location)));
                group.set_views_ahead();
                self.replay_views(group)
            }
        }
    }

    /// Replay the views and the text index from the ledger (their events were dropped from
    /// it), and start the term cache again. Under the write lock.
    fn replay_views(&self, group: &mut Group) -> Result<(), EngineError> {
        self.views.rebuild(&self.ledger, None)?;
        self.index.text().rebuild(&self.ledger)?;
        self.index.reset(&self.ledger)?;
        group.views_replayed();
        Ok(())
    }

    /// Append one command of `caller` (acting as `actor`, checked) against `expected_head` and
    /// apply it, synced.
    fn commit(
        &self,
        expected_head: u64,
        caller: &Caller,
        actor: String,
        events: Vec<NewEvent>,
    ) -> Result<CommitResult, EngineError> {
        self.commit_with(expected_head, &CommandMeta::by(caller.name(), actor), events, Durability::Synced)
    }

    /// Append one command's events against `expected_head` and apply them to the views, the term
    /// cache and the text index. `Deferred` writes become durable at the next
    /// [`Memledger::sync`] (group commit for the bulk path). Under the write lock.
    fn commit_with(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        events: Vec<NewEvent>,
        durability: Durability,
    ) -> Result<CommitResult, EngineError> {
        let sync = durability == Durability::Synced;
        self.apply_command(events, |events| self.ledger.append_with(expected_head, meta, events, sync))
    }

    /// As [`Memledger::commit_with`], the events staged for a group commit on a shared ledger
    /// (engine/src/group_commit.rs): applied, not yet acknowledged.
    fn stage(
        &self,
        expected_head: u64,
        meta: &CommandMeta,
        events: Vec<NewEvent>,
    ) -> Result<CommitResult, EngineError> {
        self.apply_command(events, |events| self.ledger.stage(expected_head, meta, events))
    }

    /// Write one command's events with `append` and apply what it wrote.
    fn apply_command(
        &self,
        events: Vec<NewEvent>,
        append: impl FnOnce(Vec<NewEvent>) -> Result<Appended, AppendError>,
    ) -> Result<CommitResult, EngineError> {
        match append(events)? {
            Appended::Committed(events) => {
                self.written.fetch_add(events.len() as u64, Ordering::Relaxed);
                // The memories this command analysed (a save's new memory) give the index their
                // terms, so the indexing thread does not analyse their text again.
                self.apply_appended(&events, &|id| self.analyses.index_terms(id))?;
                Ok(CommitResult::Committed(events))
            }
            Appended::Replayed(range) => Ok(CommitResult::Replayed(range)),
        }
    }

    /// Apply events just appended to the ledger (or copied from a shared one), which the views
    /// have not seen yet, to the views, the term cache and the text index. `known` gives the
    /// index terms of memories already analysed. Under the write lock.
    fn apply_appended(
        &self,
        events: &[Event],
        known: &dyn Fn(MemoryId) -> Option<Vec<String>>,
    ) -> Result<(), EngineError> {
        let beliefs = self.reader().beliefs();
        let bodies: Vec<&EventBody> = events.iter().map(|e| &e.body).collect();
        let touched = activeness_of(&beliefs, &bodies)?;
        if let Err(e) = self.views.apply(&self.ledger, events) {
            let _ = self.index.reset(&self.ledger);
            return Err(e.into());
        }
        if self.index.follow(&beliefs, &self.analyses, touched).is_err() {
            // The events are committed; only the cache is unsure: start it again.
            let _ = self.index.reset(&self.ledger);
        }
        // A merged save's memory never becomes active: no save will meet it again.
        for event in events {
            if let EventBody::BeliefMerged(b) = &event.body {
                self.analyses.forget(b.memory_id);
            }
        }
        // The text index follows the belief view. Its (fsync-heavy) commit waits for the next
        // recall or for close: the ledger is the record, and an index that missed a commit
        // catches up from its checkpoint on open (docs/adr/0005-text-index-commits.md).
        let applied = self.index.text().apply_known(self.ledger.store(), events, known);
        if applied.is_err() || self.index.needs_reset(self.config.term_cache_max_ids) {
            let _ = self.index.reset(&self.ledger);
        }
        Ok(applied?)
    }

    /// Copy what other machines appended to the shared ledger and bring the views, the term
    /// cache and the text index along, as this machine's own commands do (nothing to do for a
    /// store of its own). Under the write lock.
    ///
    /// A long catch-up (a machine that was away) replays the views in chunks and starts the
    /// term cache again. An erasure another machine appended has blanked this store's copies of
    /// the events it names (the ledger does that as it copies); the views drop the texts as
    /// they apply it, and then the caches and the files are purged as after an erasure made here.
    fn follow_shared(&self) -> Result<(), EngineError> {
        if self.ledger.has_staged() {
            // This process holds the exclusive turn: no other machine appended.
            return Ok(());
        }
        let before = self.ledger.head().seq;
        let (copied, kept) = self.ledger.catch_up_shared_keeping(FOLLOW_IN_STEP_MAX)?;
        if copied == 0 {
            return Ok(());
        }
        if let Some(events) = kept
            && !events.iter().any(|e| matches!(e.body, EventBody::MemoryErased(_)))
        {
            return self.apply_appended(&events, &|_| None);
        }
        let caught_up = self.views.catch_up(&self.ledger);
        self.index.reset(&self.ledger)?;
        caught_up?;
        if self.ledger.purge_pending()?.is_some() {
            for event in self.ledger.scan(before + 1)? {
                if let EventBody::MemoryErased(erased) = event?.body {
                    for memory in &erased.memory_ids {
                        self.analyses.forget(*memory);
                    }
                    embed::forget_vectors(self.ledger.store(), &erased.content_hashes)?;
                }
            }
            self.index.text().purge()?;
            self.ledger.purge()?;
        }
        Ok(())
    }

    /// Catch up with the shared ledger now (a long-running process between commands: a server,
    /// `export --follow`). Returns the head seq.
    pub fn catch_up(&self) -> Result<u64, EngineError> {
        let _guard = self.lock()?;
        self.follow_shared()?;
        Ok(self.ledger.head().seq)
    }

    /// Catch the text index up when the views moved without it: an import, the scratch store of
    /// an as-of read, or a deferred group not yet synced.
    fn text_index_current(&self) -> Result<(), EngineError> {
        let _guard = self.lock()?;
        self.index.sync(&self.ledger)
    }

    /// Whether the in-memory term cache agrees with the belief view (`None`), or the first place
    /// it does not: each cached term's holders against the active memories whose text gives that
    /// term. For tests; reads every memory. Commits nothing, so a cache entry loaded from a stale
    /// commit of the text index shows.
    #[doc(hidden)]
    pub fn term_cache_disagreement(&self) -> Result<Option<String>, EngineError> {
        let _guard = self.lock()?;
        self.index.disagreement(&self.reader().beliefs())
    }
}

/// Saves.
impl Memledger {
    /// Save one memory through the belief pipeline as the store's owner; durable when it returns.
    pub fn save(&self, request: SaveRequest, actor: &str) -> Result<SaveResult, EngineError> {
        self.save_with(request, actor, Durability::Synced)
    }

    /// Save one memory as `caller`: in its own scope unless the request names one it may write
    /// (or propose) in, with the authority it claims (at most its grant's) or its default.
    pub fn save_by(&self, request: SaveRequest, caller: &Caller) -> Result<SaveResult, EngineError> {
        self.save_by_with(request, caller, Durability::Synced)
    }

    /// [`Memledger::save_by`] with a choice of durability.
    pub fn save_by_with(
        &self,
        request: SaveRequest,
        caller: &Caller,
        durability: Durability,
    ) -> Result<SaveResult, EngineError> {
        let actor = validate_actor(&caller.actor)?;
        // Analysed before the write lock, so that saves in flight together analyse side by side.
        self.save_checked(PreparedSave::new(request)?, caller, actor, durability)
    }

    /// [`Memledger::save_prepared`] by `caller`.
    pub fn save_prepared_by(
        &self,
        prepared: PreparedSave,
        caller: &Caller,
        durability: Durability,
    ) -> Result<SaveResult, EngineError> {
        self.save_checked(prepared, caller, validate_actor(&caller.actor)?, durability)
    }

    /// Make every `Deferred` write so far durable (one fsync for the whole group).
    pub fn sync(&self) -> Result<(), EngineError> {
        // On a shared ledger the deferred saves are staged: the lock flushes them.
        let mut group = self.lock()?;
        if let Some(failure) = group.take_deferred_failure() {
            return Err(failure.error());
        }
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
        self.save_checked(PreparedSave::new(request)?, &Caller::owner(actor.clone()), actor, durability)
    }

    /// Save a [`PreparedSave`] (validated and analysed ahead, off the write lock), as
    /// [`Memledger::save_with`] saves a request.
    pub fn save_prepared(
        &self,
        prepared: PreparedSave,
        actor: &str,
        durability: Durability,
    ) -> Result<SaveResult, EngineError> {
        let actor = validate_actor(actor)?;
        self.save_checked(prepared, &Caller::owner(actor.clone()), actor, durability)
    }

    /// The save itself, once the actor and the request have been checked: in the caller's own
    /// scope when the request named none, as far as its grants allow.
    fn save_checked(
        &self,
        mut prepared: PreparedSave,
        caller: &Caller,
        actor: String,
        durability: Durability,
    ) -> Result<SaveResult, EngineError> {
        // A declared relation names a memory the caller may read; the save goes to its scope
        // unless it names one, and then it must be the same.
        if let Some(declared) = &mut prepared.save.declared {
            let id = self.reader().resolve_memory_id(&declared.target)?;
            let target = self.reader().record(id)?;
            caller.access().require(Verb::Read, &target.scope)?;
            if !prepared.save.scope_named {
                prepared.save.scope = target.scope.clone();
                prepared.save.scope_named = true;
            } else if prepared.save.scope != target.scope {
                return Err(BadInput::DeclaredAcrossScopes {
                    target: id,
                    target_scope: target.scope,
                    scope: prepared.save.scope.clone(),
                }
                .into());
            }
            declared.id = Some(id);
        }
        if !prepared.save.scope_named {
            prepared.save.scope = caller.principal.own_scope();
        }
        let stance = crate::access::stance_of(caller.access(), &prepared.save)?;
        let save = &prepared.save;
        let private_spans = save.private_spans;
        // The save's span (docs/adr/0039-traces.md): its scope and what became of it, never its text.
        let span = tracing::info_span!(
            "memledger.save",
            memledger.scope = %save.scope,
            memledger.memory_type = %save.memory_type,
            memledger.authority = %stance.authority,
            memledger.outcome = tracing::field::Empty,
            memledger.memory_id = tracing::field::Empty,
            memledger.version = tracing::field::Empty,
            memledger.conflict_id = tracing::field::Empty,
        );
        let _entered = span.enter();
        let said = |result: Result<SaveResult, EngineError>| {
            if let Ok(r) = &result {
                span.record("memledger.outcome", r.outcome.as_str());
                span.record("memledger.memory_id", tracing::field::display(r.memory_id));
                span.record("memledger.version", i64::from(r.version));
                if let Some(c) = r.conflict_id {
                    span.record("memledger.conflict_id", tracing::field::display(c));
                }
            }
            result.map(|r| SaveResult { private_spans_removed: private_spans, ..r })
        };
        // With a shared ledger another machine may move the head while this one decides: the
        // save catches up and decides again, a bounded number of times (model calls, if any,
        // are made again too, and never inside the shared ledger's transaction).
        let mut attempt = 0;
        loop {
            let mut group = self.lock_for_save()?;
            if self.index.needs_reset(self.config.term_cache_max_ids) {
                self.index.reset(&self.ledger)?;
            }
            // Saves of this process at once, or a bulk save, go to a shared ledger as one group
            // (engine/src/group_commit.rs).
            let grouped = self.ledger.is_shared()
                && (durability == Durability::Deferred
                    || group.holds_turn()
                    || self.saves_waiting.load(Ordering::SeqCst) > 0);
            if grouped && !group.holds_turn() {
                group.hold_turn(self.ledger.exclusive_turn()?);
            }
            // A save that lost the race to other machines decides alone (its model calls too):
            // the head cannot move under it again.
            let _turn = if !grouped && attempt >= SHARED_ALONE_AFTER { self.ledger.exclusive_turn()? } else { None };
            self.follow_shared()?;
            if let Some(key) = &save.idempotency_key
                && let Some(range) = self.ledger.idempotent(key)?
            {
                if self.ledger.is_staged_key(key) {
                    // Staged by a save not yet acknowledged: acknowledge it first.
                    self.flush_group(&mut group)?;
                    drop(group);
                    continue;
                }
                let result = summarize(self.reader(), &self.ledger.range(range)?, true);
                if durability == Durability::Synced && !self.ledger.is_shared() {
                    // Its first save may still be waiting for the sync that acknowledges it.
                    drop(group);
                    self.durable_through(range.last)?;
                }
                return result;
            }
            let head = self.ledger.head().seq;
            let planner = Planner {
                reader: self.reader(),
                index: &self.index,
                analyses: &self.analyses,
                models: &self.models,
                config: &self.config,
            };
            let plan = planner.plan_save(&prepared, head, stance)?;
            let mut meta = CommandMeta::by(caller.name(), actor.clone());
            meta.idempotency_key = save.idempotency_key.clone();
            if grouped {
                let staged = tracing::info_span!(
                    "memledger.save.commit",
                    memledger.events = plan.len() as i64,
                    memledger.grouped = true
                )
                .in_scope(|| self.stage(head, &meta, plan))?;
                let events = match staged {
                    CommitResult::Committed(events) => events,
                    CommitResult::Replayed(range) => {
                        return said(summarize(self.reader(), &self.ledger.range(range)?, true));
                    }
                };
                let result = said(summarize(self.reader(), &events, false));
                let full = self.ledger.staged_commands() >= GROUP_MAX_COMMANDS;
                if durability == Durability::Deferred {
                    group.staged_deferred();
                    if full {
                        self.flush_group(&mut group)?;
                    }
                    return result;
                }
                let ticket = group.staged();
                if !full {
                    // Hand the lock to the saves queued behind this one, so that they stage
                    // theirs; then the first to hold it again flushes the group.
                    MutexGuard::unlock_fair(group);
                    group = self.lock_for_save()?;
                }
                if matches!(group.state(ticket), TicketState::Staged) {
                    self.flush_group(&mut group)?;
                }
                match group.state(ticket) {
                    TicketState::Acknowledged => return result,
                    TicketState::Staged => unreachable!("a flush leaves no save staged"),
                    TicketState::Failed(failure) if failure.decide_again() && attempt < SHARED_REDECISIONS => {
                        attempt += 1;
                        continue;
                    }
                    TicketState::Failed(failure) => return Err(failure.error()),
                }
            }
            // A synced save of a local store commits unsynced under the write lock and syncs
            // after letting it go, so that the saves queued behind it share its sync.
            let group_sync = durability == Durability::Synced && !self.ledger.is_shared();
            let written = if group_sync { Durability::Deferred } else { durability };
            let committed = tracing::info_span!("memledger.save.commit", memledger.events = plan.len() as i64)
                .in_scope(|| self.commit_with(head, &meta, plan, written));
            let result = match committed {
                Ok(CommitResult::Committed(events)) => said(summarize(self.reader(), &events, false)),
                Ok(CommitResult::Replayed(range)) => said(summarize(self.reader(), &self.ledger.range(range)?, true)),
                Err(EngineError::Conflict(Conflict::HeadMoved { .. }))
                    if self.ledger.is_shared() && attempt < SHARED_REDECISIONS =>
                {
                    attempt += 1;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if group_sync {
                // Through the head, not the save's own last seq: a replayed command may have
                // been appended by a save whose sync is still to come.
                let through = self.ledger.head().seq;
                drop(group);
                self.durable_through(through)?;
            }
            return result;
        }
    }

    /// Make the ledger durable through `seq` (group commit of a local store's synced saves,
    /// crate::durable): a sync that began after the append, or one of its own beside those running.
    fn durable_through(&self, seq: u64) -> Result<(), EngineError> {
        self.syncs.durable_through(
            seq,
            || self.ledger.head().seq,
            |through| {
                tracing::info_span!("memledger.save.sync", memledger.through = through as i64)
                    .in_scope(|| self.ledger.sync())
                    .map_err(EngineError::from)
            },
        )
    }
}

/// Transcript imports (`memledger import sessions`, engine/src/transcripts): where each file's
/// import stands, and the event that commits one chunk of it.
impl Memledger {
    /// Where the import of `file` stands and the chunks committed for its transcript `identity`
    /// ([`memledger_projector::transcripts::identity`]), for `caller` reading `scope`.
    pub fn transcript_progress(
        &self,
        caller: &Caller,
        scope: &str,
        file: &str,
        identity: Option<&str>,
    ) -> Result<(Option<FileProgress>, Vec<Hash>), EngineError> {
        caller.access().require(Verb::Read, scope)?;
        let reader = TranscriptReader::new(self.ledger.store());
        let progress = reader.file(file)?;
        let chunks = match identity {
            Some(id) => reader.chunks(id)?,
            None => Vec::new(),
        };
        Ok((progress, chunks))
    }

    /// Record that a chunk of a transcript is imported: its saves are made (made durable here,
    /// with this event). `key` makes a chunk committed twice (a killed import run again) one
    /// event; needs `write` in the `scope` the chunk's memories were saved in. The seqs appended
    /// (or, replayed, the first event's), and whether the key was committed already.
    pub fn record_transcript_progress(
        &self,
        caller: &Caller,
        scope: &str,
        progress: TranscriptProgressed,
        key: String,
    ) -> Result<(Vec<u64>, bool), EngineError> {
        caller.access().require(Verb::Write, scope)?;
        let actor = validate_actor(&caller.actor)?;
        let _guard = self.lock()?;
        self.follow_shared()?;
        let head = self.ledger.head().seq;
        let mut meta = CommandMeta::by(caller.name(), actor);
        meta.idempotency_key = Some(key);
        let events = vec![NewEvent::from(EventBody::TranscriptProgressed(progress))];
        match self.commit_with(head, &meta, events, Durability::Synced)? {
            CommitResult::Committed(events) => Ok((events.iter().map(|e| e.seq).collect(), false)),
            CommitResult::Replayed(range) => Ok(((range.first..=range.last).collect(), true)),
        }
    }
}

/// Commands on a person's word (engine/src/resolve.rs), the contradiction scan and the judge.
impl Memledger {
    /// An explicit edit: a new version of the belief, unconditionally, optionally only if the
    /// current version is `expect_version`.
    pub fn update(
        &self,
        id: MemoryId,
        text: &str,
        expect_version: Option<u32>,
        actor: &str,
    ) -> Result<UpdateResult, EngineError> {
        self.update_by(id, text, expect_version, &Caller::owner(actor))
    }

    /// [`Memledger::update`] by `caller`: it needs `write` in the belief's scope and at least the
    /// belief's authority; the new version carries the higher of that and its own default.
    pub fn update_by(
        &self,
        id: MemoryId,
        text: &str,
        expect_version: Option<u32>,
        caller: &Caller,
    ) -> Result<UpdateResult, EngineError> {
        self.revise_by(id, Some(text), expect_version, ExpiryChange::Keep, caller)
    }

    /// An update that may change the text (`None`: it stays) and the expiry: a new version
    /// unconditionally (with `expect_version`, only if the current version is that one).
    pub fn revise_by(
        &self,
        id: MemoryId,
        text: Option<&str>,
        expect_version: Option<u32>,
        expiry: ExpiryChange,
        caller: &Caller,
    ) -> Result<UpdateResult, EngineError> {
        let actor = validate_actor(&caller.actor)?;
        let text = text.map(validate_text).transpose()?;
        if let Some(text) = &text {
            crate::input::refuse_secrets_in_revision("updated text", text)?;
        }
        let _guard = self.lock()?;
        self.follow_shared()?;
        let head = self.ledger.head().seq;
        let current = self.reader().current_of(id)?;
        let authority = crate::access::supersede(caller.access(), Verb::Write, &current)?;
        let (events, mut result) = resolve::plan_update(self.reader(), id, text, expect_version, authority, expiry)?;
        result.seqs = self.commit(head, caller, actor, events)?.seqs();
        Ok(result)
    }

    /// Retire a belief: out of recall and dedup, kept in history.
    pub fn forget(&self, id: MemoryId, reason: Option<String>, actor: &str) -> Result<ForgetResult, EngineError> {
        self.forget_by(id, reason, &Caller::owner(actor))
    }

    /// [`Memledger::forget`] by `caller`: it needs `write` in the belief's scope and at least its
    /// authority.
    pub fn forget_by(
        &self,
        id: MemoryId,
        reason: Option<String>,
        caller: &Caller,
    ) -> Result<ForgetResult, EngineError> {
        let actor = validate_actor(&caller.actor)?;
        let _guard = self.lock()?;
        self.follow_shared()?;
        let head = self.ledger.head().seq;
        let (events, mut result) = resolve::plan_forget(self.reader(), id, reason)?;
        let target = self.reader().record(result.memory_id)?;
        crate::access::supersede(caller.access(), Verb::Write, &target)?;
        result.seqs = self.commit(head, caller, actor, events)?.seqs();
        Ok(result)
    }

    /// Erase the text of memory `id` (of every version of its lineage with `lineage`) from every
    /// event, view, index and cache of the store, and from its files; an erasure event records
    /// what was erased (docs/adr/0017-erasure.md). With `dry_run`, only say what would be.
    pub fn erase(
        &self,
        id: MemoryId,
        lineage: bool,
        reason: Option<String>,
        dry_run: bool,
        actor: &str,
    ) -> Result<EraseResult, EngineError> {
        self.erase_by(id, lineage, reason, dry_run, &Caller::owner(actor))
    }

    /// [`Memledger::erase`] by `caller`: it needs `erase` in the scope of every memory erased (a
    /// dry run, `read`).
    pub fn erase_by(
        &self,
        id: MemoryId,
        lineage: bool,
        reason: Option<String>,
        dry_run: bool,
        caller: &Caller,
    ) -> Result<EraseResult, EngineError> {
        self.erase_planned(|ledger| crate::erase::plan_erase(ledger, id, lineage), reason, dry_run, caller)
    }

    /// Erase, as [`Memledger::erase`] does, every version that went stale or was retired before
    /// `before` (a retention policy): active versions stay. Nothing to erase writes nothing.
    pub fn erase_retired_before(
        &self,
        before: Timestamp,
        reason: Option<String>,
        dry_run: bool,
        actor: &str,
    ) -> Result<EraseResult, EngineError> {
        self.erase_retired_before_by(before, reason, dry_run, &Caller::owner(actor))
    }

    /// [`Memledger::erase_retired_before`] by `caller`: a retention policy over the whole store,
    /// which needs `admin` on `*` (and `erase` everywhere).
    pub fn erase_retired_before_by(
        &self,
        before: Timestamp,
        reason: Option<String>,
        dry_run: bool,
        caller: &Caller,
    ) -> Result<EraseResult, EngineError> {
        if !caller.access().administers_store() {
            return Err(caller
                .access()
                .refusal(Verb::Admin, "*", " (a retention policy erases across scopes)".into())
                .into());
        }
        self.erase_planned(|ledger| crate::erase::plan_retired_before(ledger, before), reason, dry_run, caller)
    }

    /// An erasure of what `plan` finds, planned and carried out under the write lock.
    fn erase_planned(
        &self,
        plan: impl FnOnce(&Ledger) -> Result<EraseResult, EngineError>,
        reason: Option<String>,
        dry_run: bool,
        caller: &Caller,
    ) -> Result<EraseResult, EngineError> {
        let actor = validate_actor(&caller.actor)?;
        let _guard = self.lock()?;
        // On a shared ledger an erasure is planned and appended holding the exclusive turn: no
        // other machine's append can overtake it (erasures are rare; the others wait for one).
        let _turn = if dry_run { None } else { self.ledger.exclusive_turn()? };
        self.follow_shared()?;
        let head = self.ledger.head().seq;
        let mut plan = plan(&self.ledger)?;
        let verb = if dry_run { Verb::Read } else { Verb::Erase };
        for memory in &plan.memories {
            let beliefs = self.reader().beliefs();
            let scope = match beliefs.get(*memory)? {
                Some(r) => r.scope,
                None => beliefs.observation(*memory)?.map(|o| o.observed.scope).unwrap_or_default(),
            };
            caller.access().require(verb, &scope)?;
        }
        if dry_run {
            return Ok(plan);
        }
        if plan.memories.is_empty() {
            plan.dry_run = false;
            return Ok(plan);
        }
        let store = self.ledger.store();
        let event = self.ledger.append_erasure(head, &CommandMeta::by(caller.name(), actor), plan.body(reason))?;
        plan.dry_run = false;
        plan.erasure_seq = Some(event.seq);
        let events = [event];
        // The views, the text index and the caches drop the texts; then the files are rewritten.
        let applied = self.views.apply(&self.ledger, &events).map_err(EngineError::from).and_then(|()| {
            self.index.text().apply(store, &events)?;
            self.index.reset(&self.ledger)
        });
        if let Err(e) = applied {
            // Committed: the next open catches the views and the index up, and purges.
            let _ = self.index.reset(&self.ledger);
            return Err(e);
        }
        for memory in &plan.memories {
            self.analyses.forget(*memory);
        }
        embed::forget_vectors(store, &plan.content_hashes)?;
        self.index.text().purge()?;
        self.ledger.purge()?;
        Ok(plan)
    }

    /// Resolve a pending conflict. `merge_text` is required for `merge`.
    pub fn resolve(
        &self,
        id: ConflictId,
        action: ResolutionAction,
        merge_text: Option<&str>,
        note: Option<String>,
        actor: &str,
    ) -> Result<ResolveResult, EngineError> {
        self.resolve_by(id, action, merge_text, note, &Caller::owner(actor), None)
    }

    /// Resolve as `caller`, on behalf of `by` (`judge:<model>`); a person when `None`. It needs
    /// `resolve` in the scope of every side (`write`, to accept or reject a proposal) and at least
    /// the authority the conflict needs.
    pub fn resolve_by(
        &self,
        id: ConflictId,
        action: ResolutionAction,
        merge_text: Option<&str>,
        note: Option<String>,
        caller: &Caller,
        by: Option<String>,
    ) -> Result<ResolveResult, EngineError> {
        let actor = validate_actor(&caller.actor)?;
        let merge_text = match (action, merge_text) {
            (ResolutionAction::Merge, Some(t)) => {
                let t = validate_text(t)?;
                crate::input::refuse_secrets_in_revision("merged text", &t)?;
                Some(t)
            }
            (ResolutionAction::Merge, None) => {
                return Err(BadInput::MergeNeedsText.into());
            }
            (_, _) => None,
        };
        let by = by.unwrap_or_else(|| format!("person:{actor}"));
        let _guard = self.lock()?;
        self.follow_shared()?;
        let head = self.ledger.head().seq;
        let conflict = self.reader().conflict(id)?;
        let authority = crate::access::settle(caller.access(), self.reader(), &conflict)?;
        let (events, mut result) = resolve::plan_resolve(self.reader(), id, action, merge_text, note, by, authority)?;
        result.seqs = self.commit(head, caller, actor, events)?.seqs();
        Ok(result)
    }

    /// Revert a conflict's resolution: a compensating event that undoes its exact effects and
    /// puts the conflict back in the queue.
    pub fn revert(&self, id: ConflictId, actor: &str) -> Result<ResolveResult, EngineError> {
        self.revert_by(id, &Caller::owner(actor))
    }

    /// [`Memledger::revert`] by `caller`, who needs what resolving it needs.
    pub fn revert_by(&self, id: ConflictId, caller: &Caller) -> Result<ResolveResult, EngineError> {
        let actor = validate_actor(&caller.actor)?;
        let _guard = self.lock()?;
        self.follow_shared()?;
        let head = self.ledger.head().seq;
        let conflict = self.reader().conflict(id)?;
        crate::access::settle(caller.access(), self.reader(), &conflict)?;
        let (events, mut result) = resolve::plan_revert(self.reader(), id)?;
        result.seqs = self.commit(head, caller, actor, events)?.seqs();
        Ok(result)
    }

    /// Look for contradictions among stored active memories and open conflicts for new ones
    /// (engine/src/scan.rs).
    pub fn scan_conflicts(&self, options: &ScanOptions, actor: &str) -> Result<ScanReport, EngineError> {
        self.scan_conflicts_by(options, &Caller::owner(actor))
    }

    /// [`Memledger::scan_conflicts`] by `caller`: over the scopes it may write in (one named in
    /// `options` must be one), opening conflicts as a save would.
    pub fn scan_conflicts_by(&self, options: &ScanOptions, caller: &Caller) -> Result<ScanReport, EngineError> {
        let actor = validate_actor(&caller.actor)?;
        let access = caller.access();
        if let Some(scope) = &options.scope {
            access.require(Verb::Write, scope)?;
        } else if !access.administers_store() && !access.reads_everything() {
            return Err(access.refusal(Verb::Write, "*", " (name a scope it may write in with --scope)".into()).into());
        }
        let mut open = |incoming: &MemoryRecord, candidate: &MemoryRecord, class: &Classification, model| {
            if !access.can(Verb::Write, &incoming.scope) {
                return Ok(None);
            }
            let _guard = self.lock()?;
            self.follow_shared()?;
            let head = self.ledger.head().seq;
            let Some((conflict_id, events)) =
                scan::plan_open_scanned(self.reader(), incoming, candidate, class, model, "found by conflicts scan")?
            else {
                return Ok(None);
            };
            Ok(Some((conflict_id, self.commit(head, caller, actor.clone(), events)?.seqs())))
        };
        scan::scan_conflicts(&self.candidate_search(), &self.models, &self.config, options, &mut open)
    }

    /// Run the judge over every pending conflict (engine/src/models/judge.rs). Decisive verdicts
    /// resolve (unless `dry_run`); `unsure`, a failed call or an unusable answer leave the
    /// conflict pending.
    pub fn judge_pending(&self, dry_run: bool, actor: &str) -> Result<JudgeReport, EngineError> {
        self.judge_pending_by(dry_run, &Caller::owner(actor))
    }

    /// [`Memledger::judge_pending`] by `caller`: over the pending conflicts it may settle, each
    /// resolved with its authority on the judge's verdict.
    pub fn judge_pending_by(&self, dry_run: bool, caller: &Caller) -> Result<JudgeReport, EngineError> {
        self.judge_pending_within(dry_run, caller, None)
    }

    /// [`Memledger::judge_pending_by`] within `budget` tokens (estimated before each call):
    /// the conflicts it does not cover stay pending for a later run (`left_for_budget`).
    pub fn judge_pending_within(
        &self,
        dry_run: bool,
        caller: &Caller,
        budget: Option<u64>,
    ) -> Result<JudgeReport, EngineError> {
        validate_actor(&caller.actor)?;
        let mut resolve = |id: ConflictId, action: ResolutionAction, rationale: String, by: String| {
            Ok(self.resolve_by(id, action, None, Some(rationale), caller, Some(by))?.seqs)
        };
        let settles =
            |conflict: &ConflictRecord| crate::access::settle(caller.access(), self.reader(), conflict).is_ok();
        judge::judge_pending(&self.models, self.reader(), dry_run, budget, &settles, &mut resolve)
    }

    /// Embed every active memory that has no vector of the configured model yet (after the model
    /// changed, or for memories saved before an embedder was configured).
    pub fn embed_missing(&self) -> Result<EmbedReport, EngineError> {
        self.embed_missing_with(false)
    }

    /// [`Memledger::embed_missing`]; with `dry_run`, only count what would be embedded (no call,
    /// no write). Writes only the vector cache, never the ledger.
    pub fn embed_missing_with(&self, dry_run: bool) -> Result<EmbedReport, EngineError> {
        embed::embed_missing(&self.models, self.reader(), dry_run)
    }
}

/// Principals, their grants and tokens (engine/src/principals.rs, engine/src/access.rs).
impl Memledger {
    fn principal_reader(&self) -> PrincipalReader<'_> {
        PrincipalReader::new(self.ledger.store())
    }

    /// The store's verifier secret, made on first use.
    fn verifier_secret(&self) -> Result<[u8; 32], EngineError> {
        let fresh: [u8; 32] = rand::random();
        let secret = self.ledger.secret(principals::VERIFIER_SECRET, Some(&fresh))?;
        Ok(secret.unwrap_or(fresh))
    }

    /// Commit one principal command of `caller` and answer with the principal as it now stands.
    fn commit_principal(
        &self,
        caller: &Caller,
        name: &str,
        plan: impl FnOnce(&PrincipalReader<'_>) -> Result<(Vec<NewEvent>, Option<String>), EngineError>,
    ) -> Result<PrincipalChange, EngineError> {
        let actor = validate_actor(&caller.actor)?;
        let _guard = self.lock()?;
        self.follow_shared()?;
        let head = self.ledger.head().seq;
        let (events, token) = plan(&self.principal_reader())?;
        let seqs = self.commit(head, caller, actor, events)?.seqs();
        let record = self.principal_reader().get(name)?.ok_or_else(|| NotFound::Principal(name.to_string()))?;
        Ok(PrincipalChange { principal: PrincipalView::of(&record), token, seqs })
    }

    /// Add principal `name` of `kind` with its first `grants`; the change carries its token,
    /// shown this once. Needs `admin` on `*`.
    pub fn principals_add(
        &self,
        caller: &Caller,
        name: &str,
        kind: PrincipalKind,
        grants: Vec<Grant>,
    ) -> Result<PrincipalChange, EngineError> {
        let secret = self.verifier_secret()?;
        self.commit_principal(caller, name, |reader| {
            let (events, token) = principals::plan_add(caller.access(), reader, &secret, name, kind, grants)?;
            Ok((events, Some(token)))
        })
    }

    /// Grant `grants` to `name`, each replacing its grant of the same pattern.
    pub fn principals_grant(
        &self,
        caller: &Caller,
        name: &str,
        grants: Vec<Grant>,
    ) -> Result<PrincipalChange, EngineError> {
        self.commit_principal(caller, name, |reader| {
            Ok((principals::plan_grant(caller.access(), reader, name, grants)?, None))
        })
    }

    /// Take back `name`'s grants of `patterns`, or (none given) revoke `name` itself: its token
    /// stops authenticating at once, on every machine as it follows the ledger.
    pub fn principals_revoke(
        &self,
        caller: &Caller,
        name: &str,
        patterns: Vec<String>,
        reason: Option<String>,
    ) -> Result<PrincipalChange, EngineError> {
        self.commit_principal(caller, name, |reader| {
            Ok((principals::plan_revoke(caller.access(), reader, name, patterns, reason)?, None))
        })
    }

    /// Replace `name`'s token; the change carries the new one, shown this once.
    pub fn principals_rotate(&self, caller: &Caller, name: &str) -> Result<PrincipalChange, EngineError> {
        let secret = self.verifier_secret()?;
        self.commit_principal(caller, name, |reader| {
            let (events, token) = principals::plan_rotate(caller.access(), reader, &secret, name)?;
            Ok((events, Some(token)))
        })
    }

    /// The principals `caller` may see: all of them for who administers the store, else itself.
    pub fn principals(&self, caller: &Caller) -> Result<Vec<PrincipalView>, EngineError> {
        let all = self.principal_reader().all()?;
        let access = caller.access();
        Ok(all
            .iter()
            .filter(|r| access.administers_store() || r.name == caller.name())
            .map(PrincipalView::of)
            .collect())
    }

    /// The principal `token` authenticates (never the owner: the store's own token is the
    /// server's to check). A wrong, rotated or revoked token is [`EngineError::Unauthenticated`].
    pub fn authenticate(&self, token: &str) -> Result<Principal, EngineError> {
        let secret = self.ledger.secret(principals::VERIFIER_SECRET, None)?;
        principals::authenticate(&self.principal_reader(), secret.as_ref(), token)
    }
}

/// The review page's reads and its one write of its own (engine/src/review.rs).
impl Memledger {
    /// A page of the conflict queue with both sides whole (`status` `None`: every conflict).
    pub fn conflict_page(
        &self,
        status: Option<ConflictStatus>,
        offset: usize,
        limit: usize,
        scopes: &Readable,
    ) -> Result<review::ConflictPage, EngineError> {
        review::conflict_page(self.reader(), &self.ledger, status, offset, limit, scopes)
    }

    /// Events newest first below `before` (none: from the head), filtered.
    pub fn event_page(
        &self,
        before: Option<u64>,
        limit: usize,
        filter: &review::EventFilter,
        visible: &dyn Fn(&Event) -> Result<bool, EngineError>,
    ) -> Result<review::Page<Event>, EngineError> {
        review::event_page(&self.ledger, before, limit, filter, visible)
    }

    /// Dropped pairs newest first below `before`.
    pub fn near_miss_page(
        &self,
        before: Option<u64>,
        limit: usize,
        kind: review::NearMissKind,
        scope: Option<&str>,
        scopes: &Readable,
    ) -> Result<review::Page<review::NearMiss>, EngineError> {
        review::near_miss_page(self.reader(), &self.ledger, before, limit, kind, scope, scopes)
    }

    /// Counts over time for the charts, of the events `visible` keeps and the conflicts in
    /// `scopes`.
    pub fn timeline(
        &self,
        scopes: &Readable,
        visible: &dyn Fn(&Event) -> Result<bool, EngineError>,
    ) -> Result<review::Timeline, EngineError> {
        review::timeline(self.reader(), &self.ledger, scopes, visible)
    }

    /// Open a conflict between two memories by a person's word; the conflict and the seqs.
    pub fn open_conflict(
        &self,
        a: MemoryId,
        b: MemoryId,
        note: Option<&str>,
        actor: &str,
    ) -> Result<(ConflictId, Vec<u64>), EngineError> {
        self.open_conflict_by(a, b, note, &Caller::owner(actor))
    }

    /// [`Memledger::open_conflict`] by `caller`, who needs `write` in both memories' scopes.
    pub fn open_conflict_by(
        &self,
        a: MemoryId,
        b: MemoryId,
        note: Option<&str>,
        caller: &Caller,
    ) -> Result<(ConflictId, Vec<u64>), EngineError> {
        let actor = validate_actor(&caller.actor)?;
        let _guard = self.lock()?;
        let head = self.ledger.head().seq;
        for id in [a, b] {
            let scope = self.reader().record(id)?.scope;
            caller.access().require(Verb::Write, &scope)?;
        }
        let lexical = |i: &MemoryRecord, c: &MemoryRecord| {
            classify_lexical(&i.text, &c.text, Some(i.memory_type), Some(c.memory_type), &self.config)
        };
        let (conflict_id, events) = review::plan_open_by_hand(self.reader(), a, b, note, lexical)?;
        Ok((conflict_id, self.commit(head, caller, actor, events)?.seqs()))
    }
}

/// Reads (engine/src/reads.rs, engine/src/recall.rs).
impl Memledger {
    /// A memory id from a full id or a unique prefix of at least 6 hex digits.
    pub fn resolve_memory_id(&self, text: &str) -> Result<MemoryId, EngineError> {
        self.reader().resolve_memory_id(text)
    }

    /// A conflict id from a full id or a unique prefix of at least 6 hex digits.
    pub fn resolve_conflict_id(&self, text: &str) -> Result<ConflictId, EngineError> {
        self.reader().resolve_conflict_id(text)
    }

    /// A memory as the belief view holds it: every scheduled change taken as arrived.
    pub fn show(&self, id: MemoryId) -> Result<MemoryView, EngineError> {
        self.show_at(id, END_OF_TIME)
    }

    /// A memory as it stands at valid time `valid_at` (engine/src/validity.rs).
    pub fn show_at(&self, id: MemoryId, valid_at: Timestamp) -> Result<MemoryView, EngineError> {
        self.reader().show_linked(id, valid_at)
    }

    /// Memories filtered by type, scope and status (`None` status: all), as the belief view
    /// holds them.
    pub fn list(
        &self,
        memory_type: Option<MemoryType>,
        scope: Option<&str>,
        status: Option<Status>,
        limit: usize,
    ) -> Result<Vec<MemoryView>, EngineError> {
        self.list_at(memory_type, scope, status.map(ReadStatus::from), limit, END_OF_TIME)
    }

    /// Memories filtered by type, scope and their status at valid time `valid_at`.
    pub fn list_at(
        &self,
        memory_type: Option<MemoryType>,
        scope: Option<&str>,
        status: Option<ReadStatus>,
        limit: usize,
        valid_at: Timestamp,
    ) -> Result<Vec<MemoryView>, EngineError> {
        let scopes = scope.map_or_else(Readable::everything, Readable::only);
        self.reader().list(memory_type, &scopes, status, limit, valid_at)
    }

    /// [`Memledger::list_at`] over the scopes `scopes` covers (those a principal may read).
    pub fn list_in(
        &self,
        memory_type: Option<MemoryType>,
        scopes: &Readable,
        status: Option<ReadStatus>,
        limit: usize,
        valid_at: Timestamp,
    ) -> Result<Vec<MemoryView>, EngineError> {
        self.reader().list(memory_type, scopes, status, limit, valid_at)
    }

    /// A page of the active memories in `scopes` (of `memory_type`, if given), newest first,
    /// from `offset`: read from the text index, so a page costs that page and not its scope
    /// (MCP resources). Each memory as it stands at `valid_at`; those expired then left out.
    pub fn browse(
        &self,
        memory_type: Option<MemoryType>,
        scopes: &Readable,
        offset: usize,
        limit: usize,
        valid_at: Timestamp,
    ) -> Result<reads::BrowsePage, EngineError> {
        self.text_index_current()?;
        let text = self.index.text();
        // One more than asked says whether a next page exists.
        let hits = text.newest(memory_type, scopes.scopes(), offset.saturating_add(limit).saturating_add(1))?;
        let more = hits.len() > offset.saturating_add(limit);
        let memories = hits
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|h| self.reader().show_linked(h.memory_id, valid_at))
            .collect::<Result<Vec<_>, _>>()?;
        // A memory expired at `valid_at` is left out of its page (the pages stay where they are:
        // an offset counts the index's memories).
        let memories = memories.into_iter().filter(|m| m.status != ReadStatus::Expired).collect();
        let scopes = text.scope_counts(scopes.scopes())?;
        Ok(reads::BrowsePage { memories, more, scopes })
    }

    /// Count `used` (a command's model calls) for `principal` on today's date (UTC) in the
    /// store: what budgets read ([`Memledger::usage`]). Kept beside the ledger, not in it.
    pub fn record_usage(&self, principal: &str, used: crate::models::TokenUsage) -> Result<(), EngineError> {
        if used.is_empty() {
            return Ok(());
        }
        // Counts are read, added to and written back: one writer at a time in this process.
        static COUNTING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _counting = COUNTING.lock().unwrap_or_else(|p| p.into_inner());
        let store = self.ledger.store();
        let day = crate::usage::day(Timestamp::now());
        let [p, c, n] = memledger_ledger::tables::UsageTable::get(store, &day, principal)?;
        let mut total = crate::models::TokenUsage { prompt_tokens: p, completion_tokens: c, calls: n };
        total.add(used);
        let mut batch = memledger_ledger::store::Batch::default();
        let counts = [total.prompt_tokens, total.completion_tokens, total.calls];
        memledger_ledger::tables::UsageTable::put(&mut batch, &day, principal, counts);
        store.write(batch, false)?;
        Ok(())
    }

    /// The model usage counted in this store on the day of `at` and in its month, by principal.
    pub fn usage(&self, at: Timestamp) -> Result<crate::usage::UsageReport, EngineError> {
        crate::usage::report(self.ledger.store(), at)
    }

    /// The scope of memory `id` (a belief, or an observation merged into one), if it was observed.
    pub fn scope_of(&self, id: MemoryId) -> Result<Option<String>, EngineError> {
        let beliefs = self.reader().beliefs();
        if let Some(r) = beliefs.get(id)? {
            return Ok(Some(r.scope));
        }
        Ok(beliefs.observation(id)?.map(|o| o.observed.scope))
    }

    /// Every version of a belief, as the belief view holds them.
    pub fn history(&self, id: MemoryId) -> Result<HistoryView, EngineError> {
        self.history_at(id, END_OF_TIME)
    }

    /// Every version of a belief with its interval and its status at valid time `valid_at`.
    pub fn history_at(&self, id: MemoryId, valid_at: Timestamp) -> Result<HistoryView, EngineError> {
        self.reader().history(id, valid_at)
    }

    /// Every classification that involved `id` (or the pair `id`–`other`), flagged or dropped.
    pub fn why(&self, id: MemoryId, other: Option<MemoryId>) -> Result<Vec<Decision>, EngineError> {
        self.reader().why(id, other)
    }

    pub fn conflicts(&self, status: Option<ConflictStatus>) -> Result<Vec<ConflictRecord>, EngineError> {
        self.reader().conflicts(status)
    }

    pub fn conflict_record(&self, id: ConflictId) -> Result<ConflictRecord, EngineError> {
        self.reader().conflict(id)
    }

    /// Events from `since`, at most `limit`, optionally only those naming `memory`.
    pub fn log(&self, since: u64, limit: usize, memory: Option<MemoryId>) -> Result<Vec<Event>, EngineError> {
        self.reader().log(since, limit, memory, &|_| Ok(true))
    }

    /// [`Memledger::log`] of the events `keep` keeps (those a principal may read, those one
    /// appended).
    pub fn log_kept(
        &self,
        since: u64,
        limit: usize,
        memory: Option<MemoryId>,
        keep: &dyn Fn(&Event) -> Result<bool, EngineError>,
    ) -> Result<Vec<Event>, EngineError> {
        self.reader().log(since, limit, memory, keep)
    }

    pub fn stats(&self) -> Result<Stats, EngineError> {
        self.reader().stats(&Readable::everything())
    }

    /// Counts of the memories and conflicts in `scopes`.
    pub fn stats_in(&self, scopes: &Readable) -> Result<Stats, EngineError> {
        self.reader().stats(scopes)
    }

    /// The classifier on two texts, writing nothing.
    pub fn classify(
        &self,
        a: &str,
        b: &str,
        type_a: Option<MemoryType>,
        type_b: Option<MemoryType>,
    ) -> Result<Classification, EngineError> {
        let a = validate_text(a)?;
        let b = validate_text(b)?;
        Ok(classify_lexical(&a, &b, type_a, type_b, &self.config))
    }

    /// The active memories that best match `query` (BM25 over the analyzer's terms, OR-ed: any
    /// text is a valid query), at most `limit`, optionally only of `memory_type` and in `scope`;
    /// every scheduled change taken as arrived.
    pub fn recall(
        &self,
        query: &str,
        memory_type: Option<MemoryType>,
        scope: Option<&str>,
        limit: usize,
    ) -> Result<RecallResult, EngineError> {
        self.recall_at(query, memory_type, scope, limit, END_OF_TIME)
    }

    /// [`Memledger::recall`] at valid time `valid_at`: each belief as it stands then, with the
    /// changes scheduled after it beside it.
    pub fn recall_at(
        &self,
        query: &str,
        memory_type: Option<MemoryType>,
        scope: Option<&str>,
        limit: usize,
        valid_at: Timestamp,
    ) -> Result<RecallResult, EngineError> {
        self.recall_in(query, memory_type, Scopes::from(scope), limit, valid_at)
    }

    /// [`Memledger::recall_at`] within `scopes`: one, all, or those a principal may read
    /// ([`crate::access::Readable`]).
    pub fn recall_in(
        &self,
        query: &str,
        memory_type: Option<MemoryType>,
        scopes: Scopes<'_>,
        limit: usize,
        valid_at: Timestamp,
    ) -> Result<RecallResult, EngineError> {
        let query = recall::Query { text: query, memory_type, scopes, valid_at };
        recall::check(&query, limit)?;
        self.text_index_current()?;
        recall::recall(self.index.text(), self.reader(), &self.models, &query, limit)
    }
}

/// Store-wide checks and maintenance: verify, rebuild, export, import.
impl Memledger {
    /// Check the chain (caught up with a shared ledger first), that every view equals a fresh
    /// replay of the ledger, and that the text index holds exactly the active memories under
    /// their candidate terms (reported as the view `text`).
    pub fn verify(&self) -> Result<VerifyView, EngineError> {
        // A long-lived process on a shared ledger first reads what other machines appended, so
        // its views are compared at the head the chain is checked to.
        self.catch_up()?;
        let ledger = self.ledger.verify()?;
        let mut inconsistent_views =
            if ledger.ok { reads::inconsistent_views(&self.ledger, &self.views)? } else { Vec::new() };
        if ledger.ok && inconsistent_views.is_empty() && !self.text_index_consistent()? {
            inconsistent_views.push(TEXT_VIEW.to_string());
        }
        let view =
            VerifyView { views_consistent: ledger.ok && inconsistent_views.is_empty(), inconsistent_views, ledger };
        self.record_verification(&view)?;
        Ok(view)
    }

    /// Keep what [`Memledger::verify`] found, for `status` and the server's answers.
    fn record_verification(&self, view: &VerifyView) -> Result<(), EngineError> {
        use memledger_ledger::tables::{LastVerify, LastVerifyTable};
        let problem = match (&view.ledger.problem, view.inconsistent_views.is_empty()) {
            (Some(p), _) => Some(p.clone()),
            (None, false) => Some(format!("views differ from a replay: {}", view.inconsistent_views.join(", "))),
            (None, true) => None,
        };
        let last = LastVerify {
            at: Timestamp::now().to_rfc3339(),
            ok: view.ledger.ok && view.views_consistent,
            first_bad_seq: view.ledger.first_bad_seq,
            problem,
        };
        let mut batch = memledger_ledger::store::Batch::default();
        LastVerifyTable::put(&mut batch, &last);
        self.ledger.store().write(batch, false)?;
        Ok(())
    }

    /// The last verification of this store, if it was ever verified.
    pub fn last_verification(&self) -> Result<Option<memledger_ledger::tables::LastVerify>, EngineError> {
        Ok(memledger_ledger::tables::LastVerifyTable::get(self.ledger.store())?)
    }

    fn text_index_consistent(&self) -> Result<bool, EngineError> {
        let _guard = self.lock()?;
        self.index.consistent(&self.ledger)
    }

    /// Drop and replay views (all when `only` is `None`). Returns the events replayed.
    pub fn rebuild(&self, only: Option<&[&str]>, progress: &mut dyn FnMut(u64)) -> Result<u64, EngineError> {
        if let Some(names) = only {
            let known = self.views.names();
            if let Some(bad) = names.iter().find(|n| !known.contains(n) && **n != TEXT_VIEW) {
                let known = format!("{}, {TEXT_VIEW}", known.join(", "));
                return Err(BadInput::UnknownView { name: bad.to_string(), known }.into());
            }
        }
        let _guard = self.lock()?;
        // The views are copied from the ledger: never from one that was altered.
        let report = self.ledger.verify()?;
        if !report.ok {
            return Err(EngineError::Unverified {
                seq: report.first_bad_seq.unwrap_or(0),
                problem: report.problem.unwrap_or_default(),
            });
        }
        let events = self.views.rebuild_with_progress(&self.ledger, only, progress);
        let events = match events {
            Ok(events) => events,
            Err(e) => {
                let _ = self.index.reset(&self.ledger);
                return Err(e.into());
            }
        };
        self.written.fetch_add(events, Ordering::Relaxed);
        // The text index is rebuilt from the belief view, so after it.
        if only.is_none_or(|names| names.contains(&TEXT_VIEW)) {
            self.index.text().rebuild(&self.ledger)?;
        }
        self.index.reset(&self.ledger)?;
        Ok(events)
    }

    /// Rebuild only the text index from the belief view; says how many documents and how fast.
    pub fn rebuild_text_index(&self) -> Result<TextRebuild, EngineError> {
        let _guard = self.lock()?;
        Ok(self.index.text().rebuild(&self.ledger)?)
    }

    /// Export the events from `since` on, and remember the export (`erase --dry-run` lists it).
    pub fn export(&self, since: u64, out: &mut dyn Write) -> Result<u64, EngineError> {
        self.export_kept(since, out, None)
    }

    /// [`Memledger::export`] of the events `keep` keeps (those a principal may read: a stream with
    /// gaps, which no store imports); every event without one.
    pub fn export_kept(&self, since: u64, out: &mut dyn Write, keep: Option<Keep<'_>>) -> Result<u64, EngineError> {
        let head = self.ledger.head().seq;
        let written = match keep {
            None => self.ledger.export(since, out)?,
            Some(keep) => {
                let mut n = 0;
                for event in self.ledger.scan(since)? {
                    let event = event?;
                    if keep(&event)? {
                        serde_json::to_writer(&mut *out, &event)
                            .map_err(|e| memledger_ledger::LedgerError::Io(e.into()))?;
                        out.write_all(b"\n").map_err(memledger_ledger::LedgerError::Io)?;
                        n += 1;
                    }
                }
                out.flush().map_err(memledger_ledger::LedgerError::Io)?;
                n
            }
        };
        if written > 0 {
            let record = crate::exports::ExportRecord { at: Timestamp::now(), since, through: head.max(since) };
            crate::exports::record(self.ledger.store(), &record)?;
        }
        Ok(written)
    }

    /// Import a stream, then bring the views up to date.
    pub fn import(&self, input: &mut dyn BufRead) -> Result<ImportReport, EngineError> {
        self.import_stream(read_stream(input)?)
    }

    /// Import a stream read (and its chain checked) by [`memledger_ledger::read_stream`].
    pub fn import_stream(&self, stream: Stream) -> Result<ImportReport, EngineError> {
        let _guard = self.lock()?;
        let report = self.ledger.import_stream(stream)?;
        self.written.fetch_add(report.appended, Ordering::Relaxed);
        let caught_up = self.views.catch_up(&self.ledger);
        // The imported memories reach the text index, which candidate search reads, with the reset.
        self.index.reset(&self.ledger)?;
        caught_up?;
        Ok(report)
    }
}

/// As-of reads (engine/src/asof.rs).
impl Memledger {
    /// The seq a point in the past names.
    pub fn seq_as_of(&self, point: AsOf) -> Result<u64, EngineError> {
        seq_as_of(&self.ledger, point)
    }

    /// The valid time a read at `point` asks about: `valid_at`, else the point's time, else
    /// `clock` (engine/src/asof.rs).
    pub fn valid_time(
        &self,
        point: Option<AsOf>,
        valid_at: Option<Timestamp>,
        clock: Timestamp,
    ) -> Result<Timestamp, EngineError> {
        crate::asof::valid_time(&self.ledger, point, valid_at, clock)
    }

    /// The store as it stood at `point`, or the live store when `point` is `None` or the head.
    pub fn as_of(&self, point: Option<AsOf>) -> Result<Snapshot<'_>, EngineError> {
        let Some(point) = point else { return Ok(Snapshot::Live(self)) };
        let seq = self.seq_as_of(point)?;
        if seq == self.ledger.head().seq {
            return Ok(Snapshot::Live(self));
        }
        let dir = std::env::temp_dir().join(format!("memledger-as-of-{}", MemoryId::random().hex()));
        let build = || -> Result<Memledger, EngineError> {
            let events = self.ledger.range(SeqRange { first: 1, last: seq })?;
            let past = Memledger::open_with(&dir, &OpenOptions::default(), self.config.clone())?;
            if !events.is_empty() {
                past.import_stream(Stream::from_events(events)?)?;
            }
            // Recall there fuses cosine ranking too: lend it the vectors this store has.
            embed::lend_vectors(&self.models, self.reader(), past.reader())?;
            Ok(past)
        };
        match build() {
            Ok(ml) => Ok(Snapshot::Past { ml: Box::new(ml), dir, seq }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }
}

impl Drop for Memledger {
    /// Commit what the text index has applied, so the next open need not catch it up. Best
    /// effort: a failure here only costs that catch-up.
    fn drop(&mut self) {
        // Deferred saves staged for the shared ledger and never synced are sent now, and the
        // exclusive turn given back.
        let mut group = std::mem::take(self.write.get_mut());
        let _ = self.flush_group(&mut group);
        drop(group);
        let flush_store = self.written.load(Ordering::Relaxed) >= FLUSH_ON_CLOSE_AFTER;
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
            let _ = self.index.text().flush();
        });
        // Freeing a large store's caches is one deallocation per entry; a process about to exit
        // need not wait for that, so a thread of its own frees them.
        let analyses = self.analyses.take();
        let terms = self.index.take_terms();
        if analyses.len() >= FREE_BEHIND_ANALYSES {
            std::thread::spawn(move || drop((analyses, terms)));
        }
    }
}

/// A read-only view of the store as of a point: either the live store (the point is the head)
/// or a scratch replay of the prefix, removed when dropped.
pub enum Snapshot<'a> {
    Live(&'a Memledger),
    Past { ml: Box<Memledger>, dir: PathBuf, seq: u64 },
}

impl Snapshot<'_> {
    /// The last seq this snapshot includes.
    pub fn seq(&self) -> u64 {
        match self {
            Snapshot::Live(ml) => ml.ledger().head().seq,
            Snapshot::Past { seq, .. } => *seq,
        }
    }
}

impl Deref for Snapshot<'_> {
    type Target = Memledger;
    fn deref(&self) -> &Memledger {
        match self {
            Snapshot::Live(ml) => ml,
            Snapshot::Past { ml, .. } => ml,
        }
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        if let Snapshot::Past { dir, .. } = self {
            let _ = std::fs::remove_dir_all(&*dir);
        }
    }
}
