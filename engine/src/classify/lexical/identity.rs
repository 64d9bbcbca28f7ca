//! Fact identity (docs/design.md §15): what a memory is about — its subject, attribute and
//! qualifiers — apart from the value it gives. Agents rarely repeat the old wording: "Docs moved
//! over to Mintlify" updates "The docs site is built with Docusaurus" with one shared word. Two
//! memories are of one identity when they share what the fact is about (a content word that is
//! not a value, or an alias of one), or when the embedder's cosine says so; they are then two
//! versions of one fact when the evidence says the value changed:
//!
//! - the incoming memory says what it names holds no more ("dropped piano", "X was cancelled",
//!   "no longer uses X") and the stored one says it holds (`ended_value`);
//! - it names the stored memory's value as the old one ("rather than Stripe", "from Kofi", "NIH,
//!   not NSF", "the 50 was a typo"): `named_old_value`;
//! - it reverses a rule or a preference the stored one states, saying it is new ("is fine now",
//!   "allowed again", "no more"): `reversed_rule`;
//! - it gives another value of the same kind (a name for a name, a time for a time, a city for a
//!   city), saying that something changed ("now", "moved", "raised", "took over", "as of",
//!   "correction"), or restating every other word of the fact, or renaming what the stored fact
//!   names in its words ("Renamed the default branch to main" / "Default branch is master"), or
//!   naming the stored fact's holder leaving beside another person ("Kenji took over when Dana
//!   went to Growth"): `changed_value`.
//!
//! What it adds beside another ("also", "too"), a one-off ("today") or a plan ("considering")
//! changes nothing, and neither does a change of another subject: two people named where each
//! fact's subject stands are two facts, and so are the speaker (said, or left unsaid: "Dropped
//! piano") and a person a text opens with.

use super::analysis::{Analysis, Item, Kind};
use super::announce::past_event;
use super::cues::CueKind;
use super::gates::Pair;
use super::lexicon::{WordClass, lexicon};
use super::matching::days_of_month;
use super::roles::is_role_word;
use super::values::{QualCat, ValCat};
use super::verdict::{Gate, Relation, Verdict};

/// The gates of this module: weaker evidence than the word-by-word gates', so a save's pipeline
/// lets them decide only for the candidate they identify best (one fact changes one fact).
pub const IDENTITY_GATES: [&str; 4] = ["ended_value", "named_old_value", "reversed_rule", "changed_value"];

/// Stems that name whom a memory is about without saying what about it: shared alone, they make
/// no identity (the assistant's "User …").
const GENERIC: [&str; 4] = ["user", "client", "custom", "person"];

/// A value: a number, a time, a date, an identifier, a value of the lexicon's categories, a
/// proper name, or a qualifier where no subject stands ("Prod moved to eu-west-1": the region
/// is what moved, not whose fact it is).
fn valued(x: &Item) -> bool {
    match x.kind {
        Kind::Value(..) | Kind::Ident => true,
        Kind::Word => x.name || opening_name(x),
        // an environment names which fact it is ("staging", "production"), never the value
        Kind::Qual(c) => !x.subject && c != QualCat::Environment,
    }
}

/// A given name that opens its text ("Marco is leading frontend now"): a name, though written
/// where any word is capitalised.
fn opening_name(x: &Item) -> bool {
    x.raw_pos == 0 && x.shown.starts_with(char::is_uppercase) && lexicon().first_name(&x.shown.to_lowercase())
}

pub(super) fn generic(x: &Item) -> bool {
    x.kind == Kind::Word && GENERIC.contains(&x.key.as_str())
}

/// A person where a fact's subject stands: who the fact is about, not a value of it.
fn subject_person(x: &Item) -> bool {
    x.person() && x.subject
}

/// Who a fact is about, as far as words tell: a given name where the subject stands or that
/// opens the text ("Caroline …", "Maria's cousin …"); a product's name where the subject
/// stands ("Netflix", "Sentry") is what the fact is about.
fn subject_like(an: &Analysis, k: usize) -> bool {
    let x = &an.items[k];
    let opens = k == 0 && x.raw_pos == 0 && x.shown.starts_with(char::is_uppercase);
    !x.acronym() && !generic(x) && (subject_person(x) || opens) && lexicon().first_name(&x.shown.to_lowercase())
}

/// A person a fact is about: where the subject stands, or a given name opening the text ("Omar
/// from design …").
fn whom(an: &Analysis, k: usize) -> bool {
    subject_person(&an.items[k]) || subject_like(an, k)
}

/// Whether `new` can be the value that replaced `old`: values of one category (a quantity's unit
/// may be left unsaid on one side; a day of the month written either way), or two names (a name,
/// an identifier, a proper noun of the lexicon).
fn same_kind(new: &Item, old: &Item) -> bool {
    match (new.kind, old.kind) {
        (Kind::Value(c, u), Kind::Value(d, v)) => {
            let amount = |c: ValCat| matches!(c, ValCat::Number | ValCat::Quantity);
            (c == d && (u == v || u.0.is_empty() || v.0.is_empty()))
                || (amount(c) && amount(d))
                || days_of_month(new, old)
        }
        (Kind::Qual(c), Kind::Qual(d)) => c == d,
        // (an identifier stands only for an identifier: "Lumen" is no new value of "1:1"; a role
        // for a role or a person: "Rollbar" is no new value of "the CTO")
        _ => {
            let role_for_thing = |x: &Item, y: &Item| is_role_word(x) && y.thing() && !is_role_word(y);
            named(new)
                && named(old)
                && new.name_of_one_sort(old)
                && (new.kind == Kind::Ident) == (old.kind == Kind::Ident)
                && !role_for_thing(new, old)
                && !role_for_thing(old, new)
        }
    }
}

