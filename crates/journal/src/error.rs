//! Why a journal cannot be opened or written.

use std::io;

use crate::broken::Broken;

/// Why the journal cannot be opened or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// Reading, writing or syncing the file failed.
    #[error("journal {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// The existing file is longer than the cap given to [`Journal::open`].
    #[error("journal {path}: it is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        path: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// The path names a FIFO, device, socket or directory, which could block or never end.
    #[error("journal {path}: it is not a regular file")]
    NotRegular {
        /// The file.
        path: String,
    },
    /// Another writer holds the journal's lock.
    #[error("journal {path}: another writer holds its lock: {holder}{}", waited_for(*.waited))]
    Locked {
        /// The file.
        path: String,
        /// Who, as its lock file says (pid, command, since when).
        holder: String,
        /// How long this writer waited.
        waited: std::time::Duration,
    },
    /// The record would take the file, with its side files, past the cap every reader and the
    /// next writer enforce.
    #[error(
        "journal {path}: the record would take it and its side files ({path}.d) past the limit \
         of {limit} bytes they share; the record is not written (start a new journal, or give a \
         larger --max-file-size)"
    )]
    Full {
        /// The file.
        path: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// The existing file does not verify, so nothing is appended to it.
    #[error("journal {path}: {broken}; refusing to append (run `mcp-recovery audit verify`)")]
    Broken {
        /// The file.
        path: String,
        /// The first fault.
        broken: Broken,
    },
    /// A journal key was given, and what the file already holds is not all signed by it.
    #[error(
        "journal {path}: {broken}; refusing to append with the journal key {key}, which signs \
         only a journal every record of which a checkpoint of that key signs (check it with \
         `mcp-recovery audit verify --key`, or start a new journal)"
    )]
    NotSigned {
        /// The file.
        path: String,
        /// The key id.
        key: String,
        /// The first record not covered, or the checkpoint that does not verify.
        broken: Broken,
    },
}

fn waited_for(waited: std::time::Duration) -> String {
    if waited.is_zero() {
        String::new()
    } else {
        format!(" (waited {} s)", waited.as_secs_f64())
    }
}
