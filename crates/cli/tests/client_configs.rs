//! `--config FILE --server NAME` and `--all-servers` against MCP client configs (Claude Desktop
//! and Cursor `mcpServers`, VS Code `servers` with `inputs`), with scripted servers of each
//! protocol revision over stdio and Streamable HTTP, one that cannot start, and secrets.

// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;

use common::{bin_in, code, run_in};
use serde_json::{Value, json};

/// Reads requests line by line and answers as `$1` says: `2026` (server/discover, `_meta`
/// required), `2025-11-25` or `2025-03-26` (initialize; discover refused).
const SERVER: &str = r#"rev=$1
tools=$(tr -d '\n' < tools.json)
reply() { printf '{"jsonrpc":"2.0","id":%s,%s}\n' "$id" "$1"; }
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  [ -n "$id" ] || continue
  case "$rev:$line" in
    2026:*'"io.modelcontextprotocol/protocolVersion":"2026-07-28"'*'"method":"server/discover"'*|2026:*'"method":"server/discover"'*'"io.modelcontextprotocol/protocolVersion":"2026-07-28"'*)
      reply '"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"cacheScope":"public","ttlMs":0,"resultType":"complete"}' ;;
    2026:*'"method":"tools/list"'*'2026-07-28'*|2026:*'2026-07-28'*'"method":"tools/list"'*)
      reply "\"result\":$tools" ;;
    2025*:*'"method":"initialize"'*)
      reply "\"result\":{\"protocolVersion\":\"$rev\",\"capabilities\":{}}" ;;
    2025*:*'"method":"tools/list"'*) reply "\"result\":$tools" ;;
    *) reply '"error":{"code":-32601,"message":"method not found"}' ;;
  esac
done
"#;

/// A tool whose compensator does not exist (R101, an error).
const TOOLS: &str = r#"{"tools":[{"name":"charge","inputSchema":{"type":"object"},"annotations":{"recovery":{"strategy":"compensation","compensatingOperation":{"operationId":"refund","parameters":{}}}}}]}"#;

fn workspace(config: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.sh"), SERVER).unwrap();
    std::fs::write(dir.path().join("tools.json"), TOOLS).unwrap();
    write_config(dir.path(), config);
    dir
}

fn write_config(dir: &Path, config: &Value) {
    std::fs::write(dir.join("mcp.json"), config.to_string()).unwrap();
}

fn stdio(revision: &str) -> Value {
    json!({"command": "sh", "args": ["server.sh", revision]})
}

/// A loopback Streamable HTTP server speaking only 2026-07-28.
fn http_2026() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            let mut version = String::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let lower = line.trim().to_ascii_lowercase();
                if lower.is_empty() {
                    break;
                }
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if let Some(v) = lower.strip_prefix("mcp-protocol-version:") {
                    version = v.trim().to_owned();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let meta = &request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"];
            let answer = match request["method"].as_str() {
                _ if version != "2026-07-28" || meta != "2026-07-28" => json!({
                    "jsonrpc": "2.0", "id": request["id"],
                    "error": {"code": -32020, "message": "header and _meta disagree"}}),
                Some("server/discover") => json!({"jsonrpc": "2.0", "id": request["id"],
                    "result": {"supportedVersions": ["2026-07-28"], "capabilities": {},
                               "cacheScope": "public", "ttlMs": 0, "resultType": "complete"}}),
                Some("tools/list") => {
                    let tools: Value = serde_json::from_str(TOOLS).unwrap();
                    json!({"jsonrpc": "2.0", "id": request["id"], "result": tools})
                }
                _ => json!({"jsonrpc": "2.0", "id": request["id"],
                            "error": {"code": -32601, "message": "method not found"}}),
            };
            let status = if answer.get("error").is_some() {
                400
            } else {
                200
            };
            let text = answer.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    url
}

fn json_report(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let mut full = vec!["lint", "--format", "json"];
    full.extend_from_slice(args);
    let output = run_in(dir, &full);
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (code(&output), report, stderr)
}

/// Stdout and stderr of a run, as one text.
fn everything(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn files(report: &Value) -> Vec<String> {
    let mut files: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap().to_owned())
        .collect();
    files.dedup();
    files
}

