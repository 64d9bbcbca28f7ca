//! Roles and relations of one holder: "my manager is Sarah", "Sarah is my manager", "Alice is the
//! tech lead of the payments team", "Bob's landlord is Mr. Hale", "my dog is named Max", "my dog's
//! name is Buddy", "Manager: Sarah". The role nouns are data (`lexicon/roles.txt`); a role makes a
//! slot of one value whose value is the person or the name that holds it, for one owner (the
//! speaker, a possessor, the "of …" phrase). The plural ("my managers are…"), the indefinite ("is
//! a manager") and "one of the…" readings make no slot, so they stay complementary. Read once per
//! text ([`read`]), compared by [`role_holder`].

use std::sync::OnceLock;

use rustc_hash::FxHashSet;

use super::gates::Pair;
use super::lexicon::{WordClass, lexicon};
use super::stem::stem;
use super::tokens::{RawTok, written};
use super::verdict::{Gate, Relation, Verdict};

const ROLES: &str = include_str!("../lexicon/roles.txt");

fn roles() -> &'static FxHashSet<String> {
    static CELL: OnceLock<FxHashSet<String>> = OnceLock::new();
    CELL.get_or_init(|| {
        ROLES.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(stem).collect()
    })
}

/// The number of role nouns that load (for the lexicon's test).
#[cfg(test)]
pub(super) fn role_count() -> usize {
    roles().len()
}

/// Whether an item is a role noun of `roles.txt` ("CFO", "manager").
pub(super) fn is_role_word(x: &super::analysis::Item) -> bool {
    roles().contains(&x.key) || roles().contains(&stem(&x.shown.to_lowercase()))
}

/// The stem of the role noun `r` is, a short form read as its word ("mgr": manager).
fn role_stem(r: &RawTok) -> String {
    stem(lexicon().alias(&r.lower))
}

/// A role noun as written: singular (a plural is no slot of one value), lowercase.
fn is_role(r: &RawTok) -> bool {
    let w = lexicon().alias(&r.lower);
    if !w.chars().all(|c| c.is_alphabetic()) {
        return false;
    }
    let s = stem(w);
    if !roles().contains(&s) {
        return false;
    }
    // "managers", "leads": the stem drops a plural -s the singular lacks
    !(w.ends_with('s') && !w.ends_with("ss") && stem(&w[..w.len() - 1]) == s)
}

/// A slot of one holder.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct RoleSlot {
    /// the role noun's stem.
    pub(super) role: String,
    /// the role as written, with its modifiers ("tech lead").
    pub(super) shown: String,
    /// the stems of the words before the role noun ("tech" in "tech lead").
    pub(super) modifiers: Vec<String>,
    /// the speaker holds the relation ("my manager", "our landlord").
    pub(super) owner_first_person: bool,
    /// a note naming no owner ("Manager: Sarah"): a note is its writer's, so its relation is the
    /// speaker's ("my manager") as much as one with no owner named.
    pub(super) terse: bool,
    /// the stems of the owner's words ("payments team", "alice", "dog").
    pub(super) owner: Vec<String>,
    /// the holder's words, lowercased ("sarah", "tom").
    pub(super) holder: Vec<String>,
    /// the holder as written.
    pub(super) holder_shown: String,
}

const TITLES: [&str; 8] = ["mr", "mrs", "ms", "dr", "prof", "sir", "miss", "mx"];

