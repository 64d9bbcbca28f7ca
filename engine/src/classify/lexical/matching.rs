//! One-to-one matching of two analyses' items, and the overlap counts the scores come from.

use super::analysis::Item;
use super::analysis::Kind;
use super::values::same_str;

pub(super) fn items_match(x: &Item, y: &Item, prefix_min: usize) -> bool {
    if x.kind != y.kind {
        return false;
    }
    if same_str(&x.key, &y.key) {
        return true;
    }
    if x.kind != Kind::Word {
        return false;
    }
    let (s, l) = if x.key.len() <= y.key.len() { (&x.key, &y.key) } else { (&y.key, &x.key) };
    s.len() >= prefix_min && l.as_bytes().first() == s.as_bytes().first() && l.starts_with(s.as_str())
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
