//! One MCP client session through `mcp-recovery proxy`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{Value, json};

use super::case::{ANSWER_TIMEOUT, Case};

/// One MCP client session through `mcp-recovery proxy`, one request at a time.
pub(super) struct Session {
    label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next: u64,
}

impl Session {
    /// Starts the proxy with `flags` in front of the case's server and initializes.
    pub(super) fn start(binary: &Path, flags: &[String], case: &Case) -> Result<Session, String> {
        use std::os::unix::process::CommandExt as _;
        let mut command = Command::new(binary);
        command
            .arg("proxy")
            .args(flags)
            .arg("--")
            .args(&case.server)
            .envs(case.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        let mut child = command
            .spawn()
            .map_err(|e| format!("{}: cannot start the proxy: {e}", case.label))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut session = Session {
            label: case.label.clone(),
            stdin: child.stdin.take(),
            child,
            lines,
            next: 0,
        };
        session.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "mcp-recovery-catalog", "version": "1"}}),
        )?;
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(session)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("{}: writing to the proxy: {e}", self.label))
    }

    /// Sends one request and waits for its answer (the whole message).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let line = self.lines.recv_timeout(ANSWER_TIMEOUT).map_err(|_| {
                format!(
                    "{}: no answer to {method} within {ANSWER_TIMEOUT:?}",
                    self.label
                )
            })?;
            let message: Value = serde_json::from_str(&line).map_err(|e| {
                format!(
                    "{}: the proxy wrote a line that is not JSON: {e}",
                    self.label
                )
            })?;
            if message["id"] == id && message.get("method").is_none() {
                return Ok(message);
            }
        }
    }

    pub(super) fn call(&mut self, name: &str, arguments: &Value) -> Result<Value, String> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Closes stdin and waits for the proxy to end (killing it after the answer timeout).
    pub(super) fn finish(mut self) -> Result<(), String> {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + ANSWER_TIMEOUT;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!("{}: the proxy exited with {status}", self.label));
                }
                Ok(None) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(format!("{}: the proxy did not end", self.label));
                }
            }
        }
    }
}
