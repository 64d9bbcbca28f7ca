//! The text index: a tantivy index over the **active** memories of the belief view, for
//! `recall` (BM25) and for the save pipeline's candidate search, whose index terms (per scope)
//! it holds in a field of their own ([`TextIndex::holders`]; docs/adr/0010-candidate-terms-in-the-text-index.md).
//!
//! It is a secondary index of the belief view, not a [`Projector`](crate::Projector): after the
//! belief view has applied a command's events, [`TextIndex::apply`] looks up every memory those
//! events can have changed and upserts it when it is active, deletes it otherwise (stale and
//! retired memories leave the index). [`TextIndex::commit`] makes the changes durable together
//! with the checkpoint — the ledger seq the index reflects — and the index format, both in
//! tantivy's commit payload, so the checkpoint and the data can never disagree. A bulk caller
//! applies many commands and commits once.
//!
//! On open, [`TextIndex::open`] catches up: a missing, unreadable or other-format index is built
//! again from the belief view (with a note for the user); an index behind the belief view
//! re-applies the events after its checkpoint. A crash between a ledger append and the index
//! commit therefore costs nothing but that catch-up on the next open.
//!
//! The index lives in `<store>/text-index/`. One long-lived `IndexWriter` (one thread, a small
//! heap) is created on the first write, so read-only commands never start one. Applied changes
//! reach it `SEND_AT` operations at a time (and all of them before a commit).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use memledger_ledger::Ledger;
use memledger_ledger::store::Store;
use memledger_schemas::*;
use tantivy::indexer::UserOperation;
use tantivy::query::{AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};
use tantivy::{
    DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, Score, Searcher, TERMINATED, TantivyDocument, Term,
};

use crate::beliefs::{self, BeliefReader, MemoryRecord};
use crate::error::ProjectError;
use crate::framework::Checkpoint;
use crate::keys::digest8;
use crate::top_hits::{SegmentKeys, TopHits};

/// Splits a text into the terms candidate search looks memories up by (supplied by the engine's
/// classifier, so that the index and the classifier agree on what a word is).
pub type TermFn = fn(&str) -> Vec<String>;

/// The name `rebuild --view` knows the text index by.
pub const TEXT_VIEW: &str = "text";
/// The index's directory inside the store directory.
pub const DIR_NAME: &str = "text-index";
/// Bumped whenever the schema or the analyzer changes: an index of another format is rebuilt.
/// The stored format is `FORMAT * 1000 +` the term function's version ([`TextIndex::format`]).
/// 2: the candidate terms field. 3: `root_id` stored, no longer indexed (nothing searches it, and
/// a term dictionary of random ids is costly to build).
pub const FORMAT: u32 = 3;
/// The analyzer's name as registered on the index.
const ANALYZER: &str = "memledger_en";
/// How many applied operations wait before they go to the writer together.
///
/// Each `add_document` is a message to the indexing thread, which is idle between saves: sent one
/// by one, they would wake it once per memory, a system call on the saving thread. The queue is
/// sent before every commit, so nothing committed ever misses an operation.
const SEND_AT: usize = 64;
/// The writer's memory budget (tantivy's minimum per thread is 15 MB).
const WRITER_HEAP: usize = 50_000_000;
/// How many events catch-up reads per step.
const CATCH_UP_CHUNK: usize = 4096;

/// The words a question is made of — interrogatives, auxiliaries and pronouns — which say nothing
/// about which memory is meant. The analyzer removes them after Lucene's English stop words
/// ([`english_stop_words`]).
const QUESTION_WORDS: &[&str] = &[
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "do", "does", "did", "doing", "am", "were",
    "been", "being", "has", "have", "had", "can", "could", "should", "would", "shall", "may", "might", "must", "i",
    "me", "my", "mine", "we", "us", "our", "ours", "you", "your", "yours", "he", "him", "his", "she", "her", "hers",
    "its", "them", "theirs", "any", "some", "about", "from", "so", "than", "too", "very", "just", "also", "tell",
    "know", "remind",
];

/// Lucene's English stop words, the list tantivy ships (its `stopwords` feature, on by default).
fn english_stop_words() -> StopWordFilter {
    StopWordFilter::new(Language::English).unwrap_or_else(|| StopWordFilter::remove(Vec::new()))
}

/// Characters that join two alphanumeric runs into one token: versions (`1.29`), hosts
/// (`registry.int.example.com`), keys (`tax_rates`), times (`9:45`), paths, tickets (`PAY-1423`).
fn is_joiner(c: char) -> bool {
    matches!(c, '.' | '_' | ':' | '/' | '@' | '+' | '-')
}

fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '\u{2019}'
}

/// The tokenizer: words as `[\p{L}\p{N}]+(?:[._:/@+-][\p{L}\p{N}]+)*`, so numbers, versions and
/// identifiers stay whole; a compound token is followed by its parts that hold a letter and are
/// at least two characters long (`on-call` → `on-call`, `call`; `billing.events.v2` → itself,
/// `billing`, `events`, `v2`; `1.29` stays `1.29` only). Apostrophes inside a word are kept out
/// of the token (`team's` → `team`, `don't` → `dont`).
#[derive(Clone, Default)]
pub struct MemoryTokenizer {
    tokens: Vec<Token>,
}

impl Tokenizer for MemoryTokenizer {
    type TokenStream<'a> = MemoryTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> MemoryTokenStream<'a> {
        self.tokens.clear();
        split_tokens(text, &mut self.tokens);
        MemoryTokenStream { tokens: &mut self.tokens, next: 0 }
    }
}

/// The token stream of [`MemoryTokenizer`].
pub struct MemoryTokenStream<'a> {
    tokens: &'a mut Vec<Token>,
    next: usize,
}

impl TokenStream for MemoryTokenStream<'_> {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

