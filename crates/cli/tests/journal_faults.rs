//! The journal under the faults of its disk and its directory, through the binary: a write the
//! disk has no room for (cut back, the journal stays usable), a record a crash cut in the middle
//! (set aside by the next writer, named by every reader), links planted beside the journal
//! (never followed), `rollback` reading back only what its compensations need, side files
//! bounded with the journal, and a record past that bound refused with every request answered.
#![cfg(unix)]
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs::File;
use std::io::{BufRead, BufReader, Lines, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use common::{audit_verify, big_server, bin_in, cancelled, code, initialize_params, run_in};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");

/// A client of the proxy `command` runs: initialize, then each call in turn until the proxy
/// stops answering; the answers, and what the proxy wrote on stderr.
fn client(dir: &Path, command: &mut Command, calls: &[(&str, Value)]) -> (Vec<Value>, String) {
    let (mut child, mut stdin, mut lines, stderr) = spawn(dir, command);
    let mut answers = Vec::new();
    let requests = std::iter::once(("initialize", initialize_params())).chain(calls.iter().map(
        |(name, arguments)| {
            let params = json!({"name": name, "arguments": arguments});
            ("tools/call", params)
        },
    ));
    for (id, (method, params)) in requests.enumerate() {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if writeln!(stdin, "{request}")
            .and_then(|()| stdin.flush())
            .is_err()
        {
            break;
        }
        let answer = lines.by_ref().map_while(Result::ok).find_map(|line| {
            let message: Value = serde_json::from_str(&line).unwrap();
            (message["id"] == id && message.get("method").is_none()).then_some(message)
        });
        let Some(answer) = answer else { break };
        if id == 0 {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            writeln!(stdin, "{note}").unwrap();
        } else {
            answers.push(answer);
        }
    }
    drop(stdin);
    child.wait().unwrap();
    (answers, std::fs::read_to_string(stderr).unwrap())
}

/// Starts the proxy `command` with its stderr going to `dir`'s `proxy.stderr`: the child, its
/// stdin, the lines of its stdout, and that file.
fn spawn(
    dir: &Path,
    command: &mut Command,
) -> (Child, ChildStdin, Lines<BufReader<ChildStdout>>, PathBuf) {
    let stderr = dir.join("proxy.stderr");
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, stdin, lines, stderr)
}

/// `proxy --journal JOURNAL -- SERVER…` in `dir`.
fn proxy(dir: &Path, journal: &Path, server: &[String]) -> Command {
    proxy_with(dir, journal, &[], server)
}

/// `proxy --journal JOURNAL FLAGS -- SERVER…` in `dir`.
fn proxy_with(dir: &Path, journal: &Path, flags: &[&str], server: &[String]) -> Command {
    let mut command = bin_in(dir);
    command.args(["proxy", "--journal", journal.to_str().unwrap()]);
    command.args(flags).arg("--").args(server);
    command
}

