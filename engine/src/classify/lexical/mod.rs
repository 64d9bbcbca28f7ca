//! The offline lexical pair classifier: decides whether an incoming memory restates, complements,
//! contradicts or has nothing to do with a stored one, with no model at all (docs/design.md §5,
//! docs/adr/0003-lexical-rules.md). It starts from the Ankita rules (content words, prefix match,
//! max(Jaccard, containment), merge and conflict bands) and adds evidence features that a bag of
//! words throws away: polarity (negation), value tokens (numbers, versions, dates, weekdays,
//! months, times, quantities), a short general antonym list and qualifiers (environment,
//! platform, region). A change is a contradiction only when it is the single difference between
//! two facts that otherwise agree. Every decision names the gate that made it and carries every
//! score it computed, so a classification event can explain it forever. Only `std` is used.

mod analysis;
mod announce;
mod change;
#[cfg(test)]
mod change_tests;
mod config;
mod cues;
mod denial;
#[cfg(test)]
mod denial_tests;
mod frame;
mod gates;
mod identity;
#[cfg(test)]
mod identity_tests;
mod lexicon;
mod matching;
mod roles;
mod stem;
mod terms;
#[cfg(test)]
mod tests;
mod tokens;
mod values;
mod verdict;

pub use analysis::{Analysis, analyse};
pub use config::LexicalConfig;
pub use gates::{Admission, classify, classify_admitted, classify_analysed};
pub use identity::IDENTITY_GATES;
pub use terms::{index_terms, index_terms_of, subject_terms};
pub use verdict::{Gate, Relation, Verdict};

/// Names this classifier records that event format 2 has no one-byte code for: they are written
/// as strings (`codec::NAMES_V2` is frozen) until a later format gives them codes.
pub const NAMES_WITHOUT_CODES: &[&str] = &[
    "multi_valued_slot",
    "negated_alternative",
    "correction",
    "replaced_filler",
    "replaced_person",
    "restatement",
    "different_referent",
    "subject_differs",
    "alternative_rest_jaccard",
    "alternative_rest_substitutions",
    "correction_restated",
    "filler_agreements",
    "filler_replaced_a",
    "filler_replaced_b",
    "one_word_swap",
];
