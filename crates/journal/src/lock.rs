//! One writer per journal, however its path is spelled. On Unix the lock is an exclusive `flock`
//! on the journal file itself, so a relative or absolute path, `..`, a symlink to the file or to
//! a directory on its path and a hard link all meet the same lock. Who holds it is written in
//! the holder file `JOURNAL.lock` beside the journal's canonical path, which the holder keeps
//! locked too, so a second writer can say who, and never names a writer that has let go.
//! Elsewhere (Windows, where a lock on the journal would keep its readers out) the holder
//! file's lock is the writer's lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::JournalError;
use crate::nofollow;
use crate::time::rfc3339_now;

/// The holder file of the journal at `journal`: `JOURNAL.lock` beside the file's canonical
/// path (every symlink, `.` and `..` resolved), so every spelling of a path to the journal but
/// a hard link finds the same one. For a journal not created yet, its name in the canonical
/// directory; `journal` itself when even that does not resolve.
pub fn lock_path(journal: &Path) -> PathBuf {
    let mut name = canonical(journal).into_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// `journal` with every symlink, `.` and `..` resolved.
fn canonical(journal: &Path) -> PathBuf {
    if let Ok(path) = std::fs::canonicalize(journal) {
        return path;
    }
    let (Some(dir), Some(name)) = (journal.parent(), journal.file_name()) else {
        return journal.to_path_buf();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    std::fs::canonicalize(dir).map_or_else(|_| journal.to_path_buf(), |dir| dir.join(name))
}

/// Who holds a journal's lock, and what to do when another writer does.
#[derive(Debug, Clone)]
pub struct Holder {
    /// What the writer is, shown to a second writer (e.g. `mcp-recovery proxy`; no arguments,
    /// which may carry secrets).
    pub command: String,
    /// How long to wait for another writer to let go; zero fails at once.
    pub wait: Duration,
}

impl Default for Holder {
    fn default() -> Holder {
        Holder {
            command: "mcp-recovery".into(),
            wait: Duration::ZERO,
        }
    }
}

/// How long a writer that has the journal's lock tries for its holder file's, which a second
/// writer naming the holder locks for a moment (shared) while it reads it.
const HOLDER_FILE_GRACE: Duration = Duration::from_millis(250);

/// Opens (creating when missing) the journal at `journal` for reading and appending, and takes
/// its lock, at once or within `holder.wait`. Returns the journal and the holder file, which
/// holds the holder's pid, command and start time; the lock is held while both are open.
pub(crate) fn acquire(journal: &Path, holder: &Holder) -> Result<(File, File), JournalError> {
    let shown = journal.display().to_string();
    let file = OpenOptions::new()
        .read(true)
        .create(true)
        .append(true)
        .open(journal)
        .map_err(|source| JournalError::Io {
            path: shown.clone(),
            source,
        })?;
    let path = lock_path(journal);
    let io_error = |source| JournalError::Io {
        path: path.display().to_string(),
        source,
    };
    // A wait past what a clock can count is a wait without end.
    let deadline = Instant::now().checked_add(holder.wait);
    let mut holder_file = loop {
        match take(&file, &path) {
            Ok(Some(holder_file)) => break holder_file,
            Ok(None) if deadline.is_none_or(|deadline| Instant::now() < deadline) => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(None) => {
                return Err(JournalError::Locked {
                    path: shown,
                    holder: describe_holder(&path),
                    waited: holder.wait,
                });
            }
            Err(e) => return Err(io_error(e)),
        }
    };
    let info = serde_json::json!({
        "pid": std::process::id(),
        "command": holder.command,
        "since": rfc3339_now(),
    });
    holder_file.set_len(0).map_err(io_error)?;
    holder_file.rewind().map_err(io_error)?;
    writeln!(holder_file, "{info}").map_err(io_error)?;
    holder_file.sync_data().map_err(io_error)?;
    Ok((file, holder_file))
}

/// One try for the lock of `journal` (Unix) and of its holder file at `path`: the holder file,
/// locked, or `None` when another writer holds either.
fn take(journal: &File, path: &Path) -> io::Result<Option<File>> {
    #[cfg(unix)]
    match journal.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(None),
        Err(TryLockError::Error(e)) => return Err(e),
    }
    #[cfg(not(unix))]
    let _ = journal;
    let let_go = |outcome| {
        #[cfg(unix)]
        journal.unlock()?;
        outcome
    };
    let holder_file = match nofollow::open(
        path,
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    ) {
        Ok(file) => file,
        Err(e) => return let_go(Err(e)),
    };
    let grace = Instant::now() + HOLDER_FILE_GRACE;
    loop {
        match holder_file.try_lock() {
            Ok(()) => return Ok(Some(holder_file)),
            Err(TryLockError::WouldBlock) if Instant::now() < grace => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(TryLockError::WouldBlock) => return let_go(Ok(None)),
            Err(TryLockError::Error(e)) => return let_go(Err(e)),
        }
    }
}

/// The writer holding the journal, as its holder file at `path` describes it (at most 200
/// characters of each field: the file is anybody's; what prints the error escapes it). A
/// holder file nobody holds describes a writer that has let go, and is not read.
fn describe_holder(path: &Path) -> String {
    let unnamed = || {
        "one not named beside this path (a writer by another hard link to the journal, or one \
         that has not said who it is yet)"
            .to_owned()
    };
    let Ok(mut file) = nofollow::open(path, OpenOptions::new().read(true)) else {
        return unnamed();
    };
    match file.try_lock_shared() {
        Err(TryLockError::WouldBlock) => {}
        Ok(()) | Err(TryLockError::Error(_)) => return unnamed(),
    }
    let mut text = String::new();
    let read = (&mut file).take(4096).read_to_string(&mut text);
    let info = match read {
        Ok(_) => serde_json::from_str::<Value>(text.trim()).ok(),
        Err(_) => None,
    };
    let Some(info) = info else {
        return "a writer that has not said who it is yet".into();
    };
    let field = |name: &str| {
        info.get(name)
            .and_then(Value::as_str)
            .map(|text| text.chars().take(200).collect::<String>())
            .unwrap_or_else(|| "?".into())
    };
    let pid = info
        .get("pid")
        .and_then(Value::as_u64)
        .map_or_else(|| "?".into(), |pid| pid.to_string());
    format!("pid {pid} ({}) since {}", field("command"), field("since"))
}
