//! Index terms: what candidate search looks texts up by.

use super::analysis::{Analysis, Kind, analyse};
use super::values::ValCat;

/// Terms for an inverted index used to find candidates: any two texts that the classifier could
/// call related share at least one term. Content words give their stem and their first four
/// characters (so prefix matches meet); value tokens, identifiers and qualifiers are kept whole;
/// a value of a lexicon category also gives its category (`code_editor:*`), so that two values
/// of one attribute meet however differently the rest is worded ("Moved over to Neovim" / "Uses
/// VS Code as primary editor").
pub fn index_terms(text: &str) -> Vec<String> {
    index_terms_of(&analyse(text))
}

/// [`index_terms`] of a text already analysed.
pub fn index_terms_of(an: &Analysis) -> Vec<String> {
    terms_of_items(an, true, &mut |_| true)
}

/// The index terms of what a text announces changed (the topic and the old value of a change
/// statement) or of the role it names a holder of: candidate search looks for the beliefs about
/// them first, however little else they share. Empty for most texts.
pub fn subject_terms(an: &Analysis) -> Vec<String> {
    let mut at: Vec<usize> = Vec::new();
    if let Some(s) = &an.change {
        at.extend(s.topic.iter().chain(&s.from));
    }
    let role = an.role.as_ref().map(|r| r.role.as_str());
    if at.is_empty() && role.is_none() {
        return Vec::new();
    }
    terms_of_items(an, false, &mut |it| {
        at.contains(&it.raw_pos) || (it.kind == Kind::Word && Some(it.key.as_str()) == role)
    })
}

/// The terms of the items `keep` accepts; with `categories`, a category value's category too.
fn terms_of_items(
    an: &Analysis,
    categories: bool,
    keep: &mut dyn FnMut(&super::analysis::Item) -> bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A handful of terms: a scan beats hashing.
    let add = |s: String, out: &mut Vec<String>| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for it in an.items.iter().filter(|it| keep(it)) {
        match it.kind {
            Kind::Word => {
                let p: String = it.key.chars().take(4).collect();
                if p != it.key {
                    add(p, &mut out);
                }
                add(it.key.clone(), &mut out);
            }
            Kind::Ident => add(it.key.clone(), &mut out),
            Kind::Value(c @ ValCat::Class(_), _) if categories => {
                add(format!("{}:{}", c.as_str(), it.key), &mut out);
                add(format!("{}:*", c.as_str()), &mut out);
            }
            Kind::Value(c, u) => add(
                if u.0.is_empty() {
                    format!("{}:{}", c.as_str(), it.key)
                } else {
                    format!("{}:{}{}", c.as_str(), it.key, u.0)
                },
                &mut out,
            ),
            Kind::Qual(c) => add(format!("{}:{}", c.as_str(), it.key), &mut out),
        }
    }
    out.shrink_to_fit();
    out
}
