//! A memory that announces a change ("we moved CI to GitLab", "I now work at Meta", "the deadline
//! was pushed to Monday", "we switched from Slack to Teams", "I no longer work at Google"): what
//! changed (the topic: the object moved, else the subject and its verb), the old value when the
//! statement names it and the new one. The words that announce a change are data
//! (`lexicon/changes.tsv`). Read once per text ([`read`]), compared with a stored memory by
//! [`announced_change`]: a change of a topic the stored memory speaks of, whose old value it
//! holds, is a new version of it; one whose stored value is another than the change names is a
//! conflict.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::analysis::{Analysis, Item, Kind};
use super::gates::Pair;
use super::identity::generic;
use super::lexicon::{WordClass, lexicon};
use super::stem::stem;
use super::tokens::RawTok;
use super::values::ValCat;
use super::verdict::{Gate, Relation, Verdict};

const CHANGES: &str = include_str!("../lexicon/changes.tsv");

/// A class of `changes.tsv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cue {
    Change,
    Schedule,
    Replace,
    Particle,
    Now,
    Ended,
}

/// `changes.tsv` by stem.
fn cues() -> &'static FxHashMap<String, Cue> {
    static CELL: OnceLock<FxHashMap<String, Cue>> = OnceLock::new();
    CELL.get_or_init(|| {
        let mut out = FxHashMap::default();
        for line in CHANGES.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let Some((word, class)) = line.split_once('\t') else { continue };
            let cue = match class {
                "change" => Cue::Change,
                "schedule" => Cue::Schedule,
                "replace" => Cue::Replace,
                "particle" => Cue::Particle,
                "now" => Cue::Now,
                "ended" => Cue::Ended,
                _ => continue,
            };
            out.insert(stem(word), cue);
        }
        out
    })
}

/// The number of lines of `changes.tsv` that load (for the lexicon's test).
#[cfg(test)]
pub(super) fn cue_count() -> usize {
    cues().len()
}

fn cue_of(r: &RawTok) -> Option<Cue> {
    let lex = lexicon();
    cues().get(&stem(lex.base(&r.lower))).copied()
}

/// What a text announces changed, by raw token positions.
#[derive(Clone, Debug, Default)]
pub(super) struct Statement {
    /// how the change is announced, for reasons ("moved … to", "now", "no longer").
    pub(super) cue: String,
    /// the subject is the speaker's ("I", "we", "my", "our").
    pub(super) first_person: bool,
    /// the subject is the speaker ("I", "we").
    pub(super) speaker: bool,
    /// the topic is the subject (and its verb), not an object moved: a stored memory about it
    /// must have the same first-person subject when the statement's is one.
    pub(super) subject_topic: bool,
    /// what changed: the object moved, else the subject's content words and the verb.
    pub(super) topic: Vec<usize>,
    /// the old value, when named ("from Slack", "instead of Slack", "no longer … at Google").
    pub(super) from: Vec<usize>,
    /// the new value.
    pub(super) to: Vec<usize>,
    /// "no longer", "any more": the old value holds no more, and no new one is named.
    pub(super) ended: bool,
    /// a verb of moving in time: the new value is a time, a date or a day.
    pub(super) time_only: bool,
}

const FIRST_PERSON: [&str; 4] = ["i", "we", "my", "our"];
const PRONOUNS: [&str; 7] = ["i", "we", "they", "he", "she", "you", "it"];
/// Words before a verb of change that make it a plan, a wish or a condition, not a change.
const NOT_DONE: [&str; 17] = [
    "to",
    "will",
    "would",
    "might",
    "may",
    "could",
    "should",
    "want",
    "wants",
    "plan",
    "plans",
    "planning",
    "considering",
    "thinking",
    "if",
    "whether",
    "can",
];

fn is_adverb(w: &str) -> bool {
    (w.len() > 4 && w.ends_with("ly"))
        || matches!(
            w,
            "just"
                | "also"
                | "already"
                | "since"
                | "then"
                | "finally"
                | "lately"
                | "all"
                | "both"
                | "got"
                | "get"
                | "gets"
        )
}

/// Content positions of `range`: no function word, no adverb, no word of `changes.tsv`.
fn content(raw: &[RawTok], range: std::ops::Range<usize>) -> Vec<usize> {
    let lex = lexicon();
    range
        .filter(|&k| {
            let w = raw[k].lower.as_str();
            !lex.is(w, WordClass::STOP) && !lex.is(w, WordClass::VERB) && !is_adverb(w) && cue_of(&raw[k]).is_none()
        })
        .collect()
}

