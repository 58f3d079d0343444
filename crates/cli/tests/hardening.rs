//! Hostile repositories: symbolic links out of the tree, FIFOs, devices and oversized inputs are
//! refused (exit 2) without printing a byte of what they point to; every line on stdout and
//! stderr, in every format, is inert; `--isolated` ignores a repository's config; flag values
//! that could overflow end in a usage error, never a panic.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(unix)]

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Output, Stdio};

use common::{bin_in, code, codes, lint_json, order_tools, run_in};
use mcp_recovery_base::text::is_unsafe_char;
use serde_json::{Value, json};

const FORMATS: [&str; 7] = [
    "human", "json", "sarif", "github", "markdown", "gitlab", "junit",
];

/// A file outside the linted tree that must never be printed.
fn secret_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("environ");
    std::fs::write(&path, "GITHUB_TOKEN=ghs_SECRET_VALUE\0HOME=/root\0").unwrap();
    (dir, path)
}

/// A temp directory with `tools.json`: `create_order` compensated by `compensator`.
fn with_tools(compensator: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tools.json"),
        order_tools(compensator, true, true),
    )
    .unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_no_secret(output: &Output) {
    for stream in [&output.stdout, &output.stderr] {
        assert!(!text(stream).contains("SECRET_VALUE"), "{}", text(stream));
    }
}

/// Every line of both streams is inert: no unsafe character but the line breaks, no CR, and
/// no line that the Actions runner would take as a workflow command unless it is one of ours
/// (stdout of `--format github`).
fn assert_inert(output: &Output, github_stdout: bool) {
    for (stream, is_stdout) in [(&output.stdout, true), (&output.stderr, false)] {
        let text = text(stream);
        for line in text.split('\n') {
            assert!(!line.chars().any(is_unsafe_char), "unsafe line {line:?}");
            if !(github_stdout && is_stdout) {
                assert!(!line.trim_start().starts_with("::"), "command {line:?}");
            }
        }
    }
}

#[test]
fn a_linked_input_out_of_the_tree_is_refused() {
    let (_secret_dir, secret) = secret_file();
    let dir = tempfile::tempdir().unwrap();
    symlink(&secret, dir.path().join("tools.json")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    symlink(secret.parent().unwrap(), dir.path().join("sub/linked")).unwrap();
    for file in ["tools.json", "sub/linked/environ"] {
        for format in FORMATS {
            let output = run_in(dir.path(), &["lint", "--format", format, file]);
            assert_eq!(code(&output), 2, "{format}: {}", text(&output.stderr));
            assert_no_secret(&output);
            let stderr = text(&output.stderr);
            assert!(
                stderr.starts_with(&format!("error: cannot read {file}: it is a symbolic link")),
                "{stderr}"
            );
        }
    }
    // A directory named on the command line that is a link out of the tree, too.
    symlink(secret.parent().unwrap(), dir.path().join("outside")).unwrap();
    let output = run_in(dir.path(), &["lint", "outside"]);
    assert_eq!(code(&output), 2, "{}", text(&output.stderr));

    // Explicitly allowed: read, and still never excerpted raw (R001, NUL bytes escaped).
    let output = run_in(dir.path(), &["lint", "--follow-links", "tools.json"]);
    assert_eq!(code(&output), 1, "{}", text(&output.stderr));
    assert_inert(&output, false);
}

#[test]
fn a_link_inside_the_tree_is_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::fs::write(
        dir.path().join("real/tools.json"),
        order_tools("cancel_order", true, true),
    )
    .unwrap();
    symlink("real/tools.json", dir.path().join("tools.json")).unwrap();
    let (status, report) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!(status, 0, "{report}");
}

