//! The word lists the analysis consults: stop words, negation cues and antonyms.

use super::analysis::Analysis;
use super::stem::stem;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

pub(super) fn stop_word(w: &str) -> bool {
    matches!(
        w,
        "a" | "an"
            | "the"
            | "this"
            | "that"
            | "these"
            | "those"
            | "there"
            | "here"
            | "it"
            | "its"
            | "i"
            | "me"
            | "my"
            | "mine"
            | "myself"
            | "we"
            | "us"
            | "our"
            | "ours"
            | "you"
            | "your"
            | "yours"
            | "he"
            | "him"
            | "his"
            | "she"
            | "her"
            | "hers"
            | "they"
            | "them"
            | "their"
            | "theirs"
            | "itself"
            | "himself"
            | "herself"
            | "themselves"
            | "who"
            | "whom"
            | "whose"
            | "which"
            | "what"
            | "when"
            | "where"
            | "why"
            | "how"
            | "is"
            | "are"
            | "was"
            | "were"
            | "be"
            | "been"
            | "being"
            | "am"
            | "do"
            | "does"
            | "did"
            | "doing"
            | "done"
            | "have"
            | "has"
            | "had"
            | "having"
            | "will"
            | "would"
            | "shall"
            | "should"
            | "can"
            | "could"
            | "may"
            | "might"
            | "must"
            | "to"
            | "of"
            | "in"
            | "on"
            | "at"
            | "by"
            | "for"
            | "with"
            | "from"
            | "into"
            | "onto"
            | "about"
            | "as"
            | "than"
            | "then"
            | "so"
            | "and"
            | "or"
            | "but"
            | "if"
            | "also"
            | "just"
            | "very"
            | "really"
            | "some"
            | "any"
            | "each"
            | "every"
            | "all"
            | "both"
            | "either"
            | "other"
            | "another"
            | "such"
            | "own"
            | "same"
            | "too"
            | "up"
            | "down"
            | "out"
            | "off"
            | "over"
            | "under"
            | "again"
            | "further"
            | "once"
            | "only"
            | "more"
            | "most"
            | "less"
            | "least"
            | "much"
            | "many"
            | "few"
            | "lot"
            | "lots"
            | "get"
            | "gets"
            | "got"
            | "getting"
            | "use"
            | "uses"
            | "using"
            | "used"
            | "thing"
            | "things"
            | "stuff"
            | "something"
            | "someone"
            | "somebody"
            | "anything"
            | "anyone"
            | "everyone"
            | "everything"
            | "etc"
            | "e.g"
            | "i.e"
            | "via"
            | "per"
            | "while"
            | "although"
            | "though"
            | "because"
            | "since"
            | "until"
            | "till"
            | "after"
            | "before"
            | "during"
            | "through"
            | "across"
            | "along"
            | "around"
            | "near"
            | "now"
            | "currently"
            | "still"
            | "already"
            | "yet"
            | "always"
            | "usually"
            | "often"
            | "sometimes"
            | "ever"
            | "let"
            | "ok"
            | "okay"
            | "which's"
            | "one's"
            | "whether"
            | "upon"
            | "within"
            | "against"
            | "between"
            | "among"
            | "like's"
            | "said"
            | "says"
            | "say"
            | "kind"
            | "sort"
            | "bit"
    )
}

pub(super) fn negation_cue(w: &str) -> bool {
    matches!(
        w,
        "not" | "no" | "never" | "nobody" | "nothing" | "none" | "nowhere" | "neither" | "nor" | "without" | "noone"
    )
}

