//! The event: an envelope (who, when, where in the chain) around a body (what happened).
//!
//! Bodies are in the past tense and record results, not recipes: scores, verdicts, thresholds and
//! effects are written down when they happen so that replay never calls a model or reads a clock.
//! Formats 1 to 5 are frozen: fields and variants are only ever appended in a new format
//! version. The in-memory form is the same for all; only the stored bytes and what the hash
//! covers differ (`codec.rs`). An erased event keeps its place and hash with its texts blanked
//! and an [`Erased`] record saying when, by whom and (format 3) what the hash committed to.

use bincode::{Decode, Encode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::chain::Hash;
use crate::effects::{EdgeKind, Effect};
use crate::ids::{ConflictId, CorrelationId, EventId, MemoryId};
use crate::kinds::*;
use crate::name::Name;
use crate::time::Timestamp;

/// The principal of the store's owner: direct access to the store directory, or the store's own
/// token (docs/design.md §13).
pub const OWNER: &str = "owner";

/// One ledger entry: envelope and body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// Global, gap-free position in the ledger, from 1.
    #[schemars(range(min = 1))]
    pub seq: u64,
    pub event_id: EventId,
    /// The format version this event was written in.
    #[schemars(range(min = 1, max = crate::codec::CURRENT_FORMAT))]
    pub format: u16,
    pub recorded_at: Timestamp,
    /// Who acted: `cli:<user>`, `agent:<name>`, `judge:<model>`.
    #[schemars(length(min = 1))]
    pub actor: String,
    /// Shared by all events one command appended.
    pub correlation_id: CorrelationId,
    /// The seq this event reacts to, if any.
    pub causation: Option<u64>,
    /// The caller's idempotency key, on the first event of the command that carried it.
    pub idempotency_key: Option<String>,
    pub prev_hash: Hash,
    /// Format 5: the authenticated principal that appended it (`owner` for the store's owner);
    /// `actor` is then whom it acted for, as the client said. None before format 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// `blake3(prev_hash ‖ encoding of every field above and the body)`; in format 3 the body's
    /// texts are hashed as their commitments ([`crate::chain::text_commitment`]).
    pub hash: Hash,
    /// Set when an erasure removed this event's texts: they are blank in `body`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erased: Option<Erased>,
    #[serde(flatten)]
    pub body: EventBody,
}

/// What an erasure left in place of an event's texts. Not covered by the event's hash: `verify`
/// checks it against the `memory_erased` event it names.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct Erased {
    /// The seq of the `memory_erased` event.
    pub seq: u64,
    /// That event's `recorded_at`.
    pub at: Timestamp,
    /// That event's `actor`.
    pub actor: String,
    /// Format 3: the commitment of each erased text, in [`EventBody::texts_mut`]'s order, which
    /// the hash covers in place of the text. Empty in formats 1 and 2, whose hash covered the
    /// texts themselves: such an event's own hash can no longer be recomputed, only its links.
    pub commitments: Vec<Hash>,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "body", rename_all = "snake_case")]
