//! `memledger import sessions`: memories distilled from agents' transcripts, each saved through
//! the ordinary pipeline with the lines it came from (docs/import.md, docs/design.md §14).
//!
//! This process does the reading: it finds the transcripts, reads each with its agent's reader
//! (engine/src/transcripts), cleans every turn (secrets, `<private>` spans, memledger's own recall
//! blocks), asks the store where the file's import stands, cuts what is new into chunks and asks
//! the chat model about each, outside any write. Each chunk is then committed as one call — its
//! saves, each with an idempotency key made from the chunk's hash, and the `transcript_progressed`
//! event with the offset reached — through the store's server when one runs, else on the store
//! opened here, like every other command. A re-run reads on from the offset; a file whose first
//! bytes changed is read again from its start, its chunks already committed recognised by their
//! hashes; a killed import commits the chunk it was in once, when run again.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use memledger_engine::models::Models;
use memledger_engine::transcripts::chunk::{self, Budget, Chunk};
use memledger_engine::transcripts::extract::{self, Extracted};
use memledger_engine::transcripts::{self, Agent, Transcript, Turn, clean, dates};
use memledger_engine::{Caller, Memledger};
use memledger_schemas::{Hash, Timestamp};
use serde_json::{Value, json};

use memledger_server::api::{
    Call, EvidenceBody, ProgressBody, SaveBody, TranscriptChunkBody, TranscriptQuery, UsageBody,
};

use crate::app::Context;
use crate::output::{CliError, Output};

/// Import memories from agents' session transcripts: Claude Code (~/.claude/projects, or
/// $CLAUDE_CONFIG_DIR), Codex (~/.codex/sessions, or $CODEX_HOME), or plain JSON lines of
/// {"role", "text", "timestamp"}. Each memory keeps its file, lines, message ids, a redacted
/// excerpt and the time it was said (its effective time). Secrets and <private> spans never reach
/// the model or the store. Idempotent per file: a re-run imports only what was appended.
///
/// Needs a chat model (MEMLEDGER_LLM_URL, MEMLEDGER_LLM_MODEL); --explicit-only works without one.
///
/// Example: memledger import sessions --agent claude-code --since 2025-06-01 --dry-run
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Transcript files or directories (default: the agents' own directories). Files named here
    /// are read even while they are still being written.
    pub paths: Vec<PathBuf>,
    /// claude-code, codex or plain (default: found from each file's records).
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// Only transcripts modified since then (a date, or RFC 3339).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only the transcript of this session (its id, or part of its file name).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only sessions that worked in this directory.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Never read the sessions that worked in this directory (or below it), or this session id;
    /// beside the config file's `[import] exclude` and any directory holding a `.memledgerignore`.
    /// An excluded transcript is not read past its first line. Repeatable.
    #[arg(long, value_name = "DIR|SESSION")]
    pub exclude: Vec<String>,
    /// Read and cut the transcripts and say what would be imported: no model is asked, nothing is
    /// written.
    #[arg(long)]
    pub dry_run: bool,
    /// At most this many transcripts (the oldest first).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only what a person asked to be remembered ("remember that …", "note for the future: …",
    /// "#memory …" lines) from their own turns; needs no model.
    #[arg(long)]
    pub explicit_only: bool,
    /// The scope the memories are saved in (default: the principal's own; the owner's is personal).
    #[arg(long)]
    pub scope: Option<String>,
    /// Spend at most this many of the chat model's tokens in this run (prompt and completion, as
    /// the API counts them): the run stops cleanly before the chunk that would pass it, and the
    /// next run starts there. The daily budget (`MEMLEDGER_DAILY_TOKENS`) holds besides.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Characters of transcript one model call reads at most.
    #[arg(long, value_name = "CHARS", default_value_t = Budget::default().chars)]
    pub chunk_chars: usize,
    /// Read a Claude Code hook's JSON on standard input (`hooks install` writes this) and import
    /// its transcript.
    #[arg(long, hide = true)]
    pub from_hook: bool,
}

/// Transcripts modified more recently than this are still being written: discovery leaves them
/// for a later run (a file named on the command line is read anyway).
const ACTIVE_FOR: Duration = Duration::from_secs(5 * 60);

/// A transcript to read.
struct Source {
    path: PathBuf,
    agent: Option<Agent>,
    modified: SystemTime,
    /// The file itself was named on the command line (or by a hook).
    named: bool,
    /// Found in an agent's own directory: left while still being written.
    discovered: bool,
}

