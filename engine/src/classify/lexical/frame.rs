//! The shape of a fact: who it is about (its subject, often a name), what it says of them (the
//! predicate) and the slot the rest fills. Three gates read it: a replaced filler in a slot of
//! one value, a correction that moves a fact to someone else, and swapped roles.

use super::analysis::{Analysis, Item, Kind};
use super::gates::{Pair, who};
use super::lexicon::lexicon;
use super::matching::{Step, align, items_match};
use super::stem::stem;
use super::values::ValCat;
use super::verdict::{Gate, Relation, Verdict};

/// The items of `other` (the side without the correction) matched by items of `side` in clause
/// `clause`, by the pair's greedy matching.
fn matched_in_clause(p: &Pair, side_is_a: bool, clause: u8, wanted: &[usize]) -> usize {
    wanted
        .iter()
        .filter(|&&o| {
            if side_is_a {
                p.pa.iter().enumerate().any(|(i, m)| *m == Some(o) && p.a.items[i].clause == clause)
            } else {
                p.pa[o].is_some_and(|j| p.b.items[j].clause == clause)
            }
        })
        .count()
}

/// "Micah Reide plays guitar in a band, while Darian Sparkes does not play" against "Darian
/// Sparkes plays guitar in a band"; "Bryen Marton, not Katherine Nite, built the app" against
/// "Katherine Nite built the app": one side restates the other of someone else, and denies it of
/// the person the other names (or, in a contrasting clause, says something else of them).
pub(super) fn correction(p: &mut Pair) -> Option<Verdict> {
    for side_is_a in [true, false] {
        let (n, o) = if side_is_a { (p.a, p.b) } else { (p.b, p.a) };
        if o.negs > 0 {
            continue;
        }
        let names: Vec<&str> = o.items.iter().filter(|x| x.person()).map(|x| x.key.as_str()).collect();
        if names.is_empty() {
            continue;
        }
        let content: Vec<usize> = (0..o.items.len()).filter(|&k| !o.items[k].person()).collect();
        if content.len() < 3 {
            continue;
        }
        let needed = (content.len() * 3).div_ceil(4).max(3);
        let of = |x: &Item| x.person() && names.contains(&x.key.as_str());
        for clause in 0..n.clauses {
            let in_clause = |x: &&Item| x.clause == clause;
            let restated = matched_in_clause(p, side_is_a, clause, &content);
            if restated < needed || !n.items.iter().filter(in_clause).any(|x| x.person() && !of(x)) {
                continue;
            }
            // the person the other side names: denied in this clause ("X, not B"), or named in
            // another clause that denies or contrasts
            let denied_here = n.items.iter().filter(in_clause).any(|x| of(x) && x.negated);
            let elsewhere = n.items.iter().any(|x| {
                of(x)
                    && x.clause != clause
                    && (n.negated_clauses & (1 << x.clause) != 0 || n.contrast & (1 << x.clause.max(clause)) != 0)
            });
            // and not everyone the other side names still does it here
            let all_named_here = o
                .items
                .iter()
                .filter(|x| x.person())
                .all(|y| n.items.iter().filter(in_clause).any(|x| x.person() && !x.negated && x.key == y.key));
            if (denied_here || elsewhere) && !all_named_here {
                p.note("correction_restated", restated as f64);
                let named: Vec<&str> = o.items.iter().filter(|x| x.person()).map(|x| x.shown.as_str()).collect();
                let reason = format!(
                    "{} says of someone else what {} says of {}, and denies it of them or says something else of them",
                    who(side_is_a),
                    who(!side_is_a),
                    named.join(" ")
                );
                return Some(p.verdict(Relation::Contradictory, Gate::Correction, reason));
            }
        }
    }
    None
}

/// The share of the longer fact's items a replaced filler's frame must agree on.
const FRAME_SHARE: f64 = 0.4;

/// The one place where two aligned facts differ: the items of each side in it, and the matched
/// items before and after it.
struct Region {
    a: Vec<usize>,
    b: Vec<usize>,
    before: usize,
    after: usize,
    /// matched items inside the region ("University" in "the University of Michigan" /
    /// "Stanford University").
    inside: usize,
    /// one of them is a value.
    inside_value: bool,
}

