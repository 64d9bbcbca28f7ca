//! Raw tokens: whitespace chunks with punctuation trimmed, contractions expanded, compounds
//! split, and what a classification asks of each (a clause boundary follows, a connector word).

/// What a classification asks of one raw token after its analysis.
#[derive(Clone, Copy, Debug)]
pub(super) struct RawFlags {
    /// a clause boundary (punctuation) follows the token.
    pub(super) boundary: bool,
    /// the token is a [`connector`] word.
    pub(super) connector: bool,
    /// the token was written with a possessive `'s` ("Tim's").
    pub(super) possessive: bool,
}

pub(super) struct RawTok {
    pub(super) text: String,
    pub(super) lower: String,
    /// a clause boundary (punctuation) follows this token.
    pub(super) boundary: bool,
    /// a sentence ends after this token (`.`, `!`, `?`, `;`).
    pub(super) sentence_end: bool,
    /// a part of a compound written with `-` or `/` ("maple" in "maple-catalog").
    pub(super) in_compound: bool,
    /// written with a possessive `'s` (or a bare `'`) that was cut off ("Alice's" → "Alice").
    pub(super) possessive: bool,
}

/// The tokens `span` of `raw` as written, joined by spaces ("a full hour", "took over"): how a
/// value, a cue or a role read from several tokens is shown in reasons.
pub(super) fn written(raw: &[RawTok], span: std::ops::Range<usize>) -> String {
    raw[span].iter().map(|r| r.text.as_str()).collect::<Vec<_>>().join(" ")
}

/// Splits text into raw tokens: whitespace-separated chunks with surrounding punctuation
/// trimmed, contractions expanded (`don't` → `do not`), alphabetic compounds split on `-`/`/`,
/// and anything else (hostnames, versions, paths, identifiers) kept whole.
pub(super) fn raw_tokens(text: &str) -> Vec<RawTok> {
    let mut out: Vec<RawTok> = Vec::new();
    for chunk in text.split_whitespace() {
        let chunk: std::borrow::Cow<str> = if chunk.contains(['\u{2019}', '\u{2018}']) {
            chunk.replace(['\u{2019}', '\u{2018}'], "'").into()
        } else {
            chunk.into()
        };
        let lead: &[char] = &['"', '\'', '(', '[', '{', '<', '\u{201c}', '\u{ab}', '*', '`'];
        let trail: &[char] =
            &['"', '\'', ')', ']', '}', '>', '\u{201d}', '\u{bb}', '.', ',', ';', ':', '!', '?', '*', '`'];
        let start = chunk.trim_start_matches(lead);
        let core = start.trim_end_matches(trail);
        let tail = &start[core.len()..];
        let boundary = tail.chars().any(|c| matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | ')'));
        // a full stop after a title or an initial ("Dr.", "J.") does not end the sentence
        let abbreviation =
            core.chars().count() <= 1 || matches!(core, "Dr" | "Mr" | "Mrs" | "Ms" | "Prof" | "St" | "Jr" | "Sr");
        let sentence_end = tail.chars().any(|c| matches!(c, '!' | '?' | ';')) || (tail.contains('.') && !abbreviation);
        let boundary = boundary && !(abbreviation && tail == ".");
        if core.is_empty() {
            if boundary && let Some(last) = out.last_mut() {
                last.boundary = true;
                last.sentence_end |= sentence_end;
            }
            continue;
        }
        let mut parts: Vec<String> = Vec::new();
        let lower = core.to_lowercase();
        let mut possessive = false;
        // contractions
        if let Some(base) = lower.strip_suffix("n't") {
            let base = match base {
                "ca" => "can",
                "wo" => "will",
                "sha" => "shall",
                "ai" => "is",
                b => b,
            };
            if !base.is_empty() {
                parts.push(base.to_string());
            }
            parts.push("not".to_string());
        } else if lower == "cannot" {
            parts.push("can".to_string());
            parts.push("not".to_string());
        } else {
            let mut c = core.to_string();
            for suf in ["'s", "'re", "'ll", "'ve", "'m", "'d", "'"] {
                // `c` is still `core` here (the loop ends at the first cut), so `lower` is its
                // lowercase.
                if c.len() > suf.len() && lower.ends_with(suf) {
                    c.truncate(c.len() - suf.len());
                    possessive = matches!(suf, "'s" | "'");
                    break;
                }
            }
            let has_digit = c.chars().any(|ch| ch.is_ascii_digit());
            let alpha_compound = !has_digit
                && (c.contains('-') || c.contains('/'))
                && c.chars().all(|ch| ch.is_alphabetic() || ch == '-' || ch == '/' || ch == '\'');
            // an amount per unit ("300/min", "$2,000/month", "$250/night"): the amount, and
            // the unit it is counted per as a word ("a night", "requests/min")
            let per_unit = c.split_once('/').filter(|(amount, unit)| {
                amount.chars().any(|ch| ch.is_ascii_digit())
                    && !unit.is_empty()
                    && unit.chars().all(|ch| ch.is_ascii_alphabetic())
            });
            if alpha_compound {
                for p in c.split(['-', '/']) {
                    if !p.is_empty() {
                        parts.push(p.to_string());
                    }
                }
            } else if let Some((amount, unit)) = per_unit {
                parts.push(amount.to_string());
                parts.push(unit.to_string());
            } else {
                parts.push(c);
            }
        }
        let n = parts.len();
        let in_compound = n > 1 && !lower.starts_with("co-");
        for (i, p) in parts.into_iter().enumerate() {
            let lower = p.to_lowercase();
            let last = i + 1 == n;
            out.push(RawTok {
                text: p,
                lower,
                boundary: boundary && last,
                sentence_end: sentence_end && last,
                in_compound,
                possessive: possessive && last,
            });
        }
    }
    out
}

/// Words that open a separable condition, time or added clause (`grammar.tsv`, class
/// `connector`).
pub(super) fn connector(w: &str) -> bool {
    super::lexicon::lexicon().is(w, super::lexicon::WordClass::CONNECTOR)
}
