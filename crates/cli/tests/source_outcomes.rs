//! What becomes of each source of `lint`, `census` and `profile`, whichever way it was named
//! (a client config entry, a registry `server.json`, a file): saved under a file of its own,
//! supplied from the environment when its entry declares no value, skipped or unreadable alike
//! from either origin, stated in every report and named on stderr, and a run that lints nothing
//! failing the same way everywhere. The runners (`npx`) are stand-ins on the PATH that start the
//! demo server, so these tests need no network.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{bin_in, code};
use serde_json::{Value, json};

/// A directory holding an `npx` that appends its arguments to `calls.log` and becomes the demo
/// server.
fn runners(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"npx $*\" >> '{log}'\nexec '{server}' demo-server\n",
        log = dir.join("calls.log").display(),
        server = env!("CARGO_BIN_EXE_mcp-recovery"),
    );
    let path = bin.join("npx");
    std::fs::write(&path, script).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status()
        .unwrap();
    bin
}

/// The binary in `dir`, with the stand-in runners first on a PATH that has no Docker.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let bin = runners(dir);
    bin_in(dir)
        .args(args)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env_remove("MCP_HEADER_X_API_KEY")
        .env_remove("MCP_ARG_TOKEN")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write(dir: &Path, name: &str, value: &Value) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

/// A server.json named `name` with one npm package.
fn package_entry(name: &str) -> Value {
    json!({"name": name, "description": "d", "version": "1",
        "packages": [{"registryType": "npm", "identifier": "@example/demo", "version": "1.0.0",
            "transport": {"type": "stdio"}}]})
}

/// `(status, error)` of each source of a JSON report, by name.
fn statuses(report: &Value) -> Vec<(String, String, String)> {
    report["sources"]
        .as_array()
        .unwrap_or_else(|| panic!("no sources: {report}"))
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["status"].as_str().unwrap().to_owned(),
                s["error"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_source_is_saved_to_a_file_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    // Two entries each with `packages[0]`, and one more of the same file name further down.
    write(dir.path(), "entries/one.json", &package_entry("io.x/one"));
    write(dir.path(), "entries/two.json", &package_entry("io.x/two"));
    write(
        dir.path(),
        "entries/sub/one.json",
        &package_entry("io.y/one"),
    );
    for command in ["lint", "census"] {
        let save = format!("saved-{command}");
        let output = run(
            dir.path(),
            &[command, "--server-json", "entries", "--save", &save],
            &[],
        );
        assert_eq!(code(&output), 0, "{command}: {}", text(&output.stderr));
        assert_eq!(
            files_in(&dir.path().join(&save)),
            [
                "one_packages_0-2.json",
                "one_packages_0.json",
                "two_packages_0.json"
            ],
            "{command}"
        );
    }
    // Config names that the file name would make one.
    let server = json!({"command": env!("CARGO_BIN_EXE_mcp-recovery"), "args": ["demo-server"]});
    write(
        dir.path(),
        "mcp.json",
        &json!({"mcpServers": {"a b": server, "a_b": server, "A_B": server}}),
    );
    let output = run(
        dir.path(),
        &[
            "lint",
            "--config",
            "mcp.json",
            "--all-servers",
            "--save",
            "saved-config",
        ],
        &[],
    );
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    assert_eq!(
        files_in(&dir.path().join("saved-config")),
        ["A_B-3.json", "a_b-2.json", "a_b.json"]
    );
}

#[test]
fn a_header_or_argument_without_value_comes_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = common::demo_http(&dir.path().join("calls.jsonl"));
    let entry = json!({"name": "io.x/needs", "description": "d", "version": "1",
        "remotes": [{"type": "streamable-http", "url": url,
            "headers": [{"name": "X-Api-Key", "isRequired": true}]}],
        "packages": [{"registryType": "npm", "identifier": "@example/demo", "version": "1.0.0",
            "transport": {"type": "stdio"},
            "packageArguments": [{"type": "named", "name": "--token", "isRequired": true}]}]});
    write(dir.path(), "server.json", &entry);
    let args = ["lint", "--server-json", "server.json", "--format", "json"];
    // Unset: each fails, naming the variable to set.
    let output = run(dir.path(), &args, &[]);
    assert_eq!(code(&output), 2);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sources = statuses(&report);
    assert!(
        sources
            .iter()
            .any(|(_, status, error)| status == "failed-to-start"
                && error.contains("the required header X-Api-Key is not set")
                && error.contains("set MCP_HEADER_X_API_KEY in the environment")),
        "{report}"
    );
    assert!(
        sources
            .iter()
            .any(|(_, status, error)| status == "failed-to-start"
                && error.contains("the required argument --token is not set")
                && error.contains("set MCP_ARG_TOKEN in the environment")),
        "{report}"
    );
    // Set, and the remote's host allowed: both run, and the values, secrets, are never shown.
    let (key, token) = ("key-7a6b5c4d3e", "tok-1f2e3d4c5b");
    let output = run(
        dir.path(),
        &[&args[..], &["--allow-host", "127.0.0.1"]].concat(),
        &[("MCP_HEADER_X_API_KEY", key), ("MCP_ARG_TOKEN", token)],
    );
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        statuses(&report).iter().all(|(_, s, _)| s == "linted"),
        "{report}"
    );
    let everything = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(!everything.contains(key) && !everything.contains(token));
    let calls = std::fs::read_to_string(dir.path().join("calls.log")).unwrap();
    assert!(calls.contains(&format!("--token={token}")), "{calls}");
}