fn split_tokens(text: &str, out: &mut Vec<Token>) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let end_of = |i: usize| chars.get(i).map(|&(o, _)| o).unwrap_or(text.len());
    let mut position = 0usize;
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].1.is_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        // Runs of alphanumerics (apostrophes between letters included), joined by joiners.
        let mut cuts = vec![start];
        loop {
            while i < chars.len()
                && (chars[i].1.is_alphanumeric()
                    || (is_apostrophe(chars[i].1) && i + 1 < chars.len() && chars[i + 1].1.is_alphabetic()))
            {
                i += 1;
            }
            if i + 1 < chars.len() && is_joiner(chars[i].1) && chars[i + 1].1.is_alphanumeric() {
                i += 1;
                cuts.push(i);
                continue;
            }
            break;
        }
        let (from, to) = (end_of(start), end_of(i));
        let mut push = |s: &str, position: usize| {
            let word = normalize_apostrophes(s);
            if !word.is_empty() {
                out.push(Token { offset_from: from, offset_to: to, position, text: word, position_length: 1 });
            }
        };
        push(&text[from..to], position);
        if cuts.len() > 1 {
            for (k, &c) in cuts.iter().enumerate() {
                // A part runs from its cut to the joiner before the next cut.
                let part_end = cuts.get(k + 1).map(|&n| n - 1).unwrap_or(i);
                let part = &text[end_of(c)..end_of(part_end)];
                if part.chars().count() >= 2 && part.chars().any(char::is_alphabetic) {
                    push(part, position);
                }
            }
        }
        position += 1;
    }
}

/// `team's` → `team`, `don't` → `dont`.
fn normalize_apostrophes(s: &str) -> String {
    let s = s.replace('\u{2019}', "'");
    let s = s.strip_suffix("'s").or_else(|| s.strip_suffix("'S")).unwrap_or(&s);
    s.replace('\'', "")
}

/// The analyzer, registered on the index under `ANALYZER`: [`MemoryTokenizer`], then lower
/// case, stop words removed (Lucene's English list, then the question words), tokens over 64 bytes dropped, English (Snowball) stemming.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(MemoryTokenizer::default())
        .filter(LowerCaser)
        .filter(english_stop_words())
        .filter(StopWordFilter::remove(QUESTION_WORDS.iter().map(|w| w.to_string())))
        .filter(RemoveLongFilter::limit(64))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// The terms the analyzer makes of `text`, in order, without repeats.
pub fn analyze(text: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    analyze_in_order(text).into_iter().filter(|t| seen.insert(t.clone())).collect()
}

/// Every term the analyzer makes of `text`, in order, repeats kept: a term's place in this list
/// is its position among the terms (stop words take none).
pub fn analyze_in_order(text: &str) -> Vec<String> {
    // One analyzer per thread: making one builds its stop-word sets, which costs more than
    // analysing a memory's text (recall analyses every memory it reorders).
    thread_local! {
        static ANALYZER: std::cell::RefCell<TextAnalyzer> = std::cell::RefCell::new(analyzer());
    }
    ANALYZER.with_borrow_mut(|analyzer| {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(token) = stream.next() {
            out.push(token.text.clone());
        }
        out
    })
}

#[derive(Clone, Copy)]
struct Fields {
    memory_id: Field,
    root_id: Field,
    text: Field,
    memory_type: Field,
    scope: Field,
    asserted_at: Field,
    /// The memory id as two u64s, for ordering ties by id without reading stored fields.
    id_hi: Field,
    id_lo: Field,
    /// The candidate search's index terms of the text, computed by [`CandidateTerms`] on
    /// tantivy's indexing threads; no frequencies, no positions.
    terms: Field,
    /// [`scope_digest`] of the scope: a term's holders are read for one scope at a time.
    scope_digest: Field,
}

/// The name [`CandidateTerms`] is registered under.
const CANDIDATE_TERMS: &str = "memledger_candidate_terms";

/// The tokenizer of the `terms` field: the text's candidate terms (the engine's term function).
/// Running as a tokenizer puts the analysis on tantivy's indexing threads, off the caller's; a
/// caller that has analysed the text already hands the terms over instead
/// ([`TextIndex::apply_known`], [`terms_value`]), and they are only split here.
#[derive(Clone)]
struct CandidateTerms {
    terms: TermFn,
    tokens: Vec<Token>,
}

impl Tokenizer for CandidateTerms {
    type TokenStream<'a> = MemoryTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> MemoryTokenStream<'a> {
        self.tokens.clear();
        let terms = match text.strip_prefix(TERMS_GIVEN) {
            Some(given) => given.split(TERMS_GIVEN).filter(|t| !t.is_empty()).map(str::to_string).collect(),
            None => (self.terms)(text.strip_prefix(TEXT_GIVEN).unwrap_or(text)),
        };
        self.tokens.extend(terms.into_iter().enumerate().map(|(position, text)| Token {
            offset_from: 0,
            offset_to: 0,
            position,
            text,
            position_length: 1,
        }));
        MemoryTokenStream { tokens: &mut self.tokens, next: 0 }
    }
}

/// A `terms` value that starts with this character is the terms themselves, each after one: a
/// memory's text never holds a NUL (input validation refuses it), and a term is made of letters,
/// digits and joiners.
const TERMS_GIVEN: char = '\0';
/// A `terms` value that starts with this character is a text, after it: the escape for a text
/// that itself starts with [`TERMS_GIVEN`] or with this character (only an imported ledger could
/// hold one), so that no text is ever read as given terms.
const TEXT_GIVEN: char = '\u{1}';