fn content_stems(raw: &[RawTok], range: std::ops::Range<usize>) -> Vec<String> {
    let lex = lexicon();
    let mut out: Vec<String> = range
        .filter(|&k| !lex.is(&raw[k].lower, WordClass::STOP) && !lex.is(&raw[k].lower, WordClass::VERB))
        .map(|k| stem(lex.base(&raw[k].lower)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The holder: a name, a number or an identifier, up to a boundary (four tokens at most).
fn holder(raw: &[RawTok], from: usize, end: usize) -> Option<(Vec<String>, String, usize)> {
    let lex = lexicon();
    let first = raw.get(from)?;
    let written = |r: &RawTok| r.text.starts_with(char::is_uppercase) || r.text.chars().any(|c| c.is_ascii_digit());
    if !written(first) || lex.is(&first.lower, WordClass::STOP) && !first.text.starts_with(char::is_uppercase) {
        return None;
    }
    if matches!(first.lower.as_str(), "a" | "an" | "the" | "one" | "not" | "no" | "also" | "now") {
        return None;
    }
    // "my landlord is French": what the holder is, not who
    if lex.describes_people(&first.lower) && raw.get(from + 1).is_none_or(|n| !n.text.starts_with(char::is_uppercase)) {
        return None;
    }
    let mut k = from;
    let mut words = Vec::new();
    let mut shown = Vec::new();
    while k < end && k < from + 4 {
        let r = &raw[k];
        if !(written(r) || r.text.contains('@')) {
            break;
        }
        shown.push(r.text.clone());
        if !TITLES.contains(&r.lower.trim_end_matches('.')) {
            words.push(r.lower.clone());
        }
        k += 1;
        if r.boundary {
            break;
        }
    }
    if words.is_empty() {
        return None;
    }
    Some((words, shown.join(" "), k))
}

/// The slot of one holder the first sentence of `raw` states, if it states one.
pub(super) fn read(raw: &[RawTok]) -> Option<RoleSlot> {
    let lex = lexicon();
    let mut end = 0;
    while end < raw.len() && !raw[end].sentence_end {
        end += 1;
    }
    let end = (end + 1).min(raw.len());
    if end == 0
        || (0..end).any(|k| lex.is(&raw[k].lower, WordClass::NEGATION) || lex.is(&raw[k].lower, WordClass::HEDGE))
    {
        return None;
    }
    let w = |k: usize| raw.get(k).map(|r| r.lower.as_str()).unwrap_or("");
    let copula = (0..end).find(|&k| matches!(w(k), "is" | "was"));
    // "Manager: Sarah" — a role at the start, then a boundary
    if let Some(r) = (0..end.min(3)).find(|&k| raw[k].boundary)
        && is_role(&raw[r])
        && copula.is_none()
        && let Some((holder, holder_shown, _)) = holder(raw, r + 1, end)
    {
        return Some(RoleSlot {
            role: role_stem(&raw[r]),
            shown: written(raw, 0..r + 1),
            modifiers: content_stems(raw, 0..r),
            owner_first_person: false,
            terse: true,
            owner: Vec::new(),
            holder,
            holder_shown,
        });
    }
    let c = copula?;
    if c == 0 {
        return None;
    }
    // Before the copula: an owner's phrase ending in a role ("my manager", "Alice's landlord", "the
    // CEO of Acme", "my dog's name"), or one ending in a thing ("my dog" + "is named/called X").
    let owner_phrase = |until: usize| -> Option<(bool, Vec<String>, usize)> {
        // returns (first person, owner stems, where the role's phrase starts)
        let fp = matches!(w(0), "my" | "our");
        let possessive_at = (0..until).rfind(|&k| raw[k].possessive);
        // "his", "her", "their" name an owner the text does not: no slot
        let opens = fp || w(0) == "the" || possessive_at.is_some();
        if !opens {
            return None;
        }
        match possessive_at {
            Some(k) => Some((fp, content_stems(raw, 0..k + 1), k + 1)),
            None => Some((fp, Vec::new(), 1)),
        }
    };
    let named = matches!(w(c + 1), "named" | "called");
    if named {
        // "my dog is named Max": the owner is the phrase before the copula, the role its name
        let (fp, _, _) = owner_phrase(c)?;
        let (holder, holder_shown, _) = holder(raw, c + 2, end)?;
        return Some(RoleSlot {
            role: "name".to_string(),
            shown: "name".to_string(),
            modifiers: Vec::new(),
            owner_first_person: fp,
            terse: false,
            owner: content_stems(raw, 0..c),
            holder,
            holder_shown,
        });
    }
    // "POSS [mods] R [of Y] is X"
    if let Some((fp, mut owner, role_from)) = owner_phrase(c) {
        let of = (role_from..c).find(|&k| matches!(w(k), "of" | "for" | "at"));
        let role_at = of.unwrap_or(c).checked_sub(1)?;
        if role_at >= role_from && is_role(&raw[role_at]) && !raw[role_at].possessive {
            let (holder, holder_shown, _) = holder(raw, c + 1, end)?;
            if let Some(o) = of {
                owner.extend(content_stems(raw, o + 1..c));
                owner.sort();
                owner.dedup();
            }
            return Some(RoleSlot {
                role: role_stem(&raw[role_at]),
                shown: written(raw, role_from..role_at + 1),
                modifiers: content_stems(raw, role_from..role_at),
                owner_first_person: fp,
                terse: false,
                owner,
                holder,
                holder_shown,
            });
        }
        // "my dog's name is Buddy" is the case above (role "name", owner "dog")
        return None;
    }
    // "X is the/my/POSS [mods] R [of Y]": X the leading names
    let (holder_words, holder_shown, after) = holder(raw, 0, c)?;
    if after != c {
        return None;
    }
    let det = c + 1;
    let fp = matches!(w(det), "my" | "our");
    let (mut owner, role_from) = if fp || w(det) == "the" {
        (Vec::new(), det + 1)
    } else {
        // "Alice is Bob's manager"
        let k = (det..end.min(det + 4)).find(|&k| raw[k].possessive)?;
        (content_stems(raw, det..k + 1), k + 1)
    };
    let role_at = (role_from..end.min(role_from + 3)).find(|&k| is_role(&raw[k]))?;
    if (role_from..role_at).any(|k| raw[k].boundary || lex.is(w(k), WordClass::STOP)) {
        return None;
    }
    if matches!(w(role_at + 1), "of" | "for" | "at" | "on") && !raw[role_at].boundary {
        let stop = (role_at + 2..end).find(|&k| raw[k].boundary || lex.is(w(k), WordClass::CLAUSE));
        let until = stop.map_or(end, |k| if raw[k].boundary { k + 1 } else { k });
        owner.extend(content_stems(raw, role_at + 2..until));
        owner.sort();
        owner.dedup();
    } else if !(raw[role_at].boundary || role_at + 1 >= end || w(role_at + 1) == "and") {
        // "Alice is the manager who…", "the lead engineer": not the slot read here ("… is our
        // office manager and handles deliveries" is, and says more)
        return None;
    }
    Some(RoleSlot {
        role: role_stem(&raw[role_at]),
        shown: written(raw, role_from..role_at + 1),
        modifiers: content_stems(raw, role_from..role_at),
        owner_first_person: fp,
        terse: false,
        owner,
        holder: holder_words,
        holder_shown,
    })
}

/// Both memories name who holds one role of one owner, and the holders differ: one of them is
/// no longer (or never was) true.
pub(super) fn role_holder(p: &mut Pair) -> Option<Verdict> {
    let (x, y) = (p.a.role.as_deref()?, p.b.role.as_deref()?);
    if x.role != y.role
        || x.modifiers != y.modifiers
        || (x.owner_first_person != y.owner_first_person && !(x.terse || y.terse))
    {
        return None;
    }
    if x.owner != y.owner {
        return None;
    }
    if x.holder.iter().any(|h| y.holder.contains(h)) {
        return None;
    }
    let owner = if x.owner_first_person {
        "the speaker's ".to_string()
    } else if x.owner.is_empty() {
        String::new()
    } else {
        format!("{}'s ", x.owner.join(" "))
    };
    let reason = format!(
        "a role of one holder ({owner}{}): {} in one, {} in the other",
        x.shown, x.holder_shown, y.holder_shown
    );
    Some(p.verdict(Relation::Contradictory, Gate::RoleHolder, reason))
}