#[test]
fn a_run_that_lints_nothing_fails_alike_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let sse = json!({"name": "x/y", "remotes": [{"type": "sse", "url": "https://h.example/sse"}]});
    write(dir.path(), "sse.json", &sse);
    let output = run(
        dir.path(),
        &["lint", "--server-json", "sse.json", "--format", "sarif"],
        &[],
    );
    assert_eq!(code(&output), 2);
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{log}");
    assert_eq!(
        invocation["toolExecutionNotifications"][0]["level"], "note",
        "{log}"
    );
    assert!(text(&output.stderr).contains("no source could be linted"));
    for command in [
        &["profile", "--server-json", "sse.json", "--format", "json"][..],
        &["census", "--server-json", "sse.json", "--format", "json"],
    ] {
        let output = run(dir.path(), command, &[]);
        assert_eq!(code(&output), 2, "{command:?}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(statuses(&report)[0].1, "skipped", "{report}");
    }
    // A client config whose every server is disabled or SSE: reported, and no pass either.
    write(
        dir.path(),
        "mcp.json",
        &json!({"mcpServers": {"off": {"command": "x", "disabled": true},
            "events": {"type": "sse", "url": "https://h.example/sse"}}}),
    );
    for format in ["json", "sarif"] {
        let output = run(
            dir.path(),
            &[
                "lint",
                "--config",
                "mcp.json",
                "--all-servers",
                "--format",
                format,
            ],
            &[],
        );
        assert_eq!(code(&output), 2, "{format}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        if format == "json" {
            let sources = statuses(&report);
            assert_eq!(sources.len(), 2, "{report}");
            assert!(sources.iter().all(|(_, s, _)| s == "skipped"), "{report}");
        } else {
            let invocation = &report["runs"][0]["invocations"][0];
            assert_eq!(invocation["executionSuccessful"], false, "{report}");
        }
    }
    let output = run(dir.path(), &["census", "--live", "mcp.json"], &[]);
    assert_eq!(code(&output), 2);
}

#[test]
fn sse_is_skipped_alike_from_a_config_and_a_server_json() {
    let dir = tempfile::tempdir().unwrap();
    let sse = json!({"name": "x/y", "remotes": [{"type": "sse", "url": "https://h.example/sse"}]});
    write(dir.path(), "sse.json", &sse);
    write(
        dir.path(),
        "mcp.json",
        &json!({"mcpServers": {"events": {"type": "sse", "url": "https://h.example/sse"}}}),
    );
    let mut reasons = Vec::new();
    for args in [
        &["--server-json", "sse.json"][..],
        &["--config", "mcp.json", "--all-servers"],
    ] {
        let mut command = vec!["lint", "--format", "json"];
        command.extend_from_slice(args);
        let output = run(dir.path(), &command, &[]);
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        let (_, status, error) = statuses(&report).remove(0);
        assert_eq!(status, "skipped", "{report}");
        assert!(!text(&output.stderr).contains("error: config"));
        reasons.push(error.rsplit(": ").next().unwrap().to_owned());
    }
    assert_eq!(reasons[0], reasons[1]);
    assert!(
        reasons[0].contains("only Streamable HTTP is"),
        "{reasons:?}"
    );
}

