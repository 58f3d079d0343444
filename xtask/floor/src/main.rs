//! The parse floor of `cargo xtask bench`: `floor PATH...` reads every `*.json` file under the
//! paths (a file named directly is read whatever its name), one at a time on one thread, parses
//! each into a `serde_json::Value` with serde_json's default features, and prints how many files,
//! bytes and tools it read. A file that does not parse counts as read.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn main() {
    let mut files = Vec::new();
    for arg in std::env::args_os().skip(1) {
        let path = PathBuf::from(arg);
        if path.is_dir() {
            walk(&path, &mut files);
        } else {
            files.push(path);
        }
    }
    let (mut bytes, mut tools) = (0usize, 0usize);
    for file in &files {
        let data = match std::fs::read(file) {
            Ok(data) => data,
            Err(error) => {
                eprintln!("{}: {error}", file.display());
                std::process::exit(2);
            }
        };
        bytes += data.len();
        if let Ok(value) = serde_json::from_slice::<Value>(&data) {
            tools += tools_in(&value);
        }
    }
    println!("files {} bytes {bytes} tools {tools}", files.len());
}

/// The length of the tools array of the shapes a `tools/list` takes.
fn tools_in(value: &Value) -> usize {
    let tools = match value {
        Value::Array(_) => Some(value),
        _ => value
            .get("tools")
            .or_else(|| value.get("result").and_then(|r| r.get("tools"))),
    };
    tools.and_then(Value::as_array).map_or(0, Vec::len)
}

/// Every `*.json` file under `dir`, in name order.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
}
