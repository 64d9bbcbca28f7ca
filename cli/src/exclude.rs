//! Transcripts that `import sessions` (and the Claude Code hook, which runs it) never reads:
//! those of a project or directory a person fenced off — a session that worked in it or below
//! it — those of a session id, and those of any directory holding a `.memledgerignore` file (in
//! the session's working directory or one above it). The list comes from the config file
//! (`[import] exclude`) and `--exclude`; an entry with a `/` (or starting with `~`) is a
//! directory, any other a session id.
//!
//! An excluded transcript is known from its first line alone (its session id and working
//! directory, where the agent writes them there) and from its path (Claude Code names a project's
//! directory after its path, and a session's file after its id): nothing after line 1 is read.

use std::path::{Path, PathBuf};

/// The file that fences a directory off from imports.
pub const IGNORE_FILE: &str = ".memledgerignore";

/// What is never imported.
#[derive(Debug, Default)]
pub struct Exclusions {
    dirs: Vec<PathBuf>,
    sessions: Vec<String>,
}

/// Why a transcript is not read.
#[derive(Debug, PartialEq, Eq)]
pub enum Excluded {
    /// The session worked in this excluded directory or below it.
    Directory(PathBuf),
    /// The session's id, or its file's name, is excluded.
    Session(String),
    /// A `.memledgerignore` in this directory.
    Ignored(PathBuf),
}

impl Excluded {
    /// The summary's name for the reason.
    pub fn kind(&self) -> &'static str {
        match self {
            Excluded::Directory(_) => "directory",
            Excluded::Session(_) => "session",
            Excluded::Ignored(_) => IGNORE_FILE,
        }
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// A directory as excluded: `~` expanded, made absolute, its symbolic links resolved where it
/// exists (a session's working directory is recorded resolved).
fn directory(entry: &str) -> PathBuf {
    let path = match entry.strip_prefix("~") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => match home() {
            Some(h) => h.join(rest.trim_start_matches('/')),
            None => PathBuf::from(entry),
        },
        _ => PathBuf::from(entry),
    };
    let path = std::path::absolute(&path).unwrap_or(path);
    std::fs::canonicalize(&path).unwrap_or(path)
}

impl Exclusions {
    /// The config file's entries and `--exclude`'s.
    pub fn new<'a>(entries: impl IntoIterator<Item = &'a str>) -> Exclusions {
        let mut out = Exclusions::default();
        for entry in entries.into_iter().map(str::trim).filter(|e| !e.is_empty()) {
            if entry.contains('/') || entry.starts_with('~') {
                out.dirs.push(directory(entry));
            } else {
                out.sessions.push(entry.to_string());
            }
        }
        out
    }

    /// Why the transcript at `file`, whose first line gave `session` and `cwd`, is not to be
    /// read; `None` when it is.
    pub fn excluded(&self, file: &Path, session: Option<&str>, cwd: Option<&str>) -> Option<Excluded> {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for id in &self.sessions {
            if session == Some(id.as_str()) || name.contains(id.as_str()) {
                return Some(Excluded::Session(id.clone()));
            }
        }
        let cwd = cwd.map(PathBuf::from);
        for dir in &self.dirs {
            if cwd.as_deref().is_some_and(|c| c.starts_with(dir)) || claude_project_of(file, dir) {
                return Some(Excluded::Directory(dir.clone()));
            }
        }
        let mut at = cwd.as_deref();
        while let Some(dir) = at {
            if dir.join(IGNORE_FILE).exists() {
                return Some(Excluded::Ignored(dir.to_path_buf()));
            }
            at = dir.parent();
        }
        None
    }
}

/// How Claude Code names a project's directory: the path with every other character a `-`.
pub fn claude_project_dir(project: &Path) -> String {
    project.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// Whether `file` lies in Claude Code's directory for `dir` or for a directory below it (whose
/// name continues `dir`'s with a `-`). The name loses which characters were `-`: a sibling
/// named like a subdirectory (`app-web` beside `app`) is excluded with it, never the reverse.
fn claude_project_of(file: &Path, dir: &Path) -> bool {
    let Some(parent) = file.parent().and_then(Path::file_name) else { return false };
    let parent = parent.to_string_lossy();
    let name = claude_project_dir(dir);
    parent == name || parent.strip_prefix(name.as_str()).is_some_and(|rest| rest.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_excludes_the_sessions_that_worked_in_it_or_below() {
        let x = Exclusions::new(["/work/secret", "s-42"]);
        let file = Path::new("/home/ana/.codex/sessions/rollout-1.jsonl");
        assert_eq!(x.excluded(file, None, Some("/work/secret")), Some(Excluded::Directory("/work/secret".into())));
        assert!(x.excluded(file, None, Some("/work/secret/api")).is_some());
        assert_eq!(x.excluded(file, None, Some("/work/secretive")), None, "a prefix of a name is another directory");
        assert_eq!(x.excluded(file, Some("s-42"), None), Some(Excluded::Session("s-42".into())));
        assert_eq!(x.excluded(Path::new("/t/rollout-s-42.jsonl"), None, None), Some(Excluded::Session("s-42".into())));
        assert_eq!(x.excluded(file, Some("s-43"), Some("/work/open")), None);
    }

    #[test]
    fn claude_codes_project_directory_names_the_excluded_directory() {
        let x = Exclusions::new(["/work/secret"]);
        let projects = Path::new("/home/ana/.claude/projects");
        for dir in ["-work-secret", "-work-secret-api"] {
            assert!(x.excluded(&projects.join(dir).join("s.jsonl"), None, None).is_some(), "{dir}");
        }
        assert_eq!(x.excluded(&projects.join("-work-secretive").join("s.jsonl"), None, None), None);
    }

    #[test]
    fn a_memledgerignore_fences_off_its_directory_and_those_below() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("client");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(project.join(IGNORE_FILE), "").unwrap();
        let x = Exclusions::new([]);
        let cwd = project.join("src");
        let found = x.excluded(Path::new("/t/s.jsonl"), None, cwd.to_str());
        assert_eq!(found, Some(Excluded::Ignored(project.clone())));
        assert_eq!(x.excluded(Path::new("/t/s.jsonl"), None, tmp.path().to_str()), None);
    }
}