pub enum EventBody {
    /// A memory was observed: the text and everything said about it.
    MemoryObserved(MemoryObserved),
    /// A candidate pair was examined, flagged or dropped.
    PairClassified(PairClassified),
    /// An observed memory became a new belief (a lineage of its own, version 1).
    BeliefAdded(BeliefAdded),
    /// An observed memory became the next version of an existing belief.
    BeliefVersioned(BeliefVersioned),
    /// An observed memory was a duplicate: provenance only, no new belief.
    BeliefMerged(BeliefMerged),
    /// An observed memory is an older claim that arrived late: kept as history, no reversal.
    BeliefHistorical(BeliefHistorical),
    /// A belief was retired (forgotten): out of recall, kept in history.
    BeliefRetired(BeliefRetired),
    /// A conflict was opened.
    ConflictOpened(ConflictOpened),
    /// A conflict was resolved, with the exact effects of the resolution.
    ConflictResolved(ConflictResolved),
    /// A resolution was reverted: its effects undone, the conflict pending again.
    ResolutionReverted(ResolutionReverted),
    /// A belief was edited explicitly: a new version, unconditionally.
    BeliefEdited(BeliefEdited),
    /// Memories' texts were erased from every event and view (format 3 on).
    MemoryErased(MemoryErased),
    /// A model proposed one text for memories that enrich the same version: an entry of the
    /// conflict queue, nothing written as a belief until a person accepts it (format 4 on).
    MergeProposed(MergeProposed),
    /// A principal was created with its first grants and its token's verifier (format 5 on).
    PrincipalAdded(PrincipalAdded),
    /// A principal was granted verbs in scopes, each replacing its grant of the same pattern.
    PrincipalGranted(PrincipalGranted),
    /// Grants of a principal were taken back.
    GrantRevoked(GrantRevoked),
    /// A principal was revoked: its token no longer authenticates, for good.
    PrincipalRevoked(PrincipalRevoked),
    /// A principal's token was replaced: the old one no longer authenticates.
    PrincipalRotated(PrincipalRotated),
    /// An observed memory became a proposal: not a current belief until someone who may write
    /// accepts it through the conflict queue (format 5 on).
    BeliefProposed(BeliefProposed),
    /// An import committed one chunk of a transcript: how far the file was read, what its prefix
    /// hashed to, and what the chunk's extraction saved (format 5 on).
    TranscriptProgressed(TranscriptProgressed),
    /// A store that disagreed with its witness (restored from a backup on purpose) was taken as
    /// its history from here on: which head instead of which, and why (format 7 on). The actor
    /// is who accepted it.
    HeadAccepted(HeadAccepted),
}

impl EventBody {
    /// Every body's [`EventBody::type_name`], in declaration order: the order of bincode's
    /// variant index (see [`crate::codec::peek_event`]).
    pub const TYPE_NAMES: [&'static str; 21] = [
        "memory_observed",
        "pair_classified",
        "belief_added",
        "belief_versioned",
        "belief_merged",
        "belief_historical",
        "belief_retired",
        "conflict_opened",
        "conflict_resolved",
        "resolution_reverted",
        "belief_edited",
        "memory_erased",
        "merge_proposed",
        "principal_added",
        "principal_granted",
        "grant_revoked",
        "principal_revoked",
        "principal_rotated",
        "belief_proposed",
        "transcript_progressed",
        "head_accepted",
    ];

