//! The stdio transport: a child process speaking newline-delimited JSON-RPC.
//!
//! Three threads keep the caller's thread free to enforce timeouts: one writes requests to the
//! child's stdin (a child that never reads cannot block the caller), one reads stdout lines into
//! a channel, one keeps the last lines of stderr. Both channels are bounded: a server that floods
//! stdout waits for the client to read, and replies to a server that never reads its stdin are
//! dropped once [`STDIN_QUEUE`] messages wait.
//!
//! The child runs in a process group of its own; closing the connection ends the whole group, so
//! a grandchild holding stdout open cannot outlive the client. While waiting, the client also
//! watches the child itself: when it exits, its exit status is reported at once even if a
//! grandchild keeps the pipe open.

use std::collections::VecDeque;
use std::io::{BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::ClientError;
use crate::group;
use crate::jsonrpc::{Incoming, classify};
use crate::lines::{LineRead, Overflow, read_line};
use crate::options::Options;
use mcp_recovery_base::text::{excerpt, excerpt_bytes};

use crate::text::{EXCERPT_CHARS, StderrTail};

/// Longest stderr line kept, in bytes; the rest of a longer line is dropped.
const STDERR_LINE_BYTES: usize = 4096;

/// How often the closing code polls a child that is shutting down.
const POLL: Duration = Duration::from_millis(10);

/// How often a waiting request checks whether the child itself has exited.
const EXIT_POLL: Duration = Duration::from_millis(50);

/// How long the client keeps reading stdout after the child exited, for lines already written.
const DRAIN: Duration = Duration::from_millis(200);

/// Stdout lines read ahead of the client (each at most `max_message_bytes`).
const STDOUT_QUEUE: usize = 4;

/// Messages waiting for a child that does not read its stdin.
const STDIN_QUEUE: usize = 16;

enum StdoutEvent {
    Line(Vec<u8>),
    TooLong,
    Eof,
    Failed(String),
}

type Ring = Arc<Mutex<VecDeque<String>>>;

/// A running server process and the threads that talk to it.
pub(crate) struct StdioTransport {
    child: Child,
    stdin: Option<SyncSender<Vec<u8>>>,
    stdout: Receiver<StdoutEvent>,
    stderr: Ring,
    stderr_done: Receiver<()>,
    options: Options,
    /// Set once stdout has failed for good, so later requests fail the same way at once.
    broken: Option<ClientError>,
    line_number: u64,
    /// Bytes read from stdout so far, against `max_total_bytes`.
    received: u64,
    /// When the whole operation must be over.
    deadline: Instant,
    closed: bool,
}

impl StdioTransport {
    /// Starts `program` with `args`, directly (no shell), with piped stdio, the extra
    /// environment and working directory of `options`, in a process group of its own.
    pub(crate) fn spawn(
        program: &str,
        args: &[String],
        options: &Options,
        deadline: Instant,
    ) -> Result<StdioTransport, ClientError> {
        let spawn_error = |source| ClientError::Spawn {
            program: program.to_string(),
            source,
        };
        let mut command = Command::new(program);
        for name in &options.withheld {
            command.env_remove(name);
        }
        command
            .args(args)
            .envs(options.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &options.cwd {
            if !cwd.is_dir() {
                return Err(spawn_error(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("the working directory {} does not exist", cwd.display()),
                )));
            }
            command.current_dir(cwd);
        }
        group::isolate(&mut command);
        let mut child = command.spawn().map_err(spawn_error)?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            // Unreachable with piped stdio, but never leave a child behind.
            group::kill_group(&child);
            let _ = child.kill();
            let _ = child.wait();
            return Err(spawn_error(std::io::Error::other(
                "the child's pipes are missing",
            )));
        };
        let ring: Ring = Arc::new(Mutex::new(VecDeque::new()));
        let (stderr_done_tx, stderr_done) = mpsc::channel();
        let keep = options.stderr_lines;
        let ring_writer = Arc::clone(&ring);
        let threads = (|| -> std::io::Result<(SyncSender<Vec<u8>>, Receiver<StdoutEvent>)> {
            thread::Builder::new()
                .name("mcp-stderr".into())
                .spawn(move || {
                    collect_stderr(stderr, &ring_writer, keep);
                    let _ = stderr_done_tx.send(());
                })?;
            let (line_tx, line_rx) = mpsc::sync_channel(STDOUT_QUEUE);
            let cap = usize::try_from(options.max_message_bytes).unwrap_or(usize::MAX);
            thread::Builder::new()
                .name("mcp-stdout".into())
                .spawn(move || read_stdout(stdout, &line_tx, cap))?;
            let (write_tx, write_rx) = mpsc::sync_channel(STDIN_QUEUE);
            thread::Builder::new()
                .name("mcp-stdin".into())
                .spawn(move || write_stdin(stdin, &write_rx))?;
            Ok((write_tx, line_rx))
        })();
        let (stdin, stdout) = match threads {
            Ok(channels) => channels,
            Err(source) => {
                group::kill_group(&child);
                let _ = child.kill();
                let _ = child.wait();
                return Err(spawn_error(source));
            }
        };
        Ok(StdioTransport {
            child,
            stdin: Some(stdin),
            stdout,
            stderr: ring,
            stderr_done,
            options: options.clone(),
            broken: None,
            line_number: 0,
            received: 0,
            deadline,
            closed: false,
        })
    }

    /// Queues a message for the child's stdin. `false` when the queue is full: the child has
    /// not been reading its stdin. A closed pipe is not reported here: reading stdout tells why.
    pub(crate) fn send(&mut self, message: &Value) -> bool {
        let mut bytes = message.to_string().into_bytes();
        bytes.push(b'\n');
        match &self.stdin {
            Some(stdin) => !matches!(stdin.try_send(bytes), Err(TrySendError::Full(_))),
            None => true,
        }
    }

    /// Sends a request and waits for the message that answers `id`.
    pub(crate) fn round_trip(
        &mut self,
        message: &Value,
        id: &Value,
        method: &str,
    ) -> Result<Value, ClientError> {
        if let Some(error) = &self.broken {
            return Err(self.repeat(error, method));
        }
        if !self.send(message) {
            let detail = format!(
                "the server has not read its stdin: {STDIN_QUEUE} messages are still waiting"
            );
            return Err(self.protocol(method, detail));
        }
        let result = self.wait_for(id, method);
        if let Err(error @ (ClientError::Exited { .. } | ClientError::TooLarge { .. })) = &result {
            self.broken = Some(self.repeat(error, method));
        }
        result
    }

    fn wait_for(&mut self, id: &Value, method: &str) -> Result<Value, ClientError> {
        let request_deadline = Instant::now() + self.options.timeout;
        let deadline = request_deadline.min(self.deadline);
        let mut exited_at: Option<Instant> = None;
        loop {
            let now = Instant::now();
            if exited_at.is_some_and(|at| now >= at + DRAIN) {
                return Err(self.exited(method));
            }
            if now >= deadline {
                return Err(self.out_of_time(method, request_deadline));
            }
            let slice = deadline.saturating_duration_since(now).min(EXIT_POLL);
            let event = match self.stdout.recv_timeout(slice) {
                Ok(event) => event,
                Err(RecvTimeoutError::Timeout) => {
                    // A child that exited while a grandchild holds stdout never gives EOF.
                    if exited_at.is_none() && matches!(self.child.try_wait(), Ok(Some(_))) {
                        exited_at = Some(Instant::now());
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => StdoutEvent::Eof,
            };
            let line = match event {
                StdoutEvent::Line(line) => line,
                StdoutEvent::TooLong => {
                    return Err(ClientError::TooLarge {
                        method: method.to_string(),
                        what: format!("line {} of the server's stdout", self.line_number + 1),
                        limit: self.options.max_message_bytes,
                        stderr: self.stderr_tail(),
                    });
                }
                StdoutEvent::Eof => return Err(self.exited(method)),
                StdoutEvent::Failed(reason) => {
                    return Err(self.protocol(method, format!("reading stdout failed: {reason}")));
                }
            };
            self.line_number += 1;
            self.received = self.received.saturating_add(line.len() as u64 + 1);
            if self.received > self.options.max_total_bytes {
                return Err(ClientError::TooLarge {
                    method: method.to_string(),
                    what: "everything the server wrote to stdout".into(),
                    limit: self.options.max_total_bytes,
                    stderr: self.stderr_tail(),
                });
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let message: Value = match crate::jsonrpc::parse(&line) {
                Some(Ok(message)) => message,
                Some(Err(why)) => {
                    let detail = format!("line {} of stdout: {why}", self.line_number);
                    return Err(self.protocol(method, detail));
                }
                None => {
                    let detail = format!(
                        "line {} of stdout is not JSON: `{}` (a stdio server must write only \
                         JSON-RPC messages to stdout; logs belong on stderr)",
                        self.line_number,
                        excerpt_bytes(&line, EXCERPT_CHARS)
                    );
                    return Err(self.protocol(method, detail));
                }
            };
            match classify(message, id) {
                Incoming::Answer(answer) => return Ok(answer),
                Incoming::ServerRequest(reply) => {
                    // A server that never reads its stdin loses replies, not client memory.
                    let _ = self.send(&reply);
                }
                Incoming::Ignore => {}
                Incoming::Invalid(why) => {
                    let detail = format!(
                        "line {} of stdout is not a JSON-RPC message ({why}): `{}`",
                        self.line_number,
                        excerpt_bytes(&line, EXCERPT_CHARS)
                    );
                    return Err(self.protocol(method, detail));
                }
            }
        }
    }

    /// The error when time ran out: the request's own limit or the whole operation's.
    fn out_of_time(&self, method: &str, request_deadline: Instant) -> ClientError {
        if self.deadline < request_deadline {
            ClientError::DeadlineExceeded {
                method: method.to_string(),
                total: self.options.total_timeout,
                stderr: self.stderr_tail(),
            }
        } else {
            ClientError::Timeout {
                method: method.to_string(),
                timeout: self.options.timeout,
                stderr: self.stderr_tail(),
            }
        }
    }

    fn protocol(&self, method: &str, detail: String) -> ClientError {
        ClientError::Protocol {
            method: method.to_string(),
            detail,
            stderr: self.stderr_tail(),
        }
    }

    /// The error for a closed stdout: waits briefly for the exit status and the last stderr.
    fn exited(&mut self, method: &str) -> ClientError {
        let deadline = Instant::now() + self.options.shutdown_grace;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if Instant::now() < deadline => thread::sleep(POLL),
                Ok(None) => break "it closed its stdout but is still running".to_string(),
                Err(e) => break format!("status unknown: {e}"),
            }
        };
        // What the server itself started may hold stderr open too: end it, then read the rest.
        group::kill_group(&self.child);
        let _ = self
            .stderr_done
            .recv_timeout(self.options.shutdown_grace.min(Duration::from_millis(500)));
        ClientError::Exited {
            method: method.to_string(),
            status,
            stderr: self.stderr_tail(),
        }
    }

    /// The same failure again, for a later request on a connection that cannot recover.
    fn repeat(&self, error: &ClientError, method: &str) -> ClientError {
        match error {
            ClientError::Exited { status, stderr, .. } => ClientError::Exited {
                method: method.to_string(),
                status: status.clone(),
                stderr: stderr.clone(),
            },
            other => ClientError::Protocol {
                method: method.to_string(),
                detail: format!("the connection is unusable after an earlier error: {other}"),
                stderr: StderrTail::default(),
            },
        }
    }

    /// The last lines of the child's stderr.
    pub(crate) fn stderr_tail(&self) -> StderrTail {
        let ring = self
            .stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        StderrTail(ring.iter().cloned().collect())
    }

    /// Closes stdin, gives the child `shutdown_grace` to exit, then kills its whole process
    /// group (whatever the child started and left behind goes too). Idempotent.
    pub(crate) fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        // Dropping the sender ends the writer thread, which drops the pipe: the child sees EOF.
        self.stdin = None;
        let deadline = Instant::now() + self.options.shutdown_grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => thread::sleep(POLL),
                _ => break,
            }
        }
        group::kill_group(&self.child);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Changes how long each later request may wait.
    pub(crate) fn set_timeout(&mut self, timeout: Duration) {
        self.options.timeout = timeout;
    }

    /// The child's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.close();
    }
}

