//! Word stems: the Snowball English (Porter2) stemmer, the one tantivy's analyzer uses for the
//! text index, so that recall and the classifier agree on what a word is.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

/// The stem of a lowercased word. Words that are not ASCII, or of three letters or fewer, are
/// kept as they are (the stemmer is for English, and short words are mostly function words).
pub(super) fn stem(w: &str) -> String {
    if !w.is_ascii() || w.len() <= 3 {
        return w.to_string();
    }
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English)).stem(w).into_owned()
}
