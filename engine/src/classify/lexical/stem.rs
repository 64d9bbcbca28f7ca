//! Word stems: the Snowball English (Porter2) stemmer, the one tantivy's analyzer uses for the
//! text index, so that recall and the classifier agree on what a word is.

use std::cell::RefCell;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;

/// Stems held per thread at most; past it the thread's stems are dropped and made again.
const HELD: usize = 1 << 16;

thread_local! {
    /// The stems this thread has made. A save stems its own words and, pair by pair, its
    /// candidates' and the rules' cue words: the same few thousand words again and again, and a
    /// lookup costs a fraction of a run of the stemmer.
    static STEMS: RefCell<FxHashMap<Box<str>, Box<str>>> = RefCell::default();
}

/// The stem of a lowercased word. Words that are not ASCII, or of three letters or fewer, are
/// kept as they are (the stemmer is for English, and short words are mostly function words).
pub(super) fn stem(w: &str) -> String {
    if !w.is_ascii() || w.len() <= 3 {
        return w.to_string();
    }
    STEMS.with_borrow_mut(|held| {
        if let Some(s) = held.get(w) {
            return s.to_string();
        }
        let s = run(w);
        if held.len() >= HELD {
            held.clear();
        }
        held.insert(w.into(), s.as_str().into());
        s
    })
}

/// The stemmer itself.
fn run(w: &str) -> String {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English)).stem(w).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stem held gives what the stemmer gives, the first time and every time after, also past
    /// the bound (the held stems dropped).
    #[test]
    fn a_held_stem_is_the_stemmers() {
        let words = ["running", "deploys", "migrated", "Docusaurus", "préférences", "cat", "generously"];
        for round in 0..3 {
            for w in words {
                let expected = if !w.is_ascii() || w.len() <= 3 { w.to_string() } else { run(w) };
                assert_eq!(stem(w), expected, "{w}, round {round}");
            }
        }
        for i in 0..HELD + 10 {
            stem(&format!("word{i}ing"));
        }
        assert!(STEMS.with_borrow(|held| held.len()) <= HELD);
        assert_eq!(stem("running"), run("running"));
    }
}
