//! A minimal MCP client over `memledger mcp`'s stdin and stdout: newline-delimited JSON-RPC,
//! for the tests that drive the stdio server without the Python SDK.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{Value, json};

/// A minimal MCP client over the server's stdin and stdout: newline-delimited JSON-RPC.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    pub fn start(dir: &Path, client_name: &str) -> Server {
        Self::start_with(dir, client_name, &[])
    }

    /// [`Server::start`] with more arguments for `memledger mcp` (`--allow-erase`).
    pub fn start_with(dir: &Path, client_name: &str, args: &[&str]) -> Server {
        Self::start_as(dir, client_name, args, None)
    }

    /// [`Server::start_with`], its calls made as the principal `token` authenticates.
    pub fn start_as(dir: &Path, client_name: &str, args: &[&str], token: Option<&str>) -> Server {
        let mut command = super::memledger(dir);
        if let Some(token) = token {
            command.env("MEMLEDGER_TOKEN", token);
        }
        let mut child = command
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server { child, stdin, stdout, next_id: 1 };
        let init = server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": client_name, "version": "1.0"}
            }),
        );
        assert_eq!(init["serverInfo"]["name"], json!("memledger"), "{init}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Send a request and wait for the line that answers it.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the server closed its output while {method} was pending");
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// Call a tool; its JSON answer, taken out of the answer's fence.
    pub fn tool(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{result}"));
        assert_ne!(result["isError"], json!(true), "{name}: {text}");
        super::unfence(text)
    }

    /// Call a tool that must answer with a tool error; its text.
    pub fn tool_error(&mut self, name: &str, arguments: Value) -> String {
        let result = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        assert_eq!(result["isError"], json!(true), "{name} must fail: {result}");
        result["content"][0]["text"].as_str().unwrap().to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Closing stdin ends the session; the server then exits.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
