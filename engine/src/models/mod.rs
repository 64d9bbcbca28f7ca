//! Models over HTTP (docs/design.md §8, docs/models.md): an OpenAI-compatible chat model for pair
//! classification, the conflict judge and the contradiction scan; an embedder for candidates and
//! recall; a reranker for recall.
//!
//! Everything here is optional and never makes a write fail: a call that fails, times out or
//! answers nonsense is recorded as such and the lexical path decides. Model calls are made while
//! a command is planned, never inside the ledger write; replay never calls a model.

pub mod config;
pub mod embed;
pub mod http;
pub mod judge;
pub mod llm;
pub mod merge;
pub mod prompts;
pub mod usage;

use std::sync::Arc;
use tracing::Instrument;

use memledger_projector::beliefs::MemoryRecord;
use memledger_schemas::{MemoryId, MemoryType, ModelVerdict, Timestamp};

pub use config::{Endpoint, ModelConfig, PromptSettings};
pub use http::CallError;
pub use prompts::{EmbedPrompts, EmbedSide};
pub use usage::{TokenUsage, metered};

use crate::classify::Classification;
use crate::error::EngineError;
use crate::input::ValidSave;
use crate::reads::Reader;
use http::Http;

/// What a prompt says about one memory.
#[derive(Clone, Debug)]
pub struct MemoryFacts {
    pub text: String,
    pub memory_type: MemoryType,
    pub scope: String,
    pub source: Option<String>,
    /// When the memory was recorded in the ledger (now, for a memory being saved).
    pub recorded_at: Option<Timestamp>,
    /// When the claim became true in the world, if the saver said.
    pub effective_at: Option<Timestamp>,
    /// Where in a transcript it was said (an imported memory): when, and the excerpt.
    pub said: Option<(Option<Timestamp>, String)>,
}

impl MemoryFacts {
    /// The lines of a prompt describing this memory.
    pub fn describe(&self) -> String {
        let time = |t: Option<Timestamp>| t.map_or_else(|| "not stated".to_string(), |t| t.to_rfc3339());
        let mut text = format!(
            "  type: {}\n  scope: {}\n  recorded: {}\n  effective: {}\n  source: {}\n  text: {}",
            self.memory_type,
            self.scope,
            time(self.recorded_at),
            time(self.effective_at),
            self.source.as_deref().unwrap_or("not stated"),
            serde_json::to_string(&self.text).unwrap_or_default(),
        );
        if let Some((at, excerpt)) = &self.said {
            text.push_str(&format!("\n  said in a transcript: {}", time(*at)));
            if !excerpt.is_empty() {
                text.push_str(&format!("\n  excerpt: {}", serde_json::to_string(excerpt).unwrap_or_default()));
            }
        }
        text
    }
}

/// One model answer: the raw text when there was one, and what came of it.
#[derive(Clone, Debug)]
pub struct Answer<T> {
    pub raw: Option<String>,
    pub result: Result<T, String>,
}

impl Answer<llm::PairVerdict> {
    /// The record that goes into `PairClassified.model`.
    pub fn record(&self, model: &str) -> ModelVerdict {
        match &self.result {
            Ok(v) => ModelVerdict {
                model: model.to_string(),
                raw: self.raw.clone(),
                relation: Some(v.relation),
                reason: v.reason.clone(),
                error: None,
            },
            Err(e) => ModelVerdict {
                model: model.to_string(),
                raw: self.raw.clone(),
                relation: None,
                reason: None,
                error: Some(format!("{e}; the lexical verdict was used")),
            },
        }
    }
}

/// The configured models and the client that reaches them. Built once per open store.
pub struct Models {
    config: ModelConfig,
    /// The embedder's prompts (none without an embedder).
    prompts: EmbedPrompts,
    http: Http,
    /// The embedder's vectors recall has read (`embed::HeldVectors`).
    held: embed::HeldVectors,
}

impl Models {
    pub fn new(config: ModelConfig) -> Self {
        let prompts = config.embed.as_ref().map(|e| config.embed_prompts.for_model(&e.model)).unwrap_or_default();
        Models { config, prompts, http: Http::new(), held: embed::HeldVectors::default() }
    }

    /// The prompts the embedder is sent (`models::prompts`).
    pub fn embed_prompts(&self) -> &EmbedPrompts {
        &self.prompts
    }

    /// What the stored vectors of the configured embedder are known by: its model and the
    /// document prompt ([`EmbedPrompts::document_space`]); the vector cache's key.
    pub fn embed_space(&self) -> Option<String> {
        self.embedder().map(|e| self.prompts.document_space(&e.model))
    }

