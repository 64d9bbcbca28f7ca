//! The decision: a sequence of named gates, each of which either decides the pair (returns a
//! verdict) or passes it on. Everything the gates read about the pair is computed once into a
//! [`Pair`]; every score a gate computes is recorded in it, so the verdict can explain itself.

use super::analysis::{Analysis, Item, Kind, analyse};
use super::announce::announced_change;
use super::change::{Change, evidence_of_change};
use super::config::LexicalConfig;
use super::denial::{denied_clause, restricted};
use super::frame::{correction, joint_split, order_differs, replaced_filler, replaced_person};
use super::identity::changed_identity;
use super::matching::{Overlap, match_items, overlap};
use super::roles::role_holder;
use super::values::{QualCat, same_str};
use super::verdict::{Gate, Relation, Verdict};

/// Everything the gates read about one pair, computed once.
pub(super) struct Pair<'a> {
    /// the incoming memory.
    pub(super) a: &'a Analysis,
    /// the stored candidate.
    pub(super) b: &'a Analysis,
    pub(super) cfg: &'a LexicalConfig,
    /// for each item of `a`, its partner in `b` (greedy, exact matches first).
    pub(super) pa: Vec<Option<usize>>,
    /// whether each item of `b` has a partner.
    pub(super) used: Vec<bool>,
    pub(super) all: Overlap,
    pub(super) score: f64,
    pub(super) jaccard: f64,
    /// every score computed so far, in order.
    pub(super) scores: Vec<(&'static str, f64)>,
    /// the embedder's cosine of the pair and the least cosine at which it says the two speak of
    /// one thing, when an embedder is configured.
    pub(super) cosine: Option<(f64, f64)>,
}

impl<'a> Pair<'a> {
    fn new(a: &'a Analysis, b: &'a Analysis, cfg: &'a LexicalConfig) -> Pair<'a> {
        let (pa, used) = match_items(&a.items, &b.items, cfg.prefix_min_len);
        let none = |_: &Item| false;
        let all = overlap(&a.items, &b.items, &pa, &used, &none, &none);
        let (na, nb) = (a.items.len(), b.items.len());
        let (short, long) = (na.min(nb), na.max(nb));
        let jaccard = all.jaccard();
        let containment = if short > 0 && all.matched == short && short >= cfg.min_containment_words {
            1.0
        } else if all.matched >= 1 && long <= cfg.short_fact_words {
            cfg.short_link_score
        } else {
            0.0
        };
        let score = clamp01(jaccard.max(containment));
        let scores = vec![
            ("jaccard", jaccard),
            ("containment", containment),
            ("content_words_a", na as f64),
            ("content_words_b", nb as f64),
            ("agreements", all.matched as f64),
            ("only_a", all.only_a as f64),
            ("only_b", all.only_b as f64),
            ("negations_a", a.negs as f64),
            ("negations_b", b.negs as f64),
        ];
        Pair { a, b, cfg, pa, used, all, score, jaccard, scores, cosine: None }
    }

    /// The relation a pair without evidence of change has at similarity `s`.
    pub(super) fn band(&self, s: f64) -> Relation {
        if s >= self.cfg.related_threshold { Relation::Complementary } else { Relation::Unrelated }
    }

    /// A verdict of this pair.
    pub(super) fn verdict(&self, relation: Relation, gate: Gate, reason: String) -> Verdict {
        Verdict {
            relation,
            gate,
            score: self.score,
            scores: Vec::new(),
            reason,
            incoming_adds: self.all.only_a > 0,
            candidate_adds: self.all.only_b > 0,
            near_miss: false,
        }
    }

    /// The two sides as (this side, the other side, this side is the incoming memory), the
    /// incoming memory first.
    pub(super) fn sides(&self) -> [(&'a Analysis, &'a Analysis, bool); 2] {
        [(self.a, self.b, true), (self.b, self.a, false)]
    }

    /// The partner of item `k` of the incoming memory (`of_a`) or of the candidate: its index on
    /// the other side.
    pub(super) fn partner(&self, of_a: bool, k: usize) -> Option<usize> {
        if of_a { self.pa[k] } else { self.pa.iter().position(|m| *m == Some(k)) }
    }

    /// Record a score.
    pub(super) fn note(&mut self, name: &'static str, value: f64) {
        self.scores.push((name, value));
    }
}

/// Who a side is, for reasons: the incoming memory (`of_a`) or the candidate.
pub(super) fn who(of_a: bool) -> &'static str {
    if of_a { "the incoming memory" } else { "the candidate" }
}

