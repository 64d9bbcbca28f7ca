//! One-to-one matching of two analyses' items, and the overlap counts the scores come from.

use super::analysis::Item;
use super::analysis::Kind;
use super::lexicon::lexicon;
use super::values::{ValCat, same_str};

pub(super) fn items_match(x: &Item, y: &Item, prefix_min: usize) -> bool {
    if x.kind != y.kind {
        // a category value matches the plain word it also is ("skating" / "is skating")
        return match (x.kind, y.kind) {
            (Kind::Word, Kind::Value(ValCat::Class(_), _)) => {
                !y.word.is_empty() && words_match(&x.key, &y.word, prefix_min)
            }
            (Kind::Value(ValCat::Class(_), _), Kind::Word) => {
                !x.word.is_empty() && words_match(&x.word, &y.key, prefix_min)
            }
            // one day of the month, written as an ordinal and as a number ("the 14th" / "Nov 14")
            _ => days_of_month(x, y) && same_str(&x.key, &y.key),
        };
    }
    if same_str(&x.key, &y.key) {
        return true;
    }
    if let Kind::Value(ValCat::Class(c), _) = x.kind {
        return lexicon().compatible(c, &x.key, &y.key);
    }
    if x.kind != Kind::Word {
        return false;
    }
    words_match(&x.key, &y.key, prefix_min)
}

/// Two days of the month, one written as an ordinal and the other as a number ("the 13th" /
/// "March 3").
pub(super) fn days_of_month(x: &Item, y: &Item) -> bool {
    let day = |x: &Item| x.key.parse::<u8>().is_ok_and(|d| (1..=31).contains(&d));
    matches!(
        (x.kind, y.kind),
        (Kind::Value(ValCat::Ordinal, _), Kind::Value(ValCat::Number, _))
            | (Kind::Value(ValCat::Number, _), Kind::Value(ValCat::Ordinal, _))
    ) && day(x)
        && day(y)
}

/// Two stems are one word: equal, or the shorter (of at least `prefix_min` letters) starts the
/// longer.
fn words_match(x: &str, y: &str, prefix_min: usize) -> bool {
    let (s, l) = if x.len() <= y.len() { (x, y) } else { (y, x) };
    s.len() >= prefix_min && l.as_bytes().first() == s.as_bytes().first() && l.starts_with(s)
}

/// Greedy one-to-one matching; exact matches first, then prefix matches.
/// Returns, for each item of a, the index of its partner in b.
pub(super) fn match_items(a: &[Item], b: &[Item], prefix_min: usize) -> (Vec<Option<usize>>, Vec<bool>) {
    let mut pa = vec![None; a.len()];
    let mut used = vec![false; b.len()];
    for pass in 0..2 {
        for (i, x) in a.iter().enumerate() {
            if pa[i].is_some() {
                continue;
            }
            for (j, y) in b.iter().enumerate() {
                if used[j] {
                    continue;
                }
                let ok = if pass == 0 {
                    x.kind == y.kind && same_str(&x.key, &y.key)
                } else {
                    items_match(x, y, prefix_min)
                };
                if ok {
                    pa[i] = Some(j);
                    used[j] = true;
                    break;
                }
            }
        }
    }
    (pa, used)
}

pub(super) struct Overlap {
    pub(super) matched: usize,
    pub(super) only_a: usize,
    pub(super) only_b: usize,
}

impl Overlap {
    pub(super) fn jaccard(&self) -> f64 {
        let union = self.matched + self.only_a + self.only_b;
        if union == 0 { 0.0 } else { self.matched as f64 / union as f64 }
    }
    pub(super) fn substitutions(&self) -> usize {
        self.only_a.min(self.only_b)
    }
}

pub(super) fn overlap(
    a: &[Item],
    b: &[Item],
    pa: &[Option<usize>],
    used: &[bool],
    skip_a: &dyn Fn(&Item) -> bool,
    skip_b: &dyn Fn(&Item) -> bool,
) -> Overlap {
    let mut o = Overlap { matched: 0, only_a: 0, only_b: 0 };
    for (i, x) in a.iter().enumerate() {
        if skip_a(x) {
            continue;
        }
        match pa[i] {
            Some(j) if !skip_b(&b[j]) => o.matched += 1,
            _ => o.only_a += 1,
        }
    }
    for (j, y) in b.iter().enumerate() {
        if skip_b(y) {
            continue;
        }
        if !used[j] {
            o.only_b += 1;
        } else if let Some(i) = pa.iter().position(|p| *p == Some(j))
            && skip_a(&a[i])
        {
            o.only_b += 1;
        }
    }
    o
}

/// One step of an order-preserving alignment of two item lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// `a[i]` and `b[j]` match.
    Both(usize, usize),
    /// `a[i]` has no partner.
    OnlyA(usize),
    /// `b[j]` has no partner.
    OnlyB(usize),
}

/// The longest order-preserving matching of `a` and `b` (a longest common subsequence under
/// [`items_match`]), as steps in text order; on ties an unmatched item of `a` comes first.
pub(super) fn align(a: &[Item], b: &[Item], prefix_min: usize) -> Vec<Step> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest matching of a[i..] and b[j..].
    let mut lcs = vec![0u16; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if items_match(&a[i], &b[j], prefix_min) {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let mut steps = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && items_match(&a[i], &b[j], prefix_min) && lcs[at(i, j)] == lcs[at(i + 1, j + 1)] + 1 {
            steps.push(Step::Both(i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            steps.push(Step::OnlyA(i));
            i += 1;
        } else {
            steps.push(Step::OnlyB(j));
            j += 1;
        }
    }
    steps
}
