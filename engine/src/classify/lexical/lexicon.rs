//! The word lists the analysis consults, loaded once from the data files in
//! `engine/src/classify/lexicon/`: the function words of English (`grammar.tsv`), the predicates
//! whose slots hold many values (`predicates.txt`), the value categories and their broader values
//! and the antonym pairs generated from WordNet 3.0 (`categories.tsv`, `broader.tsv`,
//! `antonyms.tsv`, by `scripts/lexicon/gen_lexicon.py`), the ISO 3166-1 countries and demonyms
//! WordNet lacks (`demonyms.tsv`, by `scripts/lexicon/gen_demonyms.py`), the opposites WordNet
//! lacks (`antonyms-extra.tsv`), and where a category's value is one at a time whatever governs
//! its clause (`one_value.tsv`). Data, not code: a word list changes by editing or regenerating a
//! file.

use std::sync::OnceLock;

use rustc_hash::{FxHashMap, FxHashSet};

use super::analysis::Analysis;
use super::stem::stem;

const GRAMMAR: &str = include_str!("../lexicon/grammar.tsv");
const PREDICATES: &str = include_str!("../lexicon/predicates.txt");
const CATEGORIES: &str = include_str!("../lexicon/categories.tsv");
const DEMONYMS: &str = include_str!("../lexicon/demonyms.tsv");
const PRODUCTS: &str = include_str!("../lexicon/products.tsv");
const BROADER: &str = include_str!("../lexicon/broader.tsv");
const ANTONYMS: &str = include_str!("../lexicon/antonyms.tsv");
const ANTONYMS_EXTRA: &str = include_str!("../lexicon/antonyms-extra.tsv");
const IRREGULAR: &str = include_str!("../lexicon/irregular.tsv");
const VALUES: &str = include_str!("../lexicon/values.tsv");
const ONE_VALUE: &str = include_str!("../lexicon/one_value.tsv");
const ALIASES: &str = include_str!("../lexicon/aliases.tsv");
const FIRST_NAMES: &str = include_str!("../lexicon/first_names.txt");

/// The classes of a function word (`grammar.tsv`), as bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct WordClass(u16);

impl WordClass {
    pub(super) const STOP: WordClass = WordClass(1);
    pub(super) const NEGATION: WordClass = WordClass(1 << 1);
    pub(super) const CLAUSE: WordClass = WordClass(1 << 2);
    pub(super) const CONTRAST: WordClass = WordClass(1 << 3);
    pub(super) const CONNECTOR: WordClass = WordClass(1 << 4);
    pub(super) const EXCLUSIVE: WordClass = WordClass(1 << 5);
    pub(super) const DEFINITE: WordClass = WordClass(1 << 6);
    pub(super) const HAVE: WordClass = WordClass(1 << 7);
    pub(super) const VERB: WordClass = WordClass(1 << 8);
    pub(super) const COPULA: WordClass = WordClass(1 << 9);
    pub(super) const INDEFINITE: WordClass = WordClass(1 << 10);
    pub(super) const HEDGE: WordClass = WordClass(1 << 11);
    pub(super) const ATTITUDE: WordClass = WordClass(1 << 12);

    fn named(name: &str) -> Option<WordClass> {
        Some(match name {
            "stop" => WordClass::STOP,
            "negation" => WordClass::NEGATION,
            "clause" => WordClass::CLAUSE,
            "contrast" => WordClass::CONTRAST,
            "connector" => WordClass::CONNECTOR,
            "exclusive" => WordClass::EXCLUSIVE,
            "definite" => WordClass::DEFINITE,
            "have" => WordClass::HAVE,
            "verb" => WordClass::VERB,
            "copula" => WordClass::COPULA,
            "indefinite" => WordClass::INDEFINITE,
            "hedge" => WordClass::HEDGE,
            "attitude" => WordClass::ATTITUDE,
            _ => return None,
        })
    }

    pub(super) fn has(self, class: WordClass) -> bool {
        self.0 & class.0 != 0
    }
}