/// `proxy --journal JOURNAL -- SERVER…` in `dir`, run by `sh` after the commands `setup`.
fn proxy_after(dir: &Path, setup: &str, journal: &Path, server: &[String]) -> Command {
    let mut command = Command::new("sh");
    command
        .current_dir(dir)
        .arg("-c")
        .arg(format!("{setup}; exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(["proxy", "--journal", journal.to_str().unwrap(), "--"])
        .args(server);
    command
}

/// `rollback --journal JOURNAL FLAGS --stdio -- SERVER…` in `dir`.
fn rollback(dir: &Path, journal: &Path, flags: &[&str], server: &[String]) -> Output {
    bin_in(dir)
        .args(["rollback", "--journal", journal.to_str().unwrap()])
        .args(flags)
        .args(["--stdio", "--"])
        .args(server)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn orders(n: usize) -> Vec<(&'static str, Value)> {
    (0..n)
        .map(|i| ("create_order", json!({"sku": format!("s-{i}")})))
        .collect()
}

/// A disk that fills up while an outcome of 40 KB is written: the proxy's file-size limit stops
/// the write part way, as a full disk does (SIGXFSZ ignored, so the write fails instead of ending
/// the proxy). The record is cut back, the proxy stops saying why, and the journal stays whole:
/// `audit verify` passes, `rollback` cancels every order whose outcome was journaled, and the
/// next proxy starts on it.
#[test]
fn a_record_the_disk_has_no_room_for_is_cut_back() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, log) = (dir.path().join("j.jsonl"), dir.path().join("calls.jsonl"));
    let server = big_server(dir.path(), &[], &log, 40 << 10);
    let mut limited = proxy_after(dir.path(), "trap '' XFSZ; ulimit -f 192", &journal, &server);
    let (answers, stderr) = client(dir.path(), &mut limited, &orders(8));
    let answered = answers.iter().filter(|a| a.get("result").is_some()).count();
    assert!((1..8).contains(&answered), "{answered} answered\n{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    let bytes = std::fs::read(&journal).unwrap();
    assert!(bytes.ends_with(b"\n"));
    let (status, out) = audit_verify(dir.path(), &journal);
    assert_eq!(status, 0, "{out}");

    let output = rollback(dir.path(), &journal, &[], &server);
    let out = text(&output.stdout);
    assert!(!out.contains("does not verify"), "{out}");
    assert_eq!(cancelled(&log).len(), answered, "{out}");
    // The next proxy starts on it.
    let (_, stderr) = client(dir.path(), &mut proxy(dir.path(), &journal, &server), &[]);
    assert!(!stderr.contains("error"), "{stderr}");
    assert_eq!(audit_verify(dir.path(), &journal).0, 0);
}

/// `kill -9` inside the write of a multi-page record: the journal ends in the first half of
/// the second order's outcome. `audit verify` checks the whole records, names the incomplete
/// line and exits 1; `plan` and `rollback --dry-run` leave it out, saying so; the next writer
/// (`proxy`, `rollback`) moves it to `JOURNAL.torn-…`, says where, and goes on.
#[test]
fn a_record_a_crash_cut_is_set_aside_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, log) = (dir.path().join("j.jsonl"), dir.path().join("calls.jsonl"));
    let server = big_server(dir.path(), &[], &log, 40 << 10);
    client(
        dir.path(),
        &mut proxy(dir.path(), &journal, &server),
        &orders(2),
    );
    let bytes = std::fs::read(&journal).unwrap();
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    assert_eq!(lines.len(), 6);
    let whole: usize = lines[..4].iter().map(|l| l.len()).sum();
    let cut = &bytes[..whole + lines[4].len() / 2];
    std::fs::write(&journal, cut).unwrap();
    let copy = dir.path().join("copy.jsonl");
    std::fs::write(&copy, cut).unwrap();

    let (status, out) = audit_verify(dir.path(), &journal);
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("4 records, chain intact"), "{out}");
    assert!(
        out.contains("line 5: the last line is incomplete") && out.contains("rollback"),
        "{out}"
    );
    let output = run_in(
        dir.path(),
        &[
            "plan",
            "--tools",
            dir.path().join("tools.json").to_str().unwrap(),
            "--trace",
            journal.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("line 5"),
        "{}",
        text(&output.stderr)
    );
    let output = rollback(dir.path(), &journal, &["--dry-run"], &server);
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("it is left out"));
    assert_eq!(std::fs::read(&journal).unwrap(), cut);

    let aside = PathBuf::from(format!(
        "{}.torn-{}",
        journal.display(),
        &hex(&Sha256::digest(&cut[whole..]))[..16]
    ));
    let output = rollback(dir.path(), &journal, &[], &server);
    let err = text(&output.stderr);
    assert!(
        err.contains(&format!("moved to {}", aside.display())),
        "{err}"
    );
    // The second order's outcome is unknown: it needs attention; the first is cancelled.
    assert_eq!(code(&output), 1, "{}", text(&output.stdout));
    assert_eq!(cancelled(&log), [json!("o-1")]);
    assert_eq!(std::fs::read(&aside).unwrap(), &cut[whole..]);
    assert_eq!(audit_verify(dir.path(), &journal).0, 0);

    let (_, stderr) = client(dir.path(), &mut proxy(dir.path(), &copy, &server), &[]);
    assert!(stderr.contains("line 5, "), "{stderr}");
    assert!(stderr.contains(".torn-"), "{stderr}");
    assert_eq!(audit_verify(dir.path(), &copy).0, 0);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Links planted at `JOURNAL.lock` and `JOURNAL.d`, and at a side file, are never followed:
