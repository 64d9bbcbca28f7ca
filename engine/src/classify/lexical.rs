//! The offline lexical pair classifier: decides whether an incoming memory restates, complements,
//! contradicts or has nothing to do with a stored one, with no model at all (DESIGN.md §5,
//! docs/adr/0003-lexical-rules.md). It starts from the Ankita rules (content words, prefix match,
//! max(Jaccard, containment), merge and conflict bands) and adds evidence features that a bag of
//! words throws away: polarity (negation), value tokens (numbers, versions, dates, weekdays,
//! months, times, quantities), a short general antonym list and qualifiers (environment,
//! platform, region). A change is a contradiction only when it is the single difference between
//! two facts that otherwise agree. Every decision names the gate that made it and carries every
//! score it computed, so a classification event can explain it forever. Only `std` is used.

use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// Every threshold of the lexical classifier. Recorded in each classification event via
/// [`LexicalConfig::recorded`].
#[derive(Clone, Debug, PartialEq)]
pub struct LexicalConfig {
    /// score at or above which two facts are one fact (Ankita's DEFAULT_DEDUP_THRESHOLD).
    pub merge_threshold: f64,
    /// score at or above which two facts are related (complementary rather than unrelated).
    pub related_threshold: f64,
    /// a contradiction needs at least this many meaningful tokens on the longer side
    /// (content words, values, qualifiers and negation cues).
    pub min_conflict_words: usize,
    /// a contradiction needs at least this many agreeing tokens besides the changed one.
    pub min_agreements: usize,
    /// a contradiction needs this Jaccard over the tokens that are not the changed evidence.
    pub min_conflict_jaccard: f64,
    /// two words match when the shorter is a prefix of the longer and at least this long.
    pub prefix_min_len: usize,
    /// changed value / antonym: at most this many substituted words in the rest
    /// (a word on each side that the other lacks means a different subject or action).
    pub max_value_substitutions: usize,
    /// negation: at most this many substituted words in the rest.
    pub max_negation_substitutions: usize,
    /// negation: at least this share of the content words under the negation must appear on
    /// the other side (the negated clause is about the same thing).
    pub min_negation_scope_match: f64,
    /// containment fires only when the shorter fact has at least this many tokens.
    pub min_containment_words: usize,
    /// facts with at most this many tokens are "short": one shared token links them.
    pub short_fact_words: usize,
    /// the score given to two short facts linked by one shared token.
    pub short_link_score: f64,
}

impl Default for LexicalConfig {
    fn default() -> Self {
        LexicalConfig {
            merge_threshold: 0.85,
            related_threshold: 0.55,
            min_conflict_words: 3,
            min_agreements: 2,
            min_conflict_jaccard: 0.5,
            prefix_min_len: 4,
            max_value_substitutions: 0,
            max_negation_substitutions: 0,
            min_negation_scope_match: 1.0,
            min_containment_words: 2,
            short_fact_words: 2,
            short_link_score: 0.6,
        }
    }
}

impl LexicalConfig {
    /// Every threshold as (name, value); counts are given as f64.
    pub fn recorded(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("merge_threshold", self.merge_threshold),
            ("related_threshold", self.related_threshold),
            ("min_conflict_words", self.min_conflict_words as f64),
            ("min_agreements", self.min_agreements as f64),
            ("min_conflict_jaccard", self.min_conflict_jaccard),
            ("prefix_min_len", self.prefix_min_len as f64),
            ("max_value_substitutions", self.max_value_substitutions as f64),
            ("max_negation_substitutions", self.max_negation_substitutions as f64),
            ("min_negation_scope_match", self.min_negation_scope_match),
            ("min_containment_words", self.min_containment_words as f64),
            ("short_fact_words", self.short_fact_words as f64),
            ("short_link_score", self.short_link_score),
        ]
    }
}

/// What two memories are to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// the same fact restated: a paraphrase or an enrichment.
    Identical,
    /// related, and both can be true.
    Complementary,
    /// cannot both be true.
    Contradictory,
    /// nothing to do with each other.
    Unrelated,
}

impl Relation {
    /// Stable lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Identical => "identical",
            Relation::Complementary => "complementary",
            Relation::Contradictory => "contradictory",
            Relation::Unrelated => "unrelated",
        }
    }
}

/// The rule that decided (or dropped) a pair. Names are stable; see [`Gate::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// identical: the normalised texts are equal.
    ExactText,
    /// identical: similarity at or above the merge threshold, nothing changed.
    MergeBand,
    /// complementary: in the related band, no evidence of change.
    RelatedBand,
    /// unrelated: below the related band.
    BelowBand,
    /// unrelated: one side has no content word at all.
    NoContent,
    /// complementary (near miss): the declared kinds differ; never identical nor contradictory.
    KindMismatch,
    /// contradictory: one side negates what the other asserts, the rest agrees.
    Negation,
    /// contradictory: a number, version, date, weekday, month, time or quantity changed, the
    /// rest agrees.
    ValueMismatch,
    /// contradictory: an antonym replaces a word, the rest agrees.
    Antonym,
    /// not identical: both sides name a qualifier of the same kind (environment, platform,
    /// region) and they differ, so the facts are distinct.
    QualifierDiffers,
    /// not identical: one side has a qualifier the other lacks (a narrower or wider fact).
    QualifierAdded,
    /// not contradictory: a change was found, but the rest of the facts differ too (another
    /// subject or action), or more than one thing changed.
    RestDiffers,
    /// not contradictory: a change was found but the facts are too short to claim it.
    TooFewWords,
    /// not identical: the longer side adds words that narrow the fact (a modifier inside the
    /// shared phrase, or a trailing phrase), rather than a separable condition, time or clause.
    Narrower,
    /// not identical: the shared words come in another order (roles may be swapped) and
    /// neither side is passive.
    OrderDiffers,
}

impl Gate {
    /// Stable snake_case name recorded in classification events.
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::ExactText => "exact_text",
            Gate::MergeBand => "merge_band",
            Gate::RelatedBand => "related_band",
            Gate::BelowBand => "below_band",
            Gate::NoContent => "no_content",
            Gate::KindMismatch => "kind_mismatch",
            Gate::Negation => "negation",
            Gate::ValueMismatch => "value_mismatch",
            Gate::Antonym => "antonym",
            Gate::QualifierDiffers => "qualifier_differs",
            Gate::QualifierAdded => "qualifier_added",
            Gate::RestDiffers => "rest_differs",
            Gate::TooFewWords => "too_few_words",
            Gate::Narrower => "narrower",
            Gate::OrderDiffers => "order_differs",
        }
    }

    /// Every gate, for documentation and exhaustive tests.
    pub const ALL: [Gate; 15] = [
        Gate::ExactText,
        Gate::MergeBand,
        Gate::RelatedBand,
        Gate::BelowBand,
        Gate::NoContent,
        Gate::KindMismatch,
        Gate::Negation,
        Gate::ValueMismatch,
        Gate::Antonym,
        Gate::QualifierDiffers,
        Gate::QualifierAdded,
        Gate::RestDiffers,
        Gate::TooFewWords,
        Gate::Narrower,
        Gate::OrderDiffers,
    ];
}

/// The outcome of classifying one pair.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub relation: Relation,
    pub gate: Gate,
    /// max(Jaccard, containment) over all tokens, in [0, 1], never NaN.
    pub score: f64,
    /// every score computed, by name.
    pub scores: Vec<(&'static str, f64)>,
    /// one human sentence.
    pub reason: String,
    /// a (incoming) has content the candidate lacks.
    pub incoming_adds: bool,
    /// b (candidate) has content a lacks.
    pub candidate_adds: bool,
    /// in the related band but dropped by the kind gate.
    pub near_miss: bool,
}

// ---------------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ValCat {
    Number,
    Time,
    Date,
    Weekday,
    Month,
    RelDay,
    Frequency,
    Quantity,
}

impl ValCat {
    fn as_str(self) -> &'static str {
        match self {
            ValCat::Number => "number",
            ValCat::Time => "time",
            ValCat::Date => "date",
            ValCat::Weekday => "weekday",
            ValCat::Month => "month",
            ValCat::RelDay => "day",
            ValCat::Frequency => "frequency",
            ValCat::Quantity => "quantity",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum QualCat {
    Environment,
    Platform,
    Region,
}

impl QualCat {
    fn as_str(self) -> &'static str {
        match self {
            QualCat::Environment => "environment",
            QualCat::Platform => "platform",
            QualCat::Region => "region",
        }
    }
}

/// `a == b` that calls `memcmp` only when the lengths and the first bytes agree (and never for
/// two empty strings). A classification compares item keys and units pair by pair, and those
/// calls, mostly on unequal or empty strings, were a tenth of a bulk save's saving thread.
#[inline]
fn same_str(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || (a.as_bytes()[0] == b.as_bytes()[0] && a == b))
}