/// One reading of a surface in `categories.tsv`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    /// index into [`Lexicon::categories`].
    pub(super) category: u8,
    /// the value the surface stands for.
    pub(super) canonical: &'static str,
    /// applies only when the text writes the word capitalised (a proper noun).
    pub(super) capitalised: bool,
}

/// When a word of `values.tsv` counts as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    Any,
    /// written capitalised ("Mon", "August").
    Capitalised,
    /// capitalised and not the first word of a sentence ("May", "March").
    CapitalisedInside,
    /// written in capitals ("EU").
    Upper,
}

/// A word of a value or a qualifier (`values.tsv`).
#[derive(Clone, Copy, Debug)]
struct ValueWord {
    kind: &'static str,
    canonical: &'static str,
    case: Case,
}

/// The index of a category's name, added when new; `None` past the 256 an entry can name.
fn category_index(categories: &mut Vec<&'static str>, name: &'static str) -> Option<u8> {
    let at = categories.iter().position(|c| *c == name).unwrap_or_else(|| {
        categories.push(name);
        categories.len() - 1
    });
    u8::try_from(at).ok()
}

/// Every table, parsed once.
pub(super) struct Lexicon {
    words: FxHashMap<&'static str, WordClass>,
    /// stems of the predicates whose slots hold many values.
    many: FxHashSet<String>,
    /// stems of the verbs of attitude (`grammar.tsv`, class `attitude`).
    attitudes: FxHashSet<String>,
    /// category names, by index.
    categories: Vec<&'static str>,
    /// the first index of [`Lexicon::categories`] read from `products.tsv`: the categories of
    /// tools, services and products come after every other.
    first_product: usize,
    /// surface (lowercase, words joined by one space) → its readings.
    entries: FxHashMap<&'static str, Vec<Entry>>,
    /// the first word of every surface of more than one word.
    starts_phrase: FxHashSet<&'static str>,
    /// (category, value) → the values it is a kind of, nearest first.
    broader: FxHashMap<(u8, &'static str), Vec<&'static str>>,
    /// a stem → `(rank, its opposite's stem)` for each pair it is one side of.
    antonyms: FxHashMap<String, Vec<(usize, String)>>,
    /// an irregular inflection → its base form (won → win, children → child).
    irregular: FxHashMap<&'static str, &'static str>,
    /// the irregular inflections of verbs (grew, born, met).
    irregular_verbs: FxHashSet<&'static str>,
    /// the words of values and qualifiers, by lowercased word.
    values: FxHashMap<&'static str, Vec<ValueWord>>,
    /// category (or `nationality`) → the markers after which its value is one at a time
    /// (`one_value.tsv`).
    one_value: FxHashMap<&'static str, Vec<&'static str>>,
    /// a short form or synonym → the word it stands for (`aliases.tsv`).
    aliases: FxHashMap<&'static str, &'static str>,
    /// given names, lowercase (`first_names.txt`).
    first_names: FxHashSet<&'static str>,
}

/// Lines of a data file that are not comments or blank, split on tabs.
fn rows(data: &'static str) -> impl Iterator<Item = Vec<&'static str>> {
    data.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).map(|l| l.split('\t').collect())
}

/// The lexicon. The data files are part of the binary; a malformed line is a build defect the
/// tests catch (`the_lexicon_loads_every_line`), so loading skips it rather than failing.
pub(super) fn lexicon() -> &'static Lexicon {
    static CELL: OnceLock<Lexicon> = OnceLock::new();
    CELL.get_or_init(Lexicon::load)
}

