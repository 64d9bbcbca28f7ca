//! Evidence of change: a polarity flip (negation), a changed value (a number, a date, a member of
//! a lexicon category in the same slot) or an antonym. A change is a contradiction only when it
//! is the single difference between two facts that otherwise agree, and, for a category value,
//! only where the slot holds one value at a time.

use super::analysis::{Analysis, Item, Kind};
use super::gates::Pair;
use super::lexicon::{WordClass, find_antonym, lexicon};
use super::matching::overlap;
use super::values::{Unit, ValCat, same_str};
use super::verdict::{Gate, Relation, Verdict};

/// What the evidence gates made of a pair.
pub(super) enum Change {
    /// No evidence of change at all.
    None,
    /// A contradiction.
    Decided(Verdict),
    /// Evidence that does not stand on its own (too few words, the rest differs, a slot of many
    /// values): the verdict, unless a later gate finds a correction.
    Dropped(Verdict),
}

enum Evidence {
    Negation,
    Value {
        cat: ValCat,
        from: String,
        to: String,
        many: bool,
        indefinite: bool,
        subject: bool,
        /// the raw positions of the changed values, on each side (first, last).
        span: [(usize, usize); 2],
    },
    Antonym {
        from: String,
        to: String,
        indefinite: bool,
        subject: bool,
    },
}

/// The value categories compared, in the order their evidence is reported.
const CATEGORIES: [ValCat; 9] = [
    ValCat::Number,
    ValCat::Time,
    ValCat::Date,
    ValCat::Weekday,
    ValCat::Month,
    ValCat::RelDay,
    ValCat::Frequency,
    ValCat::Quantity,
    ValCat::Ordinal,
];

/// Two values of one kind that do not exclude each other.
fn same_value(x: &Item, y: &Item) -> bool {
    match x.kind {
        Kind::Value(ValCat::Class(c), _) => lexicon().compatible(c, &x.key, &y.key),
        _ => same_str(&x.key, &y.key),
    }
}

