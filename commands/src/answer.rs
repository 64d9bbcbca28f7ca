//! The typed answer of each command. Serialized, an answer is the command's `--json` output and
//! the body HTTP answers with (docs/cli.md names every field); the CLI renders its human text
//! from the same value, in its own process, whether it ran the command or a server did.

use memledger_engine::models::TokenUsage;
use memledger_engine::principals::PrincipalView;
use memledger_engine::reads::{Decision, MemoryView, Stats};
use memledger_engine::{
    ConflictStatus, FileProgress, LastVerify, ProposalRecord, RecallResult, ResolutionRecord, RevertRecord, SaveResult,
};
use memledger_schemas::{Authority, ConflictId, Hash, MemoryId, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Declared by the list of commands (`with_commands!`), a variant per command.
pub use crate::Answer;
use crate::error::CommandError;

/// What a command answered: its document, and a failure that came after part of the work (a
/// verification that failed, `save --from` lines refused, judge calls that failed) or instead
/// of it.
#[derive(Clone, Debug, Default)]
pub struct Executed {
    pub answer: Option<Answer>,
    pub error: Option<CommandError>,
    /// Notes for standard error (`memledger: ...`): not errors.
    pub notes: Vec<String>,
}

impl Executed {
    pub fn answered(answer: Answer) -> Executed {
        Executed { answer: Some(answer), ..Executed::default() }
    }

    pub fn failed(error: CommandError) -> Executed {
        Executed { error: Some(error), ..Executed::default() }
    }

    /// An answer given, and a failure said after it.
    pub fn answered_then_failed(answer: Answer, error: Option<CommandError>) -> Executed {
        Executed { answer: Some(answer), error, notes: Vec::new() }
    }
}

/// How an answer's `--json` output is laid out (the list's `doc` or `lines`): what
/// `Answer::json_lines` writes and `Answer::parse` reads back.
pub mod form {
    /// One document on a line.
    pub mod doc {
        pub fn write<T: serde::Serialize + ?Sized>(out: &mut String, value: &T) -> Result<(), serde_json::Error> {
            out.push_str(&serde_json::to_string(value)?);
            out.push('\n');
            Ok(())
        }

        pub fn read<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, serde_json::Error> {
            serde_json::from_str(json.trim())
        }
    }

    /// One document per item, each on its line (JSON Lines).
    pub mod lines {
        pub fn write<'a, T: serde::Serialize + 'a>(
            out: &mut String,
            items: impl IntoIterator<Item = &'a T>,
        ) -> Result<(), serde_json::Error> {
            items.into_iter().try_for_each(|item| super::doc::write(out, item))
        }

        pub fn read<T: serde::de::DeserializeOwned>(json: &str) -> Result<Vec<T>, serde_json::Error> {
            json.lines().filter(|l| !l.trim().is_empty()).map(serde_json::from_str).collect()
        }
    }
}

/// One line of `save --from`: its save's result, or why it was refused.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum LineAnswer {
    Saved(Box<SaveResult>),
    Refused { line: usize, error: String },
}

/// `list`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ListDoc {
    pub memories: Vec<MemoryView>,
}

/// `recall`: the results, and their texts verbatim inside a fence of their own (`fenced`, item
/// `[n]` the `n`th result) for an agent's context.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RecallDoc {
    #[serde(flatten)]
    pub found: RecallResult,
    pub fenced: String,
}

/// `why`: the decisions that involved a memory (or a pair), and its expiry, which decides with
/// no event of its own.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WhyDoc {
    /// The memory asked about.
    pub memory_id: MemoryId,
    pub decisions: Vec<Decision>,
    pub expires_at: Option<Timestamp>,
    pub expired: bool,
}

/// A page of the active memories, newest first, and the scopes they are in (MCP resources).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct BrowseDoc {
    pub memories: Vec<MemoryView>,
    /// Where the next page starts; null: this is the last.
    pub next_offset: Option<usize>,
    pub scopes: Vec<ScopeCount>,
}

/// A scope and its active memories.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ScopeCount {
    pub scope: String,
    pub memories: u64,
}

/// `conflicts list`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ConflictsDoc {
    pub conflicts: Vec<ConflictDoc>,
}