impl Lexicon {
    fn load() -> Lexicon {
        let mut words: FxHashMap<&'static str, WordClass> = FxHashMap::default();
        for row in rows(GRAMMAR) {
            if let [word, class] = row[..]
                && let Some(c) = WordClass::named(class)
            {
                words.entry(word).or_default().0 |= c.0;
            }
        }
        let attitudes = words.iter().filter(|(_, c)| c.has(WordClass::ATTITUDE)).map(|(w, _)| stem(w)).collect();
        let many =
            PREDICATES.lines().filter(|l| !l.starts_with('#')).flat_map(str::split_whitespace).map(stem).collect();
        let mut categories: Vec<&'static str> = Vec::new();
        let mut entries: FxHashMap<&'static str, Vec<Entry>> = FxHashMap::default();
        let mut starts_phrase = FxHashSet::default();
        for row in rows(CATEGORIES).chain(rows(DEMONYMS)) {
            let [surface, category, canonical, case] = row[..] else { continue };
            let Some(category) = category_index(&mut categories, category) else { continue };
            if let Some((first, _)) = surface.split_once(' ') {
                starts_phrase.insert(first);
            }
            entries.entry(surface).or_default().push(Entry { category, canonical, capitalised: case == "cap" });
        }
        let first_product = categories.len();
        for row in rows(PRODUCTS) {
            let [surface, category, canonical, case] = row[..] else { continue };
            let Some(category) = category_index(&mut categories, category) else { continue };
            if let Some((first, _)) = surface.split_once(' ') {
                starts_phrase.insert(first);
            }
            // a product's name reads as one written either way ("Postgres", "pnpm"), a proper
            // noun's reading included; a word of everyday English only as written capitalised
            let readings = entries.entry(surface).or_default();
            readings.push(Entry { category, canonical, capitalised: true });
            if case != "cap" {
                readings.push(Entry { category, canonical, capitalised: false });
            }
        }
        let mut parent: FxHashMap<(u8, &'static str), &'static str> = FxHashMap::default();
        for row in rows(BROADER) {
            let [category, value, broader] = row[..] else { continue };
            if let Some(c) = categories.iter().position(|c| *c == category).and_then(|c| u8::try_from(c).ok()) {
                parent.insert((c, value), broader);
            }
        }
        let mut broader: FxHashMap<(u8, &'static str), Vec<&'static str>> = FxHashMap::default();
        for &(c, value) in parent.keys() {
            let mut chain = Vec::new();
            let mut at = value;
            while let Some(&up) = parent.get(&(c, at)) {
                if up == value || chain.contains(&up) {
                    break;
                }
                chain.push(up);
                at = up;
            }
            broader.insert((c, value), chain);
        }
        let mut antonyms: FxHashMap<String, Vec<(usize, String)>> = FxHashMap::default();
        for (i, row) in rows(ANTONYMS_EXTRA).chain(rows(ANTONYMS)).enumerate() {
            let (Some(x), Some(y)) = (row.first(), row.get(1)) else { continue };
            let (x, y) = (stem(x), stem(y));
            if x == y {
                continue;
            }
            antonyms.entry(x.clone()).or_default().push((2 * i, y.clone()));
            antonyms.entry(y).or_default().push((2 * i + 1, x));
        }
        let irregular = rows(IRREGULAR).filter_map(|r| Some((*r.first()?, *r.get(1)?))).collect();
        let irregular_verbs =
            rows(IRREGULAR).filter(|r| r.get(2) == Some(&"v")).filter_map(|r| r.first().copied()).collect();
        let mut values: FxHashMap<&'static str, Vec<ValueWord>> = FxHashMap::default();
        for row in rows(VALUES) {
            let [word, kind, canonical, case] = row[..] else { continue };
            let case = match case {
                "cap" => Case::Capitalised,
                "cap-inside" => Case::CapitalisedInside,
                "upper" => Case::Upper,
                _ => Case::Any,
            };
            values.entry(word).or_default().push(ValueWord { kind, canonical, case });
        }
        let mut one_value: FxHashMap<&'static str, Vec<&'static str>> = FxHashMap::default();
        for row in rows(ONE_VALUE) {
            let [category, marker] = row[..] else { continue };
            one_value.entry(category).or_default().push(marker);
        }
        Lexicon {
            words,
            many,
            attitudes,
            categories,
            first_product,
            entries,
            starts_phrase,
            broader,
            antonyms,
            irregular,
            irregular_verbs,
            values,
            one_value,
            first_names: FIRST_NAMES.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect(),
            aliases: rows(ALIASES).filter_map(|r| Some((*r.first()?, *r.get(1)?))).collect(),
        }
    }

    /// The classes of a lowercased word (none for a content word).
    pub(super) fn class(&self, w: &str) -> WordClass {
        self.words.get(w).copied().unwrap_or_default()
    }

    pub(super) fn is(&self, w: &str, class: WordClass) -> bool {
        self.class(w).has(class)
    }

    /// The base form of an irregular inflection ("won" → "win"), else the word itself.
    pub(super) fn base<'w>(&self, w: &'w str) -> &'w str {
        match self.irregular.get(w) {
            Some(base) => base,
            None => w,
        }
    }

