//! The real server behind the proxy: a child process speaking newline-delimited JSON-RPC
//! ([`StdioUpstream`]) or a Streamable HTTP endpoint ([`HttpUpstream`]).

use std::io::{BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel};
use std::time::{Duration, Instant};

use mcp_recovery_client::Secrets;

use crate::event::Event;
pub use crate::http_upstream::HttpUpstream;
use crate::wire::{read_bounded_line, read_lines};

/// How to start the server: what a command line or a client config entry says.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// The program (looked up in `PATH` when it has no slash).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to its environment.
    pub env: Vec<(String, String)>,
    /// Its working directory (default: the proxy's).
    pub cwd: Option<PathBuf>,
}

/// The server a session forwards to.
#[derive(Debug)]
pub enum Upstream {
    /// A child process on stdio.
    Stdio(StdioUpstream),
    /// A Streamable HTTP endpoint.
    Http(HttpUpstream),
    /// A server played in-process by the caller (tests, fuzzing).
    Scripted(ScriptedUpstream),
}

impl Upstream {
    /// Sends one message (its exact text).
    pub fn send(&mut self, text: &str) -> std::io::Result<()> {
        match self {
            Upstream::Stdio(upstream) => upstream.send(text),
            Upstream::Http(upstream) => upstream.send(text),
            Upstream::Scripted(upstream) => upstream.send(text),
        }
    }

    /// Ends the connection, giving the server `grace` to finish.
    pub fn close(&mut self, grace: Duration) {
        match self {
            Upstream::Stdio(upstream) => upstream.close(grace),
            Upstream::Http(upstream) => upstream.close(grace),
            Upstream::Scripted(upstream) => upstream.close(),
        }
    }
}

/// A server played by the caller: every message the session sends upstream arrives, as its exact
/// text, on the receiver [`ScriptedUpstream::new`] returns; the caller answers by sending
/// [`Event::Server`] lines into the session's events.
#[derive(Debug)]
pub struct ScriptedUpstream {
    sender: Option<Sender<String>>,
}

impl ScriptedUpstream {
    /// The upstream and the receiving end of what the session sends it.
    pub fn new() -> (ScriptedUpstream, Receiver<String>) {
        let (sender, receiver) = channel();
        let upstream = ScriptedUpstream {
            sender: Some(sender),
        };
        (upstream, receiver)
    }

    /// Hands one message to the script; a script that has gone is a closed pipe.
    pub fn send(&mut self, text: &str) -> std::io::Result<()> {
        let gone = || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the script has ended");
        let sender = self.sender.as_ref().ok_or_else(gone)?;
        sender.send(text.to_owned()).map_err(|_| gone())
    }

    /// Closes the connection: the script's receiver ends.
    pub fn close(&mut self) {
        self.sender = None;
    }
}

/// A server started as a child process; its stderr goes to the proxy's stderr.
#[derive(Debug)]
pub struct StdioUpstream {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl StdioUpstream {
    /// Starts the server of `launch` (no shell) in its own process group, its stdout read on a
    /// thread into `events`. With `secrets`, its stderr is copied line by line with every
    /// secret replaced by `***`; without, it is the proxy's own stderr.
    pub fn spawn(
        launch: &Launch,
        secrets: &Secrets,
        events: SyncSender<Event>,
    ) -> std::io::Result<StdioUpstream> {
        let mut command = Command::new(&launch.program);
        command
            .args(&launch.args)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if secrets.is_empty() {
                Stdio::inherit()
            } else {
                Stdio::piped()
            });
        if let Some(cwd) = &launch.cwd {
            command.current_dir(cwd);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let mut child = command.spawn()?;
        let stdin = child.stdin.take();
        if let Some(stdout) = child.stdout.take() {
            std::thread::spawn(move || read_lines(stdout, &events, Event::Server));
        }
        if let Some(stderr) = child.stderr.take() {
            let secrets = secrets.clone();
            std::thread::spawn(move || relay_redacted(stderr, &secrets));
        }
        Ok(StdioUpstream { child, stdin })
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one message line.
    pub fn send(&mut self, text: &str) -> std::io::Result<()> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the server's stdin is closed",
            ));
        };
        let mut line = Vec::with_capacity(text.len() + 1);
        line.extend_from_slice(text.as_bytes());
        line.push(b'\n');
        stdin.write_all(&line)?;
        stdin.flush()
    }

    /// Closes stdin, gives the server `grace` to exit, then kills its process group.
    pub fn close(&mut self, grace: Duration) {
        self.stdin = None;
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                self.kill_group();
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill_group();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn kill_group(&self) {
        // Grandchildren (an `npx` launcher's node, a shell's server) share the group.
        #[cfg(unix)]
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Copies the server's stderr to ours one line at a time (each cut at the line limit), secrets
/// replaced.
fn relay_redacted(stderr: impl Read, secrets: &Secrets) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    let mut out = std::io::stderr();
    loop {
        line.clear();
        match read_bounded_line(&mut reader, &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                if out.write_all(secrets.redact(&text).as_bytes()).is_err() {
                    return;
                }
            }
        }
    }
}

impl Drop for StdioUpstream {
    fn drop(&mut self) {
        if self.stdin.is_some() || matches!(self.child.try_wait(), Ok(None)) {
            self.close(Duration::from_millis(500));
        }
    }
}