/// What the run did, for the summary.
#[derive(Default)]
struct Summary {
    files: u64,
    files_unchanged: u64,
    files_rewritten: u64,
    files_active: u64,
    files_unknown: Vec<String>,
    /// Transcripts not read past their first line, by why: `directory`, `session`, `.memledgerignore`.
    excluded: BTreeMap<String, u64>,
    turns: u64,
    chunks: u64,
    chunks_known: u64,
    outcomes: BTreeMap<String, u64>,
    replayed: u64,
    unlocated: u64,
    skipped: BTreeMap<String, u64>,
    malformed: Vec<Value>,
    secrets: u64,
    private_spans: u64,
    recall_blocks: u64,
    failures: Vec<Value>,
    model_time: Duration,
    model_calls: u64,
    /// The chat model's tokens this run.
    tokens: memledger_engine::models::TokenUsage,
    /// Tokens not yet counted in the store (they go with the next chunk committed).
    unrecorded: memledger_engine::models::TokenUsage,
    /// The most completion tokens one call took this run: what the next is assumed to take.
    largest_answer: u64,
    /// The most tokens one chunk's saves took (the chat model classifying them), and how many
    /// chunks were committed: what the next chunk's saves are assumed to take.
    largest_commit: u64,
    commits: u64,
    /// Where the run stopped at its budget (`file`, `first_line`, `left`), if it did.
    budget_stop: Option<Value>,
}

/// The tokens a run may spend: `--max-tokens`, and what is left of the principal's daily
/// budget (`MEMLEDGER_DAILY_TOKENS`, `[models] daily_tokens`) after what it spent today.
#[derive(Default)]
struct Limits {
    max_tokens: Option<u64>,
    daily_left: Option<u64>,
}

impl Limits {
    /// Tokens this run may still spend, if it is limited.
    fn left(&self, summary: &Summary) -> Option<u64> {
        let spent = summary.tokens.total();
        let run = self.max_tokens.map(|m| m.saturating_sub(spent));
        let day = self.daily_left.map(|d| d.saturating_sub(spent));
        match (run, day) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// What a prompt is assumed to cost before it is sent, its answer as long as the longest so far.
fn estimate((system, user): &(String, String), largest_answer: u64) -> u64 {
    memledger_engine::models::usage::estimate(system, user, largest_answer)
}

pub fn run(ctx: &Context, mut args: Args, out: &mut Output) -> Result<(), CliError> {
    let started = Instant::now();
    let agent = args.agent.as_deref().map(str::parse::<Agent>).transpose().map_err(CliError::bad_input)?;
    let since = args.since.as_deref().map(parse_since).transpose()?;
    if args.chunk_chars < 1000 {
        return Err(CliError::bad_input("--chunk-chars must be at least 1000"));
    }
    if let Some(limit) = args.limit
        && limit == 0
    {
        return Err(CliError::bad_input("--limit must be at least 1"));
    }
    let mut agent = agent;
    // What a hook says of its session (its id, its working directory), for the exclusions.
    let mut hooked = Hooked::default();
    if args.from_hook {
        hooked = read_hook()?;
        args.paths = vec![hooked.transcript.clone()];
        agent = agent.or(Some(Agent::ClaudeCode));
    }
    let models = Models::new(ctx.model_config());
    let model = models.llm().map(|e| e.model.clone());
    if args.from_hook && model.is_none() && !args.explicit_only {
        // A session that ends offline still keeps what the person asked to be remembered.
        out.note("memledger: no chat model is configured: importing only what was explicitly asked to be remembered");
        args.explicit_only = true;
    }
    if model.is_none() && !args.explicit_only && !args.dry_run {
        return Err(CliError::new(
            memledger_engine::Exit::BadInput,
            "import sessions needs a chat model to distil memories from transcripts; nothing was read",
            Some(
                "set MEMLEDGER_LLM_URL and MEMLEDGER_LLM_MODEL (docs/models.md), or pass --explicit-only to import \
                 only what a person asked to be remembered, offline"
                    .into(),
            ),
        ));
    }
    let sources = discover(&args, agent, since)?;
    let config = &crate::config::get().import.exclude;
    let exclusions = Exclusions::new(config.iter().chain(&args.exclude).map(String::as_str));
    let budget = Budget { chars: args.chunk_chars, ..Budget::default() };
    let mut route = Route::new(ctx)?;
    let mut summary = Summary::default();
    let limits = if args.dry_run || args.explicit_only {
        Limits::default()
    } else {
        let daily_left = match super::usage::daily_budget()? {
            Some(daily) => {
                let spent = route.call(ctx, Call::Usage(memledger_server::api::Empty {}))?;
                Some(daily.saturating_sub(spent["yours"]["today"]["total_tokens"].as_u64().unwrap_or(0)))
            }
            None => None,
        };
        Limits { max_tokens: args.max_tokens, daily_left }
    };
    let now = SystemTime::now();
    let bar = crate::style::progress(Some(sources.len() as u64), "importing");
    for source in &sources {
        bar.inc(1);
        if source.discovered && now.duration_since(source.modified).unwrap_or_default() < ACTIVE_FOR {
            summary.files_active += 1;
            continue;
        }
        if summary.budget_stop.is_some() {
            break;
        }
        let limits = &limits;
        let file = Importing {
            ctx,
            args: &args,
            models: &models,
            budget,
            source,
            limits,
            exclusions: &exclusions,
            hooked: &hooked,
        };
        let result = bar.suspend(|| file.import(&mut route, &mut summary, out));
        if let Err(e) = result {
            bar.finish_and_clear();
            return Err(e);
        }
    }
    bar.finish_and_clear();
    if args.explicit_only && !out.json {
        out.note(
            "memledger: imported only what was explicitly asked to be remembered; a chat model (MEMLEDGER_LLM_URL, \
             MEMLEDGER_LLM_MODEL) distils the rest",
        );
    }
    print_summary(out, &summary, &args, model.as_deref(), started.elapsed())?;
    if !summary.failures.is_empty() {
        out.flush()?;
        return Err(CliError::new(
            memledger_engine::Exit::Failure,
            format!(
                "{} chunk(s) could not be distilled (the model failed or answered nonsense): their files stop there",
                summary.failures.len()
            ),
            Some("run the import again to retry them; what was committed stays".into()),
        ));
    }
    Ok(())
}

/// A transcript's first line (with its newline), at most [`FIRST_LINE_MAX`] bytes of it: all an
/// exclusion reads.
fn first_line(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{BufRead, Read};
    let mut line = Vec::new();
    std::io::BufReader::new(std::fs::File::open(path)?).take(FIRST_LINE_MAX).read_until(b'\n', &mut line)?;
    Ok(line)
}

/// The longest first line read for an exclusion (a Codex `session_meta` carries instructions).
const FIRST_LINE_MAX: u64 = 1 << 20;

/// A date (`2025-06-01`, midnight UTC) or an RFC 3339 time.
fn parse_since(text: &str) -> Result<SystemTime, CliError> {
    let t = transcripts::parse_time(text)
        .ok_or_else(|| CliError::bad_input(format!("--since: not a date or an RFC 3339 time: {text:?}")))?;
    let micros = u64::try_from(t.micros()).unwrap_or(0);
    Ok(SystemTime::UNIX_EPOCH + Duration::from_micros(micros))
}

/// What a Claude Code hook says on standard input: the transcript (`transcript_path`), and its
/// session's id and working directory (`session_id`, `cwd`) when it gives them.
#[derive(Default)]
struct Hooked {
    transcript: PathBuf,
    session: Option<String>,
    cwd: Option<String>,
}

fn read_hook() -> Result<Hooked, CliError> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
    let hook: Value = serde_json::from_str(&text)
        .map_err(|e| CliError::bad_input(format!("--from-hook: standard input is not a hook's JSON: {e}")))?;
    let field = |name: &str| hook.get(name).and_then(Value::as_str).map(str::to_string);
    let transcript = field("transcript_path")
        .map(PathBuf::from)
        .ok_or_else(|| CliError::bad_input("--from-hook: the hook's JSON names no transcript_path"))?;
    Ok(Hooked { transcript, session: field("session_id"), cwd: field("cwd") })
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// Where Claude Code keeps its projects' transcripts.
pub fn claude_projects() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(d) => Some(PathBuf::from(d).join("projects")),
        None => home().map(|h| h.join(".claude/projects")),
    }
}