/// One conflict, with the memories on each side as far as the caller may read them.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ConflictDoc {
    pub conflict_id: ConflictId,
    pub status: ConflictStatus,
    pub incoming: MemoryId,
    pub incoming_memory: SideDoc,
    pub candidates: Vec<MemoryId>,
    pub candidate_memories: Vec<SideDoc>,
    /// Why each candidate conflicts (withheld where the caller may not read it).
    pub reasons: Vec<String>,
    pub opened_at: Timestamp,
    pub opened_seq: u64,
    pub opened_by: String,
    pub resolution: Option<ResolutionRecord>,
    pub resolutions: Vec<ResolutionRecord>,
    pub reverts: Vec<RevertRecord>,
    /// `contradiction`, `proposal`, `merge_proposal`, ….
    pub kind: String,
    /// The authority settling it takes.
    pub needs_authority: Authority,
    /// The principal that proposed it, when it is a proposal.
    pub proposed_by: Option<String>,
    /// The text a model proposed for the memories that each add a detail.
    pub proposal: Option<ProposalRecord>,
    /// The sides in a scope the caller may not read (only their ids are given).
    pub withheld: Vec<MemoryId>,
}

/// A memory on one side of a conflict: its id, and what the caller may read of it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SideDoc {
    pub memory_id: MemoryId,
    /// It is in a scope the caller may not read: only its id is given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub withheld: bool,
    #[serde(flatten)]
    pub memory: Option<SideMemory>,
    /// Why it conflicts (a candidate's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a conflict's side says, who said it, and where from.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SideMemory {
    pub text: String,
    pub status: memledger_engine::validity::ReadStatus,
    pub version: u32,
    pub scope: String,
    pub authority: Authority,
    pub principal: String,
    /// Where in a transcript it was said (`import sessions`): the file, the lines, their words
    /// and when.
    pub file: Option<String>,
    pub first_line: Option<u32>,
    pub last_line: Option<u32>,
    pub excerpt: Option<String>,
    pub observed_at: Option<Timestamp>,
}

/// `conflicts open`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OpenedDoc {
    pub conflict_id: ConflictId,
    pub seqs: Vec<u64>,
}

/// `rebuild`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RebuildDoc {
    pub events: u64,
    pub views: Vec<String>,
    pub elapsed_ms: u64,
}

/// `stats`: counts, and the last verification.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct StatsDoc {
    #[serde(flatten)]
    pub stats: Stats,
    pub last_verify: Option<LastVerify>,
}

/// `usage`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct UsageDoc {
    /// Today (UTC), `YYYY-MM-DD`.
    pub day: String,
    /// This month, `YYYY-MM`.
    pub month: String,
    pub today: Tokens,
    pub this_month: Tokens,
    pub by_principal: Vec<PrincipalTokens>,
    pub yours: PrincipalTokens,
    /// Tokens a principal may spend a day; null: no budget.
    pub daily_budget: Option<u64>,
}

/// A principal's tokens today and this month.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PrincipalTokens {
    pub principal: String,
    pub today: Tokens,
    pub month: Tokens,
}

/// Tokens as the documents give them.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Tokens {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    pub calls: u64,
}

impl From<&TokenUsage> for Tokens {
    fn from(u: &TokenUsage) -> Tokens {
        Tokens {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total(),
            calls: u.calls,
        }
    }
}

/// `whoami`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WhoamiDoc {
    pub principal: String,
    pub kind: memledger_schemas::PrincipalKind,
    pub own_scope: String,
    pub grants: Vec<String>,
    pub owner: bool,
    pub actor: String,
}

/// `principals list`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PrincipalsDoc {
    pub principals: Vec<PrincipalView>,
}

/// Where a transcript file's import stands, and which of a file's chunks are in.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ProgressDoc {
    pub progress: Option<FileProgress>,
    pub chunks: Vec<Hash>,
}

/// One chunk of a transcript imported: each save's result or refusal, in order, and the
/// progress event that commits the chunk.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ChunkDoc {
    pub results: Vec<ChunkSave>,
    pub progress_seqs: Vec<u64>,
    pub progress_replayed: bool,
    /// What the chunk's saves cost in chat-model tokens.
    pub usage: TokenUsage,
}

/// One save of a chunk: its result, or why it was refused.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ChunkSave {
    Saved(Box<SaveResult>),
    Refused { index: usize, error: String },
}