    /// The vectors recall has read, held in memory.
    pub(crate) fn held_vectors(&self) -> &embed::HeldVectors {
        &self.held
    }

    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The cosine at or above which the embedder admits a pair to the rules of change: as
    /// configured, else the related band of its model family ([`embed::related_band`]).
    pub fn related_cosine_min(&self) -> Option<f64> {
        let endpoint = self.embedder()?;
        Some(
            self.config
                .related_cosine_min
                .unwrap_or_else(|| embed::related_band(&EmbedPrompts::for_model(&endpoint.model).source)),
        )
    }

    /// The chat model, when configured.
    pub fn llm(&self) -> Option<&Endpoint> {
        self.config.llm.as_ref()
    }

    /// The embedder, when configured.
    pub fn embedder(&self) -> Option<&Endpoint> {
        self.config.embed.as_ref()
    }

    /// The reranker, when configured.
    pub fn reranker(&self) -> Option<&Endpoint> {
        self.config.rerank.as_ref()
    }

    /// The reranker's relevance of each of `documents` to `query`, in order, in one request.
    /// Without a reranker: `None`.
    pub fn rerank(&self, query: &str, documents: &[String]) -> Option<Result<Vec<f64>, CallError>> {
        let endpoint = self.config.rerank.clone()?;
        if documents.is_empty() {
            return Some(Ok(Vec::new()));
        }
        let client = self.http.client();
        let run = async move { http::rerank(&client, &endpoint, query, documents).await };
        Some(self.http.block_on(run).unwrap_or_else(|e| Err(CallError::Runtime(e))))
    }

