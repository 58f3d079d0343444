//! Live servers: `lint`/`fetch` with `--stdio -- CMD` against a scripted stdio server, and
//! exit 2 with the client's reason when the server cannot start, hangs or is unreachable.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::{code, lint_json, order_tools, run_in};
use serde_json::Value;

/// A POSIX sh MCP server of revision 2025-11-25: answers `initialize` and `tools/list` (with the
/// one-line document in `tools.json`), refuses other methods, ignores notifications. Request ids
/// are the client's numbers.
const SERVER: &str = r#"tools=$(tr -d '\n' < tools.json)
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  [ -n "$id" ] || continue
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$tools" ;;
    *)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id" ;;
  esac
done
"#;

fn scripted_server(document: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.sh"), SERVER).unwrap();
    std::fs::write(dir.path().join("tools.json"), document).unwrap();
    dir
}

#[test]
fn lints_a_stdio_server() {
    let dir = scripted_server(&order_tools("void_order", true, true));
    let (status, report) = lint_json(dir.path(), &["--stdio", "--", "sh", "server.sh"]);
    assert_eq!(status, 1, "{report}");
    assert_eq!(report["summary"]["files"], 0);
    assert_eq!(report["summary"]["servers"], 1);
    assert_eq!(report["summary"]["tools"], 2);
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert!(diagnostics.iter().any(|d| d["code"] == "R101"), "{report}");
    for d in diagnostics {
        assert_eq!(d["file"], "stdio:sh");
        // The fetched document is linted as pretty-printed text: findings have positions.
        assert!(d["line"].as_u64().is_some_and(|l| l > 1), "{d}");
        assert!(d["column"].as_u64().is_some(), "{d}");
    }

    let dir = scripted_server(&order_tools("cancel_order", true, true));
    let (status, report) = lint_json(dir.path(), &["--stdio", "--", "sh", "server.sh"]);
    assert_eq!(status, 0, "{report}");

    // The other formats render the findings of the live document too.
    let dir = scripted_server(&order_tools("void_order", true, true));
    for format in ["human", "sarif", "github"] {
        let output = run_in(
            dir.path(),
            &[
                "lint",
                "--format",
                format,
                "--stdio",
                "--",
                "sh",
                "server.sh",
            ],
        );
        assert_eq!(code(&output), 1, "{format}");
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(stdout.contains("R101"), "{format}: {stdout}");
    }
}

#[test]
fn fetch_prints_the_tools_as_sent() {
    let document = order_tools("cancel_order", true, true);
    let dir = scripted_server(&document);
    let output = run_in(dir.path(), &["fetch", "--stdio", "--", "sh", "server.sh"]);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let fetched: Value = serde_json::from_slice(&output.stdout).unwrap();
    let served: Value = serde_json::from_str(&document).unwrap();
    assert_eq!(fetched["tools"], served["tools"]);
}

#[test]
fn server_that_cannot_start_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["lint", "fetch"] {
        let output = run_in(
            dir.path(),
            &[command, "--stdio", "--", "./no-such-server-here"],
        );
        assert_eq!(code(&output), 2);
        // `lint` still writes its report, which names the server (see `only_source_failed`).
        if command == "fetch" {
            assert!(output.stdout.is_empty());
        }
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.starts_with("error: server stdio:./no-such-server-here: could not start"),
            "{stderr}"
        );
    }
}

#[test]
fn hanging_server_exits_2_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let output = run_in(
        dir.path(),
        &[
            "lint",
            "--timeout",
            "1",
            "--stdio",
            "--",
            "sh",
            "-c",
            "cat > /dev/null",
        ],
    );
    assert_eq!(code(&output), 2);
    assert!(started.elapsed() < Duration::from_secs(15));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("error: server stdio:sh: "), "{stderr}");
    assert!(stderr.contains("no answer to `initialize`"), "{stderr}");
}

#[test]
fn unreachable_url_exits_2() {
    // A loopback port nobody listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let output = run_in(dir.path(), &["lint", "--timeout", "5", "--url", &url]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!("error: server {url}: ")),
        "{stderr}"
    );
}

#[test]
fn malformed_header_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_in(
        dir.path(),
        &[
            "lint",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--header",
            "no colon",
        ],
    );
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("error: invalid header"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1);
}

/// A live server is named without its arguments or environment assignments (they may hold
/// secrets) in every format: the human text, the JSON `file`, the GitHub `file=`, the SARIF
/// `uri`; `--name` names it explicitly, made inert.
#[test]
fn live_sources_are_named_without_arguments() {
    let dir = scripted_server(&order_tools("void_order", true, true));
    let server = [
        "--stdio",
        "--",
        "sh",
        "server.sh",
        "--access-token=SECRET123",
    ];
    for format in ["human", "json", "sarif", "github"] {
        let mut args = vec!["lint", "--format", format];
        args.extend_from_slice(&server);
        let output = run_in(dir.path(), &args);
        assert_eq!(code(&output), 1, "{format}");
        let stdout = String::from_utf8(output.stdout).unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            !stdout.contains("SECRET123") && !stderr.contains("SECRET123"),
            "{format}: {stdout}"
        );
        let shown = if format == "github" {
            "stdio%3Ash"
        } else {
            "stdio:sh"
        };
        assert!(stdout.contains(shown), "{format}: {stdout}");
        if format == "sarif" {
            let log: Value = serde_json::from_str(&stdout).unwrap();
            let location = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
            assert_eq!(
                location["artifactLocation"]["uri"], "stdio:sh",
                "{location}"
            );
        }
    }
    let mut args = vec!["lint", "--format", "json", "--name", "checkout\u{1b}[2J"];
    args.extend_from_slice(&server);
    let (_, report) = lint_json(dir.path(), &args[3..]);
    assert_eq!(
        report["diagnostics"][0]["file"], "checkout\\u{1b}[2J",
        "{report}"
    );
}

