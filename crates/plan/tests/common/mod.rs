//! Reading the language-neutral conformance suite (`spec/conformance/`), shared by the plan and
//! lint conformance tests.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The suite's root directory.
pub fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/conformance")
}

/// The case directories of one kind (`plan`, `lint`), sorted by name.
pub fn cases(kind: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(suite().join(kind))
        .unwrap_or_else(|e| panic!("spec/conformance/{kind}: {e}"))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// A JSON file of the suite; panics naming the file when it is missing or malformed.
pub fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    mcp_recovery_model::json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
