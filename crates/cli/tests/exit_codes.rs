//! Exit status: 0 clean, 1 findings at the failing level, 2 the linter could not run.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{code, codes, lint_json, order_tools, run_in};

fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn clean_document_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tools.json",
        &order_tools("cancel_order", true, true),
    );
    let (status, report) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(status, 0);
    assert_eq!(report["summary"]["tools"], 2);
}

#[test]
fn error_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tools.json",
        &order_tools("void_order", true, true),
    );
    let (status, report) = lint_json(dir.path(), &["tools.json"]);
    assert!(codes(&report).contains(&"R101".to_owned()), "{report}");
    assert_eq!(status, 1);
}

#[test]
fn warnings_fail_only_when_denied() {
    let dir = tempfile::tempdir().unwrap();
    // No outputSchema: the `$response.body` binding cannot be checked (R107, a warning).
    write(
        dir.path(),
        "tools.json",
        &order_tools("cancel_order", false, true),
    );
    let (status, report) = lint_json(dir.path(), &["tools.json"]);
    assert!(codes(&report).contains(&"R107".to_owned()), "{report}");
    assert_eq!(report["summary"]["errors"], 0, "{report}");
    assert_eq!(status, 0);
    let (status, _) = lint_json(dir.path(), &["--deny", "warnings", "tools.json"]);
    assert_eq!(status, 1);
}

#[test]
fn infos_never_fail() {
    let dir = tempfile::tempdir().unwrap();
    // The compensator is not declared idempotent (R114, an info).
    write(
        dir.path(),
        "tools.json",
        &order_tools("cancel_order", true, false),
    );
    let (status, report) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!(codes(&report), ["R114"], "{report}");
    assert_eq!(report["summary"]["infos"], 1);
    assert_eq!(status, 0);
    let (status, _) = lint_json(dir.path(), &["--deny", "warnings", "tools.json"]);
    assert_eq!(status, 0);
}

#[test]
fn broken_documents_are_findings_not_failures() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "broken.json", "{\"tools\": [ ");
    write(dir.path(), "other.json", "{\"servers\": []}");
    let (status, report) = lint_json(dir.path(), &["broken.json"]);
    assert_eq!(codes(&report), ["R001"], "{report}");
    assert_eq!(status, 1);
    let (status, report) = lint_json(dir.path(), &["other.json"]);
    assert_eq!(codes(&report), ["R002"], "{report}");
    assert_eq!(status, 1);
}

#[test]
fn unreadable_file_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tools.json",
        &order_tools("cancel_order", true, true),
    );
    // Alone or among others, a file that cannot be read is named on stderr and in every report
    // (the run's only file too), and the others are still linted.
    for files in [&["missing.json"][..], &["tools.json", "missing.json"]] {
        for format in ["human", "json", "sarif", "github"] {
            let mut args = vec!["lint", "--format", format];
            args.extend_from_slice(files);
            let output = run_in(dir.path(), &args);
            assert_eq!(code(&output), 2);
            let stderr = String::from_utf8(output.stderr).unwrap();
            assert!(
                stderr.starts_with("error: cannot read missing.json: ")
                    && stderr.ends_with("error: 1 file(s) could not be read\n"),
                "{stderr}"
            );
            assert_eq!(stderr.matches("missing.json").count(), 1, "{stderr}");
            let stdout = String::from_utf8(output.stdout).unwrap();
            if format != "human" {
                assert!(stdout.contains("missing.json"), "{format}: {stdout}");
            }
            if format == "json" {
                let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
                common::assert_lint_report(&report);
                let last = report["sources"]
                    .as_array()
                    .unwrap()
                    .last()
                    .unwrap()
                    .clone();
                assert_eq!(
                    (&last["name"], &last["kind"], &last["status"]),
                    (&"missing.json".into(), &"file".into(), &"unreadable".into())
                );
            }
        }
    }
}

#[test]
fn bad_arguments_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["lint", "--format", "xml", "."][..],
        &["lint", "--deny", "errors", "."],
        &["lint", "--header", "K: V", "."],
        &["lint", ".", "--", "server"],
        &["lint", "--stdio"],
        &[
            "lint",
            "--stdio",
            "--url",
            "http://127.0.0.1:9/",
            "--",
            "server",
        ],
        &["frobnicate"],
        &["explain"],
    ] {
        let output = run_in(dir.path(), args);
        assert_eq!(code(&output), 2, "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn unknown_rule_in_flags_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tools.json",
        &order_tools("cancel_order", true, true),
    );
    for flag in ["--select", "--ignore"] {
        let output = run_in(dir.path(), &["lint", flag, "R101,R999", "tools.json"]);
        assert_eq!(code(&output), 2, "{flag}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("R999"), "{stderr}");
    }
}

#[test]
fn select_and_ignore_take_codes_and_names() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tools.json",
        &order_tools("void_order", true, false),
    );
    let (status, report) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!(status, 1);
    assert!(codes(&report).contains(&"R101".to_owned()));
    let (status, report) = lint_json(
        dir.path(),
        &["--ignore", "dangling-operation-id", "tools.json"],
    );
    assert!(!codes(&report).contains(&"R101".to_owned()), "{report}");
    assert_eq!(status, 0, "{report}");
    let (_, report) = lint_json(dir.path(), &["--select", "R101", "tools.json"]);
    assert_eq!(codes(&report), ["R101"], "{report}");
}

