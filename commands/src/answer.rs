//! The typed answer of each command. Serialized, an answer is the command's `--json` output and
//! the body HTTP answers with (docs/cli.md names every field); the CLI renders its human text
//! from the same value, in its own process, whether it ran the command or a server did.

use memledger_engine::erase::EraseResult;
use memledger_engine::models::TokenUsage;
use memledger_engine::models::embed::EmbedReport;
use memledger_engine::models::judge::JudgeReport;
use memledger_engine::principals::{PrincipalChange, PrincipalView};
use memledger_engine::reads::{Decision, HistoryView, MemoryView, Stats, VerifyView};
use memledger_engine::resolve::{ForgetResult, ResolveResult, UpdateResult};
use memledger_engine::review::{ConflictPage, NearMiss, Page, Timeline};
use memledger_engine::scan::ScanReport;
use memledger_engine::{
    ConflictStatus, FileProgress, LastVerify, ProposalRecord, RecallResult, ResolutionRecord, RevertRecord, SaveResult,
};
use memledger_schemas::{Authority, ConflictId, Event, Hash, MemoryId, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::CommandError;
use crate::request::Call;

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

/// One command's answer. Its JSON is the variant's own document (`#[serde(untagged)]`); which
/// command it answers is the [`Call`]'s (`Answer::parse` reads a document back by it).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Answer {
    Save(SaveResult),
    /// `save --from`: one answer per line, in order (JSON Lines).
    SaveLines(Vec<LineAnswer>),
    Update(UpdateResult),
    Forget(ForgetResult),
    Erase(EraseResult),
    Show(Box<MemoryView>),
    List(ListDoc),
    Recall(RecallDoc),
    History(HistoryView),
    Why(WhyDoc),
    Browse(BrowseDoc),
    ConflictsList(ConflictsDoc),
    ConflictsShow(Box<ConflictDoc>),
    ConflictsResolve(ResolveResult),
    ConflictsRevert(ResolveResult),
    ConflictsAuto(JudgeReport),
    ConflictsScan(ScanReport),
    ConflictsOpen(OpenedDoc),
    /// The events, one JSON document per line.
    Log(Vec<Event>),
    Rebuild(RebuildDoc),
    Verify(VerifyView),
    Stats(StatsDoc),
    Embed(EmbedReport),
    Usage(UsageDoc),
    ReviewConflicts(ConflictPage),
    Events(Page<Event>),
    NearMisses(Page<NearMiss>),
    Timeline(Timeline),
    Whoami(WhoamiDoc),
    PrincipalsList(PrincipalsDoc),
    PrincipalsAdd(PrincipalChange),
    PrincipalsGrant(PrincipalChange),
    PrincipalsRevoke(PrincipalChange),
    PrincipalsRotate(PrincipalChange),
    TranscriptProgress(ProgressDoc),
    TranscriptChunk(ChunkDoc),
}

impl Answer {
    /// The `--json` output: one document on a line, or (`save --from`, `log`) one per item.
    pub fn json_lines(&self) -> Result<String, serde_json::Error> {
        fn line<T: Serialize>(out: &mut String, value: &T) -> Result<(), serde_json::Error> {
            out.push_str(&serde_json::to_string(value)?);
            out.push('\n');
            Ok(())
        }
        let mut out = String::new();
        match self {
            Answer::SaveLines(lines) => lines.iter().try_for_each(|l| line(&mut out, l))?,
            Answer::Log(events) => events.iter().try_for_each(|e| line(&mut out, e))?,
            other => line(&mut out, other)?,
        }
        Ok(out)
    }

    /// The answer to `call` its `--json` output holds (what [`Answer::json_lines`] wrote).
    pub fn parse(call: &Call, json: &str) -> Result<Answer, serde_json::Error> {
        fn doc<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, serde_json::Error> {
            serde_json::from_str(json.trim())
        }
        fn lines<T: serde::de::DeserializeOwned>(json: &str) -> Result<Vec<T>, serde_json::Error> {
            json.lines().filter(|l| !l.trim().is_empty()).map(serde_json::from_str).collect()
        }
        Ok(match call {
            Call::Save(_) => Answer::Save(doc(json)?),
            Call::SaveLines(_) => Answer::SaveLines(lines(json)?),
            Call::Update(_) => Answer::Update(doc(json)?),
            Call::Forget(_) => Answer::Forget(doc(json)?),
            Call::Erase(_) => Answer::Erase(doc(json)?),
            Call::Show(_) => Answer::Show(doc(json)?),
            Call::List(_) => Answer::List(doc(json)?),
            Call::Recall(_) => Answer::Recall(doc(json)?),
            Call::History(_) => Answer::History(doc(json)?),
            Call::Why(_) => Answer::Why(doc(json)?),
            Call::Browse(_) => Answer::Browse(doc(json)?),
            Call::ConflictsList(_) => Answer::ConflictsList(doc(json)?),
            Call::ConflictsShow(_) => Answer::ConflictsShow(doc(json)?),
            Call::ConflictsResolve(_) => Answer::ConflictsResolve(doc(json)?),
            Call::ConflictsRevert(_) => Answer::ConflictsRevert(doc(json)?),
            Call::ConflictsAuto(_) => Answer::ConflictsAuto(doc(json)?),
            Call::ConflictsScan(_) => Answer::ConflictsScan(doc(json)?),
            Call::ConflictsOpen(_) => Answer::ConflictsOpen(doc(json)?),
            Call::Log(_) => Answer::Log(lines(json)?),
            Call::Rebuild(_) => Answer::Rebuild(doc(json)?),
            Call::Verify(_) => Answer::Verify(doc(json)?),
            Call::Stats(_) => Answer::Stats(doc(json)?),
            Call::Embed(_) => Answer::Embed(doc(json)?),
            Call::Usage(_) => Answer::Usage(doc(json)?),
            Call::ReviewConflicts(_) => Answer::ReviewConflicts(doc(json)?),
            Call::Events(_) => Answer::Events(doc(json)?),
            Call::NearMisses(_) => Answer::NearMisses(doc(json)?),
            Call::Timeline(_) => Answer::Timeline(doc(json)?),
            Call::Whoami(_) => Answer::Whoami(doc(json)?),
            Call::PrincipalsList(_) => Answer::PrincipalsList(doc(json)?),
            Call::PrincipalsAdd(_) => Answer::PrincipalsAdd(doc(json)?),
            Call::PrincipalsGrant(_) => Answer::PrincipalsGrant(doc(json)?),
            Call::PrincipalsRevoke(_) => Answer::PrincipalsRevoke(doc(json)?),
            Call::PrincipalsRotate(_) => Answer::PrincipalsRotate(doc(json)?),
            Call::TranscriptProgress(_) => Answer::TranscriptProgress(doc(json)?),
            Call::TranscriptChunk(_) => Answer::TranscriptChunk(doc(json)?),
        })
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