#[test]
fn a_discovered_config_that_links_out_of_its_tree_is_refused() {
    let (_secret_dir, secret) = secret_file();
    let dir = with_tools("cancel_order");
    symlink(&secret, dir.path().join("mcp-recovery.toml")).unwrap();
    for format in FORMATS {
        let output = run_in(dir.path(), &["lint", "--format", format, "tools.json"]);
        assert_eq!(code(&output), 2, "{format}");
        assert_no_secret(&output);
        assert!(
            text(&output.stderr)
                .starts_with("error: cannot read mcp-recovery.toml: it is a symbolic link"),
            "{}",
            text(&output.stderr)
        );
    }
    // --isolated does not even look at it.
    let (status, report) = lint_json(dir.path(), &["--isolated", "tools.json"]);
    assert_eq!(status, 0, "{report}");

    // A FIFO as config is refused before it is opened (opening would block).
    std::fs::remove_file(dir.path().join("mcp-recovery.toml")).unwrap();
    mkfifo(&dir.path().join("mcp-recovery.toml"));
    let output = run_in(dir.path(), &["lint", "tools.json"]);
    assert_eq!(code(&output), 2);
    assert!(text(&output.stderr).contains("not a regular file but a FIFO"));
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn fifos_devices_and_oversized_inputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.json"), "[]").unwrap();
    mkfifo(&dir.path().join("tools.json"));
    let output = run_in(dir.path(), &["lint", "tools.json"]);
    assert_eq!(code(&output), 2);
    assert_eq!(
        text(&output.stderr),
        "error: cannot read tools.json: it is not a regular file but a FIFO (pipe it to `-` to \
         read it as standard input)\nerror: 1 file(s) could not be read\n"
    );
    for command in [
        &["lint", "/dev/zero"][..],
        &["plan", "--tools", "/dev/zero", "--trace", "/dev/null"],
        &["plan", "--tools", "t.json", "--trace", "/dev/zero"],
        &["convert", "--to", "sep3172", "/dev/zero"],
    ] {
        let output = run_in(dir.path(), command);
        assert_eq!(code(&output), 2, "{command:?}");
        assert!(
            text(&output.stderr).contains("it is not a regular file but a device"),
            "{command:?}: {}",
            text(&output.stderr)
        );
    }

    // Configs and policies too: a FIFO or a device never blocks nor fills the memory.
    std::fs::write(
        dir.path().join("zero.json"),
        r#"{"servers": {"s": {"type": "stdio", "command": "true", "envFile": "/dev/zero"}}}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("j.jsonl"), "").unwrap();
    for (command, said) in [
        (
            &["lint", "--config", "tools.json", "--server", "s"][..],
            "FIFO",
        ),
        (
            &["lint", "--config", "zero.json", "--all-servers"],
            "device",
        ),
        (&["proxy", "--policy", "tools.json", "--", "true"], "FIFO"),
        (
            &["audit", "verify", "j.jsonl", "--policy", "tools.json"],
            "FIFO",
        ),
    ] {
        let output = run_in(dir.path(), command);
        assert_eq!(code(&output), 2, "{command:?}");
        assert!(
            text(&output.stderr).contains(&format!("it is not a regular file but a {said}")),
            "{command:?}: {}",
            text(&output.stderr)
        );
    }

    let big = dir.path().join("big.json");
    std::fs::write(&big, format!("[{}]", "1,".repeat(1500) + "1")).unwrap();
    let output = run_in(dir.path(), &["lint", "--max-file-size", "1K", "big.json"]);
    assert_eq!(code(&output), 2);
    assert_eq!(
        text(&output.stderr),
        "error: cannot read big.json: it is larger than the limit of 1024 bytes (raise it with \
         --max-file-size)\nerror: 1 file(s) could not be read\n"
    );
    let output = run_in(dir.path(), &["lint", "--max-file-size", "4K", "big.json"]);
    assert_eq!(code(&output), 1, "{}", text(&output.stderr));
    let output = run_in(
        dir.path(),
        &[
            "plan",
            "--max-file-size",
            "1K",
            "--tools",
            "big.json",
            "--trace",
            "big.json",
        ],
    );
    assert_eq!(code(&output), 2);
    assert!(text(&output.stderr).contains("larger than the limit"));

    // Standard input is bounded while it is read: an endless stream stops at the cap.
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let output = bin_in(dir.path())
        .args(["lint", "--max-file-size", "1M", "-"])
        .stdin(Stdio::from(zero))
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert!(text(&output.stderr).starts_with("error: cannot read -: it is larger than the limit"));

    for bad in ["0", "12Q", "1.5M", "99999999999G", ""] {
        let output = run_in(dir.path(), &["lint", "--max-file-size", bad, "big.json"]);
        assert_eq!(code(&output), 2, "{bad}");
        assert!(text(&output.stderr).contains("--max-file-size"), "{bad}");
    }
}

#[test]
fn excerpts_never_show_bytes_of_text_that_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"{\"tools\": [\"GITHUB_TOKEN=ghs_SECRET_VALUE".to_vec();
    bytes.extend_from_slice(b"\xff\xfe\"]}\n");
    std::fs::write(dir.path().join("tools.json"), bytes).unwrap();
    for format in FORMATS {
        let output = run_in(dir.path(), &["lint", "--format", format, "tools.json"]);
        assert_eq!(code(&output), 1, "{format}");
        assert_no_secret(&output);
        assert_inert(&output, format == "github");
    }
}