    /// The stable snake_case name of the body, as in the JSON `type` field.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventBody::MemoryObserved(_) => "memory_observed",
            EventBody::PairClassified(_) => "pair_classified",
            EventBody::BeliefAdded(_) => "belief_added",
            EventBody::BeliefVersioned(_) => "belief_versioned",
            EventBody::BeliefMerged(_) => "belief_merged",
            EventBody::BeliefHistorical(_) => "belief_historical",
            EventBody::BeliefRetired(_) => "belief_retired",
            EventBody::ConflictOpened(_) => "conflict_opened",
            EventBody::ConflictResolved(_) => "conflict_resolved",
            EventBody::ResolutionReverted(_) => "resolution_reverted",
            EventBody::BeliefEdited(_) => "belief_edited",
            EventBody::MemoryErased(_) => "memory_erased",
            EventBody::MergeProposed(_) => "merge_proposed",
            EventBody::PrincipalAdded(_) => "principal_added",
            EventBody::PrincipalGranted(_) => "principal_granted",
            EventBody::GrantRevoked(_) => "grant_revoked",
            EventBody::PrincipalRevoked(_) => "principal_revoked",
            EventBody::PrincipalRotated(_) => "principal_rotated",
            EventBody::BeliefProposed(_) => "belief_proposed",
            EventBody::TranscriptProgressed(_) => "transcript_progressed",
            EventBody::HeadAccepted(_) => "head_accepted",
        }
    }

    /// The principal a principal event is about, if this is one.
    pub fn principal_named(&self) -> Option<&str> {
        match self {
            EventBody::PrincipalAdded(b) => Some(&b.name),
            EventBody::PrincipalGranted(b) => Some(&b.name),
            EventBody::GrantRevoked(b) => Some(&b.name),
            EventBody::PrincipalRevoked(b) => Some(&b.name),
            EventBody::PrincipalRotated(b) => Some(&b.name),
            _ => None,
        }
    }

    /// Every memory id this event names (for `log --memory`).
    pub fn memory_ids(&self) -> Vec<MemoryId> {
        match self {
            EventBody::MemoryObserved(b) => vec![b.memory_id],
            EventBody::PairClassified(b) => vec![b.incoming, b.candidate],
            EventBody::BeliefAdded(b) => vec![b.memory_id],
            EventBody::BeliefVersioned(b) => vec![b.memory_id, b.root_id, b.replaces],
            EventBody::BeliefMerged(b) => vec![b.memory_id, b.into],
            EventBody::BeliefHistorical(b) => vec![b.memory_id, b.root_id, b.current],
            EventBody::BeliefRetired(b) => vec![b.memory_id],
            EventBody::ConflictOpened(b) => {
                std::iter::once(b.incoming).chain(b.candidates.iter().map(|c| c.memory_id)).collect()
            }
            EventBody::ConflictResolved(b) => effect_ids(&b.effects),
            EventBody::ResolutionReverted(b) => effect_ids(&b.undone),
            EventBody::BeliefEdited(b) => vec![b.memory_id, b.root_id, b.replaces],
            EventBody::MemoryErased(b) => b.memory_ids.clone(),
            EventBody::MergeProposed(b) => std::iter::once(b.incoming)
                .chain(b.candidates.iter().map(|c| c.memory_id))
                .chain(std::iter::once(b.revision))
                .collect(),
            EventBody::BeliefProposed(b) => vec![b.memory_id],
            EventBody::TranscriptProgressed(b) => b.memories.clone(),
            EventBody::PrincipalAdded(_)
            | EventBody::PrincipalGranted(_)
            | EventBody::GrantRevoked(_)
            | EventBody::PrincipalRevoked(_)
            | EventBody::PrincipalRotated(_)
            | EventBody::HeadAccepted(_) => Vec::new(),
        }
    }

    /// The texts an erasure blanks, in a fixed order (the order of [`Erased::commitments`]):
    /// a memory's text and its evidence's excerpt, a classification's reason and model answer, a
    /// retirement's reason, a conflict's reasons, a resolution's rationale, a proposal's reasons,
    /// text and model answer. Everything else is ids, kinds, numbers and the caller's labels
    /// (scope, source, fact key, a transcript's path), which stay.
    pub fn texts_mut(&mut self) -> Vec<&mut String> {
        match self {
            EventBody::MemoryObserved(b) => {
                let mut texts = vec![&mut b.text];
                if let Some(evidence) = &mut b.evidence {
                    texts.push(&mut evidence.excerpt);
                }
                texts
            }
            EventBody::PairClassified(b) => {
                let mut texts = vec![&mut b.reason];
                if let Some(model) = &mut b.model {
                    texts.extend(model.raw.as_mut());
                    texts.extend(model.reason.as_mut());
                }
                texts
            }
            EventBody::BeliefRetired(b) => b.reason.as_mut().into_iter().collect(),
            EventBody::ConflictOpened(b) => b.candidates.iter_mut().map(|c| &mut c.reason).collect(),
            EventBody::ConflictResolved(b) => b.rationale.as_mut().into_iter().collect(),
            EventBody::MergeProposed(b) => {
                let mut texts: Vec<&mut String> = b.candidates.iter_mut().map(|c| &mut c.reason).collect();
                texts.push(&mut b.text);
                texts.extend(b.model.raw.as_mut());
                texts.extend(b.model.reason.as_mut());
                texts
            }
            EventBody::BeliefAdded(_)
            | EventBody::BeliefVersioned(_)
            | EventBody::BeliefMerged(_)
            | EventBody::BeliefHistorical(_)
            | EventBody::ResolutionReverted(_)
            | EventBody::BeliefEdited(_)
            | EventBody::MemoryErased(_)
            | EventBody::PrincipalAdded(_)
            | EventBody::PrincipalGranted(_)
            | EventBody::GrantRevoked(_)
            | EventBody::PrincipalRevoked(_)
            | EventBody::PrincipalRotated(_)
            | EventBody::BeliefProposed(_)
            | EventBody::TranscriptProgressed(_)
            | EventBody::HeadAccepted(_) => Vec::new(),
        }
    }
}