/// The `terms` value of a memory: its candidate terms when the caller made them already (the
/// tokenizer then only splits them; tantivy's pre-tokenized values cost a JSON encoding on the
/// caller's thread), else its text, analysed on the indexing thread.
fn terms_value(text: &str, terms: Option<Vec<String>>) -> String {
    match terms {
        Some(terms) => {
            let mut value = String::with_capacity(terms.iter().map(|t| t.len() + 1).sum::<usize>() + 1);
            for term in terms {
                value.push(TERMS_GIVEN);
                value.push_str(&term);
            }
            value.push(TERMS_GIVEN);
            value
        }
        None if text.starts_with([TERMS_GIVEN, TEXT_GIVEN]) => format!("{TEXT_GIVEN}{text}"),
        None => text.to_string(),
    }
}

/// A scope as a number: the belief view's 8-byte digest of it (`keys::digest8`), big-endian.
fn scope_digest(scope: &str) -> u64 {
    u64::from_be_bytes(digest8(scope))
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    // No positions: recall is a bag of words, never a phrase.
    let text_options = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(ANALYZER).set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        memory_id: b.add_text_field("memory_id", STRING | STORED),
        root_id: b.add_text_field("root_id", STORED),
        text: b.add_text_field("text", text_options),
        memory_type: b.add_text_field("type", STRING),
        scope: b.add_text_field("scope", STRING),
        asserted_at: b.add_i64_field("asserted_at", FAST),
        id_hi: b.add_u64_field("id_hi", FAST),
        id_lo: b.add_u64_field("id_lo", FAST),
        terms: b.add_text_field(
            "terms",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default().set_tokenizer(CANDIDATE_TERMS).set_index_option(IndexRecordOption::Basic),
            ),
        ),
        scope_digest: b.add_u64_field("scope_digest", FAST),
    };
    (b.build(), fields)
}

fn dir_error(action: &'static str, path: &Path, source: std::io::Error) -> ProjectError {
    ProjectError::TextIndexDir { action, path: path.to_path_buf(), source }
}

/// The stored format of an index written with the term function of version `terms_version`.
fn format_of(terms_version: u32) -> u32 {
    FORMAT * 1000 + terms_version
}

fn payload(format: u32, seq: u64) -> String {
    format!("memledger-text-index format={format} seq={seq}")
}

/// The note for an index written in another format than this build's, which is rebuilt.
fn other_format_note(stored: u32, writes: u32) -> String {
    format!("text index is at format {stored} and this build writes format {writes}: reindexing…")
}

/// `(format, seq)` from a commit payload.
fn parse_payload(p: &str) -> Option<(u32, u64)> {
    let rest = p.strip_prefix("memledger-text-index format=")?;
    let (format, seq) = rest.split_once(" seq=")?;
    Some((format.parse().ok()?, seq.parse().ok()?))
}

/// One match of [`TextIndex::search`].
#[derive(Clone, Debug, PartialEq)]
pub struct TextHit {
    pub memory_id: MemoryId,
    pub score: Score,
    pub asserted_at: Timestamp,
}

/// What [`TextIndex::rebuild`] did.
#[derive(Clone, Copy, Debug)]
pub struct TextRebuild {
    /// Active memories indexed.
    pub docs: u64,
    /// The checkpoint written.
    pub seq: u64,
    pub elapsed: Duration,
}

impl TextRebuild {
    pub fn docs_per_sec(&self) -> f64 {
        self.docs as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The text index of one store.
pub struct TextIndex {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
    /// The writer, created on the first write.
    writer: Mutex<Option<IndexWriter>>,
    /// Operations applied but not sent to the writer yet, in order ([`SEND_AT`]). Locked only
    /// while `writer` is; emptied whenever the writer is replaced.
    queued: Mutex<Vec<UserOperation<TantivyDocument>>>,
    /// The highest seq whose events the index has ever been given (committed, applied, or
    /// attempted and failed). A memory first observed after it cannot be in the index or in the
    /// writer, so applying it needs no delete; below it (a catch-up re-applying what the writer
    /// may hold) every memory is deleted before it is added, as an upsert. Only ever raised.
    given_through: std::sync::atomic::AtomicU64,
    /// The seq applied to the writer but not committed yet, if any.
    uncommitted: Mutex<Option<u64>>,
    /// An apply or a rebuild failed part-way: the writer may hold some changes and not others
    /// (or have lost uncommitted ones), so nothing may be committed but a [`TextIndex::catch_up`]
    /// or a rebuild (which re-apply from the last commit); until then
    /// [`TextIndex::uncommitted`] is `None`.
    broken: std::sync::atomic::AtomicBool,
    /// The store the indexed events live in: its log buffer is written out before each commit.
    store: Store,
    /// The version of the candidate term function (part of [`TextIndex::format`]).
    terms_version: u32,
    /// Searched segments' tie-breaking keys, decoded once (crate::top_hits).
    keys: SegmentKeys,
}

/// The scopes a search is confined to: every scope, one, or those a principal may read (a
/// scope, a prefix ending in `*`, or `*`: the patterns of its grants).
#[derive(Clone, Copy, Debug)]
pub enum Scopes<'a> {
    All,
    One(&'a str),
    Patterns(&'a [String]),
}

impl<'a> From<Option<&'a str>> for Scopes<'a> {
    fn from(scope: Option<&'a str>) -> Self {
        scope.map_or(Scopes::All, Scopes::One)
    }
}

impl Scopes<'_> {
    /// Whether a memory of `scope` is among them.
    pub fn covers(&self, scope: &str) -> bool {
        match self {
            Scopes::All => true,
            Scopes::One(s) => *s == scope,
            Scopes::Patterns(patterns) => patterns.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => scope.starts_with(prefix),
                None => p == scope,
            }),
        }
    }
}

/// The belief view's checkpoint seq: what the index can reflect at most.
fn belief_seq(store: &Store) -> Result<u64, ProjectError> {
    Ok(Checkpoint::read(store, beliefs::TABLE)?.map(|c| c.seq).unwrap_or(0))
}

