//! `memledger hooks install|uninstall claude-code`: continuous capture. Claude Code runs the
//! `SessionEnd` and `PreCompact` hooks this writes into its settings, each importing the session's
//! transcript into this store (`import sessions --from-hook`, which reads the hook's JSON on
//! standard input), and starts memledger's MCP server from the entry this writes beside them.
//! Both are shown, and asked about, before anything is written; `uninstall` removes exactly the
//! entries `install` writes (recognised by their command) and leaves everything else as it was.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::app::Context;
use crate::output::{CliError, Output};

/// Hooks that import each agent session into this store when it ends.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Write the session-end import hook and the MCP server entry into Claude Code's settings
    /// (shown, and asked, before writing).
    ///
    /// Example: memledger hooks install claude-code --dry-run
    Install(Args),
    /// Remove exactly the entries `hooks install` wrote.
    Uninstall(Args),
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The agent: claude-code.
    pub agent: String,
    /// This project's settings (.claude/settings.json and .mcp.json in the current directory).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// Your user settings (~/.claude/settings.json and ~/.claude.json; the default).
    #[arg(long)]
    pub user: bool,
    /// Print what would change and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Write without asking.
    #[arg(long)]
    pub yes: bool,
}

/// The Claude Code events whose hooks import the session.
const EVENTS: [&str; 2] = ["SessionEnd", "PreCompact"];
/// Seconds Claude Code gives the hook (an import asks a model about each new chunk).
const HOOK_TIMEOUT: u64 = 600;
/// The MCP server's name in Claude Code's configuration.
const MCP_NAME: &str = "memledger";

/// The two files an installation touches.
struct Targets {
    settings: PathBuf,
    mcp: PathBuf,
}

fn targets(args: &Args) -> Result<Targets, CliError> {
    if args.project {
        let here = std::env::current_dir()?;
        return Ok(Targets { settings: here.join(".claude/settings.json"), mcp: here.join(".mcp.json") });
    }
    let config = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()).map(PathBuf::from);
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    match (config, home) {
        (Some(dir), _) => Ok(Targets { settings: dir.join("settings.json"), mcp: dir.join(".claude.json") }),
        (None, Some(home)) => {
            Ok(Targets { settings: home.join(".claude/settings.json"), mcp: home.join(".claude.json") })
        }
        (None, None) => Err(CliError::bad_input("no HOME: pass --project, or set CLAUDE_CONFIG_DIR")),
    }
}

fn quote(text: &str) -> String {
    if text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:=@".contains(c)) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// This binary and this store, as the entries name them.
fn binary_and_store(ctx: &Context) -> Result<(String, String), CliError> {
    let exe = std::env::current_exe()?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe).to_string_lossy().into_owned();
    let dir = std::path::absolute(&ctx.dir).unwrap_or_else(|_| ctx.dir.clone()).to_string_lossy().into_owned();
    Ok((exe, dir))
}

/// The hook's command.
fn hook_command(exe: &str, dir: &str) -> String {
    format!("{} --dir {} import sessions --from-hook", quote(exe), quote(dir))
}

fn hook_entry(command: &str) -> Value {
    json!({"type": "command", "command": command, "timeout": HOOK_TIMEOUT})
}

fn mcp_entry(exe: &str, dir: &str) -> Value {
    json!({"type": "stdio", "command": exe, "args": ["--dir", dir, "mcp"]})
}

fn read_json(path: &Path) -> Result<Map<String, Value>, CliError> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(CliError::bad_input(format!("{}: not a JSON object; nothing was written", path.display()))),
            Err(e) => Err(CliError::bad_input(format!("{}: not JSON ({e}); nothing was written", path.display()))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(e.into()),
    }
}

fn write_json(path: &Path, map: &Map<String, Value>) -> Result<(), CliError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut text = serde_json::to_string_pretty(map).map_err(std::io::Error::from)?;
    text.push('\n');
    let temp = path.with_extension("json.memledger-tmp");
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, path)?;
    Ok(())
}

/// Whether a hook group of an event holds our command.
fn holds(group: &Value, command: &str) -> bool {
    group["hooks"].as_array().is_some_and(|hooks| hooks.iter().any(|h| h["command"] == json!(command)))
}

/// Add the hooks to `settings`; the events it added them to.
fn add_hooks(settings: &mut Map<String, Value>, command: &str) -> Result<Vec<&'static str>, CliError> {
    let hooks = settings.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(CliError::bad_input("the settings' \"hooks\" is not an object; nothing was written"));
    };
    let mut added = Vec::new();
    for event in EVENTS {
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        let Some(groups) = groups.as_array_mut() else {
            return Err(CliError::bad_input(format!("the settings' hooks.{event} is not a list; nothing was written")));
        };
        if groups.iter().any(|g| holds(g, command)) {
            continue;
        }
        let mut group = json!({"hooks": [hook_entry(command)]});
        if event == "PreCompact" {
            group["matcher"] = json!("");
        }
        groups.push(group);
        added.push(event);
    }
    Ok(added)
}