/// A quantity's canonical unit as [`unit`] names it ("" for none), compared by [`same_str`].
#[derive(Clone, Copy, Debug, Eq)]
struct Unit(&'static str);

impl PartialEq for Unit {
    fn eq(&self, other: &Unit) -> bool {
        same_str(self.0, other.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// a stemmed, lowercased content word; prefix matching applies.
    Word,
    /// an identifier, hostname, path or other token kept whole; exact match only.
    Ident,
    /// a value token; `unit` is the canonical unit of a quantity, "" otherwise.
    Value(ValCat, Unit),
    /// a qualifier that keeps facts distinct.
    Qual(QualCat),
}

#[derive(Clone, Debug)]
struct Item {
    key: String,
    /// the text as written, for reasons.
    shown: String,
    kind: Kind,
    /// inside the scope of a negation cue.
    negated: bool,
    /// index of the raw token it came from.
    raw_pos: usize,
}

/// One text, analysed once: its content items, values, qualifiers, negations. Classifying a pair
/// of analyses skips the tokenising, which dominates the cost of a comparison.
#[derive(Debug, Default)]
pub struct Analysis {
    items: Vec<Item>,
    /// stems of every word, stop words included (antonyms live among them).
    stems: Stems,
    /// number of negation cues.
    negs: usize,
    /// the first negation cue, for reasons.
    neg_cue: String,
    /// normalised text (lowercased tokens joined), for the exact-text gate.
    norm: String,
    /// Per raw token: whether a clause boundary follows it, and whether it is a connector
    /// word (all that [`enrichment_shape`] asks of the raw tokens; kept instead of the tokens).
    raw: Vec<RawFlags>,
    /// raw position of the token being analysed.
    cur: usize,
    /// [`index_terms_of`] this analysis, made once ([`Analysis::index_terms`]).
    terms: std::sync::OnceLock<Vec<String>>,
}

impl Analysis {
    /// [`index_terms_of`] this analysis, made on first use and kept: a new memory's terms are
    /// asked for by candidate search and again when the term cache learns of it, and `save
    /// --from` makes them on its reading thread, ahead of both.
    pub fn index_terms(&self) -> &[String] {
        self.terms.get_or_init(|| index_terms_of(self))
    }
}

/// A text's stems, sorted and each once: a set that takes no more memory than its strings
/// (analyses are cached per stored memory) and answers `contains` by binary search.
#[derive(Debug, Default)]
struct Stems(Vec<String>);

impl Stems {
    /// Add a stem while analysing; [`Stems::finish`] sorts them.
    fn insert(&mut self, stem: String) {
        self.0.push(stem);
    }

    fn finish(&mut self) {
        self.0.sort_unstable();
        self.0.dedup();
        self.0.shrink_to_fit();
    }

    fn contains(&self, stem: &str) -> bool {
        self.0.binary_search_by(|s| s.as_str().cmp(stem)).is_ok()
    }

    /// Every stem, in order.
    fn iter(&self) -> std::slice::Iter<'_, String> {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a Stems {
    type Item = &'a String;
    type IntoIter = std::slice::Iter<'a, String>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// What a classification asks of one raw token after its analysis.
#[derive(Clone, Copy, Debug)]
struct RawFlags {
    /// a clause boundary (punctuation) follows the token.
    boundary: bool,
    /// the token is a [`connector`] word.
    connector: bool,
}

struct RawTok {
    text: String,
    lower: String,
    /// a clause boundary (punctuation) follows this token.
    boundary: bool,
}

fn is_clause_word(w: &str) -> bool {
    matches!(w, "but" | "because" | "while" | "although" | "though" | "however" | "whereas" | "unless" | "so" | "then")
}

/// Splits text into raw tokens: whitespace-separated chunks with surrounding punctuation
/// trimmed, contractions expanded (`don't` → `do not`), alphabetic compounds split on `-`/`/`,
/// and anything else (hostnames, versions, paths, identifiers) kept whole.
fn raw_tokens(text: &str) -> Vec<RawTok> {
    let mut out: Vec<RawTok> = Vec::new();
    for chunk in text.split_whitespace() {
        let chunk: std::borrow::Cow<str> = if chunk.contains(['\u{2019}', '\u{2018}']) {
            chunk.replace(['\u{2019}', '\u{2018}'], "'").into()
        } else {
            chunk.into()
        };
        let lead: &[char] = &['"', '\'', '(', '[', '{', '<', '\u{201c}', '\u{ab}', '*', '`'];
        let trail: &[char] =
            &['"', '\'', ')', ']', '}', '>', '\u{201d}', '\u{bb}', '.', ',', ';', ':', '!', '?', '*', '`'];
        let start = chunk.trim_start_matches(lead);
        let core = start.trim_end_matches(trail);
        let tail = &start[core.len()..];
        let boundary = tail.chars().any(|c| matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | ')'));
        if core.is_empty() {
            if boundary && let Some(last) = out.last_mut() {
                last.boundary = true;
            }
            continue;
        }
        let mut parts: Vec<String> = Vec::new();
        let lower = core.to_lowercase();
        // contractions
        if let Some(base) = lower.strip_suffix("n't") {
            let base = match base {
                "ca" => "can",
                "wo" => "will",
                "sha" => "shall",
                "ai" => "is",
                b => b,
            };
            if !base.is_empty() {
                parts.push(base.to_string());
            }
            parts.push("not".to_string());
        } else if lower == "cannot" {
            parts.push("can".to_string());
            parts.push("not".to_string());
        } else {
            let mut c = core.to_string();
            for suf in ["'s", "'re", "'ll", "'ve", "'m", "'d", "'"] {
                // `c` is still `core` here (the loop ends at the first cut), so `lower` is its
                // lowercase.
                if c.len() > suf.len() && lower.ends_with(suf) {
                    c.truncate(c.len() - suf.len());
                    break;
                }
            }
            let has_digit = c.chars().any(|ch| ch.is_ascii_digit());
            let alpha_compound = !has_digit
                && (c.contains('-') || c.contains('/'))
                && c.chars().all(|ch| ch.is_alphabetic() || ch == '-' || ch == '/' || ch == '\'');
            if alpha_compound {
                for p in c.split(['-', '/']) {
                    if !p.is_empty() {
                        parts.push(p.to_string());
                    }
                }
            } else {
                parts.push(c);
            }
        }
        let n = parts.len();
        for (i, p) in parts.into_iter().enumerate() {
            let lower = p.to_lowercase();
            out.push(RawTok { text: p, lower, boundary: boundary && i + 1 == n });
        }
    }
    out
}

fn stop_word(w: &str) -> bool {
    matches!(
        w,
        "a" | "an"
            | "the"
            | "this"
            | "that"
            | "these"
            | "those"
            | "there"
            | "here"
            | "it"
            | "its"
            | "i"
            | "me"
            | "my"
            | "mine"
            | "myself"
            | "we"
            | "us"
            | "our"
            | "ours"
            | "you"
            | "your"
            | "yours"
            | "he"
            | "him"
            | "his"
            | "she"
            | "her"
            | "hers"
            | "they"
            | "them"
            | "their"
            | "theirs"
            | "itself"
            | "himself"
            | "herself"
            | "themselves"
            | "who"
            | "whom"
            | "whose"
            | "which"
            | "what"
            | "when"
            | "where"
            | "why"
            | "how"
            | "is"
            | "are"
            | "was"
            | "were"
            | "be"
            | "been"
            | "being"
            | "am"
            | "do"
            | "does"
            | "did"
            | "doing"
            | "done"
            | "have"
            | "has"
            | "had"
            | "having"
            | "will"
            | "would"
            | "shall"
            | "should"
            | "can"
            | "could"
            | "may"
            | "might"
            | "must"
            | "to"
            | "of"
            | "in"
            | "on"
            | "at"
            | "by"
            | "for"
            | "with"
            | "from"
            | "into"
            | "onto"
            | "about"
            | "as"
            | "than"
            | "then"
            | "so"
            | "and"
            | "or"
            | "but"
            | "if"
            | "also"
            | "just"
            | "very"
            | "really"
            | "some"
            | "any"
            | "each"
            | "every"
            | "all"
            | "both"
            | "either"
            | "other"
            | "another"
            | "such"
            | "own"
            | "same"
            | "too"
            | "up"
            | "down"
            | "out"
            | "off"
            | "over"
            | "under"
            | "again"
            | "further"
            | "once"
            | "only"
            | "more"
            | "most"
            | "less"
            | "least"
            | "much"
            | "many"
            | "few"
            | "lot"
            | "lots"
            | "get"
            | "gets"
            | "got"
            | "getting"
            | "use"
            | "uses"
            | "using"
            | "used"
            | "thing"
            | "things"
            | "stuff"
            | "something"
            | "someone"
            | "somebody"
            | "anything"
            | "anyone"
            | "everyone"
            | "everything"
            | "etc"
            | "e.g"
            | "i.e"
            | "via"
            | "per"
            | "while"
            | "although"
            | "though"
            | "because"
            | "since"
            | "until"
            | "till"
            | "after"
            | "before"
            | "during"
            | "through"
            | "across"
            | "along"
            | "around"
            | "near"
            | "now"
            | "currently"
            | "still"
            | "already"
            | "yet"
            | "always"
            | "usually"
            | "often"
            | "sometimes"
            | "ever"
            | "let"
            | "ok"
            | "okay"
            | "which's"
            | "one's"
            | "whether"
            | "upon"
            | "within"
            | "against"
            | "between"
            | "among"
            | "like's"
            | "said"
            | "says"
            | "say"
            | "kind"
            | "sort"
            | "bit"
    )
}

fn negation_cue(w: &str) -> bool {
    matches!(
        w,
        "not" | "no" | "never" | "nobody" | "nothing" | "none" | "nowhere" | "neither" | "nor" | "without" | "noone"
    )
}

fn weekday(w: &str, t: &str, first: bool) -> Option<&'static str> {
    let base = w.strip_suffix('s').filter(|b| b.ends_with("day")).unwrap_or(w);
    let full = match base {
        "monday" => Some("monday"),
        "tuesday" => Some("tuesday"),
        "wednesday" => Some("wednesday"),
        "thursday" => Some("thursday"),
        "friday" => Some("friday"),
        "saturday" => Some("saturday"),
        "sunday" => Some("sunday"),
        _ => None,
    };
    if full.is_some() {
        return full;
    }
    let capital = t.chars().next().is_some_and(|c| c.is_uppercase());
    if !capital {
        return None;
    }
    match w {
        "mon" => Some("monday"),
        "tue" | "tues" => Some("tuesday"),
        "wed" => Some("wednesday"),
        "thu" | "thur" | "thurs" => Some("thursday"),
        "fri" => Some("friday"),
        "sat" if !first => Some("saturday"),
        "sun" if !first => Some("sunday"),
        _ => None,
    }
}

fn month(w: &str, t: &str, first: bool) -> Option<&'static str> {
    let capital = t.chars().next().is_some_and(|c| c.is_uppercase());
    match w {
        "january" => Some("january"),
        "february" => Some("february"),
        "april" => Some("april"),
        "june" => Some("june"),
        "july" => Some("july"),
        "september" => Some("september"),
        "october" => Some("october"),
        "november" => Some("november"),
        "december" => Some("december"),
        "august" if capital => Some("august"),
        "march" if capital && !first => Some("march"),
        "may" if capital && !first => Some("may"),
        "jan" if capital => Some("january"),
        "feb" if capital => Some("february"),
        "mar" if capital => Some("march"),
        "apr" if capital => Some("april"),
        "jun" if capital => Some("june"),
        "jul" if capital => Some("july"),
        "aug" if capital => Some("august"),
        "sep" | "sept" if capital => Some("september"),
        "oct" if capital => Some("october"),
        "nov" if capital => Some("november"),
        "dec" if capital => Some("december"),
        _ => None,
    }
}

fn relday(w: &str) -> Option<&'static str> {
    match w {
        "today" => Some("today"),
        "tonight" => Some("tonight"),
        "tomorrow" => Some("tomorrow"),
        "yesterday" => Some("yesterday"),
        _ => None,
    }
}