/// `proxy` and `rollback` refuse, naming the path, and the targets stay as they were.
#[test]
fn links_beside_the_journal_are_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, log) = (dir.path().join("j.jsonl"), dir.path().join("calls.jsonl"));
    let server = big_server(dir.path(), &[], &log, 100 << 10);
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();

    let lock = mcp_recovery_journal::lock_path(&journal);
    symlink(&victim, &lock).unwrap();
    let output = proxy(dir.path(), &journal, &server).output().unwrap();
    let refused = |output: &Output, path: &Path| {
        let err = text(&output.stderr);
        assert_eq!(code(output), 2, "{err}");
        let named = format!("{} is a symbolic link", path.display());
        assert!(err.contains(&named), "{err}");
    };
    refused(&output, &lock);
    refused(&rollback(dir.path(), &journal, &[], &server), &lock);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    std::fs::remove_file(&lock).unwrap();

    let side = PathBuf::from(format!("{}.d", journal.display()));
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, &side).unwrap();
    refused(
        &proxy(dir.path(), &journal, &server).output().unwrap(),
        &side,
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    std::fs::remove_file(&side).unwrap();

    // A side file replaced by a link to a copy of itself is not read.
    client(
        dir.path(),
        &mut proxy(dir.path(), &journal, &server),
        &orders(1),
    );
    let file = std::fs::read_dir(&side)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let copy = dir.path().join("copy");
    std::fs::rename(&file, &copy).unwrap();
    symlink(&copy, &file).unwrap();
    let (status, out) = audit_verify(dir.path(), &journal);
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("is a symbolic link"), "{out}");
    let output = rollback(dir.path(), &journal, &[], &server);
    assert_eq!(code(&output), 2);
    assert!(text(&output.stderr).contains("is a symbolic link"));
    assert!(cancelled(&log).is_empty());
}

/// The canonical line of `record` sealed as record `seq` after `prev`: the line and its hash.
fn sealed(mut record: Value, seq: usize, prev: &str) -> (String, String) {
    record["seq"] = json!(seq);
    record["prev"] = json!(prev);
    record["time"] = json!("2026-01-01T00:00:00.000Z");
    record["session"] = json!("s-1");
    let hash = hex(&Sha256::digest(mcp_recovery_journal::canonical(&record)));
    record["hash"] = json!(hash);
    let line = String::from_utf8(mcp_recovery_journal::canonical(&record)).unwrap();
    (line, hash)
}

/// A session that created one order, then read a 60 MB result five times (one side file):
/// `rollback` reads back only what the cancellation needs, never the read-only results, so the
/// 256 MiB it reads back at most are no bar.
#[test]
fn rollback_reads_back_only_what_its_compensations_need() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, log) = (dir.path().join("j.jsonl"), dir.path().join("calls.jsonl"));
    let reader = json!({"name": "get_order", "inputSchema": {"type": "object"},
                        "annotations": {"readOnlyHint": true}});
    let server = big_server(dir.path(), &[reader], &log, 10);
    let pad = 60 << 20;
    let mut body = Vec::with_capacity(pad + 64);
    body.extend_from_slice(b"{\"content\":[],\"structuredContent\":{\"pad\":\"");
    body.resize(body.len() + pad, b'a');
    body.extend_from_slice(b"\"}}");
    let digest = hex(&Sha256::digest(&body));
    let side = PathBuf::from(format!("{}.d", journal.display()));
    std::fs::create_dir(&side).unwrap();
    std::fs::write(side.join(format!("sha256-{digest}")), &body).unwrap();

    let call = |kind: &str, n: usize, name: &str, result: Value| {
        let mut record = json!({"kind": kind, "call": n, "request": n, "name": name,
                                "arguments": {"sku": "a"}});
        if kind == "call.outcome" {
            record["result"] = result;
        } else {
            record["class"] = json!("compensable");
        }
        record
    };
    let created = json!({"content": [], "structuredContent": {"orderId": "o-1"}});
    let mut records = vec![
        json!({"kind": "session.start", "upstream": "big"}),
        call("call.intent", 1, "create_order", Value::Null),
        call("call.outcome", 1, "create_order", created),
    ];
    for n in 2..7 {
        records.push(call("call.intent", n, "get_order", Value::Null));
        let mut outcome = call("call.outcome", n, "get_order", Value::Null);
        outcome["outOfLine"] = json!({"result": {"sha256": digest, "bytes": body.len()}});
        records.push(outcome);
    }
    let mut prev = "0".repeat(64);
    let mut text_ = String::new();
    for (i, record) in records.into_iter().enumerate() {
        let (line, hash) = sealed(record, i + 1, &prev);
        text_.push_str(&line);
        text_.push('\n');
        prev = hash;
    }
    std::fs::write(&journal, text_).unwrap();

    let output = rollback(dir.path(), &journal, &[], &server);
    assert_eq!(
        code(&output),
        0,
        "{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    assert_eq!(cancelled(&log), [json!("o-1")]);
}