/// Hand the queued operations to `writer`, in order, as one group (each keeps its own opstamp,
/// so a delete still applies to the documents added before it).
fn send(writer: &IndexWriter, queued: &mut Vec<UserOperation<TantivyDocument>>) -> Result<(), ProjectError> {
    if !queued.is_empty() {
        writer.run(queued.drain(..))?;
    }
    Ok(())
}

/// Whether an event can change which memories are active or what the index holds of them.
/// Exhaustive on purpose: a new event kind must decide.
fn touches_index(body: &EventBody) -> bool {
    match body {
        EventBody::BeliefAdded(_)
        | EventBody::BeliefVersioned(_)
        | EventBody::BeliefEdited(_)
        | EventBody::BeliefHistorical(_)
        | EventBody::BeliefRetired(_)
        | EventBody::ConflictResolved(_)
        | EventBody::ResolutionReverted(_)
        | EventBody::MemoryErased(_) => true,
        // An observation is not a belief yet; a pair, a merge (provenance count) and an opened
        // conflict change nothing the index holds.
        EventBody::MemoryObserved(_)
        | EventBody::PairClassified(_)
        | EventBody::MergeProposed(_)
        | EventBody::BeliefMerged(_)
        | EventBody::ConflictOpened(_) => false,
        // A proposal is not active until accepted (a resolution); principals, a transcript's
        // progress and an accepted head are not memories.
        EventBody::BeliefProposed(_)
        | EventBody::PrincipalAdded(_)
        | EventBody::PrincipalGranted(_)
        | EventBody::GrantRevoked(_)
        | EventBody::PrincipalRevoked(_)
        | EventBody::PrincipalRotated(_)
        | EventBody::TranscriptProgressed(_)
        | EventBody::HeadAccepted(_) => false,
    }
}

impl TextIndex {
    /// Open (creating it when missing) the text index of the store `ledger` lives in, and bring
    /// it up to the belief view. Call after the views have caught up. Returns notes for the user
    /// (an index rebuilt because it was missing, unreadable or of another format).
    /// `terms` gives a text's candidate terms; `terms_version` must change whenever it changes
    /// what it returns (the index is then rebuilt).
    pub fn open(ledger: &Ledger, terms: TermFn, terms_version: u32) -> Result<(TextIndex, Vec<String>), ProjectError> {
        let dir = ledger.store().path().join(DIR_NAME);
        let mut notes = Vec::new();
        let existed = dir.join("meta.json").exists();
        let new = |dir: &Path| Self::create_dir(dir, ledger.store(), terms, terms_version);
        let opened = if existed {
            Self::open_dir(&dir, ledger.store(), terms, terms_version)
        } else {
            Err(ProjectError::TextIndexUnreadable("missing"))
        };
        let (text, rebuild) = match opened {
            Ok(text) => match text.stored_checkpoint() {
                Ok(Some((format, _))) if format == text.format() => (text, false),
                found => {
                    notes.push(match found {
                        Ok(Some((format, _))) => other_format_note(format, text.format()),
                        _ => "text index has no checkpoint: reindexing…".to_string(),
                    });
                    drop(text);
                    (new(&dir)?, true)
                }
            },
            Err(e) => {
                // An index of an older format may not open with this build's schema: say so
                // by its format when its commit payload still names one.
                let stored = Index::open_in_dir(&dir)
                    .ok()
                    .and_then(|index| index.load_metas().ok())
                    .and_then(|metas| metas.payload.as_deref().and_then(parse_payload));
                let format = format_of(terms_version);
                if let Some((stored, _)) = stored.filter(|(stored, _)| *stored != format) {
                    notes.push(other_format_note(stored, format));
                } else if existed {
                    notes.push(format!("text index unreadable ({e}): reindexing…"));
                } else if ledger.head().seq > 0 {
                    notes.push("text index missing: building it from the belief view…".to_string());
                }
                (new(&dir)?, true)
            }
        };
        if rebuild {
            text.rebuild(ledger)?;
        } else {
            notes.extend(text.catch_up(ledger)?);
        }
        Ok((text, notes))
    }

    fn open_dir(dir: &Path, store: &Store, terms: TermFn, terms_version: u32) -> Result<TextIndex, ProjectError> {
        let index = Index::open_in_dir(dir)?;
        let (schema, fields) = schema();
        if index.schema() != schema {
            return Err(ProjectError::TextIndexUnreadable("its schema is not this build's"));
        }
        Self::wrap(dir, index, fields, store, terms, terms_version)
    }