/// Where Codex keeps its rollouts.
fn codex_sessions() -> Option<PathBuf> {
    match std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        Some(d) => Some(PathBuf::from(d).join("sessions")),
        None => home().map(|h| h.join(".codex/sessions")),
    }
}

use crate::exclude::{Exclusions, claude_project_dir};

/// Every `*.jsonl` file under `dir` that `keep` accepts, at any depth.
fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, keep, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") && keep(&path) {
            out.push(path);
        }
    }
}

fn source(path: PathBuf, agent: Option<Agent>, named: bool, discovered: bool) -> Option<Source> {
    let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    Some(Source { path, agent, modified, named, discovered })
}

/// The transcripts to read, oldest first.
fn discover(args: &Args, agent: Option<Agent>, since: Option<SystemTime>) -> Result<Vec<Source>, CliError> {
    let mut found: Vec<Source> = Vec::new();
    if !args.paths.is_empty() {
        for path in &args.paths {
            if path.is_dir() {
                let mut files = Vec::new();
                walk(path, &|_| true, &mut files);
                found.extend(files.into_iter().filter_map(|f| source(f, agent, false, false)));
            } else if path.is_file() {
                found.extend(source(path.clone(), agent, true, false));
            } else {
                return Err(CliError::bad_input(format!("{}: no such file or directory", path.display())));
            }
        }
    } else {
        if agent == Some(Agent::Plain) {
            return Err(CliError::bad_input("--agent plain: name the transcripts to read (PATH…)"));
        }
        if agent.is_none_or(|a| a == Agent::ClaudeCode)
            && let Some(root) = claude_projects()
        {
            let mut root = root;
            if let Some(project) = &args.project {
                let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.clone());
                let dir = root.join(claude_project_dir(&project));
                if dir.is_dir() {
                    root = dir;
                }
            }
            // Subagents' own files hold sidechains only.
            let keep = |p: &Path| {
                !p.components().any(|c| c.as_os_str() == "subagents")
                    && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
            };
            let mut files = Vec::new();
            walk(&root, &keep, &mut files);
            found.extend(files.into_iter().filter_map(|f| source(f, Some(Agent::ClaudeCode), false, true)));
        }
        if agent.is_none_or(|a| a == Agent::Codex)
            && let Some(root) = codex_sessions()
        {
            let keep = |p: &Path| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rollout-"));
            let mut files = Vec::new();
            walk(&root, &keep, &mut files);
            found.extend(files.into_iter().filter_map(|f| source(f, Some(Agent::Codex), false, true)));
        }
    }
    if let Some(id) = &args.session {
        found.retain(|s| s.named || s.path.file_name().is_some_and(|n| n.to_string_lossy().contains(id.as_str())));
    }
    if let Some(since) = since {
        found.retain(|s| s.modified >= since);
    }
    found.sort_by(|a, b| a.modified.cmp(&b.modified).then_with(|| a.path.cmp(&b.path)));
    if let Some(limit) = args.limit {
        found.truncate(limit);
    }
    Ok(found)
}

