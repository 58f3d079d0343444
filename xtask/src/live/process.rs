//! Running external commands under a time limit, capturing their output, and timed steps.

use std::fmt::Write as _;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How many trailing lines of a failed command's output a message shows.
const TAIL_LINES: usize = 20;

/// Runs one step, printing its name, outcome and duration.
pub fn timed<T>(step: &str, body: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    println!("--> {step}");
    let started = Instant::now();
    let result = body();
    let seconds = started.elapsed().as_secs_f64();
    match &result {
        Ok(_) => println!("    ok ({seconds:.1} s)"),
        Err(_) => println!("    FAILED ({seconds:.1} s)"),
    }
    result
}

/// What a finished command printed.
pub struct Output {
    /// How it ended.
    pub status: ExitStatus,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Output {
    /// A failure message with the exit status and the last lines of both streams.
    pub fn failure(&self, what: &str) -> String {
        let mut message = format!("{what}: exited with {}", self.status);
        for (stream, text) in [("stderr", &self.stderr), ("stdout", &self.stdout)] {
            if !text.trim().is_empty() {
                let _ = write!(message, "\n  last {stream} lines:\n{}", tail(text));
            }
        }
        message
    }
}

pub(super) fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    lines[start..]
        .iter()
        .map(|line| format!("    | {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `command` with no stdin, capturing both streams; when it outlives `limit` it is killed
/// with its whole process group.
pub fn run(command: Command, limit: Duration, what: &str) -> Result<Output, String> {
    run_in(command, limit, what, true)
}

/// Like [`run`], with the process group optional: a build keeps the terminal's group so that
/// Ctrl-C stops it with this check.
pub fn run_in(
    mut command: Command,
    limit: Duration,
    what: &str,
    own_group: bool,
) -> Result<Output, String> {
    use std::os::unix::process::CommandExt as _;

    let shown = format!("{command:?}");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if own_group {
        // Its own process group lets a timeout end the grandchildren too (npm runs node, the
        // binary runs the server), which would otherwise keep running and hold the pipes open.
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("{what}: cannot run {shown}: {e}"))?;
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                kill(&mut child, own_group);
                return Err(format!("{what}: cannot wait for {shown}: {e}"));
            }
        }
    };
    if status.is_none() {
        // Not reaped yet, so the group id still names only what this command started.
        kill(&mut child, own_group);
    }
    let stdout = collect(&stdout);
    let stderr = collect(&stderr);
    match status {
        Some(status) => Ok(Output {
            status,
            stdout,
            stderr,
        }),
        None => {
            let mut message = format!("{what}: timed out after {} s: {shown}", limit.as_secs());
            if !stderr.trim().is_empty() {
                let _ = write!(message, "\n  last stderr lines:\n{}", tail(&stderr));
            }
            Err(message)
        }
    }
}

/// How long to wait for the rest of the output once a command has ended: a descendant that
/// still holds the pipe must not hang the check.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Reads a stream to its end on a thread, so that a full pipe never blocks the child.
fn reader(stream: Option<impl Read + Send + 'static>) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut stream) = stream {
            // A read error ends the capture; what was read so far still helps the message.
            let _ = stream.read_to_end(&mut bytes);
        }
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    receiver
}

/// The text a [`reader`] captured, or a note when the stream stayed open.
fn collect(receiver: &Receiver<String>) -> String {
    receiver
        .recv_timeout(DRAIN_TIMEOUT)
        .unwrap_or_else(|_| "(output still open after the command ended; not read)".to_owned())
}

/// Kills the child (and its process group when it has its own) and reaps it.
fn kill(child: &mut Child, own_group: bool) {
    if own_group {
        // std has no safe call to signal a process group; `kill` is part of every POSIX system.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}