/// Whether `new` can be the value that replaced `old` when nothing but the embedder's cosine
/// says the two speak of one thing: values of one category ("Moved the blog to Cloudflare
/// Pages" gives no new value of "Leading the CRM migration", however near the two are in topic),
/// values of one sort in one unit (not "the 21st" for "two orgs", nor "16" for "the 21st"), two
/// identifiers, two roles, or two names the lexicon does not know as a thing's.
fn same_category_or_name(new: &Item, old: &Item) -> bool {
    match (new.kind, old.kind) {
        (Kind::Value(ValCat::Class(c), _), Kind::Value(ValCat::Class(d), _)) => c == d,
        (Kind::Value(c, u), Kind::Value(d, v)) => {
            same_kind(new, old) && !days_of_month(new, old) && (c == d || (!u.0.is_empty() && u == v))
        }
        (Kind::Qual(c), Kind::Qual(d)) => c == d,
        (Kind::Ident, Kind::Ident) => true,
        (Kind::Word, Kind::Word) if new.acronym() && old.acronym() => is_role_word(new) && is_role_word(old),
        (Kind::Word, Kind::Word) => named(new) && named(old) && !new.thing() && !old.thing(),
        _ => false,
    }
}

/// Whether `new` and `old` are of one category, strictly: what a change of a fact about its
/// subject alone needs ("Lives in Lisbon" / "Moved to Porto", not "Lives in Lisbon" / "Moved to
/// Figma").
fn same_category(new: &Item, old: &Item) -> bool {
    match (new.kind, old.kind) {
        (Kind::Value(ValCat::Class(c), _), Kind::Value(ValCat::Class(d), _)) => c == d,
        (Kind::Qual(c), Kind::Qual(d)) => c == d,
        _ => false,
    }
}

/// Whether a fact is about the speaker or the user, said or left unsaid: "I …", "we …", "my …",
/// "User …", or a bare predicate ("Lives in Lisbon", "Moved to Porto").
fn personal(an: &Analysis) -> bool {
    an.speaker || an.first_person || an.items.first().is_some_and(generic) || bare(an)
}

/// Whether a text opens like a bare predicate: a word of change or a word in -s.
fn bare(an: &Analysis) -> bool {
    an.items.first().is_some_and(|x| x.raw_pos == 0 && x.kind == Kind::Word && !x.name)
        && (an.cues.found.first().is_some_and(|c| c.at == 0) || an.items[0].shown.ends_with('s'))
}

/// A bare predicate, its subject left unsaid: the speaker's or the user's fact as an agent notes
/// it ("Moved to Porto", "Takes saxophone lessons"); a plural noun before its verb is a subject
/// said ("Escalations are Tomás's now").
fn unsaid_subject(an: &Analysis) -> bool {
    let lex = lexicon();
    bare(an) && !an.lower.get(1).is_some_and(|w| lex.is(w, WordClass::COPULA) || lex.is(w, WordClass::HAVE))
}

/// A fact that opens with a person's given name, the person doing or being what it says, or
/// theirs: the name before its verb, a surname or "from", or written as a possessive ("Tim has
/// been learning…", "Maria drinks…", "Omar from design…", "Tim's favourite song…"). "Max line
/// length: 80" opens with a word, not a person.
fn opens_with_person(an: &Analysis) -> bool {
    if an.items.is_empty() || !subject_like(an, 0) {
        return false;
    }
    if an.raw.first().is_some_and(|r| r.possessive) {
        return true;
    }
    let Some(next) = an.lower.get(1) else { return false };
    let verb = lexicon().is(next, WordClass::VERB) || (next.ends_with('s') && !next.ends_with("ss"));
    let surname = an.items.get(1).is_some_and(|x| x.raw_pos == 1 && x.name);
    verb || surname || next == "from"
}

/// A named thing: a proper name, an identifier, a proper noun of the lexicon.
fn named(x: &Item) -> bool {
    match x.kind {
        Kind::Ident => true,
        Kind::Word => x.name || opening_name(x),
        Kind::Value(ValCat::Class(_), _) => x.shown.starts_with(char::is_uppercase),
        _ => false,
    }
}

/// Whether two matched items are the same thing as written: a name as a name ("Teams" is not
/// "team chat"); a word that opens its text is capitalised whatever it is.
fn same_form(x: &Item, y: &Item) -> bool {
    // a word matched by its beginning ("pepper" / "pepperoni") is one word only when neither is
    // a name
    if x.key != y.key {
        return !named(x) && !named(y) && !opening_capital(x) && !opening_capital(y);
    }
    x.raw_pos == 0
        || y.raw_pos == 0
        || named(x) == named(y)
        || in_path_as(x, y)
        || in_path_as(y, x)
        || abbreviates(x, y)
        || abbreviates(y, x)
}

/// An acronym the lexicon reads as a common word, beside that word written small ("DB" /
/// "database", "PR" / "pull request"): one thing, not a name and a word.
fn abbreviates(x: &Item, y: &Item) -> bool {
    x.acronym() && x.key != x.shown.to_lowercase() && y.kind == Kind::Word && !named(y)
}

/// A word of a path or compound written small is the acronym written large elsewhere
/// ("packages/ui" / "shared UI components").
fn in_path_as(x: &Item, y: &Item) -> bool {
    x.compound && x.kind == Kind::Word && !x.shown.chars().any(char::is_uppercase) && y.acronym()
}

/// A word capitalised because it opens its text (or a name that does).
fn opening_capital(x: &Item) -> bool {
    x.raw_pos == 0 && x.shown.starts_with(char::is_uppercase)
}

/// Verbs that say little of what a fact is about: shared alone, they make no identity ("is
/// called Beacon" / "asked to be called Bobby"; "builds the rotation" / "is built with
/// Docusaurus").
const LIGHT: [&str; 26] = [
    "call", "name", "use", "get", "make", "take", "give", "keep", "put", "set", "go", "come", "see", "look", "find",
    "need", "think", "know", "say", "tell", "ask", "tri", "help", "build", "happen", "occur",
];

/// (A light verb inside a compound names a thing: "on-call", "set-up".)
fn light(x: &Item) -> bool {
    x.kind == Kind::Word && !x.compound && LIGHT.contains(&x.key.as_str())
}