/// A document whose every name, value and key is hostile: terminal escapes (OSC title, OSC 8
/// link, OSC 52 clipboard, CSI clear), C1 controls, DEL, bidi overrides, line separators.
fn hostile_document() -> String {
    let evil = [
        "x\u{1b}]0;pwned\u{7}\u{1b}[2J",
        "\u{1b}]8;;https://e.test\u{1b}\\link\u{1b}]8;;\u{1b}\\",
        "\u{1b}]52;c;cHduZWQ=\u{7}",
        "\u{9b}31m\u{85}\u{7f}",
        "admin\u{202e}txt.exe\u{2066}",
        "a\u{2028}::error::b\r\n::warning::c",
    ];
    let tools: Vec<Value> = evil
        .iter()
        .map(|name| {
            json!({
                "name": name,
                "inputSchema": {"type": "object", "properties": {*name: {"type": "string"}}},
                "annotations": {
                    "recovery": {
                        "strategy": "compensation",
                        "compensatingOperation": {
                            "operationId": format!("undo {name}"),
                            "parameters": {*name: format!("$response.body#/{name}")}
                        }
                    }
                }
            })
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "tools": tools })).unwrap()
}

#[test]
fn every_output_line_is_inert() {
    let dir = tempfile::tempdir().unwrap();
    // Raw C1 and bidi characters are valid inside JSON strings: write them unescaped too.
    let document = hostile_document()
        .replace("\\u009b", "\u{9b}")
        .replace("\\u0085", "\u{85}");
    for file in [
        "tools.json",
        "we\u{1b}[2Jird\u{202e}.json",
        "cr\r::error::x.json",
    ] {
        std::fs::write(dir.path().join(file), &document).unwrap();
        for format in FORMATS {
            let output = run_in(dir.path(), &["lint", "--format", format, file]);
            assert_eq!(code(&output), 1, "{format}: {}", text(&output.stderr));
            assert_inert(&output, format == "github");
            if ["json", "sarif", "gitlab"].contains(&format) {
                let value: Value = serde_json::from_slice(&output.stdout).unwrap();
                assert!(value.is_object() || value.is_array(), "{format}");
            }
        }
        let (_, report) = lint_json(dir.path(), &[file]);
        assert!(codes(&report).contains(&"R101".to_owned()), "{report}");
        std::fs::remove_file(dir.path().join(file)).unwrap();
    }
    // fetch, convert and schema print JSON: unsafe characters become \u escapes, same value.
    std::fs::write(dir.path().join("tools.json"), &document).unwrap();
    let output = run_in(dir.path(), &["convert", "--to", "compensate", "tools.json"]);
    assert_inert(&output, false);
    let converted: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        converted["tools"][4]["name"], "admin\u{202e}txt.exe\u{2066}",
        "{converted}"
    );
}