/// The negation, value and antonym gates.
pub(super) fn evidence_of_change<'a>(p: &mut Pair<'a>) -> Change {
    let (ta, tb, cfg) = (p.a, p.b, p.cfg);
    let mut evidence: Vec<Evidence> = Vec::new();
    let flips =
        p.pa.iter().enumerate().filter(|(i, j)| j.is_some_and(|j| ta.items[*i].negated != tb.items[j].negated)).count();
    let any_scope = ta.items.iter().chain(tb.items.iter()).any(|x| x.negated);
    let polarity_differs = flips > 0 || (!any_scope && (ta.negs % 2) != (tb.negs % 2));
    p.note("polarity_flips", flips as f64);
    if polarity_differs {
        evidence.push(Evidence::Negation);
    }
    let mut changed_keys: Vec<(Kind, String)> = Vec::new();
    let classes = ta.items.iter().chain(tb.items.iter()).filter_map(|it| match it.kind {
        Kind::Value(c @ ValCat::Class(_), _) => Some(c),
        _ => None,
    });
    let mut kinds: Vec<ValCat> = CATEGORIES.to_vec();
    for c in classes {
        if !kinds.contains(&c) {
            kinds.push(c);
        }
    }
    for cat in kinds {
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
            let a_extra: Vec<&&Item> = xa.iter().filter(|x| !xb.iter().any(|y| same_value(x, y))).collect();
            let b_extra: Vec<&&Item> = xb.iter().filter(|y| !xa.iter().any(|x| same_value(x, y))).collect();
            if let (Some(x), Some(y)) = (a_extra.first(), b_extra.first()) {
                // A category value's slot holds many values when a predicate of many values
                // governs it on both sides and nothing marks it exclusive.
                let class = matches!(cat, ValCat::Class(_));
                let changed = || a_extra.iter().chain(b_extra.iter());
                // a slot of many values: a predicate of many values governs it on either side
                // ("plays the guitar" / "the flute is played") and nothing marks it exclusive
                let many = class && changed().any(|z| z.many) && !changed().any(|z| z.exclusive);
                let indefinite = class && changed().all(|z| z.indefinite);
                let subject = class && changed().all(|z| z.subject);
                let span = |side: &[&&Item]| {
                    let at = side.iter().map(|z| z.raw_pos);
                    (at.clone().min().unwrap_or(0), at.max().unwrap_or(0))
                };
                let span = [span(&a_extra), span(&b_extra)];
                evidence.push(Evidence::Value {
                    cat,
                    from: y.shown.clone(),
                    to: x.shown.clone(),
                    many,
                    indefinite,
                    subject,
                    span,
                });
                for z in a_extra.iter().chain(b_extra.iter()) {
                    changed_keys.push((k, z.key.clone()));
                }
            }
        }
    }
    if let Some((x, y)) = find_antonym(ta, tb) {
        // nouns: "a man" / "a woman" are two people, "the man" / "the woman" one
        let item = |an: &'a Analysis, key: &str| an.items.iter().find(|it| it.kind == Kind::Word && it.key == key);
        let (ix, iy) = (item(ta, &x), item(tb, &y));
        let indefinite = ix.is_some_and(|i| i.indefinite) && iy.is_some_and(|i| i.indefinite);
        let subject = ix.is_some_and(|i| i.subject) && iy.is_some_and(|i| i.subject);
        evidence.push(Evidence::Antonym { from: y.clone(), to: x.clone(), indefinite, subject });
        changed_keys.push((Kind::Word, x));
        changed_keys.push((Kind::Word, y));
    }
    one_place(&mut evidence);
    p.note("evidence", evidence.len() as f64);
    if evidence.is_empty() {
        return Change::None;
    }

    let skip = |x: &Item| changed_keys.iter().any(|(k, key)| *k == x.kind && *key == x.key);
    let rest = overlap(&ta.items, &tb.items, &p.pa, &p.used, &skip, &skip);
    let rest_j = rest.jaccard();
    p.note("rest_jaccard", rest_j);
    p.note("rest_agreements", rest.matched as f64);
    p.note("rest_substitutions", rest.substitutions() as f64);
    let words = (ta.items.len() + ta.negs).max(tb.items.len() + tb.negs);
    let (what, gate) = match &evidence[0] {
        Evidence::Negation => {
            let cue = if ta.neg_cue.is_empty() { &tb.neg_cue } else { &ta.neg_cue };
            (format!("one side negates what the other asserts (\"{cue}\")"), Gate::Negation)
        }
        Evidence::Value { cat, from, to, .. } => {
            (format!("{} differs: {} vs {}", cat.as_str(), to, from), Gate::ValueMismatch)
        }
        Evidence::Antonym { from, to, .. } => (format!("opposites: {to} vs {from}"), Gate::Antonym),
    };
    let max_subs = if gate == Gate::Negation { cfg.max_negation_substitutions } else { cfg.max_value_substitutions };
    // the negated clause must be about what the other side says
    let scope_ok = gate != Gate::Negation || {
        let share = negation_scope_match(p);
        p.note("negation_scope_match", share);
        share >= cfg.min_negation_scope_match
    };
    let score = p.score;
    let dropped =
        |p: &Pair, relation: Relation, gate: Gate, reason: String| Change::Dropped(p.verdict(relation, gate, reason));
    if p.band(score) == Relation::Unrelated
        && (evidence.len() > 1 || rest_j < cfg.min_conflict_jaccard || rest.matched < cfg.min_agreements)
    {
        if gate == Gate::Negation
            && let Some(v) = negated_alternative(p, &what)
        {
            return Change::Decided(v);
        }
        let reason = format!(
            "similarity {score:.2} is below the related band ({:.2}); {what}, but little else is shared",
            cfg.related_threshold
        );
        return dropped(p, Relation::Unrelated, Gate::BelowBand, reason);
    }
    if evidence.len() > 1 {
        let reason = format!("{what}, but more than one thing changed, so these read as different facts");
        return dropped(p, p.band(score), Gate::RestDiffers, reason);
    }
    // "the man is in Spain" / "the man is in Argentina": every other word the same (a frame of
    // at least four words), so the few content words that agree are enough
    let swap = rest.matched >= 1 && !matches!(evidence[0], Evidence::Negation) && only_the_change(p, &changed_keys);
    p.note("one_word_swap", f64::from(u8::from(swap)));
    if !swap && (words < cfg.min_conflict_words || rest.matched < cfg.min_agreements) {
        let reason = format!("{what}, but only {} other word(s) agree, too few to claim a contradiction", rest.matched);
        return dropped(p, p.band(score), Gate::TooFewWords, reason);
    }
    if rest_j < cfg.min_conflict_jaccard || rest.substitutions() > max_subs || !scope_ok {
        if gate == Gate::Negation
            && let Some(v) = negated_alternative(p, &what)
        {
            return Change::Decided(v);
        }
        let reason = format!("{what}, but the rest of the two facts differs too (another subject or action)");
        return dropped(p, p.band(score), Gate::RestDiffers, reason);
    }
    if let Evidence::Value { subject: true, .. } | Evidence::Antonym { subject: true, .. } = evidence[0] {
        let reason = format!("{what}, but that is who the fact is about, not what it says of them: two subjects");
        return dropped(p, p.band(score), Gate::SubjectDiffers, reason);
    }
    if let Evidence::Value { indefinite: true, .. } | Evidence::Antonym { indefinite: true, .. } = evidence[0] {
        let reason = format!("{what}, but each side speaks of \"a\" one: nothing says they are the same one");
        return dropped(p, p.band(score), Gate::DifferentReferent, reason);
    }
    if let Evidence::Value { many: true, .. } = evidence[0] {
        let reason = format!("{what}, but in a slot that holds many values at once, so both can be true");
        return dropped(p, p.band(score), Gate::MultiValuedSlot, reason);
    }
    Change::Decided(p.verdict(Relation::Contradictory, gate, format!("{what} while the rest agrees")))
}

