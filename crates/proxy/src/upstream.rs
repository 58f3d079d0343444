//! The real server behind the proxy: a child process speaking newline-delimited JSON-RPC
//! ([`StdioUpstream`]) or a Streamable HTTP endpoint ([`HttpUpstream`]).

use std::io::{BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_client::{Secrets, group};

use crate::event::{Budget, CLIENT_BYTES, Credit, Event, SERVER_BYTES, read_metered};
pub use crate::http_upstream::HttpUpstream;
use crate::wire::read_bounded_line;

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

    /// The budget the bytes queued for the server are held against, when they are queued (a
    /// child's stdin); the client's reader waits on it.
    pub(crate) fn budget(&self) -> Option<Arc<Budget>> {
        match self {
            Upstream::Stdio(upstream) => Some(upstream.budget()),
            Upstream::Http(_) | Upstream::Scripted(_) => None,
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

/// A server started as a child process; its stderr goes to the proxy's stderr, line by line,
/// secrets replaced and unsafe characters escaped.
///
/// What the session sends it is queued for a thread of its own that writes the child's stdin,
/// so the session never waits on a server that is not reading (it may be blocked writing an
/// answer the session has yet to read); the bytes queued are held against [`Budget`], which
/// the client's reader waits on.
#[derive(Debug)]
pub struct StdioUpstream {
    child: Child,
    /// Ends the child's process group if this process ends without closing it.
    #[cfg(unix)]
    _reaper: Option<group::Reaper>,
    outgoing: Option<Sender<(Vec<u8>, Credit)>>,
    /// Why writing to the child's stdin failed, once it has.
    failed: Arc<Mutex<Option<String>>>,
    budget: Arc<Budget>,
}

impl StdioUpstream {
    /// Starts the server of `launch` (no shell) in its own process group, which ends when this
    /// process ends however it ends ([`group::Reaper`]), its stdout read on a thread into `events`; its stderr is copied line by line, every secret replaced by `***`
    /// and every unsafe character escaped.
    pub fn spawn(
        launch: &Launch,
        secrets: &Secrets,
        events: SyncSender<Event>,
    ) -> std::io::Result<StdioUpstream> {
        StdioUpstream::spawn_withholding(launch, &[], secrets, events)
    }

    /// As [`spawn`](StdioUpstream::spawn), the variables named in `withheld` removed from the
    /// environment the server inherits (the secrets the proxy reads from its own).
    pub fn spawn_withholding(
        launch: &Launch,
        withheld: &[String],
        secrets: &Secrets,
        events: SyncSender<Event>,
    ) -> std::io::Result<StdioUpstream> {
        let mut command = Command::new(&launch.program);
        for name in withheld {
            command.env_remove(name);
        }
        command
            .args(&launch.args)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &launch.cwd {
            command.current_dir(cwd);
        }
        group::isolate(&mut command);
        let mut child = command.spawn()?;
        #[cfg(unix)]
        let reaper = match group::Reaper::watch(&child) {
            Ok(reaper) => Some(reaper),
            // The group is empty: the server has already exited, and its session says so.
            Err(_) if matches!(child.try_wait(), Ok(Some(_))) => None,
            Err(e) => {
                group::kill_group(&child);
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let failed = Arc::new(Mutex::new(None));
        let outgoing = child.stdin.take().map(|stdin| {
            let (sender, queue) = channel();
            let failed = Arc::clone(&failed);
            std::thread::spawn(move || write_queued(stdin, &queue, &failed));
            sender
        });
        if let Some(stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                read_metered(
                    stdout,
                    &events,
                    &Budget::new(SERVER_BYTES),
                    Event::MeteredServer,
                );
            });
        }
        if let Some(stderr) = child.stderr.take() {
            let secrets = secrets.clone();
            std::thread::spawn(move || relay_redacted(stderr, &secrets));
        }
        Ok(StdioUpstream {
            child,
            #[cfg(unix)]
            _reaper: reaper,
            outgoing,
            failed,
            budget: Budget::new(CLIENT_BYTES),
        })
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Queues one message line for the child's stdin (never waits); fails once a write has.
    pub fn send(&mut self, text: &str) -> std::io::Result<()> {
        let closed = || {
            std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the server's stdin is closed",
            )
        };
        if let Some(why) = self
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, why));
        }
        let outgoing = self.outgoing.as_ref().ok_or_else(closed)?;
        let mut line = Vec::with_capacity(text.len() + 1);
        line.extend_from_slice(text.as_bytes());
        line.push(b'\n');
        let credit = self.budget.charge(line.len());
        outgoing.send((line, credit)).map_err(|_| closed())
    }

    /// The budget the bytes queued for the child's stdin are held against.
    pub(crate) fn budget(&self) -> Arc<Budget> {
        Arc::clone(&self.budget)
    }

    /// Closes stdin (once what is queued is written), gives the server `grace` to exit, then
    /// kills its process group.
    pub fn close(&mut self, grace: Duration) {
        self.outgoing = None;
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
        group::kill_group(&self.child);
    }
}

/// Writes each queued line to the child's stdin, in order, giving its bytes back once written;
/// after a failed write the rest are dropped. The child's stdin closes when the queue ends.
fn write_queued(
    mut stdin: ChildStdin,
    queue: &Receiver<(Vec<u8>, Credit)>,
    failed: &Mutex<Option<String>>,
) {
    let mut broken = false;
    for (line, credit) in queue {
        if !broken && let Err(e) = stdin.write_all(&line).and_then(|()| stdin.flush()) {
            broken = true;
            *failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(e.to_string());
        }
        drop(credit);
    }
}

/// Copies the server's stderr to ours one line at a time (each cut at the line limit), secrets
/// replaced and every unsafe character escaped: a server's escape sequences never reach the
/// terminal, where they could rewrite an approval prompt.
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
                let text = text.strip_suffix('\n').unwrap_or(&text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                let shown = format!("{}\n", escape_controls(&secrets.redact(text)));
                if out.write_all(shown.as_bytes()).is_err() {
                    return;
                }
            }
        }
    }
}

impl Drop for StdioUpstream {
    fn drop(&mut self) {
        if self.outgoing.is_some() || matches!(self.child.try_wait(), Ok(None)) {
            self.close(Duration::from_millis(500));
        }
    }
}
