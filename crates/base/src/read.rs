//! Reading one input under the limits every command applies: a size cap checked before and while
//! reading, FIFOs and devices refused before they are opened, symbolic links that lead out of the
//! tree refused unless asked. `lint`, `census` and every other reader of a named file share it,
//! so they refuse the same files with the same words.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Default cap on one input: far above any real `tools/list`, far below what would exhaust a CI
/// runner's memory.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// How every input of a run is read: at most `max_bytes` each, and whether a symbolic link may
/// lead out of the tree being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadPolicy {
    /// Largest input read, in bytes.
    pub max_bytes: u64,
    /// Whether symbolic links that resolve outside the tree are followed.
    pub follow_links: bool,
}

impl Default for ReadPolicy {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_FILE_SIZE,
            follow_links: false,
        }
    }
}

/// Why an input was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The operating system said no.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A symbolic link (the file or a directory on its path) leads out of the tree.
    #[error(
        "it is a symbolic link that resolves outside {root} (pass --follow-links to read it anyway)"
    )]
    LinkOutside {
        /// The tree, as shown.
        root: String,
    },
    /// A FIFO, device, socket or directory: reading it could block forever or never end.
    #[error("it is not a regular file but {kind} (pipe it to `-` to read it as standard input)")]
    NotRegular {
        /// What it is.
        kind: &'static str,
    },
    /// Over the size cap.
    #[error("it is larger than the limit of {limit} bytes (raise it with --max-file-size)")]
    TooLarge {
        /// The cap in bytes.
        limit: u64,
    },
}

/// What a non-regular file is, in words.
fn kind_of(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// Whether `path` as given, or a directory on it, is a symbolic link.
fn involves_link(path: &Path) -> bool {
    let mut prefix = PathBuf::new();
    path.components().any(|component| {
        prefix.push(component);
        matches!(component, std::path::Component::Normal(_))
            && std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink())
    })
}

/// Refuses `path` when it goes through a symbolic link that resolves outside `root` (unless the
/// policy follows links).
pub fn check_links(path: &Path, root: &Path, policy: ReadPolicy) -> Result<(), ReadError> {
    if policy.follow_links || !involves_link(path) {
        return Ok(());
    }
    let target = std::fs::canonicalize(path)?;
    let root = std::fs::canonicalize(root)?;
    if target.starts_with(&root) {
        Ok(())
    } else {
        Err(ReadError::LinkOutside {
            root: root.display().to_string(),
        })
    }
}

/// Reads at most `limit` bytes from `reader`; more is an error, never a larger allocation.
pub fn read_capped(reader: impl Read, limit: u64, hint: u64) -> Result<Vec<u8>, ReadError> {
    read_up_to(reader, limit, hint)?.ok_or(ReadError::TooLarge { limit })
}

/// Everything `reader` holds when that is at most `limit` bytes, `None` when it holds more
/// (having read one byte past the limit, never more); `hint` is the size expected. Every bounded
/// read of a file, a body or a stream goes through it.
pub fn read_up_to(reader: impl Read, limit: u64, hint: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::with_capacity(usize::try_from(hint.min(limit)).unwrap_or(0));
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// Opens the regular file at `path` under the policy: links checked against `root`, FIFOs and
/// devices refused before they are opened, a size over the cap refused. Gives the file and the
/// size it reports (files such as those of `/proc` report none, so readers cap as they read).
pub fn open_file(
    path: &Path,
    root: &Path,
    policy: ReadPolicy,
) -> Result<(std::fs::File, u64), ReadError> {
    check_links(path, root, policy)?;
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_file() {
        return Err(ReadError::NotRegular {
            kind: kind_of(metadata.file_type()),
        });
    }
    if metadata.len() > policy.max_bytes {
        return Err(ReadError::TooLarge {
            limit: policy.max_bytes,
        });
    }
    Ok((std::fs::File::open(path)?, metadata.len()))
}

/// Reads the regular file at `path` under the policy ([`open_file`]), capping the size while
/// reading.
pub fn read_file(path: &Path, root: &Path, policy: ReadPolicy) -> Result<Vec<u8>, ReadError> {
    let (file, size) = open_file(path, root, policy)?;
    read_capped(file, policy.max_bytes, size)
}
