//! How a memory stands to what was said before, in its own words: that something changed ("now",
//! "moved to", "raised to", "took over", "correction:"), what it names as the old value ("from X",
//! "instead of X", "X, not Y"), what it says ended ("dropped X", "X was cancelled", "X retired"),
//! or that it holds beside another fact of its kind ("also"), only once ("today") or only as a
//! plan ("considering"). The words are data (`lexicon/cues.tsv`); a text is read once
//! ([`read`]) and [`super::identity`] weighs what it finds against a stored memory.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::lexicon::{Lexicon, WordClass, lexicon};
use super::stem::stem;
use super::tokens::{RawTok, written};

const CUES: &str = include_str!("../lexicon/cues.tsv");

/// A class of `cues.tsv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CueKind {
    Now,
    Again,
    Change,
    /// a verb of moving something in time, read as a change before a time only.
    Schedule,
    Ended,
    Raised,
    Lowered,
    Handover,
    Correction,
    Since,
    Instead,
    Beside,
    Tentative,
    Once,
}

impl CueKind {
    fn named(name: &str) -> Option<CueKind> {
        Some(match name {
            "now" => CueKind::Now,
            "again" => CueKind::Again,
            "change" => CueKind::Change,
            "schedule" => CueKind::Schedule,
            "ended" => CueKind::Ended,
            "raised" => CueKind::Raised,
            "lowered" => CueKind::Lowered,
            "handover" => CueKind::Handover,
            "correction" => CueKind::Correction,
            "since" => CueKind::Since,
            "instead" => CueKind::Instead,
            "beside" => CueKind::Beside,
            "tentative" => CueKind::Tentative,
            "once" => CueKind::Once,
            _ => return None,
        })
    }

    /// Whether the cue says that what held before holds no more.
    pub(super) fn of_change(self) -> bool {
        !matches!(self, CueKind::Beside | CueKind::Tentative | CueKind::Once)
    }

    /// A verb: read as a cue only where it is one ("the move", "a cut" are nouns).
    fn verb(self) -> bool {
        matches!(self, CueKind::Change | CueKind::Schedule | CueKind::Ended | CueKind::Raised | CueKind::Lowered)
    }
}

/// `cues.tsv` by first word: a verb's phrases by the stems of their words (one line covers
/// "drop", "dropped", "dropping"), the other classes' by their words as written ("plan to" is
/// not "a free plan", "once again" not "one").
struct Table {
    by_first: FxHashMap<String, Vec<(Vec<String>, CueKind)>>,
}

/// How a phrase of `kind` is compared: its words' stems for a verb, else the words.
fn compared(kind: CueKind, w: &str) -> String {
    if kind.verb() || kind == CueKind::Handover { word_key(w) } else { w.to_string() }
}

fn word_key(w: &str) -> String {
    stem(lexicon().base(w))
}

fn table() -> &'static Table {
    static CELL: OnceLock<Table> = OnceLock::new();
    CELL.get_or_init(|| {
        let mut by_first: FxHashMap<String, Vec<(Vec<String>, CueKind)>> = FxHashMap::default();
        for line in CUES.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let Some((phrase, class)) = line.split_once('\t') else { continue };
            let Some(kind) = CueKind::named(class) else { continue };
            let words: Vec<String> = phrase.split(' ').map(|w| compared(kind, w)).collect();
            by_first.entry(words[0].clone()).or_default().push((words, kind));
        }
        Table { by_first }
    })
}

/// The number of lines of `cues.tsv` that load (for the lexicon's test).
#[cfg(test)]
pub(super) fn cue_count() -> usize {
    table().by_first.values().map(Vec::len).sum()
}

/// One cue found in a text.
#[derive(Clone, Debug)]
pub(super) struct Cue {
    pub(super) kind: CueKind,
    /// its first raw token.
    pub(super) at: usize,
    /// as written, for reasons.
    pub(super) shown: String,
    /// its length in raw tokens.
    pub(super) len: usize,
}

/// What a text says of how it stands to what was said before; positions are raw tokens.
#[derive(Clone, Debug, Default)]
pub(super) struct Cues {
    /// every cue, in order.
    pub(super) found: Vec<Cue>,
    /// the old value the text names ("from X", "instead of X", "X, not Y": Y).
    pub(super) old: Vec<usize>,
    /// what the text says holds no more ("dropped X", "X was cancelled", "no longer VERB X").
    pub(super) ended: Vec<usize>,
    /// the text renames something: the old name it gives is the whole of the old value.
    pub(super) renamed: bool,
}

