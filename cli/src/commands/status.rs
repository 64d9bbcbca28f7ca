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

/// The chat model's tokens counted today and this month for the caller (`memledger usage`), when
/// the store exists and can be read at once: `status` never waits for another process's lock
/// (null then).
fn tokens(ctx: &Context, exists: bool) -> serde_json::Value {
    let usage = read_at_once(ctx, exists, memledger_server::api::Call::Usage(memledger_server::api::Empty {}));
    if usage.is_null() {
        return usage;
    }
    let total = |period: &str| usage["yours"][period]["total_tokens"].clone();
    json!({"today": total("today"), "this_month": total("month"), "daily_budget": usage["daily_budget"]})
}

/// A read command's document, when the store exists and can be read at once (null otherwise).
fn read_at_once(ctx: &Context, exists: bool, call: memledger_server::api::Call) -> serde_json::Value {
    if !exists {
        return serde_json::Value::Null;
    }
    let at_once = Context { wait: std::time::Duration::ZERO, ..ctx.clone() };
    let mut buffer = Output::buffer(true);
    if at_once.run(call, &mut buffer).is_err() {
        return serde_json::Value::Null;
    }
    serde_json::from_str(buffer.into_parts().0.trim()).unwrap_or_default()
}

pub fn run(ctx: &Context, _args: Args, out: &mut Output) -> Result<(), CliError> {
    let server = ctx.server(false)?;
    let exists = crate::backend::store_exists(&ctx.dir);
    let tokens = tokens(ctx, exists);
    let last_verify =
        read_at_once(ctx, exists, memledger_server::api::Call::Stats(memledger_server::api::Empty {}))["last_verify"]
            .clone();
    let token_line = |out: &mut Output| -> Result<(), CliError> {
        if last_verify["ok"] == json!(false) {
            out.line(format!(
                "  LAST VERIFY FAILED at {}: {} (run memledger verify)",
                last_verify["at"].as_str().unwrap_or_default(),
                last_verify["problem"].as_str().unwrap_or_default()
            ))?;
        }
        if !tokens.is_null() {
            let budget = tokens["daily_budget"].as_u64().map(|b| format!(" (daily budget {b})")).unwrap_or_default();
            out.line(format!(
                "  model tokens: {} today, {} this month{budget} (memledger usage)",
                tokens["today"], tokens["this_month"]
            ))?;
        }
        Ok(())
    };
    match server {
        Some(mut server) => {
            let s = server.status()?;
            if out.json {
                return out.json_line(
                    &json!({"path": "server", "dir": ctx.dir, "store_exists": exists, "server": s, "tokens": tokens,
                        "last_verify": last_verify}),
                );
            }
            out.line(format!("server: commands go through memledger serve (pid {}) on {}", s.pid, s.socket))?;
            if let Some(http) = &s.http {
                out.line(format!("  http://{http} (bearer token: memledger serve --print-token)"))?;
            }
            out.line(format!("  store {}  head seq {}  up {}s", s.dir, s.head_seq, s.uptime_secs))?;
            if let Some(idle) = s.idle_exit_secs {
                out.line(format!("  exits after {idle}s idle"))?;
            }
            token_line(out)
        }
        None => {
            let why = if ctx.no_server { "--no-server (MEMLEDGER_NO_SERVER)" } else { "no server runs for this store" };
            if out.json {
                return out.json_line(&json!({
                    "path": "direct", "dir": ctx.dir, "store_exists": exists, "server": null,
                    "reason": why, "autostart": ctx.autostart.is_some(), "tokens": tokens, "last_verify": last_verify,
                }));
            }
            out.line(format!("direct: commands open the store themselves ({why})"))?;
            out.line(format!("  store {}{}", ctx.dir.display(), if exists { "" } else { " (not created yet)" }))?;
            if ctx.autostart.is_some() && !ctx.no_server {
                out.line("  --autostart: the next command starts a server")?;
            }
            token_line(out)
        }
    }
}
