//! What scripts/setup.sh and scripts/setup_tests.sh decide to install, on machines made up for
//! the test: a PATH holding only the commands a state has (fakes that say what they are and
//! write down how they were called) and a fake `dpkg` that knows which packages are installed.
//! The real `apt-get` and `pip` are never run; the fakes record the install each script asks
//! for, so a machine that already has everything cannot hide a wrong decision.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::manifest_dir;

/// The commands the scripts run that are part of any machine, linked from this one.
const BASE_COMMANDS: &[&str] = &["bash", "cat", "chmod", "dirname", "grep", "mkdir", "ldconfig", "rm"];

/// A made-up machine.
#[derive(Default)]
struct Machine {
    /// Commands on the PATH besides the base ones (`node`, `npm`, `chromium`, `schemathesis`, …).
    commands: Vec<&'static str>,
    /// Debian packages `dpkg -s` reports as installed.
    installed: Vec<&'static str>,
    /// Python modules `python3 -c "import X"` finds.
    python_modules: Vec<&'static str>,
    /// apt-get fails every install (Debian's npm against NodeSource's nodejs: "held broken packages").
    apt_fails: bool,
    /// `python3 -m venv` fails (Debian's python3 without python3-venv).
    no_venv: bool,
    /// The Python package's test venv exists and holds every pin of python/requirements-test.txt.
    venv_ready: bool,
    /// CI=true.
    ci: bool,
}

/// What a script asked for on a machine.
struct Asked {
    output: Output,
    apt: BTreeSet<String>,
    pip: BTreeSet<String>,
    /// What was installed into the Python package's test venv.
    venv_pip: BTreeSet<String>,
    npm_ci: bool,
}

impl Asked {
    fn log(&self) -> String {
        format!(
            "status {}\nstderr:\n{}\napt {:?} pip {:?} npm ci {}",
            self.output.status,
            String::from_utf8_lossy(&self.output.stderr),
            self.apt,
            self.pip,
            self.npm_ci
        )
    }
}