impl EventBody {
    /// The first format whose vocabulary holds this body: 7 for an accepted head; 6 for a memory
    /// that expires and a
    /// version for another expiry; 5 for
    /// principals, proposals,
    /// evidence, conflicts of another kind or authority, announced changes and transcript
    /// progress; 4 for a merge proposal, a co-enrichment and its edge; else 1. A stored event of
    /// an earlier format holding it is refused on read (an older build stops at the format
    /// instead).
    pub fn needs_format(&self) -> u16 {
        let co_enriches = |effects: &[Effect]| {
            effects.iter().any(|e| matches!(e, Effect::EdgeAdded { edge } if edge.kind == EdgeKind::CoEnriches))
        };
        let format_5 = |effects: &[Effect]| effects.iter().any(Effect::needs_format_5);
        match self {
            EventBody::HeadAccepted(_) => 7,
            EventBody::PrincipalAdded(_)
            | EventBody::PrincipalGranted(_)
            | EventBody::GrantRevoked(_)
            | EventBody::PrincipalRevoked(_)
            | EventBody::PrincipalRotated(_)
            | EventBody::BeliefProposed(_)
            | EventBody::TranscriptProgressed(_) => 5,
            EventBody::MemoryObserved(b) if b.expires_at.is_some() || b.ttl_seconds.is_some() => 6,
            EventBody::MemoryObserved(b) if b.evidence.is_some() || b.origin.is_some() => 5,
            EventBody::ConflictOpened(b)
                if b.kind != ConflictKind::Contradiction || b.needs_authority != Authority::Stated =>
            {
                5
            }
            EventBody::BeliefVersioned(b) if b.cause == VersionCause::Expiry => 6,
            EventBody::BeliefVersioned(b) if b.cause == VersionCause::AnnouncedChange => 5,
            EventBody::PairClassified(b) if b.outcome == PairOutcome::Proposed => 5,
            EventBody::ConflictResolved(b) if format_5(&b.effects) => 5,
            EventBody::ResolutionReverted(b) if format_5(&b.undone) => 5,
            EventBody::MergeProposed(_) => 4,
            EventBody::PairClassified(b) if b.outcome == PairOutcome::CoEnrichment => 4,
            EventBody::ConflictResolved(b) if co_enriches(&b.effects) => 4,
            EventBody::ResolutionReverted(b) if co_enriches(&b.undone) => 4,
            _ => 1,
        }
    }
}

impl Event {
    /// Blank this event's texts for the erasure `seq` (recorded `at` by `actor`), keeping its hash:
    /// in format 3 the hash covers the texts' commitments, which are kept.
    pub fn redact(&mut self, seq: u64, at: Timestamp, actor: &str) {
        let format = self.format;
        let mut commitments = Vec::new();
        for text in self.body.texts_mut() {
            if format >= 3 {
                commitments.push(crate::chain::text_commitment(text));
            }
            text.clear();
        }
        self.erased = Some(Erased { seq, at, actor: actor.to_string(), commitments });
    }
}