/// A run whose only source fails still writes every report, with that source and its status in
/// it: stdout in each machine format, and each `--output-file`; the exit status stays 2.
#[test]
fn only_source_failed_is_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::write(
        dir.path().join("onefail.json"),
        r#"{"mcpServers": {"a": {"command": "./no-such-server-here"}}}"#,
    )
    .unwrap();
    let cases: [(&[&str], &str, &str); 4] = [
        (
            &["--stdio", "--", "./no-such-server-here"],
            "stdio:./no-such-server-here",
            "stdio",
        ),
        (&["--timeout", "5", "--url", &url], &url, "url"),
        (
            &["--config", "onefail.json", "--all-servers"],
            "onefail.json#a",
            "config",
        ),
        (
            &["--config", "onefail.json", "--server", "a"],
            "onefail.json#a",
            "config",
        ),
    ];
    for (source, name, kind) in cases {
        let lint = |args: &[&str]| {
            let mut full = vec!["lint"];
            full.extend_from_slice(args);
            full.extend_from_slice(source);
            let output = run_in(dir.path(), &full);
            assert_eq!(code(&output), 2, "{full:?}");
            String::from_utf8(output.stdout).unwrap()
        };
        let report: Value = serde_json::from_str(&lint(&["--format", "json"])).unwrap();
        common::assert_lint_report(&report);
        let sources = report["sources"].as_array().unwrap();
        assert_eq!(sources.len(), 1, "{report}");
        assert_eq!(
            (
                &sources[0]["name"],
                &sources[0]["kind"],
                &sources[0]["status"]
            ),
            (&name.into(), &kind.into(), &"failed-to-start".into()),
            "{report}"
        );
        let sarif: Value = serde_json::from_str(&lint(&["--format", "sarif"])).unwrap();
        common::assert_sarif(&sarif);
        let invocation = &sarif["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], false, "{sarif}");
        let notifications = invocation["toolExecutionNotifications"].as_array().unwrap();
        assert_eq!(notifications.len(), 1, "{sarif}");
        let junit = lint(&["--format", "junit"]);
        assert!(junit.contains("errors=\"1\""), "{junit}");
        assert_eq!(
            junit.matches("<error type=\"failed-to-start\"").count(),
            1,
            "{junit}"
        );
        let gitlab: Value = serde_json::from_str(&lint(&["--format", "gitlab"])).unwrap();
        let issues = gitlab.as_array().unwrap();
        assert_eq!(issues.len(), 1, "{gitlab}");
        assert_eq!(issues[0]["check_name"], "mcp-recovery/failed-to-start");
        let markdown = lint(&["--format", "markdown"]);
        let row = format!(" | {kind} | failed-to-start |");
        assert_eq!(markdown.matches(&row).count(), 1, "{markdown}");
        let github = lint(&["--format", "github"]);
        let line = "::error title=mcp-recovery failed-to-start::";
        assert_eq!(github.matches(line).count(), 1, "{github}");

        // Every --output-file is written too, not left empty.
        std::fs::remove_file(dir.path().join("o.sarif")).ok();
        lint(&[
            "--output-file",
            "sarif=o.sarif",
            "--output-file",
            "json=o.json",
        ]);
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("o.sarif")).unwrap())
                .unwrap();
        common::assert_sarif(&written);
        assert_eq!(
            written["runs"][0]["invocations"][0]["executionSuccessful"],
            false
        );
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("o.json")).unwrap())
                .unwrap();
        assert_eq!(written["sources"][0]["name"], name);
    }
}

/// A secret holding a character the escape rewrites (a tab, a line break, U+202E) is hidden in
/// every spelling: the server's output is made inert before it is quoted, and the escaped form
/// must not slip past the masking.
#[test]
fn secrets_the_escape_rewrites_stay_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let server = "printf '%s\\n' \"$API_KEY\"; printf '%s\\n' \"$API_KEY\" >&2; exit 3";
    for secret in [
        "sec\tret-value",
        "sec\u{202e}ret-value",
        "first-line\nsecond-line",
    ] {
        for format in ["human", "json", "sarif"] {
            let env = format!("API_KEY={secret}");
            let output = run_in(
                dir.path(),
                &[
                    "lint", "--format", format, "--env", &env, "--stdio", "--", "sh", "-c", server,
                ],
            );
            assert_eq!(code(&output), 2, "{format}");
            let everything = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            for part in ["ret-value", "first-line", "second-line"] {
                assert!(!everything.contains(part), "{format}: {everything}");
            }
            assert!(everything.contains("***"), "{format}: {everything}");
        }
    }
}