#[test]
fn a_server_json_that_cannot_be_read_is_a_source_of_every_report() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.json"), "{not json").unwrap();
    for file in ["broken.json", "missing.json"] {
        for format in ["json", "sarif", "junit", "gitlab", "markdown", "github"] {
            let output = run(
                dir.path(),
                &["lint", "--server-json", file, "--format", format],
                &[],
            );
            assert_eq!(code(&output), 2, "{file} {format}");
            let stdout = text(&output.stdout);
            assert!(stdout.contains("unreadable"), "{file} {format}: {stdout}");
            assert!(
                stdout.contains(file.split('.').next().unwrap()),
                "{file} {format}: {stdout}"
            );
            assert!(text(&output.stderr).contains(file), "{file} {format}");
        }
        let output = run(
            dir.path(),
            &["census", "--server-json", file, "--format", "json"],
            &[],
        );
        assert_eq!(code(&output), 2);
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(statuses(&report)[0].1, "unreadable", "{report}");
    }
}

#[test]
fn stderr_names_every_server_json_source_not_linted() {
    let dir = tempfile::tempdir().unwrap();
    let needs = json!({"name": "io.x/needs", "description": "d", "version": "1",
        "packages": [{"registryType": "npm", "identifier": "@example/demo", "version": "1.0.0",
            "transport": {"type": "stdio"},
            "environmentVariables": [{"name": "UNSET_TOKEN_9", "isRequired": true}]}],
        "remotes": [{"type": "sse", "url": "https://h.example/sse"}]});
    write(dir.path(), "entries/needs.json", &needs);
    std::fs::write(dir.path().join("entries/broken.json"), "{").unwrap();
    write(dir.path(), "entries/good.json", &package_entry("io.x/good"));
    for command in ["lint", "census", "profile"] {
        let output = run(
            dir.path(),
            &[command, "--server-json", "entries", "--format", "json"],
            &[],
        );
        assert_eq!(code(&output), 2, "{command}");
        let stderr = text(&output.stderr);
        for name in [
            "needs.json#/packages/0",
            "needs.json#/remotes/0",
            "broken.json",
        ] {
            assert!(stderr.contains(name), "{command}: {name} in {stderr}");
        }
    }
}

#[test]
fn census_states_every_file_and_counts_findings() {
    let dir = tempfile::tempdir().unwrap();
    let tools = json!({"tools": [{"name": "get", "inputSchema": {"type": "object"}}]});
    write(dir.path(), "corpus/a.json", &tools);
    write(
        dir.path(),
        "corpus/b.json",
        &json!({"title": "not a tools list"}),
    );
    let output = run(
        dir.path(),
        &["census", "corpus", "missing.json", "--format", "json"],
        &[],
    );
    assert_eq!(code(&output), 2);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sources = report["sources"].as_array().unwrap();
    let names: Vec<&str> = sources
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["corpus/a.json", "corpus/b.json", "missing.json"],
        "{report}"
    );
    assert_eq!(sources[0]["status"], "linted");
    assert_eq!(sources[0]["kind"], "file");
    assert_eq!(sources[0]["tools"], 1);
    assert!(sources[0]["findings"].is_u64(), "{report}");
    assert_eq!(sources[1]["status"], "linted");
    assert_eq!(sources[1]["tools"], 0);
    assert!(sources[1]["findings"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(sources[2]["status"], "unreadable");
    assert!(sources[2]["findings"].is_null());
    // The census's own fields are as they were.
    assert_eq!(report["not_tools_lists"].as_array().unwrap().len(), 2);
    // Without linting there is nothing to count per file.
    let output = run(
        dir.path(),
        &["census", "corpus", "--no-lint", "--format", "json"],
        &[],
    );
    assert_eq!(code(&output), 0);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["sources"][0]["findings"].is_null(), "{report}");
    // Live servers get their findings counted too.
    write(dir.path(), "entries/good.json", &package_entry("io.x/good"));
    let output = run(
        dir.path(),
        &["census", "--server-json", "entries", "--format", "json"],
        &[],
    );
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["sources"][0]["findings"].is_u64(), "{report}");
    assert!(report["sources"][0]["tools"].as_u64().unwrap() > 0);
}