/// Whether the two texts are the same word for word (case and punctuation aside, at least four
/// words) but for the changed items. A category's value or an antonym said of the subject by a
/// copula needs no more than the subject and the copula around it ("Tomas is French" / "Tomas is
/// German", "Ana is married" / "Ana is unmarried": one at a time of one subject).
fn only_the_change(p: &Pair, changed: &[(Kind, String)]) -> bool {
    const FRAME: usize = 4;
    const COPULAR_FRAME: usize = 3;
    fn words_but<'t>(an: &'t Analysis, changed: &[(Kind, String)]) -> Option<(Vec<&'t str>, usize)> {
        let words: Vec<&str> = an.norm.split(' ').collect();
        if words.len() < COPULAR_FRAME || words.len() != an.raw.len() {
            return None;
        }
        let items: Vec<&Item> =
            an.items.iter().filter(|x| changed.iter().any(|(k, key)| *k == x.kind && *key == x.key)).collect();
        let lex = lexicon();
        // right after the copula, or its article ("Kara is an optimist")
        let after_copula = |at: usize| {
            (at >= 1 && lex.is(words[at - 1], WordClass::COPULA))
                || (at >= 2 && matches!(words[at - 1], "a" | "an") && lex.is(words[at - 2], WordClass::COPULA))
        };
        let copular = !items.is_empty()
            && items
                .iter()
                .all(|x| matches!(x.kind, Kind::Value(ValCat::Class(_), _) | Kind::Word) && after_copula(x.raw_pos));
        let frame = if copular { COPULAR_FRAME } else { FRAME };
        if words.len() < frame {
            return None;
        }
        let changed_at: Vec<usize> =
            items.iter().flat_map(|x| x.raw_pos..x.raw_pos + x.shown.split(' ').count()).collect();
        let rest = words.iter().enumerate().filter(|(i, _)| !changed_at.contains(i)).map(|(_, w)| *w).collect();
        Some((rest, frame))
    }
    match (words_but(p.a, changed), words_but(p.b, changed)) {
        (Some((x, fx)), Some((y, fy))) => {
            // "a" and "an" are one article ("an optimist" / "a pessimist")
            let norm = |w: &&str| if *w == "an" { "a".to_string() } else { w.to_lowercase() };
            x.len() + 1 >= fx.max(fy) && x.iter().map(norm).eq(y.iter().map(norm))
        }
        _ => false,
    }
}

