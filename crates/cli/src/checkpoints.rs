//! Signed journal checkpoints on the command line: `--journal-key` (the writer signs),
//! `--checkpoint-to` (each checkpoint handed to a command), `--key` and `--checkpoints` (the
//! verifier checks signatures and checkpoints kept elsewhere).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_recovery_client::group;

use mcp_recovery_journal::keys::{PublicKey, SecretKey};
use mcp_recovery_journal::{Journal, Verifier, checkpoint};

use crate::Failure;
use crate::inputs;

/// How long a `--checkpoint-to` command may take for one checkpoint before its process group
/// is killed; also how long the checkpoints still queued when the writer ends may take in all.
pub const SHIP_TIMEOUT: Duration = Duration::from_secs(10);

/// Checkpoints waiting for the `--checkpoint-to` command at most; past it a checkpoint is noted
/// on stderr as not handed over.
const SHIP_QUEUE: usize = 256;

/// Signs `journal`'s records with the secret key at `key` from now on, handing each checkpoint
/// to `ship_to` when given, through the [`Shipper`] returned.
pub fn sign_with(
    journal: &mut Journal,
    key: &Path,
    ship_to: Option<&str>,
) -> Result<Option<Shipper>, Failure> {
    let key = SecretKey::read(key).map_err(|e| Failure::Usage(format!("--journal-key: {e}")))?;
    journal.set_key(key);
    let Some(command) = ship_to else {
        return Ok(None);
    };
    let (shipper, sender) = Shipper::start(command.to_owned(), SHIP_TIMEOUT);
    let queue = Arc::clone(&shipper.queue);
    journal.set_checkpoint_sink(Box::new(move |line| {
        // Never waits: the journal's writer holds the journal while it hands a line over.
        lock(&queue).queued += 1;
        if sender.try_send(line.to_owned()).is_err() {
            lock(&queue).queued -= 1;
            not_handed_over(&format!(
                "{SHIP_QUEUE} checkpoints are already waiting for the command"
            ));
        }
    }));
    Ok(Some(shipper))
}

fn not_handed_over(why: &str) {
    eprintln!(
        "mcp-recovery: --checkpoint-to: {}; the checkpoint was not handed over and stays in \
         the journal only",
        mcp_recovery_base::text::escape_controls(why)
    );
}

/// What the worker of a [`Shipper`] and its writer share.
#[derive(Default)]
struct Queue {
    /// Checkpoints handed to the sink and not yet through the command.
    queued: usize,
    /// When the writer ended, the time by which the queue is given up.
    closing: Option<Instant>,
}

fn lock(queue: &(Mutex<Queue>, Condvar)) -> std::sync::MutexGuard<'_, Queue> {
    queue.0.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Hands the journal's checkpoints to a `--checkpoint-to` command off the journal's path: the
/// sink queues each durable checkpoint (bounded, never waiting) for one worker thread that runs
/// the command for each in turn. [`Shipper::finish`] (or dropping it) waits for the queue, at
/// most [`SHIP_TIMEOUT`] in all.
pub struct Shipper {
    queue: Arc<(Mutex<Queue>, Condvar)>,
}

impl Shipper {
    fn start(command: String, timeout: Duration) -> (Shipper, SyncSender<String>) {
        let queue = Arc::new((Mutex::new(Queue::default()), Condvar::new()));
        let (sender, lines) = sync_channel::<String>(SHIP_QUEUE);
        let worker = Arc::clone(&queue);
        std::thread::spawn(move || {
            for line in lines {
                let closing = lock(&worker).closing;
                let deadline = closing.map_or(Instant::now() + timeout, |closing| {
                    closing.min(Instant::now() + timeout)
                });
                let shipped = if Instant::now() < deadline {
                    ship(&command, &line, deadline)
                } else {
                    Err("the writer has ended and the time left for the command ran out".into())
                };
                if let Err(why) = shipped {
                    not_handed_over(&why);
                }
                lock(&worker).queued -= 1;
                worker.1.notify_all();
            }
        });
        (Shipper { queue }, sender)
    }