#[test]
fn census_markdown_escapes_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let name = "x`|y<img src=x>&amp;.json";
    write(dir.path(), &format!("md/{name}"), &json!({"title": 1}));
    let output = run(dir.path(), &["census", "md", "--format", "markdown"], &[]);
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    let markdown = text(&output.stdout);
    let row = markdown
        .lines()
        .find(|l| l.contains("img"))
        .unwrap_or_else(|| panic!("{markdown}"));
    // Nothing HTML, an entity or a code span could start: each is escaped.
    for (i, c) in row.char_indices().filter(|(_, c)| "<>&`".contains(*c)) {
        assert!(row[..i].ends_with('\\'), "{c} unescaped in {row}");
    }
    assert!(
        row.contains("x\\`\\|y\\<img src\\=x\\>\\&amp\\;\\.json"),
        "{row}"
    );
    // Two cells: three pipes that are not escaped.
    let bare = row
        .match_indices('|')
        .filter(|(i, _)| !row[..*i].ends_with('\\'));
    assert_eq!(bare.count(), 3, "{row}");
}

#[test]
fn rollback_refuses_the_server_flags_it_has_no_use_for() {
    let dir = tempfile::tempdir().unwrap();
    for flag in [&["--save", "out.json"][..], &["--all-servers"]] {
        let mut args = vec![
            "rollback",
            "--journal",
            "j.jsonl",
            "--dry-run",
            "--config",
            "mcp.json",
        ];
        args.extend_from_slice(flag);
        let output = run(dir.path(), &args, &[]);
        assert_eq!(code(&output), 2, "{flag:?}");
        let stderr = text(&output.stderr);
        assert!(stderr.contains("rollback"), "{stderr}");
        assert!(!dir.path().join("out.json").exists());
    }
}

/// The exit status says what became of every source even when stdout's reader is gone before
/// the first byte (`census … | head -0`), and a file `census` cannot read fails its run as a
/// missing one does, named on stderr.
#[cfg(unix)]
#[test]
fn the_exit_status_outlives_a_closed_stdout_and_unread_files_fail_census() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "corpus/a.json", &json!({"tools": []}));
    write(dir.path(), "entries/good.json", &package_entry("io.x/good"));
    let missing = json!({"name": "x/missing", "description": "d", "version": "1",
        "packages": [{"registryType": "npm", "identifier": "@example/demo", "version": "1.0.0",
            "transport": {"type": "stdio"},
            "environmentVariables": [{"name": "NEEDED_TOKEN", "isRequired": true}]}]});
    write(dir.path(), "entries/missing.json", &missing);
    let fifo = dir.path().join("corpus/pipe.json");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let closed = |args: &[&str]| {
        let bin = runners(dir.path());
        let mut child = bin_in(dir.path())
            .args(args)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env_remove("NEEDED_TOKEN")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        child.wait_with_output().unwrap()
    };
    for args in [
        &["census", "--server-json", "entries"][..],
        &["profile", "--server-json", "entries", "--format", "json"],
        &["census", "corpus/a.json", "corpus/pipe.json"],
    ] {
        let output = closed(args);
        assert_eq!(code(&output), 2, "{args:?}: {}", text(&output.stderr));
    }
    let output = run(
        dir.path(),
        &["census", "corpus/a.json", "corpus/pipe.json"],
        &[],
    );
    assert_eq!(code(&output), 2);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("cannot read corpus/pipe.json") && stderr.contains("FIFO"),
        "{stderr}"
    );
    let output = run(dir.path(), &["census", "corpus/a.json"], &[]);
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
}