/// A short list of general English opposites (not fitted to any data set). Matched on stems.
pub(super) const ANTONYMS: &[(&str, &str)] = &[
    ("on", "off"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("true", "false"),
    ("open", "closed"),
    ("open", "close"),
    ("start", "stop"),
    ("up", "down"),
    ("in", "out"),
    ("before", "after"),
    ("allow", "deny"),
    ("allow", "forbid"),
    ("accept", "reject"),
    ("approve", "reject"),
    ("like", "dislike"),
    ("love", "hate"),
    ("always", "never"),
    ("increase", "decrease"),
    ("win", "lose"),
    ("empty", "full"),
    ("old", "new"),
    ("old", "young"),
    ("pass", "fail"),
    ("succeed", "fail"),
    ("success", "failure"),
    ("add", "remove"),
    ("include", "exclude"),
    ("public", "private"),
    ("online", "offline"),
    ("visible", "hidden"),
    ("show", "hide"),
    ("push", "pull"),
    ("buy", "sell"),
    ("import", "export"),
    ("inside", "outside"),
    ("above", "below"),
    ("high", "low"),
    ("big", "small"),
    ("large", "small"),
    ("hot", "cold"),
    ("fast", "slow"),
    ("early", "late"),
    ("first", "last"),
    ("minimum", "maximum"),
    ("more", "less"),
    ("most", "least"),
    ("many", "few"),
    ("better", "worse"),
    ("best", "worst"),
    ("light", "dark"),
    ("internal", "external"),
    ("manual", "automatic"),
    ("manually", "automatically"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("permanent", "temporary"),
    ("ascending", "descending"),
    ("join", "leave"),
    ("arrive", "leave"),
    ("present", "absent"),
    ("alive", "dead"),
    ("happy", "sad"),
    ("good", "bad"),
    ("right", "wrong"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("yes", "no"),
    ("same", "different"),
    ("pro", "con"),
    ("agree", "disagree"),
    ("appear", "disappear"),
    ("connect", "disconnect"),
    ("approve", "disapprove"),
    ("allow", "disallow"),
    ("like", "hate"),
    ("prefer", "avoid"),
    ("love", "dislike"),
    ("up", "off"),
    ("maximum", "minimum"),
    ("max", "min"),
    ("asleep", "awake"),
    ("wet", "dry"),
    ("strong", "weak"),
    ("rich", "poor"),
    ("cheap", "expensive"),
    ("easy", "hard"),
    ("easy", "difficult"),
    ("safe", "dangerous"),
    ("clean", "dirty"),
    ("loud", "quiet"),
    ("heavy", "light"),
    ("long", "short"),
    ("tall", "short"),
    ("wide", "narrow"),
    ("thick", "thin"),
    ("top", "bottom"),
    ("front", "back"),
    ("north", "south"),
    ("east", "west"),
    ("day", "night"),
    ("morning", "evening"),
    ("summer", "winter"),
    ("male", "female"),
    ("remember", "forget"),
    ("lock", "unlock"),
    ("enter", "exit"),
    ("import", "export"),
    ("upload", "download"),
    ("upgrade", "downgrade"),
    ("encrypt", "decrypt"),
    ("include", "omit"),
    ("near", "far"),
    ("into", "out"),
    ("onto", "off"),
    ("lot", "few"),
];

/// The antonym pairs by stem, in both directions: a stem → `(rank, its opposite)` for each pair
/// it is one side of, where `rank` is the pair's place in [`ANTONYMS`] (twice, plus one for the
/// reversed direction): the order the pairs are tried in.
pub(super) fn antonyms_by_stem() -> &'static FxHashMap<String, Vec<(usize, String)>> {
    static CELL: OnceLock<FxHashMap<String, Vec<(usize, String)>>> = OnceLock::new();
    CELL.get_or_init(|| {
        let mut by_stem: FxHashMap<String, Vec<(usize, String)>> = FxHashMap::default();
        for (i, (x, y)) in ANTONYMS.iter().enumerate() {
            let (x, y) = (stem(x), stem(y));
            by_stem.entry(x.clone()).or_default().push((2 * i, y.clone()));
            by_stem.entry(y).or_default().push((2 * i + 1, x));
        }
        by_stem
    })
}

/// Finds an antonym pair: a stem on one side whose opposite is on the other, and neither side
/// has both. Also the general prefixes un-/non- (`available`/`unavailable`). Of several pairs,
/// the first in [`ANTONYMS`] order wins; only the stems of `a` are looked up (a handful), not
/// every pair.
pub(super) fn find_antonym(a: &Analysis, b: &Analysis) -> Option<(String, String)> {
    let by_stem = antonyms_by_stem();
    let found = a
        .stems
        .iter()
        .filter_map(|p| by_stem.get(p).map(|opposites| (p, opposites)))
        .flat_map(|(p, opposites)| opposites.iter().map(move |(rank, q)| (*rank, p, q)))
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
