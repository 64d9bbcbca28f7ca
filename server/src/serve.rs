//! Running the server: the one-server lock, the Unix socket (mode 0600), TCP with a token, the
//! idle exit, and a shutdown that lets every command in flight finish.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::api::ServerStatus;
use crate::http::{Activity, AppState};
use crate::{Store, files};

/// How to serve.
pub struct Options {
    pub dir: PathBuf,
    /// Also listen on TCP here (needs the token).
    pub http: Option<SocketAddr>,
    /// Allow a TCP address that is not loopback.
    pub allow_remote: bool,
    /// Exit after this long without a request (none: run until stopped).
    pub idle_exit: Option<Duration>,
    /// The actor of calls that name none.
    pub default_actor: String,
    /// `--allow-erase`: a person lets the server carry out erasures (HTTP, MCP, the CLI's calls).
    pub allow_erase: bool,
    /// What an agent's save takes when it gives no scope or type.
    pub mcp_defaults: crate::mcp::Defaults,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("a memledger server already serves {0} (its socket: {1})")]
    AlreadyRunning(PathBuf, PathBuf),
    #[error("{0} is not a loopback address: serving beyond this machine needs --allow-remote")]
    NotLoopback(SocketAddr),
    #[error("the socket path {0} is too long for a Unix socket (at most 107 bytes): use a shorter --dir")]
    SocketPathTooLong(PathBuf),
    #[error("cannot serve: {0}")]
    Io(#[from] std::io::Error),
}

/// The lock that makes a server the only one of its store; held for the server's life.
pub fn lock(dir: &Path) -> Result<std::fs::File, ServeError> {
    std::fs::create_dir_all(dir)?;
    let file =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(files::SERVE_LOCK))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(ServeError::AlreadyRunning(dir.to_path_buf(), files::socket(dir)))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(e.into()),
    }
}

/// Serve until a signal, or the idle time, stops it; commands in flight then finish. The caller
/// holds [`lock`] and has opened the store `host` holds.
pub fn run(options: Options, host: memledger_commands::host::Host) -> Result<(), ServeError> {
    if let Some(addr) = options.http
        && !addr.ip().is_loopback()
        && !options.allow_remote
    {
        return Err(ServeError::NotLoopback(addr));
    }
    let socket = files::socket(&options.dir);
    if socket.as_os_str().len() > 107 {
        return Err(ServeError::SocketPathTooLong(socket));
    }
    let token = options.http.map(|_| crate::token(&options.dir)).transpose()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let result = runtime.block_on(serve(options, host, socket.clone(), token));
    let _ = std::fs::remove_file(&socket);
    // Dropping the runtime waits for the blocking threads: a command in flight finishes.
    drop(runtime);
    result
}

async fn serve(
    options: Options,
    host: memledger_commands::host::Host,
    socket: PathBuf,
    token: Option<String>,
) -> Result<(), ServeError> {
    let stop = CancellationToken::new();
    let (store, changes) = Store::new(host);
    let started = Instant::now();
    let activity = Arc::new(Activity::default());
    activity.touch();
    let unix = bind_unix(&socket)?;
    let tcp = match options.http {
        Some(addr) => Some(tokio::net::TcpListener::bind(addr).await?),
        None => None,
    };
    let http_addr = tcp.as_ref().and_then(|l| l.local_addr().ok());
    let status = {
        let store = store.clone();
        let dir = options.dir.display().to_string();
        let socket = socket.display().to_string();
        let idle = options.idle_exit.map(|d| d.as_secs());
        let ui_actor = crate::ui::actor(&options.default_actor);
        Arc::new(move || ServerStatus {
            server: "memledger serve".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
            dir: dir.clone(),
            socket: socket.clone(),
            http: http_addr.map(|a| a.to_string()),
            idle_exit_secs: idle,
            ui_actor: ui_actor.clone(),
            uptime_secs: started.elapsed().as_secs(),
            head_seq: store.head_seq(),
        })
    };
    let state = AppState {
        store: store.clone(),
        call: crate::call_fn(store.clone()),
        status,
        activity: activity.clone(),
        default_actor: options.default_actor.clone(),
        allow_erase: options.allow_erase,
    };
    let mcp_hosts = if options.allow_remote { Some(Vec::new()) } else { None };
    // The socket (mode 0600) is the owner's without a token; a token there is checked as on TCP.
    let store_token = token.clone().or_else(|| crate::existing_token(&options.dir)).map(Arc::new);
    let unix_auth = crate::http::Auth { store: store.clone(), store_token: store_token.clone(), required: false };
    let unix_app = crate::http::app(
        state.clone(),
        crate::mcp::router_with(
            state.call.clone(),
            options.mcp_defaults.clone(),
            options.allow_erase,
            stop.clone(),
            None,
            Some(changes.clone()),
        ),
        unix_auth,
    );
    let mut tasks = tokio::task::JoinSet::new();
    {
        let stop = stop.clone();
        tasks.spawn(async move { axum::serve(unix, unix_app).with_graceful_shutdown(stop.cancelled_owned()).await });
    }
    if let (Some(tcp), Some(token)) = (tcp, token) {
        // An answer that leaves in several writes (an SSE stream: MCP's) must not wait on
        // Nagle's algorithm for the client's delayed acknowledgment (40 ms a request).
        use axum::serve::ListenerExt;
        let tcp = tcp.tap_io(|stream| {
            let _ = stream.set_nodelay(true);
        });
        let tcp_auth = crate::http::Auth { store: store.clone(), store_token: Some(Arc::new(token)), required: true };
        let app = crate::http::app(
            state.clone(),
            crate::mcp::router_with(
                state.call.clone(),
                options.mcp_defaults.clone(),
                options.allow_erase,
                stop.clone(),
                mcp_hosts,
                Some(changes.clone()),
            ),
            tcp_auth,
        );
        let stop = stop.clone();
        tasks.spawn(async move { axum::serve(tcp, app).with_graceful_shutdown(stop.cancelled_owned()).await });
    }
    eprintln!(
        "memledger serve: serving {} on {}{}",
        options.dir.display(),
        socket.display(),
        http_addr.map(|a| format!(" and http://{a}")).unwrap_or_default()
    );
    // Stop on a signal, or once idle long enough.
    {
        let stop = stop.clone();
        let idle = options.idle_exit;
        tokio::spawn(async move {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            let tick = idle.map_or(Duration::from_secs(3600), |d| {
                (d / 10).clamp(Duration::from_millis(50), Duration::from_secs(1))
            });
            loop {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => break,
                    _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => break,
                    _ = tokio::time::sleep(tick) => {
                        if let Some(idle) = idle && activity.idle_for() >= idle {
                            eprintln!("memledger serve: idle for {}s, exiting", idle.as_secs());
                            break;
                        }
                    }
                }
            }
            stop.cancel();
        });
    }
    let mut result = Ok(());
    while let Some(done) = tasks.join_next().await {
        if let Ok(Err(e)) = done {
            result = Err(ServeError::Io(e));
            stop.cancel();
        }
    }
    result
}

/// Bind the socket under a name nobody knows, make it the user's alone, then move it into place:
/// no other user can connect in between. A socket left by a server that died is replaced (the
/// caller holds the one-server lock, so it is not a live server's).
fn bind_unix(socket: &Path) -> Result<tokio::net::UnixListener, ServeError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = socket.parent().unwrap_or(Path::new("."));
    let suffix: u32 = rand::random();
    let tmp = dir.join(format!(".s.{suffix:08x}"));
    let listener = tokio::net::UnixListener::bind(&tmp)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    std::fs::rename(&tmp, socket)?;
    Ok(listener)
}