/// The words of a time phrase ("last month", "next week", "every day"): they say when, not what
/// a fact is about.
const TIME_WORDS: [&str; 8] = ["last", "next", "month", "week", "year", "day", "weekend", "tonight"];

fn time_word(x: &Item) -> bool {
    x.kind == Kind::Word && TIME_WORDS.iter().any(|w| *w == x.key || *w == x.word)
}

/// What the identity of the pair rests on, for the reason.
fn basis(p: &Pair, topic: &[usize]) -> String {
    if !topic.is_empty() {
        format!("both speak of {}", p.a.shown(topic))
    } else if let Some((c, min)) = p.cosine.filter(|(c, min)| c >= min) {
        format!("cosine {c:.3} ≥ {min:.2} says they speak of one thing")
    } else {
        "both speak of the same subject".to_string()
    }
}

/// The identity gates, in order; `None` when the pair is not one fact changed.
pub(super) fn changed_identity(p: &mut Pair) -> Option<Verdict> {
    let (a, b) = (p.a, p.b);
    // added beside another, once, as a plan or a guess: nothing held changes
    if a.cues.has(CueKind::Beside) || hedges_its_change(a) || a.cues.has(CueKind::Once) {
        return None;
    }
    // an occasion is not a state a change overturns
    if b.cues.has(CueKind::Once) || b.cues.has(CueKind::Beside) {
        return None;
    }
    let pa = p.pa.clone();
    let partner = |k: usize| pa[k];
    let handover = a.cues.has(CueKind::Handover);
    // two people where the subjects stand: two facts, unless one takes over from the other
    let other_subject = |x: &Analysis, y: &Analysis, x_is_a: bool| {
        (0..x.items.len()).any(|k| whom(x, k) && if x_is_a { partner(k).is_none() } else { !p.used[k] })
            && (0..y.items.len()).any(|j| whom(y, j))
    };
    if !handover && (other_subject(a, b, true) && other_subject(b, a, false)) {
        return None;
    }
    // the speaker on one side, someone else on the other ("My brother now works at Meta" / "I
    // work at Google"; "We switched from Slack" / "Alice uses Slack"): two subjects
    let someone = |x: &Analysis| (x.first_person && !x.speaker) || opens_with_person(x);
    if (a.speaker && someone(b)) || (b.speaker && someone(a)) {
        return None;
    }
    // the speaker left unsaid on one side, a person named on the other ("Dropped piano" / "Tim
    // is learning the piano"), unless the speaker takes over from that person
    // (a correction that opens its text says nothing of whose fact it is: "Correction: Omar's …")
    let unsaid = |x: &Analysis| unsaid_subject(x) && !x.cues.has(CueKind::Correction) && !handover;
    if (unsaid(a) && opens_with_person(b)) || (unsaid(b) && opens_with_person(a)) {
        return None;
    }
    // each opens with a capitalised word the other does not hold: two subjects ("John
    // organized…" / "James has worked…")
    // (an opening verb of change is no subject: "Cancelled Netflix…", "Moved to Porto…")
    let opener = |x: &Analysis, x_is_a: bool| {
        !x.items.is_empty()
            && subject_like(x, 0)
            && !x.cues.found.iter().any(|c| c.at == x.items[0].raw_pos)
            && if x_is_a { partner(0).is_none() } else { !p.used[0] }
    };
    if !handover && opener(a, true) && opener(b, false) {
        return None;
    }
    // what both speak of, besides whom
    // (a word both open with names whom the facts are about, unless one side writes it lower
    // case inside a sentence: "Docs moved…" / "The docs site…")
    let topic: Vec<usize> = (0..a.items.len())
        .filter(|&k| partner(k).is_some_and(|j| !(subject_like(a, k) && subject_like(b, j))))
        .filter(|&k| !generic(&a.items[k]) && !subject_person(&a.items[k]) && !light(&a.items[k]))
        .filter(|&k| partner(k).is_some_and(|j| same_form(&a.items[k], &b.items[j])))
        // (a number or a date both hold says when or how much, not what about; a weekday, a place
        // says more)
        .filter(|&k| {
            !matches!(
                a.items[k].kind,
                Kind::Value(ValCat::Number | ValCat::Quantity | ValCat::Date | ValCat::Month | ValCat::RelDay, _)
            )
        })
        // (nor do the words that say it changed: "since the migration"; nor a time phrase: "last
        // month" is when, not what about)
        .filter(|&k| !a.cues.spans(a.items[k].raw_pos) && !time_word(&a.items[k]) && !when_of_change(a, k))
        // (nor does a word the stored memory says its own change with: "Upgraded the NAS disks")
        .filter(|&k| partner(k).is_some_and(|j| !b.cues.spans(b.items[j].raw_pos)))
        .collect();
    let admitted = p.cosine.is_some_and(|(c, min)| c >= min);
    p.note("identity_topic_words", topic.len() as f64);
    // what the stored fact says besides its values and whom it is about: the shared words must
    // be a good part of it (a long story shares a word or two with anything)
    let about = (0..b.items.len())
        .filter(|&j| !valued(&b.items[j]) && !generic(&b.items[j]) && !subject_like(b, j) && !light(&b.items[j]))
        .count();
    let covered = admitted || topic.len() * COVERAGE_DEN >= about.max(1) * COVERAGE_NUM;
    p.note("identity_coverage", topic.len() as f64 / about.max(1) as f64);
    let cue = a.cues.change().cloned();
    // a name shared is whom or what the facts mention; one fact shares a word of what it says
    let worded = admitted
        || topic.iter().any(|&k| {
            let x = &a.items[k];
            (x.kind == Kind::Word && ((!x.name && !opening_name(x)) || x.acronym()))
                || matches!(x.kind, Kind::Ident | Kind::Value(..) | Kind::Qual(QualCat::Environment))
        });

    // 1. what the incoming memory says ended, the stored one holds
    // (what frames it as an undertaking, or the deed it was done by, is not what ended: "Shelved
    // the podcast idea", "We stopped assigning buddies")
    let all_ended = a.items_at(&a.cues.ended);
    let b_planned = !all_ended.is_empty() && planned(b);
    let ended: Vec<usize> =
        all_ended.iter().copied().filter(|&k| !framing(a, k, &all_ended, b_planned) || partner(k).is_some()).collect();
    if a.cues.has(CueKind::Ended) && !ended.is_empty() && b.change.is_none() && !b.cues.has(CueKind::Ended) {
        let held: Vec<usize> = ended
            .iter()
            .copied()
            .filter(|&k| partner(k).is_some_and(|j| !b.items[j].negated && same_form(&a.items[k], &b.items[j])))
            // a person ends as a value ("Gloria retired" / "Executive assistant: Gloria"), not as
            // whom the stored fact is about
            .filter(|&k| !generic(&a.items[k]) && partner(k).is_some_and(|j| !subject_like(b, j)))
            // a thing named otherwise is another thing ("Cancelled the SMS importer" / "a CSV
            // importer")
            .filter(|&k| partner(k).is_none_or(|j| !named_otherwise(a, k, b, j)))
            .collect();
        let enough = held.iter().any(|&k| valued(&a.items[k]))
            || held.len() >= 2
            || (!held.is_empty() && held.len() == ended.len());
        if enough && !past_event(b) {
            let shown = a.shown(&held);
            let cue = cue.as_ref().map_or("no longer", |c| c.shown.as_str());
            let reason =
                format!("the incoming memory says {shown} holds no more (\"{cue}\"); the stored one says it does");
            return Some(p.verdict(Relation::Contradictory, Gate::EndedValue, reason));
        }
    }

    // 2. the incoming memory names the stored one's value as the old one
    let mut old = a.items_at(&a.cues.old);
    old.extend(told_of_after(a, &partner));
    // held as what it is: a name as a name ("Teams" is not the stored "team chat")
    let held: Vec<usize> = old
        .iter()
        .copied()
        .filter(|&k| partner(k).is_some_and(|j| !b.items[j].negated && same_form(&a.items[k], &b.items[j])))
        .collect();
    // a name, or the whole of what it names ("from her home country" is not held by "a loving
    // home")
    if !held.is_empty() && (held.len() == old.len() || held.iter().any(|&k| valued(&a.items[k]))) {
        let rest = topic.iter().filter(|k| !old.contains(k)).count();
        // a rename names the old name, which is then all the identity there is: a name on both sides
        let renamed = a.cues.renamed
            && held.iter().any(|&k| {
                partner(k).is_some_and(|j| {
                    named(&b.items[j]) || b.items[j].compound || matches!(b.items[j].kind, Kind::Ident)
                })
            });
        // a correction that names the wrong value the stored fact holds, of what or whom it
        // speaks ("Correction: Lena's last day is June 14, not end of May" / "Lena from sales is
        // leaving at the end of May")
        let corrected = a.cues.has(CueKind::Correction)
            && held.iter().any(|&k| valued(&a.items[k]))
            && (rest > 0
                || (0..a.items.len()).any(|k| partner(k).is_some_and(|j| subject_like(a, k) && subject_like(b, j))));
        // (the cosine alone stands for the topic only when a value is named: "short paragraphs,
        // not lists" names no old value of "likes commit messages with bullet lists")
        let valued_old = held.iter().any(|&k| valued(&a.items[k]));
        if (rest > 0 && covered) || (admitted && valued_old) || renamed || corrected {
            let shown = a.shown(&held);
            let reason = format!(
                "the incoming memory names {shown} as the old value; the stored one holds it ({})",
                basis(p, &topic)
            );
            return Some(p.verdict(Relation::Contradictory, Gate::NamedOldValue, reason));
        }
    }

    if let Some(verdict) = renamed_described(p, &old, &held) {
        return Some(verdict);
    }

    let Some(cue) = cue else { return strong_identity(p, &topic) };

    // 3. a rule or a preference reversed, said to be new
    if matches!(cue.kind, CueKind::Now | CueKind::Again | CueKind::Ended | CueKind::Correction | CueKind::Since) {
        let flipped: Vec<usize> = (0..a.items.len())
            .filter(|&k| partner(k).is_some_and(|j| a.items[k].negated != b.items[j].negated))
            .collect();
        // a prohibition lifted says so ("is fine now", "allowed again"): one word of the rule
        // is enough then
        // (all but one word of what the prohibition forbids: "fine to push to main" lifts "never
        // push directly to main", "fine to push to the docs branch" does not)
        let forbidden: Vec<usize> = (0..b.items.len()).filter(|&j| b.items[j].negated).collect();
        let restated = forbidden.iter().filter(|&&j| p.used[j]).count();
        let permits = a.negs == 0
            && b.negs > 0
            && PERMISSIONS.iter().any(|w| a.lower.iter().any(|x| x == w))
            && restated + 1 >= forbidden.len().max(2);
        let enough = if permits { !topic.is_empty() } else { topic.len() >= 2.min(a.items.len()) };
        if !flipped.is_empty() && enough && covered && worded {
            let reason = format!(
                "the incoming memory reverses what the stored one says of {} (\"{}\")",
                a.shown(&flipped),
                cue.shown
            );
            return Some(p.verdict(Relation::Contradictory, Gate::ReversedRule, reason));
        }
    }

    if let Some(verdict) = handed_on(p, &topic, &cue.shown).or_else(|| moved_unit(p, &cue)) {
        return Some(verdict);
    }

    // 4. another value of the same kind, said to be new ("instead of" and an ending speak of
    // the old value they name, above)
    if cue.kind == CueKind::Ended || (cue.kind == CueKind::Instead && !a.cues.old.is_empty()) {
        return None;
    }
    if past_event(b) && !matches!(cue.kind, CueKind::Correction) {
        return None;
    }
    // an old value named that the stored memory does not hold: its own value is not known to be
    // the one that changed ("We switched from Slack to Teams" / "We use Discord")
    if !old.is_empty() && held.is_empty() {
        return None;
    }
    // Two tools of one purpose, a change said: the attribute is what they are for, however the
    // rest is worded ("User switched to Zed" / "Preferred editor: Neovim"; "Exceptions get
    // reported to Rollbar now" / "Error tracking: Sentry"). One short fact, not a story that
    // names a tool in passing.
    // (a thing moved that it does not speak of while it speaks of another is another fact: "We
    // moved the payroll export to CircleCI" / "The blog is hosted on Jenkins")
    let moved_elsewhere = a.change.as_ref().is_some_and(|s| {
        let moved = a.items_at(&s.topic);
        !s.subject_topic && !moved.is_empty() && moved.iter().all(|&k| partner(k).is_none())
    }) && (0..b.items.len()).any(|j| {
        let y = &b.items[j];
        y.subject && !p.used[j] && y.kind == Kind::Word && !y.acronym() && !generic(y) && !light(y) && !valued(y)
    });
    if b.items.len() <= SHORT_FACT
        && a.cues.old.is_empty()
        && !moved_elsewhere
        && let Some((x, y)) = replaced(p, same_product)
    {
        let (new, was) = (&a.items[x], &b.items[y]);
        let category = match was.kind {
            Kind::Value(ValCat::Class(c), _) => lexicon().category_name(c).replace('_', " "),
            _ => "value".to_string(),
        };
        let reason = format!(
            "the incoming memory gives {} where the stored one has {} (\"{}\"; both are the {} in use)",
            new.shown, was.shown, cue.shown, category
        );
        return Some(p.verdict(Relation::Contradictory, Gate::ChangedValue, reason));
    }
    // The cosine alone, no word of what the fact is about shared, says the two are near in topic:
    // one fact only when the values are of one category.
    // (a verb of raising or lowering speaks of an amount, a date or a time it went to ("30mg"
    // written as one token too), not of a name elsewhere in its sentence: "Scaled prod down to 8
    // nodes to cut the AWS bill")
    // (when it gives one: "born and raised in Japan" raises no amount)
    let measured = matches!(cue.kind, CueKind::Raised | CueKind::Lowered)
        && (0..a.items.len()).any(|k| {
            p.pa[k].is_none()
                && match a.items[k].kind {
                    Kind::Ident => true,
                    Kind::Value(c, _) => !matches!(c, ValCat::Class(_)),
                    _ => false,
                }
        });
    let kin = |new: &Item, old: &Item| {
        !(measured && matches!(new.kind, Kind::Word | Kind::Value(ValCat::Class(_), _)))
            && if topic.is_empty() && admitted { same_category_or_name(new, old) } else { same_kind(new, old) }
    };
    let (x, y) = replaced(p, kin)?;
    let (new, was) = (&a.items[x], &b.items[y]);
    // one person for another with nothing but the cosine between them: only a handover or a
    // correction says it is the same role ("Lin got promoted to CTO" / "Mobile team lead is Irene")
    if topic.is_empty()
        && admitted
        && (new.given_name() || was.given_name())
        && !matches!(cue.kind, CueKind::Handover | CueKind::Correction)
    {
        return None;
    }
    // Nothing shared but whom the facts are about: only a move of one short fact's value into
    // another of its category ("User relocated to Amsterdam" / "User is based in Berlin").
    let subject_only = topic.is_empty() && !admitted;
    if subject_only
        && !(same_category(new, was)
            && cue.kind == CueKind::Change
            && b.items.len() <= SHORT_FACT
            && personal(a)
            && personal(b))
    {
        return None;
    }
    // An amount raised or lowered says what changed: the words shared need only name what it
    // counts ("Scaled web down to 3 pods" / "Web tier runs 6 replicas in prod").
    let moved_amount = matches!(cue.kind, CueKind::Raised | CueKind::Lowered) && amount(new) && amount(was);
    if !subject_only && !((covered || moved_amount) && (worded || cue.kind == CueKind::Correction)) {
        return None;
    }
    let reason = format!(
        "the incoming memory gives {} where the stored one has {} (\"{}\"; {})",
        new.shown,
        was.shown,
        cue.shown,
        basis(p, &topic)
    );
    Some(p.verdict(Relation::Contradictory, Gate::ChangedValue, reason))
}