#[test]
fn every_server_of_a_cursor_config_in_every_revision() {
    let config = json!({"mcpServers": {
        "modern": stdio("2026"),
        "current": stdio("2025-11-25"),
        "old": stdio("2025-03-26"),
        "remote": {"url": http_2026()},
        "off": {"command": "sh", "args": ["-c", "exit 9"], "disabled": true},
    }});
    let dir = workspace(&config);
    let (status, report, stderr) = json_report(
        dir.path(),
        &["--config", "mcp.json", "--all-servers", "--verbose"],
    );
    assert_eq!(status, 1, "{stderr}");
    assert_eq!(
        files(&report),
        [
            "mcp.json#modern",
            "mcp.json#current",
            "mcp.json#old",
            "mcp.json#remote"
        ]
    );
    assert!(
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["code"] == "R101")
    );
    for (name, revision) in [
        ("modern", "2026-07-28 (server/discover"),
        ("current", "2025-11-25 (initialize handshake)"),
        ("old", "2025-03-26 (initialize handshake)"),
        ("remote", "2026-07-28 (server/discover"),
    ] {
        let line = format!("server mcp.json#{name}: protocol {revision}");
        assert!(stderr.contains(&line), "{line}\n{stderr}");
    }
    assert!(stderr.contains("mcp.json#off is disabled"), "{stderr}");

    // One server by name; the live document has lines, shown in the human excerpt.
    let output = run_in(
        dir.path(),
        &["lint", "--config", "mcp.json", "--server", "old"],
    );
    assert_eq!(code(&output), 1);
    let human = String::from_utf8(output.stdout).unwrap();
    assert!(human.contains("mcp.json#old:"), "{human}");
    assert!(human.contains("\"operationId\": \"refund\""), "{human}");
}

