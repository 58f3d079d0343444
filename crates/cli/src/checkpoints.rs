//! Signed journal checkpoints on the command line: `--journal-key` (the writer signs),
//! `--checkpoint-to` (each checkpoint handed to a command), `--key` and `--checkpoints` (the
//! verifier checks signatures and checkpoints kept elsewhere).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_recovery_journal::keys::{PublicKey, SecretKey};
use mcp_recovery_journal::{Journal, Verifier, checkpoint};

use crate::Failure;
use crate::inputs;

/// How long a `--checkpoint-to` command may take for one checkpoint before it is killed.
pub const SHIP_TIMEOUT: Duration = Duration::from_secs(10);

/// Signs `journal`'s records with the secret key at `key` from now on, handing each checkpoint
/// to `ship_to` when given.
pub fn sign_with(journal: &mut Journal, key: &Path, ship_to: Option<&str>) -> Result<(), Failure> {
    let key = SecretKey::read(key).map_err(|e| Failure::Usage(format!("--journal-key: {e}")))?;
    journal.set_key(key);
    if let Some(command) = ship_to {
        let command = command.to_owned();
        journal.set_checkpoint_sink(Box::new(move |line| {
            if let Err(why) = ship(&command, line, SHIP_TIMEOUT) {
                eprintln!(
                    "mcp-recovery: --checkpoint-to: {}; the checkpoint stays in the journal only",
                    mcp_recovery_base::text::escape_controls(&why)
                );
            }
        }));
    }
    Ok(())
}

/// Runs `sh -c command` with `line` and a newline on its stdin, its stdout and stderr on our
/// stderr (our stdout may carry JSON-RPC), for at most `timeout`.
fn ship(command: &str, line: &str, timeout: Duration) -> Result<(), String> {
    let stderr = || {
        use std::os::fd::AsFd;
        std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_or_else(|_| Stdio::null(), Stdio::from)
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(stderr())
        .stderr(stderr())
        .spawn()
        .map_err(|e| format!("the command could not start: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(format!("{line}\n").as_bytes());
    }
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("the command failed ({status})")),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the command did not finish within {} s and was killed",
                    timeout.as_secs()
                ));
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
