//! Bad input, table-driven (the table is kept in docs/reliability.md).
//!
//! Each row is one bad input: its exit code, a word the message on stderr must contain (so the
//! message names the problem), and no write — on an existing store the head does not move, and a
//! store that did not exist is not created. Rows the machine cannot stage (a read-only `--dir`
//! as root where no tmpfs can be mounted read-only, a full disk without tmpfs) are skipped with a
//! printed reason.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{json, run, run_stdin};

fn head(dir: &Path) -> (u64, String) {
    let v = json(dir, &["verify"]);
    assert_eq!(v["ok"], true);
    (v["head_seq"].as_u64().unwrap(), v["head_hash"].as_str().unwrap().to_string())
}

/// One bad input.
struct Row {
    name: &'static str,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    code: i32,
    /// A word (case-insensitive) the message on stderr contains.
    names: &'static str,
    /// Also tried on a store that does not exist yet (which must stay uncreated).
    on_fresh: bool,
}

fn row(name: &'static str, args: &[&str], code: i32, names: &'static str, on_fresh: bool) -> Row {
    Row { name, args: args.iter().map(|s| s.to_string()).collect(), stdin: None, code, names, on_fresh }
}

fn stdin_row(name: &'static str, args: &[&str], stdin: &[u8], code: i32, names: &'static str) -> Row {
    Row { stdin: Some(stdin.to_vec()), ..row(name, args, code, names, true) }
}

fn check(dir: &Path, r: &Row, label: &str) {
    let args: Vec<&str> = r.args.iter().map(String::as_str).collect();
    let out = match &r.stdin {
        Some(bytes) => run_stdin(dir, &args, bytes),
        None => run(dir, &args),
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(r.code), "{} ({label}): exit code; stderr: {err}", r.name);
    assert!(
        err.to_lowercase().contains(&r.names.to_lowercase()),
        "{} ({label}): the message does not name the problem ({:?}): {err}",
        r.name,
        r.names
    );
}

/// A stream whose memory ids share their first 6 hex digits, made by rewriting the ids of an
/// exported stream and resealing the chain: the ambiguity path, forced.
fn ambiguous_stream(tmp: &Path) -> PathBuf {
    let src = tmp.join("ambiguous-src");
    let a = json(&src, &["save", "the lighthouse keeper logs tides at dawn"]);
    let b = json(&src, &["save", "the beekeeper counts hives every autumn"]);
    let out = run(&src, &["export"]);
    let mut text = String::from_utf8(out.stdout).unwrap();
    for (m, fake) in [(&a, "abcdef01"), (&b, "abcdef02")] {
        let id = m["memory_id"].as_str().unwrap();
        text = text.replace(id, &format!("{fake}{}", &id[8..]));
    }
    let mut prev = memledger_schemas::Hash::GENESIS;
    let mut lines = String::new();
    for line in text.lines() {
        let mut event: memledger_schemas::Event = serde_json::from_str(line).unwrap();
        event.prev_hash = prev;
        event.seal();
        prev = event.hash;
        lines.push_str(&serde_json::to_string(&event).unwrap());
        lines.push('\n');
    }
    let file = tmp.join("ambiguous.jsonl");
    std::fs::write(&file, lines).unwrap();
    file
}

