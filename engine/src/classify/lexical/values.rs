//! Value tokens and qualifiers: numbers, versions, times, dates, weekdays, months, quantities
//! with units, and the environment/platform/region words that keep facts apart. The words
//! themselves are data (`lexicon/values.tsv`); this module parses and canonicalises.

use super::lexicon::lexicon;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ValCat {
    Number,
    Time,
    Date,
    Weekday,
    Month,
    RelDay,
    Frequency,
    Quantity,
    /// "3rd", "third", "eleventh": a place in an order, not an amount.
    Ordinal,
    /// A member of a category of the lexicon (`categories.tsv`): a colour, a country, a city…
    Class(u8),
}

impl ValCat {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            ValCat::Number => "number",
            ValCat::Time => "time",
            ValCat::Date => "date",
            ValCat::Weekday => "weekday",
            ValCat::Month => "month",
            ValCat::RelDay => "day",
            ValCat::Frequency => "frequency",
            ValCat::Quantity => "quantity",
            ValCat::Ordinal => "ordinal",
            ValCat::Class(c) => super::lexicon::lexicon().category_name(c),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum QualCat {
    Environment,
    Platform,
    Region,
}

impl QualCat {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            QualCat::Environment => "environment",
            QualCat::Platform => "platform",
            QualCat::Region => "region",
        }
    }
}

/// `a == b` that calls `memcmp` only when the lengths and the first bytes agree (and never for
/// two empty strings). A classification compares item keys and units pair by pair, and those
/// calls, mostly on unequal or empty strings, were a tenth of a bulk save's saving thread.
#[inline]
pub(super) fn same_str(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || (a.as_bytes()[0] == b.as_bytes()[0] && a == b))
}

/// A quantity's canonical unit as [`unit`] names it ("" for none), compared by [`same_str`].
#[derive(Clone, Copy, Debug, Eq)]
pub(super) struct Unit(pub(super) &'static str);

impl PartialEq for Unit {
    fn eq(&self, other: &Unit) -> bool {
        same_str(self.0, other.0)
    }
}

/// A weekday, plural or not ("Tuesdays" → tuesday); short forms only capitalised.
pub(super) fn weekday(w: &str, t: &str, first: bool) -> Option<&'static str> {
    let base = w.strip_suffix('s').filter(|b| b.ends_with("day")).unwrap_or(w);
    lexicon().value("weekday", base, t, first)
}

/// A month; "May", "March" and "August" only capitalised (and the first two not opening a
/// sentence), short forms only capitalised.
pub(super) fn month(w: &str, t: &str, first: bool) -> Option<&'static str> {
    lexicon().value("month", w, t, first)
}

/// A day named relative to now (today, tomorrow…).
pub(super) fn relday(w: &str) -> Option<&'static str> {
    lexicon().value("day", w, w, false)
}

/// A frequency (daily, weekly…), by its canonical name.
pub(super) fn frequency(w: &str) -> Option<&'static str> {
    lexicon().value("frequency", w, w, false)
}

/// The value of a number word ("twelve", "dozen", "hundred").
pub(super) fn number_word(w: &str) -> Option<u64> {
    lexicon().value("number", w, w, false)?.parse().ok()
}

/// An ordinal word's place: "first" 1, "third" 3, "eleventh" 11, "twentieth" 20, made from the
/// number words by English's ordinal suffixes (the irregular ones first).
pub(super) fn ordinal_word(w: &str) -> Option<u64> {
    let irregular = match w {
        "first" => Some(1),
        "second" => Some(2),
        "third" => Some(3),
        "fifth" => Some(5),
        "eighth" => Some(8),
        "ninth" => Some(9),
        "twelfth" => Some(12),
        _ => None,
    };
    if irregular.is_some() {
        return irregular;
    }
    if let Some(base) = w.strip_suffix("ieth") {
        return number_word(&format!("{base}y"));
    }
    w.strip_suffix("th").and_then(number_word).filter(|n| *n > 3)
}

/// Time zones written after a clock time ("02:00 UTC", "9am PT"): they say which time it is,
/// as a unit says which amount, and are no value of their own.
const TIME_ZONES: &[&str] = &[
    "UTC", "GMT", "Z", "ET", "EST", "EDT", "CT", "CST", "CDT", "MT", "MST", "MDT", "PT", "PST", "PDT", "AKST", "AKDT",
    "HST", "BST", "IST", "CET", "CEST", "EET", "EEST", "WET", "WEST", "MSK", "JST", "KST", "SGT", "HKT", "AEST",
    "AEDT", "ACST", "AWST", "NZST", "NZDT", "BRT", "ART",
];

/// Whether `t`, as written, is a time zone and `before`, the token written before it, a clock
/// time that it belongs to.
pub(super) fn zone_of_time(t: &str, before: &str) -> bool {
    TIME_ZONES.contains(&t) && parse_value(before).is_some_and(|(c, _, _)| c == ValCat::Time)
}

/// Canonical unit for a unit word or suffix.
pub(super) fn unit(w: &str) -> Option<&'static str> {
    lexicon().value("unit", w, w, false)
}

/// An environment (production, staging…), by its canonical name.
pub(super) fn env_qualifier(w: &str) -> Option<&'static str> {
    lexicon().value("environment", w, w, false)
}

/// `test`, `local`, `canary` name an environment only next to an environment word.
pub(super) fn weak_env_qualifier(w: &str) -> Option<&'static str> {
    lexicon().value("environment-weak", w, w, false)
}