/// The stored fact's value that a correction or a change said to be new holds only in a clause
/// or phrase (a segment) after the one giving its new value of the same kind, where the new
/// value's segment says what the stored fact is about and the old value's says something else of
/// it ("Correction: board meets on the 21st; the 18th is only the prep session", "Retros get a
/// full hour now, half an hour was never enough"). A later segment that says what the stored fact
/// says restates it ("Actually the bus leaves at 7:10, the train at 7:45" / "The train leaves at
/// 7:45"). The items of `a`; empty without such a cue.
fn told_of_after(a: &Analysis, partner: &dyn Fn(usize) -> Option<usize>) -> Vec<usize> {
    if !a.cues.has(CueKind::Correction) && !a.cues.has(CueKind::Now) {
        return Vec::new();
    }
    let value = |k: usize| matches!(a.items[k].kind, Kind::Value(..));
    // a word of the stored fact in segment `s`
    let speaks_of = |s: u8| (0..a.items.len()).any(|m| a.items[m].segment == s && !value(m) && partner(m).is_some());
    (0..a.items.len())
        .filter(|&k| value(k) && partner(k).is_some() && !speaks_of(a.items[k].segment))
        .filter(|&k| {
            (0..a.items.len()).any(|n| {
                a.items[n].segment < a.items[k].segment
                    && partner(n).is_none()
                    && !a.items[n].negated
                    && value(n)
                    && same_kind(&a.items[n], &a.items[k])
                    && speaks_of(a.items[n].segment)
            })
        })
        .collect()
}