/// Where the phrase that starts at `from` ends (exclusive): at a boundary, a clause word, "from",
/// "with", "by", "instead", or after eight tokens.
fn phrase_end(raw: &[RawTok], from: usize, limit: usize) -> usize {
    let lex = lexicon();
    let mut k = from;
    while k < limit && k < from + 8 {
        let w = raw[k].lower.as_str();
        if k > from && (lex.is(w, WordClass::CLAUSE) || matches!(w, "from" | "instead" | "since" | "because")) {
            return k;
        }
        if raw[k].boundary {
            return k + 1;
        }
        k += 1;
    }
    k
}

/// Reads what `raw` (a text's tokens) announces changed, if it announces a change. Only the first
/// sentence that announces one is read.
pub(super) fn read(raw: &[RawTok]) -> Option<Statement> {
    let lex = lexicon();
    let mut start = 0;
    while start < raw.len() {
        let mut end = start;
        while end < raw.len() && !raw[end].sentence_end {
            end += 1;
        }
        let end = (end + 1).min(raw.len());
        if let Some(s) = read_sentence(raw, start, end, lex) {
            return Some(s);
        }
        start = end;
    }
    None
}

fn read_sentence(raw: &[RawTok], start: usize, end: usize, lex: &super::lexicon::Lexicon) -> Option<Statement> {
    let w = |k: usize| raw.get(k).map(|r| r.lower.as_str()).unwrap_or("");
    let first_person = FIRST_PERSON.contains(&w(start));
    let speaker = matches!(w(start), "i" | "we");
    let negated_before =
        |k: usize| (start..k).any(|j| lex.is(w(j), WordClass::NEGATION) || lex.is(w(j), WordClass::HEDGE));
    for i in start..end {
        let cue = cue_of(&raw[i]);
        // the subject: what comes before the cue in its sentence, its content words
        let subject = |i: usize| content(raw, start..i);
        match cue {
            Some(c @ (Cue::Change | Cue::Schedule)) => {
                if i == start || (start..i).any(|j| NOT_DONE.contains(&w(j))) || negated_before(i) {
                    continue;
                }
                // a verb as written: lowercase, not a name
                if raw[i].text.starts_with(char::is_uppercase) {
                    continue;
                }
                let Some(to) = (i + 1..end.min(i + 10)).find(|&k| matches!(w(k), "to" | "into" | "until" | "till"))
                else {
                    continue;
                };
                let from = (i + 1..end.min(i + 10)).find(|&k| w(k) == "from");
                let object_end = from.map_or(to, |f| f.min(to));
                let object: Vec<usize> =
                    content(raw, i + 1..object_end).into_iter().filter(|&k| cue_of(&raw[k]).is_none()).collect();
                if (i + 1..object_end).any(|k| raw[k].boundary) {
                    continue;
                }
                let (from_range, to_range) = match from {
                    Some(f) if f < to => (f + 1..to, to + 1..phrase_end(raw, to + 1, end)),
                    Some(f) => (f + 1..phrase_end(raw, f + 1, end), to + 1..f),
                    None => (0..0, to + 1..phrase_end(raw, to + 1, end)),
                };
                let subject_topic = object.is_empty();
                let topic = if subject_topic { subject(i) } else { object };
                let verb = raw[i].text.as_str();
                let cue = if from.is_some() { format!("{verb} from … to") } else { format!("{verb} … to") };
                return Some(Statement {
                    cue,
                    first_person,
                    speaker,
                    subject_topic,
                    topic,
                    from: content(raw, from_range),
                    to: content(raw, to_range),
                    ended: false,
                    time_only: c == Cue::Schedule,
                });
            }
            Some(Cue::Replace) => {
                if i == start || (start..i).any(|j| NOT_DONE.contains(&w(j))) || negated_before(i) {
                    continue;
                }
                let passive = i > start && lex.is(w(i - 1), WordClass::COPULA);
                let with = (i + 1..end).find(|&k| matches!(w(k), "with" | "by"));
                let verb = raw[i].text.as_str();
                let (from, to) = match (passive, with) {
                    // "Jenkins was replaced by GitHub Actions"
                    (true, Some(b)) => (subject(i), content(raw, b + 1..phrase_end(raw, b + 1, end))),
                    // "we replaced Jenkins with GitHub Actions"
                    (false, Some(b)) => (content(raw, i + 1..b), content(raw, b + 1..phrase_end(raw, b + 1, end))),
                    // "GitHub Actions replaced Jenkins"
                    (false, None) if !first_person => (content(raw, i + 1..phrase_end(raw, i + 1, end)), subject(i)),
                    _ => continue,
                };
                if from.is_empty() || to.is_empty() {
                    continue;
                }
                return Some(Statement {
                    cue: format!("{verb} … with"),
                    first_person: first_person && !passive,
                    speaker: speaker && !passive,
                    subject_topic: true,
                    topic: Vec::new(),
                    from,
                    to,
                    ended: false,
                    time_only: false,
                });
            }
            Some(Cue::Now) => {
                let prev = if i > start { w(i - 1) } else { "" };
                if i == start
                    || matches!(prev, "for" | "until" | "till" | "by" | "from" | "right" | "just" | "as" | "than")
                    || matches!(w(i + 1), "that" | "and" | "")
                    || negated_before(i)
                    || raw[i].boundary
                {
                    continue;
                }
                let mut topic = subject(i);
                if topic.is_empty() && !first_person {
                    continue;
                }
                // "is now B": the copula before; "now works at B": the verb after
                let copula_before = lex.is(prev, WordClass::COPULA);
                let mut at = i + 1;
                if !copula_before {
                    while at < end && lex.is(w(at), WordClass::VERB) {
                        at += 1;
                    }
                    if at >= end || lex.is(w(at), WordClass::STOP) {
                        continue;
                    }
                    topic.push(at);
                    at += 1;
                }
                let to = content(raw, at..phrase_end(raw, at, end));
                if to.is_empty() {
                    continue;
                }
                return Some(Statement {
                    cue: "now".to_string(),
                    first_person,
                    speaker,
                    subject_topic: true,
                    topic,
                    from: Vec::new(),
                    to,
                    ended: false,
                    time_only: false,
                });
            }
            Some(Cue::Ended) => {
                // "no longer VERB A", "VERB A any more / anymore" after a negation
                let no_longer = w(i) == "longer" && i > start && w(i - 1) == "no";
                let any_more = w(i) == "anymore" || (w(i) == "more" && i > start && w(i - 1) == "any");
                let (neg_at, from_range, verb_at) = if no_longer {
                    let mut at = i + 1;
                    while at < end && lex.is(w(at), WordClass::VERB) {
                        at += 1;
                    }
                    (i - 1, at + 1..phrase_end(raw, at + 1, end), at)
                } else if any_more {
                    let Some(n) = (start..i).find(|&k| lex.is(w(k), WordClass::NEGATION)) else { continue };
                    let mut at = n + 1;
                    while at < i && lex.is(w(at), WordClass::VERB) {
                        at += 1;
                    }
                    let until = if w(i) == "more" { i - 1 } else { i };
                    (n, at + 1..until, at)
                } else {
                    continue;
                };
                if verb_at >= end || neg_at <= start {
                    continue;
                }
                let mut topic: Vec<usize> = content(raw, start..neg_at);
                if !lex.is(w(verb_at), WordClass::STOP) {
                    topic.push(verb_at);
                }
                let from = content(raw, from_range);
                if from.is_empty() || (topic.is_empty() && !first_person) {
                    continue;
                }
                return Some(Statement {
                    cue: if no_longer { "no longer".to_string() } else { "any more".to_string() },
                    first_person,
                    speaker,
                    subject_topic: true,
                    topic,
                    from,
                    to: Vec::new(),
                    ended: true,
                    time_only: false,
                });
            }
            _ => {}
        }
        // "SUBJ VERB B instead of A"
        if w(i) == "instead" && w(i + 1) == "of" && i > start + 1 && !negated_before(i) {
            let subject_end = if PRONOUNS.contains(&w(start)) {
                start + 1
            } else {
                match (start..i).find(|&k| lex.is(w(k), WordClass::VERB)) {
                    Some(k) => k,
                    None => continue,
                }
            };
            let mut at = subject_end;
            while at < i && lex.is(w(at), WordClass::VERB) {
                at += 1;
            }
            if at >= i {
                continue;
            }
            let mut topic = content(raw, start..subject_end);
            let verb_is_content = !lex.is(w(at), WordClass::STOP);
            if verb_is_content {
                topic.push(at);
            }
            let to = content(raw, at + usize::from(verb_is_content)..i);
            let from = content(raw, i + 2..phrase_end(raw, i + 2, end));
            if to.is_empty() || from.is_empty() || (topic.is_empty() && !first_person) {
                continue;
            }
            return Some(Statement {
                cue: "instead of".to_string(),
                first_person,
                speaker,
                subject_topic: true,
                topic,
                from,
                to,
                ended: false,
                time_only: false,
            });
        }
    }
    None
}

