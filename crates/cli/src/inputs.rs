//! Which documents a `lint` run reads: files as given, directories walked for `*.json`, `-`;
//! and reading one document, file or stdin, for every command.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::errors::Failure;

pub use mcp_recovery_base::read::{
    ReadError, ReadPolicy, check_links, open_file, read_capped, read_file,
};

static POLICY: OnceLock<ReadPolicy> = OnceLock::new();

/// Sets the policy of this run (the global flags); the first call wins.
pub fn set_policy(policy: ReadPolicy) {
    let _ = POLICY.set(policy);
}

/// The policy of this run.
pub fn policy() -> ReadPolicy {
    POLICY.get().copied().unwrap_or_default()
}

/// The journal reader's failure as the failure of any input.
pub fn journal_read_error(error: mcp_recovery_journal::ReadError) -> ReadError {
    match error {
        mcp_recovery_journal::ReadError::Io(e) => ReadError::Io(e),
        mcp_recovery_journal::ReadError::TooLarge { limit } => ReadError::TooLarge { limit },
    }
}

/// One document to lint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input (`-`).
    Stdin,
    /// A file, named as given or as found under a given directory.
    File(PathBuf),
    /// An entry under a given directory that could not be listed (a subdirectory its reader
    /// may not open): reading it fails with why, so the rest of the walk is still linted.
    Unlisted(PathBuf, std::io::ErrorKind, String),
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
            Self::Unlisted(..) => Err(self.unlisted()),
        };
        result.map_err(|source| self.failure(source))
    }

    /// Opens the document for reading a line at a time, under the run's policy as
    /// [`Input::read`] applies it; the caller caps the bytes it reads at `policy().max_bytes`.
    pub fn open(&self) -> Result<Box<dyn std::io::BufRead>, Failure> {
        match self {
            Self::Stdin => Ok(Box::new(std::io::stdin().lock())),
            Self::File(path) => open_file(path, Path::new("."), policy())
                .map(|(file, _)| {
                    Box::new(std::io::BufReader::new(file)) as Box<dyn std::io::BufRead>
                })
                .map_err(|source| self.failure(source)),
            Self::Unlisted(..) => Err(self.failure(self.unlisted())),
        }
    }

    fn unlisted(&self) -> ReadError {
        let (kind, why) = match self {
            Self::Unlisted(_, kind, why) => (*kind, why.as_str()),
            _ => (std::io::ErrorKind::Other, ""),
        };
        ReadError::Io(std::io::Error::new(kind, why.to_owned()))
    }

    /// The failure of reading this document.
    pub fn failure(&self, source: ReadError) -> Failure {
        Failure::Read {
            path: self.display(),
            source,
        }
    }

    /// The name shown in output, made inert: the path as given, `-` for stdin.
    pub fn display(&self) -> String {
        match self {
            Self::Stdin => "-".to_owned(),
            Self::File(path) | Self::Unlisted(path, ..) => {
                mcp_recovery_base::text::escape_controls(&path.display().to_string()).into_owned()
            }
        }
    }
}

/// Reads and parses the JSON document at `path` (`-` for stdin), naming the file and position
/// on failure.
pub fn read_json(path: &Path) -> Result<Value, Failure> {
    let input = Input::named(path);
    let bytes = input.read()?;
    let invalid = |e| Failure::Usage(format!("{}: not valid JSON: {e}", input.display()));
    let text = std::str::from_utf8(&bytes).map_err(|_| invalid("the text is not UTF-8".into()))?;
    let (value, repeated) = mcp_recovery_model::json::from_str_noting_repeats(text)
        .map_err(|e| invalid(e.to_string()))?;
    if repeated {
        // A reader sees the first of two members of one name, this parser takes the last.
        let (pointer, why) = mcp_recovery_validator::repeated_member(&bytes).unwrap_or_default();
        return Err(Failure::Usage(format!(
            "{} at {pointer}: {why} (R007)",
            input.display()
        )));
    }
    Ok(value)
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
            walk(path, &mut inputs);
        } else {
            // Named files are linted whatever their extension or ignore status; a missing one
            // fails when read.
            inputs.push(Input::File(path.clone()));
        }
    }
    Ok(inputs)
}

/// Adds the documents under `dir`, found by the walk `census DIR` uses too
/// ([`mcp_recovery_base::walk`]), then each entry that could not be listed, which fails when
/// read.
fn walk(dir: &Path, inputs: &mut Vec<Input>) {
    let walk = mcp_recovery_base::walk::json_documents(dir);
    inputs.extend(walk.documents.into_iter().map(Input::File));
    inputs.extend(walk.errors.into_iter().map(|error| {
        let kind = error
            .source
            .io_error()
            .map_or(std::io::ErrorKind::Other, std::io::Error::kind);
        let why = match error.source.io_error() {
            Some(io) => io.to_string(),
            None => error.source.to_string(),
        };
        Input::Unlisted(error.path.unwrap_or_else(|| dir.to_owned()), kind, why)
    }));
}
