//! `schema`: list, print one by file or short name, write all to a directory.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{code, run_in};
use serde_json::Value;

#[test]
fn lists_prints_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let schemas = mcp_recovery_schema::schemas();
    assert!(!schemas.is_empty());

    let output = run_in(dir.path(), &["schema"]);
    assert_eq!(code(&output), 0);
    let listed: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let names: Vec<&str> = schemas.iter().map(|(name, _)| *name).collect();
    assert_eq!(listed, names);

    for (name, value) in &schemas {
        let short = name.trim_end_matches(".json").trim_end_matches(".schema");
        for key in [*name, short] {
            let output = run_in(dir.path(), &["schema", key]);
            assert_eq!(code(&output), 0, "{key}");
            let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(&printed, value, "{key}");
        }
    }

    let output = run_in(dir.path(), &["schema", "--out", "out/schemas"]);
    assert_eq!(code(&output), 0);
    for (name, value) in &schemas {
        let text = std::fs::read_to_string(dir.path().join("out/schemas").join(name)).unwrap();
        assert!(text.ends_with("}\n"));
        let written: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(&written, value, "{name}");
    }
}

#[test]
fn unknown_schema_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_in(dir.path(), &["schema", "nope"]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("error: unknown schema 'nope' (one of: "),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1);
}
