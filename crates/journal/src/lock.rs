//! One writer per journal: an exclusive lock on `JOURNAL.lock`, held for the writer's lifetime,
//! with who holds it written inside so a second writer can say so.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::JournalError;
use crate::time::rfc3339_now;

/// The lock file of the journal at `journal`: `JOURNAL.lock` beside it.
pub fn lock_path(journal: &Path) -> PathBuf {
    let mut name = journal.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
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

/// Takes the lock of `journal` for as long as the returned file is open: at once, or within
/// `holder.wait`. The holder's pid, command and start time are written into the lock file.
pub(crate) fn acquire(journal: &Path, holder: &Holder) -> Result<File, JournalError> {
    let path = lock_path(journal);
    let io_error = |source| JournalError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io_error)?;
    let deadline = Instant::now() + holder.wait;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(JournalError::Locked {
                    path: journal.display().to_string(),
                    holder: describe_holder(&mut file),
                    waited: holder.wait,
                });
            }
            Err(TryLockError::Error(e)) => return Err(io_error(e)),
        }
    }
    let info = serde_json::json!({
        "pid": std::process::id(),
        "command": holder.command,
        "since": rfc3339_now(),
    });
    file.set_len(0).map_err(io_error)?;
    file.rewind().map_err(io_error)?;
    writeln!(file, "{info}").map_err(io_error)?;
    file.sync_data().map_err(io_error)?;
    Ok(file)
}

/// The holder as its lock file describes it (at most 200 characters of each field: the file
/// is anybody's; what prints the error escapes it).
fn describe_holder(file: &mut File) -> String {
    let mut text = String::new();
    let read = file
        .rewind()
        .and_then(|()| (&mut *file).take(4096).read_to_string(&mut text));
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
