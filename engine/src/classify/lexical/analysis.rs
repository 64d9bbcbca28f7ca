//! One text analysed once: content items, values, qualifiers and negation scope, plus the
//! stems every word leaves (antonyms live among them).

use super::lexicon::{negation_cue, stop_word};
use super::stem::stem;
use super::terms::index_terms_of;
use super::tokens::{RawFlags, RawTok, connector, is_clause_word, raw_tokens};
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
    /// raw position of the token being analysed.
    pub(super) cur: usize,
    /// [`index_terms_of`] this analysis, made once ([`Analysis::index_terms`]).
    pub(super) terms: std::sync::OnceLock<Vec<String>>,
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
