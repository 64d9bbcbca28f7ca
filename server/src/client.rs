//! The client of a running server over its Unix socket: HTTP/1.1 (hyper) on one connection,
//! made for a CLI process that sends one call and exits, so it starts nothing it does not need.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

use crate::api::{CallRequest, Reply, ServerStatus};
use crate::http::{ACTOR_HEADER, REPLY_MEDIA_TYPE};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No server answers on the socket (none runs, or one died and left its socket).
    #[error("no memledger server answers on {0}")]
    NoServer(PathBuf),
    #[error("the memledger server at {0} failed: {1}")]
    Failed(PathBuf, String),
}

/// One connection to a server.
pub struct Client {
    socket: PathBuf,
    send: SendRequest<Full<Bytes>>,
    /// Sent with every request as `Authorization: Bearer`: the principal the calls act as.
    token: Option<String>,
}

impl Client {
    /// Connect to the server whose socket is `socket`.
    pub async fn connect(socket: &Path) -> Result<Client, ClientError> {
        let stream =
            tokio::net::UnixStream::connect(socket).await.map_err(|_| ClientError::NoServer(socket.to_path_buf()))?;
        let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| ClientError::Failed(socket.to_path_buf(), e.to_string()))?;
        tokio::spawn(connection);
        Ok(Client { socket: socket.to_path_buf(), send, token: None })
    }

    /// Make every call as the principal `token` authenticates (none: the store's owner).
    pub fn with_token(mut self, token: Option<String>) -> Client {
        self.token = token;
        self
    }

    fn failed(&self, e: impl std::fmt::Display) -> ClientError {
        ClientError::Failed(self.socket.clone(), e.to_string())
    }

    async fn send(
        &mut self,
        mut request: Request<Full<Bytes>>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, ClientError> {
        if let Some(token) = &self.token {
            let value = hyper::header::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| self.failed("the token holds characters no header may"))?;
            request.headers_mut().insert(hyper::header::AUTHORIZATION, value);
        }
        self.send.ready().await.map_err(|e| self.failed(e))?;
        self.send.send_request(request).await.map_err(|e| self.failed(e))
    }

    async fn body(&self, response: hyper::Response<hyper::body::Incoming>) -> Result<Bytes, ClientError> {
        Ok(response.into_body().collect().await.map_err(|e| self.failed(e))?.to_bytes())
    }

    fn reply(&self, bytes: &[u8]) -> Result<Reply, ClientError> {
        serde_json::from_slice(bytes).map_err(|e| self.failed(format!("an answer that is not a reply: {e}")))
    }

    /// Run a command; its typed answer serialized, and its exit code.
    pub async fn call(&mut self, call: &CallRequest) -> Result<Reply, ClientError> {
        let body = serde_json::to_vec(call).map_err(|e| self.failed(e))?;
        let request = Request::post("/v1/call")
            .header(hyper::header::HOST, "localhost")
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| self.failed(e))?;
        let response = self.send(request).await?;
        if response.status() == hyper::StatusCode::UNAUTHORIZED {
            return Ok(Reply::unauthenticated());
        }
        let bytes = self.body(response).await?;
        self.reply(&bytes)
    }

    /// `import` of an exported stream.
    pub async fn import(
        &mut self,
        stream: Vec<u8>,
        json: bool,
        color: bool,
        actor: &str,
        allow_secret: bool,
    ) -> Result<Reply, ClientError> {
        let path = if allow_secret { "/v1/import?allow_secret=true" } else { "/v1/import" };
        let mut request = Request::post(path)
            .header(hyper::header::HOST, "localhost")
            .header(hyper::header::ACCEPT, REPLY_MEDIA_TYPE)
            .header(hyper::header::CONTENT_TYPE, "application/x-ndjson")
            .header(ACTOR_HEADER, actor);
        if json {
            request = request.header("memledger-json", "1");
        }
        if color {
            request = request.header("memledger-color", "1");
        }
        let request = request.body(Full::new(Bytes::from(stream))).map_err(|e| self.failed(e))?;
        let response = self.send(request).await?;
        if response.status() == hyper::StatusCode::UNAUTHORIZED {
            return Ok(Reply::unauthenticated());
        }
        let bytes = self.body(response).await?;
        self.reply(&bytes)
    }

    /// `export --since`: the stream into `out`, as it arrives.
    pub async fn export(&mut self, since: u64, out: &mut dyn std::io::Write) -> Result<(), ClientError> {
        let request = Request::get(format!("/v1/export?since={since}"))
            .header(hyper::header::HOST, "localhost")
            .body(Full::new(Bytes::new()))
            .map_err(|e| self.failed(e))?;
        let response = self.send(request).await?;
        if !response.status().is_success() {
            let status = response.status();
            let bytes = self.body(response).await?;
            return Err(self.failed(format!("{status}: {}", String::from_utf8_lossy(&bytes))));
        }
        let mut body = response.into_body();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| self.failed(e))?;
            if let Ok(data) = frame.into_data() {
                out.write_all(&data).map_err(|e| self.failed(e))?;
            }
        }
        Ok(())
    }

    /// Who serves, and since when.
    pub async fn status(&mut self) -> Result<ServerStatus, ClientError> {
        let request = Request::get("/v1/status")
            .header(hyper::header::HOST, "localhost")
            .body(Full::new(Bytes::new()))
            .map_err(|e| self.failed(e))?;
        let response = self.send(request).await?;
        let bytes = self.body(response).await?;
        serde_json::from_slice(&bytes).map_err(|e| self.failed(e))
    }
}

/// A runtime for one client in a blocking program: a current-thread runtime, started once.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_io().build()
}