#[test]
fn config_values_cannot_inject_workflow_commands() {
    let dir = with_tools("cancel_order");
    for config in [
        "ignore = [\"R114\\r::stop-commands::x\"]\n",
        "ignore = [\"R114\\n::error::x\"]\n",
        "ignore = [\"\\u001b]0;pwned\\u0007\"]\n",
        "deny = [\"\\u202ewarnings\"]\n",
        "select = [\"R101\"]\r::error::raw-cr\n",
        "[severity]\n\"R101\\r::warning::x\" = \"info\"\n",
    ] {
        std::fs::write(dir.path().join("mcp-recovery.toml"), config).unwrap();
        for format in FORMATS {
            let output = run_in(dir.path(), &["lint", "--format", format, "tools.json"]);
            assert_eq!(code(&output), 2, "{config:?}");
            assert_inert(&output, false);
        }
    }
}

#[test]
fn isolated_ignores_the_repository_config() {
    let dir = with_tools("void_order");
    std::fs::write(
        dir.path().join("mcp-recovery.toml"),
        "[severity]\nR101 = \"info\"\n",
    )
    .unwrap();
    let (status, _) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!(status, 0, "the config downgrades R101");
    let (status, report) = lint_json(dir.path(), &["--isolated", "tools.json"]);
    assert_eq!(status, 1, "{report}");
    assert!(codes(&report).contains(&"R101".to_owned()));
    // A pinned config outside the repository still applies with --config.
    let pinned = tempfile::tempdir().unwrap();
    let pin = pinned.path().join("pinned.toml");
    std::fs::write(&pin, "deny = [\"warnings\"]\n").unwrap();
    let (status, _) = lint_json(
        dir.path(),
        &["--config", pin.to_str().unwrap(), "tools.json"],
    );
    assert_eq!(status, 1);
    let output = run_in(
        dir.path(),
        &[
            "lint",
            "--isolated",
            "--config",
            pin.to_str().unwrap(),
            "tools.json",
        ],
    );
    assert_eq!(code(&output), 2);
}

#[test]
fn timeouts_out_of_range_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    for value in [
        "0",
        "86401",
        "18446744073709551615",
        "99999999999999999999999",
    ] {
        for command in ["lint", "fetch"] {
            let output = run_in(
                dir.path(),
                &[command, "--timeout", value, "--stdio", "--", "true"],
            );
            assert_eq!(code(&output), 2, "{command} --timeout {value}");
            assert!(
                text(&output.stderr).contains("--timeout"),
                "{}",
                text(&output.stderr)
            );
        }
    }
}

#[test]
fn schema_out_never_writes_through_a_link() {
    let (_secret_dir, secret) = secret_file();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    symlink(&secret, out.join("tool.schema.json")).unwrap();
    let output = run_in(dir.path(), &["schema", "--out", "out"]);
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "GITHUB_TOKEN=ghs_SECRET_VALUE\0HOME=/root\0"
    );
    let written = std::fs::symlink_metadata(out.join("tool.schema.json")).unwrap();
    assert!(written.file_type().is_file());
    let schema: Value =
        serde_json::from_slice(&std::fs::read(out.join("tool.schema.json")).unwrap()).unwrap();
    assert!(schema.is_object());
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