/// Category values changed side by side are one value: "born in Buenos Aires, Argentina" / "born
/// in Madrid, Spain" changes a place, not a city and then a country. When every piece of evidence
/// is a changed category value and, on each side, all of them lie within a few words, they
/// become the first. (Two numbers changed are two facts changed: "v14 after 43 days" / "v10
/// after 5 days".)
fn one_place(evidence: &mut Vec<Evidence>) {
    const NEAR: usize = 4;
    if evidence.len() < 2 {
        return;
    }
    let mut spans = [(usize::MAX, 0usize); 2];
    for e in evidence.iter() {
        let Evidence::Value { span, cat: ValCat::Class(_), .. } = e else { return };
        for side in 0..2 {
            spans[side] = (spans[side].0.min(span[side].0), spans[side].1.max(span[side].1));
        }
    }
    if spans.iter().all(|(first, last)| last - first <= NEAR) {
        evidence.truncate(1);
    }
}

/// The share of the negated items on either side that the other side mentions unnegated.
fn negation_scope_match(p: &Pair) -> f64 {
    let (ta, tb) = (p.a, p.b);
    let mut scope = 0usize;
    let mut hit = 0usize;
    for (i, x) in ta.items.iter().enumerate() {
        if x.negated {
            scope += 1;
            hit += usize::from(p.pa[i].is_some_and(|j| !tb.items[j].negated));
        }
    }
    for (j, y) in tb.items.iter().enumerate() {
        if y.negated {
            scope += 1;
            hit += usize::from(p.pa.iter().enumerate().any(|(i, m)| *m == Some(j) && !ta.items[i].negated));
        }
    }
    if scope == 0 { 1.0 } else { hit as f64 / scope as f64 }
}

/// "Colton has never taken part in clean-ups, but organises festivals" against "Colton has taken
/// part in several clean-ups": the negated clause denies the other fact; the clauses after it say
/// what holds instead and are not compared. The other side must have no negation of its own.
fn negated_alternative(p: &mut Pair, what: &str) -> Option<Verdict> {
    let cfg = p.cfg;
    let (neg, neg_is_a) = match (p.a.negated_clauses != 0, p.b.negated_clauses != 0) {
        (true, false) => (p.a, true),
        (false, true) => (p.b, false),
        _ => return None,
    };
    if neg.clauses < 2 {
        return None;
    }
    // the first negated clause, and every clause before it (the subject may open the text)
    let first_negated = neg.negated_clauses.trailing_zeros() as u8;
    let alternative = |x: &Item| x.clause > first_negated;
    let none = |_: &Item| false;
    let rest = if neg_is_a {
        overlap(&p.a.items, &p.b.items, &p.pa, &p.used, &alternative, &none)
    } else {
        overlap(&p.a.items, &p.b.items, &p.pa, &p.used, &none, &alternative)
    };
    if !neg.items.iter().any(alternative) {
        return None;
    }
    let share = negation_scope_match(p);
    p.note("alternative_rest_jaccard", rest.jaccard());
    p.note("alternative_rest_substitutions", rest.substitutions() as f64);
    if rest.jaccard() >= cfg.min_conflict_jaccard
        && rest.matched >= cfg.min_agreements
        && rest.substitutions() <= cfg.max_negation_substitutions
        && share >= cfg.min_negation_scope_match
    {
        let reason = format!("{what}, and says what holds instead in a clause of its own");
        return Some(p.verdict(Relation::Contradictory, Gate::NegatedAlternative, reason));
    }
    None
}