#[test]
fn every_bad_input_exits_with_its_code_names_the_problem_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let dir = t.join("store");
    let saved = json(&dir, &["save", "the staging db runs on Postgres 16"]);
    let id = saved["memory_id"].as_str().unwrap().to_string();
    let exported = String::from_utf8(run(&dir, &["export"]).stdout).unwrap();
    let first_line = exported.lines().next().unwrap().to_string();

    let write = |name: &str, bytes: &[u8]| -> String {
        let p = t.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_string()
    };
    let big = "x".repeat(64 * 1024 + 1);
    let truncated_save = write("truncated-save.jsonl", b"{\"text\": \"a half-written li");
    let malformed_save = write(
        "malformed-save.jsonl",
        b"not json\n[1, 2]\n{\"txt\": \"misspelled\"}\n{\"text\": \"\"}\n{\"text\": \"x\", \"type\": \"opinion\"}\n\xff\xfe\n",
    );
    let truncated_import = write("truncated-import.jsonl", &first_line.as_bytes()[..first_line.len() / 2]);
    let malformed_import = write("malformed-import.jsonl", b"{\"seq\": 1}\n");
    let not_utf8_import = write("not-utf8-import.jsonl", b"\xff\xfe\xfd\n");
    let ambiguous = ambiguous_stream(t);
    let fourth = std::fs::read_to_string(&ambiguous).unwrap().lines().nth(3).unwrap().to_string();
    let gap_import = write("gap-import.jsonl", format!("{fourth}\n").as_bytes());
    let ambiguous_dir = t.join("ambiguous-store");
    json(&ambiguous_dir, &["import", ambiguous.to_str().unwrap()]);

    let rows = vec![
        row("empty text", &["save", ""], 2, "empty", true),
        row("blank text", &["save", "  \n\t "], 2, "empty", true),
        row("oversize text (64 KiB + 1)", &["save", &big], 2, "limit", true),
        stdin_row("empty stdin", &["save", "-"], b"", 2, "empty"),
        stdin_row("NUL byte on stdin", &["save", "-"], b"nul \0 byte", 2, "NUL"),
        stdin_row("invalid UTF-8 on stdin", &["save", "-"], b"\xff\xfe not utf-8", 2, "UTF-8"),
        row("unknown type", &["save", "--type", "opinion", "x"], 2, "opinion", true),
        row("unknown type in list", &["list", "--type", "opinion"], 2, "opinion", false),
        row("unknown status", &["list", "--status", "weird"], 2, "weird", false),
        row("unknown flag", &["save", "--bogus-flag", "x"], 2, "--bogus-flag", true),
        row("unknown command", &["frobnicate"], 2, "frobnicate", true),
        row("malformed --effective-at", &["save", "--effective-at", "yesterday", "x"], 2, "RFC 3339", true),
        row("malformed --as-of", &["list", "--as-of", "last week"], 2, "as-of", false),
        row("non-numeric --since", &["log", "--since", "abc"], 2, "--since", false),
        row(
            "non-numeric --expect-version",
            &["update", &id, "y", "--expect-version", "two"],
            2,
            "expect-version",
            false,
        ),
        row("id too short", &["show", "abc"], 2, "too short", false),
        row("id not hex", &["show", "zzzzzzzz"], 2, "zzzzzzzz", false),
        row("id that does not exist", &["show", "000000000000"], 4, "no memory", false),
        row("full id that does not exist", &["update", &"0".repeat(32), "y"], 4, "no memory", false),
        row("forget an unknown id", &["forget", "0000000"], 4, "no memory", false),
        row(
            "conflict id that does not exist",
            &["conflicts", "resolve", "abcdef", "--keep-new"],
            4,
            "no conflict",
            false,
        ),
        row("stale --expect-version", &["update", &id, "y", "--expect-version", "7"], 3, "current version is 1", false),
        row("resolve without an action", &["conflicts", "resolve", "abcdef"], 2, "", false),
        // save --from opens (and so creates) the store only at its first valid line.
        row("truncated line in save --from", &["save", "--from", &truncated_save], 2, "refused", true),
        row("malformed lines in save --from", &["save", "--from", &malformed_save], 2, "6 line(s) were refused", true),
        row(
            "save --from a missing file",
            &["save", "--from", &t.join("nope.jsonl").to_string_lossy()],
            2,
            "nope.jsonl",
            true,
        ),
        row("truncated line in import", &["import", &truncated_import], 2, "line 1", true),
        row("malformed line in import", &["import", &malformed_import], 2, "line 1", true),
        row("invalid UTF-8 in import", &["import", &not_utf8_import], 2, "UTF-8", true),
        row("import that starts past the head", &["import", &gap_import], 2, "starts at seq 4", false),
        row("import of a diverging stream", &["import", ambiguous.to_str().unwrap()], 2, "diverge", false),
    ];

    let mut tried = 0;
    let before = head(&dir);
    for (k, r) in rows.iter().enumerate() {
        check(&dir, r, "existing store");
        assert_eq!(head(&dir), before, "{}: the head moved", r.name);
        tried += 1;
        if r.on_fresh {
            let fresh = t.join(format!("fresh-{k}"));
            check(&fresh, r, "no store yet");
            assert!(!fresh.exists(), "{}: created a store", r.name);
            tried += 1;
        }
    }

    // Ambiguous and unique prefixes, on the store where two ids share "abcdef".
    let amb_before = head(&ambiguous_dir);
    for (args, code, names) in [
        (vec!["show", "abcdef"], 2, "ambiguous"),
        (vec!["update", "abcdef", "z"], 2, "ambiguous"),
        (vec!["forget", "abcdef0"], 2, "ambiguous"),
    ] {
        let r = row("ambiguous id prefix", &args, code, names, false);
        check(&ambiguous_dir, &r, "two ids share abcdef");
        assert_eq!(head(&ambiguous_dir), amb_before, "ambiguous prefix: the head moved");
        tried += 1;
    }
    assert_eq!(json(&ambiguous_dir, &["show", "abcdef01"])["text"], "the lighthouse keeper logs tides at dawn");

    // --dir is a file.
    let file = t.join("a-file");
    std::fs::write(&file, b"not a store").unwrap();
    for args in [vec!["save", "x"], vec!["list"]] {
        let r = row("--dir is a file", &args, 1, "a file", false);
        check(&file, &r, "file");
        assert_eq!(std::fs::read(&file).unwrap(), b"not a store");
        tried += 1;
    }
    // --dir is a non-empty directory that holds no store.
    let other = t.join("someone-elses");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), b"mine").unwrap();
    check(&other, &row("--dir holds other files", &["save", "x"], 1, "not empty", false), "foreign dir");
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1, "nothing added to a foreign directory");
    tried += 1;

    // --dir is read-only (skipped when this user can write there anyway: root).
    tried += read_only_rows(t);
    // A full disk (skipped when a small tmpfs cannot be mounted here).
    tried += full_disk_rows(t);
    println!("bad input: {tried} bad inputs tried, each refused with its code and message, nothing written");
}