/// A journal of `records` records at `path`, written by the journal crate.
fn write_journal(path: &Path, records: u64) -> String {
    let mut journal = mcp_recovery_journal::Journal::open(path, u64::MAX).unwrap();
    journal.set_sync(false);
    for call in 0..records {
        let fields = json!({"call": call, "name": "create_order", "arguments": {"n": call}});
        let Value::Object(fields) = fields else {
            unreachable!()
        };
        journal
            .append("s-1", mcp_recovery_journal::Kind::CallIntent, fields)
            .unwrap();
    }
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn journals_are_read_under_the_input_cap() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_journal(&dir.path().join("j.jsonl"), 20);
    assert!(written.len() > 1024, "{}", written.len());
    let refused = "error: cannot read j.jsonl: it is larger than the limit of 1024 bytes (raise it \
                   with --max-file-size)\n";
    // Verification, the plan of a journal and a rollback (which appends to it) all refuse it with
    // the one error every input gets.
    for command in [
        &["audit", "verify", "j.jsonl"][..],
        &["plan", "--tools", "j.jsonl", "--trace", "j.jsonl"],
        &[
            "rollback",
            "--dry-run",
            "--journal",
            "j.jsonl",
            "--url",
            "http://127.0.0.1:9/mcp",
        ],
    ] {
        let mut args = vec!["--max-file-size", "1K"];
        args.extend_from_slice(command);
        let output = run_in(dir.path(), &args);
        assert_eq!(code(&output), 2, "{command:?}");
        assert_eq!(text(&output.stderr), refused, "{command:?}");
    }
    let output = run_in(dir.path(), &["audit", "verify", "j.jsonl"]);
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("20 records, chain intact"));

    // An endless journal on standard input stops at the cap instead of growing.
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let output = bin_in(dir.path())
        .args(["--max-file-size", "1M", "audit", "verify", "-"])
        .stdin(Stdio::from(zero))
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert!(text(&output.stderr).starts_with("error: cannot read -: it is larger than the limit"));

    // A FIFO named as the journal is refused before it is opened, so nothing blocks.
    let fifo = dir.path().join("fifo.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let output = run_in(dir.path(), &["audit", "verify", "fifo.jsonl"]);
    assert_eq!(code(&output), 2);
    assert!(text(&output.stderr).contains("not a regular file but a FIFO"));
}

#[test]
fn a_journal_over_the_cap_is_not_appended_to() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let text_before = write_journal(&path, 20);
    // The proxy opens its journal for appending before it starts the server.
    let output = run_in(
        dir.path(),
        &[
            "--max-file-size",
            "1K",
            "proxy",
            "--journal",
            "j.jsonl",
            "--",
            "true",
        ],
    );
    assert_eq!(code(&output), 2, "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stderr),
        "error: cannot read j.jsonl: it is larger than the limit of 1024 bytes (raise it with \
         --max-file-size)\n"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text_before);
}

#[test]
fn census_honours_the_input_cap_with_the_lint_error() {
    let dir = with_tools("cancel_order");
    let size = std::fs::metadata(dir.path().join("tools.json"))
        .unwrap()
        .len();
    assert!(size > 512, "{size}");
    let output = run_in(
        dir.path(),
        &[
            "--max-file-size",
            "512",
            "census",
            "--format",
            "json",
            "tools.json",
        ],
    );
    // Listed, and like every file not read it fails the run, named on stderr.
    assert_eq!(code(&output), 2, "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("cannot read tools.json"),
        "{}",
        text(&output.stderr)
    );
    let census: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(census["servers"], 0, "{census}");
    let listed = &census["not_tools_lists"][0];
    assert_eq!(listed["reason"]["kind"], "too-large", "{census}");
    assert_eq!(listed["reason"]["limit"], 512, "{census}");
    assert_eq!(listed["reason"]["bytes"], size, "{census}");
    let output = run_in(
        dir.path(),
        &["--max-file-size", "512", "census", "tools.json"],
    );
    assert!(
        text(&output.stdout)
            .contains("it is larger than the limit of 512 bytes (raise it with --max-file-size)"),
        "{}",
        text(&output.stdout)
    );
    // The same file under the default cap is counted.
    let output = run_in(dir.path(), &["census", "--format", "json", "tools.json"]);
    let census: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(census["servers"], 1, "{census}");
    // A FIFO is listed as unreadable, never opened.
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("fifo.json"))
        .status()
        .unwrap();
    assert!(made.success());
    let output = run_in(
        dir.path(),
        &["census", "--format", "json", "fifo.json", "tools.json"],
    );
    let census: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(census["servers"], 1, "{census}");
    let reason = census["not_tools_lists"][0]["reason"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("not a regular file but a FIFO"), "{census}");
}