    /// Whether a lowercased word is a given name (`first_names.txt`).
    pub(super) fn first_name(&self, w: &str) -> bool {
        self.first_names.contains(w)
    }

    /// The word a short form or synonym stands for ("db" → "database", `aliases.tsv`), else
    /// the word itself.
    pub(super) fn alias<'w>(&self, w: &'w str) -> &'w str {
        match self.aliases.get(w) {
            Some(canonical) => canonical,
            None => w,
        }
    }

    /// Whether a lowercased word is an irregular inflection of a verb (grew, born, met): a past
    /// form, as a verb's regular ones are not listed.
    pub(super) fn irregular_verb(&self, w: &str) -> bool {
        self.irregular_verbs.contains(w)
    }

    /// Whether a lowercased word is any word of `values.tsv`.
    pub(super) fn is_value_word(&self, w: &str) -> bool {
        self.values.contains_key(w)
    }

    /// The canonical form of a word of `kind` in `values.tsv` ("tues" → "tuesday"): `w` is the
    /// word lowercased, `t` as written, `first` whether it opens a sentence.
    pub(super) fn value(&self, kind: &str, w: &str, t: &str, first: bool) -> Option<&'static str> {
        let capital = t.starts_with(char::is_uppercase);
        self.values.get(w)?.iter().find_map(|v| {
            let written = match v.case {
                Case::Any => true,
                Case::Capitalised => capital,
                Case::CapitalisedInside => capital && !first,
                Case::Upper => t.chars().all(|c| !c.is_lowercase()),
            };
            (v.kind == kind && written).then_some(v.canonical)
        })
    }

    /// The markers after which a value of `category` (a category's name, or `nationality`: a
    /// people's adjective before a noun) is one at a time (`one_value.tsv`): the prepositions that
    /// open its phrase ("in", "out of") and `result`.
    pub(super) fn one_value_markers(&self, category: &str) -> &[&'static str] {
        self.one_value.get(category).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether a lowercased word says what someone is rather than who: a people's or a place's
    /// adjective or demonym ("French", "Brazilian", "Parisian": a place's surface that is not its
    /// name), a language, a religion's. "Jordan", "Georgia" and "Chad" are places' names, and
    /// people's.
    pub(super) fn describes_people(&self, w: &str) -> bool {
        self.readings(w).iter().any(|e| match self.category_name(e.category) {
            "language" | "religion" => true,
            "country" | "city" | "state_province" | "continent" => e.canonical != w,
            _ => false,
        })
    }

    /// Whether the verb with this stem is one of attitude (liking, wanting, knowing, having).
    pub(super) fn attitude(&self, stem: &str) -> bool {
        self.attitudes.contains(stem)
    }

    /// Whether the predicate with this stem holds many values in its slot.
    pub(super) fn holds_many(&self, stem: &str) -> bool {
        self.many.contains(stem)
    }

    /// The readings of a lowercased surface of one to three words; a plural reads as its
    /// singular ("drums", "countries", "women": WordNet's lemmas are singular).
    pub(super) fn readings(&self, surface: &str) -> &[Entry] {
        if let Some(e) = self.entries.get(surface) {
            return e;
        }
        singulars(surface).find_map(|s| self.entries.get(s.as_str())).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether some surface of several words starts with this word.
    pub(super) fn starts_phrase(&self, w: &str) -> bool {
        self.starts_phrase.contains(w)
    }

    /// Whether a category is one of tools, services or products (`products.tsv`): one subject
    /// has one of them for one purpose, so two of one category are two values of one attribute.
    pub(super) fn product_category(&self, category: u8) -> bool {
        usize::from(category) >= self.first_product
    }

    pub(super) fn category_name(&self, category: u8) -> &'static str {
        self.categories.get(usize::from(category)).copied().unwrap_or("value")
    }

    /// Two values of one category that do not exclude each other: equal, or one a kind of the
    /// other (crimson and red; cardiologist and physician).
    pub(super) fn compatible(&self, category: u8, x: &str, y: &str) -> bool {
        x == y
            || self.broader.get(&(category, x)).is_some_and(|up| up.contains(&y))
            || self.broader.get(&(category, y)).is_some_and(|up| up.contains(&x))
    }

    /// `(rank, opposite)` for each antonym pair a stem is one side of; the rank orders pairs
    /// (the hand-written supplement first, then WordNet's file order).
    pub(super) fn opposites(&self, stem: &str) -> &[(usize, String)] {
        self.antonyms.get(stem).map(Vec::as_slice).unwrap_or(&[])
    }

    #[cfg(test)]
    pub(super) fn sizes(&self) -> (usize, usize, usize, usize) {
        (self.words.len(), self.many.len(), self.entries.len(), self.antonyms.len())
    }

    #[cfg(test)]
    pub(super) fn every_pair() -> Vec<(String, String)> {
        rows(ANTONYMS_EXTRA)
            .chain(rows(ANTONYMS))
            .filter_map(|r| Some((stem(r.first()?), stem(r.get(1)?))))
            .filter(|(x, y)| x != y)
            .collect()
    }
}

