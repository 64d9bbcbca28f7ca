//! `recall`: BM25 over the active memories (the text index, `projector/src/text_index.rs`),
//! filtered by type and scope, with the conflict notice of DESIGN §6.

use memledger_projector::text_index::{TextIndex, TextRebuild};
use memledger_projector::{Checkpoint, beliefs};
use memledger_schemas::*;
use serde::Serialize;

use crate::error::EngineError;
use crate::memledger::Memledger;

/// Said with results when any of them is in a pending conflict with another active memory.
pub const CONFLICT_NOTICE: &str =
    "Some of these memories conflict with each other. Ask the user which is current instead of asserting either.";

/// One memory `recall` returns (CLI.md).
#[derive(Clone, Debug, Serialize)]
pub struct RecallHit {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub text: String,
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    pub scope: String,
    /// BM25; comparable only within one answer.
    pub score: f32,
    pub asserted_at: Timestamp,
    /// Active memories this one is in a pending conflict with.
    pub conflicts_with: Vec<MemoryId>,
}

/// What `recall` answers.
#[derive(Clone, Debug, Serialize)]
pub struct RecallResult {
    /// Best first: score, then newest, then memory id.
    pub results: Vec<RecallHit>,
    /// [`CONFLICT_NOTICE`] when a returned memory has a pending conflict, else null.
    pub notice: Option<String>,
}

impl Memledger {
    /// The active memories that best match `query` (BM25 over the analyzer's terms, OR-ed: any
    /// text is a valid query), at most `limit`, optionally only of `memory_type` and in `scope`.
    pub fn recall(
        &self,
        query: &str,
        memory_type: Option<MemoryType>,
        scope: Option<&str>,
        limit: usize,
    ) -> Result<RecallResult, EngineError> {
        if query.trim().is_empty() {
            return Err(EngineError::BadInput("recall needs a query: some words to look for".into()));
        }
        if limit == 0 {
            return Err(EngineError::BadInput("--limit must be at least 1".into()));
        }
        self.text_index_current()?;
        let mut results = Vec::new();
        for hit in self.text.search(query, memory_type, scope, limit)? {
            let m = self.show(hit.memory_id)?;
            if m.status != Status::Active || m.memory_id != hit.memory_id {
                // The index is committed with the views; this would be a bug, never an answer.
                continue;
            }
            results.push(RecallHit {
                memory_id: m.memory_id,
                root_id: m.root_id,
                text: m.text,
                memory_type: m.memory_type,
                scope: m.scope,
                score: hit.score,
                asserted_at: m.asserted_at,
                conflicts_with: m.conflicts_with,
            });
        }
        let notice = results.iter().any(|r| !r.conflicts_with.is_empty()).then(|| CONFLICT_NOTICE.to_string());
        Ok(RecallResult { results, notice })
    }

    /// The text index, for inspection (its checkpoint, document count) and maintenance.
    pub fn text_index(&self) -> &TextIndex {
        &self.text
    }

    /// Rebuild only the text index from the belief view; says how many documents and how fast.
    pub fn rebuild_text_index(&self) -> Result<TextRebuild, EngineError> {
        let _guard = self.lock();
        Ok(self.text.rebuild(&self.ledger)?)
    }

    /// Catch the text index up when the views moved without it: an import, the scratch store of
    /// an as-of read, or a deferred group not yet synced.
    fn text_index_current(&self) -> Result<(), EngineError> {
        let store = self.ledger.store();
        let beliefs_at = Checkpoint::read(store, beliefs::TABLE)?.map_or(0, |c| c.seq);
        if self.text.uncommitted() == Some(beliefs_at) {
            // Applied by earlier commands, waiting for a commit: make it searchable.
            let _guard = self.lock();
            self.text.flush()?;
        } else if self.text.seq()? != beliefs_at {
            let _guard = self.lock();
            self.text.catch_up(&self.ledger)?;
        }
        Ok(())
    }
}