/// Where the import's calls run: through the store's server, or on the store opened here (only
/// once something is to be written, so a dry run or a run with nothing new creates nothing).
enum Route {
    Server(crate::backend::Server),
    Direct(Option<Box<(Memledger, Caller)>>),
}

impl Route {
    fn new(ctx: &Context) -> Result<Route, CliError> {
        Ok(match ctx.server(true)? {
            Some(server) => Route::Server(server),
            None => Route::Direct(None),
        })
    }

    /// Run `call` and read the one JSON value it prints.
    fn call(&mut self, ctx: &Context, call: Call) -> Result<Value, CliError> {
        let stdout = match self {
            Route::Server(server) => {
                let reply = server.call(ctx, call)?;
                if reply.exit_code != 0 {
                    let exit = memledger_engine::Exit::from_code(reply.exit_code);
                    let message = reply.error.unwrap_or_else(|| "the command failed".into());
                    return Err(CliError::new(exit, message, reply.hint));
                }
                reply.stdout
            }
            Route::Direct(opened) => {
                if opened.is_none() {
                    if !call.creates() && !crate::backend::store_exists(&ctx.dir) && ctx.ledger.is_none() {
                        // Nothing imported yet, into a store that does not exist yet.
                        return Ok(json!({"progress": null, "chunks": []}));
                    }
                    let ml = ctx.open_direct(true)?;
                    let caller = ctx.caller(&ml)?;
                    *opened = Some(Box::new((ml, caller)));
                }
                let (ml, caller) = &**opened.as_ref().expect("opened above");
                let mut buffer = Output::buffer(true);
                super::execute(ml, caller, &call, &mut buffer)?;
                buffer.into_parts().0
            }
        };
        serde_json::from_str(stdout.trim()).map_err(|e| {
            CliError::new(memledger_engine::Exit::Failure, format!("unreadable answer from the store: {e}"), None)
        })
    }
}

/// One transcript file being imported.
struct Importing<'a> {
    ctx: &'a Context,
    args: &'a Args,
    models: &'a Models,
    budget: Budget,
    source: &'a Source,
    limits: &'a Limits,
    exclusions: &'a Exclusions,
    hooked: &'a Hooked,
}

/// A transcript's cleaned turns and what the cleaning took out.
fn cleaned(t: &mut Transcript, summary: &mut Summary) {
    let mut turns = Vec::with_capacity(t.turns.len());
    for mut turn in std::mem::take(&mut t.turns) {
        let c = clean::clean(&turn.text);
        summary.secrets += c.secrets.len() as u64;
        summary.private_spans += u64::from(c.private_spans);
        summary.recall_blocks += u64::from(c.recall_blocks);
        if c.text.trim().is_empty() {
            *t.skipped.entry("empty once cleaned".into()).or_insert(0) += 1;
            continue;
        }
        turn.text = c.text;
        turns.push(turn);
    }
    t.turns = turns;
}