fn effect_ids(effects: &[Effect]) -> Vec<MemoryId> {
    let mut ids = Vec::new();
    for effect in effects {
        match effect {
            Effect::MadeStale { memory_id }
            | Effect::Introduced { memory_id, .. }
            | Effect::Accepted { memory_id }
            | Effect::Rejected { memory_id } => ids.push(*memory_id),
            Effect::Reparented { memory_id, .. } => ids.push(*memory_id),
            Effect::EdgeAdded { edge } => ids.extend([edge.from, edge.to]),
        }
    }
    ids
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct MemoryObserved {
    pub memory_id: MemoryId,
    /// The text as stored: line endings normalised, surrounding whitespace trimmed.
    pub text: String,
    pub memory_type: MemoryType,
    pub scope: String,
    pub source: Option<String>,
    /// A caller-given identity (subject/predicate/qualifiers) that makes two texts the same fact.
    pub fact_key: Option<String>,
    /// When the claim became true in the world, if the caller said.
    pub effective_at: Option<Timestamp>,
    pub content_hash: Hash,
    /// Saved with `--no-dedup`: no candidates were examined.
    pub dedup: bool,
    /// Format 5: where in a transcript the memory was said (`import sessions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// Format 5: where it came from, in the caller's words (`--origin slack:#billing`): the same
    /// origin saying it again is one source. Before format 5, `source` held this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Format 6: when the claim stops being true unless something renews it ("I'm on call this
    /// week"): a read at a later valid time finds the memory `expired`, with no event then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
    /// Format 6: the time to live the expiry was given as (`--ttl 14d`), in seconds: what a
    /// refresh renews it by. None for an expiry given as an instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds: Option<u64>,
}

impl MemoryObserved {
    /// The authority of this observation: in format 5 its `source` names it; an earlier
    /// format's source was a free label and every save was a person's word.
    pub fn authority(&self, format: u16) -> Authority {
        if format < 5 {
            return Authority::Stated;
        }
        self.source.as_deref().and_then(|s| s.parse().ok()).unwrap_or(Authority::Stated)
    }

    /// What makes two observations one source rather than two: the caller's origin label (in
    /// formats before 5 the `source`), else the transcript it was imported from (its session, or
    /// its file). None: an unnamed source.
    pub fn source_identity(&self, format: u16) -> Option<String> {
        if format < 5 {
            return self.source.clone();
        }
        if let Some(origin) = &self.origin {
            return Some(origin.clone());
        }
        self.evidence.as_ref().map(|e| match &e.session {
            Some(session) => format!("{}:{session}", e.agent),
            None => format!("{}:{}", e.agent, e.file),
        })
    }
}

/// Where in a transcript an imported memory was said (format 5).
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    /// The agent that wrote the transcript: `claude-code`, `codex`, `plain`.
    pub agent: String,
    /// The session, when the transcript names one.
    pub session: Option<String>,
    /// The transcript's path as it was read.
    pub file: String,
    /// The lines that support the memory, from 1, inclusive.
    pub first_line: u32,
    pub last_line: u32,
    /// The ids of the messages on those lines.
    pub message_ids: Vec<String>,
    /// Those lines' words, with secrets and `<private>` spans removed.
    pub excerpt: String,
    /// When it was said: the supporting turn's time, else the session's, else the file's.
    pub observed_at: Option<Timestamp>,
}