impl Cues {
    pub(super) fn has(&self, kind: CueKind) -> bool {
        self.found.iter().any(|c| c.kind == kind)
    }

    /// Whether raw token `at` is a word of a cue ("migration" in "since the migration").
    pub(super) fn spans(&self, at: usize) -> bool {
        self.found.iter().any(|c| (c.at..c.at + c.len).contains(&at))
    }

    /// The first cue of change, for reasons.
    pub(super) fn change(&self) -> Option<&Cue> {
        self.found.iter().find(|c| c.kind.of_change())
    }
}

/// Words before a verb that make it a plan, a wish, an obligation or a condition, not a change.
const NOT_DONE: [&str; 12] =
    ["to", "will", "would", "might", "may", "could", "should", "can", "must", "if", "whether", "shall"];

/// Whether a verb of change whose object starts at `from` names where it went: "to", "as",
/// "into", "from", "off", "over", "back", "away" within the next six words of its sentence.
fn directed(raw: &[RawTok], from: usize) -> bool {
    const PARTICLES: [&str; 8] = ["to", "as", "into", "from", "off", "over", "back", "away"];
    for r in raw.iter().skip(from).take(6) {
        if PARTICLES.contains(&r.lower.as_str()) {
            return true;
        }
        if r.sentence_end {
            break;
        }
    }
    false
}

/// Whether a verb of moving in time whose object starts at `from` moves it to a time: "to",
/// "until", "back", "out" or "forward" then, within three words, a time.
fn scheduled(raw: &[RawTok], from: usize) -> bool {
    let Some(to) = (from..raw.len().min(from + 5)).find(|&k| matches!(raw[k].lower.as_str(), "to" | "until" | "till"))
    else {
        return false;
    };
    (to + 1..raw.len().min(to + 4)).any(|k| time_word(&raw[k].lower))
}

/// A word that starts a time: a weekday, a month, a number, "next", "this", "tomorrow"…
fn time_word(w: &str) -> bool {
    const WORDS: [&str; 12] = [
        "next",
        "this",
        "tomorrow",
        "today",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "q1",
    ];
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    WORDS.contains(&w)
        || MONTHS.contains(&w)
        || matches!(
            w,
            "q2" | "q3"
                | "q4"
                | "in"
                | "on"
                | "from"
                | "jan"
                | "feb"
                | "mar"
                | "apr"
                | "jun"
                | "jul"
                | "aug"
                | "sep"
                | "sept"
                | "oct"
                | "nov"
                | "dec"
        )
        || w.starts_with(|c: char| c.is_ascii_digit())
}

/// The stems of the verbs of naming anew, whose object (or passive subject) is the old name.
const RENAMES: [&str; 3] = ["renam", "rebrand", "retitl"];

/// Words after which a verb of `cues.tsv` is a noun ("the move", "a cut", "on leave").
const DETERMINERS: [&str; 20] = [
    "a", "an", "the", "this", "that", "these", "those", "my", "our", "your", "his", "her", "their", "its", "some",
    "any", "another", "every", "each", "on",
];

/// Words that end the phrase a cue governs.
const PHRASE_STOPS: [&str; 16] = [
    "in", "at", "on", "after", "before", "because", "since", "when", "until", "to", "by", "during", "due", "so", "and",
    "as",
];

/// Content positions of the phrase that starts at `from`: up to a boundary, a clause word or a
/// word of [`PHRASE_STOPS`], at most five tokens; function words and adverbs in -ly left out.
fn phrase(raw: &[RawTok], from: usize, end: usize) -> Vec<usize> {
    let lex = lexicon();
    let mut out = Vec::new();
    let mut k = from;
    while k < end && k < from + 5 {
        let w = raw[k].lower.as_str();
        if k > from && (lex.is(w, WordClass::CLAUSE) || PHRASE_STOPS.contains(&w)) {
            break;
        }
        // (a word capitalised inside a sentence is a name whatever else it is: "end of May")
        let name = k > 0 && !raw[k - 1].sentence_end && w != "i" && raw[k].text.starts_with(char::is_uppercase);
        if name || carries_content(lex, w) {
            out.push(k);
        }
        if raw[k].boundary {
            break;
        }
        k += 1;
    }
    out
}

/// Words that end a noun phrase: the old value a text names is one ("rather than Stripe for
/// billing": Stripe).
const NOUN_PHRASE_STOPS: [&str; 22] = [
    "for", "with", "in", "on", "at", "to", "by", "from", "of", "after", "before", "because", "since", "during", "per",
    "via", "through", "as", "and", "but", "so", "when",
];

