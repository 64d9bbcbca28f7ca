//! The reference pages stay reference pages: current figures with the command that made them,
//! the history in CHANGELOG.md and bench/runs/, so each page stays short enough to read whole.

/// Each page and the most lines it may have.
const LIMITS: &[(&str, usize)] = &[("docs/performance.md", 160), ("docs/quality.md", 250)];

#[test]
fn reference_pages_stay_within_their_length() {
    let root = crate::manifest_dir().parent().unwrap().to_path_buf();
    for &(page, limit) in LIMITS {
        let text = std::fs::read_to_string(root.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        let lines = text.lines().count();
        assert!(
            lines <= limit,
            "{page} has {lines} lines, more than {limit}: move history to CHANGELOG.md or bench/runs/"
        );
    }
}
