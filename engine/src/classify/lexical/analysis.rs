//! One text analysed once: content items, values, qualifiers and negation scope, plus the
//! stems every word leaves (antonyms live among them).

use super::announce::{self, Statement};
use super::cues::{self, Cues};
use super::lexicon::{Entry, WordClass, lexicon};
use super::roles::{self, RoleSlot};
use super::stem::stem;
use super::terms::index_terms_of;
use super::tokens::{RawFlags, RawTok, connector, raw_tokens, written};
use super::values::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
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
pub(super) struct Item {
    pub(super) key: String,
    /// the text as written, for reasons.
    pub(super) shown: String,
    pub(super) kind: Kind,
    /// inside the scope of a negation cue.
    pub(super) negated: bool,
    /// index of the raw token it came from.
    pub(super) raw_pos: usize,
    /// the clause it is in (clauses are opened by clause words and sentence ends).
    pub(super) clause: u8,
    /// the segment it is in (segments are clauses cut further by punctuation).
    pub(super) segment: u8,
    /// a predicate whose slot holds many values ("plays", "visited", "has a") comes before it in
    /// its clause.
    pub(super) many: bool,
    /// its clause marks a slot as holding one value ("only", "first", "favourite").
    pub(super) exclusive: bool,
    /// a proper name (capitalised inside a sentence).
    pub(super) name: bool,
    /// the head of a noun phrase opened by "a", "some", "two"… (not after a copula): some one
    /// thing, which need not be the one the other fact speaks of ("a man" / "a woman").
    pub(super) indefinite: bool,
    /// before the first auxiliary or copula of its text: part of the subject.
    pub(super) subject: bool,
    /// part of a compound written with `-` or `/` ("lunar" in "lunar-billing"): with its
    /// neighbours it names one thing.
    pub(super) compound: bool,
    /// a category value of one word: the stem the word would have as a plain word, so that it
    /// matches the word where the other text uses it as one ("skating" the sport, "is skating").
    pub(super) word: String,
}

impl Item {
    /// A person (or another named one that is not a value of the lexicon): a proper name that is
    /// a plain word. "Spain" and "English" are names too, but values.
    pub(super) fn person(&self) -> bool {
        self.name && self.kind == Kind::Word
    }

    /// A given name (`first_names.txt`) written as a name: a person ("Nadia").
    pub(super) fn given_name(&self) -> bool {
        self.kind == Kind::Word
            && self.shown.starts_with(char::is_uppercase)
            && !self.acronym()
            && lexicon().first_name(&self.shown.to_lowercase())
    }

    /// An acronym ("API", "CRM", "CFO", plural "PRs"): a thing's or a role's name, never a
    /// person's.
    pub(super) fn acronym(&self) -> bool {
        acronym(&self.shown)
    }

    /// A name known to be a thing's: a value of the lexicon ("Postgres", "Porto"), an
    /// identifier, an acronym.
    pub(super) fn thing(&self) -> bool {
        matches!(self.kind, Kind::Value(ValCat::Class(_), _) | Kind::Ident) || self.acronym()
    }

    /// Whether two names can stand for one another: not a person's for a thing's ("Nadia took
    /// over DB on-call" gives no new value of "Production DB is Postgres"). A name the given
    /// names miss may be either.
    pub(super) fn name_of_one_sort(&self, other: &Item) -> bool {
        !((self.given_name() && other.thing()) || (other.given_name() && self.thing()))
    }

    /// A number, a date, a time, a quantity…: a value other than a category's.
    pub(super) fn plain_value(&self) -> bool {
        matches!(self.kind, Kind::Value(c, _) if !matches!(c, ValCat::Class(_)))
    }
}

