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
        assert!(output.stdout.is_empty());
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