fn frequency(w: &str) -> Option<&'static str> {
    match w {
        "hourly" => Some("hourly"),
        "daily" => Some("daily"),
        "nightly" => Some("nightly"),
        "weekly" => Some("weekly"),
        "biweekly" | "fortnightly" => Some("biweekly"),
        "monthly" => Some("monthly"),
        "quarterly" => Some("quarterly"),
        "yearly" | "annually" => Some("yearly"),
        _ => None,
    }
}

fn number_word(w: &str) -> Option<u64> {
    Some(match w {
        "zero" => 0,
        "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        "thirteen" => 13,
        "fourteen" => 14,
        "fifteen" => 15,
        "sixteen" => 16,
        "seventeen" => 17,
        "eighteen" => 18,
        "nineteen" => 19,
        "twenty" => 20,
        "thirty" => 30,
        "forty" => 40,
        "fifty" => 50,
        "sixty" => 60,
        "seventy" => 70,
        "eighty" => 80,
        "ninety" => 90,
        "hundred" => 100,
        "thousand" => 1_000,
        "million" => 1_000_000,
        "billion" => 1_000_000_000,
        "dozen" => 12,
        _ => return None,
    })
}

/// Canonical unit for a unit word or suffix.
fn unit(w: &str) -> Option<&'static str> {
    Some(match w {
        "ms" | "msec" | "millisecond" | "milliseconds" => "ms",
        "s" | "sec" | "secs" | "second" | "seconds" => "s",
        "min" | "mins" | "minute" | "minutes" => "min",
        "h" | "hr" | "hrs" | "hour" | "hours" => "h",
        "day" | "days" => "day",
        "week" | "weeks" | "wk" | "wks" => "week",
        "month" | "months" => "month",
        "year" | "years" | "yr" | "yrs" => "year",
        "b" | "byte" | "bytes" => "byte",
        "kb" | "kib" => "kb",
        "mb" | "mib" => "mb",
        "gb" | "gib" => "gb",
        "tb" | "tib" => "tb",
        "%" | "percent" | "pct" => "%",
        "px" => "px",
        "usd" | "dollar" | "dollars" => "usd",
        "eur" | "euro" | "euros" => "eur",
        "gbp" | "pound" | "pounds" => "gbp",
        "km" | "kilometer" | "kilometers" | "kilometre" | "kilometres" => "km",
        "mi" | "mile" | "miles" => "mile",
        "kg" | "kilogram" | "kilograms" | "kilo" | "kilos" => "kg",
        "lb" | "lbs" => "lb",
        "core" | "cores" | "vcpu" | "vcpus" | "cpu" | "cpus" => "cpu",
        "node" | "nodes" => "node",
        "replica" | "replicas" => "replica",
        "x" => "x",
        "k" => "k",
        "rps" | "qps" => "rps",
        "ghz" => "ghz",
        "mhz" => "mhz",
        _ => return None,
    })
}

fn env_qualifier(w: &str) -> Option<&'static str> {
    match w {
        "production" | "prod" => Some("production"),
        "staging" => Some("staging"),
        "dev" | "development" => Some("development"),
        "qa" => Some("qa"),
        "uat" => Some("uat"),
        "sandbox" => Some("sandbox"),
        "preprod" => Some("preprod"),
        _ => None,
    }
}

/// `test`, `local`, `canary` name an environment only next to an environment word.
fn weak_env_qualifier(w: &str) -> Option<&'static str> {
    match w {
        "test" | "testing" => Some("test"),
        "local" | "localhost" => Some("local"),
        "canary" => Some("canary"),
        _ => None,
    }
}

fn env_context(w: &str) -> bool {
    matches!(
        w,
        "environment"
            | "environments"
            | "env"
            | "envs"
            | "server"
            | "servers"
            | "cluster"
            | "clusters"
            | "instance"
            | "instances"
            | "stack"
            | "deployment"
            | "deploy"
            | "build"
            | "builds"
    )
}

fn platform_qualifier(w: &str, t: &str) -> Option<&'static str> {
    let capital = t.chars().next().is_some_and(|c| c.is_uppercase());
    match w {
        "linux" => Some("linux"),
        "macos" | "osx" => Some("macos"),
        "mac" if capital => Some("macos"),
        "windows" if capital => Some("windows"),
        "ios" => Some("ios"),
        "android" => Some("android"),
        _ => None,
    }
}

fn region_qualifier(t: &str) -> Option<String> {
    if matches!(t, "EU" | "US" | "UK" | "APAC" | "EMEA" | "LATAM") {
        return Some(t.to_lowercase());
    }
    // cloud regions such as us-east-1, eu-west-2, ap-southeast-1
    let parts: Vec<&str> = t.split('-').collect();
    if parts.len() == 3
        && parts[0].len() == 2
        && parts[0].chars().all(|c| c.is_ascii_alphabetic())
        && parts[1].chars().all(|c| c.is_ascii_alphabetic())
        && !parts[2].is_empty()
        && parts[2].chars().all(|c| c.is_ascii_digit())
    {
        return Some(t.to_lowercase());
    }
    None
}

/// Light suffix stripping for English words; prefix matching does the rest.
fn stem(w: &str) -> String {
    if !w.is_ascii() || w.len() <= 3 {
        return w.to_string();
    }
    let mut s = w.to_string();
    if (s.ends_with("ies") || s.ends_with("ied")) && s.len() > 4 {
        s.truncate(s.len() - 3);
        s.push('y');
    } else if s.ends_with("sses") {
        s.truncate(s.len() - 2);
    } else if s.ends_with('s') && !s.ends_with("ss") && !s.ends_with("us") && !s.ends_with("is") {
        s.truncate(s.len() - 1);
    } else if s.ends_with("ing") && s.len() >= 6 {
        s.truncate(s.len() - 3);
        undouble(&mut s);
    } else if s.ends_with("ed") && s.len() >= 5 {
        s.truncate(s.len() - 2);
        undouble(&mut s);
    }
    if s.len() > 3 && s.ends_with('e') {
        s.truncate(s.len() - 1);
    }
    s
}

fn undouble(s: &mut String) {
    let b = s.as_bytes();
    let n = b.len();
    if n >= 3 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z') && !is_vowel(b[n - 1]) {
        s.pop();
    }
}

fn is_vowel(c: u8) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// Parses a token containing a digit into a value: (category, unit, canonical text).
fn parse_value(t: &str) -> Option<(ValCat, &'static str, String)> {
    let lower = t.to_lowercase();
    let mut s = lower.as_str();
    let mut cur: Option<&'static str> = None;
    for (sym, u) in [("$", "usd"), ("\u{20ac}", "eur"), ("\u{a3}", "gbp")] {
        if let Some(r) = s.strip_prefix(sym) {
            s = r;
            cur = Some(u);
        }
    }
    let s = s.trim_end_matches('+');
    // version prefix
    let s = match s.strip_prefix('v') {
        Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => r,
        _ => s,
    };
    if s.is_empty() || !s.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    // time: 10:30, 10:30pm, 10am
    let (clock, ampm) = if let Some(r) = s.strip_suffix("am") {
        (r, Some(false))
    } else if let Some(r) = s.strip_suffix("pm") {
        (r, Some(true))
    } else {
        (s, None)
    };
    if let Some(t) = parse_clock(clock, ampm) {
        return Some((ValCat::Time, "", t));
    }
    // dates: 2024-05-01, 2024/05/01, 05/01/2024
    let date_parts: Vec<&str> = s.split(['-', '/']).collect();
    if date_parts.len() == 3
        && date_parts.iter().all(|p| !p.is_empty() && p.len() <= 4 && p.chars().all(|c| c.is_ascii_digit()))
    {
        return Some((ValCat::Date, "", date_parts.join("-")));
    }
    // a plain number or version: digits, dots, commas
    let numeric_end = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(s.len());
    let (num, suffix) = s.split_at(numeric_end);
    let num = num.trim_end_matches(['.', ',']);
    if num.is_empty() {
        return None;
    }
    let canon: String = num.chars().filter(|&c| c != ',').collect();
    if suffix.is_empty() {
        return Some(match cur {
            Some(u) => (ValCat::Quantity, u, canon),
            None => (ValCat::Number, "", canon),
        });
    }
    if matches!(suffix, "st" | "nd" | "rd" | "th") {
        return Some((ValCat::Number, "", canon));
    }
    if let Some(u) = unit(suffix) {
        return Some((ValCat::Quantity, u, canon));
    }
    None
}

fn parse_clock(s: &str, ampm: Option<bool>) -> Option<String> {
    let (h, m) = match s.split_once(':') {
        Some((h, m)) => {
            let m = m.split(':').next().unwrap_or("");
            (h, m)
        }
        None if ampm.is_some() => (s, "00"),
        None => return None,
    };
    if h.is_empty()
        || h.len() > 2
        || m.len() != 2
        || !h.chars().all(|c| c.is_ascii_digit())
        || !m.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut hh: u32 = h.parse().ok()?;
    let mm: u32 = m.parse().ok()?;
    if mm > 59 || hh > 24 {
        return None;
    }
    match ampm {
        Some(true) if hh < 12 => hh += 12,
        Some(false) if hh == 12 => hh = 0,
        _ => {}
    }
    Some(format!("{hh:02}:{mm:02}"))
}

/// Identifiers keep their case when it carries meaning (camelCase, ALLCAPS after the first
/// letter); otherwise they are lowercased.
fn ident_key(t: &str) -> String {
    let mut chars = t.chars();
    chars.next();
    if chars.any(|c| c.is_uppercase()) { t.to_string() } else { t.to_lowercase() }
}