/// Whether a plan or a guess in `an` hedges what it says changed: a tentative or hedging word
/// before its change or beside it; one after it, past a comma or a dash, hedges only what
/// follows ("dropped from 2.0, maybe back in 2.1"; "Dropped Jira in March, maybe back in the
/// fall").
fn hedges_its_change(an: &Analysis) -> bool {
    let mut guesses = an.cues.found.iter().filter(|c| c.kind == CueKind::Tentative).map(|c| c.at).chain(an.hedged_at);
    match an.cues.found.iter().find(|c| c.kind.of_change()) {
        Some(change) => guesses.any(|at| at < change.at || !an.raw[change.at..at].iter().any(|r| r.boundary)),
        None => guesses.next().is_some(),
    }
}

/// Nouns that frame a thing as an undertaking ("the podcast idea", "the flags project").
const UNDERTAKINGS: [&str; 8] = ["idea", "project", "plan", "initiative", "effort", "program", "work", "thing"];

/// Whether a memory tells of something planned or under way ("Planning to launch a podcast",
/// "We are building a flags service").
fn planned(an: &Analysis) -> bool {
    an.cues.has(CueKind::Tentative)
        || an.lower.windows(2).any(|p| matches!(p[0].as_str(), "is" | "are" | "am" | "re") && p[1].ends_with("ing"))
}