/// Whether "would rather" (or "I'd rather", read "i rather") stands before `than` at `at` in its
/// clause, with words between ("would rather we upload them than email PDFs"); a comparative's
/// "than" is not its ("more than $500").
fn would_rather_before(raw: &[RawTok], at: usize) -> bool {
    if at == 0 || COMPARATIVES.contains(&raw[at - 1].lower.as_str()) {
        return false;
    }
    (1..at).rev().take_while(|&k| !raw[k].boundary).any(|k| {
        raw[k].lower == "rather"
            && k + 1 < at
            && matches!(raw[k - 1].lower.as_str(), "would" | "i" | "we" | "you" | "he" | "she" | "they")
    })
}

/// Words whose "than" compares ("more than", "other than").
const COMPARATIVES: [&str; 8] = ["more", "less", "fewer", "other", "better", "worse", "longer", "shorter"];

/// Content positions of the noun phrase that starts at `from` (at most four tokens).
fn noun_phrase(raw: &[RawTok], from: usize, end: usize) -> Vec<usize> {
    let stop = (from..end.min(from + 4))
        .find(|&k| k > from && NOUN_PHRASE_STOPS.contains(&raw[k].lower.as_str()))
        .unwrap_or(end.min(from + 4));
    let stop = (from..stop).find(|&k| raw[k].boundary).map_or(stop, |k| k + 1);
    phrase(raw, from, stop)
}

/// A noun phrase with what it is a part of ("end of May", "the top of the list").
fn noun_phrase_of(raw: &[RawTok], from: usize, end: usize) -> Vec<usize> {
    let mut out = noun_phrase(raw, from, end);
    if let Some(&last) = out.last()
        && !raw[last].boundary
        && raw.get(last + 1).is_some_and(|r| r.lower == "of")
    {
        out.extend(noun_phrase(raw, last + 2, end));
    }
    out
}

/// Whether the words at `at` call something the former one: "the one before", "the previous
/// one", "the old one".
fn former(raw: &[RawTok], at: usize) -> bool {
    const FORMER: [[&str; 3]; 4] =
        [["the", "one", "before"], ["the", "previous", "one"], ["the", "old", "one"], ["the", "old", "value"]];
    FORMER.iter().any(|words| {
        raw.len() >= at + words.len()
            && words.iter().enumerate().all(|(n, w)| raw[at + n].lower == *w)
            && !raw[at..at + words.len() - 1].iter().any(|r| r.boundary)
    })
}

/// Content positions from the start of the clause that holds `at` up to it: the subject of a
/// verb at `at`.
fn subject_before(raw: &[RawTok], at: usize) -> Vec<usize> {
    let lex = lexicon();
    let mut start = at;
    while start > 0 && !raw[start - 1].boundary && !lex.is(&raw[start - 1].lower, WordClass::CLAUSE) {
        start -= 1;
    }
    (start..at).filter(|&k| carries_content(lex, &raw[k].lower)).collect()
}

/// A word that says what a phrase is about: not a stop word, a verb or an adverb in -ly.
fn carries_content(lex: &Lexicon, w: &str) -> bool {
    !(lex.is(w, WordClass::STOP) || lex.is(w, WordClass::VERB) || (w.len() > 4 && w.ends_with("ly")))
}

/// The cue of `cues.tsv` that starts at raw token `i`, with its length in tokens: the longest
/// phrase that fits, by words as written or by stems as its class is compared.
fn cue_at(raw: &[RawTok], i: usize, keys: &[String]) -> Option<(CueKind, usize)> {
    let table = &table().by_first;
    let fits = |words: &Vec<String>, kind: CueKind| {
        words.len() <= keys.len() - i
            && words.iter().enumerate().all(|(n, w)| {
                if kind.verb() || kind == CueKind::Handover { keys[i + n] == *w } else { raw[i + n].lower == *w }
            })
            && !raw[i..i + words.len() - 1].iter().any(|r| r.boundary)
    };
    let by_word = table.get(&raw[i].lower).into_iter().flatten();
    let by_stem = table.get(&keys[i]).into_iter().flatten();
    by_word
        .chain(by_stem)
        .filter(|(words, kind)| fits(words, *kind))
        .max_by_key(|(words, _)| words.len())
        .map(|(words, kind)| (*kind, words.len()))
}