    /// A fresh, empty index in `dir` (whatever was there is removed).
    fn create_dir(dir: &Path, store: &Store, terms: TermFn, terms_version: u32) -> Result<TextIndex, ProjectError> {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|source| dir_error("remove", dir, source))?;
        }
        std::fs::create_dir_all(dir).map_err(|source| dir_error("create", dir, source))?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(dir, schema)?;
        Self::wrap(dir, index, fields, store, terms, terms_version)
    }

    fn wrap(
        dir: &Path,
        index: Index,
        fields: Fields,
        store: &Store,
        terms: TermFn,
        terms_version: u32,
    ) -> Result<TextIndex, ProjectError> {
        index.tokenizers().register(ANALYZER, analyzer());
        index.tokenizers().register(CANDIDATE_TERMS, TextAnalyzer::from(CandidateTerms { terms, tokens: Vec::new() }));
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        // What the index holds: up to its checkpoint (none in a new index); unknown when its
        // commit cannot be read, and then no delete is ever skipped.
        let given_through = match index.load_metas() {
            Ok(metas) => metas.payload.as_deref().and_then(parse_payload).map_or(0, |(_, seq)| seq),
            Err(_) => u64::MAX,
        };
        Ok(TextIndex {
            dir: dir.to_path_buf(),
            index,
            reader,
            fields,
            writer: Mutex::new(None),
            queued: Mutex::new(Vec::new()),
            given_through: given_through.into(),
            uncommitted: Mutex::new(None),
            broken: Default::default(),
            store: store.clone(),
            terms_version,
            keys: SegmentKeys::default(),
        })
    }

    /// The format this build writes: the schema's and the term function's versions.
    pub fn format(&self) -> u32 {
        format_of(self.terms_version)
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `(format, seq)` of the last commit, if it carries a checkpoint.
    fn stored_checkpoint(&self) -> Result<Option<(u32, u64)>, ProjectError> {
        let metas = self.index.load_metas()?;
        Ok(metas.payload.as_deref().and_then(parse_payload))
    }

    /// The ledger seq the committed index reflects (0 when it was never committed).
    pub fn seq(&self) -> Result<u64, ProjectError> {
        Ok(self.stored_checkpoint()?.map(|(_, s)| s).unwrap_or(0))
    }

    /// Active memories in the committed index.
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    fn writer(&self) -> Result<MutexGuard<'_, Option<IndexWriter>>, ProjectError> {
        let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(self.new_writer(1)?);
        }
        Ok(guard)
    }

    /// A writer with `threads` indexing threads, after clearing what a killed process left.
    ///
    /// tantivy registers a file as its own before writing it and names a segment's delete file
    /// by the next opstamp, which is the same in the process that comes after: a process killed
    /// while committing leaves a file the next commit then cannot create ("FileAlreadyExists",
    /// seen in the kill-resolve test). Collecting the files no commit refers to removes it.
    fn new_writer(&self, threads: usize) -> Result<IndexWriter, ProjectError> {
        let writer = self.index.writer_with_num_threads(threads, WRITER_HEAP * threads)?;
        writer.garbage_collect_files().wait()?;
        Ok(writer)
    }

    /// Re-apply what the belief view has and the index has not; a checkpoint ahead of the belief
    /// view (an index copied from another store) means a rebuild, with a note.
    pub fn catch_up(&self, ledger: &Ledger) -> Result<Vec<String>, ProjectError> {
        let target = belief_seq(ledger.store())?;
        let at = self.seq()?;
        if at == target {
            return Ok(Vec::new());
        }
        if at > target {
            self.rebuild(ledger)?;
            return Ok(vec![format!("text index is at seq {at}, ahead of the belief view at {target}: reindexed")]);
        }
        let mut chunk = Vec::with_capacity(CATCH_UP_CHUNK);
        for event in ledger.scan(at + 1)? {
            let event = event?;
            if event.seq > target {
                break;
            }
            chunk.push(event);
            if chunk.len() == CATCH_UP_CHUNK {
                self.apply(ledger.store(), &chunk)?;
                chunk.clear();
            }
        }
        self.apply(ledger.store(), &chunk)?;
        self.commit(target)?;
        Ok(Vec::new())
    }

    /// Bring the memories `events` touched in line with the belief view, which must already
    /// have applied them: active ones are (re)indexed, the others removed. Does not commit.
    pub fn apply(&self, store: &Store, events: &[Event]) -> Result<(), ProjectError> {
        self.apply_known(store, events, &|_| None)
    }

    /// [`TextIndex::apply`], given the candidate terms of memories the caller has already
    /// analysed: `known(id)` is the term function's answer for that memory's text, or `None`.
    /// A known memory's terms go into the index as they are (`terms_value`), so its text is not
    /// analysed a second time on the indexing thread; the others are analysed there.
    pub fn apply_known(
        &self,
        store: &Store,
        events: &[Event],
        known: &dyn Fn(MemoryId) -> Option<Vec<String>>,
    ) -> Result<(), ProjectError> {
        let Some(last) = events.last() else { return Ok(()) };
        let given = self.given_through.fetch_max(last.seq, std::sync::atomic::Ordering::SeqCst);
        let ids: BTreeSet<MemoryId> =
            events.iter().filter(|e| touches_index(&e.body)).flat_map(|e| e.body.memory_ids()).collect();
        let applied = (|| {
            if ids.is_empty() {
                return Ok(());
            }
            // A memory first observed by events the index was never given cannot be in it: it
            // needs no delete (each is a query the writer weighs now and every segment applies
            // at commit). Events given before (a catch-up after a failure) are upserts.
            let observed = |id: MemoryId| {
                events
                    .iter()
                    .any(|e| e.seq > given && matches!(&e.body, EventBody::MemoryObserved(b) if b.memory_id == id))
            };
            let beliefs = BeliefReader::new(store);
            let guard = self.writer()?;
            let writer = guard.as_ref().expect("writer created");
            let mut queued = self.queued.lock().unwrap_or_else(|p| p.into_inner());
            for id in ids {
                if !observed(id) {
                    queued.push(UserOperation::Delete(Term::from_field_text(self.fields.memory_id, &id.hex())));
                }
                if let Some(r) = beliefs.get(id)?.filter(|r| r.status == Status::Active) {
                    queued.push(UserOperation::Add(self.document(&r, known(id))));
                }
            }
            if queued.len() >= SEND_AT {
                send(writer, &mut queued)?;
            }
            Ok(())
        })();
        match &applied {
            Ok(()) => *self.uncommitted.lock().unwrap_or_else(|p| p.into_inner()) = Some(last.seq),
            Err(_) => self.broken.store(true, std::sync::atomic::Ordering::SeqCst),
        }
        applied
    }

    /// Make everything applied so far durable, with `seq` as the checkpoint. The store's log
    /// buffer is written out first, so a killed process cannot leave the index at a checkpoint
    /// whose events it lost (an index ahead of the belief view is still caught, and reindexed,
    /// on open: after a machine crash that lost unsynced events).
    pub fn commit(&self, seq: u64) -> Result<(), ProjectError> {
        self.store.write_log_buffer()?;
        let mut guard = self.writer()?;
        let writer = guard.as_mut().expect("writer created");
        if let Err(e) = send(writer, &mut self.queued.lock().unwrap_or_else(|p| p.into_inner())) {
            // The queued operations are lost with the writer: as after a failed apply.
            self.broken.store(true, std::sync::atomic::Ordering::SeqCst);
            return Err(e);
        }
        self.given_through.fetch_max(seq, std::sync::atomic::Ordering::SeqCst);
        let mut prepared = writer.prepare_commit()?;
        prepared.set_payload(&payload(self.format(), seq));
        prepared.commit()?;
        *self.uncommitted.lock().unwrap_or_else(|p| p.into_inner()) = None;
        // Only a catch-up or a rebuild commits a broken index (`flush` does not), and either
        // has re-applied everything up to `seq`.
        self.broken.store(false, std::sync::atomic::Ordering::SeqCst);
        self.reader.reload()?;
        Ok(())
    }

    /// The seq applied but not yet committed, if any.
    /// `None` too after a failed apply: then only a catch-up can commit.
    pub fn uncommitted(&self) -> Option<u64> {
        if self.broken.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        *self.uncommitted.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Commit what was applied, if anything was. Returns whether it committed.
    pub fn flush(&self) -> Result<bool, ProjectError> {
        match self.uncommitted() {
            Some(seq) => self.commit(seq).map(|()| true),
            None => Ok(false),
        }
    }

    /// The document of an active memory; `terms` are its candidate terms when the caller knows
    /// them (else the `terms` field's tokenizer makes them from the text).
    fn document(&self, r: &MemoryRecord, terms: Option<Vec<String>>) -> TantivyDocument {
        let f = &self.fields;
        let id = r.memory_id.0;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.memory_id, r.memory_id.hex());
        doc.add_text(f.root_id, r.root_id.hex());
        doc.add_text(f.text, &r.text);
        doc.add_text(f.memory_type, r.memory_type.as_str());
        doc.add_text(f.scope, &r.scope);
        doc.add_i64(f.asserted_at, r.asserted_at.micros());
        doc.add_u64(f.id_hi, (id >> 64) as u64);
        doc.add_u64(f.id_lo, id as u64);
        doc.add_text(f.terms, terms_value(&r.text, terms));
        doc.add_u64(f.scope_digest, scope_digest(&r.scope));
        doc
    }

    /// Every active memory of `scope` holding the candidate term `term` in the *committed*
    /// index, in id order. Deleted documents and other scopes' memories are skipped, so the list
    /// is exact for the commit.
    pub fn holders(&self, scope: &str, term: &str) -> Result<Vec<MemoryId>, ProjectError> {
        let term = Term::from_field_text(self.fields.terms, term);
        let scope = scope_digest(scope);
        let searcher = self.reader.searcher();
        let mut out = Vec::new();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.terms)?;
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)? else {
                continue;
            };
            let ff = segment.fast_fields();
            let hi = ff.u64("id_hi")?.first_or_default_col(0);
            let lo = ff.u64("id_lo")?.first_or_default_col(0);
            let scopes = ff.u64("scope_digest")?.first_or_default_col(0);
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if !segment.is_deleted(doc) && scopes.get_val(doc) == scope {
                    out.push(MemoryId((u128::from(hi.get_val(doc)) << 64) | u128::from(lo.get_val(doc))));
                }
                doc = postings.advance();
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Drop every document and index every active memory of the belief view again, in one
    /// commit at the belief view's checkpoint.
    pub fn rebuild(&self, ledger: &Ledger) -> Result<TextRebuild, ProjectError> {
        let rebuilt = self.rebuild_with_own_writer(ledger);
        // The rebuild's writer goes either way; the everyday writer comes back on next use.
        *self.writer.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.queued.lock().unwrap_or_else(|p| p.into_inner()).clear();
        if rebuilt.is_err() {
            // The everyday writer's uncommitted changes are gone and the rebuild's writer held
            // part of a rebuild at most: as after a failed apply, only a catch-up from the last
            // commit (or a rebuild) may commit now.
            self.broken.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        rebuilt
    }

    fn rebuild_with_own_writer(&self, ledger: &Ledger) -> Result<TextRebuild, ProjectError> {
        let started = Instant::now();
        let store = ledger.store();
        let seq = belief_seq(store)?;
        let mut docs = 0u64;
        {
            // A rebuild indexes with a writer of its own (dropped by `rebuild`): one indexing
            // thread per core and a bigger heap. Each thread leaves a segment of its own (merged
            // later by tantivy's policy, or by `compact`).
            let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
            *guard = None;
            // What the dropped writer had queued is in the belief view the rebuild indexes.
            self.queued.lock().unwrap_or_else(|p| p.into_inner()).clear();
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
            *guard = Some(self.new_writer(threads)?);
            let writer = guard.as_ref().expect("writer created");
            writer.delete_all_documents()?;
            let mut failed = None;
            BeliefReader::new(store).scan(
                |r| {
                    if r.status == Status::Active && failed.is_none() {
                        match writer.add_document(self.document(r, None)) {
                            Ok(_) => docs += 1,
                            Err(e) => failed = Some(e),
                        }
                    }
                    false
                },
                usize::MAX,
            )?;
            if let Some(e) = failed {
                return Err(e.into());
            }
        }
        self.commit(seq)?;
        Ok(TextRebuild { docs, seq, elapsed: started.elapsed() })
    }

    /// Merge every segment into one, dropping deleted documents (BM25 statistics then count
    /// live memories only, as after a rebuild), and wait for it.
    pub fn compact(&self) -> Result<(), ProjectError> {
        let ids = self.index.searchable_segment_ids()?;
        if ids.len() > 1 || self.reader.searcher().segment_readers().iter().any(|s| s.has_deletes()) {
            let mut guard = self.writer()?;
            let writer = guard.as_mut().expect("writer created");
            writer.merge(&ids).wait()?;
            self.reader.reload()?;
        }
        Ok(())
    }

    /// Leave nothing of a removed memory in the index's files (an erasure): merge every segment
    /// ([`TextIndex::compact`]), so no deleted document's terms or stored fields remain, then
    /// delete the files no commit refers to. Commit first.
    pub fn purge(&self) -> Result<(), ProjectError> {
        self.compact()?;
        let mut guard = self.writer()?;
        let writer = guard.as_mut().expect("writer created");
        writer.garbage_collect_files().wait()?;
        Ok(())
    }

    /// BM25 over the active memories: the query's terms (by the index's analyzer) as a boolean
    /// OR, so no input is a syntax error; `memory_type` and `scope` as required filters that do
    /// not score. Ordered by score, then newest `asserted_at`, then memory id, so equal scores
    /// come out in the same order every time. An empty query (no terms) matches nothing.
    pub fn search(
        &self,
        query: &str,
        memory_type: Option<MemoryType>,
        scope: Option<&str>,
        limit: usize,
    ) -> Result<Vec<TextHit>, ProjectError> {
        let terms: Vec<(String, Score)> = analyze(query).into_iter().map(|t| (t, 1.0)).collect();
        self.search_weighted(&terms, memory_type, Scopes::from(scope), limit)
    }

    /// How rare `term` (an analysed term) is among the indexed memories: BM25's inverse
    /// document frequency, `ln(1 + (N - n + 0.5) / (n + 0.5))` for `n` of `N` documents: always
    /// above 0.
    pub fn idf(&self, term: &str) -> Result<f32, ProjectError> {
        let searcher = self.reader.searcher();
        let docs = searcher.num_docs() as f32;
        // Deleted documents still count in a term's frequency until their segment merges.
        let n = (searcher.doc_freq(&Term::from_field_text(self.fields.text, term))? as f32).min(docs);
        Ok((1.0 + (docs - n + 0.5) / (n + 0.5)).ln())
    }

    /// [`TextIndex::search`] with analysed terms, each term's BM25 score multiplied by its
    /// weight (terms of weight 0 or less are left out).
    pub fn search_weighted(
        &self,
        terms: &[(String, Score)],
        memory_type: Option<MemoryType>,
        scope: Scopes<'_>,
        limit: usize,
    ) -> Result<Vec<TextHit>, ProjectError> {
        let f = self.fields;
        let should: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .filter(|(_, w)| *w > 0.0)
            .map(|(t, w)| {
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(Term::from_field_text(f.text, t), IndexRecordOption::WithFreqs));
                let q: Box<dyn Query> = if *w == 1.0 { q } else { Box::new(BoostQuery::new(q, *w)) };
                (Occur::Should, q)
            })
            .collect();
        if should.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        // The terms stay one clause of their own even without filters: their scores are then summed
        // in the terms' order for every document (a bare union of terms would be scored by block-max
        // WAND, which sums in an order that varies, so equal texts could differ in the last bit and
        // lose the newest-first order of equal scores).
        let searcher = self.reader.searcher();
        let query = self.filtered(&searcher, Box::new(BooleanQuery::new(should)), memory_type, scope)?;
        self.top(&searcher, &query, Some(limit))
    }

    /// Every active memory of the type and scope (each filter optional), newest first, with a
    /// score of 0: what an exhaustive ranking of the scope, such as the cosine's, ranks.
    pub fn admitted(&self, memory_type: Option<MemoryType>, scope: Scopes<'_>) -> Result<Vec<TextHit>, ProjectError> {
        self.newest_of(memory_type, scope, None)
    }

    /// The newest `limit` active memories of the type and scope (each filter optional), newest
    /// first: a page of a scope read without reading the rest of it.
    pub fn newest(
        &self,
        memory_type: Option<MemoryType>,
        scope: Scopes<'_>,
        limit: usize,
    ) -> Result<Vec<TextHit>, ProjectError> {
        self.newest_of(memory_type, scope, Some(limit))
    }

    fn newest_of(
        &self,
        memory_type: Option<MemoryType>,
        scope: Scopes<'_>,
        limit: Option<usize>,
    ) -> Result<Vec<TextHit>, ProjectError> {
        let searcher = self.reader.searcher();
        let query =
            self.filtered(&searcher, Box::new(ConstScoreQuery::new(Box::new(AllQuery), 0.0)), memory_type, scope)?;
        self.top(&searcher, &query, limit)
    }

    /// The scopes `scope` covers that hold active memories, each with how many, by name.
    pub fn scope_counts(&self, scope: Scopes<'_>) -> Result<Vec<(String, u64)>, ProjectError> {
        let searcher = self.reader.searcher();
        let mut out = Vec::new();
        for name in self.scopes_with_prefix(&searcher, "")? {
            if !scope.covers(&name) {
                continue;
            }
            let query = TermQuery::new(Term::from_field_text(self.fields.scope, &name), IndexRecordOption::Basic);
            let count = searcher.search(&query, &tantivy::collector::Count)? as u64;
            if count > 0 {
                out.push((name, count));
            }
        }
        Ok(out)
    }

    /// `query` with `memory_type` and `scope` as required filters that do not score; a scope
    /// prefix is the scopes `searcher`'s index holds with that prefix.
    fn filtered(
        &self,
        searcher: &Searcher,
        query: Box<dyn Query>,
        memory_type: Option<MemoryType>,
        scope: Scopes<'_>,
    ) -> Result<BooleanQuery, ProjectError> {
        let f = self.fields;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, query)];
        let term = |field: Field, value: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(Term::from_field_text(field, value), IndexRecordOption::Basic))
        };
        let filter =
            |q: Box<dyn Query>| -> (Occur, Box<dyn Query>) { (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0))) };
        if let Some(t) = memory_type {
            clauses.push(filter(term(f.memory_type, t.as_str())));
        }
        match scope {
            Scopes::All => {}
            Scopes::One(s) => clauses.push(filter(term(f.scope, s))),
            Scopes::Patterns(patterns) => {
                // A scope any of the patterns covers: the scope itself, or each scope with the prefix.
                let mut scopes = BTreeSet::new();
                for p in patterns {
                    match p.strip_suffix('*') {
                        Some(prefix) => scopes.extend(self.scopes_with_prefix(searcher, prefix)?),
                        None => {
                            scopes.insert(p.to_string());
                        }
                    }
                }
                let any: Vec<(Occur, Box<dyn Query>)> =
                    scopes.iter().map(|s| (Occur::Should, term(f.scope, s))).collect();
                clauses.push(filter(Box::new(BooleanQuery::new(any))));
            }
        }
        Ok(BooleanQuery::new(clauses))
    }

    /// The scopes of `searcher`'s documents that start with `prefix`, read from each segment's
    /// term dictionary (a deleted document's scope may remain: its term matches nothing more).
    fn scopes_with_prefix(&self, searcher: &Searcher, prefix: &str) -> Result<BTreeSet<String>, ProjectError> {
        let mut out = BTreeSet::new();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.scope)?;
            let mut stream = inverted.terms().range().ge(prefix.as_bytes()).into_stream()?;
            while stream.advance() {
                let key = stream.key();
                if !key.starts_with(prefix.as_bytes()) {
                    break;
                }
                if let Ok(scope) = std::str::from_utf8(key) {
                    out.insert(scope.to_string());
                }
            }
        }
        Ok(out)
    }

    /// The best `limit` hits of `query` (all of them for `None`): score, then newest, then memory
    /// id.
    fn top(
        &self,
        searcher: &Searcher,
        query: &BooleanQuery,
        limit: Option<usize>,
    ) -> Result<Vec<TextHit>, ProjectError> {
        self.keys.retain(searcher);
        let limit = limit.unwrap_or(searcher.num_docs() as usize);
        let top = searcher.search(query, &TopHits::with_limit(limit, &self.keys))?;
        Ok(top
            .into_iter()
            .map(|h| TextHit {
                memory_id: h.memory_id,
                score: h.score,
                asserted_at: Timestamp::from_micros(h.asserted_at),
            })
            .collect())
    }
}

