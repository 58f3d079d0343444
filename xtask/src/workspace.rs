//! Where the workspace and the shared data beside it are, temporary directories, and reading
//! JSON files.

use std::path::{Path, PathBuf};

/// The workspace root: the parent of this crate's directory.
pub fn repo_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}

/// Reads and parses a JSON file, naming the file in the error.
pub fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

/// `../shared/data/<sub>` beside the repository (`sub` may be empty), or an error saying that
/// `needed_by` needs it.
pub fn data_dir(root: &Path, sub: &str, needed_by: &str) -> Result<PathBuf, String> {
    let mut dir = root.join("../shared/data");
    if !sub.is_empty() {
        dir.push(sub);
    }
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "shared data not found at {}: {needed_by} needs ../shared/data beside the repository",
            dir.display()
        ))
    }
}

/// A new directory under the system temporary directory whose name starts with `prefix`,
/// removed when the returned value is dropped.
pub fn temp_dir(prefix: &str) -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix(&format!("{prefix}-"))
        .tempdir()
        .map_err(|e| {
            format!(
                "step `setup`: cannot create a temporary directory in {}: {e}",
                std::env::temp_dir().display()
            )
        })
}

/// What `cargo metadata --no-deps` reports about the workspace's own packages.
pub fn cargo_metadata(root: &Path) -> Result<serde_json::Value, String> {
    let output =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
            .current_dir(root)
            .args([
                "metadata",
                "--format-version",
                "1",
                "--no-deps",
                "--offline",
            ])
            .output()
            .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))
}