/// One text, analysed once: its content items, values, qualifiers, negations. Classifying a pair
/// of analyses skips the tokenising, which dominates the cost of a comparison.
#[derive(Debug, Default)]
pub struct Analysis {
    pub(super) items: Vec<Item>,
    /// stems of every word, stop words included (antonyms live among them).
    pub(super) stems: Stems,
    /// number of negation cues.
    pub(super) negs: usize,
    /// the first negation cue, for reasons.
    pub(super) neg_cue: String,
    /// normalised text (lowercased tokens joined), for the exact-text gate.
    pub(super) norm: String,
    /// Per raw token: whether a clause boundary follows it, and whether it is a connector
    /// word (all that [`enrichment_shape`] asks of the raw tokens; kept instead of the tokens).
    pub(super) raw: Vec<RawFlags>,
    /// Per raw token, lowercase: what the identity gates read around a value ("in April").
    pub(super) lower: Vec<String>,
    /// raw position of the token being analysed.
    pub(super) cur: usize,
    /// [`index_terms_of`] this analysis, made once ([`Analysis::index_terms`]).
    pub(super) terms: std::sync::OnceLock<Vec<String>>,
    /// how many clauses the text has.
    pub(super) clauses: u8,
    /// bit `c`: clause `c` holds a negation cue.
    pub(super) negated_clauses: u32,
    /// bit `c`: clause `c` is opened by a contrast word ("while", "but", "instead").
    pub(super) contrast: u32,
    /// where the text restricts what it tells to what it names ("only speaks English",
    /// "exhibited exclusively in Tokyo", "has never travelled outside her home country"; not
    /// "not only", "only recently").
    pub(super) restrictions: Vec<Restriction>,
    /// the text starts with a word that picks out one thing (a name, "the", "my", "she").
    pub(super) definite: bool,
    /// the raw position of the first word by which the text hedges its claim ("may", "might",
    /// "could", "perhaps"), if it hedges ([`Analysis::hedged`]).
    pub(super) hedged_at: Option<usize>,
    /// the text starts with the speaker's ("I", "we", "my", "our").
    pub(super) first_person: bool,
    /// the text starts with the speaker ("I", "we").
    pub(super) speaker: bool,
    /// what the text announces changed ("we moved CI to GitLab"), if it announces a change.
    pub(super) change: Option<Box<Statement>>,
    /// the slot of one holder it states ("my manager is Sarah"), if it states one.
    pub(super) role: Option<Box<RoleSlot>>,
    /// how it says it stands to what was said before ("now", "dropped X", "also"…).
    pub(super) cues: Cues,
    /// every mention of a person (the index of its item) with its segment, in the segments that
    /// say something besides names ("Dara attended Edinburgh, while Ferdano attended Oxford"; not
    /// the list "None of the four — A, B, C —"): who each part of the text is about.
    pub(super) mentions: Vec<(u8, usize)>,
    /// while analysing: the segment being read.
    segment: u8,
    /// while analysing: the mentions of the segment being read.
    pending: Vec<(u8, usize)>,
    /// while analysing: the segment being read has a content word that is no name.
    segment_content: bool,
    /// per raw token, while analysing: a proper name.
    names: Vec<bool>,
    /// per raw token, while analysing: the head of an indefinite noun phrase.
    indefinite_heads: Vec<bool>,
    /// per raw token, while analysing: a part of a compound.
    compounds: Vec<bool>,
    /// while analysing: an auxiliary or copula has been read (the subject is over).
    past_subject: bool,
}

impl Analysis {
    /// [`index_terms_of`] this analysis, made on first use and kept: a new memory's terms are
    /// asked for by candidate search and again when the term cache learns of it, and `save
    /// --from` makes them on its reading thread, ahead of both.
    pub fn index_terms(&self) -> &[String] {
        self.terms.get_or_init(|| index_terms_of(self))
    }

    /// Whether the text hedges its claim ("may", "might", "could", "perhaps").
    pub(super) fn hedged(&self) -> bool {
        self.hedged_at.is_some()
    }

    /// Whether the word before raw token `at` is one of `words` (lowercase).
    pub(super) fn preceded_by(&self, at: usize, words: &[&str]) -> bool {
        at > 0 && self.lower.get(at - 1).is_some_and(|w| words.contains(&w.as_str()))
    }

    /// The indices of the items that start at the raw positions `at`.
    pub(super) fn items_at(&self, at: &[usize]) -> Vec<usize> {
        (0..self.items.len()).filter(|&k| at.contains(&self.items[k].raw_pos)).collect()
    }

    /// The items at `at`, as written, joined: for reasons.
    pub(super) fn shown(&self, at: &[usize]) -> String {
        at.iter().map(|&k| self.items[k].shown.as_str()).collect::<Vec<_>>().join(" ")
    }

    /// Close the segment being read: its mentions count if it said something besides names.
    fn end_segment(&mut self) {
        if self.segment_content {
            self.mentions.append(&mut self.pending);
        } else {
            self.pending.clear();
        }
        self.segment_content = false;
        self.segment = self.segment.saturating_add(1);
    }

    /// Whether the text says when: a clock time, a date, a weekday, a month, a day word (today,
    /// yesterday…), a year (a number from 1900 to 2099), or a span of days, weeks, months or years
    /// ("4 years", "last week"). What a question about time wants of a memory (`recall`).
    pub fn states_time(&self) -> bool {
        const SPANS: [&str; 4] = ["day", "week", "month", "year"];
        self.items.iter().any(|item| match item.kind {
            Kind::Value(ValCat::Time | ValCat::Date | ValCat::Weekday | ValCat::Month | ValCat::RelDay, _) => true,
            Kind::Value(ValCat::Quantity, Unit(u)) => SPANS.contains(&u),
            Kind::Value(ValCat::Number, _) => item.key.parse::<u32>().is_ok_and(|y| (1900..2100).contains(&y)),
            _ => false,
        }) || self.stems.iter().any(|s| unit(s).is_some_and(|u| SPANS.contains(&u)))
    }
}