/// Reads the cues of a text.
pub(super) fn read(raw: &[RawTok]) -> Cues {
    let lex = lexicon();
    let keys: Vec<String> = raw.iter().map(|r| word_key(&r.lower)).collect();
    let mut out = Cues::default();
    let mut i = 0;
    while i < raw.len() {
        let Some((kind, len)) = cue_at(raw, i, &keys) else {
            // "X, not Y": Y is the old value ("Node 20, not 18", "NIH, not NSF")
            // (of a part of it too: "June 14, not end of May")
            if raw[i].lower == "not" && i > 0 && raw[i - 1].boundary && !raw[i - 1].sentence_end {
                out.old.extend(noun_phrase_of(raw, i + 1, raw.len()));
            }
            // "would rather A than B": B is the old value, as after "rather than"
            if raw[i].lower == "than" && would_rather_before(raw, i) {
                out.found.push(Cue { kind: CueKind::Instead, at: i, shown: "rather … than".into(), len: 1 });
                out.old.extend(noun_phrase(raw, i + 1, raw.len()));
            }
            // "3.4.1 was the one before", "Berlin was the old one": what was is the old value
            if i >= 2 && matches!(raw[i - 1].lower.as_str(), "was" | "were") && !raw[i - 2].boundary && former(raw, i) {
                out.old.extend(subject_before(raw, i - 1));
            }
            i += 1;
            continue;
        };
        let prev = i.checked_sub(1).map(|k| raw[k].lower.as_str());
        let next = raw.get(i + len).map(|r| r.lower.as_str());
        let after_boundary = i == 0 || raw[i - 1].boundary;
        // a verb as written: not a name mid-sentence ("Render"), not a noun after a determiner
        // ("the move", "a cut", "on leave")
        let noun = prev.is_some_and(|p| !after_boundary && DETERMINERS.contains(&p));
        let name = !after_boundary && raw[i].text.starts_with(char::is_uppercase);
        // a plan, an obligation or a wish: "had to leave", "will move", "plan to cancel"
        let not_done = prev.is_some_and(|p| NOT_DONE.contains(&p));
        if kind.verb() && (noun || name || not_done) {
            i += 1;
            continue;
        }
        // a verb of changing says what changed into what: "moved to", "joined … as", "switched
        // off", "renamed X Y" ("promotes LGBTQ rights", "joined a group" tell of a deed)
        if kind == CueKind::Change && !RENAMES.contains(&keys[i].as_str()) && !directed(raw, i + len) {
            i += 1;
            continue;
        }
        // a verb, not the noun it also is ("positive changes from the diet"): a past form, an
        // imperative, after a pronoun, or right before where it went ("moves to")
        let word = raw[i].lower.as_str();
        let past = word.ends_with("ed") || word.ends_with("en") || lex.irregular_verb(word);
        let pronoun = prev.is_some_and(|p| matches!(p, "i" | "we" | "they" | "you" | "he" | "she" | "it"));
        let particle =
            next.is_some_and(|n| matches!(n, "to" | "as" | "into" | "from" | "off" | "over" | "back" | "away"));
        let adverb = matches!(word, "anymore" | "again" | "now");
        if kind.verb() && len == 1 && !adverb && !(past || after_boundary || pronoun || particle) {
            i += 1;
            continue;
        }
        // "dropped off", "dropped by": delivered, visited
        if kind == CueKind::Ended && len == 1 && next.is_some_and(|n| matches!(n, "off" | "by")) && keys[i] == "drop" {
            i += 1;
            continue;
        }
        // "pushed to April 2", "slipped back to July" ("push to main" is not a date)
        if kind == CueKind::Schedule && !scheduled(raw, i + len) {
            i += 1;
            continue;
        }
        // "starting Monday", "as of March", "effective July 1" ("started painting" is a deed)
        if kind == CueKind::Since
            && keys[i] != "as"
            && !next.is_some_and(|n| time_word(n) && !matches!(n, "in" | "on" | "from"))
        {
            i += 1;
            continue;
        }
        // "rose to €45", "grew from 800 to 1,200", "went up, it's $84 now": rising, growing or
        // going up or down says an amount changed only before where it went or at the end of its
        // clause ("the error rate rose above 2%", "the API went down for an hour" tell of events)
        if matches!(kind, CueKind::Raised | CueKind::Lowered)
            && (matches!(keys[i].as_str(), "rise" | "grow") || (len == 2 && keys[i] == "go"))
            && !(next.is_some_and(|n| matches!(n, "to" | "by" | "from" | "again")) || raw[i + len - 1].boundary)
        {
            i += 1;
            continue;
        }
        // "too" adds only at the end of its clause ("Mei joined too"; not "too early")
        if kind == CueKind::Beside && keys[i] == "too" && !(raw[i + len - 1].boundary || next.is_none()) {
            i += 1;
            continue;
        }
        let shown = written(raw, i..i + len);
        out.found.push(Cue { kind, at: i, shown, len });
        let last = i + len - 1;
        let passive =
            prev.is_some_and(|p| lex.is(p, WordClass::COPULA) || matches!(p, "got" | "get" | "gets" | "been"));
        match kind {
            // "the 50 was a typo", "the old address was wrong": what it says was wrong is the
            // old value
            CueKind::Correction
                if i > 0
                    && raw[i..i + len].iter().any(|r| matches!(r.lower.as_str(), "typo" | "mistake" | "wrong")) =>
            {
                let copula = if lex.is(&raw[i].lower, WordClass::COPULA) {
                    Some(i)
                } else {
                    (i.saturating_sub(2)..i)
                        .rev()
                        .find(|&k| lex.is(&raw[k].lower, WordClass::COPULA))
                        .filter(|&k| (k + 1..i).all(|m| matches!(raw[m].lower.as_str(), "a" | "an" | "just")))
                };
                if let Some(k) = copula.filter(|&k| k > 0 && !raw[k - 1].boundary) {
                    out.old.extend(subject_before(raw, k));
                }
            }
            CueKind::Instead if keys[i] != "instead" || next == Some("of") => {
                out.old.extend(noun_phrase(raw, i + len, raw.len()));
            }
            CueKind::Change | CueKind::Handover => {
                // "renamed X to Y", "X was renamed Y", "X got rebranded as Y": X is the old name
                if RENAMES.contains(&keys[i].as_str()) {
                    out.renamed = true;
                    if passive {
                        out.old.extend(subject_before(raw, i - 1));
                    } else {
                        let to = (i + len..raw.len().min(i + len + 6))
                            .find(|&k| matches!(raw[k].lower.as_str(), "to" | "as" | "into"));
                        if let Some(to) = to {
                            out.old.extend(phrase(raw, i + len, to));
                        }
                    }
                }
                // "moved X from A to B", "took over X from A", "migrated off A": A is the old value
                let mut k = i + len;
                while k < raw.len().min(i + len + 8) {
                    if matches!(raw[k].lower.as_str(), "from" | "off") {
                        out.old.extend(noun_phrase(raw, k + 1, raw.len()));
                        break;
                    }
                    if raw[k].sentence_end {
                        break;
                    }
                    k += 1;
                }
            }
            CueKind::Ended => {
                let object_follows = !raw[last].boundary
                    && next.is_some_and(|n| !PHRASE_STOPS.contains(&n) && !lex.is(n, WordClass::CLAUSE));
                let mut after = i + len;
                while after < raw.len() && lex.is(&raw[after].lower, WordClass::VERB) {
                    after += 1;
                }
                match raw[i].lower.as_str() {
                    // "no longer VERB X" (the verb and X), "no more X"
                    "no" => out.ended.extend(phrase(raw, after, raw.len())),
                    // "does not VERB X any more": what the negation governs
                    "any" | "anymore" => {
                        if let Some(n) = (0..i).rev().find(|&k| lex.is(&raw[k].lower, WordClass::NEGATION)) {
                            out.ended.extend((n + 1..i).filter(|&k| {
                                let w = raw[k].lower.as_str();
                                !lex.is(w, WordClass::STOP) && !lex.is(w, WordClass::VERB)
                            }));
                        }
                    }
                    // "X was cancelled", "X retired", "Mentorship with A wrapped up in May"
                    _ if passive || !object_follows => {
                        out.ended.extend(subject_before(raw, if passive { i - 1 } else { i }))
                    }
                    // "dropped piano", "cancelled Netflix in October", "stopped paying for X"
                    _ => out.ended.extend(phrase(raw, i + len, raw.len())),
                }
            }
            // "X is now called Y", "X's now named Y": X is the old name
            CueKind::Now if i > 0 && matches!(next, Some("called" | "named")) => {
                out.renamed = true;
                out.old.extend(subject_before(raw, i));
            }
            _ => {}
        }
        i += len;
    }
    out.old.sort_unstable();
    out.old.dedup();
    out.ended.sort_unstable();
    out.ended.dedup();
    out
}
