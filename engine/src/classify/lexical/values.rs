//! Value tokens and qualifiers: numbers, versions, times, dates, weekdays, months, quantities
//! with units, and the environment/platform/region words that keep facts apart.

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

pub(super) fn weekday(w: &str, t: &str, first: bool) -> Option<&'static str> {
    let base = w.strip_suffix('s').filter(|b| b.ends_with("day")).unwrap_or(w);
    let full = match base {
        "monday" => Some("monday"),
        "tuesday" => Some("tuesday"),
        "wednesday" => Some("wednesday"),
        "thursday" => Some("thursday"),
        "friday" => Some("friday"),
        "saturday" => Some("saturday"),
        "sunday" => Some("sunday"),
        _ => None,
    };
    if full.is_some() {
        return full;
    }
    let capital = t.chars().next().is_some_and(|c| c.is_uppercase());
    if !capital {
        return None;
    }
    match w {
        "mon" => Some("monday"),
        "tue" | "tues" => Some("tuesday"),
        "wed" => Some("wednesday"),
        "thu" | "thur" | "thurs" => Some("thursday"),
        "fri" => Some("friday"),
        "sat" if !first => Some("saturday"),
        "sun" if !first => Some("sunday"),
        _ => None,
    }
}

pub(super) fn month(w: &str, t: &str, first: bool) -> Option<&'static str> {
    let capital = t.chars().next().is_some_and(|c| c.is_uppercase());
    match w {
        "january" => Some("january"),
        "february" => Some("february"),
        "april" => Some("april"),
        "june" => Some("june"),
        "july" => Some("july"),
        "september" => Some("september"),
        "october" => Some("october"),
        "november" => Some("november"),
        "december" => Some("december"),
        "august" if capital => Some("august"),
        "march" if capital && !first => Some("march"),
        "may" if capital && !first => Some("may"),
        "jan" if capital => Some("january"),
        "feb" if capital => Some("february"),
        "mar" if capital => Some("march"),
        "apr" if capital => Some("april"),
        "jun" if capital => Some("june"),
        "jul" if capital => Some("july"),
        "aug" if capital => Some("august"),
        "sep" | "sept" if capital => Some("september"),
        "oct" if capital => Some("october"),
        "nov" if capital => Some("november"),
        "dec" if capital => Some("december"),
        _ => None,
    }
}

pub(super) fn relday(w: &str) -> Option<&'static str> {
    match w {
        "today" => Some("today"),
        "tonight" => Some("tonight"),
        "tomorrow" => Some("tomorrow"),
        "yesterday" => Some("yesterday"),
        _ => None,
    }
}

pub(super) fn frequency(w: &str) -> Option<&'static str> {
    match w {
        "hourly" => Some("hourly"),
        "daily" => Some("daily"),
        "nightly" => Some("nightly"),
        "weekly" => Some("weekly"),
        "biweekly" | "fortnightly" => Some("biweekly"),
        "monthly" => Some("monthly"),
        "quarterly" => Some("quarterly"),
        "yearly" | "annually" => Some("yearly"),
        _ => None,
    }
}

pub(super) fn number_word(w: &str) -> Option<u64> {
    Some(match w {
        "zero" => 0,
        "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        "thirteen" => 13,
        "fourteen" => 14,
        "fifteen" => 15,
        "sixteen" => 16,
        "seventeen" => 17,
        "eighteen" => 18,
        "nineteen" => 19,
        "twenty" => 20,
        "thirty" => 30,
        "forty" => 40,
        "fifty" => 50,
        "sixty" => 60,
        "seventy" => 70,
        "eighty" => 80,
        "ninety" => 90,
        "hundred" => 100,
        "thousand" => 1_000,
        "million" => 1_000_000,
        "billion" => 1_000_000_000,
        "dozen" => 12,
        _ => return None,
    })
}

/// Canonical unit for a unit word or suffix.
pub(super) fn unit(w: &str) -> Option<&'static str> {
    Some(match w {
        "ms" | "msec" | "millisecond" | "milliseconds" => "ms",
        "s" | "sec" | "secs" | "second" | "seconds" => "s",
        "min" | "mins" | "minute" | "minutes" => "min",
        "h" | "hr" | "hrs" | "hour" | "hours" => "h",
        "day" | "days" => "day",
        "week" | "weeks" | "wk" | "wks" => "week",
        "month" | "months" => "month",
        "year" | "years" | "yr" | "yrs" => "year",
        "b" | "byte" | "bytes" => "byte",
        "kb" | "kib" => "kb",
        "mb" | "mib" => "mb",
        "gb" | "gib" => "gb",
        "tb" | "tib" => "tb",
        "%" | "percent" | "pct" => "%",
        "px" => "px",
        "usd" | "dollar" | "dollars" => "usd",
        "eur" | "euro" | "euros" => "eur",
        "gbp" | "pound" | "pounds" => "gbp",
        "km" | "kilometer" | "kilometers" | "kilometre" | "kilometres" => "km",
        "mi" | "mile" | "miles" => "mile",
        "kg" | "kilogram" | "kilograms" | "kilo" | "kilos" => "kg",
        "lb" | "lbs" => "lb",
        "core" | "cores" | "vcpu" | "vcpus" | "cpu" | "cpus" => "cpu",
        "node" | "nodes" => "node",
        "replica" | "replicas" => "replica",
        "x" => "x",
        "k" => "k",
        "rps" | "qps" => "rps",
        "ghz" => "ghz",
        "mhz" => "mhz",
        _ => return None,
    })
}

pub(super) fn env_qualifier(w: &str) -> Option<&'static str> {
    match w {
        "production" | "prod" => Some("production"),
        "staging" => Some("staging"),
        "dev" | "development" => Some("development"),
        "qa" => Some("qa"),
        "uat" => Some("uat"),
        "sandbox" => Some("sandbox"),
        "preprod" => Some("preprod"),
        _ => None,
    }
}

/// `test`, `local`, `canary` name an environment only next to an environment word.
pub(super) fn weak_env_qualifier(w: &str) -> Option<&'static str> {
    match w {
        "test" | "testing" => Some("test"),
        "local" | "localhost" => Some("local"),
        "canary" => Some("canary"),
        _ => None,
    }
}

pub(super) fn env_context(w: &str) -> bool {
    matches!(
        w,
        "environment"
            | "environments"
            | "env"
            | "envs"
            | "server"
            | "servers"
            | "cluster"
            | "clusters"
            | "instance"
            | "instances"
            | "stack"
            | "deployment"
            | "deploy"
            | "build"
            | "builds"
    )
}

pub(super) fn platform_qualifier(w: &str, t: &str) -> Option<&'static str> {
    let capital = t.chars().next().is_some_and(|c| c.is_uppercase());
    match w {
        "linux" => Some("linux"),
        "macos" | "osx" => Some("macos"),
        "mac" if capital => Some("macos"),
        "windows" if capital => Some("windows"),
        "ios" => Some("ios"),
        "android" => Some("android"),
        _ => None,
    }
}

pub(super) fn region_qualifier(t: &str) -> Option<String> {
    if matches!(t, "EU" | "US" | "UK" | "APAC" | "EMEA" | "LATAM") {
        return Some(t.to_lowercase());
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
        return Some((ValCat::Number, "", canon));
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