/// Code-like tokens: with `.`, `_`, `/`, `@`, `:` or a digit inside, or lowerCamelCase
/// (`maxRetries`). Brand-like PascalCase words (`PostgreSQL`, `GitHub`) stay ordinary words.
fn is_identifier(t: &str) -> bool {
    let starts_lower = t.chars().next().is_some_and(|c| c.is_lowercase());
    let mut prev_lower = false;
    for c in t.chars() {
        if matches!(c, '.' | '_' | '/' | '@' | ':' | '#' | '+' | '=' | '\\') || c.is_ascii_digit() {
            return true;
        }
        if c.is_uppercase() && prev_lower && starts_lower {
            return true;
        }
        prev_lower = c.is_lowercase();
    }
    false
}

/// Analyse a text for [`classify_analysed`] and [`index_terms_of`].
pub fn analyse(text: &str) -> Analysis {
    let raw = raw_tokens(text);
    let mut a = Analysis::default();
    let mut norm = String::with_capacity(text.len());
    let mut in_scope = false;
    let mut i = 0;
    // An item once per kind and key (a short text has a handful: a scan beats hashing).
    let push = |a: &mut Analysis, key: String, shown: &str, kind: Kind, negated: bool| match a
        .items
        .iter_mut()
        .find(|it| it.key == key && it.kind == kind)
    {
        None => {
            let raw_pos = a.cur;
            a.items.push(Item { key, shown: shown.to_string(), kind, negated, raw_pos });
        }
        Some(it) if negated => it.negated = true,
        Some(_) => {}
    };
    while i < raw.len() {
        a.cur = i;
        let t = &raw[i].text;
        let w = raw[i].lower.as_str();
        let first = i == 0;
        let boundary = raw[i].boundary;
        let next = raw.get(i + 1).map(|r| r.lower.as_str());
        let prev = if i > 0 { Some(raw[i - 1].lower.as_str()) } else { None };
        if !norm.is_empty() {
            norm.push(' ');
        }
        norm.push_str(&ident_key(t));
        let mut consumed = 1;
        if is_clause_word(w) {
            in_scope = false;
        }
        if negation_cue(w) || (w == "no" && next == Some("one")) {
            a.negs += 1;
            if a.neg_cue.is_empty() {
                a.neg_cue = w.to_string();
            }
            if w == "no" && next == Some("one") {
                consumed = 2;
            }
            in_scope = true;
            a.stems.insert(w.to_string());
        } else if let Some(d) = weekday(w, t, first) {
            push(&mut a, d.to_string(), t, Kind::Value(ValCat::Weekday, Unit("")), in_scope);
        } else if let Some(m) = month(w, t, first) {
            push(&mut a, m.to_string(), t, Kind::Value(ValCat::Month, Unit("")), in_scope);
        } else if let Some(d) = relday(w) {
            push(&mut a, d.to_string(), t, Kind::Value(ValCat::RelDay, Unit("")), in_scope);
        } else if let Some(f) = frequency(w) {
            push(&mut a, f.to_string(), t, Kind::Value(ValCat::Frequency, Unit("")), in_scope);
        } else if w == "noon" || w == "midnight" {
            let v = if w == "noon" { "12:00" } else { "00:00" };
            push(&mut a, v.to_string(), t, Kind::Value(ValCat::Time, Unit("")), in_scope);
        } else if let Some(q) = env_qualifier(w) {
            push(&mut a, q.to_string(), t, Kind::Qual(QualCat::Environment), in_scope);
        } else if let Some(q) = weak_env_qualifier(w).filter(|_| {
            next.is_some_and(env_context) || prev.is_some_and(|p| matches!(p, "to" | "in" | "on" | "against"))
        }) {
            push(&mut a, q.to_string(), t, Kind::Qual(QualCat::Environment), in_scope);
        } else if let Some(q) = platform_qualifier(w, t) {
            push(&mut a, q.to_string(), t, Kind::Qual(QualCat::Platform), in_scope);
        } else if let Some(q) = region_qualifier(t) {
            push(&mut a, q, t, Kind::Qual(QualCat::Region), in_scope);
        } else if w.chars().any(|c| c.is_ascii_digit()) {
            match parse_value(t) {
                Some((cat, u, canon)) => {
                    let (cat, u, canon) = merge_following(cat, u, canon, &raw, i, &mut consumed);
                    push(&mut a, canon, t, Kind::Value(cat, Unit(u)), in_scope);
                }
                None => push(&mut a, ident_key(t), t, Kind::Ident, in_scope),
            }
        } else if let Some(n) = number_word(w).filter(|_| {
            !(w == "one" && matches!(prev, Some("no" | "any" | "every" | "some" | "each" | "the" | "this" | "that")))
        }) {
            // a run of number words: "twenty five", "two hundred"
            let mut total = 0u64;
            let mut current = n;
            let mut j = i + 1;
            while let Some(nw) = raw.get(j).and_then(|r| if raw[j - 1].boundary { None } else { number_word(&r.lower) })
            {
                if nw == 100 {
                    current = current.max(1) * 100;
                } else if nw >= 1000 {
                    total += current.max(1) * nw;
                    current = 0;
                } else {
                    current += nw;
                }
                j += 1;
            }
            consumed = j - i;
            let value = (total + current).to_string();
            let (cat, u, canon) = merge_following(ValCat::Number, "", value, &raw, j - 1, &mut consumed);
            push(&mut a, canon, t, Kind::Value(cat, Unit(u)), in_scope);
        } else if w.chars().any(|c| c.is_alphanumeric()) {
            if is_identifier(t) {
                push(&mut a, ident_key(t), t, Kind::Ident, in_scope);
            } else {
                let s = stem(w);
                a.stems.insert(s.clone());
                if !stop_word(w) {
                    push(&mut a, s, t, Kind::Word, in_scope);
                }
            }
        }
        for k in i..i + consumed {
            if k != i && k < raw.len() {
                norm.push(' ');
                norm.push_str(&ident_key(&raw[k].text));
            }
            if raw.get(k).is_some_and(|r| r.boundary) {
                in_scope = false;
            }
        }
        if boundary {
            in_scope = false;
        }
        i += consumed;
    }
    a.norm = norm;
    a.raw = Vec::with_capacity(raw.len());
    a.raw.extend(raw.iter().map(|r| RawFlags { boundary: r.boundary, connector: connector(&r.lower) }));
    // Analyses are kept (the pipeline caches one per stored memory): no spare capacity.
    a.items.shrink_to_fit();
    a.stems.finish();
    a.norm.shrink_to_fit();
    a
}

/// A number followed by a unit word becomes a quantity, by am/pm a time.
fn merge_following(
    cat: ValCat,
    u: &'static str,
    canon: String,
    raw: &[RawTok],
    last: usize,
    consumed: &mut usize,
) -> (ValCat, &'static str, String) {
    if cat != ValCat::Number || raw[last].boundary {
        return (cat, u, canon);
    }
    let Some(next) = raw.get(last + 1) else {
        return (cat, u, canon);
    };
    let w = next.lower.as_str();
    if matches!(w, "am" | "pm" | "a.m" | "p.m")
        && let Some(t) = parse_clock(&canon, Some(w.starts_with('p')))
    {
        *consumed += 1;
        return (ValCat::Time, "", t);
    }
    if (w.len() > 1 || w == "%")
        && let Some(un) = unit(w)
    {
        *consumed += 1;
        return (ValCat::Quantity, un, canon);
    }
    (cat, u, canon)
}

// ---------------------------------------------------------------------------------------------
// Antonyms
// ---------------------------------------------------------------------------------------------