    /// Ask the chat model every `(system, user)` prompt, at most `concurrency` at once; answers
    /// in order, each parsed by `parse`. Without a chat model: `None`.
    pub fn ask_all<T>(
        &self,
        prompts: Vec<(String, String)>,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Option<Vec<Answer<T>>> {
        let endpoint = self.config.llm.clone()?;
        if prompts.is_empty() {
            return Some(Vec::new());
        }
        let n = prompts.len();
        let h = &self.http;
        let run = async move {
            let gate = Arc::new(tokio::sync::Semaphore::new(endpoint.concurrency.max(1)));
            let endpoint = Arc::new(endpoint);
            let mut set = tokio::task::JoinSet::new();
            for (i, (system, user)) in prompts.into_iter().enumerate() {
                let (gate, endpoint, client) = (gate.clone(), endpoint.clone(), h.client());
                // Each call's span is a child of the command's (docs/adr/0039-traces.md).
                set.spawn(
                    async move {
                        let _permit = gate.acquire_owned().await;
                        (i, http::chat(&client, &endpoint, &system, &user).await)
                    }
                    .in_current_span(),
                );
            }
            let mut out: Vec<Option<Result<(String, usage::TokenUsage), CallError>>> = (0..n).map(|_| None).collect();
            while let Some(joined) = set.join_next().await {
                if let Ok((i, result)) = joined {
                    out[i] = Some(result);
                }
            }
            out
        };
        let answers = match self.http.block_on(run) {
            Ok(a) => a,
            Err(e) => (0..n).map(|_| Some(Err(CallError::Runtime(e.clone())))).collect(),
        };
        // Counted on the thread that asked: the command metering it ([`usage::metered`]).
        let mut used = usage::TokenUsage::default();
        for (_, call) in answers.iter().flatten().flatten() {
            used.add(*call);
        }
        usage::count(used);
        Some(
            answers
                .into_iter()
                .map(|a| match a.map(|r| r.map(|(raw, _)| raw)) {
                    Some(Ok(raw)) => {
                        let result = parse(&raw).map_err(|e| format!("unusable answer: {e}"));
                        Answer { raw: Some(raw), result }
                    }
                    Some(Err(e)) => Answer { raw: None, result: Err(e.to_string()) },
                    None => Answer { raw: None, result: Err("the call was lost".into()) },
                })
                .collect(),
        )
    }

    /// Classify each `(incoming, stored)` pair with the chat model, concurrently.
    pub fn classify_pairs(&self, pairs: &[(MemoryFacts, MemoryFacts)]) -> Option<Vec<Answer<llm::PairVerdict>>> {
        let prompts =
            pairs.iter().map(|(a, b)| (llm::CLASSIFY_SYSTEM.to_string(), llm::classify_prompt(a, b))).collect();
        self.ask_all(prompts, llm::parse_pair_verdict)
    }

    /// Embed `texts` as `side` of a search (its prompt put before each), in one request per
    /// batch of 64.
    pub fn embed_texts(&self, texts: &[String], side: EmbedSide) -> Option<Result<Vec<Vec<f32>>, CallError>> {
        let endpoint = self.config.embed.clone()?;
        if texts.is_empty() {
            return Some(Ok(Vec::new()));
        }
        let client = self.http.client();
        let input_type = self.prompts.input_type.then(|| side.input_type());
        let prompted: Vec<String> = texts.iter().map(|t| self.prompts.apply(side, t)).collect();
        let run = async move {
            let mut out = Vec::with_capacity(prompted.len());
            for chunk in prompted.chunks(64) {
                out.extend(http::embed(&client, &endpoint, chunk, input_type).await?);
            }
            Ok::<_, CallError>(out)
        };
        Some(self.http.block_on(run).unwrap_or_else(|e| Err(CallError::Runtime(e))))
    }
}

impl Models {
    /// Step 6 with models: the cosine of each candidate (with an embedder) goes into its scores
    /// and gates a lexical `identical` ([`embed::gate_identical`]), and the chat model (when
    /// configured) is asked about every candidate of the same declared kind, concurrently; its verdict is laid over the lexical one, or, when the call failed,
    /// the lexical verdict stands and the record says why. One record per candidate (`None`:
    /// the model was not asked). Without models this does nothing.
    pub(crate) fn classify_candidates(
        &self,
        reader: Reader<'_>,
        save: &ValidSave,
        candidates: &[MemoryRecord],
        classes: &mut [Classification],
        embedding: &embed::EmbeddingCandidates,
    ) -> Result<Vec<Option<ModelVerdict>>, EngineError> {
        if let Some(embed_model) = &embedding.model {
            for (candidate, class) in candidates.iter().zip(classes.iter_mut()) {
                class.thresholds.push(("cosine_min".into(), embed::COSINE_MIN));
                match embedding.cosines.get(&candidate.memory_id) {
                    Some(c) => {
                        class.scores.push(("cosine".into(), *c));
                        if let Some(centred) = embedding.centred.get(&candidate.memory_id) {
                            class.scores.push(("cosine_centred".into(), *centred));
                        }
                        class.reason.push_str(&format!(" [cosine {c:.3} by {embed_model}]"));
                        embed::gate_identical(class, *c, self.config.identical_cosine_min, embed_model);
                    }
                    None => {
                        if let Some(e) = &embedding.error {
                            class.reason.push_str(&format!(" [{e}]"));
                        }
                    }
                }
            }
        }
        let mut records: Vec<Option<ModelVerdict>> = vec![None; candidates.len()];
        let Some(endpoint) = self.llm() else { return Ok(records) };
        let model = endpoint.model.clone();
        let incoming = MemoryFacts {
            text: save.text.clone(),
            memory_type: save.memory_type,
            scope: save.scope.clone(),
            source: save.origin.clone(),
            recorded_at: Some(Timestamp::now()),
            effective_at: save.effective_at,
            said: save.evidence.as_ref().map(|e| (e.observed_at, e.excerpt.clone())),
        };
        let mut asked = Vec::new();
        let mut pairs = Vec::new();
        for (i, (candidate, class)) in candidates.iter().zip(classes.iter()).enumerate() {
            if candidate.memory_type == save.memory_type && llm::worth_asking(class) {
                asked.push(i);
                pairs.push((incoming.clone(), facts_of(reader, candidate.memory_id)?));
            }
        }
        let Some(answers) = self.classify_pairs(&pairs) else { return Ok(records) };
        for (i, answer) in asked.into_iter().zip(answers) {
            if let Ok(v) = &answer.result {
                llm::apply(&mut classes[i], v, &model);
            }
            records[i] = Some(answer.record(&model));
        }
        Ok(records)
    }
}

impl Models {
    /// What to say when a store opens: settings that were ignored, an embedding model change.
    pub fn open_notes(&self, store: &memledger_ledger::store::Store) -> Vec<String> {
        let mut notes = self.config.notes.clone();
        notes.extend(embed::model_change_note(store, self.embed_space().as_deref()));
        notes
    }
}

/// What a prompt says about a stored memory.
pub(crate) fn facts_of(reader: Reader<'_>, id: MemoryId) -> Result<MemoryFacts, EngineError> {
    let r = reader.record(id)?;
    let observation = reader.beliefs().observation(r.memory_id)?;
    let recorded_at = observation.as_ref().map(|o| o.recorded_at);
    let said = observation.and_then(|o| o.observed.evidence).map(|e| (e.observed_at, e.excerpt));
    Ok(MemoryFacts {
        text: r.text,
        memory_type: r.memory_type,
        scope: r.scope,
        source: r.sources.first().cloned(),
        recorded_at: recorded_at.or(Some(r.asserted_at)),
        effective_at: r.effective_at,
        said,
    })
}