/// Classifies one pair. `a` = the incoming memory, `b` = the stored candidate; kinds are the
/// declared memory types ("fact", "preference", "episode", "procedure") when known.
pub fn classify(a: &str, b: &str, kind_a: Option<&str>, kind_b: Option<&str>, cfg: &LexicalConfig) -> Verdict {
    classify_analysed(&analyse(a), &analyse(b), kind_a, kind_b, cfg)
}

/// [`classify`] on texts already analysed: the gates in order, then the kind gate.
pub fn classify_analysed(
    ta: &Analysis,
    tb: &Analysis,
    kind_a: Option<&str>,
    kind_b: Option<&str>,
    cfg: &LexicalConfig,
) -> Verdict {
    classify_admitted(ta, tb, kind_a, kind_b, cfg, None)
}

/// The embedder's say on a pair: its cosine, and the least cosine at which the embedder's model
/// family speaks of one thing (the related band, calibrated per family).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Admission {
    pub cosine: f64,
    pub min: f64,
}

/// [`classify_analysed`] with the embedder's cosine: a pair the cosine admits is compared by the
/// rules of change whatever its lexical similarity (docs/design.md §15), and its reason says
/// which score admitted it.
pub fn classify_admitted(
    ta: &Analysis,
    tb: &Analysis,
    kind_a: Option<&str>,
    kind_b: Option<&str>,
    cfg: &LexicalConfig,
    admission: Option<Admission>,
) -> Verdict {
    let mut p = Pair::new(ta, tb, cfg);
    p.cosine = admission.map(|x| (x.cosine, x.min));
    let mut v = decide(&mut p);
    if let Some(Admission { cosine, min }) = admission
        && cosine >= min
        && v.relation == Relation::Unrelated
        && v.gate == Gate::BelowBand
    {
        v.relation = Relation::Complementary;
        v.gate = Gate::RelatedBand;
        v.reason = format!(
            "lexical similarity {:.2} is below the related band, but cosine {cosine:.3} ≥ {min:.2} admitted the pair: \
             compared by the rules of change, nothing says the value changed",
            p.score
        );
    }
    let kinds_differ = matches!((kind_a, kind_b), (Some(x), Some(y)) if !x.trim().eq_ignore_ascii_case(y.trim()));
    finish(v, p.scores, kinds_differ, kind_a, kind_b)
}

fn decide(p: &mut Pair) -> Verdict {
    if let Some(v) = exact_text(p).or_else(|| no_content(p)) {
        return v;
    }
    if let Some(v) = qualifier_differs(p) {
        // Distinct facts, unless the differing qualifier is the value said to have changed:
        // "Correction: prod DB is in eu-west-1" / "Prod database region: us-east-1".
        let said = p.a.cues.change().is_some();
        return changed_identity(p).filter(|w| said && w.gate == Gate::ChangedValue).unwrap_or(v);
    }
    let v = decide_by_words(p);
    // Rewordings the gates above cannot align: one fact in other words, its value changed.
    if v.relation != Relation::Contradictory
        && let Some(w) = changed_identity(p)
    {
        return w;
    }
    v
}

/// The gates that read the two texts word by word.
fn decide_by_words(p: &mut Pair) -> Verdict {
    // A change the incoming memory announces, or another holder of a role of one holder, decides
    // before the evidence gates: "I no longer work at Google" is a new version, not a denial.
    if let Some(v) = announced_change(p).or_else(|| role_holder(p)) {
        return v;
    }
    // A restriction or a split of a joint deed overturns what it shares few words with: "only
    // speaks English" / "speaks fluent Spanish".
    if let Some(v) = restricted(p).or_else(|| joint_split(p)) {
        return v;
    }
    match evidence_of_change(p) {
        Change::Decided(v) => v,
        // A change that does not stand on its own may still be a correction: "B, not A, did it".
        Change::Dropped(v) => correction(p)
            .or_else(|| if matches!(v.gate, Gate::RestDiffers | Gate::BelowBand) { replaced_filler(p) } else { None })
            .or_else(|| denied_guess(p))
            .or_else(|| denied_clause(p))
            .unwrap_or(v),
        Change::None => {
            correction(p).or_else(|| replaced_person(p)).or_else(|| replaced_filler(p)).unwrap_or_else(|| sameness(p))
        }
    }
}