/// The bytes of the journal at `journal` and of every file in its `JOURNAL.d`, and how many
/// files that directory holds.
fn journal_and_side_files(journal: &Path) -> (u64, usize) {
    let side = mcp_recovery_journal::side_dir(journal);
    let files: Vec<u64> = std::fs::read_dir(&side)
        .map(|dir| dir.map(|e| e.unwrap().metadata().unwrap().len()).collect())
        .unwrap_or_default();
    let own = std::fs::metadata(journal).unwrap().len();
    (own + files.iter().sum::<u64>(), files.len())
}

/// 40 calls the policy denies, each with its own 1 MB of arguments, through a proxy whose
/// journal may take 64 KiB: their approval records keep the tool's name and the arguments'
/// digest and size, nothing of the arguments, in the line or beside it; the journal stays
/// under its cap, and `audit verify` (ours and the spec's) and `audit export` read it.
#[test]
fn refused_calls_keep_only_the_digest_of_their_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, log) = (dir.path().join("j.jsonl"), dir.path().join("calls.jsonl"));
    let server = big_server(dir.path(), &[], &log, 10);
    let flags = ["--max-file-size", "64K", "--deny", "create_order"];
    let calls: Vec<(&str, Value)> = (0..40)
        .map(|i| {
            let note = format!("{i}-{}", "x".repeat(1 << 20));
            ("create_order", json!({"sku": "s", "note": note}))
        })
        .collect();
    let (answers, stderr) = client(
        dir.path(),
        &mut proxy_with(dir.path(), &journal, &flags, &server),
        &calls,
    );
    assert_eq!(answers.len(), 40, "{stderr}");
    assert!(answers.iter().all(|a| a["result"]["isError"] == true));
    assert!(!log.exists() || std::fs::read_to_string(&log).unwrap().is_empty());
    let (bytes, side_files) = journal_and_side_files(&journal);
    assert_eq!(side_files, 0);
    assert!(bytes <= 64 << 10, "{bytes}");

    let approvals = common::journal_kinds(&journal, "approval");
    assert_eq!(approvals.len(), 40);
    for ((_, arguments), approval) in calls.iter().zip(&approvals) {
        let canonical = mcp_recovery_journal::canonical(arguments);
        let digest = json!({"sha256": hex(&Sha256::digest(&canonical)),
                            "bytes": canonical.len(), "kept": false});
        assert_eq!(approval["name"], "create_order");
        assert_eq!(approval["arguments"], Value::Null);
        assert_eq!(approval["outOfLine"], json!({"arguments": digest}));
    }
    let (status, out) = audit_verify(dir.path(), &journal);
    assert_eq!(status, 0, "{out}");
    let output = run_in(
        dir.path(),
        &[
            "audit",
            "export",
            "--format",
            "csv",
            journal.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout).matches(",refused,").count(), 40);
}