/// Whether a memory tells of its subject what happened rather than what holds: its first verb is
/// in the past tense ("I was born in Paris", "my sister grew up in Lyon", "I lived in Rome", "I
/// used to work at IBM"). "I have lived…", "I am based…", "I live…" tell what holds. The verb is
/// the first auxiliary, or before it the first word in -ed or of an irregular past.
pub(super) fn past_event(b: &Analysis) -> bool {
    let lex = lexicon();
    let words: Vec<&str> = b.norm.split(' ').collect();
    for (k, &w) in words.iter().enumerate().skip(1) {
        // "used to" (a function word in grammar.tsv) is a past habit
        if w == "used" && words.get(k + 1) == Some(&"to") {
            return true;
        }
        let class = lex.class(w);
        if class.has(WordClass::VERB) {
            return matches!(w, "was" | "were" | "did" | "had");
        }
        // "a cat named Pepper", "a team called Foundations": a name given, not a deed
        if class != WordClass::default() || matches!(w, "named" | "called") {
            continue;
        }
        let regular = w.len() >= 5 && w.ends_with("ed") && !w.ends_with("eed");
        // a participle before a noun, in a fact a present copula states, modifies the noun
        // ("Minimum supported Node version is 16", "The shared drive is on Dropbox")
        let modifier = regular
            && words.get(k + 1).is_some_and(|n| lex.class(n) == WordClass::default())
            && words[k + 2..].iter().any(|n| matches!(*n, "is" | "are"));
        if modifier {
            continue;
        }
        // a present passive tells what holds ("Every new hire gets paired with a buddy")
        if regular && matches!(words[k - 1], "gets" | "get" | "is" | "are" | "am") {
            return false;
        }
        if regular || (lex.irregular_verb(w) && !w.ends_with('s') && !w.ends_with("ing")) {
            return true;
        }
    }
    false
}

