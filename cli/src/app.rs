//! The command tree, global options and dispatch.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use memledger_engine::error::Exit;
use memledger_engine::{EngineError, Memledger, OpenOptions};

use memledger_server::api::Call;

use crate::commands;
use crate::output::{CliError, Output};

/// memledger: an event-sourced memory ledger for AI agents.
///
/// Every save, classification, conflict, resolution and revert is an append-only event; views
/// are rebuilt from the ledger. Example: `memledger save "the staging db runs on Postgres 17"`.
#[derive(Parser, Debug)]
#[command(name = "memledger", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// The store directory (created on first write).
    #[arg(long, global = true, env = "MEMLEDGER_DIR", value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// A shared ledger (postgres://…) that the store copies and appends through, for a team's
    /// machines; the store directory keeps this machine's views (docs/shared-ledger.md).
    #[arg(long, global = true, env = "MEMLEDGER_LEDGER_URL", value_name = "URL")]
    pub ledger: Option<String>,
    /// Machine-readable output: one JSON object (JSON Lines for log, export, classify --pairs, save --from).
    #[arg(long, global = true)]
    pub json: bool,
    /// Whom the command acts for, recorded on every event beside the principal (default
    /// cli:$USER).
    #[arg(long, global = true, value_name = "NAME")]
    pub actor: Option<String>,
    /// Act as the principal this token belongs to (`memledger principals add` printed it); without
    /// one, direct access to the store is its owner. Best passed as MEMLEDGER_TOKEN.
    #[arg(long, global = true, env = "MEMLEDGER_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Seconds to wait for another memledger process that holds the store.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 10.0)]
    pub wait: f64,
    /// Open the store in this process even when a server runs for it (MEMLEDGER_NO_SERVER=1).
    #[arg(long, global = true)]
    pub no_server: bool,
    /// Start a server for the store when none runs (it exits when idle); MEMLEDGER_AUTOSTART=1
    /// or `[server] autostart = true` in the config file.
    #[arg(long, global = true)]
    pub autostart: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    Save(commands::save::Args),
    Update(commands::update::Args),
    Forget(commands::forget::Args),
    Erase(commands::erase::Args),
    Show(commands::show::Args),
    List(commands::list::Args),
    Recall(commands::recall::Args),
    History(commands::history::Args),
    Why(commands::why::Args),
    Classify(commands::classify::Args),
    #[command(subcommand)]
    Conflicts(commands::conflicts::Command),
    Embed(commands::embed::Args),
    Log(commands::log::Args),
    Export(commands::export::Args),
    Import(commands::import::Args),
    Migrate(commands::migrate::Args),
    Stream(commands::stream::Args),
    Rebuild(commands::rebuild::Args),
    Verify(commands::verify::Args),
    Checkpoint(commands::checkpoint::Args),
    /// `stats` and the other reads of the store at a glance (`memledger stats`'s module).
    #[command(flatten)]
    Glance(commands::stats::Command),
    Usage(commands::usage::Args),
    Mcp(commands::mcp::Args),
    Serve(commands::serve::Args),
    Status(commands::status::Args),
    #[command(subcommand)]
    Principals(commands::principals::Command),
    Whoami(commands::principals::WhoamiArgs),
    #[command(subcommand)]
    Hooks(commands::hooks::Command),
    Ui(commands::ui::Args),
    Completions(commands::completions::CompletionsArgs),
    Man(commands::completions::ManArgs),
}

/// What every command gets: the global options and a way to reach the store.
#[derive(Clone)]
pub struct Context {
    pub dir: PathBuf,
    pub json: bool,
    pub actor: String,
    pub wait: Duration,
    /// Never use a server (`--no-server`, `MEMLEDGER_NO_SERVER=1`).
    pub no_server: bool,
    /// Start a server when none runs: after how long idle it exits.
    pub autostart: Option<Duration>,
    /// The shared ledger's URL (`--ledger`, `MEMLEDGER_LEDGER_URL`, `ledger` in the config file).
    pub ledger: Option<String>,
    /// The principal's token to act with (`--token`, `MEMLEDGER_TOKEN`); none: the owner.
    pub token: Option<String>,
    /// Open a store that disagrees with its witness (`memledger checkpoint --accept`).
    pub accept_witness: bool,
}

impl Context {
    /// Run a store command: through the store's server when one runs, else on the store opened
    /// here. The output and the exit code are the same either way.
    pub fn run(&self, call: Call, out: &mut Output) -> Result<(), CliError> {
        if let Some(mut server) = self.server(call.writes())? {
            let reply = server.call(self, call.clone())?;
            return crate::backend::print_reply(&call, &reply, out, false);
        }
        let ml = self.open_for(&call, out)?;
        let caller = self.caller(&ml)?;
        commands::execute(&ml, &caller, &call, out)
    }