/// Finds an antonym pair: a stem on one side whose opposite is on the other, and neither side
/// has both. Also the general prefixes un-/non- (`available`/`unavailable`). Of several pairs,
/// the lowest rank wins; only the stems of `a` are looked up (a handful), not every pair.
/// The singulars a plural may have, by English's regular plural endings (WordNet's own
/// detachment rules for nouns): -s, -ses, -xes, -zes, -ches, -shes, -men, -ies.
fn singulars(w: &str) -> impl Iterator<Item = String> + '_ {
    const RULES: [(&str, &str); 8] = [
        ("ies", "y"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("ses", "s"),
        ("xes", "x"),
        ("zes", "z"),
        ("men", "man"),
        ("s", ""),
    ];
    RULES.iter().filter_map(move |(plural, singular)| {
        let stem = w.strip_suffix(plural)?;
        (stem.len() >= 2 && !w.ends_with("ss")).then(|| format!("{stem}{singular}"))
    })
}

pub(super) fn find_antonym(a: &Analysis, b: &Analysis) -> Option<(String, String)> {
    let lex = lexicon();
    let found = a
        .stems
        .iter()
        .flat_map(|p| lex.opposites(p).iter().map(move |(rank, q)| (*rank, p, q)))
        .filter(|(_, p, q)| b.stems.contains(q) && !a.stems.contains(q) && !b.stems.contains(p))
        .min_by_key(|(rank, _, _)| *rank);
    if let Some((_, p, q)) = found {
        return Some((p.clone(), q.clone()));
    }
    for (s, o) in [(a, b), (b, a)] {
        for w in &s.stems {
            for pre in ["un", "non"] {
                if let Some(base) = w.strip_prefix(pre)
                    && base.len() >= 4
                    && o.stems.contains(base)
                    && !s.stems.contains(base)
                    && !o.stems.contains(w.as_str())
                {
                    return if std::ptr::eq(s, a) {
                        Some((w.clone(), base.to_string()))
                    } else {
                        Some((base.to_string(), w.clone()))
                    };
                }
            }
        }
    }
    None
}
