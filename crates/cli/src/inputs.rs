//! Which documents a `lint` run reads: files as given, directories walked for `*.json`, `-`;
//! and reading one document, file or stdin, for every command.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::Failure;

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

static POLICY: OnceLock<ReadPolicy> = OnceLock::new();

/// Sets the policy of this run (the global flags); the first call wins.
pub fn set_policy(policy: ReadPolicy) {
    let _ = POLICY.set(policy);
}

/// The policy of this run.
pub fn policy() -> ReadPolicy {
    POLICY.get().copied().unwrap_or_default()
}

/// Why an input was not read.
#[derive(Debug, thiserror::Error)]
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
fn read_capped(reader: impl Read, limit: u64, hint: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::with_capacity(usize::try_from(hint.min(limit)).unwrap_or(0));
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// Reads the regular file at `path` under the policy: links checked against `root`, FIFOs and
/// devices refused before they are opened, the size capped while reading (files such as those of
/// `/proc` report no size).
pub fn read_file(path: &Path, root: &Path, policy: ReadPolicy) -> Result<Vec<u8>, ReadError> {
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
    let file = std::fs::File::open(path)?;
    read_capped(file, policy.max_bytes, metadata.len())
}

/// One document to lint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input (`-`).
    Stdin,
    /// A file, named as given or as found under a given directory.
    File(PathBuf),
}

impl Input {
    /// The document a command-line path names: `-` is stdin.
    pub fn named(path: &Path) -> Self {
        if path.as_os_str() == "-" {
            Self::Stdin
        } else {
            Self::File(path.to_owned())
        }
    }

    /// Reads the whole document under the run's policy (links checked against the working
    /// directory); the failure names it as shown in output.
    pub fn read(&self) -> Result<Vec<u8>, Failure> {
        let policy = policy();
        let result = match self {
            Self::Stdin => read_capped(std::io::stdin().lock(), policy.max_bytes, 0),
            Self::File(path) => read_file(path, Path::new("."), policy),
        };
        result.map_err(|source| Failure::Read {
            path: self.display(),
            source,
        })
    }

    /// The name shown in output, made inert: the path as given, `-` for stdin.
    pub fn display(&self) -> String {
        match self {
            Self::Stdin => "-".to_owned(),
            Self::File(path) => {
                mcp_recovery_validator::escape_controls(&path.display().to_string()).into_owned()
            }
        }
    }
}

/// A directory that cannot be walked.
#[derive(Debug, thiserror::Error)]
#[error("cannot walk {path}: {source}")]
pub struct WalkError {
    /// The directory as given.
    pub path: String,
    /// Why.
    pub source: mcp_recovery_validator::walk::WalkError,
}

/// Reads and parses the JSON document at `path` (`-` for stdin), naming the file and position
/// on failure.
pub fn read_json(path: &Path) -> Result<Value, Failure> {
    let input = Input::named(path);
    let bytes = input.read()?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Failure::Usage(format!("{}: not valid JSON: {e}", input.display())))
}

/// The failure for a document that is not a `tools/list` document: the file, the pointer of the
/// fault and why.
pub fn not_a_tools_list(path: &Path, error: &mcp_recovery_model::LocateError) -> Failure {
    let at = match error.pointer() {
        "" => String::new(),
        pointer => format!(" at {pointer}"),
    };
    Failure::Usage(format!("{}{at}: {error}", path.display()))
}

/// Expands the paths of the command line, in order; directories in sorted order. A directory
/// reached through a symbolic link out of the working directory is refused like a file.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<Input>, Failure> {
    let mut inputs = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else if path.is_dir() {
            check_links(path, Path::new("."), policy()).map_err(|source| Failure::Read {
                path: Input::File(path.clone()).display(),
                source,
            })?;
            walk(path, &mut inputs)?;
        } else {
            // Named files are linted whatever their extension or ignore status; a missing one
            // fails when read.
            inputs.push(Input::File(path.clone()));
        }
    }
    Ok(inputs)
}

/// Adds the documents under `dir`, found by the walk `census DIR` uses too
/// ([`mcp_recovery_validator::walk`]); the first entry that cannot be read fails the run.
fn walk(dir: &Path, inputs: &mut Vec<Input>) -> Result<(), WalkError> {
    let walk = mcp_recovery_validator::walk::json_documents(dir);
    if let Some(source) = walk.errors.into_iter().next() {
        return Err(WalkError {
            path: dir.display().to_string(),
            source,
        });
    }
    inputs.extend(walk.documents.into_iter().map(Input::File));
    Ok(())
}
