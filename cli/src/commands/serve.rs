//! `memledger serve`: one long-lived process that holds the store for every agent and person on
//! the machine (server/, docs/adr/0014-one-server-per-store.md). This module opens the store
//! and hands it to the server as the command layer's [`Host`].

use memledger_commands::host::Host;
use memledger_engine::error::Exit;
use std::net::SocketAddr;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Serve the store: open it once and answer every command through its Unix socket
/// (`<store>/memledger.sock`, mode 0600), and HTTP with a bearer token when asked.
///
/// Commands of the CLI and `memledger mcp` go through it while it runs (same output, same exit
/// codes); `--no-server` opens the store directly instead. HTTP serves the JSON API
/// (`/openapi.json` describes it) and MCP over streamable HTTP at `/mcp`.
///
/// Example: memledger serve --http 127.0.0.1:7878
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Also serve HTTP on this address (loopback unless --allow-remote); needs the bearer token.
    #[arg(long, value_name = "ADDR:PORT")]
    pub http: Option<SocketAddr>,
    /// Allow --http on an address that is not loopback (the token is still required).
    #[arg(long)]
    pub allow_remote: bool,
    /// Write a systemd user unit (Linux) or a launchd agent (macOS) that runs this server, and
    /// say how to enable it.
    #[arg(long)]
    pub install_unit: bool,
    /// Print the bearer token of HTTP clients (generated into the store directory on first use).
    #[arg(long)]
    pub print_token: bool,
    /// Exit after this long without a request (e.g. 30s, 10m, 1h); default: run until stopped.
    #[arg(long, value_name = "DURATION")]
    pub idle_exit: Option<String>,
    /// Carry out erasures asked for through this server (`erase` from the CLI, HTTP or MCP):
    /// a person's setting. Without it an erasure is refused; a dry run is always answered.
    #[arg(long)]
    pub allow_erase: bool,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let io = |e: std::io::Error| CliError::new(Exit::Failure, format!("{}: {e}", ctx.dir.display()), None);
    if args.print_token {
        return out.line(memledger_server::token(&ctx.dir).map_err(io)?);
    }
    let idle_exit =
        args.idle_exit.as_deref().map(crate::config::parse_duration).transpose().map_err(CliError::bad_input)?;
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
        && !args.allow_remote
    {
        return Err(CliError::bad_input(format!(
            "{addr} is not a loopback address: serving beyond this machine needs --allow-remote"
        )));
    }
    if args.install_unit {
        let home = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .ok_or_else(|| CliError::bad_input("HOME is not set"))?;
        let exe = std::env::current_exe().map_err(io)?;
        let dir = std::path::absolute(&ctx.dir).map_err(io)?;
        let mut pass = Vec::new();
        if let Some(addr) = args.http {
            pass.extend(["--http".to_string(), addr.to_string()]);
        }
        if args.allow_remote {
            pass.push("--allow-remote".into());
        }
        let installed = memledger_server::unit::install(&home, &exe, &dir, &pass).map_err(io)?;
        out.line(format!("wrote {}", installed.path.display()))?;
        return out.line(format!("enable it with: {}", installed.enable));
    }
    if !crate::backend::store_exists(&ctx.dir) {
        // Create it first, as a save would: the server's own files come after the store's.
        drop(ctx.open_direct(true)?);
    }
    let _lock =
        memledger_server::serve::lock(&ctx.dir).map_err(|e| CliError::new(Exit::Failure, e.to_string(), None))?;
    let ml = ctx.open_direct(true)?;
    let host = Host::new(ml, args.allow_erase, memledger_commands::Settings { progress: None, ..super::settings() });
    let options = memledger_server::serve::Options {
        dir: ctx.dir.clone(),
        http: args.http,
        allow_remote: args.allow_remote,
        idle_exit,
        default_actor: ctx.actor.clone(),
        allow_erase: args.allow_erase,
        mcp_defaults: memledger_server::mcp::Defaults {
            scope: crate::config::default_scope(),
            memory_type: crate::config::default_type(),
        },
    };
    // It returns once every command has finished (the runtime waited for them), the store closed.
    memledger_server::serve::run(options, host).map_err(|e| CliError::new(Exit::Failure, e.to_string(), None))
}