#[test]
fn a_server_that_cannot_start_is_reported_and_the_others_still_run() {
    let config = json!({"mcpServers": {
        "first": stdio("2025-11-25"),
        "broken": {"command": "sh", "args": ["-c", "echo 'missing API key' >&2; exit 3"]},
        "absent": {"command": "./no-such-server"},
        "last": stdio("2026"),
    }});
    let dir = workspace(&config);
    let (status, report, stderr) =
        json_report(dir.path(), &["--config", "mcp.json", "--all-servers"]);
    assert_eq!(status, 2, "{stderr}");
    assert_eq!(files(&report), ["mcp.json#first", "mcp.json#last"]);
    assert!(
        stderr.contains(
            "error: server mcp.json#broken: the server exited (exit status: 3) before it answered"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("  | missing API key"), "{stderr}");
    assert!(
        stderr.contains("error: server mcp.json#absent: could not start"),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 server(s) could not be linted"),
        "{stderr}"
    );

    // Clean servers and a failed one: still 2, the worst.
    std::fs::write(dir.path().join("tools.json"), r#"{"tools":[]}"#).unwrap();
    let (status, _, _) = json_report(dir.path(), &["--config", "mcp.json", "--all-servers"]);
    assert_eq!(status, 2);
    let (status, _, stderr) = json_report(
        dir.path(),
        &[
            "--config", "mcp.json", "--server", "first", "--server", "last",
        ],
    );
    assert_eq!(status, 0, "{stderr}");
}

#[test]
fn vscode_inputs_env_placeholders_and_secrets() {
    // The server prints its environment's secret on stderr and puts it in a description.
    let leaky = "echo \"token is $API_TOKEN\" >&2; \
                 printf '{\"tools\":[{\"name\":\"t\",\"description\":\"%s\",\"inputSchema\":{\"type\":\"object\"}}]}' \"$API_TOKEN\" > tools.json; \
                 exec sh server.sh 2025-11-25";
    let config = json!({
        "inputs": [{"type": "promptString", "id": "token", "password": true}],
        "servers": {
            "leaky": {"type": "stdio", "command": "sh", "args": ["-c", leaky],
                      "env": {"API_TOKEN": "${input:token}"}, "cwd": "${workspaceFolder}"},
            "crash": {"type": "stdio", "command": "sh",
                      "args": ["-c", "echo \"bad key $KEY\" >&2; exit 1"],
                      "env": {"KEY": "${env:CLIENT_TEST_SECRET}"}},
        }
    });
    let dir = workspace(&config);
    std::fs::create_dir(dir.path().join(".vscode")).unwrap();
    std::fs::rename(
        dir.path().join("mcp.json"),
        dir.path().join(".vscode/mcp.json"),
    )
    .unwrap();
    let output = common::bin_in(dir.path())
        .env("CLIENT_TEST_SECRET", "env-secret-42")
        .args([
            "lint",
            "--config",
            ".vscode/mcp.json",
            "--all-servers",
            "--input",
            "token=in-secret-17",
            "--save",
            "saved",
        ])
        .output()
        .unwrap();
    let all = everything(&output);
    assert_eq!(code(&output), 2, "{all}");
    assert!(
        !all.contains("in-secret-17") && !all.contains("env-secret-42"),
        "{all}"
    );
    assert!(all.contains("bad key ***"), "{all}");
    let saved = std::fs::read_to_string(dir.path().join("saved/leaky.json")).unwrap();
    assert!(saved.contains("\"description\": \"***\""), "{saved}");
    assert!(!saved.contains("in-secret-17"));

    // A missing input or variable names the file, the server and the pointer.
    let output = run_in(
        dir.path(),
        &["lint", "--config", ".vscode/mcp.json", "--server", "leaky"],
    );
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(
            ".vscode/mcp.json: server \"leaky\" at /servers/leaky/env/API_TOKEN: `${input:token}` \
             has no value: give it with --input token=VALUE"
        ),
        "{stderr}"
    );
}

#[test]
fn env_flag_and_malformed_header_never_show_values() {
    let dir = workspace(&json!({"mcpServers": {}}));
    let output = run_in(
        dir.path(),
        &[
            "lint",
            "--env",
            "TOKEN=flag-secret-99",
            "--stdio",
            "--",
            "sh",
            "-c",
            "echo \"no luck with $TOKEN\" >&2; exit 5",
        ],
    );
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("| no luck with ***"), "{stderr}");
    assert!(!stderr.contains("flag-secret-99"), "{stderr}");

    for spec in ["Authorization Bearer hdr-secret-77", "hdr-secret-77"] {
        let output = run_in(
            dir.path(),
            &["lint", "--url", "http://127.0.0.1:9/mcp", "--header", spec],
        );
        assert_eq!(code(&output), 2);
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.starts_with("error: invalid header"), "{stderr}");
        assert!(!stderr.contains("hdr-secret-77"), "{stderr}");
    }
    let output = run_in(
        dir.path(),
        &["lint", "--env", "novalue-secret", "--stdio", "--", "true"],
    );
    assert_eq!(code(&output), 2);
    assert!(
        !String::from_utf8(output.stderr)
            .unwrap()
            .contains("novalue-secret")
    );
}