/// A word that restricts what its clause tells to what follows it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Restriction {
    /// the raw position of the word.
    pub(super) at: usize,
    /// "outside" in a denial ("never … outside X"); else "only", "exclusively", "solely".
    pub(super) outside: bool,
}

/// A text's stems, sorted and each once: a set that takes no more memory than its strings
/// (analyses are cached per stored memory) and answers `contains` by binary search.
#[derive(Debug, Default)]
pub(super) struct Stems(Vec<String>);

impl Stems {
    /// Add a stem while analysing; [`Stems::finish`] sorts them.
    pub(super) fn insert(&mut self, stem: String) {
        self.0.push(stem);
    }

    pub(super) fn finish(&mut self) {
        self.0.sort_unstable();
        self.0.dedup();
        self.0.shrink_to_fit();
    }

    pub(super) fn contains(&self, stem: &str) -> bool {
        self.0.binary_search_by(|s| s.as_str().cmp(stem)).is_ok()
    }

    /// Every stem, in order.
    pub(super) fn iter(&self) -> std::slice::Iter<'_, String> {
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

/// Per clause, filled in as the clause is read: what marks its slots.
#[derive(Clone, Copy, Default)]
struct ClauseState {
    /// a predicate whose slot holds many values has been read in this clause.
    many: bool,
}

/// Analyse a text for [`classify_analysed`] and [`index_terms_of`].
pub fn analyse(text: &str) -> Analysis {
    let raw = raw_tokens(text);
    let lex = lexicon();
    let mut a = Analysis::default();
    let mut norm = String::with_capacity(text.len());
    let mut in_scope = false;
    let mut clause = 0u8;
    let mut state = ClauseState::default();
    let mut exclusive_clauses = 0u32;
    let mut i = 0;
    // An item once per kind and key (a short text has a handful: a scan beats hashing); a name
    // that is a plain word is a mention of a person in its segment, each time it is written.
    let push = |a: &mut Analysis, key: String, shown: &str, kind: Kind, negated: bool, clause: u8, many: bool| {
        let name = a.names.get(a.cur).copied().unwrap_or(false);
        a.segment_content |= !name;
        let k = match a.items.iter().position(|it| it.key == key && it.kind == kind) {
            None => {
                let raw_pos = a.cur;
                let indefinite = a.indefinite_heads.get(raw_pos).copied().unwrap_or(false);
                let subject = !a.past_subject;
                a.items.push(Item {
                    key,
                    shown: shown.to_string(),
                    kind,
                    negated,
                    raw_pos,
                    clause,
                    segment: a.segment,
                    many,
                    exclusive: false,
                    name,
                    indefinite,
                    subject,
                    word: String::new(),
                    compound: a.compounds.get(raw_pos).copied().unwrap_or(false),
                });
                a.items.len() - 1
            }
            Some(k) => {
                a.items[k].negated |= negated;
                k
            }
        };
        if name && kind == Kind::Word {
            a.pending.push((a.segment, k));
        }
    };
    a.names = proper_names(&raw);
    a.indefinite_heads = indefinite_heads(&raw);
    a.compounds = raw.iter().map(|r| r.in_compound).collect();
    while i < raw.len() {
        a.cur = i;
        let t = &raw[i].text;
        let w = raw[i].lower.as_str();
        let first = i == 0 || raw[i - 1].sentence_end;
        let boundary = raw[i].boundary;
        let next = raw.get(i + 1).map(|r| r.lower.as_str());
        let prev = if i > 0 { Some(raw[i - 1].lower.as_str()) } else { None };
        let class = lex.class(w);
        // most words are no value word: one lookup spares the value tables' eight
        let valued = lex.is_value_word(w) || w.ends_with("days");
        if class.has(WordClass::VERB) && !a.past_subject {
            a.past_subject = true;
            // a predicate of many values before the first auxiliary was part of the subject
            // ("the weekly meeting is held in…")
            state.many = false;
        }
        if class.has(WordClass::HEDGE) && t.starts_with(|c: char| c.is_lowercase()) {
            a.hedged_at.get_or_insert(a.cur);
        }
        if !norm.is_empty() {
            norm.push(' ');
        }
        norm.push_str(&ident_key(t));
        let mut consumed = 1;
        // "A rather than B", "A instead of B": B is denied
        let denies_next = (w == "rather" && next == Some("than")) || (w == "instead" && next == Some("of"));
        // "prefers A over B", "chose A over B": B is passed over
        let passes_over = w == "over" && a.stems.iter().any(|s| s == "prefer" || s == "chose" || s == "choos");
        if class.has(WordClass::CLAUSE) && i > 0 && !denies_next {
            a.end_segment();
            in_scope = false;
            if clause < 31 {
                clause += 1;
            }
            state = ClauseState::default();
            if class.has(WordClass::CONTRAST) {
                a.contrast |= 1 << clause;
            }
        }
        if matches!(w, "who" | "which" | "where" | "whose" | "whom") && i > 0 {
            // a relative clause has a predicate of its own ("an author who specializes in…")
            state.many = false;
        }
        if w == "from" {
            // an origin holds one value, whatever governs the phrase ("received her PhD from…")
            state.many = false;
        }
        // "only", "exclusively" anywhere; "first", "favourite", "main" before what they mark
        // ("first met", "favourite colour"; not "write the tests first for…")
        let marks = matches!(w, "only" | "exclusively" | "solely")
            || next.is_some_and(|n| lex.class(n) == WordClass::default() && !boundary);
        if class.has(WordClass::EXCLUSIVE) && marks {
            exclusive_clauses |= 1 << clause;
        }
        if matches!(w, "only" | "exclusively" | "solely") && restricts(prev, next) {
            a.restrictions.push(Restriction { at: i, outside: false });
        }
        if w == "outside" && in_scope {
            a.restrictions.push(Restriction { at: i, outside: true });
        }
        let c = clause;
        let many = state.many;
        // "not only A but also B" asserts both
        let not_only = w == "not" && next == Some("only");
        if (class.has(WordClass::NEGATION) && !not_only)
            || (w == "no" && next == Some("one"))
            || denies_next
            || passes_over
        {
            a.negs += 1;
            a.negated_clauses |= 1 << clause;
            if a.neg_cue.is_empty() {
                a.neg_cue = if denies_next { format!("{w} {}", next.unwrap_or_default()) } else { w.to_string() };
            }
            if (w == "no" && next == Some("one")) || denies_next {
                consumed = 2;
            }
            in_scope = true;
            a.stems.insert(w.to_string());
        } else if not_only {
            // no cue and no content word: the stem alone
            a.stems.insert(w.to_string());
        } else if let Some(d) =
            valued.then(|| weekday(w, t, first)).flatten().filter(|_| !short_form_in_name(&raw, i, &a.names))
        {
            push(&mut a, d.to_string(), t, Kind::Value(ValCat::Weekday, Unit("")), in_scope, c, many);
        } else if let Some(m) =
            valued.then(|| month(w, t, first)).flatten().filter(|_| !short_form_in_name(&raw, i, &a.names))
        {
            push(&mut a, m.to_string(), t, Kind::Value(ValCat::Month, Unit("")), in_scope, c, many);
        } else if let Some(d) = valued.then(|| relday(w)).flatten() {
            push(&mut a, d.to_string(), t, Kind::Value(ValCat::RelDay, Unit("")), in_scope, c, many);
        } else if let Some(f) = valued.then(|| frequency(w)).flatten() {
            push(&mut a, f.to_string(), t, Kind::Value(ValCat::Frequency, Unit("")), in_scope, c, many);
        } else if w == "noon" || w == "midnight" {
            let v = if w == "noon" { "12:00" } else { "00:00" };
            push(&mut a, v.to_string(), t, Kind::Value(ValCat::Time, Unit("")), in_scope, c, many);
        } else if let Some(q) = valued.then(|| env_qualifier(w)).flatten() {
            push(&mut a, q.to_string(), t, Kind::Qual(QualCat::Environment), in_scope, c, many);
        } else if let Some(q) = valued.then(|| weak_env_qualifier(w)).flatten().filter(|_| {
            next.is_some_and(env_context) || prev.is_some_and(|p| matches!(p, "to" | "in" | "on" | "against"))
        }) {
            push(&mut a, q.to_string(), t, Kind::Qual(QualCat::Environment), in_scope, c, many);
        } else if let Some(q) = valued.then(|| platform_qualifier(w, t)).flatten() {
            push(&mut a, q.to_string(), t, Kind::Qual(QualCat::Platform), in_scope, c, many);
        } else if let Some(q) = region_qualifier(t) {
            push(&mut a, q, t, Kind::Qual(QualCat::Region), in_scope, c, many);
        } else if w.chars().any(|c| c.is_ascii_digit()) && lex.alias(w) == w {
            match parse_value(t) {
                Some((cat, u, canon)) => {
                    let (cat, u, canon) = merge_following(cat, u, canon, &raw, i, &mut consumed);
                    push(&mut a, canon, t, Kind::Value(cat, Unit(u)), in_scope, c, many);
                }
                None => push(&mut a, ident_key(t), t, Kind::Ident, in_scope, c, many),
            }
        } else if let Some((key, unit, len)) = hour_phrase(&raw, i) {
            consumed = len;
            let shown = written(&raw, i..i + len);
            push(&mut a, key.to_string(), &shown, Kind::Value(ValCat::Quantity, Unit(unit)), in_scope, c, many);
        } else if let Some(n) = ordinal_word(w).filter(|&n| {
            // "the third player", "her second book", "in fifth place": a place in an order
            // ("first met" without a determiner is an adverb: it marks the slot exclusive)
            prev.is_some_and(|p| lex.is(p, WordClass::DEFINITE))
                || (n > 1 && !boundary && next.is_some_and(|x| lex.class(x) == WordClass::default()))
        }) {
            push(&mut a, n.to_string(), t, Kind::Value(ValCat::Ordinal, Unit("")), in_scope, c, many);
        } else if let Some(n) =
            valued.then(|| number_word(w)).flatten().or_else(|| single_count(w, prev, next, boundary)).filter(|_| {
                !(w == "one"
                    && matches!(prev, Some("no" | "any" | "every" | "some" | "each" | "the" | "this" | "that")))
            })
        {
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
            push(&mut a, canon, t, Kind::Value(cat, Unit(u)), in_scope, c, many);
        } else if let Some((entry, len)) = category_value(&raw, i, &a.names).filter(|_| !progressive(&raw, i)) {
            consumed = len;
            let shown = written(&raw, i..i + len);
            let kind = Kind::Value(ValCat::Class(entry.category), Unit(""));
            // the place, the stuff or the resulting colour of what the clause tells is one at a
            // time, whatever predicate of many values governs the clause ("we meet in the
            // kitchen", "built the shed out of pine", "painted the fence red")
            let many = many && !one_at_a_time(&entry, &raw, i, len);
            push(&mut a, entry.canonical.to_string(), &shown, kind, in_scope, c, many);
            if len == 1
                && let Some(it) = a.items.last_mut().filter(|it| it.raw_pos == i)
            {
                it.word = stem(w);
            }
        } else if w.chars().any(|c| c.is_alphanumeric()) {
            // a short form written like an identifier ("k8s") is the word it stands for
            if is_identifier(t) && lex.alias(w) == w {
                push(&mut a, ident_key(t), t, Kind::Ident, in_scope, c, many);
            } else {
                // an acronym's plural is the acronym ("PDFs", "PRs": no stemmer strips an s
                // after no vowel)
                let single = plural_acronym(t).map(str::to_lowercase);
                let w = single.as_deref().unwrap_or(w);
                let base = lex.alias(lex.base(w));
                let raw_stem = stem(w);
                let s = if base == w { raw_stem.clone() } else { stem(base) };
                // "is painted blue", "was made of": a passive names a state, not a deed repeated
                let participle = lex.base(w) != w || w.ends_with("ed") || w.ends_with("en");
                let passive = prev.is_some_and(|p| lex.is(p, WordClass::COPULA)) && participle;
                let possession = class.has(WordClass::HAVE)
                    && next.is_some_and(|n| {
                        lex.is(n, WordClass::DEFINITE)
                            || lex.is(n, WordClass::INDEFINITE)
                            || matches!(n, "no" | "two" | "three")
                    });
                // "A and B met during a workshop": where two people met is one occasion ("met
                // Sarah", "met her friends" are many)
                let occasion = s == "meet" && next.is_some_and(|n| OCCASION.contains(&n));
                if possession || (lex.holds_many(&raw_stem) && !passive && !occasion) {
                    // "has a dog", "plays the piano", "has been to": a slot of many values
                    state.many = true;
                }
                if !class.has(WordClass::STOP) {
                    push(&mut a, s.clone(), t, Kind::Word, in_scope, c, many);
                }
                a.stems.insert(s);
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
            if raw.get(k).is_some_and(|r| r.sentence_end) && clause < 31 {
                clause += 1;
                state = ClauseState::default();
            }
        }
        if raw.get(i + consumed - 1).is_some_and(|r| r.boundary) {
            a.end_segment();
        }
        if boundary {
            in_scope = false;
        }
        i += consumed;
    }
    a.end_segment();
    a.mentions.shrink_to_fit();
    a.pending = Vec::new();
    for it in &mut a.items {
        it.exclusive = exclusive_clauses & (1 << it.clause) != 0;
    }
    if !a.past_subject {
        // no auxiliary or copula marks where the subject ends: it is the leading names
        // ("Kelvin Crompton and Kara Parklen collaborated…"), or else the first word
        // ("Billing deploys…"); a pronoun is a subject with no content word ("He passed…")
        let pronoun = raw.first().is_some_and(|r| PRONOUNS.contains(&r.lower.as_str()));
        // a deed that opens the text, its object after it, is its predicate, its subject left
        // unsaid ("Mentoring Aisha, a junior engineer", "Learning the cello"; "Billing deploys
        // on Tuesdays" is of billing)
        const DETERMINERS: [&str; 8] = ["the", "a", "an", "my", "his", "her", "their", "our"];
        let deed = raw.first().is_some_and(|r| {
            r.lower.len() > 5
                && r.lower.ends_with("ing")
                && !lex.first_name(&r.lower)
                && lex.class(&r.lower) == WordClass::default()
        }) && raw
            .get(1)
            .is_some_and(|r| DETERMINERS.contains(&r.lower.as_str()) || r.text.starts_with(char::is_uppercase));
        let names = if pronoun || deed { 0 } else { a.items.iter().take_while(|x| x.name).count().max(1) };
        for (k, it) in a.items.iter_mut().enumerate() {
            it.subject = k < names;
        }
    }
    a.clauses = clause + 1;
    // "the…", "my…", "she…", names first ("Both Matthias and Nicolan…"), or a capitalised first
    // word that is no function word or numeral: a name or a known thing ("Alice…",
    // "Billing…"), not "A man…" or "Two boys…"
    a.definite = raw.first().is_some_and(|r| {
        lex.is(&r.lower, WordClass::DEFINITE)
            || (r.text.starts_with(char::is_uppercase)
                && lex.class(&r.lower) == WordClass::default()
                && number_word(&r.lower).is_none())
    }) || a.items.first().is_some_and(|x| x.name);
    a.first_person = raw.first().is_some_and(|r| matches!(r.lower.as_str(), "i" | "we" | "my" | "our"));
    a.speaker = raw.first().is_some_and(|r| matches!(r.lower.as_str(), "i" | "we"));
    a.change = announce::read(&raw).map(Box::new);
    a.role = roles::read(&raw).map(Box::new);
    a.cues = cues::read(&raw);
    a.norm = norm;
    a.raw = Vec::with_capacity(raw.len());
    a.raw.extend(raw.iter().map(|r| RawFlags {
        boundary: r.boundary,
        connector: connector(&r.lower),
        possessive: r.possessive,
    }));
    a.lower = raw.into_iter().map(|r| r.lower).collect();
    // Analyses are kept (the pipeline caches one per stored memory): no spare capacity.
    a.items.shrink_to_fit();
    a.stems.finish();
    a.norm.shrink_to_fit();
    a.names = Vec::new();
    a.indefinite_heads = Vec::new();
    a.compounds = Vec::new();
    a
}

/// Whether "only" (or "exclusively", "solely") between `prev` and `next` restricts what its
/// clause tells to what it names: not "not only" (which adds), "the only", "my only", "if only"
/// (which name one thing), nor "only recently", "only then", "only a few" (which tell when or
/// how much).
fn restricts(prev: Option<&str>, next: Option<&str>) -> bool {
    const NOT_AFTER: [&str; 12] = ["not", "the", "a", "an", "if", "my", "our", "his", "her", "their", "its", "your"];
    const NOT_BEFORE: [&str; 13] =
        ["recently", "just", "started", "began", "begun", "now", "then", "later", "after", "when", "a", "once", "one"];
    !prev.is_some_and(|p| NOT_AFTER.contains(&p)) && !next.is_some_and(|n| NOT_BEFORE.contains(&n))
}

/// The prepositions after "met" that open the occasion of a meeting, not who was met.
const OCCASION: [&str; 6] = ["during", "at", "in", "on", "through", "while"];

/// Personal pronouns that open a text as its whole subject.
const PRONOUNS: [&str; 7] = ["i", "we", "he", "she", "they", "it", "you"];

/// A length of time said in words, starting at raw token `i` ("an hour", "a full hour", "half
/// an hour"): its amount, unit and length in tokens. Not a rate ("$50 an hour", "twice an hour",
/// "per hour").
fn hour_phrase(raw: &[RawTok], i: usize) -> Option<(&'static str, &'static str, usize)> {
    let word = |k: usize| raw.get(k).map(|r| r.lower.as_str());
    let joined = |k: usize| (i..k).all(|m| !raw[m].boundary);
    let (key, unit, len) = match (word(i)?, word(i + 1), word(i + 2)) {
        ("an", Some("hour"), _) if joined(i + 1) => ("1", "h", 2),
        ("a", Some("full" | "whole"), Some("hour")) if joined(i + 2) => ("1", "h", 3),
        ("half", Some("an"), Some("hour")) if joined(i + 2) => ("30", "min", 3),
        _ => return None,
    };
    let rate = i > 0 && {
        let prev = &raw[i - 1];
        matches!(prev.lower.as_str(), "once" | "twice" | "times" | "per" | "every")
            || prev.text.starts_with(|c: char| c.is_ascii_digit() || "$€£".contains(c))
    };
    (!rate).then_some((key, unit, len))
}

/// "a single" before a noun counts one of it, as "one" does ("lowered to a single approval" /
/// "needs two approvals"); "single" alone is a state ("she is single").
fn single_count(w: &str, prev: Option<&str>, next: Option<&str>, boundary: bool) -> Option<u64> {
    let lex = lexicon();
    (w == "single" && prev == Some("a") && !boundary && next.is_some_and(|n| lex.class(n) == WordClass::default()))
        .then_some(1)
}

/// Per raw token: whether it heads a noun phrase opened by an indefinite determiner ("a",
/// "some", "two") that does not follow a copula or "as" ("is a painter", "works as a nurse"
/// name what someone is). The head
/// is the last word of the phrase: the one before a function word, punctuation or the end.
fn indefinite_heads(raw: &[RawTok]) -> Vec<bool> {
    let lex = lexicon();
    let mut heads = vec![false; raw.len()];
    let mut open = false;
    for (i, r) in raw.iter().enumerate() {
        let class = lex.class(&r.lower);
        let numeral = number_word(&r.lower).is_some() || r.lower.chars().all(|c| c.is_ascii_digit());
        if class.has(WordClass::INDEFINITE) || numeral {
            // "is a painter", "works as a nurse": what someone is, not some one of many
            open = !(i > 0 && (lex.is(&raw[i - 1].lower, WordClass::COPULA) || raw[i - 1].lower == "as"));
            continue;
        }
        if !open {
            continue;
        }
        if class != WordClass::default() {
            open = false;
            continue;
        }
        let ends = r.boundary || raw.get(i + 1).is_none_or(|n| lex.class(&n.lower) != WordClass::default());
        if ends {
            heads[i] = true;
            open = false;
        }
    }
    heads
}

/// Per raw token: whether it is a proper name. A capitalised word inside a sentence is one; so is
/// a capitalised first word followed by another capitalised word ("Jeffren Chavon plays…"), and a
/// title before a capitalised word ("Dr. Callum"). Function words never are.
fn proper_names(raw: &[RawTok]) -> Vec<bool> {
    let lex = lexicon();
    let capitalised = |r: &RawTok| {
        r.text.chars().next().is_some_and(char::is_uppercase)
            && r.text.chars().all(|c| c.is_alphabetic() || c == '.' || c == '\'')
            && lex.class(&r.lower) == WordClass::default()
    };
    let mut names = vec![false; raw.len()];
    for (i, r) in raw.iter().enumerate() {
        if !capitalised(r) {
            continue;
        }
        let starts_sentence = i == 0 || raw[i - 1].sentence_end;
        // (the zone of a time is part of the time: "at 02:00 UTC")
        let zone = i > 0 && !raw[i - 1].boundary && zone_of_time(&r.text, &raw[i - 1].text);
        names[i] = !zone && (!starts_sentence || raw.get(i + 1).is_some_and(|n| !r.boundary && capitalised(n)));
    }
    names
}

/// A short form of a weekday or a month that is part of a person's name ("Jun Larsen", "Sat
/// Nair"): a name of four letters or fewer followed by another name.
fn short_form_in_name(raw: &[RawTok], i: usize, names: &[bool]) -> bool {
    raw[i].lower.len() <= 4 && names.get(i).copied().unwrap_or(false) && names.get(i + 1).copied().unwrap_or(false)
}

/// Whether raw token `i`, a form in -ing, is a verb in a progressive: after a form of "be",
/// with perhaps a negation or an adverb between ("is racing", "isn't jumping", "is greedily
/// drinking"), it is not the noun (the sport, the drink).
fn progressive(raw: &[RawTok], i: usize) -> bool {
    let lex = lexicon();
    if !raw[i].lower.ends_with("ing") {
        return false;
    }
    raw[..i]
        .iter()
        .rev()
        .find(|r| !(lex.is(&r.lower, WordClass::NEGATION) || r.lower.ends_with("ly")))
        .is_some_and(|r| lex.is(&r.lower, WordClass::COPULA))
}

/// The acronym `w` is the plural of, written with a lowercase s ("PDFs", "APIs", "VMs").
fn plural_acronym(w: &str) -> Option<&str> {
    w.strip_suffix('s').filter(|r| r.len() > 1 && r.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
}

/// An acronym as written: two or more capitals or digits, a plural "s" allowed ("API", "S3",
/// "PRs").
pub(super) fn acronym(w: &str) -> bool {
    let w = w.strip_suffix('s').filter(|r| r.len() > 1).unwrap_or(w);
    w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// The longest surface of the lexicon's categories (three words at most) starting at raw token
/// `i`, with a reading that applies as written (a proper noun's reading only when capitalised).
/// Surfaces of several words are read only as proper nouns ("North America", "New York"): a
/// compound of common words ("hard hat", "guitar player") stays words, which match the same
/// words written apart.
/// A proper name reads only as a proper noun: "Cassie" is a person, not the tree, "Lila" not the
/// flower; "Spain" is the country either way, but "Trent Armond" is a person.
fn category_value(raw: &[RawTok], i: usize, names: &[bool]) -> Option<(Entry, usize)> {
    let lex = lexicon();
    let name = names.get(i).copied().unwrap_or(false);
    // a name next to another name is part of a person's name ("Trent Armond", "Paris Hilton"),
    // unless the two are one surface of the lexicon ("New York"); an acronym beside it is its
    // short form or another thing ("Kubernetes (EKS)", "Postgres RDS"), not a surname
    let in_a_run = name
        && !acronym(&raw[i].text)
        && ((i > 0 && names[i - 1] && !raw[i - 1].boundary && !acronym(&raw[i - 1].text))
            || (names.get(i + 1).copied().unwrap_or(false) && !raw[i].boundary && !acronym(&raw[i + 1].text)));
    let applies = |surface: &str, first: &RawTok| {
        let capital = first.text.chars().next().is_some_and(char::is_uppercase);
        lex.readings(surface).iter().copied().find(|e| if name { e.capitalised } else { capital || !e.capitalised })
    };
    if lex.starts_phrase(&raw[i].lower) {
        let mut surface = raw[i].lower.clone();
        let mut found = None;
        for len in 2..=3 {
            let Some(r) = raw.get(i + len - 1) else { break };
            if raw[i + len - 2].boundary {
                break;
            }
            surface.push(' ');
            surface.push_str(&r.lower);
            if let Some(e) = applies(&surface, &raw[i]).filter(|e| e.capitalised) {
                found = Some((e, len));
            }
        }
        if found.is_some() {
            return found;
        }
    }
    // a part of a compound is not a value of its own ("maple-catalog", "iron-planner")
    if in_a_run || raw[i].in_compound {
        return None;
    }
    applies(&raw[i].lower, &raw[i]).map(|e| (e, 1))
}

/// Whether the category value at raw tokens `i..i + len` is one at a time where it stands
/// (`one_value.tsv`): after a preposition of its category (for a people's adjective before a
/// noun, of `nationality`) that opens its phrase, with determiners and at most two modifiers
/// between ("in the old kitchen", "out of pine"); or, for `result`, ending a phrase right after
/// its object ("painted the fence red", "likes her coffee black"; not "sells red paint", where it
/// modifies a noun, nor "likes red", where it is the object).
fn one_at_a_time(entry: &Entry, raw: &[RawTok], i: usize, len: usize) -> bool {
    let lex = lexicon();
    let category = lex.category_name(entry.category);
    // a people's adjective before a noun says what that one thing is: "played guitar for the
    // Australian band" (the nationality of the band, not one of the things played)
    let surface: Vec<&str> = raw[i..i + len].iter().map(|r| r.lower.as_str()).collect();
    let before_noun =
        !raw[i + len - 1].boundary && raw.get(i + len).is_some_and(|n| lex.class(&n.lower) == WordClass::default());
    let people = category == "country" && entry.canonical != surface.join(" ") && before_noun;
    let markers = lex.one_value_markers(if people { "nationality" } else { category });
    if markers.is_empty() || i == 0 {
        return false;
    }
    let opened_by = |k: usize| {
        markers.iter().filter(|m| **m != "result").any(|m| {
            let words: Vec<&str> = m.split(' ').collect();
            k >= words.len()
                && words.iter().enumerate().all(|(n, w)| raw[k - words.len() + n].lower == *w)
                && !raw[k - words.len()..k].iter().any(|r| r.boundary)
        })
    };
    let mut k = i;
    let mut modifiers = 0;
    while k > 0 && !raw[k - 1].boundary {
        if opened_by(k) {
            return true;
        }
        let class = lex.class(&raw[k - 1].lower);
        if class.has(WordClass::DEFINITE) || class.has(WordClass::INDEFINITE) {
            k -= 1;
        } else if class == WordClass::default() && modifiers < 2 {
            modifiers += 1;
            k -= 1;
        } else {
            break;
        }
    }
    if !markers.contains(&"result") || raw[i - 1].boundary {
        return false;
    }
    let prev = raw[i - 1].lower.as_str();
    let after_object =
        (lex.class(prev) == WordClass::default() && !lex.holds_many(&stem(prev))) || matches!(prev, "it" | "them");
    let ends =
        raw[i + len - 1].boundary || raw.get(i + len).is_none_or(|n| lex.class(&n.lower) != WordClass::default());
    after_object && ends
}

/// A number followed by a unit word becomes a quantity, by am/pm a time.
pub(super) fn merge_following(
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
