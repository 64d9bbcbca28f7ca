//! The config file: defaults for people who would rather not repeat flags. The environment
//! overrides it, and flags override both.
//!
//! `$MEMLEDGER_CONFIG`, else `$XDG_CONFIG_HOME/memledger/config.toml`, else
//! `~/.config/memledger/config.toml`:
//!
//! ```toml
//! dir = "/home/me/.local/share/memledger"   # MEMLEDGER_DIR, --dir
//! actor = "cli:me"                          # --actor
//! ledger = "postgres://me@db.internal/memledger"  # MEMLEDGER_LEDGER_URL, --ledger
//! [save]
//! scope = "team:payments"                   # MEMLEDGER_SCOPE, --scope
//! type = "fact"                             # MEMLEDGER_TYPE, --type
//! [import]
//! exclude = ["~/work/client-x", "4f1c9a2e"] # directories and session ids never imported, --exclude
//! [models]                                  # each key is MEMLEDGER_<KEY> (docs/models.md)
//! llm_url = "http://localhost:11434/v1"
//! llm_model = "qwen3:8b"
//! daily_tokens = 2000000                   # MEMLEDGER_DAILY_TOKENS: a principal's chat-model tokens a day
//! embed_url = "http://localhost:11434/v1"
//! embed_model = "nomic-embed-text"
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub dir: Option<PathBuf>,
    pub actor: Option<String>,
    /// The shared ledger's URL (docs/shared-ledger.md).
    pub ledger: Option<String>,
    #[serde(default)]
    pub save: SaveDefaults,
    /// Model settings by the lower-case name of their variable without `MEMLEDGER_`.
    #[serde(default)]
    pub models: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub server: ServerDefaults,
    #[serde(default)]
    pub import: ImportDefaults,
}

/// `[import]`: what `import sessions` never reads.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportDefaults {
    /// Directories (a session that worked in one or below it) and session ids (`--exclude`).
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// `[server]`: how commands use `memledger serve`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerDefaults {
    /// Start a server when a command finds none (MEMLEDGER_AUTOSTART, --autostart).
    pub autostart: Option<bool>,
    /// How long a started server waits idle before it exits, e.g. "10m" (MEMLEDGER_IDLE_EXIT).
    pub idle_exit: Option<String>,
}

/// A yes/no environment variable (`1`, `true`, `yes`; `0`, `false`, `no`), if set.
pub fn env_flag(name: &str) -> Option<bool> {
    let v = env(name)?;
    Some(!matches!(v.trim().to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off"))
}

/// How long an autostarted server stays idle: MEMLEDGER_IDLE_EXIT, else `[server] idle_exit`,
/// else 10 minutes.
pub fn idle_exit() -> Result<std::time::Duration, String> {
    match env("MEMLEDGER_IDLE_EXIT").or_else(|| get().server.idle_exit.clone()) {
        Some(text) => parse_duration(&text),
        None => Ok(std::time::Duration::from_secs(600)),
    }
}

/// A duration: a number with `ms`, `s`, `m` or `h` (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number.parse().map_err(|_| format!("not a duration: {text:?} (say 30s, 10m, 1h)"))?;
    let seconds = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("not a duration: {text:?} (say 30s, 10m, 1h)")),
    };
    std::time::Duration::try_from_secs_f64(seconds).map_err(|_| format!("not a duration: {text:?}"))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaveDefaults {
    pub scope: Option<String>,
    #[serde(rename = "type")]
    pub memory_type: Option<String>,
}

/// memledger's directory in the user's config directory: `$XDG_CONFIG_HOME/memledger`, else
/// `~/.config/memledger`.
pub fn config_dir() -> Option<PathBuf> {
    let var = |v: &str| std::env::var_os(v).filter(|x| !x.is_empty());
    let base =
        var("XDG_CONFIG_HOME").map(PathBuf::from).or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("memledger"))
}

/// This machine's signing key (docs/reliability.md): `$MEMLEDGER_SIGNING_KEY`, else
/// `signing.key` in [`config_dir`].
pub fn signing_key_path() -> Option<PathBuf> {
    std::env::var_os("MEMLEDGER_SIGNING_KEY")
        .filter(|x| !x.is_empty())
        .map(PathBuf::from)
        .or_else(|| config_dir().map(|d| d.join("signing.key")))
}

/// Where the witnesses of this machine's stores are kept: `$MEMLEDGER_WITNESS_DIR`, else
/// `witness/` beside the signing key.
pub fn witness_dir() -> Option<PathBuf> {
    std::env::var_os("MEMLEDGER_WITNESS_DIR")
        .filter(|x| !x.is_empty())
        .map(PathBuf::from)
        .or_else(|| signing_key_path().and_then(|k| k.parent().map(|d| d.join("witness"))))
}

/// Where the config file is looked for.
pub fn path() -> Option<PathBuf> {
    let var = |v: &str| std::env::var_os(v).filter(|x| !x.is_empty());
    if let Some(p) = var("MEMLEDGER_CONFIG") {
        return Some(PathBuf::from(p));
    }
    let base =
        var("XDG_CONFIG_HOME").map(PathBuf::from).or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("memledger/config.toml"))
}

/// The config, read once; a missing file is an empty config, an unreadable one a warning.
pub fn get() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let Some(path) = path() else { return Config::default() };
        let Ok(text) = std::fs::read_to_string(&path) else { return Config::default() };
        toml::from_str(&text).unwrap_or_else(|e| {
            eprintln!("memledger: ignoring {}: {e}", path.display());
            Config::default()
        })
    })
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The default scope of a save: `MEMLEDGER_SCOPE`, else the config's.
pub fn default_scope() -> Option<String> {
    env("MEMLEDGER_SCOPE").or_else(|| get().save.scope.clone())
}

/// The default type of a save: `MEMLEDGER_TYPE`, else the config's.
pub fn default_type() -> Option<String> {
    env("MEMLEDGER_TYPE").or_else(|| get().save.memory_type.clone())
}

/// A model setting: the environment variable, else the config's `[models]` key.
pub fn model_setting(name: &str) -> Option<String> {
    env(name).or_else(|| {
        let key = name.strip_prefix("MEMLEDGER_")?.to_ascii_lowercase();
        get().models.get(&key).map(|v| match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Float(x) => x.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => String::new(),
        })
    })
}