#[test]
fn config_means_settings_without_server_flags() {
    let dir = workspace(&json!({"mcpServers": {"one": stdio("2026")}}));
    let output = run_in(dir.path(), &["lint", "--config", "mcp.json", "tools.json"]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(
            "mcp.json is an MCP client config, not mcp-recovery.toml settings: add \
                         --server NAME or --all-servers"
        ),
        "{stderr}"
    );
    // With --server, settings still come from the mcp-recovery.toml found upward.
    std::fs::write(
        dir.path().join("mcp-recovery.toml"),
        "ignore = [\"R101\"]\n",
    )
    .unwrap();
    let (status, report, stderr) =
        json_report(dir.path(), &["--config", "mcp.json", "--server", "one"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(report["summary"]["tools"], 1);
    let output = run_in(
        dir.path(),
        &["lint", "--config", "mcp-recovery.toml", "tools.json"],
    );
    assert_eq!(code(&output), 0);
    let output = run_in(dir.path(), &["lint", "--server", "one"]);
    assert_eq!(code(&output), 2);
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("need --config FILE")
    );
}

#[test]
fn fetch_and_census_read_configs_too() {
    let config = json!({"mcpServers": {"a": stdio("2026"), "b": stdio("2025-03-26")}});
    let dir = workspace(&config);
    let output = run_in(
        dir.path(),
        &["fetch", "--config", "mcp.json", "--server", "a"],
    );
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let fetched: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(fetched["tools"][0]["name"], "charge");

    let output = run_in(
        dir.path(),
        &["fetch", "--config", "mcp.json", "--all-servers"],
    );
    assert_eq!(code(&output), 2);
    let output = run_in(
        dir.path(),
        &[
            "fetch",
            "--config",
            "mcp.json",
            "--all-servers",
            "--save",
            "out",
        ],
    );
    assert_eq!(code(&output), 0);
    assert!(dir.path().join("out/a.json").is_file() && dir.path().join("out/b.json").is_file());

    let output = run_in(
        dir.path(),
        &["census", "--live", "mcp.json", "--format", "json"],
    );
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let census: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(census["files"]["tools_lists"], 2, "{census}");
}

/// What `${input:…}` and `${env:…}` put into a server's arguments, its command or its URL is
/// as secret as an environment value: no command and no format shows it, even when the server
/// echoes it back in its tools, on stderr, or fails with it.
#[test]
fn values_substituted_into_arguments_and_urls_never_show() {
    let echo = "echo \"arg is $0\" >&2; \
                printf '{\"tools\":[{\"name\":\"t\",\"description\":\"%s\",\"inputSchema\":{\"type\":\"object\"}}]}' \"$0\" > tools.json; \
                exec sh server.sh 2025-11-25";
    let config = json!({"mcpServers": {
        "echo": {"command": "sh", "args": ["-c", echo, "${input:token}"]},
        "crash": {"command": "sh", "args": ["-c", "echo \"bad $0\" >&2; exit 1",
                                            "--key=${env:CLIENT_ARG_SECRET}"]},
        "remote": {"url": "http://127.0.0.1:9/mcp/${input:path}?key=${input:urlkey}"},
    }});
    let dir = workspace(&config);
    let secrets = [
        "arg-secret-161803",
        "env-secret-141421",
        "url-secret-173205",
        "path-secret-223606",
    ];
    let run = |args: &[&str]| {
        let output = common::bin_in(dir.path())
            .env("CLIENT_ARG_SECRET", secrets[1])
            .args(args)
            .args([
                "--input",
                &format!("token={}", secrets[0]),
                "--input",
                &format!("urlkey={}", secrets[2]),
                "--input",
                &format!("path={}", secrets[3]),
            ])
            .output()
            .unwrap();
        let all = everything(&output);
        for secret in secrets {
            assert!(!all.contains(secret), "{args:?} shows {secret}: {all}");
        }
        (code(&output), all)
    };
    for format in [
        "human", "json", "sarif", "github", "markdown", "gitlab", "junit",
    ] {
        let (status, all) = run(&[
            "lint",
            "--config",
            "mcp.json",
            "--all-servers",
            "--format",
            format,
        ]);
        assert_eq!(status, 2, "{format}: {all}");
        assert!(all.contains("| bad --key=***"), "{format}: {all}");
        // The summary counts servers, not files.
        match format {
            "human" | "markdown" => assert!(all.contains("1 server, 1 tool: "), "{all}"),
            "json" => assert!(all.contains("\"files\": 0,\n    \"servers\": 1,"), "{all}"),
            _ => {}
        }
    }
    run(&[
        "lint",
        "--config",
        "mcp.json",
        "--server",
        "echo",
        "--save",
        "saved.json",
    ]);
    let saved = std::fs::read_to_string(dir.path().join("saved.json")).unwrap();
    assert!(saved.contains("\"description\": \"***\""), "{saved}");
    let (status, all) = run(&["fetch", "--config", "mcp.json", "--server", "echo"]);
    assert_eq!(status, 0, "{all}");
    assert!(
        all.contains("\"description\":\"***\"") || all.contains("\"description\": \"***\""),
        "{all}"
    );
    for server in ["crash", "remote"] {
        let (status, _) = run(&["fetch", "--config", "mcp.json", "--server", server]);
        assert_eq!(status, 2);
    }
    for format in ["human", "json"] {
        run(&["census", "--live", "mcp.json", "--format", format]);
    }
}

/// Every server of a config appears once in every machine format, linted or with the reason it
/// was not (failed to start, timed out, broke the protocol, skipped), and the run exits 2.
#[test]
fn every_source_is_accounted_for_in_every_format() {
    let config = json!({"mcpServers": {
        "good": stdio("2025-11-25"),
        "broken": {"command": "sh", "args": ["-c", "echo 'missing API key' >&2; exit 3"]},
        "garbage": {"command": "sh", "args": ["-c", "read l; echo 'not json'"]},
        "slow": {"command": "sleep", "args": ["30"]},
        "off": {"command": "sh", "disabled": true},
    }});
    let dir = workspace(&config);
    let failed = [
        ("broken", "failed-to-start"),
        ("garbage", "protocol-error"),
        ("slow", "timed-out"),
    ];
    let run = |format: &str| {
        let output = run_in(
            dir.path(),
            &[
                "lint",
                "--config",
                "mcp.json",
                "--all-servers",
                "--total-timeout",
                "1",
                "--format",
                format,
            ],
        );
        assert_eq!(code(&output), 2, "{format}");
        String::from_utf8(output.stdout).unwrap()
    };

    let report: Value = serde_json::from_str(&run("json")).unwrap();
    common::assert_lint_report(&report);
    let sources = report["sources"].as_array().unwrap();
    let status = |name: &str| {
        let source = sources
            .iter()
            .find(|s| s["name"] == format!("mcp.json#{name}"))
            .unwrap_or_else(|| panic!("{name} missing: {report}"));
        assert_eq!(source["kind"], "config");
        source.clone()
    };
    assert_eq!(sources.len(), 5, "{report}");
    let good = status("good");
    assert_eq!(
        (
            &good["status"],
            &good["protocol"],
            &good["tools"],
            &good["findings"]
        ),
        (&json!("linted"), &json!("2025-11-25"), &json!(1), &json!(1))
    );
    assert!(good["error"].is_null());
    for (name, expected) in failed {
        let source = status(name);
        assert_eq!(source["status"], expected, "{source}");
        assert!(source["error"].as_str().unwrap().len() > 10, "{source}");
        assert!(source["tools"].is_null() && source["findings"].is_null());
    }
    assert!(
        status("broken")["error"]
            .as_str()
            .unwrap()
            .contains("missing API key")
    );
    assert_eq!(status("off")["status"], "skipped");
    // The existing fields are all still there.
    assert_eq!(report["summary"]["servers"], 1);
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 1);

    let sarif: Value = serde_json::from_str(&run("sarif")).unwrap();
    let run0 = &sarif["runs"][0];
    let invocation = &run0["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let notifications = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notifications.len(), 4);
    let descriptors = run0["tool"]["driver"]["notifications"].as_array().unwrap();
    for notification in notifications {
        let id = &notification["descriptor"]["id"];
        let index = notification["descriptor"]["index"].as_u64().unwrap() as usize;
        assert_eq!(&descriptors[index]["id"], id);
        let level = if id == "skipped" { "note" } else { "error" };
        assert_eq!(notification["level"], level, "{notification}");
        let uri = notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(uri.starts_with("mcp.json%23"), "{uri}");
    }

    let junit = run("junit");
    assert!(junit.contains("errors=\"3\">"), "{junit}");
    for (name, status) in failed {
        let suite =
            format!("<testsuite name=\"mcp.json#{name}\" tests=\"1\" failures=\"0\" errors=\"1\"");
        assert!(junit.contains(&suite), "{junit}");
        assert!(
            junit.contains(&format!("<error type=\"{status}\"")),
            "{junit}"
        );
    }
    assert!(junit.contains("<skipped message=\"disabled in the config\"/>"));

    let gitlab: Value = serde_json::from_str(&run("gitlab")).unwrap();
    let schema = common::root().join("crates/cli/tests/schemas/gitlab-codeclimate.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for issue in gitlab.as_array().unwrap() {
        assert!(validator.is_valid(issue), "{issue}");
    }
    let checks: Vec<&str> = gitlab
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["check_name"].as_str().unwrap())
        .collect();
    for (_, status) in failed {
        let check = format!("mcp-recovery/{status}");
        assert_eq!(
            checks.iter().filter(|c| **c == check).count(),
            1,
            "{checks:?}"
        );
    }

    let markdown = run("markdown");
    let github = run("github");
    for (name, status) in failed.iter().chain(&[("off", "skipped")]) {
        let row = format!("| mcp\\.json\\#{name} | config | {status} |");
        assert_eq!(markdown.matches(&row).count(), 1, "{markdown}");
        let line = format!("title=mcp-recovery {status}::config mcp.json#{name} was not linted");
        assert_eq!(github.matches(&line).count(), 1, "{github}");
    }

    // census --live states each server the same way.
    let output = run_in(
        dir.path(),
        &[
            "census",
            "--live",
            "mcp.json",
            "--total-timeout",
            "1",
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&output), 2);
    let census: Value = serde_json::from_slice(&output.stdout).unwrap();
    let statuses: Vec<(&str, &str)> = census["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("mcp.json#off", "skipped"),
            ("mcp.json#good", "linted"),
            ("mcp.json#broken", "failed-to-start"),
            ("mcp.json#garbage", "protocol-error"),
            ("mcp.json#slow", "timed-out"),
        ]
    );
}