/// A short list of general English opposites (not fitted to any data set). Matched on stems.
const ANTONYMS: &[(&str, &str)] = &[
    ("on", "off"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("true", "false"),
    ("open", "closed"),
    ("open", "close"),
    ("start", "stop"),
    ("up", "down"),
    ("in", "out"),
    ("before", "after"),
    ("allow", "deny"),
    ("allow", "forbid"),
    ("accept", "reject"),
    ("approve", "reject"),
    ("like", "dislike"),
    ("love", "hate"),
    ("always", "never"),
    ("increase", "decrease"),
    ("win", "lose"),
    ("empty", "full"),
    ("old", "new"),
    ("old", "young"),
    ("pass", "fail"),
    ("succeed", "fail"),
    ("success", "failure"),
    ("add", "remove"),
    ("include", "exclude"),
    ("public", "private"),
    ("online", "offline"),
    ("visible", "hidden"),
    ("show", "hide"),
    ("push", "pull"),
    ("buy", "sell"),
    ("import", "export"),
    ("inside", "outside"),
    ("above", "below"),
    ("high", "low"),
    ("big", "small"),
    ("large", "small"),
    ("hot", "cold"),
    ("fast", "slow"),
    ("early", "late"),
    ("first", "last"),
    ("minimum", "maximum"),
    ("more", "less"),
    ("most", "least"),
    ("many", "few"),
    ("better", "worse"),
    ("best", "worst"),
    ("light", "dark"),
    ("internal", "external"),
    ("manual", "automatic"),
    ("manually", "automatically"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("permanent", "temporary"),
    ("ascending", "descending"),
    ("join", "leave"),
    ("arrive", "leave"),
    ("present", "absent"),
    ("alive", "dead"),
    ("happy", "sad"),
    ("good", "bad"),
    ("right", "wrong"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("yes", "no"),
    ("same", "different"),
    ("pro", "con"),
    ("agree", "disagree"),
    ("appear", "disappear"),
    ("connect", "disconnect"),
    ("approve", "disapprove"),
    ("allow", "disallow"),
    ("like", "hate"),
    ("prefer", "avoid"),
    ("love", "dislike"),
    ("up", "off"),
    ("maximum", "minimum"),
    ("max", "min"),
    ("asleep", "awake"),
    ("wet", "dry"),
    ("strong", "weak"),
    ("rich", "poor"),
    ("cheap", "expensive"),
    ("easy", "hard"),
    ("easy", "difficult"),
    ("safe", "dangerous"),
    ("clean", "dirty"),
    ("loud", "quiet"),
    ("heavy", "light"),
    ("long", "short"),
    ("tall", "short"),
    ("wide", "narrow"),
    ("thick", "thin"),
    ("top", "bottom"),
    ("front", "back"),
    ("north", "south"),
    ("east", "west"),
    ("day", "night"),
    ("morning", "evening"),
    ("summer", "winter"),
    ("male", "female"),
    ("remember", "forget"),
    ("lock", "unlock"),
    ("enter", "exit"),
    ("import", "export"),
    ("upload", "download"),
    ("upgrade", "downgrade"),
    ("encrypt", "decrypt"),
    ("include", "omit"),
    ("near", "far"),
    ("into", "out"),
    ("onto", "off"),
    ("lot", "few"),
];

/// The antonym pairs by stem, in both directions: a stem → `(rank, its opposite)` for each pair
/// it is one side of, where `rank` is the pair's place in [`ANTONYMS`] (twice, plus one for the
/// reversed direction): the order the pairs are tried in.
fn antonyms_by_stem() -> &'static FxHashMap<String, Vec<(usize, String)>> {
    static CELL: OnceLock<FxHashMap<String, Vec<(usize, String)>>> = OnceLock::new();
    CELL.get_or_init(|| {
        let mut by_stem: FxHashMap<String, Vec<(usize, String)>> = FxHashMap::default();
        for (i, (x, y)) in ANTONYMS.iter().enumerate() {
            let (x, y) = (stem(x), stem(y));
            by_stem.entry(x.clone()).or_default().push((2 * i, y.clone()));
            by_stem.entry(y).or_default().push((2 * i + 1, x));
        }
        by_stem
    })
}

/// Finds an antonym pair: a stem on one side whose opposite is on the other, and neither side
/// has both. Also the general prefixes un-/non- (`available`/`unavailable`). Of several pairs,
/// the first in [`ANTONYMS`] order wins; only the stems of `a` are looked up (a handful), not
/// every pair.
fn find_antonym(a: &Analysis, b: &Analysis) -> Option<(String, String)> {
    let by_stem = antonyms_by_stem();
    let found = a
        .stems
        .iter()
        .filter_map(|p| by_stem.get(p).map(|opposites| (p, opposites)))
        .flat_map(|(p, opposites)| opposites.iter().map(move |(rank, q)| (*rank, p, q)))
        .filter(|(_, p, q)| b.stems.contains(q) && !a.stems.contains(q) && !b.stems.contains(p))
        .min_by_key(|(rank, _, _)| *rank);
    if let Some((_, p, q)) = found {
        return Some((p.clone(), q.clone()));
    }
    for (s, o) in [(a, b), (b, a)] {
        for w in &s.stems {
            for pre in ["un", "non"] {
                if let Some(base) = w.strip_prefix(pre)
                    && base.len() >= 4
                    && o.stems.contains(base)
                    && !s.stems.contains(base)
                    && !o.stems.contains(w.as_str())
                {
                    return if std::ptr::eq(s, a) {
                        Some((w.clone(), base.to_string()))
                    } else {
                        Some((base.to_string(), w.clone()))
                    };
                }
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

fn items_match(x: &Item, y: &Item, prefix_min: usize) -> bool {
    if x.kind != y.kind {
        return false;
    }
    if same_str(&x.key, &y.key) {
        return true;
    }
    if x.kind != Kind::Word {
        return false;
    }
    let (s, l) = if x.key.len() <= y.key.len() { (&x.key, &y.key) } else { (&y.key, &x.key) };
    s.len() >= prefix_min && l.as_bytes().first() == s.as_bytes().first() && l.starts_with(s.as_str())
}

/// Greedy one-to-one matching; exact matches first, then prefix matches.
/// Returns, for each item of a, the index of its partner in b.
fn match_items(a: &[Item], b: &[Item], prefix_min: usize) -> (Vec<Option<usize>>, Vec<bool>) {
    let mut pa = vec![None; a.len()];
    let mut used = vec![false; b.len()];
    for pass in 0..2 {
        for (i, x) in a.iter().enumerate() {
            if pa[i].is_some() {
                continue;
            }
            for (j, y) in b.iter().enumerate() {
                if used[j] {
                    continue;
                }
                let ok = if pass == 0 {
                    x.kind == y.kind && same_str(&x.key, &y.key)
                } else {
                    items_match(x, y, prefix_min)
                };
                if ok {
                    pa[i] = Some(j);
                    used[j] = true;
                    break;
                }
            }
        }
    }
    (pa, used)
}

struct Overlap {
    matched: usize,
    only_a: usize,
    only_b: usize,
}

impl Overlap {
    fn jaccard(&self) -> f64 {
        let union = self.matched + self.only_a + self.only_b;
        if union == 0 { 0.0 } else { self.matched as f64 / union as f64 }
    }
    fn substitutions(&self) -> usize {
        self.only_a.min(self.only_b)
    }
}

fn overlap(
    a: &[Item],
    b: &[Item],
    pa: &[Option<usize>],
    used: &[bool],
    skip_a: &dyn Fn(&Item) -> bool,
    skip_b: &dyn Fn(&Item) -> bool,
) -> Overlap {
    let mut o = Overlap { matched: 0, only_a: 0, only_b: 0 };
    for (i, x) in a.iter().enumerate() {
        if skip_a(x) {
            continue;
        }
        match pa[i] {
            Some(j) if !skip_b(&b[j]) => o.matched += 1,
            _ => o.only_a += 1,
        }
    }
    for (j, y) in b.iter().enumerate() {
        if skip_b(y) {
            continue;
        }
        if !used[j] {
            o.only_b += 1;
        } else if let Some(i) = pa.iter().position(|p| *p == Some(j))
            && skip_a(&a[i])
        {
            o.only_b += 1;
        }
    }
    o
}

// ---------------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------------

enum Evidence {
    Negation,
    Value { cat: ValCat, from: String, to: String },
    Antonym { from: String, to: String },
}

/// Classifies one pair. `a` = the incoming memory, `b` = the stored candidate; kinds are the
/// declared memory types ("fact", "preference", "episode", "procedure") when known.
pub fn classify(a: &str, b: &str, kind_a: Option<&str>, kind_b: Option<&str>, cfg: &LexicalConfig) -> Verdict {
    classify_analysed(&analyse(a), &analyse(b), kind_a, kind_b, cfg)
}

/// [`classify`] on texts already analysed.
pub fn classify_analysed(
    ta: &Analysis,
    tb: &Analysis,
    kind_a: Option<&str>,
    kind_b: Option<&str>,
    cfg: &LexicalConfig,
) -> Verdict {
    let (pa, used) = match_items(&ta.items, &tb.items, cfg.prefix_min_len);
    let none = |_: &Item| false;
    let all = overlap(&ta.items, &tb.items, &pa, &used, &none, &none);
    let na = ta.items.len();
    let nb = tb.items.len();
    let short = na.min(nb);
    let long = na.max(nb);
    let jaccard = all.jaccard();
    let contained = short > 0 && all.matched == short;
    let containment = if contained && short >= cfg.min_containment_words {
        1.0
    } else if all.matched >= 1 && long <= cfg.short_fact_words {
        cfg.short_link_score
    } else {
        0.0
    };
    let score = clamp01(jaccard.max(containment));
    let incoming_adds = all.only_a > 0;
    let candidate_adds = all.only_b > 0;
    let kinds_differ = matches!((kind_a, kind_b), (Some(x), Some(y)) if !x.trim().eq_ignore_ascii_case(y.trim()));

    let mut scores: Vec<(&'static str, f64)> = vec![
        ("jaccard", jaccard),
        ("containment", containment),
        ("content_words_a", na as f64),
        ("content_words_b", nb as f64),
        ("agreements", all.matched as f64),
        ("only_a", all.only_a as f64),
        ("only_b", all.only_b as f64),
        ("negations_a", ta.negs as f64),
        ("negations_b", tb.negs as f64),
    ];

    let mut v = Verdict {
        relation: Relation::Unrelated,
        gate: Gate::BelowBand,
        score,
        scores: Vec::new(),
        reason: String::new(),
        incoming_adds,
        candidate_adds,
        near_miss: false,
    };
    let band = |s: f64| {
        if s >= cfg.related_threshold { Relation::Complementary } else { Relation::Unrelated }
    };

    // exact text
    if !ta.norm.is_empty() && ta.norm == tb.norm {
        v.relation = Relation::Identical;
        v.gate = Gate::ExactText;
        v.score = 1.0;
        v.reason = "the texts are the same once case and punctuation are set aside".to_string();
        return finish(v, scores, kinds_differ, kind_a, kind_b);
    }
    if na == 0 || nb == 0 {
        v.relation = Relation::Unrelated;
        v.gate = Gate::NoContent;
        v.reason =
            format!("{} has no content word to compare", if na == 0 { "the incoming memory" } else { "the candidate" });
        return finish(v, scores, kinds_differ, kind_a, kind_b);
    }

    // qualifiers of the same kind that differ: distinct facts
    for cat in [QualCat::Environment, QualCat::Platform, QualCat::Region] {
        let qa: Vec<&Item> = ta.items.iter().filter(|x| x.kind == Kind::Qual(cat)).collect();
        let qb: Vec<&Item> = tb.items.iter().filter(|x| x.kind == Kind::Qual(cat)).collect();
        if qa.is_empty() || qb.is_empty() {
            continue;
        }
        let a_extra = qa.iter().find(|x| !qb.iter().any(|y| same_str(&y.key, &x.key)));
        let b_extra = qb.iter().find(|y| !qa.iter().any(|x| same_str(&x.key, &y.key)));
        if let (Some(x), Some(y)) = (a_extra, b_extra) {
            v.relation = band(score);
            v.gate = Gate::QualifierDiffers;
            v.reason = format!("{} differs: {} vs {}, so these are distinct facts", cat.as_str(), x.shown, y.shown);
            return finish(v, scores, kinds_differ, kind_a, kind_b);
        }
    }

    // collect evidence of change
    let mut evidence: Vec<Evidence> = Vec::new();
    let flips =
        pa.iter().enumerate().filter(|(i, j)| j.is_some_and(|j| ta.items[*i].negated != tb.items[j].negated)).count();
    let any_scope = ta.items.iter().chain(tb.items.iter()).any(|x| x.negated);
    let polarity_differs = flips > 0 || (!any_scope && (ta.negs % 2) != (tb.negs % 2));
    scores.push(("polarity_flips", flips as f64));
    if polarity_differs {
        evidence.push(Evidence::Negation);
    }
    let mut changed_keys: Vec<(Kind, String)> = Vec::new();
    for cat in [
        ValCat::Number,
        ValCat::Time,
        ValCat::Date,
        ValCat::Weekday,
        ValCat::Month,
        ValCat::RelDay,
        ValCat::Frequency,
        ValCat::Quantity,
    ] {
        // compare within the same category and unit
        let mut units: Vec<Unit> = Vec::new();
        for it in ta.items.iter().chain(tb.items.iter()) {
            if let Kind::Value(c, u) = it.kind
                && c == cat
                && !units.contains(&u)
            {
                units.push(u);
            }
        }
        for u in units {
            let k = Kind::Value(cat, u);
            let xa: Vec<&Item> = ta.items.iter().filter(|x| x.kind == k).collect();
            let xb: Vec<&Item> = tb.items.iter().filter(|x| x.kind == k).collect();
            let a_extra: Vec<&&Item> = xa.iter().filter(|x| !xb.iter().any(|y| same_str(&y.key, &x.key))).collect();
            let b_extra: Vec<&&Item> = xb.iter().filter(|y| !xa.iter().any(|x| same_str(&x.key, &y.key))).collect();
            if let (Some(x), Some(y)) = (a_extra.first(), b_extra.first()) {
                evidence.push(Evidence::Value { cat, from: y.shown.clone(), to: x.shown.clone() });
                for z in a_extra.iter().chain(b_extra.iter()) {
                    changed_keys.push((k, z.key.clone()));
                }
            }
        }
    }
    let antonym = find_antonym(ta, tb);
    if let Some((p, q)) = &antonym {
        evidence.push(Evidence::Antonym { from: q.clone(), to: p.clone() });
        changed_keys.push((Kind::Word, p.clone()));
        changed_keys.push((Kind::Word, q.clone()));
    }
    scores.push(("evidence", evidence.len() as f64));

    if !evidence.is_empty() {
        let skip = |x: &Item| changed_keys.iter().any(|(k, key)| *k == x.kind && *key == x.key);
        let rest = overlap(&ta.items, &tb.items, &pa, &used, &skip, &skip);
        let rest_j = rest.jaccard();
        scores.push(("rest_jaccard", rest_j));
        scores.push(("rest_agreements", rest.matched as f64));
        scores.push(("rest_substitutions", rest.substitutions() as f64));
        let words = (na + ta.negs).max(nb + tb.negs);
        let (what, gate) = match &evidence[0] {
            Evidence::Negation => {
                let cue = if ta.neg_cue.is_empty() { &tb.neg_cue } else { &ta.neg_cue };
                (format!("one side negates what the other asserts (\"{cue}\")"), Gate::Negation)
            }
            Evidence::Value { cat, from, to } => {
                (format!("{} differs: {} vs {}", cat.as_str(), to, from), Gate::ValueMismatch)
            }
            Evidence::Antonym { from, to } => (format!("opposites: {to} vs {from}"), Gate::Antonym),
        };
        let max_subs =
            if gate == Gate::Negation { cfg.max_negation_substitutions } else { cfg.max_value_substitutions };
        // the negated clause must be about what the other side says
        let scope_ok = if gate == Gate::Negation {
            // negated items on either side, and how many of them the other side mentions
            let mut scope = 0usize;
            let mut hit = 0usize;
            for (i, x) in ta.items.iter().enumerate() {
                if x.negated {
                    scope += 1;
                    hit += usize::from(pa[i].is_some_and(|j| !tb.items[j].negated));
                }
            }
            for (j, y) in tb.items.iter().enumerate() {
                if y.negated {
                    scope += 1;
                    hit += usize::from(pa.iter().enumerate().any(|(i, p)| *p == Some(j) && !ta.items[i].negated));
                }
            }
            let share = if scope == 0 { 1.0 } else { hit as f64 / scope as f64 };
            scores.push(("negation_scope_match", share));
            share >= cfg.min_negation_scope_match
        } else {
            true
        };
        if band(score) == Relation::Unrelated
            && (evidence.len() > 1 || rest_j < cfg.min_conflict_jaccard || rest.matched < cfg.min_agreements)
        {
            v.relation = Relation::Unrelated;
            v.gate = Gate::BelowBand;
            v.reason = format!(
                "similarity {score:.2} is below the related band ({:.2}); {what}, but little else is shared",
                cfg.related_threshold
            );
        } else if evidence.len() > 1 {
            v.relation = band(score);
            v.gate = Gate::RestDiffers;
            v.reason = format!("{what}, but more than one thing changed, so these read as different facts");
        } else if words < cfg.min_conflict_words || rest.matched < cfg.min_agreements {
            v.relation = band(score);
            v.gate = Gate::TooFewWords;
            v.reason =
                format!("{what}, but only {} other word(s) agree, too few to claim a contradiction", rest.matched);
        } else if rest_j < cfg.min_conflict_jaccard || rest.substitutions() > max_subs || !scope_ok {
            v.relation = band(score);
            v.gate = Gate::RestDiffers;
            v.reason = format!("{what}, but the rest of the two facts differs too (another subject or action)");
        } else {
            v.relation = Relation::Contradictory;
            v.gate = gate;
            v.reason = format!("{what} while the rest agrees");
        }
        return finish(v, scores, kinds_differ, kind_a, kind_b);
    }

    // how the shorter side sits inside the longer: extra words appended after everything they
    // share (a condition, a time, a place: enrichment) or inserted among them (a modifier that
    // narrows the subject or the action)
    let (longer, shared): (&Analysis, Vec<bool>) =
        if na >= nb { (ta, pa.iter().map(|p| p.is_some()).collect()) } else { (tb, used.clone()) };
    let enrichment = enrichment_shape(longer, &shared);
    let inserted = usize::from(!enrichment);
    // shared words in a different order: roles swapped ("A follows B" / "B follows A"),
    // unless one side is passive ("by")
    let mut inversions = 0usize;
    {
        let seq: Vec<usize> = pa
            .iter()
            .enumerate()
            .filter(|(i, p)| p.is_some() && matches!(ta.items[*i].kind, Kind::Word | Kind::Ident))
            .filter_map(|(_, p)| *p)
            .collect();
        // a subject/object swap: the first and last shared words trade places
        if seq.len() >= 3 {
            let max = seq.iter().copied().max().unwrap_or(0);
            let min = seq.iter().copied().min().unwrap_or(0);
            if seq[0] == max && seq[seq.len() - 1] == min {
                inversions = 1;
            }
        }
    }
    let passive = ta.stems.contains("by") || tb.stems.contains("by");
    scores.push(("inserted", inserted as f64));
    scores.push(("inversions", inversions as f64));
    let one_sided_qualifier = ta.items.iter().chain(tb.items.iter()).find(|x| {
        matches!(x.kind, Kind::Qual(_))
            && ta.items.iter().chain(tb.items.iter()).filter(|y| y.kind == x.kind && y.key == x.key).count() == 1
    });
    if score >= cfg.merge_threshold
        && let Some(q) = one_sided_qualifier
    {
        // a qualifier on one side only: a narrower or wider fact, never the same one
        v.relation = Relation::Complementary;
        v.gate = Gate::QualifierAdded;
        v.reason = format!("only one side is qualified by \"{}\", so the facts are not the same", q.shown);
    } else if score >= cfg.merge_threshold && jaccard < cfg.merge_threshold && inserted > 0 {
        v.relation = Relation::Complementary;
        v.gate = Gate::Narrower;
        v.reason = "one side adds words that narrow what the fact is about (a modifier or a phrase), not a separable condition, time or clause".to_string();
    } else if score >= cfg.merge_threshold && inversions > 0 && !passive {
        v.relation = Relation::Complementary;
        v.gate = Gate::OrderDiffers;
        v.reason = "the shared words come in a different order, so the roles may differ".to_string();
    } else if score >= cfg.merge_threshold {
        v.relation = Relation::Identical;
        v.gate = Gate::MergeBand;
        v.reason = match (incoming_adds, candidate_adds) {
            (false, false) => format!("the same fact reworded (similarity {score:.2})"),
            (true, false) => {
                format!("the incoming memory restates the candidate and adds detail (similarity {score:.2})")
            }
            (false, true) => format!("the incoming memory restates part of the candidate (similarity {score:.2})"),
            (true, true) => format!("the same fact reworded (similarity {score:.2})"),
        };
    } else if score >= cfg.related_threshold {
        v.relation = Relation::Complementary;
        v.gate = Gate::RelatedBand;
        v.reason = format!("related (similarity {score:.2}) with nothing that says they disagree");
    } else {
        v.relation = Relation::Unrelated;
        v.gate = Gate::BelowBand;
        v.reason = format!("similarity {score:.2} is below the related band ({:.2})", cfg.related_threshold);
    }
    finish(v, scores, kinds_differ, kind_a, kind_b)
}

/// Words that open a separable condition, time or added clause.
fn connector(w: &str) -> bool {
    matches!(
        w,
        "after"
            | "before"
            | "when"
            | "whenever"
            | "if"
            | "unless"
            | "once"
            | "until"
            | "till"
            | "because"
            | "since"
            | "while"
            | "and"
            | "but"
            | "except"
            | "so"
            | "then"
            | "whereas"
            | "provided"
            | "as"
            | "during"
            | "every"
            | "each"
            | "on"
            | "at"
            | "by"
    )
}

/// An enrichment adds, after everything the two facts share, a separable part: a clause opened
/// by a connector or punctuation, or value tokens (a time, a date, a number). Words inserted
/// among the shared ones, or a bare trailing phrase, narrow the fact instead.
fn enrichment_shape(longer: &Analysis, shared: &[bool]) -> bool {
    let Some(last) = shared.iter().rposition(|s| *s) else {
        return false;
    };
    let last_raw = longer.items[last].raw_pos;
    let mut first_extra: Option<usize> = None;
    for (k, it) in longer.items.iter().enumerate() {
        if shared[k] || matches!(it.kind, Kind::Value(..)) {
            continue;
        }
        if k < last {
            return false;
        }
        first_extra = Some(first_extra.map_or(it.raw_pos, |f: usize| f.min(it.raw_pos)));
    }
    let Some(first) = first_extra else {
        return true;
    };
    // something between the last shared token and the first extra one must open a new part
    (last_raw..first).any(|r| longer.raw.get(r).is_some_and(|t| t.boundary || (r > last_raw && t.connector)))
}

fn clamp01(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

fn finish(
    mut v: Verdict,
    scores: Vec<(&'static str, f64)>,
    kinds_differ: bool,
    kind_a: Option<&str>,
    kind_b: Option<&str>,
) -> Verdict {
    v.score = clamp01(v.score);
    v.scores = scores.into_iter().map(|(k, x)| (k, if x.is_finite() { x } else { 0.0 })).collect();
    v.scores.insert(0, ("score", v.score));
    if kinds_differ && v.relation != Relation::Unrelated {
        let was = v.relation;
        v.near_miss = true;
        v.relation = Relation::Complementary;
        v.gate = Gate::KindMismatch;
        v.reason = format!(
            "would be {} ({}), but the kinds differ ({} vs {}), so only a near miss is recorded",
            was.as_str(),
            v.reason,
            kind_a.unwrap_or(""),
            kind_b.unwrap_or("")
        );
    }
    v
}

/// Terms for an inverted index used to find candidates: any two texts that the classifier could
/// call related share at least one term. Content words give their stem and their first four
/// characters (so prefix matches meet); value tokens, identifiers and qualifiers are kept whole.
pub fn index_terms(text: &str) -> Vec<String> {
    index_terms_of(&analyse(text))
}

/// [`index_terms`] of a text already analysed.
pub fn index_terms_of(an: &Analysis) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A handful of terms: a scan beats hashing.
    let add = |s: String, out: &mut Vec<String>| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for it in &an.items {
        match it.kind {
            Kind::Word => {
                let p: String = it.key.chars().take(4).collect();
                if p != it.key {
                    add(p, &mut out);
                }
                add(it.key.clone(), &mut out);
            }
            Kind::Ident => add(it.key.clone(), &mut out),
            Kind::Value(c, u) => add(
                if u.0.is_empty() {
                    format!("{}:{}", c.as_str(), it.key)
                } else {
                    format!("{}:{}{}", c.as_str(), it.key, u.0)
                },
                &mut out,
            ),
            Kind::Qual(c) => add(format!("{}:{}", c.as_str(), it.key), &mut out),
        }
    }
    out.shrink_to_fit();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(a: &str, b: &str) -> Verdict {
        classify(a, b, None, None, &LexicalConfig::default())
    }

    proptest::proptest! {
        /// `same_str` is string equality (short strings over a small alphabet, so that equal
        /// lengths and first bytes, where it falls through to the full comparison, are common).
        #[test]
        fn same_str_is_equality(a in "[ab]{0,3}", b in "[ab]{0,3}") {
            proptest::prop_assert_eq!(same_str(&a, &b), a == b);
        }
    }

    fn rel(a: &str, b: &str) -> Relation {
        c(a, b).relation
    }

    #[track_caller]
    fn assert_rel(a: &str, b: &str, want: Relation) {
        let v = c(a, b);
        assert_eq!(v.relation, want, "{a:?} vs {b:?}: gate {} ({})", v.gate.as_str(), v.reason);
        let w = c(b, a);
        assert_eq!(w.relation, want, "reversed {b:?} vs {a:?}: gate {} ({})", w.gate.as_str(), w.reason);
    }

    #[test]
    fn alice_guitar_is_not_a_contradiction() {
        let r = rel("Alice started guitar five years ago", "Alice started transitioning three years ago");
        assert_ne!(r, Relation::Contradictory);
        assert_ne!(r, Relation::Identical);
    }

    #[test]
    fn swimming_painting_is_not_a_contradiction() {
        let r = rel("went swimming after the call", "finished a painting before the call");
        assert_ne!(r, Relation::Contradictory);
        assert_ne!(r, Relation::Identical);
    }

    #[test]
    fn staging_and_production_schedules_are_distinct() {
        let v = c(
            "The billing service deploys to staging on Tuesdays",
            "The billing service deploys to production on Thursdays",
        );
        assert!(matches!(v.relation, Relation::Complementary | Relation::Unrelated));
        assert_eq!(v.gate, Gate::QualifierDiffers);
        let v = c(
            "The billing service deploys to staging on Tuesdays",
            "The billing service deploys to production on Tuesdays",
        );
        assert_eq!(v.gate, Gate::QualifierDiffers);
        assert_ne!(v.relation, Relation::Identical);
    }

    #[test]
    fn dropped_qualifier_is_never_identical() {
        let v = c("The billing service deploys on Tuesdays", "The billing service deploys to staging on Tuesdays");
        assert_ne!(v.relation, Relation::Identical, "{}", v.reason);
        assert_eq!(v.gate, Gate::QualifierAdded);
    }

    #[test]
    fn postgres_versions_contradict() {
        let v = c("The billing service runs on Postgres 17", "The billing service runs on Postgres 16");
        assert_eq!(v.relation, Relation::Contradictory, "{}", v.reason);
        assert_eq!(v.gate, Gate::ValueMismatch);
        assert!(v.reason.contains("17") && v.reason.contains("16"), "{}", v.reason);
    }

    #[test]
    fn weekdays_contradict() {
        assert_rel(
            "The billing team deploys to staging on Tuesdays",
            "The billing team deploys to staging on Thursdays",
            Relation::Contradictory,
        );
        assert_eq!(c("Billing deploys on Tuesday", "Billing deploys on Thursday").gate, Gate::ValueMismatch);
    }

    #[test]
    fn deploy_and_do_not_deploy_contradict() {
        let v = c("Do not deploy on Tuesday", "Deploy on Tuesday");
        assert_eq!(v.relation, Relation::Contradictory, "{}", v.reason);
        assert_eq!(v.gate, Gate::Negation);
        assert_rel("We deploy billing on Tuesday", "We don't deploy billing on Tuesday", Relation::Contradictory);
    }

    #[test]
    fn enrichment_is_identical_with_incoming_adds() {
        let v = c("deploy Tuesday after integration tests pass", "deploy Tuesday");
        assert_eq!(v.relation, Relation::Identical, "{}", v.reason);
        assert!(v.incoming_adds);
        assert!(!v.candidate_adds);
        let w = c("deploy Tuesday", "deploy Tuesday after integration tests pass");
        assert_eq!(w.relation, Relation::Identical);
        assert!(w.candidate_adds && !w.incoming_adds);
    }

    #[test]
    fn paraphrase_is_identical() {
        assert_rel(
            "Priya prefers dark mode in every editor",
            "Priya prefers dark mode in all her editors",
            Relation::Identical,
        );
        // one content word each side: related, not merged (containment needs two words)
        assert_rel("I use Postgres", "Postgres is the database", Relation::Complementary);
        assert_rel(
            "Postgres is what the billing project uses",
            "the billing project uses PostgreSQL",
            Relation::Identical,
        );
    }

    #[test]
    fn negated_different_object_is_not_a_contradiction() {
        assert_ne!(rel("Bob does not drink coffee", "Bob drinks tea"), Relation::Contradictory);
        assert_ne!(rel("Do not deploy on Fridays", "Deploy billing on Tuesdays"), Relation::Contradictory);
    }

    #[test]
    fn narrower_negation_is_not_a_contradiction() {
        // "no deploys on Fridays" does not deny "we deploy"
        assert_ne!(
            rel("We never deploy the billing service on Fridays", "We deploy the billing service"),
            Relation::Contradictory
        );
    }

    #[test]
    fn antonym_with_same_rest_contradicts() {
        let v = c(
            "The feature flag for partial refunds is enabled in the admin panel",
            "The feature flag for partial refunds is disabled in the admin panel",
        );
        assert_eq!(v.relation, Relation::Contradictory, "{}", v.reason);
        assert_eq!(v.gate, Gate::Antonym);
        assert_rel("Marco likes long status meetings", "Marco dislikes long status meetings", Relation::Contradictory);
    }

    #[test]
    fn antonym_with_different_rest_is_not_a_contradiction() {
        assert_ne!(
            rel("Run migrations before the deploy", "Run smoke tests after the deploy"),
            Relation::Contradictory
        );
    }

    #[test]
    fn times_and_units_are_values() {
        assert_rel(
            "The invoice job runs nightly at 2am UTC",
            "The invoice job runs nightly at 02:00 UTC",
            Relation::Identical,
        );
        assert_rel(
            "The invoice job runs nightly at 2am UTC",
            "The invoice job runs nightly at 3am UTC",
            Relation::Contradictory,
        );
        assert_rel(
            "The webhook worker timeout is 30 seconds",
            "The webhook worker timeout is 10 seconds",
            Relation::Contradictory,
        );
        assert_rel(
            "The build cache keeps objects for 7 days",
            "The build cache keeps objects for 7 days",
            Relation::Identical,
        );
    }

    #[test]
    fn frequency_change_contradicts() {
        assert_rel(
            "The fraud model is retrained weekly on the full history",
            "The fraud model is retrained monthly on the full history",
            Relation::Contradictory,
        );
    }

    #[test]
    fn added_value_is_enrichment_not_contradiction() {
        let v = c("Deploy the billing service every Tuesday at 10:00", "Deploy the billing service every Tuesday");
        assert_eq!(v.relation, Relation::Identical, "{}", v.reason);
        assert!(v.incoming_adds);
    }

    #[test]
    fn two_values_changing_is_a_different_fact() {
        assert_ne!(rel("Standup is at 9:45 on Mondays", "Retro is at 15:00 on Thursdays"), Relation::Contradictory);
        assert_ne!(rel("The sync starts at 9am on Monday", "The sync stops at 5pm on Monday"), Relation::Contradictory);
    }

    #[test]
    fn identifiers_and_hostnames_are_kept_whole() {
        let t = index_terms("The registry moved to registry.int.example.com on us-east-1, see PAY-1423");
        assert!(t.iter().any(|x| x == "registry.int.example.com"), "{t:?}");
        assert!(t.iter().any(|x| x == "region:us-east-1"), "{t:?}");
        assert!(t.iter().any(|x| x == "PAY-1423" || x == "pay-1423"), "{t:?}");
        assert_ne!(
            rel("The cache host is cache01.prod.example.com", "The cache host is cache02.prod.example.com"),
            Relation::Identical
        );
    }

    #[test]
    fn case_sensitive_identifiers() {
        assert_ne!(
            rel("The config key is maxRetries in the client", "The config key is MaxRetries in the client"),
            Relation::Identical
        );
    }

    #[test]
    fn unrelated_facts() {
        let v = c("Hana has a dog called Mochi", "The warehouse keeps raw events for 13 months");
        assert_eq!(v.relation, Relation::Unrelated);
        assert_eq!(v.gate, Gate::BelowBand);
    }

    #[test]
    fn kind_mismatch_is_a_near_miss() {
        let cfg = LexicalConfig::default();
        let v = classify("Do not deploy on Tuesday", "Deploy on Tuesday", Some("procedure"), Some("preference"), &cfg);
        assert_eq!(v.relation, Relation::Complementary);
        assert_eq!(v.gate, Gate::KindMismatch);
        assert!(v.near_miss);
        let v = classify("Priya prefers dark mode", "Priya prefers dark mode", Some("fact"), Some("preference"), &cfg);
        assert_eq!(v.relation, Relation::Complementary);
        assert!(v.near_miss);
        let v = classify(
            "Hana has a dog called Mochi",
            "The warehouse keeps raw events for 13 months",
            Some("fact"),
            Some("episode"),
            &cfg,
        );
        assert_eq!(v.relation, Relation::Unrelated);
        assert!(!v.near_miss);
        let v = classify("Do not deploy on Tuesday", "Deploy on Tuesday", Some("procedure"), Some("Procedure"), &cfg);
        assert_eq!(v.relation, Relation::Contradictory);
    }

    #[test]
    fn two_word_facts_cannot_contradict_on_one_shared_word() {
        assert_ne!(rel("Deploy Tuesday", "Deploy Thursday"), Relation::Contradictory);
    }

    #[test]
    fn role_swap_is_not_identical() {
        assert_ne!(
            rel("The refunds service calls the billing service", "The billing service calls the refunds service"),
            Relation::Identical
        );
        assert_ne!(rel("Marco reports to Sofia", "Sofia reports to Marco"), Relation::Identical);
    }

    #[test]
    fn narrowing_modifier_is_not_identical() {
        let v = c("Priya prefers dark mode", "Priya strongly prefers dark mode");
        assert_ne!(v.relation, Relation::Identical, "{}", v.reason);
    }

    #[test]
    fn platform_qualifier_keeps_facts_distinct() {
        let v = c("The app requires version 16 or later on iOS", "The app requires version 10 or later on Android");
        assert_eq!(v.gate, Gate::QualifierDiffers);
    }

    #[test]
    fn exact_text_and_empty() {
        assert_eq!(c("Deploy on Tuesday.", "deploy on tuesday").gate, Gate::ExactText);
        let v = c("", "Deploy on Tuesday");
        assert_eq!(v.relation, Relation::Unrelated);
        assert_eq!(v.gate, Gate::NoContent);
        assert!(v.score.is_finite());
    }

    #[test]
    fn dates_months_and_numbers() {
        assert_rel(
            "Lea joined the payments team in September 2023",
            "Lea joined the payments team in October 2023",
            Relation::Contradictory,
        );
        assert_rel(
            "The outage happened on 2024-03-12 in the invoice job",
            "The outage happened on 2024-03-13 in the invoice job",
            Relation::Contradictory,
        );
        assert_rel("The payments team has five engineers", "The payments team has 5 engineers", Relation::Identical);
        assert_rel(
            "The payments team has five engineers",
            "The payments team has six engineers",
            Relation::Contradictory,
        );
    }

    #[test]
    fn scores_are_finite_and_bounded() {
        for (a, b) in [("", ""), ("!!!", "???"), ("not", "no"), ("1 2 3", "3 2 1"), ("Ünïcödé wörds ok", "ünïcödé")]
        {
            let v = c(a, b);
            assert!(v.score.is_finite() && (0.0..=1.0).contains(&v.score), "{a:?} {b:?} {}", v.score);
            assert!(v.scores.iter().all(|(_, x)| x.is_finite()));
            assert!(!v.reason.is_empty());
        }
    }

    #[test]
    fn index_terms_meet_for_related_pairs() {
        let pairs = [
            ("I use Postgres", "Database is PostgreSQL"),
            ("Deploy on Tuesday", "Do not deploy on Tuesday"),
            ("The billing service runs on Postgres 17", "The billing service runs on Postgres 16"),
            ("migrate the ledger", "the ledger was migrated"),
        ];
        for (a, b) in pairs {
            let ta = index_terms(a);
            let tb = index_terms(b);
            assert!(ta.iter().any(|t| tb.contains(t)), "{a:?} {b:?} {ta:?} {tb:?}");
        }
    }

    /// Event format 2 writes a classification's gate and score and threshold names as one-byte
    /// codes from a frozen list; a name missing from it still works (written as a string) but
    /// costs its bytes in every event, so each name this classifier records must be listed.
    #[test]
    fn every_recorded_name_has_a_format_2_code() {
        fn listed(name: &str) -> bool {
            memledger_schemas::codec::NAMES_V2.contains(&name)
        }
        for gate in Gate::ALL {
            assert!(listed(gate.as_str()), "gate {}", gate.as_str());
        }
        for (name, _) in crate::classify::recorded_thresholds(&crate::EngineConfig::default()) {
            assert!(listed(&name), "threshold {name}");
        }
        let pairs = [
            ("The billing team deploys to staging on Tuesdays", "The billing team deploys to staging on Thursdays"),
            ("We deploy billing on Tuesday", "We don't deploy billing on Tuesday"),
            ("Marco likes long status meetings", "Marco dislikes long status meetings"),
            ("The refunds service calls the billing service", "The billing service calls the refunds service"),
            ("The cache host is cache01.prod.example.com", "The cache host is cache02.prod.example.com"),
            ("Priya prefers dark mode in every editor", "Priya prefers dark mode in all her editors"),
            ("We never deploy the billing service on Fridays", "We deploy the billing service"),
            ("The payments team has five engineers", "The payments team has six engineers"),
            ("Deploy Tuesday", "Deploy Thursday"),
            ("The API runs in production in eu-west-1", "The API runs in staging in eu-west-1"),
            ("went swimming after the call", "finished a painting before the call"),
            ("Postgres", "Postgres"),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for (a, b) in pairs {
            for v in [c(a, b), c(b, a)] {
                seen.insert(v.gate.as_str());
                for (name, _) in &v.scores {
                    assert!(listed(name), "score {name} ({a:?} vs {b:?})");
                }
            }
        }
        assert!(seen.len() >= 6, "the pairs reach several gates: {seen:?}");
    }

    #[test]
    fn recorded_thresholds_and_gate_names() {
        let cfg = LexicalConfig::default();
        let r = cfg.recorded();
        for name in [
            "merge_threshold",
            "related_threshold",
            "min_conflict_words",
            "min_agreements",
            "min_conflict_jaccard",
            "prefix_min_len",
        ] {
            assert!(r.iter().any(|(k, _)| *k == name), "{name}");
        }
        assert_eq!(r.iter().find(|(k, _)| *k == "merge_threshold").map(|x| x.1), Some(0.85));
        let names: std::collections::HashSet<&str> = Gate::ALL.iter().map(|g| g.as_str()).collect();
        assert_eq!(names.len(), Gate::ALL.len());
        assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_')));
    }

    #[test]
    fn in_staging_restatement_is_identical() {
        assert_rel(
            "Deploy billing to staging on Tuesday once integration tests are green",
            "Deploy billing to staging on Tuesdays once the integration tests are green",
            Relation::Identical,
        );
    }

    #[test]
    fn consistent_notes_sharing_vocabulary() {
        assert_ne!(
            rel(
                "On Tuesday the staging deploy went out at 14:00",
                "Deploy billing to staging on Tuesdays after the integration tests pass"
            ),
            Relation::Contradictory
        );
        assert_ne!(
            rel("I don't drink coffee after 4pm", "I drink green tea in the morning and coffee after lunch"),
            Relation::Contradictory
        );
        assert_ne!(
            rel("Refunds above 500 EUR need a second approver", "Refunds below 500 EUR need only one approver"),
            Relation::Contradictory
        );
    }

    /// The antonym lookup by stem finds what trying every pair in order finds: the same pair,
    /// in the same direction, or none.
    #[test]
    fn antonym_lookup_agrees_with_trying_every_pair() {
        use proptest::prelude::*;
        let words: Vec<&str> =
            ANTONYMS.iter().flat_map(|(x, y)| [*x, *y]).chain(["deploy", "staging", "the", "unusual"]).collect();
        let pick = proptest::sample::subsequence(words.clone(), 0..8);
        proptest!(ProptestConfig::with_cases(2_000), |(xs in pick.clone(), ys in pick)| {
            let (a, b) = (analyse(&xs.join(" ")), analyse(&ys.join(" ")));
            let every_pair = ANTONYMS.iter().map(|(x, y)| (stem(x), stem(y))).find_map(|(x, y)| {
                [(x.clone(), y.clone()), (y, x)].into_iter().find(|(p, q)| {
                    a.stems.contains(p) && b.stems.contains(q) && !a.stems.contains(q) && !b.stems.contains(p)
                })
            });
            let found = find_antonym(&a, &b);
            match every_pair {
                Some(pair) => prop_assert_eq!(found, Some(pair)),
                // Without a listed pair, only the un-/non- rule may answer.
                None => prop_assert!(found.as_ref().is_none_or(|(p, q)| p.starts_with("un") || q.starts_with("un")
                    || p.starts_with("non") || q.starts_with("non")), "{found:?}"),
            }
        });
    }
}
