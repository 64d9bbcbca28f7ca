//! Relative dates resolved against when they were said: "yesterday" in a turn of 8 May 2023 is
//! 7 May 2023, not the day of the import. A memory distilled from a transcript keeps its words
//! and gains the date in brackets ("went to a support group yesterday (2023-05-07)"), so the
//! text stays true read at any later time. The model is asked to write absolute dates itself;
//! this catches what it (or a person's own `remember that …`) left relative.

use std::sync::OnceLock;

use chrono::{Datelike, Duration, NaiveDate, TimeZone, Utc, Weekday};
use memledger_schemas::Timestamp;
use regex::{Captures, Regex};

fn pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let n = r"(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)";
        let day = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)";
        let unit = r"(day|week|month|year)s?";
        Regex::new(&format!(
            r"(?i)\b(?:(today|tonight|this morning|this afternoon|this evening|yesterday|last night|tomorrow)|{n} {unit} ago|in {n} {unit}|(last|next) (week|month|year)|(last|next|this) {day})\b"
        ))
        .expect("the relative-date pattern compiles")
    })
}

fn number(word: &str) -> Option<i64> {
    let w = word.to_ascii_lowercase();
    let words = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
    if let Some(i) = words.iter().position(|x| *x == w) {
        return Some(i as i64 + 1);
    }
    if w == "a" || w == "an" {
        return Some(1);
    }
    w.parse().ok()
}

fn weekday(word: &str) -> Option<Weekday> {
    word.parse().ok()
}

fn shift(date: NaiveDate, n: i64, unit: &str) -> Option<NaiveDate> {
    match unit.to_ascii_lowercase().trim_end_matches('s') {
        "day" => date.checked_add_signed(Duration::days(n)),
        "week" => date.checked_add_signed(Duration::weeks(n)),
        "month" => {
            if n >= 0 {
                date.checked_add_months(chrono::Months::new(n as u32))
            } else {
                date.checked_sub_months(chrono::Months::new(n.unsigned_abs() as u32))
            }
        }
        "year" => {
            if n >= 0 {
                date.checked_add_months(chrono::Months::new(12 * n as u32))
            } else {
                date.checked_sub_months(chrono::Months::new(12 * n.unsigned_abs() as u32))
            }
        }
        _ => None,
    }
}

/// What the phrase of `c` means said on `today`, as it is written in brackets.
fn meaning(c: &Captures<'_>, today: NaiveDate) -> Option<String> {
    let day = |d: NaiveDate| d.format("%Y-%m-%d").to_string();
    if let Some(word) = c.get(1) {
        return Some(day(match word.as_str().to_ascii_lowercase().as_str() {
            "yesterday" | "last night" => today.pred_opt()?,
            "tomorrow" => today.succ_opt()?,
            _ => today,
        }));
    }
    if let (Some(n), Some(unit)) = (c.get(2), c.get(3)) {
        return shift(today, -number(n.as_str())?, unit.as_str()).map(day);
    }
    if let (Some(n), Some(unit)) = (c.get(4), c.get(5)) {
        return shift(today, number(n.as_str())?, unit.as_str()).map(day);
    }
    if let (Some(which), Some(unit)) = (c.get(6), c.get(7)) {
        let n = if which.as_str().eq_ignore_ascii_case("last") { -1 } else { 1 };
        let d = shift(today, n, unit.as_str())?;
        return Some(match unit.as_str().to_ascii_lowercase().as_str() {
            "week" => {
                let monday = d.checked_sub_signed(Duration::days(i64::from(d.weekday().num_days_from_monday())))?;
                format!("the week of {}", day(monday))
            }
            "month" => d.format("%Y-%m").to_string(),
            _ => d.format("%Y").to_string(),
        });
    }
    if let (Some(which), Some(name)) = (c.get(8), c.get(9)) {
        let target = weekday(name.as_str())?;
        let (from, to) = (today.weekday().num_days_from_monday() as i64, target.num_days_from_monday() as i64);
        let delta = match which.as_str().to_ascii_lowercase().as_str() {
            "last" => -((from - to - 1).rem_euclid(7) + 1),
            "next" => (to - from - 1).rem_euclid(7) + 1,
            _ => to - from,
        };
        return today.checked_add_signed(Duration::days(delta)).map(day);
    }
    None
}

/// `text` with each relative date it holds followed by what it means, said at `at`.
pub fn resolve(text: &str, at: Timestamp) -> String {
    let re = pattern();
    if !re.is_match(text) {
        return text.to_string();
    }
    let Some(today) = Utc.timestamp_micros(at.micros()).single().map(|t| t.date_naive()) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len() + 16);
    let mut last = 0;
    for c in re.captures_iter(text) {
        let m = c.get(0).expect("a match has its whole");
        out.push_str(&text[last..m.end()]);
        last = m.end();
        // Already resolved: "yesterday (2023-05-07)".
        if text[m.end()..].trim_start().starts_with('(') {
            continue;
        }
        if let Some(meaning) = meaning(&c, today) {
            out.push_str(&format!(" ({meaning})"));
        }
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        Timestamp::parse_rfc3339(s).unwrap()
    }

    #[test]
    fn relative_dates_gain_their_date() {
        // 2023-05-08 was a Monday.
        let t = at("2023-05-08T13:56:00Z");
        let cases = [
            ("I went to a support group yesterday.", "I went to a support group yesterday (2023-05-07)."),
            ("Tomorrow we ship", "Tomorrow (2023-05-09) we ship"),
            ("painted it two weeks ago", "painted it two weeks ago (2023-04-24)"),
            ("moved here 3 years ago", "moved here 3 years ago (2020-05-08)"),
            ("the deadline moved to next Friday", "the deadline moved to next Friday (2023-05-12)"),
            ("we met last Monday", "we met last Monday (2023-05-01)"),
            ("last month we switched", "last month (2023-04) we switched"),
            ("next week is the launch", "next week (the week of 2023-05-15) is the launch"),
            ("in 3 days", "in 3 days (2023-05-11)"),
            ("said yesterday (2023-05-07) already", "said yesterday (2023-05-07) already"),
            ("no dates here; yesterdays are words", "no dates here; yesterdays are words"),
        ];
        for (text, want) in cases {
            assert_eq!(resolve(text, t), want, "{text}");
        }
    }
}
