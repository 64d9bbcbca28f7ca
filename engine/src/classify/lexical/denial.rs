//! Denials and restrictions that share little with what they overturn: a clause that denies of
//! the same subject what the other side asserts ("has never participated in any literary
//! festivals" / "has been a guest speaker at several literary festivals"), and a clause that
//! restricts what the subject does to what it names ("only speaks English" / "speaks fluent
//! Spanish"). The rest of each text may say anything: the decision rests on the one clause
//! (docs/adr/0034-denials-restrictions-splits.md).

use super::analysis::{Analysis, Item, Kind};
use super::gates::{Pair, who};
use super::lexicon::lexicon;
use super::verdict::{Gate, Relation, Verdict};

/// The share of a denied clause's words the other side must assert.
const DENIAL_COVERED: f64 = 0.5;

/// The people a text's subject names: the keys of its leading names.
fn subject_people(an: &Analysis) -> Vec<&str> {
    let mut keys: Vec<&str> = an.items.iter().filter(|x| x.subject && x.person()).map(|x| x.key.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Both texts are about the same subject: both open with the speaker ("I", "we"), or both
/// subjects name the same people.
pub(super) fn same_subject(a: &Analysis, b: &Analysis) -> bool {
    if a.speaker || b.speaker {
        return a.speaker && b.speaker;
    }
    let (sa, sb) = (subject_people(a), subject_people(b));
    !sa.is_empty() && sa == sb
}

/// "Nicolan Ellys has never participated in any literary festivals but has frequently been a
/// guest speaker at international photography exhibitions" against "Nicolan Ellys has been a
/// guest speaker at several international literary festivals": a negated clause whose words
/// (at least two, and at least [`DENIAL_COVERED`] of them) the other side asserts of the same
/// subject. The denying side is sure of itself (no hedge); the words asserted include one that is
/// no name; a number, date or time the denial names is asserted too ("I don't drink coffee after
/// 4pm" / "I drink coffee after lunch" is no denial of it), and so is the denied verb when it is
/// one of attitude ("I don't like reviewing PRs late" / "I prefer PRs reviewed within a day").
pub(super) fn denied_clause(p: &mut Pair) -> Option<Verdict> {
    let lex = lexicon();
    for (d, o, d_is_a) in p.sides() {
        if d.negs == 0 || d.hedged() || !same_subject(d, o) {
            continue;
        }
        for clause in 0..d.clauses {
            if d.negated_clauses & (1 << clause) == 0 {
                continue;
            }
            let scope: Vec<usize> =
                (0..d.items.len()).filter(|&k| d.items[k].negated && d.items[k].clause == clause).collect();
            if scope.len() < 2 {
                continue;
            }
            let asserted = |k: usize| p.partner(d_is_a, k).is_some_and(|j| !o.items[j].negated);
            let covered: Vec<usize> = scope.iter().copied().filter(|&k| asserted(k)).collect();
            let share = covered.len() as f64 / scope.len() as f64;
            let worded = covered.iter().any(|&k| d.items[k].kind == Kind::Word && !d.items[k].name);
            // a number, date or time the denial names ("did not drink coffee after 4pm")
            let values_asserted = scope.iter().all(|&k| !d.items[k].plain_value() || asserted(k));
            let denied = scope[0];
            let attitude_asserted =
                !(d.items[denied].kind == Kind::Word && lex.attitude(&d.items[denied].key)) || asserted(denied);
            if covered.len() < 2 || share < DENIAL_COVERED || !worded || !values_asserted || !attitude_asserted {
                continue;
            }
            p.note("denied_clause_covered", share);
            let cue = if d.neg_cue.is_empty() { "not" } else { d.neg_cue.as_str() };
            let reason = format!(
                "{} denies (\"{cue}\") of the same subject what {} asserts ({})",
                who(d_is_a),
                who(!d_is_a),
                d.shown(&covered)
            );
            return Some(p.verdict(Relation::Contradictory, Gate::DeniedClause, reason));
        }
    }
    None
}

/// The words that mark a restriction, which are no part of what it keeps.
const RESTRICTION_CUES: [&str; 3] = ["exclusively", "solely", "outside"];

/// What a restriction restricts: the items that tell what is restricted (the word after "only"
/// in "only speaks English"; what the clause says before it in "speaks only English", "held
/// exhibitions exclusively in Tokyo"; for "never … outside", what is denied before "outside"),
/// and the items of what it keeps ("English"; up to a connector or punctuation).
fn restriction_span(an: &Analysis, at: usize, outside: bool) -> (Vec<usize>, Vec<usize>) {
    let mut end = at;
    for r in at + 1..an.raw.len() {
        if r > at + 1 && an.raw[r].connector {
            break;
        }
        end = r;
        if an.raw[r].boundary {
            break;
        }
    }
    let cue = |x: &Item| RESTRICTION_CUES.contains(&x.shown.to_lowercase().as_str());
    let before = |k: usize| an.items[k].raw_pos < at && !(an.items[k].raw_pos..at).any(|r| an.raw[r].boundary);
    let word = |k: usize| an.items[k].kind == Kind::Word && !an.items[k].name && !cue(&an.items[k]);
    let predicate: Vec<usize> = if outside {
        let clause = an.items.iter().rev().find(|x| x.raw_pos < at).map(|x| x.clause);
        (0..an.items.len())
            .filter(|&k| before(k) && an.items[k].negated && Some(an.items[k].clause) == clause)
            .collect()
    } else if let Some(k) = an.items.iter().position(|x| x.raw_pos == at + 1).filter(|&k| word(k)) {
        vec![k]
    } else {
        (0..an.items.len()).filter(|&k| before(k) && word(k) && !an.items[k].subject).collect()
    };
    let kept: Vec<usize> = (0..an.items.len())
        .filter(|&k| (at + 1..=end).contains(&an.items[k].raw_pos) && !cue(&an.items[k]) && !predicate.contains(&k))
        .collect();
    (predicate, kept)
}

/// "Jon Waggner only speaks English" against "Jon Waggner speaks fluent Spanish"; "Colton Jorves
/// has never traveled outside his home country" against "Colton Jorves has traveled to over 15
/// countries": one side restricts what the same subject does to what it names, and the other
/// side tells the same predicate (its first word after the subject) of something more. The
/// restriction keeps something the other side does not say, and the other side says something
/// the restriction does not hold; after "only", one of the two is a name or a value ("only
/// contributed to the music industry" / "contributed to several studio albums" is both). "Jon only
/// speaks English" / "Jon speaks English fluently" keeps nothing the other lacks: both are true.
pub(super) fn restricted(p: &mut Pair) -> Option<Verdict> {
    for (r, o, r_is_a) in p.sides() {
        if r.restrictions.is_empty() || r.hedged() || o.negs > 0 || !same_subject(r, o) {
            continue;
        }
        let Some(pred) = o.items.iter().position(|x| !x.subject) else { continue };
        let Some(j) = p.partner(!r_is_a, pred) else { continue };
        for x in &r.restrictions {
            let (predicate, phrase) = restriction_span(r, x.at, x.outside);
            if !predicate.contains(&j) {
                continue;
            }
            let kept: Vec<usize> = phrase.iter().copied().filter(|&k| p.partner(r_is_a, k).is_none()).collect();
            let beyond: Vec<usize> = (0..o.items.len())
                .filter(|&k| k != pred && !o.items[k].subject)
                .filter(|&k| p.partner(!r_is_a, k).is_none_or(|m| !phrase.contains(&m)))
                .collect();
            let valued = |an: &Analysis, k: usize| an.items[k].name || matches!(an.items[k].kind, Kind::Value(..));
            let named = kept.iter().any(|&k| valued(r, k)) || beyond.iter().any(|&k| valued(o, k));
            if kept.is_empty() || beyond.is_empty() || !(x.outside || named) {
                continue;
            }
            let how = if x.outside { "never outside" } else { "only" };
            let reason = format!(
                "{} restricts \"{}\" of the same subject (\"{how}\": {}), which leaves out what {} says ({})",
                who(r_is_a),
                o.items[pred].shown,
                r.shown(&kept),
                who(!r_is_a),
                o.shown(&beyond)
            );
            return Some(p.verdict(Relation::Contradictory, Gate::Restricted, reason));
        }
    }
    None
}