/// Whether item `k` of what `an` says ended frames it rather than names it: the deed that opens
/// it ("assigning buddies": the buddies ended), or, when the stored memory tells it as planned or
/// under way (`planned`), a noun of [`UNDERTAKINGS`] ("Shelved the podcast idea" / "Planning to
/// launch a podcast"; not of "Listens to a podcast on the commute").
fn framing(an: &Analysis, k: usize, ended: &[usize], planned: bool) -> bool {
    let x = &an.items[k];
    let w = x.shown.to_lowercase();
    let deed = ended.first() == Some(&k) && ended.len() > 1 && w.len() > 5 && w.ends_with("ing");
    x.kind == Kind::Word && (deed || (planned && UNDERTAKINGS.contains(&w.trim_end_matches('s'))))
}

/// The words that lift a prohibition ("pushing to main is fine now").
const PERMISSIONS: [&str; 6] = ["fine", "ok", "okay", "allowed", "permitted", "acceptable"];

/// The least share of the stored fact's words (besides its values and subject) the two must
/// share to be one fact by words alone: a third.
const COVERAGE_NUM: usize = 1;
const COVERAGE_DEN: usize = 3;

/// The most content items of the stored fact whose value a change of its subject alone can
/// replace: one short fact, not a story about someone.
const SHORT_FACT: usize = 6;

/// A number or a quantity.
fn amount(x: &Item) -> bool {
    matches!(x.kind, Kind::Value(ValCat::Number | ValCat::Quantity, _))
}

/// Whether two amounts count the same thing: one unit ("30s" / "60 seconds"), or the same word
/// after each ("3 projects" / "10 projects"), or the new one is what a change went to ("cut to
/// 300/min").
fn same_measure(p: &Pair, x: usize, y: usize) -> bool {
    let (new, was) = (&p.a.items[x], &p.b.items[y]);
    let (Kind::Value(_, u), Kind::Value(_, v)) = (new.kind, was.kind) else { return true };
    if !(amount(new) && amount(was)) {
        return true;
    }
    // an amount changed from one it names changes the fact that holds that one ("cut the
    // reconciliation from 4 minutes to 40 seconds" / "stuck for more than 24 hours")
    let named_from =
        p.a.items
            .iter()
            .find(|o| amount(o) && o.raw_pos > 0 && p.a.lower.get(o.raw_pos - 1).is_some_and(|w| w == "from"));
    if named_from.is_some_and(|o| o.key != was.key) {
        return false;
    }
    // how often is no how long ("every 30 minutes" / "kept for 2 hours")
    let period = |an: &Analysis, k: usize| {
        let at = an.items[k].raw_pos;
        at > 0 && matches!(an.lower.get(at - 1).map(String::as_str), Some("every" | "each"))
    };
    if period(p.a, x) != period(p.b, y) {
        return false;
    }
    if !u.0.is_empty() && (u == v || one_dimension(u.0, v.0)) {
        return true;
    }
    // a number of six digits or more is an identifier (a member or an account number), no amount
    let id_like = |x: &Item| x.key.len() >= 6 && x.key.chars().all(|c| c.is_ascii_digit());
    if id_like(new) != id_like(was) {
        return false;
    }
    // a version of a named thing ("PG 16", "Node 18") is no amount of a unit ("12TB")
    let version = |an: &Analysis, k: usize| {
        k > 0 && an.items[k - 1].raw_pos + 1 == an.items[k].raw_pos && named(&an.items[k - 1])
    };
    if (u.0.is_empty() != v.0.is_empty()) && (version(p.a, x) || version(p.b, y)) {
        return false;
    }
    // a version for a version of a named thing, the other written as one ("Upgraded the repo to
    // 3.12" / "Main project is on Python 3.9")
    let versioned = |an: &Analysis, k: usize| version(an, k) || an.items[k].key.contains('.');
    if u.0.is_empty()
        && v.0.is_empty()
        && (version(p.a, x) || version(p.b, y))
        && versioned(p.a, x)
        && versioned(p.b, y)
    {
        return true;
    }
    // money does not count the things an amount is followed by ("3 pods" / "$10 per class")
    let counted = |an: &Analysis, k: usize| {
        an.items.get(k + 1).is_some_and(|n| n.raw_pos == an.items[k].raw_pos + 1 && n.kind == Kind::Word)
    };
    let money = |u: &str| matches!(u, "usd" | "eur" | "gbp");
    if (money(u.0) && !money(v.0) && counted(p.b, y)) || (money(v.0) && !money(u.0) && counted(p.a, x)) {
        return false;
    }
    let after_a = p.a.items.get(x + 1).filter(|n| n.raw_pos == new.raw_pos + 1);
    let after_b = p.b.items.get(y + 1).filter(|n| n.raw_pos == was.raw_pos + 1);
    if let (Some(_), Some(_)) = (after_a, after_b)
        && p.pa[x + 1] == Some(y + 1)
    {
        return true;
    }
    // raised or lowered to it, from the stored fact's one amount ("cut to 300/min" / "rate
    // limit: 1000 req/min")
    let amounts = |an: &Analysis| an.items.iter().filter(|x| amount(x)).count();
    p.a.cues.found.iter().any(|c| matches!(c.kind, CueKind::Raised | CueKind::Lowered)) && amounts(p.b) == 1
}