/// An entry that cannot be used (a missing `envFile`, an unset `${env:…}`, an `${input:…}`
/// without `--input`, a `command` that is not a string) is that entry's `unreadable` source,
/// named with its pointer and what is wrong, and the other servers are still linted; a disabled
/// entry is skipped whatever it holds. A config that is not JSON still fails the whole run.
#[test]
fn a_bad_entry_is_an_unreadable_source_and_the_others_run() {
    let unset = "${env:MCP_RECOVERY_TEST_UNSET}";
    let config = json!({"servers": {
        "good": stdio("2025-11-25"),
        "envfile": {"command": "sh", "args": ["server.sh", "2025-11-25"],
                    "envFile": "missing.env"},
        "needsenv": {"command": "sh", "args": ["server.sh", "2025-11-25"], "env": {"K": unset}},
        "needsinput": {"command": "sh", "args": ["server.sh", "${input:tok}"]},
        "badtype": {"command": 42},
        "off": {"command": unset, "disabled": true},
    }});
    let dir = workspace(&config);
    let broken = [
        ("envfile", "/servers/envfile/envFile: cannot read"),
        (
            "needsenv",
            "/servers/needsenv/env/K: the environment variable MCP_RECOVERY_TEST_UNSET is not set",
        ),
        (
            "needsinput",
            "/servers/needsinput/args/1: `${input:tok}` has no value",
        ),
        (
            "badtype",
            "/servers/badtype/command: `command` must be a non-empty string",
        ),
    ];
    let run = |args: &[&str]| {
        let output = bin_in(dir.path())
            .args(args)
            .env_remove("MCP_RECOVERY_TEST_UNSET")
            .output()
            .unwrap();
        (
            code(&output),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };
    let lint = ["lint", "--config", "mcp.json", "--all-servers", "--format"];
    let (status, stdout, stderr) = run(&[&lint[..], &["json"]].concat());
    assert_eq!(status, 2, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    common::assert_lint_report(&report);
    let sources = report["sources"].as_array().unwrap();
    let source = |name: &str| {
        sources
            .iter()
            .find(|s| s["name"] == format!("mcp.json#{name}"))
            .unwrap_or_else(|| panic!("{name}: {report}"))
    };
    assert_eq!(sources.len(), 6, "{report}");
    assert_eq!(source("good")["status"], "linted");
    assert_eq!(source("off")["status"], "skipped");
    for (name, problem) in broken {
        let entry = source(name);
        assert_eq!(
            (&entry["kind"], &entry["status"]),
            (&"config".into(), &"unreadable".into())
        );
        let error = entry["error"].as_str().unwrap();
        let expected = format!("mcp.json: server \"{name}\" at {problem}");
        assert!(error.starts_with(&expected), "{error}");
        assert_eq!(stderr.matches(&expected).count(), 1, "{stderr}");
    }
    let (status, stdout, _) = run(&[&lint[..], &["sarif"]].concat());
    assert_eq!(status, 2);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    common::assert_sarif(&sarif);
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(
        invocation["toolExecutionNotifications"]
            .as_array()
            .unwrap()
            .len(),
        5
    );

    // One entry named alone is reported the same way.
    let (status, stdout, _) = run(&[
        "lint", "--config", "mcp.json", "--server", "badtype", "--format", "json",
    ]);
    assert_eq!(status, 2);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["sources"][0]["status"], "unreadable", "{report}");

    // census --live counts the good server and lists the others.
    let (status, stdout, _) = run(&["census", "--live", "mcp.json", "--format", "json"]);
    assert_eq!(status, 2);
    let census: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(census["servers"], 1, "{census}");
    let unreadable = census["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "unreadable")
        .count();
    assert_eq!(unreadable, 4, "{census}");

    // A file that is not JSON at all is no config: the whole run fails, with no report.
    std::fs::write(dir.path().join("mcp.json"), "{ not json").unwrap();
    let (status, stdout, stderr) = run(&[&lint[..], &["json"]].concat());
    assert_eq!(status, 2);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("not valid JSON"), "{stderr}");
}

/// `profile` and `suggest` read a server of a client config with `--config FILE --server NAME`
/// (`profile` every one with `--all-servers`); `--server`/`--all-servers` without `--config`, or
/// `--config` without them, is a usage error, never ignored.
#[test]
fn profile_and_suggest_read_a_configured_server() {
    let config = json!({"mcpServers": {"good": stdio("2025-11-25"), "new": stdio("2026")}});
    let dir = workspace(&config);
    let output = run_in(
        dir.path(),
        &[
            "profile", "--config", "mcp.json", "--server", "good", "--format", "json",
        ],
    );
    assert_eq!(code(&output), 0, "{}", everything(&output));
    let profile: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(profile["tools"][0]["tool"], "charge", "{profile}");

    let output = run_in(
        dir.path(),
        &[
            "profile",
            "--config",
            "mcp.json",
            "--all-servers",
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&output), 0, "{}", everything(&output));
    let profiles: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = profiles["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["source"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mcp.json#good", "mcp.json#new"]);

    let output = run_in(
        dir.path(),
        &["suggest", "--config", "mcp.json", "--server", "new"],
    );
    assert_eq!(code(&output), 0, "{}", everything(&output));
    let overlay: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(overlay.is_object(), "{overlay}");

    for args in [
        &["profile", "--server", "nosuch", "tools.json"][..],
        &["profile", "--server", "good"],
        &["suggest", "--all-servers"],
        &["profile", "--config", "mcp.json"],
        &["suggest", "--config", "mcp.json", "tools.json"],
        &["suggest", "--config", "mcp.json", "--all-servers"],
        &["profile", "--config", "mcp.json", "--server", "nosuch"],
    ] {
        let output = run_in(dir.path(), args);
        assert_eq!(code(&output), 2, "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

/// A client config or a registry entry that writes a member twice is refused, naming where: a
/// reviewer reads the first value and a parser keeps the last, so the command that would start
/// is not the one anybody read. Nothing is started.
#[test]
fn configs_and_server_json_writing_a_member_twice_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let config = format!(
        r#"{{"mcpServers": {{"a": {{"command": "true"}}, "a": {{"command": "touch", "args": ["{}"]}}}}}}"#,
        marker.display()
    );
    std::fs::write(dir.path().join("mcp.json"), config).unwrap();
    std::fs::write(
        dir.path().join("server.json"),
        r#"{"name": "x/y", "description": "d", "version": "1", "remotes": [],
            "remotes": [{"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"}]}"#,
    )
    .unwrap();
    for (args, said) in [
        (
            &["lint", "--config", "mcp.json", "--all-servers"][..],
            "/mcpServers/a",
        ),
        (&["census", "--live", "mcp.json"], "/mcpServers/a"),
        (
            &["lint", "--server-json", "server.json"],
            "server.json at /remotes",
        ),
    ] {
        let output = run_in(dir.path(), args);
        assert_eq!(code(&output), 2, "{args:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert!(
            stderr.contains("written more than once"),
            "{args:?}: {stderr}"
        );
    }
    assert!(!marker.exists(), "a server of the config was started");
}