fn write_stdin(mut stdin: ChildStdin, messages: &Receiver<Vec<u8>>) {
    while let Ok(bytes) = messages.recv() {
        if stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return;
        }
    }
}

fn read_stdout(stdout: impl Read, lines: &SyncSender<StdoutEvent>, cap: usize) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut buf = Vec::new();
    loop {
        let event = match read_line(&mut reader, &mut buf, cap, Overflow::Stop) {
            Ok(LineRead::Line { .. }) => StdoutEvent::Line(std::mem::take(&mut buf)),
            Ok(LineRead::TooLong) => StdoutEvent::TooLong,
            Ok(LineRead::Eof) => StdoutEvent::Eof,
            Err(e) => StdoutEvent::Failed(e.to_string()),
        };
        let last = !matches!(event, StdoutEvent::Line(_));
        if lines.send(event).is_err() || last {
            return;
        }
    }
}

fn collect_stderr(stderr: impl Read, ring: &Ring, keep: usize) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    while let Ok(LineRead::Line { truncated }) =
        read_line(&mut reader, &mut buf, STDERR_LINE_BYTES, Overflow::Discard)
    {
        let mut line = excerpt(&String::from_utf8_lossy(&buf), STDERR_LINE_BYTES);
        if truncated {
            line.push('…');
        }
        let mut ring = ring
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if keep == 0 {
            continue;
        }
        if ring.len() == keep {
            ring.pop_front();
        }
        ring.push_back(line);
    }
}