/// Allowed calls whose 100 KB results go beside the journal reach the cap of 256 KiB the
/// journal and its side files share: the third outcome is refused as a record past the cap
/// is, nothing is written past it, the client is told the outcome is unknown, and the journal
/// verifies; `rollback` given room cancels the orders whose outcome was journaled.
#[test]
fn side_files_count_against_the_journals_cap() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, log) = (dir.path().join("j.jsonl"), dir.path().join("calls.jsonl"));
    let server = big_server(dir.path(), &[], &log, 100 << 10);
    let flags = ["--max-file-size", "256K"];
    let (answers, stderr) = client(
        dir.path(),
        &mut proxy_with(dir.path(), &journal, &flags, &server),
        &orders(5),
    );
    // The third call's outcome is unknown; a call sent after the session stopped, before the
    // process ended, was not forwarded.
    assert!(matches!(answers.len(), 3 | 4), "{stderr} {answers:?}");
    assert!(answers[..2].iter().all(|a| a.get("result").is_some()));
    let told = |answer: &Value| {
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        told(&answers[2]).contains("journal") && told(&answers[2]).contains("unknown"),
        "{answers:?}"
    );
    assert!(
        answers[3..]
            .iter()
            .all(|a| told(a).contains("not forwarded")),
        "{answers:?}"
    );
    assert!(
        stderr.contains("past the limit of 262144 bytes"),
        "{stderr}"
    );
    let (bytes, side_files) = journal_and_side_files(&journal);
    assert_eq!(side_files, 2);
    assert!(bytes <= 256 << 10, "{bytes}");
    let (status, out) = audit_verify(dir.path(), &journal);
    assert_eq!(status, 0, "{out}");

    let output = rollback(dir.path(), &journal, &["--max-file-size", "1M"], &server);
    assert_eq!(
        cancelled(&log),
        [json!("o-2"), json!("o-1")],
        "{}",
        text(&output.stdout)
    );
}

/// Two calls forwarded at once, the first answered with a result its outcome record has no
/// room for: the proxy stops with the error on stderr, and answers both calls first, saying the
/// journal cannot be written and their outcome is unknown.
#[test]
fn a_proxy_stopped_by_its_journal_answers_every_request_it_owes() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, log) = (dir.path().join("j.jsonl"), dir.path().join("calls.jsonl"));
    let server = big_server(dir.path(), &[], &log, 30 << 10);
    let mut command = proxy_with(dir.path(), &journal, &["--max-file-size", "20K"], &server);
    let (mut child, mut stdin, mut lines, stderr) = spawn(dir.path(), &mut command);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                            "params": initialize_params()});
    writeln!(stdin, "{initialize}").unwrap();
    lines.next().unwrap().unwrap();
    let mut both = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    for (id, (name, arguments)) in orders(2).into_iter().enumerate() {
        let call = json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}});
        both.push_str(&format!("\n{call}"));
    }
    writeln!(stdin, "{both}").unwrap();
    let answers: Vec<Value> = lines
        .map(|line| serde_json::from_str(&line.unwrap()).unwrap())
        .collect();
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(stderr).unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("past the limit of 20480 bytes"), "{stderr}");
    let mut ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    ids.sort_by_key(|id| id.as_u64());
    assert_eq!(ids, [&json!(1), &json!(2)], "{answers:?}");
    for answer in &answers {
        let told = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            told.contains("journal") && told.contains("unknown"),
            "{told}"
        );
    }
    assert_eq!(audit_verify(dir.path(), &journal).0, 0);
}

/// The files a writer creates beside a journal of mode 0600 take that mode, whatever the
/// umask: the side files of big results, and the incomplete last line a crash left, which the
/// next writer sets aside.
#[test]
fn files_beside_the_journal_take_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (journal, log) = (dir.path().join("j.jsonl"), dir.path().join("calls.jsonl"));
    let server = big_server(dir.path(), &[], &log, 100 << 10);
    std::fs::write(&journal, "").unwrap();
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o600)).unwrap();
    let permissive = || proxy_after(dir.path(), "umask 022", &journal, &server);
    client(dir.path(), &mut permissive(), &orders(2));
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let side_dir = mcp_recovery_journal::side_dir(&journal);
    let side_files: Vec<PathBuf> = std::fs::read_dir(&side_dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(side_files.len(), 2, "{side_files:?}");
    for side_file in &side_files {
        assert_eq!(mode(side_file), 0o600, "{}", side_file.display());
    }
    let bytes = std::fs::read(&journal).unwrap();
    std::fs::write(&journal, &bytes[..bytes.len() - 10]).unwrap();
    let (_, stderr) = client(dir.path(), &mut permissive(), &[]);
    let name = format!("{}.torn-", journal.file_name().unwrap().to_str().unwrap());
    let aside: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_str().unwrap().contains(&name))
        .collect();
    assert_eq!(aside.len(), 1, "{stderr}");
    assert_eq!(mode(&aside[0]), 0o600);
    assert_eq!(mode(&journal), 0o600);
}