/// A named thing: a proper name, an identifier, a capitalised word (a name that opens its
/// sentence, "Jenkins was replaced…", is written as one) or value of the lexicon.
fn named(x: &Item) -> bool {
    match x.kind {
        Kind::Ident => true,
        Kind::Word | Kind::Value(ValCat::Class(_), _) => x.name || x.shown.starts_with(char::is_uppercase),
        _ => false,
    }
}

/// Whether `old` (an item of the stored memory) can be the value `new` (an item of the change)
/// replaced: both named things, or values of one category.
fn same_kind(new: &Item, old: &Item) -> bool {
    match (new.kind, old.kind) {
        (Kind::Value(c, _), Kind::Value(d, _)) if c == d => true,
        _ => named(new) && named(old) && new.name_of_one_sort(old),
    }
}

fn is_time(x: &Item) -> bool {
    matches!(
        x.kind,
        Kind::Value(ValCat::Time | ValCat::Date | ValCat::Weekday | ValCat::Month | ValCat::RelDay | ValCat::Number, _)
    )
}

/// The stored memory's items a change replaces: not matched by the incoming memory, of the kind
/// of the new value.
const MAX_OLD_REST: usize = 5;
/// The old value is one phrase: its items lie within this many tokens.
const OLD_PHRASE: usize = 4;

