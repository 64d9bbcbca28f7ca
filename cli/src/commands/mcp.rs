//! `memledger mcp`: the Model Context Protocol tools (server/src/mcp.rs) over stdio, for coding
//! agents. When the store's server runs, each tool call goes to it over its socket; when none
//! runs, the store is opened for that call alone and dropped after it (the drop commits the text
//! index), so a person's CLI commands run between an agent's calls
//! (docs/adr/0014-one-server-per-store.md). Calls are then answered one at a time.
//!
//! Resource subscriptions follow the store: each write this process makes, and, while the
//! store's server runs, its head as every other writer moves it (asked every [`HEAD_POLL`]).
//! Without a server, writes by other processes reach a subscriber at this process's next write.

/// How often a stdio session asks the store's server for its head, for its subscriptions.
const HEAD_POLL: std::time::Duration = std::time::Duration::from_millis(250);

use std::sync::Arc;

use memledger_engine::error::Exit;
use memledger_server::Who;
use memledger_server::api::{Call, CallRequest, Reply};
use memledger_server::client::Client;
use memledger_server::mcp::Defaults;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Serve memledger to an agent over the Model Context Protocol (stdio).
///
/// Tools: save_memory, recall_memory, memory_history, why_memory, list_conflicts,
/// resolve_conflict and erase_memory. Explicit edits (`update`, `forget`) stay with people, in
/// the CLI; erase_memory answers a dry run always, and erases only with --allow-erase (and,
/// through a server, only if the server was started with it too). Through
/// the store's server when one runs (`memledger serve`), else the store is opened per tool call,
/// so the CLI keeps working on the same store while an agent is connected. Events are recorded
/// as `agent:<client name>`.
///
/// Example (Claude Code): claude mcp add memledger -- memledger mcp
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Carry out erasures an agent asks for (erase_memory): a person's setting. Without it the
    /// tool refuses them and says who can; a dry run is always answered.
    #[arg(long)]
    pub allow_erase: bool,
}

pub fn run(ctx: &Context, args: Args, _out: &mut Output) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Exit::Failure, format!("cannot start the MCP server: {e}"), None))?;
    let direct = Arc::new(Context {
        dir: ctx.dir.clone(),
        json: true,
        actor: ctx.actor.clone(),
        wait: ctx.wait,
        no_server: true,
        autostart: None,
        ledger: ctx.ledger.clone(),
        token: ctx.token.clone(),
        accept_witness: false,
    });
    let socket = memledger_server::files::socket(&ctx.dir);
    let use_server = !ctx.no_server;
    // One direct call at a time: the store is opened per call, and a second open in this process
    // would only wait for the first to drop it.
    let turn = Arc::new(tokio::sync::Mutex::new(()));
    // The head as this session knows it moved: a count of moves, not a seq.
    let (moved, changes) = tokio::sync::watch::channel(0u64);
    let moved = Arc::new(moved);
    let call_moved = moved.clone();
    let call_socket = socket.clone();
    let call: memledger_server::CallFn = Arc::new(move |call: Call, who: Who| {
        let (direct, socket, turn, moved) = (direct.clone(), call_socket.clone(), turn.clone(), call_moved.clone());
        Box::pin(async move {
            let writes = call.writes();
            let reply = relay(direct, socket, turn, use_server, call, who).await;
            if writes {
                moved.send_modify(|n| *n += 1);
            }
            reply
        })
    });
    let defaults = Defaults { scope: crate::config::default_scope(), memory_type: crate::config::default_type() };
    let serve = async move {
        if use_server {
            tokio::spawn(follow_server_head(socket, moved));
        }
        memledger_server::mcp::serve_stdio(call, defaults, args.allow_erase, ctx.token.clone(), Some(changes)).await
    };
    runtime.block_on(serve).map_err(|e| CliError::new(Exit::Failure, e, None))
}

/// Tell the session's subscriptions each time the running server's head moves.
async fn follow_server_head(socket: std::path::PathBuf, moved: Arc<tokio::sync::watch::Sender<u64>>) {
    let mut last = None;
    let mut tick = tokio::time::interval(HEAD_POLL);
    loop {
        tick.tick().await;
        if moved.is_closed() {
            return;
        }
        let Ok(mut client) = Client::connect(&socket).await else { continue };
        let Ok(status) = client.status().await else { continue };
        // The first answer counts as a move too: a write between a subscription and it must
        // not go unheard (a move that changed nothing only costs the subscriptions a read).
        if last != Some(status.head_seq) {
            moved.send_modify(|n| *n += 1);
        }
        last = Some(status.head_seq);
    }
}

/// One call: through the store's server when one runs, else on the store opened for it alone.
async fn relay(
    direct: Arc<Context>,
    socket: std::path::PathBuf,
    turn: Arc<tokio::sync::Mutex<()>>,
    use_server: bool,
    call: Call,
    who: Who,
) -> Reply {
    // On stdio no transport authenticates: the calls carry this process's token.
    let (token, actor) = match who {
        Who::Token { token, actor } => (token, actor),
        Who::Caller(caller) => (direct.token.clone(), caller.actor),
    };
    if use_server && let Ok(client) = Client::connect(&socket).await {
        let mut client = client.with_token(token.clone());
        let request = CallRequest { call: call.clone(), json: true, color: false, actor: Some(actor.clone()) };
        if let Ok(reply) = client.call(&request).await {
            return reply;
        }
    }
    let _turn = turn.lock().await;
    tokio::task::spawn_blocking(move || run_direct(&direct, call, &actor))
        .await
        .unwrap_or_else(|e| Reply::failure(format!("the tool call failed: {e}")))
}

/// A call on the store opened for it alone, dropped before the answer goes out, for the
/// principal `ctx`'s token authenticates (none: the owner) acting as `actor`.
fn run_direct(ctx: &Context, call: Call, actor: &str) -> Reply {
    // Bad input writes nothing, and creates no store.
    if let Call::Save(body) = &call
        && let Err(e) = body.validate()
    {
        return Reply::document::<()>(Err(e));
    }
    let mut out = Output::buffer(true);
    let executed = ctx.open_for(&call, &mut out).and_then(|ml| {
        let mut caller = ctx.caller(&ml)?;
        caller.actor = actor.to_string();
        Ok(memledger_commands::execute(&ml, &caller, &call, &super::settings()))
    });
    match executed {
        Ok(executed) => {
            let mut reply = Reply::answered(memledger_commands::host::Hosted { executed, verify_failed: None });
            // The notes of opening the store (an empty store answering) go with the answer.
            let (_, notes) = out.into_parts();
            reply.stderr.insert_str(0, &notes);
            reply
        }
        Err(e) => super::reply_failed(e, out),
    }
}