/// Units one amount may be written in, whichever is chosen ("30 min" / "an hour", "512 MB" /
/// "2 GB"): a length of time of a day or less, a size of data.
fn one_dimension(u: &str, v: &str) -> bool {
    const DIMENSIONS: [&[&str]; 2] = [&["ms", "s", "min", "h"], &["byte", "kb", "mb", "gb", "tb"]];
    DIMENSIONS.iter().any(|d| d.contains(&u) && d.contains(&v))
}

/// A time that says when the change happened, not what changed: "in April", "since March",
/// "last week", "by May", "as of Monday" ("on Wednesdays", "at 9:30" may be the value itself).
fn when_of_change(an: &Analysis, k: usize) -> bool {
    let x = &an.items[k];
    let time = matches!(x.kind, Kind::Value(ValCat::Date | ValCat::Month | ValCat::RelDay | ValCat::Weekday, _))
        || (matches!(x.kind, Kind::Value(ValCat::Number, _))
            && x.key.parse::<u32>().is_ok_and(|y| (1900..2100).contains(&y)));
    time && an.preceded_by(x.raw_pos, &["in", "since", "last", "of", "from", "by", "starting"])
}

/// Two values of one category of tools, services or products (`products.tsv`).
fn same_product(new: &Item, old: &Item) -> bool {
    matches!(
        (new.kind, old.kind),
        (Kind::Value(ValCat::Class(c), _), Kind::Value(ValCat::Class(d), _)) if c == d && lexicon().product_category(c)
    )
}

/// The first value of the incoming memory the stored one lacks (and it does not name as the old
/// one) that can have replaced one of the stored memory's values the incoming one lacks (`kin`
/// says which can): (its index, the old one's index).
fn replaced(p: &Pair, kin: impl Fn(&Item, &Item) -> bool) -> Option<(usize, usize)> {
    let (a, b) = (p.a, p.b);
    // (whom a change statement says moved somewhere it names is what the statement is about,
    // and where it moved to its new value, not a value elsewhere in the text: "Carla moved to
    // another org, so he only manages Ana and Ben" gives no new boss)
    let to: Option<&[usize]> = a
        .change
        .as_deref()
        .filter(|s| {
            !s.to.is_empty()
                && a.items
                    .iter()
                    .any(|x| x.kind == Kind::Word && s.topic.contains(&x.raw_pos) && !s.to.contains(&x.raw_pos))
        })
        .map(|s| s.to.as_slice());
    let new: Vec<usize> = (0..a.items.len())
        .filter(|&k| p.pa[k].is_none() && valued(&a.items[k]) && !generic(&a.items[k]) && !when_of_change(a, k))
        // (nor is a word that says it changed: "Starting April, …")
        .filter(|&k| !a.cues.spans(a.items[k].raw_pos))
        // (what it names as the old value is not the new one: "switched from Slack to Teams")
        .filter(|&k| !a.cues.old.contains(&a.items[k].raw_pos))
        .filter(|&k| to.is_none_or(|to| to.contains(&a.items[k].raw_pos)))
        .collect();
    // (a word that says the stored memory was itself a change is none of its values: "Starting
    // Monday, standup moves to 10:15", "Cancelled Netflix in October")
    let old: Vec<usize> = (0..b.items.len())
        .filter(|&j| !p.used[j] && valued(&b.items[j]) && !generic(&b.items[j]) && !b.cues.spans(b.items[j].raw_pos))
        .collect();
    new.iter()
        .find_map(|&k| old.iter().find(|&&j| kin(&a.items[k], &b.items[j]) && same_measure(p, k, j)).map(|&j| (k, j)))
}

/// A thing renamed that the incoming memory describes in the stored fact's words, the stored one
/// giving its name: the new name replaces it ("Renamed the default branch to main" / "Default
/// branch is master"; "The weekly sync was renamed to Team Time" / "Weekly sync is called
/// Standup").
fn renamed_described(p: &mut Pair, old: &[usize], held: &[usize]) -> Option<Verdict> {
    let (a, b) = (p.a, p.b);
    if !a.cues.renamed || old.is_empty() || held.len() != old.len() {
        return None;
    }
    // every word of the stored fact but its name is in the description
    let unused: Vec<usize> = (0..b.items.len()).filter(|&j| !p.used[j] && !light(&b.items[j])).collect();
    let [name] = unused[..] else { return None };
    let was = &b.items[name];
    if !(valued(was) || was.kind == Kind::Word) || was.subject || subject_like(b, name) {
        return None;
    }
    // the new name: what the incoming memory says besides the description and the verb
    let new: Vec<usize> = (0..a.items.len())
        .filter(|&k| p.pa[k].is_none() && !old.contains(&k) && !a.cues.spans(a.items[k].raw_pos))
        .filter(|&k| old.iter().all(|&o| a.items[k].raw_pos > a.items[o].raw_pos))
        .collect();
    let &first = new.first()?;
    let reason = format!(
        "the incoming memory renames what the stored one calls {}: {} (\"{}\")",
        was.shown,
        a.items[first].shown,
        a.shown(held)
    );
    Some(p.verdict(Relation::Contradictory, Gate::ChangedValue, reason))
}

/// Words that say a person left what they held, right after the name ("Sam stepped back", "when
/// Dana went to Growth", "Priya moved over to partnerships").
const DEPARTURES: [&str; 19] = [
    "stepped",
    "steps",
    "left",
    "leaves",
    "went",
    "goes",
    "moved",
    "moves",
    "handed",
    "hands",
    "transferred",
    "rotated",
    "retired",
    "quit",
    "resigned",
    "departed",
    "move",
    "departure",
    "exit",
];