/// A fake command (never written through a link to a real one).
fn write_script(path: &Path, body: &str) {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, format!("#!/bin/bash\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn real_command(name: &str) -> PathBuf {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("this machine has no {name}"))
}

/// Run `script` (relative to the repository) on `machine`; what it asked to install.
fn run_on(machine: &Machine, script: &str) -> Asked {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let record = tmp.path().join("record");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&record).unwrap();
    for name in BASE_COMMANDS {
        std::os::unix::fs::symlink(real_command(name), bin.join(name)).unwrap();
    }
    let rec = record.display();
    // `id -u` says root, so no sudo is needed (or asked for).
    write_script(&bin.join("id"), "echo 0");
    // Every machine here is Debian with Rust.
    write_script(&bin.join("cargo"), "exit 0");
    write_script(&bin.join("apt-get"), &{
        let fail = if machine.apt_fails { "exit 100" } else { "exit 0" };
        format!(
            "case \"$1\" in update) exit 0;; install) shift; for a in \"$@\"; do case \"$a\" in -*) ;; *) echo \"$a\" >> {rec}/apt;; esac; done; {fail};; esac"
        )
    });
    let installed = machine.installed.join(" ");
    write_script(
        &bin.join("dpkg"),
        &format!("[ \"$1\" = -s ] || exit 2; for p in {installed}; do [ \"$p\" = \"$2\" ] && exit 0; done; exit 1"),
    );
    // The venv's python: the pins it lacks (all of them, unless the venv is complete), and its
    // installs recorded.
    let venv_python = format!(
        "if [ \"$1\" = - ]; then [ -e \"$(dirname \"$0\")/complete\" ] || grep '==' \"$2\"; exit 0; fi\n\
         if [ \"$1 $2 $3\" = \"-m pip install\" ]; then shift 3; for a in \"$@\"; do case \"$a\" in -*) ;; *) echo \"$a\" >> {rec}/venv_pip;; esac; done; exit 0; fi\n\
         exit 2"
    );
    let venv = tmp.path().join(".cache/memledger/python-venv/bin");
    if machine.venv_ready {
        std::fs::create_dir_all(&venv).unwrap();
        write_script(&venv.join("python"), &venv_python);
        std::fs::write(venv.join("complete"), "").unwrap();
    }
    let make_venv = if machine.no_venv {
        "exit 1".to_string()
    } else {
        format!(
            "mkdir -p \"$3/bin\"; printf '%s\\n' '#!/bin/bash' {} > \"$3/bin/python\"; chmod +x \"$3/bin/python\"; exit 0",
            shell_quote(&venv_python)
        )
    };
    let modules = machine.python_modules.join(" ");
    write_script(
        &bin.join("python3"),
        &format!(
            "if [ \"$1 $2\" = \"-m venv\" ]; then {make_venv}; fi\n\
             if [ \"$1\" = -c ]; then m=\"${{2#import }}\"; for x in {modules}; do [ \"$x\" = \"$m\" ] && exit 0; done; exit 1; fi\n\
             if [ \"$1 $2 $3\" = \"-m pip install\" ]; then shift 3; for a in \"$@\"; do case \"$a\" in -*) ;; *) echo \"$a\" >> {rec}/pip;; esac; done; exit 0; fi\n\
             exit 2"
        ),
    );
    for command in &machine.commands {
        let body = match *command {
            "npm" => format!("[ \"$1\" = ci ] && echo ci >> {rec}/npm; exit 0"),
            _ => "exit 0".to_string(),
        };
        write_script(&bin.join(command), &body);
    }
    // A copy of the scripts and of the review page's npm lock, so the tree's own node_modules
    // (installed or not on this machine) plays no part.
    let repo = tmp.path().join("repo");
    let root = manifest_dir().parent().unwrap().to_path_buf();
    for file in [
        "scripts/setup.sh",
        "scripts/setup_tests.sh",
        "scripts/lib/install.sh",
        "server/e2e/package-lock.json",
        "python/requirements-test.txt",
    ] {
        std::fs::create_dir_all(repo.join(file).parent().unwrap()).unwrap();
        std::fs::copy(root.join(file), repo.join(file)).unwrap();
    }
    let mut cmd = Command::new(bin.join("bash"));
    cmd.arg(repo.join(script))
        .env_clear()
        .env("PATH", &bin)
        .env("HOME", tmp.path())
        .env("CARGO_TARGET_DIR", tmp.path().join("target"));
    if machine.ci {
        cmd.env("CI", "true");
    }
    let output = cmd.output().unwrap();
    let lines = |name: &str| -> BTreeSet<String> {
        std::fs::read_to_string(record.join(name)).unwrap_or_default().lines().map(str::to_string).collect()
    };
    Asked {
        output,
        apt: lines("apt"),
        pip: lines("pip"),
        venv_pip: lines("venv_pip"),
        npm_ci: record.join("npm").exists(),
    }
}