/// Remove the hooks from `settings`; the events it removed them from.
fn remove_hooks(settings: &mut Map<String, Value>, command: &str) -> Vec<&'static str> {
    let mut removed = Vec::new();
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else { return removed };
    for event in EVENTS {
        let Some(groups) = hooks.get_mut(event).and_then(Value::as_array_mut) else { continue };
        if !groups.iter().any(|g| holds(g, command)) {
            continue;
        }
        for group in groups.iter_mut() {
            if holds(group, command)
                && let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut)
            {
                list.retain(|h| h["command"] != json!(command));
                if list.is_empty() {
                    *group = Value::Null;
                }
            }
        }
        groups.retain(|g| !g.is_null());
        removed.push(event);
        if groups.is_empty() {
            hooks.remove(event);
        }
    }
    if hooks.is_empty() {
        settings.remove("hooks");
    }
    removed
}

pub fn run(ctx: &Context, command: Command, out: &mut Output) -> Result<(), CliError> {
    let (install, args) = match command {
        Command::Install(a) => (true, a),
        Command::Uninstall(a) => (false, a),
    };
    if args.agent != "claude-code" {
        return Err(CliError::bad_input(format!("hooks for {:?}: only claude-code has them", args.agent)));
    }
    let targets = targets(&args)?;
    let (exe, dir) = binary_and_store(ctx)?;
    let command = hook_command(&exe, &dir);
    let mut settings = read_json(&targets.settings)?;
    let mut mcp = read_json(&targets.mcp)?;
    let ours = mcp_entry(&exe, &dir);
    let mut changes: Vec<String> = Vec::new();
    let (settings_changed, mcp_changed);
    if install {
        let added = add_hooks(&mut settings, &command)?;
        settings_changed = !added.is_empty();
        for event in &added {
            changes.push(format!("{}: add a {event} hook: {}", targets.settings.display(), command));
        }
        let servers = mcp.entry("mcpServers").or_insert_with(|| json!({}));
        let Some(servers) = servers.as_object_mut() else {
            return Err(CliError::bad_input(format!(
                "{}: \"mcpServers\" is not an object; nothing was written",
                targets.mcp.display()
            )));
        };
        mcp_changed = match servers.get(MCP_NAME) {
            None => {
                servers.insert(MCP_NAME.into(), ours.clone());
                changes.push(format!("{}: add the MCP server {MCP_NAME}: {}", targets.mcp.display(), ours));
                true
            }
            Some(v) if *v == ours => false,
            Some(_) => {
                out.note(format!(
                    "memledger: {} already names an MCP server {MCP_NAME}: left as it is",
                    targets.mcp.display()
                ));
                false
            }
        };
    } else {
        let removed = remove_hooks(&mut settings, &command);
        settings_changed = !removed.is_empty();
        for event in &removed {
            changes.push(format!("{}: remove the {event} hook", targets.settings.display()));
        }
        mcp_changed = mcp.get("mcpServers").and_then(|s| s.get(MCP_NAME)) == Some(&ours);
        if mcp_changed {
            if let Some(servers) = mcp.get_mut("mcpServers").and_then(Value::as_object_mut) {
                servers.remove(MCP_NAME);
                if servers.is_empty() {
                    mcp.remove("mcpServers");
                }
            }
            changes.push(format!("{}: remove the MCP server {MCP_NAME}", targets.mcp.display()));
        }
    }
    let report = |out: &mut Output, written: bool| -> Result<(), CliError> {
        if out.json {
            return out.json_line(&json!({
                "agent": "claude-code", "install": install, "written": written, "dry_run": args.dry_run,
                "settings": targets.settings, "mcp": targets.mcp, "command": command, "changes": changes,
            }));
        }
        if changes.is_empty() {
            return out.line(if install {
                "already installed: nothing to change"
            } else {
                "nothing of memledger's to remove"
            });
        }
        for change in &changes {
            out.line(change)?;
        }
        if !written {
            out.line("(dry run: nothing was written)")?;
        }
        Ok(())
    };
    if changes.is_empty() || args.dry_run {
        return report(out, false);
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(CliError::bad_input(
                "hooks would change Claude Code's settings: run it on a terminal to be asked, or pass --yes (--dry-run shows the changes)",
            ));
        }
        for change in &changes {
            eprintln!("{change}");
        }
        eprint!("Write these changes? [y/N] ");
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            out.note("memledger: nothing was written");
            return Ok(());
        }
    }
    if settings_changed {
        write_json(&targets.settings, &settings)?;
    }
    if mcp_changed {
        write_json(&targets.mcp, &mcp)?;
    }
    report(out, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_then_uninstall_leaves_the_settings_as_they_were() {
        let original = json!({"model": "opus", "hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye"}]}]}});
        let mut settings = original.as_object().unwrap().clone();
        let command = hook_command("/usr/bin/memledger", "/home/ana/.local/share/memledger");
        assert_eq!(add_hooks(&mut settings, &command).unwrap(), vec!["SessionEnd", "PreCompact"]);
        assert!(add_hooks(&mut settings, &command).unwrap().is_empty(), "installed twice is installed once");
        assert_eq!(settings["hooks"]["SessionEnd"].as_array().unwrap().len(), 2);
        assert_eq!(remove_hooks(&mut settings, &command), vec!["SessionEnd", "PreCompact"]);
        assert_eq!(Value::Object(settings), original);
    }

    #[test]
    fn commands_quote_what_needs_it() {
        assert_eq!(
            hook_command("/bin/memledger", "/a b/it's"),
            "/bin/memledger --dir '/a b/it'\\''s' import sessions --from-hook"
        );
    }
}