/// A model's answer for one pair, recorded whatever it was (docs/models.md).
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct ModelVerdict {
    pub model: String,
    /// The raw answer text, when there was one.
    pub raw: Option<String>,
    pub relation: Option<Relation>,
    pub reason: Option<String>,
    /// What went wrong, when the model could not be used (the lexical verdict was used instead).
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct PairClassified {
    pub incoming: MemoryId,
    pub candidate: MemoryId,
    pub method: Method,
    pub relation: Relation,
    /// The rule that decided or dropped the pair.
    pub gate: Name,
    pub reason: String,
    /// Every score computed, by name.
    pub scores: Vec<(Name, f64)>,
    /// The thresholds in force, by name.
    pub thresholds: Vec<(Name, f64)>,
    pub model: Option<ModelVerdict>,
    pub outcome: PairOutcome,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct BeliefAdded {
    pub memory_id: MemoryId,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct BeliefVersioned {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    pub replaces: MemoryId,
    pub cause: VersionCause,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct BeliefMerged {
    pub memory_id: MemoryId,
    pub into: MemoryId,
    pub kind: MergeKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct BeliefHistorical {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    /// The current belief that is newer by effective time.
    pub current: MemoryId,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct BeliefRetired {
    pub memory_id: MemoryId,
    pub reason: Option<String>,
}

/// One side of a conflict, as it stood when the conflict opened.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct ConflictSide {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct ConflictOpened {
    pub conflict_id: ConflictId,
    pub incoming: MemoryId,
    pub candidates: Vec<ConflictSide>,
    /// Format 5: why it opened (before: a contradiction). Left out of JSON when a contradiction.
    #[serde(default, skip_serializing_if = "ConflictKind::is_contradiction")]
    pub kind: ConflictKind,
    /// Format 5: the authority a resolution needs, the highest of its sides' (before: stated).
    /// Left out of JSON when `stated`.
    #[serde(default, skip_serializing_if = "Authority::is_stated")]
    pub needs_authority: Authority,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct ConflictResolved {
    pub conflict_id: ConflictId,
    pub action: ResolutionAction,
    /// `person:<actor>`, `effective_time` or `judge:<model>`.
    pub by: String,
    pub rationale: Option<String>,
    pub effects: Vec<Effect>,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct ResolutionReverted {
    pub conflict_id: ConflictId,
    /// The seq of the `conflict_resolved` event being reverted.
    pub resolution_seq: u64,
    /// The effects being undone: a copy of the resolution's.
    pub undone: Vec<Effect>,
}

/// What an erasure removed: never the texts, only what they were.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct MemoryErased {
    /// The memories whose texts are gone.
    pub memory_ids: Vec<MemoryId>,
    /// Their content hashes, in the same order.
    pub content_hashes: Vec<Hash>,
    /// The conflicts whose reasons and rationales were blanked (they involved those memories).
    pub conflicts: Vec<ConflictId>,
    /// The seqs of the events whose texts were blanked.
    pub events: Vec<u64>,
    /// The person's reason, if given.
    pub reason: Option<String>,
}

/// A merged text a chat model proposed for memories that each enrich `revision` with a detail of
/// their own (linked `co_enriches`). It opens an entry of the conflict queue; `conflicts resolve
/// --merge` with this text (or another) accepts it.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct MergeProposed {
    pub conflict_id: ConflictId,
    /// The memory whose save found the others.
    pub incoming: MemoryId,
    /// The memories it co-enriches, as they stood; each reason says why they were linked.
    pub candidates: Vec<ConflictSide>,
    /// The version every one of them enriches.
    pub revision: MemoryId,
    /// The proposed text: every detail of each, nothing invented.
    pub text: String,
    /// The model's answer (its relation is not asked and stays null).
    pub model: ModelVerdict,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct BeliefEdited {
    pub memory_id: MemoryId,
    pub root_id: MemoryId,
    pub version: u32,
    pub replaces: MemoryId,
    pub expected_version: Option<u32>,
}

/// What a principal may do in the scopes a pattern names (format 5).
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct Grant {
    /// A scope (`team:payments`), a prefix of scopes (`project:*`), or every scope (`*`).
    pub pattern: String,
    pub verbs: Vec<Verb>,
    /// The highest authority it may claim there; none: its kind's default.
    pub authority: Option<Authority>,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct PrincipalAdded {
    /// Lowercase letters, digits, `.`, `_` and `-`; unique in the store, never reused.
    pub name: String,
    pub kind: PrincipalKind,
    /// The token's keyed hash (never the token): see `verifier` in the engine's access module.
    pub verifier: Hash,
    pub grants: Vec<Grant>,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct PrincipalGranted {
    pub name: String,
    /// Each replaces the principal's grant of the same pattern.
    pub grants: Vec<Grant>,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct GrantRevoked {
    pub name: String,
    /// The patterns whose grants were taken back.
    pub patterns: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct PrincipalRevoked {
    pub name: String,
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct PrincipalRotated {
    pub name: String,
    /// The new token's keyed hash.
    pub verifier: Hash,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct BeliefProposed {
    pub memory_id: MemoryId,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct HeadAccepted {
    /// Why, as the person who accepted it said.
    pub reason: String,
    /// The head accepted: the store's head when it was accepted (the event follows it).
    pub head_seq: u64,
    pub head_hash: Hash,
    /// The witness's head it was accepted instead of, when there was a witness.
    pub instead_of_seq: Option<u64>,
    pub instead_of_hash: Option<Hash>,
    /// How the store disagreed with its witness when it was opened.
    pub disagreement: Option<String>,
    /// The key that signs the event's commit.
    pub key_id: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
pub struct TranscriptProgressed {
    /// `claude-code`, `codex` or `plain`.
    pub agent: String,
    /// The transcript's path as it was read.
    pub file: String,
    pub session: Option<String>,
    /// How many bytes of the file are read and committed.
    pub offset: u64,
    /// blake3 of the file's first `offset` bytes: a file rewritten under its name is read again.
    pub prefix_hash: Hash,
    /// The chunk this event commits.
    pub chunk_hash: Hash,
    /// The chunk's lines, from 1, inclusive.
    pub first_line: u32,
    pub last_line: u32,
    /// What the chunk's extraction saved, whatever each save's outcome.
    pub memories: Vec<MemoryId>,
}
