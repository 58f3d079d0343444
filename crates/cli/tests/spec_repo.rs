//! `schema --spec-repo DIR [--protocol-version V]`: the SEP-3172 TypeScript and examples written into a
//! checkout of the MCP specification repository, and nothing else.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::{code, run_in};
use mcp_recovery_schema::spec_repo::{example_files, patch_schema_ts};

const BASE: &str = "/**\n * Hints.\n */\nexport interface ToolAnnotations {\n  /**\n   * A title.\n   */\n  title?: string;\n}\n\n/**\n * A tool.\n */\nexport interface Tool {\n  name: string;\n  annotations?: ToolAnnotations;\n}\n";

/// A checkout with `schema/<version>/schema.ts` for each version, plus files the command must
/// leave alone.
fn checkout(versions: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for version in versions {
        let version_dir = dir.path().join("schema").join(version);
        std::fs::create_dir_all(version_dir.join("examples/Tool")).unwrap();
        std::fs::write(version_dir.join("schema.ts"), BASE).unwrap();
        std::fs::write(version_dir.join("schema.json"), "{\"generated\": true}\n").unwrap();
        std::fs::write(
            version_dir.join("examples/Tool/with-no-parameters.json"),
            "{\"name\": \"x\"}\n",
        )
        .unwrap();
    }
    dir
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn spec_repo(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["schema", "--spec-repo", "."];
    args.extend_from_slice(extra);
    run_in(dir, &args)
}

/// Every file below `dir` with its content.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap().display().to_string();
                let content = if kind.is_symlink() {
                    std::fs::read_link(&path)
                        .unwrap()
                        .display()
                        .to_string()
                        .into_bytes()
                } else {
                    std::fs::read(&path).unwrap()
                };
                files.push((relative, content));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn writes_the_declarations_and_examples_then_changes_nothing_on_a_second_run() {
    let dir = checkout(&["draft", "2026-07-28"]);
    let before = snapshot(dir.path());
    let output = spec_repo(dir.path(), &[]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let printed = stdout(&output);
    assert!(
        printed.starts_with("updated schema/draft/schema.ts "),
        "{printed}"
    );

    let draft = dir.path().join("schema/draft");
    let schema_ts = std::fs::read_to_string(draft.join("schema.ts")).unwrap();
    assert_eq!(schema_ts, patch_schema_ts(BASE).unwrap());
    for (path, content) in example_files().unwrap() {
        assert_eq!(std::fs::read_to_string(draft.join(&path)).unwrap(), content);
        assert!(
            printed.contains(&format!("wrote schema/draft/{path}\n")),
            "{printed}"
        );
    }

    // Only schema.ts and the generated examples changed.
    let after = snapshot(dir.path());
    let generated: Vec<String> = example_files()
        .unwrap()
        .into_iter()
        .map(|(path, _)| format!("schema/draft/{path}"))
        .chain(["schema/draft/schema.ts".to_owned()])
        .collect();
    for (path, content) in &before {
        if !generated.contains(path) {
            assert!(
                after.contains(&(path.clone(), content.clone())),
                "{path} changed"
            );
        }
    }
    assert_eq!(after.len(), before.len() + generated.len() - 1);

    let again = spec_repo(dir.path(), &[]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    let printed = stdout(&again);
    let statuses: Vec<&str> = printed
        .lines()
        .filter_map(|l| l.split(' ').next())
        .filter(|w| ["wrote", "updated", "unchanged"].contains(w))
        .collect();
    assert_eq!(statuses.len(), generated.len(), "{printed}");
    assert!(statuses.iter().all(|s| *s == "unchanged"), "{printed}");
    assert_eq!(snapshot(dir.path()), after);
}

#[test]
fn the_version_picks_the_directory() {
    let dir = checkout(&["draft", "2026-07-28"]);
    let output = spec_repo(dir.path(), &["--protocol-version", "2026-07-28"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let dated = std::fs::read_to_string(dir.path().join("schema/2026-07-28/schema.ts")).unwrap();
    assert!(dated.contains("recovery?: Recovery;"));
    let draft = std::fs::read_to_string(dir.path().join("schema/draft/schema.ts")).unwrap();
    assert_eq!(draft, BASE);
}

#[test]
fn an_edited_example_is_regenerated_and_reported() {
    let dir = checkout(&["draft"]);
    assert_eq!(code(&spec_repo(dir.path(), &[])), 0);
    let (path, content) = example_files().unwrap().remove(0);
    let file = dir.path().join("schema/draft").join(&path);
    std::fs::write(&file, "{}\n").unwrap();
    let output = spec_repo(dir.path(), &[]);
    assert_eq!(code(&output), 0);
    assert!(stdout(&output).contains(&format!("updated schema/draft/{path}\n")));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), content);
}

fn refused(dir: &Path, extra: &[&str], expected: &str) {
    let before = snapshot(dir);
    let output = spec_repo(dir, extra);
    assert_eq!(code(&output), 2, "{}", stdout(&output));
    let message = stderr(&output);
    assert!(message.contains(expected), "{message}");
    assert!(!message.contains("panicked"), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(stdout(&output).is_empty() || !before.is_empty());
}

#[test]
fn bad_versions_and_missing_directories_exit_2() {
    let dir = checkout(&["draft", "2026-07-28"]);
    for version in ["../draft", "2026-7-28", "draft/..", ""] {
        refused(
            dir.path(),
            &["--protocol-version", version],
            "is not a protocol version directory name",
        );
    }
    refused(
        dir.path(),
        &["--protocol-version", "2025-11-25"],
        "schema/2025-11-25 does not exist: DIR must be a checkout of the MCP specification repository (versions there: 2026-07-28, draft)",
    );
    let empty = tempfile::tempdir().unwrap();
    refused(empty.path(), &[], "/schema does not exist");
    assert!(snapshot(empty.path()).is_empty());
}

#[test]
fn a_schema_ts_it_cannot_patch_is_named_and_left_alone() {
    let dir = checkout(&["draft"]);
    let schema_ts = dir.path().join("schema/draft/schema.ts");
    for (content, expected) in [
        (
            b"export interface Tool {}\n".to_vec(),
            "schema.ts: schema.ts declares no `interface ToolAnnotations`",
        ),
        (
            b"export interface ToolAnnotations {}\nexport type Recovery = string;\n".to_vec(),
            "already declares `Recovery` outside the generated block",
        ),
        (
            b"export interface ToolAnnotations { x?: \xff }\n".to_vec(),
            "schema.ts is not UTF-8 (invalid byte at offset 39)",
        ),
    ] {
        std::fs::write(&schema_ts, &content).unwrap();
        refused(dir.path(), &[], expected);
        assert_eq!(std::fs::read(&schema_ts).unwrap(), content);
    }
    std::fs::remove_file(&schema_ts).unwrap();
    refused(dir.path(), &[], "schema/draft/schema.ts does not exist");
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_never_followed() {
    use std::os::unix::fs::symlink;

    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("schema.ts"), BASE).unwrap();
    let target_before = snapshot(outside.path());

    // The examples directory is a link out of the checkout.
    let dir = checkout(&["draft"]);
    let examples = dir.path().join("schema/draft/examples");
    std::fs::remove_dir_all(&examples).unwrap();
    symlink(outside.path(), &examples).unwrap();
    refused(
        dir.path(),
        &[],
        "schema/draft/examples is a symbolic link, which is never followed",
    );
    assert_eq!(snapshot(outside.path()), target_before);

    // schema.ts is a link.
    let dir = checkout(&["draft"]);
    let schema_ts = dir.path().join("schema/draft/schema.ts");
    std::fs::remove_file(&schema_ts).unwrap();
    symlink(outside.path().join("schema.ts"), &schema_ts).unwrap();
    refused(dir.path(), &[], "schema/draft/schema.ts is a symbolic link");
    assert_eq!(snapshot(outside.path()), target_before);

    // One example file is a link.
    let dir = checkout(&["draft"]);
    let (path, _) = example_files().unwrap().remove(0);
    symlink(
        outside.path().join("schema.ts"),
        dir.path().join("schema/draft").join(&path),
    )
    .unwrap();
    refused(dir.path(), &[], "is a symbolic link");
    assert_eq!(snapshot(outside.path()), target_before);

    // The version directory is a link.
    let dir = checkout(&[]);
    std::fs::create_dir_all(dir.path().join("schema")).unwrap();
    symlink(outside.path(), dir.path().join("schema/draft")).unwrap();
    refused(dir.path(), &[], "schema/draft is a symbolic link");
    assert_eq!(snapshot(outside.path()), target_before);
}

#[test]
fn flags_that_do_not_combine_are_usage_errors() {
    let dir = checkout(&["draft"]);
    for args in [
        vec!["schema", "--protocol-version", "draft"],
        vec!["schema", "--spec-repo", ".", "--out", "x"],
        vec!["schema", "--spec-repo", ".", "tool"],
    ] {
        let output = run_in(dir.path(), &args);
        assert_eq!(code(&output), 2, "{args:?}");
    }
    assert_eq!(snapshot(dir.path()), snapshot(checkout(&["draft"]).path()));
}

/// The examples and the compensating tools they name form a `tools/list` with no error and no
/// warning (a self-inverse move is not idempotent, which R114 notes as an info).
#[test]
fn the_examples_lint_clean() {
    let mut tools: Vec<serde_json::Value> = mcp_recovery_schema::examples::tool_examples()
        .unwrap()
        .into_iter()
        .map(|e| e.value)
        .collect();
    tools.extend(mcp_recovery_schema::examples::compensating_tools());
    let document = serde_json::to_vec(&serde_json::json!({ "tools": tools })).unwrap();
    let linter =
        mcp_recovery_validator::Linter::new(mcp_recovery_validator::LintOptions::default())
            .unwrap();
    let report = linter.lint_source(&document);
    assert_eq!(report.tools, tools.len());
    let findings: Vec<String> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity != mcp_recovery_validator::Severity::Info)
        .map(|d| format!("{} {} {}", d.code, d.pointer, d.message))
        .collect();
    assert!(findings.is_empty(), "{findings:#?}");
}
