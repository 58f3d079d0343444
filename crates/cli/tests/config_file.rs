//! `mcp-recovery.toml`: discovery upward from the working directory, the settings it carries,
//! flags overriding it, and mistakes reported with a span (exit 2).
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::{code, codes, lint_json, order_tools, run_in};

/// A temp tree: `root/tools.json` (with `document`), `root/mcp-recovery.toml` (with `config`)
/// and an empty `root/deep/er/` to run from.
fn tree(document: &str, config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tools.json"), document).unwrap();
    std::fs::create_dir_all(dir.path().join("deep/er")).unwrap();
    if let Some(config) = config {
        std::fs::write(dir.path().join("mcp-recovery.toml"), config).unwrap();
    }
    dir
}

fn deep(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("deep/er")
}

#[test]
fn found_upward_from_the_working_directory() {
    let dangling = order_tools("void_order", true, true);
    let without = tree(&dangling, None);
    let (status, report) = lint_json(&deep(&without), &["../../tools.json"]);
    assert_eq!(status, 1);
    assert!(codes(&report).contains(&"R101".to_owned()));

    let with = tree(&dangling, Some("ignore = [\"R101\"]\n"));
    let (status, report) = lint_json(&deep(&with), &["../../tools.json"]);
    assert!(!codes(&report).contains(&"R101".to_owned()), "{report}");
    assert_eq!(status, 0, "{report}");
}

#[test]
fn severity_table_and_deny() {
    let unverifiable = order_tools("cancel_order", false, true);
    let dir = tree(&unverifiable, Some("[severity]\nR107 = \"error\"\n"));
    let (status, report) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!(status, 1);
    let r107: Vec<_> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "R107")
        .collect();
    assert!(!r107.is_empty(), "{report}");
    assert!(r107.iter().all(|d| d["severity"] == "error"));

    let dir = tree(&unverifiable, Some("deny = [\"warnings\"]\n"));
    let (status, _) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!(status, 1);
}

#[test]
fn flags_override_the_config() {
    let dangling = order_tools("void_order", true, false);
    let dir = tree(&dangling, Some("ignore = [\"dangling-operation-id\"]\n"));
    let (status, _) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!(status, 0);
    // A list on the command line replaces the config's list.
    let (status, report) = lint_json(dir.path(), &["--ignore", "R114", "tools.json"]);
    assert_eq!(status, 1);
    assert!(codes(&report).contains(&"R101".to_owned()));
    assert!(!codes(&report).contains(&"R114".to_owned()));
}

#[test]
fn explicit_config_file() {
    let dangling = order_tools("void_order", true, true);
    let dir = tree(&dangling, Some("ignore = [\"R101\"]\n"));
    std::fs::write(dir.path().join("strict.toml"), "select = [\"R101\"]\n").unwrap();
    let (status, report) = lint_json(dir.path(), &["--config", "strict.toml", "tools.json"]);
    assert_eq!(status, 1);
    assert_eq!(codes(&report), ["R101"]);
}

fn stderr_of(dir: &Path, args: &[&str]) -> (i32, String) {
    let output = run_in(dir, args);
    (code(&output), String::from_utf8(output.stderr).unwrap())
}

#[test]
fn unknown_key_is_reported_with_a_span() {
    let dir = tree("[]", Some("select = [\"R101\"]\nignroe = [\"R114\"]\n"));
    let (status, stderr) = stderr_of(&deep(&dir), &["lint", "../../tools.json"]);
    assert_eq!(status, 2);
    let first = stderr.lines().next().unwrap();
    assert!(
        first.starts_with("error: ../../mcp-recovery.toml:2:1: unknown field `ignroe`"),
        "{stderr}"
    );
    insta::assert_snapshot!("unknown_key", stderr);
}

#[test]
fn unknown_code_is_reported_with_a_span() {
    let dir = tree("[]", Some("ignore = [\"R114\", \"R999\"]\n"));
    let (status, stderr) = stderr_of(dir.path(), &["lint", "tools.json"]);
    assert_eq!(status, 2);
    insta::assert_snapshot!("unknown_code", stderr);

    let dir = tree("[]", Some("[severity]\nno-such-rule = \"error\"\n"));
    let (status, stderr) = stderr_of(dir.path(), &["lint", "tools.json"]);
    assert_eq!(status, 2);
    assert!(
        stderr.starts_with("error: mcp-recovery.toml:2:1: unknown rule `no-such-rule`"),
        "{stderr}"
    );
}

#[test]
fn bad_values_and_syntax_exit_2() {
    for (config, expected) in [
        (
            "[severity]\nR107 = \"fatal\"\n",
            "mcp-recovery.toml:2:8: unknown severity `fatal`",
        ),
        (
            "deny = [\"errors\"]\n",
            "mcp-recovery.toml:1:9: unknown deny level `errors`",
        ),
        ("select = \"R101\"\n", "mcp-recovery.toml:1:10: "),
        ("select = [\n", "mcp-recovery.toml:"),
    ] {
        let dir = tree("[]", Some(config));
        let (status, stderr) = stderr_of(dir.path(), &["lint", "tools.json"]);
        assert_eq!(status, 2, "{config}");
        assert!(
            stderr.starts_with(&format!("error: {expected}")),
            "{config}: {stderr}"
        );
    }
}

#[test]
fn unreadable_explicit_config_exits_2() {
    let dir = tree("[]", None);
    let (status, stderr) = stderr_of(dir.path(), &["lint", "--config", "nope.toml", "tools.json"]);
    assert_eq!(status, 2);
    assert!(
        stderr.starts_with("error: cannot read nope.toml: "),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1);
}