impl Drop for TextIndex {
    fn drop(&mut self) {
        // Let merges started by the last commits finish, so segments do not pile up across
        // short-lived processes.
        let writer = self.writer.get_mut().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(w) = writer {
            let _ = w.wait_merging_threads();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_identifiers_whole_and_adds_their_word_parts() {
        assert_eq!(
            analyze("The billing service runs on Postgres 16.2 (see PAY-1423, billing.events.v2)"),
            ["bill", "servic", "run", "postgr", "16.2", "see", "pay-1423", "pay", "billing.events.v2", "event", "v2"]
        );
        assert_eq!(analyze("Who is on-call? Priya's team's rota"), ["on-cal", "call", "priya", "team", "rota"]);
        assert_eq!(analyze("which postgres version does billing run?"), ["postgr", "version", "bill", "run"]);
        assert_eq!(analyze("foo AND ( \"unbalanced"), ["foo", "unbalanc"]);
        assert_eq!(analyze("9:45 eu-west-1 1.29 A/B"), ["9:45", "eu-west-1", "eu", "west", "1.29", "a/b"]);
        assert!(analyze("?? -- ...").is_empty());
    }

    /// Lucene's English stop words (tantivy's list) and every question word are dropped; other
    /// short words stay.
    #[test]
    fn stop_words_are_lucenes_english_list_and_the_question_words() {
        // A few of Lucene's: the list itself is tantivy's.
        for word in ["the", "such", "into", "their", "will"].into_iter().chain(QUESTION_WORDS.iter().copied()) {
            assert!(analyze(word).is_empty(), "{word:?} is a stop word");
        }
        assert_eq!(analyze("Such a team, then their rota: ask them"), ["team", "rota", "ask"]);
    }

    /// What the `terms` tokenizer makes of a memory's `terms` value: the given terms as they
    /// are, else the term function's terms of the text, also for a text that starts with one of
    /// the marker characters.
    #[test]
    fn the_terms_field_takes_given_terms_or_analyses_the_text() {
        fn words(text: &str) -> Vec<String> {
            text.split(' ').map(|w| format!("w:{w}")).collect()
        }
        let mut tokenizer = CandidateTerms { terms: words, tokens: Vec::new() };
        let mut tokens_of = |value: &str| {
            let mut stream = tokenizer.token_stream(value);
            let mut out = Vec::new();
            while stream.advance() {
                out.push((stream.token().position, stream.token().text.clone()));
            }
            out
        };
        let given = vec!["billing".to_string(), "v1.2".into(), "deploy".into()];
        assert_eq!(
            tokens_of(&terms_value("ignored", Some(given.clone()))),
            given.iter().cloned().enumerate().collect::<Vec<_>>()
        );
        assert_eq!(tokens_of(&terms_value("ignored", Some(Vec::new()))), Vec::new());
        for text in ["plain text", "\0starts with nul", "\u{1}starts with the escape", "\u{1}\0both"] {
            let expected: Vec<(usize, String)> = words(text).into_iter().enumerate().collect();
            assert_eq!(tokens_of(&terms_value(text, None)), expected, "{text:?}");
        }
    }

    #[test]
    fn payload_round_trips() {
        assert_eq!(parse_payload(&payload(2001, 42)), Some((2001, 42)));
        assert_eq!(parse_payload("something else"), None);
    }
}