    /// Waits until every queued checkpoint went through the command, at most [`SHIP_TIMEOUT`]:
    /// the command then running has its group killed and those left are noted on stderr.
    pub fn finish(&self) {
        let deadline = Instant::now() + SHIP_TIMEOUT;
        let mut queue = lock(&self.queue);
        queue.closing.get_or_insert(deadline);
        // The worker gives up each line at the deadline; a moment more lets it say so.
        let limit = deadline + Duration::from_secs(1);
        while queue.queued > 0 {
            let left = limit.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            queue = self
                .queue
                .1
                .wait_timeout(queue, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for Shipper {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Runs `sh -c command` in a process group of its own with `line` and a newline on its stdin,
/// its stdout and stderr on our stderr (our stdout may carry JSON-RPC), until `deadline`, when
/// its whole group is killed.
fn ship(command: &str, line: &str, deadline: Instant) -> Result<(), String> {
    let stderr = || {
        use std::os::fd::AsFd;
        std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_or_else(|_| Stdio::null(), Stdio::from)
    };
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(stderr())
        .stderr(stderr());
    group::isolate(&mut shell);
    let mut child = shell
        .spawn()
        .map_err(|e| format!("the command could not start: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(format!("{line}\n").as_bytes());
    }
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("the command failed ({status})")),
            Ok(None) if Instant::now() >= deadline => {
                group::kill_group(&child);
                let _ = child.kill();
                let _ = child.wait();
                return Err(
                    "the command did not finish in time and its process group was killed".into(),
                );
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait for the command: {e}")),
        }
    }
}

/// The public keys of `--key` files.
pub fn public_keys(paths: &[PathBuf]) -> Result<Vec<PublicKey>, Failure> {
    paths
        .iter()
        .map(|path| PublicKey::read(path).map_err(|e| Failure::Usage(format!("--key: {e}"))))
        .collect()
}

/// `verifier`, checking signatures with `keys` when any are given.
pub fn with_keys(verifier: Verifier, keys: &[PathBuf]) -> Result<Verifier, Failure> {
    if keys.is_empty() {
        return Ok(verifier);
    }
    Ok(verifier.with_keys(public_keys(keys)?))
}

/// `verifier`, also expecting every checkpoint line of every regular file in `dir` (a link to
/// one included; each at most the input size cap; blank lines skipped). A line that is not a
/// sound checkpoint record is an error naming its file and line, and so is a `dir` that keeps
/// no checkpoint.
pub fn with_kept(mut verifier: Verifier, dir: &Path) -> Result<Verifier, Failure> {
    let shown = |path: &Path| {
        mcp_recovery_base::text::escape_controls(&path.display().to_string()).into_owned()
    };
    let unreadable = |path: &Path, e: std::io::Error| {
        Failure::Usage(format!("--checkpoints {}: {e}", shown(path)))
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| unreadable(dir, e))? {
        let path = entry.map_err(|e| unreadable(dir, e))?.path();
        // A link to a regular file counts as one: where it leads is the file kept.
        if std::fs::metadata(&path).is_ok_and(|meta| meta.is_file()) {
            files.push(path);
        }
    }
    files.sort();
    let mut kept = 0;
    let limit = inputs::policy().max_bytes;
    for file in files {
        let mut text = String::new();
        std::fs::File::open(&file)
            .and_then(|f| f.take(limit.saturating_add(1)).read_to_string(&mut text))
            .map_err(|e| unreadable(&file, e))?;
        if text.len() as u64 > limit {
            return Err(Failure::Usage(format!(
                "--checkpoints {}: larger than the limit of {limit} bytes",
                shown(&file)
            )));
        }
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (seq, hash) = checkpoint::kept(line).map_err(|why| {
                Failure::Usage(format!(
                    "--checkpoints {} line {}: {}",
                    shown(&file),
                    index + 1,
                    mcp_recovery_base::text::escape_controls(&why)
                ))
            })?;
            verifier = verifier.expecting_checkpoint(seq, hash, shown(&file));
            kept += 1;
        }
    }
    if kept == 0 {
        return Err(Failure::Usage(format!(
            "--checkpoints {}: no checkpoint is kept there, so nothing could be caught",
            shown(dir)
        )));
    }
    Ok(verifier)
}