    /// Who acts on a store this process opened: the principal `--token` authenticates, else the
    /// store's owner (direct access), acting as `--actor`.
    pub fn caller(&self, ml: &Memledger) -> Result<memledger_engine::Caller, CliError> {
        let Some(token) = &self.token else { return Ok(memledger_engine::Caller::owner(self.actor.clone())) };
        if memledger_server::existing_token(&self.dir).is_some_and(|t| t == *token) {
            return Ok(memledger_engine::Caller::owner(self.actor.clone()));
        }
        let principal = ml.authenticate(token).map_err(|e| {
            CliError::new(e.exit(), e.to_string(), Some(memledger_server::api::UNAUTHENTICATED_HINT.into()))
        })?;
        Ok(memledger_engine::Caller { principal: std::sync::Arc::new(principal), actor: self.actor.clone() })
    }

    /// The store's server, if one answers (or `--autostart` starts one: only for a store that
    /// exists, so that refused input never creates one).
    pub fn server(&self, _writes: bool) -> Result<Option<crate::backend::Server>, CliError> {
        if self.no_server {
            return Ok(None);
        }
        if let Some(server) = crate::backend::Server::connect(&self.dir, self.token.as_deref()) {
            return Ok(Some(server));
        }
        match self.autostart {
            Some(idle) if crate::backend::store_exists(&self.dir) => {
                Ok(crate::backend::autostart(&self.dir, idle, self.wait, &[], self.token.as_deref()))
            }
            _ => Ok(None),
        }
    }

    /// The store for a command run here: created for a command that creates it; for any other,
    /// a store that does not exist yet answers as an empty one (with a note in human mode).
    pub fn open_for(&self, call: &Call, out: &mut Output) -> Result<crate::backend::Opened, CliError> {
        // With a shared ledger the store is this machine's copy: made on first use.
        if call.creates() || self.ledger.is_some() {
            return self.open_direct(true).map(crate::backend::Opened::Store);
        }
        match self.open_existing() {
            Ok(Some(ml)) => Ok(crate::backend::Opened::Store(ml)),
            Ok(None) => {
                if !self.json {
                    out.note(format!(
                        "memledger: no store at {} yet: answering as an empty store (the first `memledger save` creates it)",
                        self.dir.display()
                    ));
                }
                let dir = std::env::temp_dir()
                    .join(format!("memledger-empty-{}", memledger_schemas::MemoryId::random().hex()));
                let options = OpenOptions { create: true, wait: self.wait, ..OpenOptions::default() };
                match Memledger::open_with(&dir, &options, self.engine_config()) {
                    Ok(ml) => Ok(crate::backend::Opened::Empty { ml: Box::new(ml), dir }),
                    Err(e) => {
                        let _ = std::fs::remove_dir_all(&dir);
                        Err(e.into())
                    }
                }
            }
            Err(e) => Err(e),
        }
    }

    fn open_existing(&self) -> Result<Option<Memledger>, CliError> {
        match self.open_direct(false) {
            Ok(ml) => Ok(Some(ml)),
            Err(e) if e.message.starts_with("no memledger store at") => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn engine_config(&self) -> memledger_engine::EngineConfig {
        memledger_engine::EngineConfig { models: self.model_config(), ..memledger_engine::EngineConfig::default() }
    }

    /// The models: the environment first, then the config file's [models] (cli/src/config.rs).
    pub fn model_config(&self) -> memledger_engine::models::ModelConfig {
        memledger_engine::models::ModelConfig::from_lookup(crate::config::model_setting)
    }

    /// The shared ledger, connected, when one is configured.
    pub fn shared_ledger(&self) -> Result<Option<std::sync::Arc<dyn memledger_engine::EventLog>>, CliError> {
        match &self.ledger {
            None => Ok(None),
            Some(url) => {
                memledger_engine::connect_shared_ledger(url).map(Some).map_err(|e| CliError::from(EngineError::Open(e)))
            }
        }
    }

    /// This machine's signing key, made on first use (docs/reliability.md); none without a
    /// home directory to keep it in.
    pub fn signer(&self) -> Result<Option<std::sync::Arc<memledger_engine::Signer>>, CliError> {
        let Some(path) = crate::config::signing_key_path() else { return Ok(None) };
        memledger_engine::Signer::load_or_create(&path).map(|s| Some(std::sync::Arc::new(s))).map_err(|e| {
            CliError::new(
                Exit::Failure,
                e.to_string(),
                Some("set MEMLEDGER_SIGNING_KEY to a key file of mode 0600".into()),
            )
        })
    }

    /// Open the store in this process; `create` for commands that write.
    pub fn open_direct(&self, create: bool) -> Result<Memledger, CliError> {
        let options = OpenOptions {
            create,
            wait: self.wait,
            shared: self.shared_ledger()?,
            signer: self.signer()?,
            witness_dir: crate::config::witness_dir(),
            accept_witness: self.accept_witness,
        };
        // Models over HTTP come from the environment (docs/models.md); none: the offline path.
        let config = self.engine_config();
        let ml = Memledger::open_with(&self.dir, &options, config).map_err(|e| match e {
            EngineError::Open(memledger_engine::OpenError::Missing { path }) => CliError::new(
                Exit::Failure,
                format!("no memledger store at {}", path.display()),
                Some("it is created by the first `memledger save`; or pass --dir PATH".into()),
            ),
            EngineError::Open(memledger_engine::OpenError::Locked { .. })
                if memledger_server::files::socket(&self.dir).exists() && self.no_server =>
            {
                let mut e = CliError::from(e);
                e.hint = Some(
                    "a memledger server holds this store: drop --no-server (MEMLEDGER_NO_SERVER) to go through it"
                        .into(),
                );
                e
            }
            other => CliError::from(other),
        })?;
        for note in ml.notes() {
            eprintln!("memledger: {note}");
        }
        Ok(ml)
    }
}

fn default_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("memledger");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".local/share/memledger"),
        None => PathBuf::from(".memledger"),
    }
}

