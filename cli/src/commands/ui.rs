//! `memledger ui`: the review page in the browser (docs/review.md), on the store's server.

use std::net::SocketAddr;

use memledger_engine::error::Exit;
use serde_json::json;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Open the review page in the browser: the conflict queue, memories with their lineage, the
/// near misses and the ledger.
///
/// The page is served by the store's server over HTTP on loopback; when none runs, one is
/// started (it exits after the idle time, MEMLEDGER_IDLE_EXIT). The URL carries the bearer token
/// in its fragment, which the browser never sends; with no browser to open it is printed.
///
/// Example: memledger ui
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where a server this starts listens (default: a free loopback port).
    #[arg(long, value_name = "ADDR:PORT")]
    pub http: Option<SocketAddr>,
    /// Print the URL and open no browser.
    #[arg(long)]
    pub no_browser: bool,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
    {
        return Err(CliError::bad_input(format!(
            "{addr} is not a loopback address: the review page is served on loopback"
        )));
    }
    let failure = |message: String, hint: Option<String>| CliError::new(Exit::Failure, message, hint);
    let (mut server, started) = match crate::backend::Server::connect(&ctx.dir, ctx.token.as_deref()) {
        Some(server) => (server, false),
        None => {
            if !crate::backend::store_exists(&ctx.dir) {
                return Err(failure(
                    format!("no memledger store at {}", ctx.dir.display()),
                    Some("it is created by the first `memledger save`; or pass --dir PATH".into()),
                ));
            }
            let idle = crate::config::idle_exit().map_err(CliError::bad_input)?;
            let addr = args.http.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
            let serve_args = ["--http".to_string(), addr.to_string()];
            let server = crate::backend::autostart(&ctx.dir, idle, ctx.wait, &serve_args, ctx.token.as_deref())
                .ok_or_else(|| {
                    failure(
                        "the server for the review page did not start".into(),
                        Some(format!("see {}", ctx.dir.join("serve.log").display())),
                    )
                })?;
            (server, true)
        }
    };
    let status = server.status()?;
    let Some(http) = status.http else {
        return Err(failure(
            format!("the server of {} (pid {}) does not serve HTTP, which the page needs", status.dir, status.pid),
            Some("stop it, then run `memledger ui` (it starts one), or `memledger serve --http 127.0.0.1:7878`".into()),
        ));
    };
    // The page acts as whoever opens it: a principal's token when one is given, else the owner's.
    let token = match &ctx.token {
        Some(token) => token.clone(),
        None => memledger_server::token(&ctx.dir).map_err(|e| failure(format!("{}: {e}", ctx.dir.display()), None))?,
    };
    let url = format!("http://{http}/#token={token}");
    let opened = !args.no_browser && open_in_browser(&url);
    if out.json {
        return out.json_line(&json!({ "url": url, "started_server": started, "opened": opened }));
    }
    if opened {
        out.line(format!("opened the review page of {} in the browser", status.dir))?;
    } else {
        out.line("open this URL in a browser (it carries the store's token: keep it to yourself):")?;
    }
    out.line(url)
}

/// Hand `url` to the desktop's opener; whether one took it.
fn open_in_browser(url: &str) -> bool {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
