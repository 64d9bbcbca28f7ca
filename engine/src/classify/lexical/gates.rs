//! The decision: evidence of change, the gates in order, and the verdict.

use super::analysis::{Analysis, Item, Kind, analyse};
use super::config::LexicalConfig;
use super::lexicon::find_antonym;
use super::matching::{match_items, overlap};
use super::values::{QualCat, Unit, ValCat, same_str};
use super::verdict::{Gate, Relation, Verdict};

pub(super) enum Evidence {
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

/// An enrichment adds, after everything the two facts share, a separable part: a clause opened
/// by a connector or punctuation, or value tokens (a time, a date, a number). Words inserted
/// among the shared ones, or a bare trailing phrase, narrow the fact instead.
pub(super) fn enrichment_shape(longer: &Analysis, shared: &[bool]) -> bool {
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

pub(super) fn clamp01(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

pub(super) fn finish(
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