/// The share of a guess's claim the denial must mention.
const GUESS_COVERED: f64 = 0.5;

/// "Jonathen Agular may have published articles or research papers" against "Jonathen Agular has
/// never published any articles or research papers": one side guesses (a hedge, no negation), the
/// other, sure of itself, denies it of the same subject. The guessed claim is the first clause
/// after the guess's subject: its first word (the predicate) is negated on the other side, and
/// the other side mentions at least half of its words. The subject (the leading names) is on
/// both sides, not denied.
pub(super) fn denied_guess(p: &mut Pair) -> Option<Verdict> {
    for (d, g, d_is_a) in p.sides() {
        if !g.hedged() || g.negs > 0 || d.hedged() || d.negs == 0 {
            continue;
        }
        let partner = |k: usize| p.partner(!d_is_a, k);
        let subject: Vec<usize> = (0..g.items.len()).filter(|&k| g.items[k].subject).collect();
        if subject.is_empty() || subject.iter().any(|&k| partner(k).is_none_or(|j| d.items[j].negated)) {
            continue;
        }
        let Some(clause) = g.items.iter().find(|x| !x.subject).map(|x| x.clause) else { continue };
        let claim: Vec<usize> =
            (0..g.items.len()).filter(|&k| !g.items[k].subject && g.items[k].clause == clause).collect();
        if claim.len() < 2 {
            continue;
        }
        let denied = partner(claim[0]).is_some_and(|j| d.items[j].negated);
        let covered = claim.iter().filter(|&&k| partner(k).is_some()).count() as f64 / claim.len() as f64;
        p.note("guess_claim_covered", covered);
        if denied && covered >= GUESS_COVERED {
            let cue = if d.neg_cue.is_empty() { "not" } else { d.neg_cue.as_str() };
            let reason =
                format!("{} guesses what {} denies (\"{cue}\") of the same subject", who(!d_is_a), who(d_is_a),);
            return Some(p.verdict(Relation::Contradictory, Gate::DeniedGuess, reason));
        }
    }
    None
}

/// identical: the normalised texts are equal.
fn exact_text(p: &mut Pair) -> Option<Verdict> {
    if p.a.norm.is_empty() || p.a.norm != p.b.norm {
        return None;
    }
    let mut v = p.verdict(
        Relation::Identical,
        Gate::ExactText,
        "the texts are the same once case and punctuation are set aside".to_string(),
    );
    v.score = 1.0;
    Some(v)
}

/// unrelated: one side has no content word.
fn no_content(p: &mut Pair) -> Option<Verdict> {
    let (na, nb) = (p.a.items.len(), p.b.items.len());
    if na > 0 && nb > 0 {
        return None;
    }
    let side = if na == 0 { "the incoming memory" } else { "the candidate" };
    Some(p.verdict(Relation::Unrelated, Gate::NoContent, format!("{side} has no content word to compare")))
}

/// distinct: both sides name a qualifier of the same kind and they differ (staging vs production).
fn qualifier_differs(p: &mut Pair) -> Option<Verdict> {
    for cat in [QualCat::Environment, QualCat::Platform, QualCat::Region] {
        let qa: Vec<&Item> = p.a.items.iter().filter(|x| x.kind == Kind::Qual(cat)).collect();
        let qb: Vec<&Item> = p.b.items.iter().filter(|x| x.kind == Kind::Qual(cat)).collect();
        if qa.is_empty() || qb.is_empty() {
            continue;
        }
        let a_extra = qa.iter().find(|x| !qb.iter().any(|y| same_str(&y.key, &x.key)));
        let b_extra = qb.iter().find(|y| !qa.iter().any(|x| same_str(&x.key, &y.key)));
        if let (Some(x), Some(y)) = (a_extra, b_extra) {
            let reason = format!("{} differs: {} vs {}, so these are distinct facts", cat.as_str(), x.shown, y.shown);
            return Some(p.verdict(p.band(p.score), Gate::QualifierDiffers, reason));
        }
    }
    None
}