/// A word that makes a weak environment word an environment ("test server").
pub(super) fn env_context(w: &str) -> bool {
    lexicon().value("environment-context", w, w, false).is_some()
}

/// A platform (linux, macOS, Windows…); "mac" and "windows" only capitalised.
pub(super) fn platform_qualifier(w: &str, t: &str) -> Option<&'static str> {
    lexicon().value("platform", w, t, false)
}

pub(super) fn region_qualifier(t: &str) -> Option<String> {
    if let Some(r) = lexicon().value("region", &t.to_lowercase(), t, false) {
        return Some(r.to_string());
    }
    // cloud regions such as us-east-1, eu-west-2, ap-southeast-1
    let parts: Vec<&str> = t.split('-').collect();
    if parts.len() == 3
        && parts[0].len() == 2
        && parts[0].chars().all(|c| c.is_ascii_alphabetic())
        && parts[1].chars().all(|c| c.is_ascii_alphabetic())
        && !parts[2].is_empty()
        && parts[2].chars().all(|c| c.is_ascii_digit())
    {
        return Some(t.to_lowercase());
    }
    None
}

/// Parses a token containing a digit into a value: (category, unit, canonical text).
pub(super) fn parse_value(t: &str) -> Option<(ValCat, &'static str, String)> {
    let lower = t.to_lowercase();
    let mut s = lower.as_str();
    let mut cur: Option<&'static str> = None;
    for (sym, u) in [("$", "usd"), ("\u{20ac}", "eur"), ("\u{a3}", "gbp")] {
        if let Some(r) = s.strip_prefix(sym) {
            s = r;
            cur = Some(u);
        }
    }
    let s = s.trim_end_matches('+');
    // version prefix
    let s = match s.strip_prefix('v') {
        Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => r,
        _ => s,
    };
    if s.is_empty() || !s.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    // time: 10:30, 10:30pm, 10am
    let (clock, ampm) = if let Some(r) = s.strip_suffix("am") {
        (r, Some(false))
    } else if let Some(r) = s.strip_suffix("pm") {
        (r, Some(true))
    } else {
        (s, None)
    };
    if let Some(t) = parse_clock(clock, ampm) {
        return Some((ValCat::Time, "", t));
    }
    // dates: 2024-05-01, 2024/05/01, 05/01/2024
    let date_parts: Vec<&str> = s.split(['-', '/']).collect();
    if date_parts.len() == 3
        && date_parts.iter().all(|p| !p.is_empty() && p.len() <= 4 && p.chars().all(|c| c.is_ascii_digit()))
    {
        return Some((ValCat::Date, "", date_parts.join("-")));
    }
    // a plain number or version: digits, dots, commas
    let numeric_end = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(s.len());
    let (num, suffix) = s.split_at(numeric_end);
    let num = num.trim_end_matches(['.', ',']);
    if num.is_empty() {
        return None;
    }
    let canon: String = num.chars().filter(|&c| c != ',').collect();
    if suffix.is_empty() {
        return Some(match cur {
            Some(u) => (ValCat::Quantity, u, canon),
            None => (ValCat::Number, "", canon),
        });
    }
    if matches!(suffix, "st" | "nd" | "rd" | "th") {
        return Some((ValCat::Ordinal, "", canon));
    }
    if let Some(u) = unit(suffix) {
        return Some((ValCat::Quantity, u, canon));
    }
    None
}

pub(super) fn parse_clock(s: &str, ampm: Option<bool>) -> Option<String> {
    let (h, m) = match s.split_once(':') {
        Some((h, m)) => {
            let m = m.split(':').next().unwrap_or("");
            (h, m)
        }
        None if ampm.is_some() => (s, "00"),
        None => return None,
    };
    if h.is_empty()
        || h.len() > 2
        || m.len() != 2
        || !h.chars().all(|c| c.is_ascii_digit())
        || !m.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut hh: u32 = h.parse().ok()?;
    let mm: u32 = m.parse().ok()?;
    if mm > 59 || hh > 24 {
        return None;
    }
    match ampm {
        Some(true) if hh < 12 => hh += 12,
        Some(false) if hh == 12 => hh = 0,
        _ => {}
    }
    Some(format!("{hh:02}:{mm:02}"))
}

/// Identifiers keep their case when it carries meaning (camelCase, ALLCAPS after the first
/// letter); otherwise they are lowercased.
pub(super) fn ident_key(t: &str) -> String {
    let mut chars = t.chars();
    chars.next();
    if chars.any(|c| c.is_uppercase()) { t.to_string() } else { t.to_lowercase() }
}

/// Code-like tokens: with `.`, `_`, `/`, `@`, `:` or a digit inside, or lowerCamelCase
/// (`maxRetries`). Brand-like PascalCase words (`PostgreSQL`, `GitHub`) stay ordinary words.
pub(super) fn is_identifier(t: &str) -> bool {
    let starts_lower = t.chars().next().is_some_and(|c| c.is_lowercase());
    let mut prev_lower = false;
    for c in t.chars() {
        if matches!(c, '.' | '_' | '/' | '@' | ':' | '#' | '+' | '=' | '\\') || c.is_ascii_digit() {
            return true;
        }
        if c.is_uppercase() && prev_lower && starts_lower {
            return true;
        }
        prev_lower = c.is_lowercase();
    }
    false
}
