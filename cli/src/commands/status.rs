//! `memledger status`: whether commands go through a server or open the store themselves.

use serde_json::json;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Say whether commands on this store go through its server (`memledger serve`) or open the
/// store in their own process, and how.
///
/// Example: memledger status
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(ctx: &Context, _args: Args, out: &mut Output) -> Result<(), CliError> {
    let server = ctx.server(false)?;
    let exists = crate::backend::store_exists(&ctx.dir);
    match server {
        Some(mut server) => {
            let s = server.status()?;
            if out.json {
                return out.json_line(&json!({"path": "server", "dir": ctx.dir, "store_exists": exists, "server": s}));
            }
            out.line(format!("server: commands go through memledger serve (pid {}) on {}", s.pid, s.socket))?;
            if let Some(http) = &s.http {
                out.line(format!("  http://{http} (bearer token: memledger serve --print-token)"))?;
            }
            out.line(format!("  store {}  head seq {}  up {}s", s.dir, s.head_seq, s.uptime_secs))?;
            if let Some(idle) = s.idle_exit_secs {
                out.line(format!("  exits after {idle}s idle"))?;
            }
            Ok(())
        }
        None => {
            let why = if ctx.no_server { "--no-server (MEMLEDGER_NO_SERVER)" } else { "no server runs for this store" };
            if out.json {
                return out.json_line(&json!({
                    "path": "direct", "dir": ctx.dir, "store_exists": exists, "server": null,
                    "reason": why, "autostart": ctx.autostart.is_some(),
                }));
            }
            out.line(format!("direct: commands open the store themselves ({why})"))?;
            out.line(format!("  store {}{}", ctx.dir.display(), if exists { "" } else { " (not created yet)" }))?;
            if ctx.autostart.is_some() && !ctx.no_server {
                out.line("  --autostart: the next command starts a server")?;
            }
            Ok(())
        }
    }
}