/// No evidence of change: how much the two facts say alike. A one-sided qualifier, swapped
/// roles or a narrowing modifier keep facts apart; a restatement of a richer stored fact merges
/// into it; otherwise the similarity bands decide.
fn sameness(p: &mut Pair) -> Verdict {
    let (ta, tb, cfg, score) = (p.a, p.b, p.cfg, p.score);
    // how the shorter side sits inside the longer: extra words appended after everything they
    // share (a condition, a time, a place: enrichment) or inserted among them (a modifier that
    // narrows the subject or the action)
    let (longer, shared): (&Analysis, Vec<bool>) = if ta.items.len() >= tb.items.len() {
        (ta, p.pa.iter().map(|x| x.is_some()).collect())
    } else {
        (tb, p.used.clone())
    };
    let enrichment = enrichment_shape(longer, &shared);
    let inserted = usize::from(!enrichment);
    let swapped = order_differs(p);
    p.note("inserted", inserted as f64);
    p.note("inversions", usize::from(swapped.is_some()) as f64);
    let one_sided_qualifier = ta.items.iter().chain(tb.items.iter()).find(|x| {
        matches!(x.kind, Kind::Qual(_))
            && ta.items.iter().chain(tb.items.iter()).filter(|y| y.kind == x.kind && y.key == x.key).count() == 1
    });
    // the incoming memory says nothing the candidate does not
    let restates = p.all.only_a == 0 && p.all.only_b > 0;
    if score >= cfg.merge_threshold
        && let Some(q) = one_sided_qualifier
    {
        let reason = format!("only one side is qualified by \"{}\", so the facts are not the same", q.shown);
        p.verdict(Relation::Complementary, Gate::QualifierAdded, reason)
    } else if score >= cfg.merge_threshold
        && let Some(reason) = swapped
    {
        p.verdict(Relation::Complementary, Gate::OrderDiffers, reason)
    } else if score >= cfg.merge_threshold && p.jaccard < cfg.merge_threshold && inserted > 0 && restates {
        let reason = "the incoming memory says nothing the stored one does not (every word of it is there), \
                      though the stored one is narrower: a restatement"
            .to_string();
        p.verdict(Relation::Complementary, Gate::Restatement, reason)
    } else if score >= cfg.merge_threshold && p.jaccard < cfg.merge_threshold && inserted > 0 {
        p.verdict(
            Relation::Complementary,
            Gate::Narrower,
            "one side adds words that narrow what the fact is about (a modifier or a phrase), not a separable \
             condition, time or clause"
                .to_string(),
        )
    } else if score >= cfg.merge_threshold {
        let reason = match (p.all.only_a > 0, p.all.only_b > 0) {
            (true, false) => {
                format!("the incoming memory restates the candidate and adds detail (similarity {score:.2})")
            }
            (false, true) => format!("the incoming memory restates part of the candidate (similarity {score:.2})"),
            _ => format!("the same fact reworded (similarity {score:.2})"),
        };
        p.verdict(Relation::Identical, Gate::MergeBand, reason)
    } else if score >= cfg.related_threshold {
        let reason = format!("related (similarity {score:.2}) with nothing that says they disagree");
        p.verdict(Relation::Complementary, Gate::RelatedBand, reason)
    } else {
        let reason = format!("similarity {score:.2} is below the related band ({:.2})", cfg.related_threshold);
        p.verdict(Relation::Unrelated, Gate::BelowBand, reason)
    }
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
        // a value other than a category's (a time, a date, a number) is separable; a colour or
        // a material is a modifier like any other word
        if shared[k] || it.plain_value() {
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

/// The scores in order, clamped; and the kind gate: facts of different declared kinds are never
/// identical nor contradictory, only a near miss is recorded.
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