impl Importing<'_> {
    fn file_name(&self) -> String {
        let path = &self.source.path;
        std::path::absolute(path).unwrap_or_else(|_| path.clone()).to_string_lossy().into_owned()
    }

    fn import(&self, route: &mut Route, summary: &mut Summary, out: &mut Output) -> Result<(), CliError> {
        let file = self.file_name();
        let cannot = |e: std::io::Error| {
            CliError::new(memledger_engine::Exit::Failure, format!("cannot read {file}: {e}"), None)
        };
        // Whether it is excluded, from its first line alone.
        let first = first_line(&self.source.path).map_err(cannot)?;
        let head =
            self.source.agent.or_else(|| transcripts::detect(&first)).map(|a| transcripts::read(a, &file, &first));
        let (mut session, mut cwd) = head.as_ref().map_or((None, None), |t| (t.session.as_deref(), t.cwd.as_deref()));
        if self.source.path == self.hooked.transcript {
            session = session.or(self.hooked.session.as_deref());
            cwd = cwd.or(self.hooked.cwd.as_deref());
        }
        if let Some(why) = self.exclusions.excluded(&self.source.path, session, cwd) {
            *summary.excluded.entry(why.kind().to_string()).or_insert(0) += 1;
            return Ok(());
        }
        let bytes = std::fs::read(&self.source.path).map_err(cannot)?;
        let Some(agent) = self.source.agent.or_else(|| transcripts::detect(&bytes)) else {
            summary.files_unknown.push(file);
            return Ok(());
        };
        let mut t = transcripts::read(agent, &file, &bytes);
        if let Some(id) = &self.args.session
            && !self.source.named
            && t.session.as_deref() != Some(id.as_str())
            && !file.contains(id.as_str())
        {
            return Ok(());
        }
        if let Some(project) = &self.args.project {
            let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.clone());
            if t.cwd.as_deref().map(Path::new) != Some(project.as_path()) {
                return Ok(());
            }
        }
        summary.files += 1;
        for (what, n) in &t.skipped {
            *summary.skipped.entry(what.clone()).or_insert(0) += n;
        }
        for m in &t.malformed {
            summary.malformed.push(json!({"file": file, "line": m.line, "error": m.error}));
        }
        cleaned(&mut t, summary);
        let modified = Timestamp::from_micros(
            self.source.modified.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64),
        );
        // When said, failing a turn's own time: the session's, else the file's.
        let fallback = t.session_time.or(Some(modified));
        if t.turns.is_empty() {
            return Ok(());
        }
        let scope = self.args.scope.clone();
        if self.args.explicit_only {
            return self.import_explicit(route, summary, out, &t, fallback, agent);
        }
        let identity = chunk::identity(&t.turns[0]);
        let status = route.call(
            self.ctx,
            Call::TranscriptProgress(TranscriptQuery {
                file: file.clone(),
                identity: Some(identity),
                scope: scope.clone(),
            }),
        )?;
        let known: HashSet<Hash> = status["chunks"]
            .as_array()
            .map(|a| a.iter().filter_map(|h| h.as_str().and_then(Hash::parse_hex)).collect())
            .unwrap_or_default();
        let mut start = 0;
        if let Some(offset) = status["progress"]["offset"].as_u64() {
            let before = status["progress"]["prefix_hash"].as_str().and_then(Hash::parse_hex);
            let same =
                (offset as usize) <= bytes.len() && before == Some(transcripts::prefix_hash(&bytes[..offset as usize]));
            if same {
                start = t.turns.iter().position(|turn| turn.end > offset).unwrap_or(t.turns.len());
            } else {
                summary.files_rewritten += 1;
            }
        }
        if start == t.turns.len() {
            summary.files_unchanged += 1;
            return Ok(());
        }
        summary.turns += (t.turns.len() - start) as u64;
        let chunks = chunk::chunks(&t.turns, start, self.budget, &known);
        summary.chunks_known += chunks.iter().filter(|c| c.known).count() as u64;
        summary.chunks += chunks.iter().filter(|c| !c.known).count() as u64;
        if self.args.dry_run {
            for c in chunks.iter().filter(|c| !c.known) {
                let (first, last) = c.lines(&t.turns);
                if !out.json {
                    out.line(format!("would ask about {file} lines {first}-{last} ({} turn(s))", c.end - c.first))?;
                }
            }
            return Ok(());
        }
        // Ask about as many chunks at once as the model takes and the budget leaves room for,
        // then commit them in order.
        let at_once = self.models.llm().map_or(1, |e| e.concurrency.max(1));
        let mut i = 0;
        while i < chunks.len() {
            let left = self.limits.left(summary);
            let (mut batch, mut asked, mut prompts, mut estimated) = (Vec::new(), Vec::new(), Vec::new(), 0u64);
            for c in chunks[i..].iter().take(at_once) {
                if !c.known {
                    // Under a budget, the first chunk goes alone: what its saves cost is then known.
                    if left.is_some() && summary.commits == 0 && !asked.is_empty() {
                        break;
                    }
                    let prompt = extract::prompt(&t.turns, c, &file, t.session_time, self.budget.chars);
                    let cost = estimate(&prompt, summary.largest_answer) + summary.largest_commit;
                    if left.is_some_and(|left| estimated + cost > left) {
                        // The chunks before it (known ones cost nothing) still go.
                        break;
                    }
                    estimated += cost;
                    asked.push(c);
                    prompts.push(prompt);
                }
                batch.push(c);
            }
            if batch.is_empty() {
                // Not one more chunk fits: stop cleanly; the next run starts here.
                let (first, _) = chunks[i].lines(&t.turns);
                summary.budget_stop = Some(json!({"file": file, "first_line": first, "left": left}));
                return Ok(());
            }
            i += batch.len();
            let asking = Instant::now();
            let (answers, used) =
                memledger_engine::models::metered(|| self.models.ask_all(prompts, extract::parse).unwrap_or_default());
            summary.model_time += asking.elapsed();
            summary.model_calls += asked.len() as u64;
            summary.tokens.add(used);
            if used.calls > 0 {
                summary.largest_answer = summary.largest_answer.max(used.completion_tokens.div_ceil(used.calls));
            }
            summary.unrecorded.add(used);
            let mut answers = asked.iter().map(|c| c.hash).zip(answers).collect::<BTreeMap<_, _>>();
            for c in batch {
                let memories = if c.known {
                    Vec::new()
                } else {
                    match answers.remove(&c.hash).map_or_else(|| Err("no answer".to_string()), |a| a.result) {
                        Ok(memories) => memories,
                        Err(e) => {
                            let (first, _) = c.lines(&t.turns);
                            summary.failures.push(json!({"file": file, "first_line": first, "error": e}));
                            return Ok(());
                        }
                    }
                };
                self.commit(route, summary, out, &t, c, memories, &bytes, fallback, agent)?;
            }
        }
        Ok(())
    }

    /// Save a chunk's memories and record its progress, in one call.
    #[allow(clippy::too_many_arguments)]
    fn commit(
        &self,
        route: &mut Route,
        summary: &mut Summary,
        out: &mut Output,
        t: &Transcript,
        c: &Chunk,
        memories: Vec<Extracted>,
        bytes: &[u8],
        fallback: Option<Timestamp>,
        agent: Agent,
    ) -> Result<(), CliError> {
        let file = self.file_name();
        let turns = c.turns(&t.turns);
        let mut saves = Vec::with_capacity(memories.len());
        let mut described = Vec::with_capacity(memories.len());
        for (n, memory) in memories.iter().enumerate() {
            let key = format!("import:{}:{n}", c.hash.hex());
            let (save, shown) = self.save_of(memory, turns, fallback, t.session.clone(), agent, key, summary);
            saves.push(save);
            described.push(shown);
        }
        let (first_line, last_line) = c.lines(&t.turns);
        let offset = c.end_offset(&t.turns);
        let progress = ProgressBody {
            agent: agent.to_string(),
            file: file.clone(),
            session: t.session.clone(),
            offset,
            prefix_hash: transcripts::prefix_hash(&bytes[..offset as usize]).hex(),
            chunk_hash: c.hash.hex(),
            first_line,
            last_line,
        };
        // The model calls made since the last commit count with this one.
        let usage = std::mem::take(&mut summary.unrecorded);
        let usage = (!usage.is_empty()).then(|| UsageBody::from(usage));
        let body = TranscriptChunkBody { saves, progress: Some(progress), scope: self.args.scope.clone(), usage };
        let answer = route.call(self.ctx, Call::TranscriptChunk(body))?;
        report(out, summary, &answer, described)
    }

    /// The save of one memory found among `turns`, and what its output line shows of it.
    #[allow(clippy::too_many_arguments)]
    fn save_of(
        &self,
        memory: &Extracted,
        turns: &[Turn],
        fallback: Option<Timestamp>,
        session: Option<String>,
        agent: Agent,
        key: String,
        summary: &mut Summary,
    ) -> (SaveBody, Value) {
        let support = extract::support(memory, turns, fallback);
        if support.unlocated {
            summary.unlocated += 1;
        }
        let text = match support.observed_at {
            Some(at) => dates::resolve(&memory.text, at),
            None => memory.text.clone(),
        };
        let observed = support.observed_at.map(Timestamp::to_rfc3339);
        let evidence = EvidenceBody {
            agent: agent.to_string(),
            session: session.clone(),
            file: self.file_name(),
            first_line: support.first_line,
            last_line: support.last_line,
            message_ids: support.message_ids.clone(),
            excerpt: support.excerpt,
            observed_at: observed.clone(),
        };
        let shown = json!({
            "text": text,
            "type": memory.memory_type.to_string(),
            "agent": agent.as_str(),
            "session": session,
            "file": evidence.file,
            "first_line": support.first_line,
            "last_line": support.last_line,
            "message_ids": support.message_ids,
            "observed_at": observed,
        });
        let save = SaveBody {
            text,
            memory_type: Some(memory.memory_type.to_string()),
            scope: self.args.scope.clone(),
            source: Some("imported".into()),
            origin: None,
            evidence: Some(evidence),
            effective_at: observed,
            fact_key: None,
            idempotency_key: Some(key),
            no_dedup: false,
            allow_secret: false,
            replaces: None,
            contradicts: None,
            ..SaveBody::default()
        };
        (save, shown)
    }

    /// `--explicit-only`: what the person asked to be remembered, turn by turn, each keyed by the
    /// turn it was said in (no progress is recorded: a later import with a model reads it all).
    #[allow(clippy::too_many_arguments)]
    fn import_explicit(
        &self,
        route: &mut Route,
        summary: &mut Summary,
        out: &mut Output,
        t: &Transcript,
        fallback: Option<Timestamp>,
        agent: Agent,
    ) -> Result<(), CliError> {
        summary.turns += t.turns.len() as u64;
        let identity = chunk::identity(&t.turns[0]);
        let mut saves = Vec::new();
        let mut described = Vec::new();
        for turn in t.turns.iter().filter(|turn| turn.is_user()) {
            let found = extract::explicit(std::slice::from_ref(turn));
            let turn_key = transcripts::explicit_key(&identity, turn);
            for (n, memory) in found.iter().enumerate() {
                let key = format!("{turn_key}:{n}");
                let (save, shown) =
                    self.save_of(memory, std::slice::from_ref(turn), fallback, t.session.clone(), agent, key, summary);
                saves.push(save);
                described.push(shown);
            }
        }
        if saves.is_empty() {
            return Ok(());
        }
        if self.args.dry_run {
            for shown in described {
                summary.outcomes.entry("would_save".into()).and_modify(|n| *n += 1).or_insert(1);
                print_memory(out, &shown, None)?;
            }
            return Ok(());
        }
        let body = TranscriptChunkBody { saves, progress: None, scope: self.args.scope.clone(), usage: None };
        let answer = route.call(self.ctx, Call::TranscriptChunk(body))?;
        report(out, summary, &answer, described)
    }
}

