//! The real server behind the proxy: a child process speaking newline-delimited JSON-RPC
//! ([`StdioUpstream`]) or a Streamable HTTP endpoint ([`HttpUpstream`]).

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant};

pub use crate::http_upstream::HttpUpstream;
use crate::session::Event;
use crate::wire::read_lines;

/// The server a session forwards to.
#[derive(Debug)]
pub enum Upstream {
    /// A child process on stdio.
    Stdio(StdioUpstream),
    /// A Streamable HTTP endpoint.
    Http(HttpUpstream),
}

impl Upstream {
    /// Sends one message (its exact text).
    pub fn send(&mut self, text: &str) -> std::io::Result<()> {
        match self {
            Upstream::Stdio(upstream) => upstream.send(text),
            Upstream::Http(upstream) => upstream.send(text),
        }
    }

    /// Ends the connection, giving the server `grace` to finish.
    pub fn close(&mut self, grace: Duration) {
        match self {
            Upstream::Stdio(upstream) => upstream.close(grace),
            Upstream::Http(upstream) => upstream.close(grace),
        }
    }
}

/// A server started as a child process; its stderr is the proxy's stderr.
#[derive(Debug)]
pub struct StdioUpstream {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl StdioUpstream {
    /// Starts `program args` (no shell) in its own process group, its stdout read on a thread
    /// into `events`.
    pub fn spawn(
        program: &str,
        args: &[String],
        events: SyncSender<Event>,
    ) -> std::io::Result<StdioUpstream> {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
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

impl Drop for StdioUpstream {
    fn drop(&mut self) {
        if self.stdin.is_some() || matches!(self.child.try_wait(), Ok(None)) {
            self.close(Duration::from_millis(500));
        }
    }
}