/// Every path a command writes or appends to refuses `-` (and an empty path) as a usage error
/// naming the flag, and creates no file named `-`.
#[test]
fn written_paths_refuse_standard_streams() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tools.json"), r#"{"tools": []}"#).unwrap();
    let cases: [&[&str]; 11] = [
        &["proxy", "--journal", "@", "--", "true"],
        &["rollback", "--journal", "@", "--stdio", "--", "true"],
        &["census", "tools.json", "--svg", "@"],
        &["lint", "tools.json", "--write-baseline", "@"],
        &["lint", "tools.json", "--output-file", "json=@"],
        &["fetch", "--save", "@", "--stdio", "--", "true"],
        &["schema", "--out", "@"],
        &["convert", "tools.json", "--output", "@"],
        &["suggest", "tools.json", "--out", "@"],
        &["schema", "--spec-repo", "@"],
        &["demo-server", "--call-log", "@"],
    ];
    for case in cases {
        for value in ["-", ""] {
            let args: Vec<String> = case.iter().map(|a| a.replace('@', value)).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let output = run_in(dir.path(), &args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(code(&output), 2, "{args:?}: {stderr}");
            let expected = if value == "-" {
                "`-` names standard input or output, which this path cannot be"
            } else {
                "the path is empty"
            };
            assert!(stderr.contains(expected), "{args:?}: {stderr}");
        }
    }
    assert!(!dir.path().join("-").exists());
}

/// The files a run writes: never linted by a later walk, never read as its own input, replaced
/// whole (a link in their place is replaced, not followed out of the tree), and written in full
/// even when the reader of stdout goes away early, with the exit status still saying what was
/// found.
#[test]
fn written_reports_stay_out_of_the_walk_and_never_follow_links() {
    let dir = with_tools("missing_tool");
    let dir = dir.path();
    let lint = |args: &[&str]| code(&run_in(dir, &[&["lint"], args].concat()));
    assert_eq!(lint(&["--output-file", "json=report.json"]), 1);
    assert_eq!(lint(&["--output-file", "json=report.json"]), 1);
    let (_, report) = lint_json(dir, &["--output-file", "json=report.json"]);
    assert_eq!(report["summary"]["files"], 1, "{report}");
    assert_eq!(lint(&["--write-baseline", "baseline.json"]), 0);
    assert_eq!(lint(&["--baseline", "baseline.json"]), 0);
    // A document the run would write over is refused, and left as it was.
    let before = std::fs::read(dir.join("tools.json")).unwrap();
    assert_eq!(lint(&["--output-file", "json=tools.json", "tools.json"]), 2);
    assert_eq!(std::fs::read(dir.join("tools.json")).unwrap(), before);
    // A committed link where a report goes: replaced, the file it led to untouched.
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "ORIGINAL").unwrap();
    symlink(&victim, dir.join("out.sarif")).unwrap();
    assert_eq!(lint(&["--output-file", "sarif=out.sarif", "tools.json"]), 1);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "ORIGINAL");
    assert!(
        !std::fs::symlink_metadata(dir.join("out.sarif"))
            .unwrap()
            .is_symlink()
    );
    // Stdout closed before the first byte: the reports are whole and the findings still count.
    let mut child = bin_in(dir)
        .args(["lint", "--output-file", "json=r.json", "tools.json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let written: Value =
        serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(written["summary"]["files"], 1);
}