/// `text` as one single-quoted shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The pins of python/requirements-test.txt.
fn python_pins() -> BTreeSet<String> {
    let root = manifest_dir().parent().unwrap().to_path_buf();
    std::fs::read_to_string(root.join("python/requirements-test.txt"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("=="))
        .map(str::to_string)
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

const TESTS: &str = "scripts/setup_tests.sh";
const BUILD: &str = "scripts/setup.sh";

#[test]
fn nodesource_node_without_chromium_installs_chromium_alone() {
    // NodeSource's nodejs carries its own npm: Debian's npm would conflict with it.
    let machine = Machine { commands: vec!["node", "npm"], ..Machine::default() };
    let asked = run_on(&machine, TESTS);
    assert!(asked.output.status.success(), "{}", asked.log());
    assert_eq!(asked.apt, set(&["chromium"]), "{}", asked.log());
    assert_eq!(asked.pip, set(&["mcp==2.3.0", "schemathesis==4.32.5"]), "{}", asked.log());
    assert!(asked.npm_ci, "{}", asked.log());
}

#[test]
fn a_machine_with_nothing_gets_every_test_tool() {
    let asked = run_on(&Machine::default(), TESTS);
    assert!(asked.output.status.success(), "{}", asked.log());
    assert_eq!(asked.apt, set(&["chromium", "nodejs", "npm"]), "{}", asked.log());
    assert_eq!(asked.pip, set(&["mcp==2.3.0", "schemathesis==4.32.5"]), "{}", asked.log());
}

#[test]
fn a_machine_with_everything_installs_nothing() {
    let machine = Machine {
        commands: vec!["node", "npm", "chromium", "schemathesis"],
        installed: vec!["libclang-dev"],
        python_modules: vec!["mcp"],
        venv_ready: true,
        ..Machine::default()
    };
    for script in [BUILD, TESTS] {
        let asked = run_on(&machine, script);
        assert!(asked.output.status.success(), "{script}: {}", asked.log());
        assert!(asked.apt.is_empty() && asked.pip.is_empty() && asked.venv_pip.is_empty(), "{script}: {}", asked.log());
    }
}

#[test]
fn the_python_packages_tests_get_every_pin_in_a_venv_of_their_own() {
    let asked = run_on(&Machine::default(), TESTS);
    assert!(asked.output.status.success(), "{}", asked.log());
    let pins = python_pins();
    assert!(pins.iter().any(|p| p.starts_with("langgraph==")) && pins.iter().any(|p| p.starts_with("pytest==")));
    assert_eq!(asked.venv_pip, pins, "{}", asked.log());
    // Nothing of it goes into the system's Python.
    assert_eq!(asked.pip, set(&["mcp==2.3.0", "schemathesis==4.32.5"]), "{}", asked.log());
}

#[test]
fn a_python_without_venv_gets_python3_venv_and_says_what_is_skipped() {
    let machine = Machine {
        commands: vec!["node", "npm", "chromium", "schemathesis"],
        python_modules: vec!["mcp"],
        no_venv: true,
        ..Machine::default()
    };
    let asked = run_on(&machine, TESTS);
    let stderr = String::from_utf8_lossy(&asked.output.stderr).into_owned();
    assert!(asked.output.status.success(), "{}", asked.log());
    assert_eq!(asked.apt, set(&["python3-venv"]), "{}", asked.log());
    assert!(stderr.contains("the Python package's tests") && stderr.contains("will be skipped"), "{stderr}");
    let asked = run_on(&Machine { ci: true, ..machine }, TESTS);
    assert!(!asked.output.status.success(), "{}", asked.log());
}

#[test]
fn node_without_npm_installs_npm_alone() {
    let machine = Machine {
        commands: vec!["node", "chromium", "schemathesis"],
        python_modules: vec!["mcp"],
        ..Machine::default()
    };
    let asked = run_on(&machine, TESTS);
    assert!(asked.output.status.success(), "{}", asked.log());
    assert_eq!(asked.apt, set(&["npm"]), "{}", asked.log());
    assert!(asked.pip.is_empty(), "{}", asked.log());
}

#[test]
fn a_failed_optional_install_names_the_test_and_stops_only_under_ci() {
    let machine = Machine { commands: vec!["node", "npm"], apt_fails: true, ..Machine::default() };
    let asked = run_on(&machine, TESTS);
    let stderr = String::from_utf8_lossy(&asked.output.stderr).into_owned();
    assert!(asked.output.status.success(), "{}", asked.log());
    assert!(stderr.contains("the review page's browser test") && stderr.contains("will be skipped"), "{stderr}");
    // The rest goes on: the pip tools and the npm packages are still installed.
    assert_eq!(asked.pip.len(), 2, "{}", asked.log());

    let asked = run_on(&Machine { ci: true, ..machine }, TESTS);
    let stderr = String::from_utf8_lossy(&asked.output.stderr).into_owned();
    assert!(!asked.output.status.success(), "{}", asked.log());
    assert!(stderr.contains("CI=true runs every test"), "{stderr}");
}

#[test]
fn the_build_needs_libclang_alone_and_no_test_tool() {
    // What the demo sources: libclang when dpkg lacks it, and nothing a test alone uses.
    let asked = run_on(&Machine::default(), BUILD);
    assert!(asked.output.status.success(), "{}", asked.log());
    assert_eq!(asked.apt, set(&["libclang-dev"]), "{}", asked.log());
    assert!(asked.pip.is_empty() && !asked.npm_ci, "{}", asked.log());

    let machine = Machine { installed: vec!["libclang-dev"], ..Machine::default() };
    let asked = run_on(&machine, BUILD);
    assert!(asked.output.status.success() && asked.apt.is_empty(), "{}", asked.log());
}

#[test]
fn the_demo_sources_the_build_setup_alone() {
    let demo = std::fs::read_to_string(manifest_dir().parent().unwrap().join("scripts/demo.sh")).unwrap();
    assert!(demo.contains("source scripts/setup.sh"), "{demo}");
    assert!(!demo.contains("setup_tests.sh"), "the demo installs no test tool:\n{demo}");
}