fn default_actor() -> String {
    let user = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".into());
    format!("cli:{user}")
}

/// Run with these arguments; the process exit code.
pub fn main_with_args(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { Exit::BadInput } else { Exit::Ok };
            let _ = e.print();
            return code.into();
        }
    };
    // Exported (and flushed when this returns) only when OTEL_EXPORTER_OTLP_ENDPOINT is set.
    let _traces = crate::telemetry::init();
    if !(cli.wait.is_finite() && cli.wait >= 0.0) {
        eprintln!("memledger: error: --wait must be a number of seconds ≥ 0");
        return Exit::BadInput.into();
    }
    let no_server = cli.no_server || crate::config::env_flag("MEMLEDGER_NO_SERVER").unwrap_or(false);
    let autostart = cli.autostart
        || crate::config::env_flag("MEMLEDGER_AUTOSTART").or(crate::config::get().server.autostart).unwrap_or(false);
    let idle = match crate::config::idle_exit() {
        Ok(idle) => idle,
        Err(e) => {
            eprintln!("memledger: error: {e}");
            return Exit::BadInput.into();
        }
    };
    let ctx = Context {
        dir: cli.dir.clone().or_else(|| crate::config::get().dir.clone()).unwrap_or_else(default_dir),
        json: cli.json,
        actor: cli.actor.clone().or_else(|| crate::config::get().actor.clone()).unwrap_or_else(default_actor),
        wait: Duration::from_secs_f64(cli.wait),
        no_server,
        autostart: autostart.then_some(idle),
        ledger: cli.ledger.clone().or_else(|| crate::config::get().ledger.clone()),
        token: cli.token.clone().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()),
        accept_witness: false,
    };
    let mut out = Output::stdout(ctx.json);
    let result = match cli.command {
        Command::Save(a) => commands::save::run(&ctx, a, &mut out),
        Command::Update(a) => commands::update::run(&ctx, a, &mut out),
        Command::Forget(a) => commands::forget::run(&ctx, a, &mut out),
        Command::Erase(a) => commands::erase::run(&ctx, a, &mut out),
        Command::Show(a) => commands::show::run(&ctx, a, &mut out),
        Command::List(a) => commands::list::run(&ctx, a, &mut out),
        Command::Recall(a) => commands::recall::run(&ctx, a, &mut out),
        Command::History(a) => commands::history::run(&ctx, a, &mut out),
        Command::Why(a) => commands::why::run(&ctx, a, &mut out),
        Command::Classify(a) => commands::classify::run(&ctx, a, &mut out),
        Command::Conflicts(c) => commands::conflicts::run(&ctx, c, &mut out),
        Command::Embed(a) => commands::embed::run(&ctx, a, &mut out),
        Command::Log(a) => commands::log::run(&ctx, a, &mut out),
        Command::Export(a) => commands::export::run(&ctx, a, &mut out),
        Command::Import(a) => commands::import::run(&ctx, a, &mut out),
        Command::Migrate(a) => commands::migrate::run(&ctx, a, &mut out),
        Command::Stream(a) => commands::stream::run(&ctx, a, &mut out),
        Command::Rebuild(a) => commands::rebuild::run(&ctx, a, &mut out),
        Command::Verify(a) => commands::verify::run(&ctx, a, &mut out),
        Command::Checkpoint(a) => commands::checkpoint::run(&ctx, a, &mut out),
        Command::Glance(c) => commands::stats::run(&ctx, c, &mut out),
        Command::Usage(a) => commands::usage::run(&ctx, a, &mut out),
        Command::Mcp(a) => commands::mcp::run(&ctx, a, &mut out),
        Command::Serve(a) => commands::serve::run(&ctx, a, &mut out),
        Command::Status(a) => commands::status::run(&ctx, a, &mut out),
        Command::Principals(c) => commands::principals::run(&ctx, c, &mut out),
        Command::Whoami(a) => commands::principals::whoami(&ctx, a, &mut out),
        Command::Hooks(c) => commands::hooks::run(&ctx, c, &mut out),
        Command::Ui(a) => commands::ui::run(&ctx, a, &mut out),
        Command::Completions(a) => commands::completions::completions(&ctx, a, &mut out),
        Command::Man(a) => commands::completions::man(&ctx, a, &mut out),
    };
    let result = result.and_then(|()| out.flush());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            e.print();
            e.code.into()
        }
    }
}
