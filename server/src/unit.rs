//! `memledger serve --install-unit`: a systemd user unit (Linux) or a launchd agent (macOS) that
//! starts the server at login and restarts it if it dies.

use std::path::{Path, PathBuf};

/// What was written and how to turn it on.
pub struct Installed {
    pub path: PathBuf,
    pub enable: String,
}

fn quote(arg: &str) -> String {
    if arg.chars().all(|c| c.is_ascii_alphanumeric() || "/._-:=".contains(c)) {
        arg.to_string()
    } else {
        format!("\"{}\"", arg.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// The systemd user unit for `exe serve` on `dir` with `args` (e.g. `--http 127.0.0.1:PORT`).
pub fn systemd_unit(exe: &Path, dir: &Path, args: &[String]) -> String {
    let mut command =
        vec![quote(&exe.display().to_string()), "--dir".into(), quote(&dir.display().to_string()), "serve".into()];
    command.extend(args.iter().map(|a| quote(a)));
    format!(
        "[Unit]\nDescription=memledger server for {dir}\n\n[Service]\nExecStart={command}\nRestart=on-failure\n\n[Install]\nWantedBy=default.target\n",
        dir = dir.display(),
        command = command.join(" ")
    )
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The launchd agent for `exe serve` on `dir` with `args`.
pub fn launchd_plist(exe: &Path, dir: &Path, args: &[String]) -> String {
    let mut argv = vec![exe.display().to_string(), "--dir".into(), dir.display().to_string(), "serve".into()];
    argv.extend(args.iter().cloned());
    let argv: String = argv.iter().map(|a| format!("    <string>{}</string>\n", xml(a))).collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n<dict>\n  <key>Label</key>\n  <string>dev.memledger.serve</string>\n  <key>ProgramArguments</key>\n  <array>\n{argv}  </array>\n  <key>RunAtLoad</key>\n  <true/>\n  <key>KeepAlive</key>\n  <true/>\n</dict>\n</plist>\n"
    )
}

/// Write the unit for this platform under `home`.
pub fn install(home: &Path, exe: &Path, dir: &Path, args: &[String]) -> std::io::Result<Installed> {
    if cfg!(target_os = "macos") {
        let path = home.join("Library/LaunchAgents/dev.memledger.serve.plist");
        write(&path, &launchd_plist(exe, dir, args))?;
        let enable = format!("launchctl load -w {}", path.display());
        Ok(Installed { path, enable })
    } else {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".config"));
        let path = base.join("systemd/user/memledger.service");
        write(&path, &systemd_unit(exe, dir, args))?;
        let enable = "systemctl --user daemon-reload && systemctl --user enable --now memledger.service".to_string();
        Ok(Installed { path, enable })
    }
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}