#[test]
fn stdin_is_named_dash() {
    use std::io::Write;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let mut child = common::bin_in(dir.path())
        .args(["lint", "--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(order_tools("void_order", true, true).as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(code(&output), 1);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["summary"]["files"], 1);
    assert!(
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["file"] == "-")
    );
    assert!(!report["diagnostics"].as_array().unwrap().is_empty());
}

#[test]
fn directories_are_walked_sorted_with_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("servers/b")).unwrap();
    std::fs::create_dir_all(root.join("servers/a")).unwrap();
    std::fs::create_dir_all(root.join("servers/node_modules/x")).unwrap();
    let clean = order_tools("cancel_order", true, true);
    write(
        &root.join("servers"),
        ".gitignore",
        "node_modules/\nskipped.json\n",
    );
    write(&root.join("servers/b"), "z.json", &clean);
    write(&root.join("servers/b"), "a.json", &clean);
    write(&root.join("servers/a"), "m.json", &clean);
    write(&root.join("servers/a"), "notes.txt", "not json");
    write(&root.join("servers/a"), "skipped.json", "{");
    write(&root.join("servers/node_modules/x"), "package.json", "{");
    let output = run_in(root, &["lint", "servers"]);
    let status = code(&output);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(status, 0, "{stdout}");
    assert_eq!(
        stdout.trim_end(),
        "3 files, 6 tools: 0 errors, 0 warnings, 0 infos"
    );

    // The order shows in the output: broken files in the walked set name themselves.
    write(&root.join("servers/b"), "a.json", "[");
    write(&root.join("servers/a"), "m.json", "[");
    let (status, report) = lint_json(root, &["servers"]);
    assert_eq!(status, 1);
    let files: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["servers/a/m.json", "servers/b/a.json"], "{report}");

    // A file named explicitly is linted even when ignored.
    let (status, report) = lint_json(root, &["servers/a/skipped.json"]);
    assert_eq!(status, 1);
    assert_eq!(codes(&report), ["R001"]);
}

/// A walk that finds no document (an empty tree, or every file ignored) is no clean run: a pull
/// request that hides the lists from the walk must not turn the check green.
#[test]
fn a_directory_with_no_document_is_no_clean_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tools.json"), r#"{"tools": []}"#).unwrap();
    assert_eq!(code(&run_in(dir.path(), &["lint", "."])), 0);
    std::fs::write(dir.path().join(".ignore"), "*.json\n").unwrap();
    for args in [
        &["lint", "."][..],
        &["lint"],
        &["lint", "--isolated", "--format", "sarif"],
    ] {
        let output = run_in(dir.path(), args);
        assert_eq!(code(&output), 2, "{args:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("nothing to lint"), "{stderr}");
    }
}

#[test]
fn many_files_report_in_the_order_one_file_at_a_time_gives() {
    let dir = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    for i in 0..24 {
        // Uneven sizes, so that files finish out of order on several threads.
        let tools: Vec<String> = (0..(i % 4) * 1500 + 2)
            .map(|t| {
                format!(
                    r#"{{"name":"t{}","inputSchema":{{"type":"object"}}}}"#,
                    if i % 3 == 0 { t / 2 } else { t }
                )
            })
            .collect();
        let name = format!("f{i:02}.json");
        write(
            dir.path(),
            &name,
            &format!(r#"{{"tools":[{}]}}"#, tools.join(",")),
        );
        names.push(name);
    }
    let (_, together) = lint_json(dir.path(), &["."]);
    let mut one_by_one = Vec::new();
    for name in &names {
        let (_, report) = lint_json(dir.path(), &[name]);
        one_by_one.extend(report["diagnostics"].as_array().unwrap().iter().cloned());
    }
    let together = together["diagnostics"].as_array().unwrap();
    let strip = |d: &serde_json::Value| {
        let mut d = d.clone();
        let file = d["file"]
            .as_str()
            .unwrap()
            .trim_start_matches("./")
            .to_owned();
        d["file"] = file.into();
        d
    };
    assert!(!together.is_empty());
    assert_eq!(
        together.iter().map(strip).collect::<Vec<_>>(),
        one_by_one.iter().map(strip).collect::<Vec<_>>()
    );
}

/// `census` of a path that does not exist still writes its census, the path listed as not read,
/// and exits 2.
#[test]
fn census_lists_a_missing_path_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tools.json",
        &order_tools("cancel_order", true, true),
    );
    for paths in [&["missing.json"][..], &["tools.json", "missing.json"]] {
        let mut args = vec!["census", "--format", "json"];
        args.extend_from_slice(paths);
        let output = run_in(dir.path(), &args);
        assert_eq!(code(&output), 2, "{paths:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.starts_with("error: cannot read missing.json: "),
            "{stderr}"
        );
        let census: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let listed = &census["not_tools_lists"][0];
        assert_eq!(listed["path"], "missing.json", "{census}");
        assert_eq!(listed["reason"]["kind"], "unreadable", "{census}");
        assert_eq!(census["servers"], paths.len() - 1, "{census}");
    }
    // The table lists it too.
    let output = run_in(dir.path(), &["census", "missing.json"]);
    assert_eq!(code(&output), 2);
    assert!(String::from_utf8_lossy(&output.stdout).contains("missing.json"));
}