/// Print each memory a chunk's call saved, and count its outcome.
fn report(out: &mut Output, summary: &mut Summary, answer: &Value, described: Vec<Value>) -> Result<(), CliError> {
    // What the chunk's saves cost (a chat model classifying them), counted by the store already.
    let saved = memledger_engine::models::TokenUsage {
        prompt_tokens: answer["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
        completion_tokens: answer["usage"]["completion_tokens"].as_u64().unwrap_or(0),
        calls: answer["usage"]["calls"].as_u64().unwrap_or(0),
    };
    summary.tokens.add(saved);
    summary.largest_commit = summary.largest_commit.max(saved.total());
    summary.commits += 1;
    let results = answer["results"].as_array().cloned().unwrap_or_default();
    for (shown, result) in described.into_iter().zip(results) {
        let outcome = if result.get("error").is_some() {
            "refused".to_string()
        } else {
            result["outcome"].as_str().unwrap_or("unknown").to_string()
        };
        *summary.outcomes.entry(outcome).or_insert(0) += 1;
        if result["replayed"] == json!(true) {
            summary.replayed += 1;
        }
        print_memory(out, &shown, Some(&result))?;
    }
    Ok(())
}

/// One memory's line: `--json` fields are a contract (docs/cli.md).
fn print_memory(out: &mut Output, shown: &Value, result: Option<&Value>) -> Result<(), CliError> {
    let mut line = shown.clone();
    match result {
        Some(r) if r.get("error").is_some() => {
            line["outcome"] = json!("refused");
            line["error"] = r["error"].clone();
            line["memory_id"] = Value::Null;
        }
        Some(r) => {
            line["outcome"] = r["outcome"].clone();
            line["memory_id"] = r["memory_id"].clone();
            line["conflict_id"] = r["conflict_id"].clone();
            line["replayed"] = r["replayed"].clone();
        }
        None => {
            line["outcome"] = json!("would_save");
            line["memory_id"] = Value::Null;
        }
    }
    if out.json {
        return out.json_line(&line);
    }
    let id = line["memory_id"].as_str().map(|s| s[..8.min(s.len())].to_string()).unwrap_or_else(|| "-".into());
    let mut text = format!(
        "{:<10} {}  {}  ({} lines {}-{}{})",
        line["outcome"].as_str().unwrap_or_default(),
        crate::style::dim(&id),
        crate::output::clip(line["text"].as_str().unwrap_or_default(), 100),
        Path::new(line["file"].as_str().unwrap_or_default())
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        line["first_line"],
        line["last_line"],
        line["observed_at"].as_str().map(|t| format!(", said {}", &t[..10.min(t.len())])).unwrap_or_default(),
    );
    if let Some(e) = line["error"].as_str() {
        text.push_str(&format!(": {e}"));
    }
    if line["replayed"] == json!(true) {
        text.push_str("  (already imported)");
    }
    out.line(text)
}

fn print_summary(
    out: &mut Output,
    s: &Summary,
    args: &Args,
    model: Option<&str>,
    elapsed: Duration,
) -> Result<(), CliError> {
    let memories: u64 = s.outcomes.values().sum();
    let reading = elapsed.saturating_sub(s.model_time).as_secs_f64();
    let turns_per_second = if reading > 0.0 { s.turns as f64 / reading } else { 0.0 };
    if out.json {
        let model_ms_per_chunk =
            if s.model_calls > 0 { Some(s.model_time.as_secs_f64() * 1000.0 / s.model_calls as f64) } else { None };
        return out.json_line(&json!({"summary": {
            "files": s.files,
            "files_unchanged": s.files_unchanged,
            "files_rewritten": s.files_rewritten,
            "files_active": s.files_active,
            "files_unknown": s.files_unknown,
            "files_excluded": s.excluded.values().sum::<u64>(),
            "excluded": s.excluded,
            "turns": s.turns,
            "chunks": s.chunks,
            "chunks_known": s.chunks_known,
            "memories": memories,
            "outcomes": s.outcomes,
            "replayed": s.replayed,
            "unlocated": s.unlocated,
            "skipped": s.skipped,
            "malformed": s.malformed,
            "redacted": {"secrets": s.secrets, "private_spans": s.private_spans, "recall_blocks": s.recall_blocks},
            "failures": s.failures,
            "model": model,
            "model_calls": s.model_calls,
            "tokens": {"prompt_tokens": s.tokens.prompt_tokens, "completion_tokens": s.tokens.completion_tokens, "total_tokens": s.tokens.total(), "calls": s.tokens.calls},
            "stopped_at_budget": s.budget_stop,
            "model_ms": s.model_time.as_secs_f64() * 1000.0,
            "model_ms_per_chunk": model_ms_per_chunk,
            "elapsed_ms": elapsed.as_secs_f64() * 1000.0,
            "turns_per_second": turns_per_second,
            "dry_run": args.dry_run,
            "explicit_only": args.explicit_only,
        }}));
    }
    let outcomes = s.outcomes.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
    let verb = if args.dry_run { "would import from" } else { "imported" };
    out.line(format!(
        "{verb} {} transcript(s): {} new turn(s), {} chunk(s) asked{} → {memories} memor{}{}",
        s.files,
        s.turns,
        s.chunks,
        if s.chunks_known > 0 { format!(" ({} already imported)", s.chunks_known) } else { String::new() },
        if memories == 1 { "y" } else { "ies" },
        if outcomes.is_empty() { String::new() } else { format!(" ({outcomes})") },
    ))?;
    if s.files_unchanged > 0 || s.files_active > 0 || s.files_rewritten > 0 {
        out.line(format!(
            "  {} unchanged since the last import, {} rewritten and read again, {} still being written (left for later)",
            s.files_unchanged, s.files_rewritten, s.files_active
        ))?;
    }
    if let Some(stop) = &s.budget_stop {
        out.line(format!(
            "  stopped at the token budget before {} line {} ({} tokens this run): run it again to go on from there",
            stop["file"].as_str().unwrap_or_default(),
            stop["first_line"],
            s.tokens.total()
        ))?;
    }
    if !s.excluded.is_empty() {
        let why = s.excluded.iter().map(|(k, n)| format!("{n} by {k}")).collect::<Vec<_>>().join(", ");
        out.line(format!(
            "  {} transcript(s) excluded, not read past their first line: {why}",
            s.excluded.values().sum::<u64>()
        ))?;
    }
    if !s.skipped.is_empty() {
        let skipped = s.skipped.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ");
        out.line(format!("  records skipped: {skipped}"))?;
    }
    if s.secrets + s.private_spans + s.recall_blocks > 0 {
        out.line(format!(
            "  removed before anything was sent or stored: {} credential(s), {} <private> span(s), {} memledger recall block(s)",
            s.secrets, s.private_spans, s.recall_blocks
        ))?;
    }
    for m in &s.malformed {
        out.note(format!(
            "memledger: {} line {}: skipped: {}",
            m["file"].as_str().unwrap_or_default(),
            m["line"],
            m["error"].as_str().unwrap_or_default()
        ));
    }
    for f in &s.files_unknown {
        out.note(format!("memledger: {f}: not a transcript any reader knows (pass --agent)"));
    }
    if s.model_calls > 0 {
        out.line(format!(
            "  {} model call(s), {:.0} ms each on average; {:.0} turns/s besides",
            s.model_calls,
            s.model_time.as_secs_f64() * 1000.0 / s.model_calls as f64,
            turns_per_second
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_names_a_project_directory_by_its_path() {
        assert_eq!(claude_project_dir(Path::new("/home/ana/my.app")), "-home-ana-my-app");
    }
}
