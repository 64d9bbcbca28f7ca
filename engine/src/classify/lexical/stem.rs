//! Light suffix stripping for English words.

/// Light suffix stripping for English words; prefix matching does the rest.
pub(super) fn stem(w: &str) -> String {
    if !w.is_ascii() || w.len() <= 3 {
        return w.to_string();
    }
    let mut s = w.to_string();
    if (s.ends_with("ies") || s.ends_with("ied")) && s.len() > 4 {
        s.truncate(s.len() - 3);
        s.push('y');
    } else if s.ends_with("sses") {
        s.truncate(s.len() - 2);
    } else if s.ends_with('s') && !s.ends_with("ss") && !s.ends_with("us") && !s.ends_with("is") {
        s.truncate(s.len() - 1);
    } else if s.ends_with("ing") && s.len() >= 6 {
        s.truncate(s.len() - 3);
        undouble(&mut s);
    } else if s.ends_with("ed") && s.len() >= 5 {
        s.truncate(s.len() - 2);
        undouble(&mut s);
    }
    if s.len() > 3 && s.ends_with('e') {
        s.truncate(s.len() - 1);
    }
    s
}

pub(super) fn undouble(s: &mut String) {
    let b = s.as_bytes();
    let n = b.len();
    if n >= 3 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z') && !is_vowel(b[n - 1]) {
        s.pop();
    }
}

pub(super) fn is_vowel(c: u8) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u')
}
