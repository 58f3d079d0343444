//! `--server-json`: MCP Registry entries as input. The runners (`npx`, `uvx`) are stand-ins on
//! the PATH that record how they were called and start the demo server, so these tests need no
//! network; `cargo xtask check-server-json` runs the real ones.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{bin_in, code, root};
use serde_json::{Value, json};

/// A directory of stand-in runners: each appends its name and arguments to `calls.log` and
/// becomes the demo server (or, for `FAIL=1`, says the value of `API_TOKEN` and exits 3).
fn runners(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let server = env!("CARGO_BIN_EXE_mcp-recovery");
    for runner in ["npx", "uvx"] {
        let script = format!(
            "#!/bin/sh\necho \"{runner} $*\" >> '{log}'\n\
             if [ -n \"$FAIL\" ]; then echo \"token is $API_TOKEN\" >&2; exit 3; fi\n\
             exec '{server}' demo-server\n",
            log = dir.join("calls.log").display(),
        );
        let path = bin.join(runner);
        std::fs::write(&path, script).unwrap();
        std::process::Command::new("chmod")
            .arg("+x")
            .arg(&path)
            .status()
            .unwrap();
    }
    bin
}

/// The binary with `bin` first on a PATH that has no Docker.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let bin = runners(dir);
    bin_in(dir)
        .args(args)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env_remove("GITHUB_PERSONAL_ACCESS_TOKEN")
        .env_remove("github_token")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn sources(report: &Value) -> Vec<(String, String)> {
    report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let name = s["name"].as_str().unwrap();
            let short = name.rsplit("server-json/").next().unwrap().to_owned();
            (short, s["status"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[test]
fn published_entries_start_as_their_registry_says() {
    let dir = tempfile::tempdir().unwrap();
    let entries = root().join("crates/cli/tests/server-json");
    let output = run(
        dir.path(),
        &[
            "lint",
            "--format",
            "json",
            "--server-json",
            entries.to_str().unwrap(),
        ],
        &[],
    );
    // The GitHub entry needs a token nobody gave: the worst outcome is 2.
    assert_eq!(
        code(&output),
        2,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    common::assert_lint_report(&report);
    let mut statuses = sources(&report);
    statuses.sort();
    assert_eq!(
        statuses,
        [
            ("credential-free/memory.json#/packages/0", "linted"),
            (
                "credential-free/sequential-thinking.json#/packages/0",
                "linted"
            ),
            ("credential-free/time.json#/packages/0", "linted"),
            ("github.json#/packages/0", "failed-to-start"),
            ("github.json#/remotes/0", "failed-to-start"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    let errors: Vec<&str> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["error"].as_str())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains(
            "/packages/0/environmentVariables/0: the required environment variable \
             GITHUB_PERSONAL_ACCESS_TOKEN is not set"
        )),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("/remotes/0/headers/0/variables/github_token")),
        "{errors:?}"
    );
    for source in report["sources"].as_array().unwrap() {
        assert_eq!(source["kind"], "server-json");
    }
    // npm with npx -y at the pinned version, PyPI with uvx and the declared argument.
    let mut calls: Vec<String> = std::fs::read_to_string(dir.path().join("calls.log"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    calls.sort();
    assert_eq!(
        calls,
        [
            "npx -y @modelcontextprotocol/server-memory@2026.8.31",
            "npx -y @modelcontextprotocol/server-sequential-thinking@2026.8.31",
            "uvx mcp-server-time@2026.10.19 --local-timezone=UTC",
        ]
    );

    // With the token, the OCI package needs Docker, which this PATH lacks: a skip that says so.
    let token = "ghp_0123456789abcdef";
    let github = entries.join("github.json");
    let output = run(
        dir.path(),
        &[
            "lint",
            "--format",
            "sarif",
            "--server-json",
            github.to_str().unwrap(),
        ],
        &[("GITHUB_PERSONAL_ACCESS_TOKEN", token)],
    );
    let everything = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        everything.contains("an OCI package needs Docker"),
        "{everything}"
    );
    assert!(!everything.contains(token), "{everything}");
}

#[test]
fn secrets_stay_hidden_and_a_run_that_lints_nothing_fails() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "tok-5f1e2d3c4b5a";
    let entry = json!({"name": "io.example/failing", "description": "d", "version": "1",
        "packages": [{"registryType": "npm", "identifier": "failing", "version": "1.0.0",
            "transport": {"type": "stdio"},
            "environmentVariables": [{"name": "API_TOKEN", "isRequired": true, "isSecret": true}]}],
        "remotes": [{"type": "sse", "url": "https://h.example/sse"}]});
    std::fs::write(dir.path().join("server.json"), entry.to_string()).unwrap();
    for format in [
        "human", "json", "sarif", "github", "markdown", "gitlab", "junit",
    ] {
        let output = run(
            dir.path(),
            &["lint", "--server-json", "server.json", "--format", format],
            &[("API_TOKEN", secret), ("FAIL", "1")],
        );
        assert_eq!(code(&output), 2, "{format}");
        let everything = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!everything.contains(secret), "{format}: {everything}");
        assert!(
            everything.contains("token is ***"),
            "{format}: {everything}"
        );
        if format != "human" {
            assert!(
                everything.contains("not supported"),
                "{format}: {everything}"
            );
        }
    }
    // Only an SSE remote: nothing is linted, and that is no pass.
    let sse = json!({"name": "io.example/sse", "description": "d", "version": "1",
        "remotes": [{"type": "sse", "url": "https://h.example/sse"}]});
    std::fs::write(dir.path().join("sse.json"), sse.to_string()).unwrap();
    let output = run(dir.path(), &["lint", "--server-json", "sse.json"], &[]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no source could be linted"), "{stderr}");
    // A file that is not a server.json is an error naming it and the pointer.
    std::fs::write(dir.path().join("bad.json"), r#"{"name": 3}"#).unwrap();
    let output = run(dir.path(), &["lint", "--server-json", "bad.json"], &[]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.json: /name: expected"), "{stderr}");
}

#[test]
fn remotes_census_and_profile() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = common::demo_http(&dir.path().join("calls.jsonl"));
    let entry = json!({"name": "io.example/remote", "description": "d", "version": "1",
        "remotes": [{"type": "streamable-http", "url": url}],
        "packages": [{"registryType": "npm", "identifier": "@example/demo", "version": "2.0.0",
                      "transport": {"type": "stdio"}}]});
    std::fs::write(dir.path().join("server.json"), entry.to_string()).unwrap();
    let output = run(
        dir.path(),
        &["lint", "--server-json", "server.json", "--format", "json"],
        &[],
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let remote = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "server.json#/remotes/0")
        .unwrap()
        .clone();
    assert_eq!(remote["status"], "linted", "{report}");
    assert!(remote["protocol"].is_string());
    assert_eq!(report["summary"]["servers"], 2);

    let output = run(
        dir.path(),
        &[
            "census",
            "--server-json",
            "server.json",
            "--format",
            "json",
            "--no-lint",
        ],
        &[],
    );
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let census: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(census["servers"], 2);
    assert_eq!(census["sources"].as_array().unwrap().len(), 2);

    let output = run(
        dir.path(),
        &[
            "profile",
            "--server-json",
            "server.json",
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let profiles: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = profiles["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["source"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["server.json#/packages/0", "server.json#/remotes/0"]);
    assert!(profiles["profiles"][0]["reached"].is_array());
    assert_eq!(profiles["sources"][1]["status"], "linted");
}

/// What a registry entry finds before any server starts (a required value unset, a runtime this
/// machine lacks, an SSE remote) is named once on stderr by the formats that do not list
/// sources (`lint`'s human output, `census`'s table), as the others list it; a missing `uvx` is
/// a skip, not a failure.
#[test]
fn sources_not_run_are_named_and_a_missing_runtime_is_a_skip() {
    let dir = tempfile::tempdir().unwrap();
    let entry = json!({"name": "io.example/mixed", "description": "d", "version": "1",
        "packages": [
            {"registryType": "npm", "identifier": "needs-token", "version": "1.0.0",
             "transport": {"type": "stdio"},
             "environmentVariables": [{"name": "API_TOKEN", "isRequired": true}]},
            {"registryType": "pypi", "identifier": "some-server", "version": "1.0",
             "transport": {"type": "stdio"}}],
        "remotes": [{"type": "sse", "url": "https://h.example/sse"}]});
    std::fs::write(dir.path().join("server.json"), entry.to_string()).unwrap();
    // Only the npx stand-in: this machine has no uvx.
    let bin = runners(dir.path());
    std::fs::remove_file(bin.join("uvx")).unwrap();
    let run = |args: &[&str]| {
        let output = bin_in(dir.path())
            .args(args)
            .env("PATH", &bin)
            .env_remove("API_TOKEN")
            .output()
            .unwrap();
        assert_eq!(code(&output), 2, "{args:?}");
        (
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };
    let (stdout, _) = run(&["lint", "--server-json", "server.json", "--format", "json"]);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    common::assert_lint_report(&report);
    assert_eq!(
        sources(&report),
        [
            ("server.json#/packages/0", "failed-to-start"),
            ("server.json#/packages/1", "skipped"),
            ("server.json#/remotes/0", "skipped"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    assert!(
        report["sources"][1]["error"]
            .as_str()
            .unwrap()
            .contains("/packages/1: runtime uvx is not installed here"),
        "{report}"
    );
    let lines = [
        "error: server-json server.json#/packages/0 was not linted (failed-to-start): \
         server.json: /packages/0/environmentVariables/0: the required environment variable \
         API_TOKEN is not set",
        "note: server-json server.json#/packages/1 was not linted (skipped): server.json: \
         /packages/1: runtime uvx is not installed here",
        "note: server-json server.json#/remotes/0 was not linted (skipped): server.json: \
         /remotes/0: the HTTP+SSE transport of protocol 2024-11-05 is not supported",
    ];
    // Whatever the format (the machine formats say it in the report too), stderr names each
    // source once.
    for args in [
        &["lint", "--server-json", "server.json"][..],
        &["census", "--server-json", "server.json"],
        &["lint", "--server-json", "server.json", "--format", "json"],
        &["census", "--server-json", "server.json", "--format", "json"],
    ] {
        let (_, stderr) = run(args);
        for line in lines {
            assert_eq!(stderr.matches(line).count(), 1, "{args:?}: {stderr}");
        }
    }
}

/// A secret holding a character the escape rewrites is hidden in every spelling, in every
/// format, when the server echoes it.
#[test]
fn secrets_the_escape_rewrites_stay_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let entry = json!({"name": "io.example/failing", "description": "d", "version": "1",
        "packages": [{"registryType": "npm", "identifier": "failing", "version": "1.0.0",
            "transport": {"type": "stdio"},
            "environmentVariables": [{"name": "API_TOKEN", "isRequired": true}]}]});
    std::fs::write(dir.path().join("server.json"), entry.to_string()).unwrap();
    for secret in [
        "tok\tsecret-part",
        "tok\u{202e}secret-part",
        "tok-line\nsecret-part",
    ] {
        for format in ["human", "json", "sarif", "github", "junit"] {
            let output = run(
                dir.path(),
                &["lint", "--server-json", "server.json", "--format", format],
                &[("API_TOKEN", secret), ("FAIL", "1")],
            );
            assert_eq!(code(&output), 2, "{format}");
            let everything = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(
                !everything.contains("secret-part"),
                "{format}: {everything}"
            );
            assert!(
                everything.contains("token is ***"),
                "{format}: {everything}"
            );
        }
    }
}
