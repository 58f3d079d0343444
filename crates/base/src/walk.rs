//! The one directory walk behind `lint DIR` and `census DIR`, so both read the same documents.
//!
//! The rule: a regular file whose extension is `json` in any case (`a.json`, `B.JSON`) is a
//! document. Hidden entries (a name starting with `.`) are skipped with everything below them;
//! `.gitignore` and `.ignore` files are honoured also outside a git checkout, while a user's
//! global excludes are not (they would make one machine lint differently from another).
//! Symbolic links are not followed: a link inside the tree, to a file or a directory, is skipped.
//! Documents come in byte order of their paths.
//!
//! The `ignore` crate (ripgrep's walker) implements gitignore semantics in full — negations,
//! anchoring, nested files, `.git/info/exclude` — which a hand-written filter would get subtly
//! wrong.

use std::path::{Path, PathBuf};

/// An entry of the tree that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub struct WalkError {
    /// The entry, when the walker knows it.
    pub path: Option<PathBuf>,
    /// Why.
    #[source]
    pub source: ignore::Error,
}

/// What the walk of one directory found: the documents, and the entries it could not read.
#[derive(Debug, Default)]
pub struct Walk {
    /// The documents, sorted.
    pub documents: Vec<PathBuf>,
    /// The entries that could not be read, in the order met.
    pub errors: Vec<WalkError>,
}

/// Whether `path` names a document by its extension (`json`, any case).
pub fn is_json_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// Walks `dir` for documents by the rule of this module.
pub fn json_documents(dir: &Path) -> Walk {
    let walker = ignore::WalkBuilder::new(dir)
        .standard_filters(true)
        .follow_links(false)
        // Honour .gitignore also outside a git checkout (an unpacked release, a temp dir).
        .require_git(false)
        // A user's global excludes must not change what CI lints.
        .git_global(false)
        .build();
    let mut walk = Walk::default();
    for entry in walker {
        match entry {
            Ok(entry) => {
                let is_file = entry.file_type().is_some_and(|t| t.is_file());
                if is_file && is_json_name(entry.path()) {
                    walk.documents.push(entry.into_path());
                }
            }
            Err(source) => walk.errors.push(WalkError {
                path: error_path(&source).map(Path::to_path_buf),
                source,
            }),
        }
    }
    walk.documents.sort();
    walk
}

/// The path an `ignore` error is about, looking through its wrappers.
fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}