/// The region where the alignment of the two facts differs, if it is one region: every step
/// before and after it matched, at most one match inside it.
fn one_region(steps: &[Step], a: &[Item]) -> Option<Region> {
    let differs = |s: &Step| !matches!(s, Step::Both(..));
    let first = steps.iter().position(differs)?;
    let last = steps.iter().rposition(differs)?;
    let mut region = Region {
        a: Vec::new(),
        b: Vec::new(),
        before: first,
        after: steps.len() - last - 1,
        inside: 0,
        inside_value: false,
    };
    for s in &steps[first..=last] {
        match *s {
            Step::Both(i, _) => {
                region.inside += 1;
                region.inside_value |= matches!(a[i].kind, Kind::Value(..));
            }
            Step::OnlyA(i) => region.a.push(i),
            Step::OnlyB(j) => region.b.push(j),
        }
    }
    (region.inside <= 1).then_some(region)
}

/// "Anya Addams is an expert in botany" against "Anya Addams is an expert in astrophysics": the
/// same facts but for one stretch after the predicate (the predicate itself, a word that is not
/// a name, agreeing before it), replaced on both sides, in a slot that holds one value at a
/// time, about someone the text picks out (a name, "the", "my"; "a man" could be another man),
/// and neither side a guess ("may be involved in…").
pub(super) fn replaced_filler(p: &mut Pair) -> Option<Verdict> {
    let (ta, tb) = (p.a, p.b);
    if ta.negs > 0 || tb.negs > 0 || !ta.definite || !tb.definite || ta.hedged() || tb.hedged() {
        return None;
    }
    let steps = align(&ta.items, &tb.items, p.cfg.prefix_min_len);
    let region = one_region(&steps, &ta.items)?;
    if region.a.is_empty() || region.b.is_empty() {
        return None;
    }
    // an identifier names another thing ("shipped lunar-notifier" / "shipped lunar-scheduler"),
    // as a qualifier does: not another value of the same one; and a changed number, date or
    // time has gates of its own (with other words changed around it, it is two changes)
    // (unless a name or a category's value says what the stretch is: "a workshop in the Swiss
    // Alps in 2017" / "a conference in New York in 2015")
    let has = |an: &Analysis, items: &[usize], f: &dyn Fn(&Item) -> bool| items.iter().any(|&k| f(&an.items[k]));
    let ident = |x: &Item| x.kind == Kind::Ident || (x.compound && x.kind == Kind::Word);
    let value = Item::plain_value;
    let placed = |x: &Item| x.name || matches!(x.kind, Kind::Value(ValCat::Class(_), _));
    let said = has(ta, &region.a, &placed) && has(tb, &region.b, &placed);
    if has(ta, &region.a, &ident)
        || has(tb, &region.b, &ident)
        || (!said && (has(ta, &region.a, &value) || has(tb, &region.b, &value)))
    {
        return None;
    }
    // words that only moved ("the trunk of a tree" / "a tree trunk") are not replaced
    let moved = region
        .a
        .iter()
        .any(|&i| region.b.iter().any(|&j| items_match(&ta.items[i], &tb.items[j], p.cfg.prefix_min_len)));
    let matched = region.before + region.after + region.inside;
    p.note("filler_agreements", matched as f64);
    p.note("filler_replaced_a", region.a.len() as f64);
    p.note("filler_replaced_b", region.b.len() as f64);
    // the frame that agrees must be a good part of the facts: "Caroline attended [an LGBTQ
    // parade…]" against "Caroline attended [a counselling workshop…]" shares a name and a verb,
    // two facts told alike
    let longer = ta.items.len().max(tb.items.len());
    if moved || matched < p.cfg.min_conflict_words + 1 || (matched as f64) < FRAME_SHARE * longer as f64 {
        return None;
    }
    let names = region.a.iter().all(|&i| ta.items[i].name) && region.b.iter().all(|&j| tb.items[j].name);
    // a word agreeing inside the stretch may join its parts ("the University of Michigan" /
    // "Stanford University"); a value agreeing inside it splits two changes ("needs iOS 16 or
    // newer" / "requires iOS 16 or later")
    if region.inside_value {
        return None;
    }
    // one word for another is as often a synonym as a change ("marriage" / "wedding"): a
    // filler replaced is a phrase, or a name, or one word in a long frame that agrees
    if !names && region.a.len() + region.b.len() < 3 && matched < 5 {
        return None;
    }
    let subject = subject_len(ta);
    let predicate_before =
        steps[..region.before].iter().any(|s| matches!(s, Step::Both(i, _) if *i >= subject && !ta.items[*i].name));
    if !(predicate_before && region.a[0] >= subject) {
        return None;
    }
    let shape = "the filler of the same predicate";
    let (xa, xb) = (&ta.items[region.a[0]], &tb.items[region.b[0]]);
    let (was, now) = (ta.shown(&region.a), tb.shown(&region.b));
    if (xa.many || xb.many) && !(xa.exclusive || xb.exclusive) {
        let reason = format!(
            "{shape} is replaced ({was} vs {now}), but in a slot that holds many values at once, so both can be true"
        );
        return Some(p.verdict(p.band(p.score), Gate::MultiValuedSlot, reason));
    }
    let reason =
        format!("{shape} is replaced ({was} vs {now}) in a slot that holds one value at a time, while the rest agrees");
    Some(p.verdict(Relation::Contradictory, Gate::ReplacedFiller, reason))
}