fn read_only_rows(t: &Path) -> usize {
    use std::os::unix::fs::PermissionsExt;
    let parent = t.join("read-only");
    std::fs::create_dir(&parent).unwrap();
    let existing = t.join("read-only-store");
    json(&existing, &["save", "kept as it was"]);
    let before = head(&existing);
    std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o555)).unwrap();
    let probe = parent.join("probe");
    let writable = std::fs::write(&probe, b"x").is_ok();
    let mut tried = 0;
    if writable {
        let _ = std::fs::remove_file(&probe);
        // Root writes into a 0555 directory; a file system mounted read-only stops it too.
        tried += read_only_mount_rows(t);
    } else {
        let fresh = parent.join("store");
        check(&fresh, &row("--dir under a read-only parent", &["save", "x"], 1, "cannot create", false), "read-only");
        assert!(!fresh.exists());
        let out = run(&existing, &["save", "y"]);
        assert_ne!(out.status.code(), Some(0), "a save into a read-only store succeeded");
        assert!(!out.stderr.is_empty());
        tried += 2;
    }
    std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(head(&existing), before);
    tried
}

/// The read-only rows on a tmpfs remounted read-only, for a user who can write into any
/// directory (root); skipped when tmpfs cannot be mounted here.
fn read_only_mount_rows(t: &Path) -> usize {
    let Some(mount) = small_tmpfs(t, "read-only-disk") else {
        println!("SKIPPED read-only --dir: root writes into a 0555 directory and `mount -t tmpfs` is not permitted");
        return 0;
    };
    let existing = mount.0.join("store");
    json(&existing, &["save", "kept as it was"]);
    let before = head(&existing);
    let remount = |mode: &str| {
        let status = Command::new("mount").args(["-o", &format!("remount,{mode}")]).arg(&mount.0).status();
        assert!(status.is_ok_and(|s| s.success()), "remount {mode}");
    };
    remount("ro");
    let fresh = mount.0.join("fresh");
    check(&fresh, &row("--dir on a read-only file system", &["save", "x"], 1, "cannot create", false), "read-only");
    assert!(!fresh.exists());
    let out = run(&existing, &["save", "y"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "a save into a store on a read-only file system: {err}");
    assert!(err.to_lowercase().contains("read-only"), "the message names the read-only file system: {err}");
    remount("rw");
    assert_eq!(head(&existing), before, "nothing was written");
    2
}

/// A tmpfs of 4 MiB at `t/name`, or `None` when this machine does not allow mounting one.
fn small_tmpfs(t: &Path, name: &str) -> Option<Mount> {
    let mnt = t.join(name);
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    mounted.then_some(Mount(mnt))
}

/// Unmounts the tmpfs when dropped, whatever the test does.
struct Mount(PathBuf);
impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn full_disk_rows(t: &Path) -> usize {
    let Some(mount) = small_tmpfs(t, "small-disk") else {
        println!("SKIPPED full disk: `mount -t tmpfs` is not permitted here");
        return 0;
    };
    let mnt = mount.0.clone();
    let dir = mnt.join("store");
    json(&dir, &["save", "written before the disk filled up"]);
    let before = head(&dir);
    // Fill the disk.
    let filler = mnt.join("filler");
    {
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
    }
    let mut tried = 0;
    for text in ["a save on a full disk", "another save on a full disk"] {
        let out = run(&dir, &["save", text]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "full disk: {err}");
        assert!(err.to_lowercase().contains("space"), "full disk: the message names it: {err}");
        tried += 1;
    }
    // Free the space: the store is as it was, and works.
    std::fs::remove_file(&filler).unwrap();
    assert_eq!(head(&dir), before, "full disk: the head moved");
    let v = json(&dir, &["verify"]);
    assert_eq!(v["views_consistent"], true);
    assert_eq!(json(&dir, &["save", "after space was freed"])["outcome"], "added");
    tried
}