/// A role handed on, told by the old holder leaving: the person the stored fact is about is named
/// leaving, and another person is named beside what both speak of ("Kenji took over design when
/// Dana went to Growth" / "Dana is the team's designer"; "Jordan is cutting the Q2 releases; Sam
/// stepped back" / "Sam is release manager for Q2").
fn handed_on(p: &mut Pair, topic: &[usize], cue: &str) -> Option<Verdict> {
    let (a, b) = (p.a, p.b);
    if topic.is_empty() {
        return None;
    }
    // the stored fact's holder, named leaving
    let leaving = (0..a.items.len()).find(|&k| {
        let at = a.items[k].raw_pos;
        p.pa[k].is_some_and(|j| whom(b, j))
            && (at + 1..=at + 2).any(|r| a.lower.get(r).is_some_and(|w| DEPARTURES.contains(&w.as_str())))
    })?;
    // another person, not in the stored fact
    let taking =
        (0..a.items.len()).find(|&k| k != leaving && p.pa[k].is_none() && (whom(a, k) || a.items[k].person()))?;
    let reason = format!(
        "the incoming memory gives {} where the stored one has {}, who it says left (\"{}\"; {})",
        a.items[taking].shown,
        a.items[leaving].shown,
        cue,
        basis(p, topic)
    );
    Some(p.verdict(Relation::Contradictory, Gate::ChangedValue, reason))
}

/// Nouns that name a unit of an organisation a person is in.
const UNITS: [&str; 11] = [
    "team",
    "squad",
    "org",
    "organization",
    "organisation",
    "group",
    "pod",
    "department",
    "division",
    "guild",
    "tribe",
];

/// Whether item `k` is a unit of an organisation named by the word before it ("the payments
/// team", "the growth squad"): the position of that name.
fn unit_name(an: &Analysis, k: usize) -> Option<usize> {
    let x = &an.items[k];
    let unit = x.kind == Kind::Word && UNITS.contains(&x.shown.to_lowercase().trim_end_matches('s'));
    (unit && k > 0 && an.items[k - 1].raw_pos + 1 == x.raw_pos).then(|| k - 1)
}

/// A person moved from one unit of the organisation to another, the move said: "Lena moved over
/// to the growth squad" / "Lena is on the payments team"; "Transferred to Ads Ranking in May" /
/// "Works on the Search team". The same person: a given name both open with, or the speaker or
/// the user on both sides; the stored fact says little else.
fn moved_unit(p: &mut Pair, cue: &super::cues::Cue) -> Option<Verdict> {
    let (a, b) = (p.a, p.b);
    if cue.kind != CueKind::Change || b.items.len() > SHORT_FACT {
        return None;
    }
    let same_person = (0..a.items.len()).any(|k| subject_like(a, k) && p.pa[k].is_some_and(|j| subject_like(b, j)));
    if !(same_person || (personal(a) && personal(b))) {
        return None;
    }
    // the stored unit, named by a word the incoming memory does not hold
    let old = (0..b.items.len()).find_map(|j| unit_name(b, j).filter(|&n| !p.used[n]))?;
    // the subject moved, not a thing of theirs ("Lena moved her desk to…")
    if a.change.as_ref().is_some_and(|s| !s.subject_topic) {
        return None;
    }
    // the new one: a unit named otherwise, or the proper name the move went to (not a place:
    // "Lena moved to Berlin" is another fact)
    let new = (0..a.items.len()).find_map(|k| unit_name(a, k).filter(|&n| p.pa[n].is_none())).or_else(|| {
        (0..a.items.len()).find(|&k| {
            let x = &a.items[k];
            x.raw_pos > cue.at && p.pa[k].is_none() && x.kind == Kind::Word && x.name && !x.acronym()
        })
    })?;
    let reason = format!(
        "the incoming memory moves its subject to {} from {} (\"{}\")",
        a.items[new].shown, b.items[old].shown, cue.shown
    );
    Some(p.verdict(Relation::Contradictory, Gate::ChangedValue, reason))
}

/// Without a word of change: the facts say every word alike but one value each, of one kind.
fn strong_identity(p: &mut Pair, topic: &[usize]) -> Option<Verdict> {
    let (a, b) = (p.a, p.b);
    if topic.is_empty() || a.negs != b.negs {
        return None;
    }
    let only_a: Vec<usize> = (0..a.items.len()).filter(|&k| p.pa[k].is_none()).collect();
    let only_b: Vec<usize> = (0..b.items.len()).filter(|&j| !p.used[j]).collect();
    let ([x], [y]) = (&only_a[..], &only_b[..]) else { return None };
    let (new, was) = (&a.items[*x], &b.items[*y]);
    // what differs is a value, not whom or what the fact is about ("the billing-3 service" /
    // "the billing-2 service": two services)
    let qualifier = matches!(new.kind, Kind::Qual(_)) || matches!(was.kind, Kind::Qual(_));
    if !(valued(new) && valued(was) && same_kind(new, was))
        || new.many
        || was.many
        || new.subject
        || was.subject
        || qualifier
    {
        return None;
    }
    let reason = format!(
        "the same fact with another value: {} where the stored one has {} ({})",
        new.shown,
        was.shown,
        basis(p, topic)
    );
    Some(p.verdict(Relation::Contradictory, Gate::ChangedValue, reason))
}

/// The name written just before item `k` of `x` ("SMS" in "SMS importer"), if one is.
fn name_before(x: &Analysis, k: usize) -> Option<&Item> {
    let before = x.items.get(k.checked_sub(1)?)?;
    (before.name && before.raw_pos + 1 == x.items[k].raw_pos).then_some(before)
}

/// Whether items `k` of `a` and `j` of `b`, one word, are each named by a name the other does
/// not write before it: two things of one kind ("SMS importer" / "CSV importer").
fn named_otherwise(a: &Analysis, k: usize, b: &Analysis, j: usize) -> bool {
    match (name_before(a, k), name_before(b, j)) {
        (Some(x), Some(y)) => !same_form(x, y),
        _ => false,
    }
}