/// How many words besides the names (values aside) a deed needs to be specific: "joined the
/// security team on 2026-03-18" is one many people did.
const MIN_DEED_WORDS: usize = 4;

/// "Jennifer Melina and Samantha Waverly co-host a podcast about women in science" against
/// "Jennifer Melina and Denise Phanley co-host a podcast about women in science"; "Jolene and
/// Barrett collaborated on a photo essay" against "Jolene collaborated with Chadwick on a photo
/// essay": every word but the names is the same, in the same order (at least [`MIN_DEED_WORDS`] of them), and
/// the names differ, neither side's a part of the other's: the same specific deed, done by
/// someone else. Swapped roles (the same names) and one side naming fewer people are not this.
pub(super) fn replaced_person(p: &mut Pair) -> Option<Verdict> {
    let (ta, tb) = (p.a, p.b);
    if ta.negs > 0 || tb.negs > 0 || ta.hedged() || tb.hedged() {
        return None;
    }
    let person = Item::person;
    // the names lead both facts ("All three, A, B and C, …" too): they are who the deed is about
    let lead = |an: &Analysis| {
        let first_person = an.items.iter().position(person);
        let first_word = an.items.iter().position(|x| x.kind == Kind::Word && !x.person());
        matches!((first_person, first_word), (Some(p), Some(w)) if p < w)
    };
    if !lead(ta) || !lead(tb) {
        return None;
    }
    let (rest_a, rest_b): (Vec<&Item>, Vec<&Item>) =
        (ta.items.iter().filter(|x| !person(x)).collect(), tb.items.iter().filter(|x| !person(x)).collect());
    // who likes, wants or knows something is one of many: "Vera likes small diffs" and "Hugo
    // likes small diffs" are both true (the predicate is the first word after the names)
    // a category's value is part of the deed ("is a marine biologist who has conducted research
    // in the Pacific Ocean"); a number, date or time is not
    if rest_a.iter().filter(|x| !x.plain_value()).count() < MIN_DEED_WORDS
        || (rest_a.first().is_some_and(|x| lexicon().attitude(&x.key)) && !deed_with_someone(ta))
        || rest_a.len() != rest_b.len()
        || !rest_a.iter().zip(&rest_b).all(|(x, y)| items_match(x, y, p.cfg.prefix_min_len))
    {
        return None;
    }
    let people =
        |an: &'_ Analysis| -> Vec<String> { an.items.iter().filter(|x| person(x)).map(|x| x.key.clone()).collect() };
    let (ka, kb) = (people(ta), people(tb));
    if ka.is_empty() || kb.is_empty() || ka.iter().all(|k| kb.contains(k)) || kb.iter().all(|k| ka.contains(k)) {
        return None;
    }
    p.note("filler_agreements", rest_a.len() as f64);
    let named = |an: &Analysis, other: &[String]| {
        an.items
            .iter()
            .filter(|x| person(x) && !other.contains(&x.key))
            .map(|x| x.shown.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let reason = format!(
        "the same deed is said of someone else ({} vs {}), while every other word agrees",
        named(ta, &kb),
        named(tb, &ka)
    );
    Some(p.verdict(Relation::Contradictory, Gate::ReplacedPerson, reason))
}

/// The deed words a part after a connector needs to be a deed of its own.
const PART_DEED_WORDS: usize = 3;

/// "Kellie Tylor enjoys hiking and often invites Jonathon Hublin to join weekend trips": after
/// the attitude, a part opened by a connector tells a deed done with a named person (a person
/// and at least [`PART_DEED_WORDS`] other words, not opened by an attitude), which only the
/// ones it is told of did. "Vera likes code reviews and clear commit messages" has none.
fn deed_with_someone(an: &Analysis) -> bool {
    let lex = lexicon();
    let opens = |k: usize| {
        let (from, to) = (an.items[k - 1].raw_pos + 1, an.items[k].raw_pos);
        (from..to).any(|r| an.raw.get(r).is_some_and(|t| t.connector))
    };
    let starts: Vec<usize> = (1..an.items.len()).filter(|&k| opens(k)).collect();
    starts.iter().enumerate().any(|(n, &start)| {
        let end = starts.get(n + 1).copied().unwrap_or(an.items.len());
        let part = &an.items[start..end];
        let deeds = part.iter().filter(|x| !x.person() && !x.plain_value()).count();
        let opened_by_attitude = part.iter().find(|x| !x.person()).is_some_and(|x| lex.attitude(&x.key));
        part.iter().any(Item::person) && deeds >= PART_DEED_WORDS && !opened_by_attitude
    })
}

/// The people a text opens with, each a run of adjacent names ("Kelvin Crompton and Kara
/// Parklen both…"): the keys of each, before the first word that is no name (numbers aside:
/// "All three, A, B and C, …").
fn leading_people(an: &Analysis) -> Vec<Vec<&str>> {
    let mut people: Vec<Vec<&str>> = Vec::new();
    let mut last: Option<usize> = None;
    for x in &an.items {
        if x.kind == Kind::Word && !x.name {
            break;
        }
        if !x.person() {
            continue;
        }
        match (people.last_mut(), last) {
            (Some(run), Some(r)) if x.raw_pos == r + 1 => run.push(x.key.as_str()),
            _ => people.push(vec![x.key.as_str()]),
        }
        last = Some(x.raw_pos);
    }
    people
}

/// "Kelvin Crompton and Kara Parklen both attended the University of Manchester" against
/// "Kelvin Crompton attended MIT, while Kara Parklen attended Stanford University": one side says
/// two or more people ("both", "all") did one thing together or alike; the other tells the
/// same predicate of them one by one (a part of the text about each alone) and says they did not
/// do it alike: it says they differ ("attended different universities"), or denies they did it
/// together, or, in a contrast, gives one of them another value of the joint object ("Stanford
/// University" for "the University of Manchester").
pub(super) fn joint_split(p: &mut Pair) -> Option<Verdict> {
    for (j, s, j_is_a) in p.sides() {
        if j.negs > 0 || j.hedged() || s.hedged() || !(j.stems.contains("both") || j.stems.contains("all")) {
            continue;
        }
        let people = leading_people(j);
        if people.len() < 2 {
            continue;
        }
        let Some(pred) = j.items.iter().position(|x| x.kind == Kind::Word && !x.name) else { continue };
        if p.partner(j_is_a, pred).is_none() || lexicon().attitude(&j.items[pred].key) {
            continue;
        }
        // the segments of the split side that speak of one of the people alone (its mentions come
        // in the order of their segments)
        let whose = |x: &Item| people.iter().position(|run| x.person() && run.contains(&x.key.as_str()));
        let mut alone: Vec<(usize, u8)> = Vec::new();
        for segment in s.mentions.chunk_by(|m, n| m.0 == n.0) {
            let mut named: Vec<usize> = segment.iter().filter_map(|m| whose(&s.items[m.1])).collect();
            named.sort_unstable();
            named.dedup();
            if let [one] = named[..] {
                alone.push((one, segment[0].0));
            }
        }
        let mut each: Vec<usize> = alone.iter().map(|x| x.0).collect();
        each.sort_unstable();
        each.dedup();
        if each.len() < 2 {
            continue;
        }
        let differ = stem("different");
        let differ = s.stems.contains(&differ) && !j.stems.contains(&differ);
        let apart = s.negs > 0 && s.stems.contains(&stem("together"));
        // the joint object: what follows the predicate, names of the people aside
        let object: Vec<usize> = (pred + 1..j.items.len()).filter(|&k| whose(&j.items[k]).is_none()).collect();
        let valued = |x: &Item| x.name || matches!(x.kind, Kind::Value(ValCat::Class(_), _));
        let replaced = s.contrast != 0
            && alone.iter().any(|&(_, g)| {
                let in_g = |k: usize| s.items[k].segment == g;
                let partner_in_g = |k: usize| p.partner(j_is_a, k).is_some_and(in_g);
                let shares = object.iter().any(|&k| partner_in_g(k));
                let lost = object.iter().any(|&k| valued(&j.items[k]) && !partner_in_g(k));
                let own = (0..s.items.len()).any(|k| {
                    in_g(k) && valued(&s.items[k]) && p.partner(!j_is_a, k).is_none() && whose(&s.items[k]).is_none()
                });
                shares && lost && own
            });
        if !(differ || apart || replaced) {
            continue;
        }
        let how = if differ {
            "says they differ"
        } else if apart {
            "denies they did it together"
        } else {
            "gives one of them another value"
        };
        let reason = format!(
            "{} tells of several people together what {} tells of each alone and {how} ({})",
            who(j_is_a),
            who(!j_is_a),
            j.items[pred].shown
        );
        return Some(p.verdict(Relation::Contradictory, Gate::JointSplit, reason));
    }
    None
}

/// How many items open the text as its subject ([`Item::subject`]).
fn subject_len(an: &Analysis) -> usize {
    an.items.iter().take_while(|x| x.subject).count()
}

/// Swapped roles: "Marco reports to Sofia" / "Sofia reports to Marco"; "Debra translates for
/// Timothy" / "Timothy translates for Debra". The first and last shared words trade places, or
/// two shared words come in the opposite order around a third that stays between them, and
/// neither side is passive ("by"). Returns the reason.
pub(super) fn order_differs(p: &Pair) -> Option<String> {
    let (ta, tb) = (p.a, p.b);
    if ta.stems.contains("by") || tb.stems.contains("by") {
        return None;
    }
    let shared: Vec<(usize, usize)> =
        p.pa.iter()
            .enumerate()
            .filter(|(i, m)| {
                m.is_some() && matches!(ta.items[*i].kind, Kind::Word | Kind::Ident | Kind::Value(ValCat::Class(_), _))
            })
            .filter_map(|(i, m)| m.map(|j| (i, j)))
            .collect();
    let seq: Vec<usize> = shared.iter().map(|(_, j)| *j).collect();
    if seq.len() >= 3 {
        let max = seq.iter().copied().max().unwrap_or(0);
        let min = seq.iter().copied().min().unwrap_or(0);
        if seq[0] == max && seq[seq.len() - 1] == min {
            return Some("the shared words come in a different order, so the roles may differ".to_string());
        }
    }
    // two shared words trade places around a third that stays between them (the predicate):
    // "A carries B" / "B carries A"; "A and B met" / "B and A met" has nothing between them
    for (k, &(i1, j1)) in shared.iter().enumerate() {
        for &(i2, j2) in shared.iter().skip(k + 1) {
            if !(i1 < i2 && j1 > j2) || ta.items[i1].clause != ta.items[i2].clause {
                continue;
            }
            let pivot = shared.iter().any(|&(i, j)| i1 < i && i < i2 && j2 < j && j < j1 && !ta.items[i].name);
            if pivot {
                return Some(format!(
                    "{} and {} trade places, so the roles differ",
                    ta.items[i1].shown, ta.items[i2].shown
                ));
            }
        }
    }
    None
}