/// The incoming memory announces a change of what the stored one says: a new version of it
/// (`announced_change`), or, when the change names an old value the stored memory does not hold
/// and the stored memory holds another, a conflict (`changed_from_other`).
pub(super) fn announced_change(p: &mut Pair) -> Option<Verdict> {
    let s = p.a.change.as_deref()?;
    let (a, b) = (p.a, p.b);
    if b.negs > 0 || b.change.is_some() {
        return None;
    }
    // the speaker's change is of what the speaker said: "I …" of "I …", "my sister …" of "my …"
    if s.subject_topic && ((s.speaker && !b.speaker) || (s.first_person && !b.first_person)) {
        return None;
    }
    // a change of the subject's state leaves what happened to it: "I moved to Berlin" does not
    // undo "I was born in Paris" or "I lived in Rome" (a change of when something is, "the
    // deadline was pushed to Monday", does change "the deadline was Friday")
    if s.subject_topic && !s.time_only && past_event(b) {
        return None;
    }
    let topic = a.items_at(&s.topic);
    let from = a.items_at(&s.from);
    // what changed must be said: a topic, the speaker, or the old value
    if topic.is_empty() && !s.first_person && from.is_empty() {
        return None;
    }
    // every word of the topic is in the stored memory, and what the incoming memory is about is
    // what it is about ("Sam is now a coach" is not of "Evan encourages Sam")
    if topic.iter().any(|&k| p.pa[k].is_none_or(|j| a.items[k].subject && !b.items[j].subject)) {
        return None;
    }
    let to = a.items_at(&s.to);
    if s.time_only && !to.iter().any(|&k| is_time(&a.items[k])) {
        return None;
    }
    // an item of the incoming memory the stored one holds as such: a name as a name ("Teams" is
    // not the stored "team chat")
    let pa = p.pa.clone();
    let held = |k: usize| pa[k].is_some_and(|j| named(&a.items[k]) == named(&b.items[j]));
    let new: Vec<usize> = to.iter().copied().filter(|&k| !held(k)).collect();
    if !to.is_empty() && new.is_empty() {
        // the stored memory already says the new value
        return None;
    }
    // what the stored memory says besides what the incoming one shares with it
    let rest: Vec<usize> = (0..b.items.len()).filter(|&j| !p.used[j]).collect();
    // With no topic but the speaker or the user, only a value of the new one's lexicon category
    // is the old one ("I moved to Berlin" of "I live in Paris", not of "I use VS Code"; "User
    // relocated to Amsterdam" of "User is based in Berlin", not of "User's name is Jon").
    let about = topic.iter().any(|&k| !generic(&a.items[k]));
    let kind = |k: usize, j: usize| {
        let (x, y) = (&a.items[k], &b.items[j]);
        same_kind(x, y) && (about || matches!((x.kind, y.kind), (Kind::Value(c, _), Kind::Value(d, _)) if c == d))
    };
    let old_of_kind: Vec<usize> = rest.iter().copied().filter(|&j| new.iter().any(|&k| kind(k, j))).collect();
    // and the stored memory says little else: the old value, and a word of its predicate at most
    // ("runs on GitHub Actions", not "is travelling to Lake Tahoe with a friend")
    // in one phrase ("GitHub Actions", not the names of a headline)
    let span = old_of_kind.iter().map(|&j| b.items[j].raw_pos);
    let one_phrase = span.clone().max().zip(span.min()).is_none_or(|(last, first)| last - first < OLD_PHRASE);
    let says_little_else = rest.len() <= old_of_kind.len() + 1 && one_phrase;
    let topic_shown = a.shown(&topic);
    let what =
        if topic_shown.is_empty() { format!("\"{}\"", s.cue) } else { format!("\"{}\", of {topic_shown}", s.cue) };
    p.note("change_topic_words", topic.len() as f64);
    p.note("change_old_words", old_of_kind.len() as f64);
    if !from.is_empty() {
        let holds = from.iter().filter(|&&k| held(k)).count();
        if holds == from.len() {
            let old: Vec<usize> = from.iter().filter_map(|&k| p.pa[k]).collect();
            let reason = if s.ended {
                format!(
                    "announced change ({what}): {} no more; the earlier belief says {}",
                    a.shown(&from),
                    b.shown(&old)
                )
            } else {
                format!(
                    "announced change ({what}): from {} to {}; the earlier belief says {}",
                    a.shown(&from),
                    a.shown(&to),
                    b.shown(&old)
                )
            };
            return Some(p.verdict(Relation::Contradictory, Gate::AnnouncedChange, reason));
        }
        if holds == 0 && !old_of_kind.is_empty() && says_little_else && !s.ended {
            let reason = format!(
                "announced change ({what}) from {} to {}, but the earlier belief says {}, which the change does not \
                 mention",
                a.shown(&from),
                a.shown(&to),
                b.shown(&old_of_kind)
            );
            return Some(p.verdict(Relation::Contradictory, Gate::ChangedFromOther, reason));
        }
        return None;
    }
    if old_of_kind.is_empty() || !says_little_else || rest.len() > MAX_OLD_REST {
        return None;
    }
    let reason =
        format!("announced change ({what}): now {}; the earlier belief says {}", a.shown(&new), b.shown(&old_of_kind));
    Some(p.verdict(Relation::Contradictory, Gate::AnnouncedChange, reason))
}
