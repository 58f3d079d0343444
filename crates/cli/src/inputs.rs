//! Which documents a `lint` run reads: files as given, directories walked for `*.json`, `-`;
//! and reading one document, file or stdin, for every command.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::Failure;

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

    /// Reads the whole document; the failure names it as shown in output.
    pub fn read(&self) -> Result<Vec<u8>, Failure> {
        let result = match self {
            Self::Stdin => {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .lock()
                    .read_to_end(&mut bytes)
                    .map(|_| bytes)
            }
            Self::File(path) => std::fs::read(path),
        };
        result.map_err(|source| Failure::Read {
            path: self.display(),
            source,
        })
    }

    /// The name shown in output: the path as given, `-` for stdin.
    pub fn display(&self) -> String {
        match self {
            Self::Stdin => "-".to_owned(),
            Self::File(path) => path.display().to_string(),
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
    pub source: ignore::Error,
}

/// Reads and parses the JSON document at `path` (`-` for stdin), naming the file and position
/// on failure.
pub fn read_json(path: &Path) -> Result<Value, Failure> {
    let bytes = Input::named(path).read()?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Failure::Usage(format!("{}: not valid JSON: {e}", path.display())))
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

/// Expands the paths of the command line, in order; directories in sorted order.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<Input>, WalkError> {
    let mut inputs = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else if path.is_dir() {
            walk(path, &mut inputs)?;
        } else {
            // Named files are linted whatever their extension or ignore status; a missing one
            // fails when read.
            inputs.push(Input::File(path.clone()));
        }
    }
    Ok(inputs)
}

/// Adds the `*.json` files under `dir`, skipping what `.gitignore`/`.ignore` exclude and hidden
/// entries. The `ignore` crate (ripgrep's walker) implements gitignore semantics in full —
/// negations, anchoring, nested files, `.git/info/exclude` — which a hand-written filter would
/// get subtly wrong.
fn walk(dir: &Path, inputs: &mut Vec<Input>) -> Result<(), WalkError> {
    let error = |source| WalkError {
        path: dir.display().to_string(),
        source,
    };
    let walker = ignore::WalkBuilder::new(dir)
        .standard_filters(true)
        // Honour .gitignore also outside a git checkout (an unpacked release, a temp dir).
        .require_git(false)
        // A user's global excludes must not change what CI lints.
        .git_global(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let mut found = Vec::new();
    for entry in walker {
        let entry = entry.map_err(error)?;
        let is_file = entry.file_type().is_some_and(|t| t.is_file());
        let is_json = entry
            .path()
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if is_file && is_json {
            found.push(entry.into_path());
        }
    }
    found.sort();
    inputs.extend(found.into_iter().map(Input::File));
    Ok(())
}
