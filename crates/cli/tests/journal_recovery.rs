//! The journal and `rollback` under the faults they must survive, through the binary: a
//! compensator that times out or a server that dies mid-rollback (what was not sent is sent by
//! the rerun), a client restart (the crashed session is found), two writers on one journal (the
//! second is refused or waits), large results (kept beside the journal), and
//! respelled lines (refused by `audit verify` and by the Python verifier of `spec/journal.md`
//! alike).
// The demo server is the binary's hidden `demo-server`: without the `demo` feature there is none.
#![cfg(feature = "demo")]
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{
    audit_verify, big_server, bin_in, calls_at_server, cancelled, code, demo_http, demo_http_with,
    initialize_params, journal_kinds, run_in, wait_for,
};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");

/// One client session through `proxy FLAGS -- SERVER` (or `--url`, in `flags`): initialize,
/// then each tool call in turn; the call results. The client then closes its side.
fn session(dir: &Path, flags: &[&str], server: &[&str], calls: &[(&str, Value)]) -> Vec<Value> {
    let mut command = bin_in(dir);
    command.arg("proxy").args(flags);
    if !server.is_empty() {
        command.arg("--").args(server);
    }
    let (mut child, mut stdin, mut lines) = common::spawn_piped(&mut command);
    let mut ask = |id: usize, method: &str, params: Value| -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        loop {
            let line = lines.next().expect("the proxy answers").unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                if id == 0 {
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                    writeln!(stdin, "{note}").unwrap();
                }
                return message;
            }
        }
    };
    ask(0, "initialize", initialize_params());
    let results = calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| {
            let answer = ask(
                i + 1,
                "tools/call",
                json!({"name": name, "arguments": arguments}),
            );
            answer["result"].clone()
        })
        .collect();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    results
}

/// The demo server's state, read through a proxy without a journal.
fn state(dir: &Path, url: &str) -> Value {
    let results = session(dir, &["--url", url], &[], &[("get_state", json!({}))]);
    results[0]["structuredContent"].clone()
}

/// Reserve and charge: the two effects a rollback undoes (release, then refund).
fn checkout() -> Vec<(&'static str, Value)> {
    vec![
        (
            "reserve_inventory",
            json!({"sku": "sku-widget", "quantity": 2}),
        ),
        (
            "charge_payment",
            json!({"customerId": "c", "amount": 3, "currency": "EUR"}),
        ),
    ]
}

/// A test directory, a journal path and a call-log path in it.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let log = dir.path().join("calls.jsonl");
    (dir, journal, log)
}

fn rollback(dir: &Path, journal: &Path, flags: &[&str], server: &[&str]) -> Output {
    let mut args = vec!["rollback", "--journal", journal.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.extend_from_slice(server);
    run_in(dir, &args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn verified(dir: &Path, journal: &Path) {
    let (status, out) = audit_verify(dir, journal);
    assert_eq!(status, 0, "{out}");
}

/// `rollback --timeout 1` while the refund takes 3 s: the refund's outcome is unknown and the
/// release is journaled as not sent, never as done. The rerun sends the release and, the refund
/// being idempotent, the refund again: the server is back at its start.
#[test]
fn a_timed_out_compensation_leaves_the_rest_to_the_rerun() {
    let (dir, journal, log) = setup();
    let (_server, url) = demo_http_with(&log, &["--slow", "refund_payment=3000"]);
    let start = state(dir.path(), &url);
    let flags = ["--journal", journal.to_str().unwrap(), "--url", &url];
    session(dir.path(), &flags, &[], &checkout());
    assert_ne!(state(dir.path(), &url), start);

    let first = rollback(
        dir.path(),
        &journal,
        &["--timeout", "1", "--url", &url],
        &[],
    );
    let out = stdout(&first);
    assert_eq!(code(&first), 1, "{out}");
    assert!(out.contains("'release_inventory' was not sent"), "{out}");
    assert_eq!(calls_at_server(&log, "release_inventory"), 0);
    let skips = journal_kinds(&journal, "compensation.skip");
    assert!(skips.iter().any(|s| s["status"] == "not-sent"), "{skips:?}");
    assert!(
        journal_kinds(&journal, "compensation.intent")
            .iter()
            .all(|r| r["name"] == "refund_payment")
    );
    verified(dir.path(), &journal);

    let second = rollback(
        dir.path(),
        &journal,
        &["--timeout", "20", "--url", &url],
        &[],
    );
    let out = stdout(&second);
    assert_eq!(code(&second), 0, "{out}");
    assert!(out.contains("2 compensated, 0 already done"), "{out}");
    assert_eq!(calls_at_server(&log, "release_inventory"), 1);
    assert_eq!(calls_at_server(&log, "refund_payment"), 2);
    assert_eq!(state(dir.path(), &url), start);

    // Everything is answered now: a third run sends nothing.
    let third = rollback(
        dir.path(),
        &journal,
        &["--timeout", "20", "--url", &url],
        &[],
    );
    assert_eq!(code(&third), 0, "{}", stdout(&third));
    assert_eq!(calls_at_server(&log, "refund_payment"), 2);
    assert_eq!(calls_at_server(&log, "release_inventory"), 1);
    verified(dir.path(), &journal);
}

/// The server is killed while the refund is in flight: the refund's outcome is unknown, the
/// release was never sent. A rerun against a new server sends both (the refund is idempotent).
#[test]
fn a_server_that_dies_mid_rollback_leaves_the_rest_to_the_rerun() {
    let (dir, journal, log) = setup();
    let server = [BIN, "demo-server", "--call-log", log.to_str().unwrap()];
    let flags = ["--journal", journal.to_str().unwrap()];
    session(dir.path(), &flags, &server, &checkout());

    let pid_file = dir.path().join("server.pid");
    let log1 = dir.path().join("run1.jsonl");
    let script = format!(
        "echo $$ > '{}'; exec '{BIN}' demo-server --call-log '{}' --slow refund_payment=60000",
        pid_file.display(),
        log1.display()
    );
    let child = bin_in(dir.path())
        .args(["rollback", "--journal", journal.to_str().unwrap()])
        .args(["--stdio", "--", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the refund to reach the server", || {
        calls_at_server(&log1, "refund_payment") == 1
    });
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let killed = Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());
    let first = child.wait_with_output().unwrap();
    let out = stdout(&first);
    assert_eq!(code(&first), 1, "{out}");
    assert!(out.contains("'release_inventory' was not sent"), "{out}");
    verified(dir.path(), &journal);

    let log2 = dir.path().join("run2.jsonl");
    let server2 = [BIN, "demo-server", "--call-log", log2.to_str().unwrap()];
    let mut flags = vec!["--stdio", "--"];
    flags.extend_from_slice(&server2);
    // This server is a new process, without the reservation or the charge: both idempotent
    // compensations reach it (the release is retried up to its maxRetries).
    let second = rollback(dir.path(), &journal, &flags, &[]);
    let out = stdout(&second);
    assert!(calls_at_server(&log2, "release_inventory") >= 1, "{out}");
    assert_eq!(calls_at_server(&log2, "refund_payment"), 1, "{out}");
    verified(dir.path(), &journal);
}

/// A client restart leaves an empty last session after the one with effects: `rollback`
/// without `--session` finds the one with compensations left, says which, and restores the
/// state; with two such sessions it lists them and does nothing unless told `--all`.
#[test]
fn rollback_finds_the_sessions_with_compensations_left() {
    let (dir, journal, log) = setup();
    let (_server, url) = demo_http(&log);
    let start = state(dir.path(), &url);
    let flags = ["--journal", journal.to_str().unwrap(), "--url", &url];
    session(dir.path(), &flags, &[], &checkout());
    // The client restarts its server: a new, empty session is the journal's last.
    session(dir.path(), &flags, &[], &[]);
    let crashed = journal_kinds(&journal, "session.start")[0]["session"]
        .as_str()
        .unwrap()
        .to_owned();

    // A session the journal never started (here a prefix of one) is refused, the journal and
    // the server left as they were, naming the sessions there are.
    let before = std::fs::read(&journal).unwrap();
    for dry in [false, true] {
        let mut flags = vec!["--url", &url, "--session", &crashed[..6]];
        flags.extend(dry.then_some("--dry-run"));
        let output = rollback(dir.path(), &journal, &flags, &[]);
        assert_eq!(code(&output), 2, "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("was started in this journal"), "{stderr}");
        assert!(stderr.contains(&crashed), "{stderr}");
    }
    assert_eq!(std::fs::read(&journal).unwrap(), before);
    assert_eq!(calls_at_server(&log, "release_inventory"), 0);

    let output = rollback(dir.path(), &journal, &["--url", &url], &[]);
    let out = stdout(&output);
    assert_eq!(code(&output), 0, "{out}");
    assert!(
        out.contains(&format!("rolling back session {crashed}")),
        "{out}"
    );
    assert!(out.contains("2 compensated"), "{out}");
    assert_eq!(state(dir.path(), &url), start);
    // Nothing is left: a rerun says so and sends nothing.
    let output = rollback(dir.path(), &journal, &["--url", &url], &[]);
    assert_eq!(code(&output), 0);
    assert!(
        stdout(&output).contains("has effects left to roll back"),
        "{}",
        stdout(&output)
    );
    assert_eq!(calls_at_server(&log, "refund_payment"), 1);

    // Two sessions with effects: listed, refused, then rolled back with --all.
    session(dir.path(), &flags, &[], &checkout());
    session(dir.path(), &flags, &[], &checkout()[1..]);
    let output = rollback(dir.path(), &journal, &["--url", &url], &[]);
    let out = stdout(&output);
    assert_eq!(code(&output), 2, "{out}");
    assert!(
        out.contains("2 to compensate") && out.contains("1 to compensate"),
        "{out}"
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--session ID"),
        "{output:?}"
    );
    assert_eq!(calls_at_server(&log, "refund_payment"), 1);
    let output = rollback(dir.path(), &journal, &["--all", "--url", &url], &[]);
    let out = stdout(&output);
    assert_eq!(code(&output), 0, "{out}");
    assert_eq!(out.matches("compensated").count(), 2, "{out}");
    assert_eq!(state(dir.path(), &url), start);
    verified(dir.path(), &journal);
}

/// The proxy was given a secret (a header value) that the charge's transaction id happens to
/// hold: the journal keeps the id as `***` and marks the record `redacted`. A rollback from the
/// journal releases the reservation and refuses to refund `***`, saying why; the charge stays.
#[test]
fn a_value_the_journal_redacted_is_never_sent_back() {
    let (dir, journal, log) = setup();
    let (_server, url) = demo_http(&log);
    let flags = [
        "--journal",
        journal.to_str().unwrap(),
        "--url",
        &url,
        "--header",
        "X-Probe: txn-2",
    ];
    let results = session(dir.path(), &flags, &[], &checkout());
    assert_eq!(results[1]["structuredContent"]["transactionId"], "txn-2");
    let outcomes = journal_kinds(&journal, "call.outcome");
    assert_eq!(outcomes[0].get("redacted"), None, "{outcomes:?}");
    assert_eq!(outcomes[1]["redacted"], true, "{outcomes:?}");
    assert_eq!(
        outcomes[1]["result"]["structuredContent"]["transactionId"],
        "***"
    );
    verified(dir.path(), &journal);

    // The rollback's own records keep out the secrets it was given: here the reservation id.
    let reservation = outcomes[0]["result"]["structuredContent"]["reservationId"]
        .as_str()
        .unwrap()
        .to_owned();
    let probe = format!("X-Probe: {reservation}");
    let output = rollback(
        dir.path(),
        &journal,
        &["--url", &url, "--header", &probe],
        &[],
    );
    let out = stdout(&output);
    assert_eq!(code(&output), 1, "{out}");
    let released = journal_kinds(&journal, "compensation.intent");
    assert_eq!(released[0]["name"], "release_inventory", "{released:?}");
    // With the class the policy judged it by, which an audit judges it by too.
    assert!(released[0]["class"].is_string(), "{released:?}");
    assert_eq!(released[0]["redacted"], true, "{released:?}");
    assert_eq!(released[0]["arguments"]["reservationId"], "***");
    let text = std::fs::read_to_string(&journal).unwrap();
    let written_by_rollback = &text[text.find("\"rollback.start\"").unwrap()..];
    assert!(
        !written_by_rollback.contains(&reservation),
        "{written_by_rollback}"
    );
    assert!(
        out.contains("parameter 'transactionId' would be sent with `***` in it"),
        "{out}"
    );
    assert_eq!(calls_at_server(&log, "release_inventory"), 1);
    assert_eq!(calls_at_server(&log, "refund_payment"), 0);
    let after = state(dir.path(), &url);
    assert!(after["charges"].get("txn-2").is_some(), "{after:#}");
    assert_eq!(after["reservations"], json!({}), "{after:#}");
    verified(dir.path(), &journal);
}

/// Two proxies on one journal: the second is refused, naming the first (pid, command, since
/// when), or waits for it with `--wait-lock`; the journal stays one chain.
#[test]
fn a_second_writer_of_a_journal_is_refused_or_waits() {
    let (dir, journal, log) = setup();
    let server = [BIN, "demo-server", "--call-log", log.to_str().unwrap()];
    let mut first = bin_in(dir.path())
        .args(["proxy", "--journal", journal.to_str().unwrap(), "--"])
        .args(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = first.id().to_string();
    let lock = PathBuf::from(format!("{}.lock", journal.display()));
    wait_for("the first proxy to take the lock", || {
        std::fs::read_to_string(&lock).is_ok_and(|t| t.contains(&pid))
    });

    let mut second = vec!["proxy", "--journal", journal.to_str().unwrap(), "--"];
    second.extend_from_slice(&server);
    let refused = run_in(dir.path(), &second);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(code(&refused), 2, "{stderr}");
    assert!(
        stderr.contains(&format!("pid {pid} (mcp-recovery proxy) since 20")),
        "{stderr}"
    );
    assert!(stderr.contains("--wait-lock"), "{stderr}");
    let refused = rollback(dir.path(), &journal, &["--stdio", "--"], &server);
    assert_eq!(code(&refused), 2);
    assert!(String::from_utf8_lossy(&refused.stderr).contains(&format!("pid {pid}")));

    // The first proxy's client goes away while the second waits.
    let stdin = first.stdin.take().unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        drop(stdin);
        first.wait().unwrap()
    });
    let mut waiting = vec!["--journal", journal.to_str().unwrap(), "--wait-lock", "30"];
    waiting.extend_from_slice(&["--"]);
    waiting.extend_from_slice(&server);
    session(dir.path(), &waiting, &[], &checkout());
    assert!(releaser.join().unwrap().success());
    assert_eq!(journal_kinds(&journal, "session.start").len(), 2);
    verified(dir.path(), &journal);
}

/// Two results of 5 MiB through a proxy whose journal and side files may take 16 MiB: the
/// journal stays small (the bodies are beside it, by digest), verifies, opens again, and
/// `rollback` reads the order id back from the side file to cancel both orders.
#[test]
fn large_results_are_kept_beside_the_journal() {
    let (dir, journal, log) = setup();
    let owned = big_server(dir.path(), &[], &log, 5 << 20);
    let server: Vec<&str> = owned.iter().map(String::as_str).collect();
    let flags = [
        "--max-file-size",
        "16M",
        "--journal",
        journal.to_str().unwrap(),
    ];
    let orders = [
        ("create_order", json!({"sku": "a"})),
        ("create_order", json!({"sku": "b"})),
    ];
    let results = session(dir.path(), &flags, &server, &orders);
    assert_eq!(results[1]["structuredContent"]["orderId"], "o-2");
    let size = std::fs::metadata(&journal).unwrap().len();
    assert!(size < 64 * 1024, "{size}");
    let side = PathBuf::from(format!("{}.d", journal.display()));
    assert_eq!(std::fs::read_dir(&side).unwrap().count(), 2);
    let output = run_in(
        dir.path(),
        &[
            "--max-file-size",
            "16M",
            "audit",
            "verify",
            journal.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&output), 0, "{}", stdout(&output));
    // The next proxy starts on it.
    session(dir.path(), &flags, &server, &[]);

    let mut args = vec!["--max-file-size", "16M", "rollback", "--all"];
    args.extend_from_slice(&["--journal", journal.to_str().unwrap(), "--stdio", "--"]);
    args.extend_from_slice(&server);
    let output = run_in(dir.path(), &args);
    assert_eq!(
        code(&output),
        0,
        "{} {}",
        stdout(&output),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(cancelled(&log), [json!("o-2"), json!("o-1")]);

    // A side file edited afterwards breaks the line that names it.
    let first = std::fs::read_dir(&side)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut body = std::fs::read(&first).unwrap();
    body[100] = b'y';
    std::fs::write(&first, body).unwrap();
    let (status, out) = audit_verify(dir.path(), &journal);
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("sha256"), "{out}");
    let theirs = Command::new("python3")
        .arg(common::python_verifier(dir.path()))
        .arg(&journal)
        .output()
        .unwrap();
    assert_eq!(
        verdict(theirs.status.code(), &stdout(&theirs)),
        verdict(Some(status), &out)
    );
    std::fs::remove_file(&first).unwrap();
    let (status, out) = audit_verify(dir.path(), &journal);
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("cannot be read"), "{out}");
}

/// The proxy's own rollback reaches past its window into the journal, and reads the big
/// result of the older call back from its side file to compensate it.
#[test]
fn the_proxy_reads_big_results_back_past_its_rollback_window() {
    let (dir, journal, log) = setup();
    let failing = json!({"name": "fail_order", "inputSchema": {"type": "object"}});
    let owned = big_server(dir.path(), &[failing], &log, 200 << 10);
    let server: Vec<&str> = owned.iter().map(String::as_str).collect();
    let flags = [
        "--journal",
        journal.to_str().unwrap(),
        "--on-failure",
        "rollback",
        "--rollback-window",
        "1",
    ];
    let calls = [
        ("create_order", json!({"sku": "a"})),
        ("create_order", json!({"sku": "b"})),
        ("fail_order", json!({})),
    ];
    session(dir.path(), &flags, &server, &calls);
    assert!(std::fs::metadata(&journal).unwrap().len() < 64 * 1024);
    assert_eq!(cancelled(&log), [json!("o-2"), json!("o-1")]);
    verified(dir.path(), &journal);
}

/// The line a verifier names (`line N:`), or 0 for a fault with no line (a truncation, for
/// the Python verifier); `None` when the journal verifies.
fn verdict(status: Option<i32>, out: &str) -> Option<usize> {
    match status {
        Some(0) => None,
        Some(1) => Some(
            out.split("line ")
                .nth(1)
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
        ),
        other => panic!("exit status {other:?}: {out}"),
    }
}

/// Every tampered copy of a journal (edited, cut, reordered, respelled, not UTF-8, side files
/// edited or removed): `audit verify` and the reference verifier agree on whether it verifies
/// and at which line.
#[test]
fn audit_verify_agrees_with_the_reference_verifier() {
    let (dir, journal, log) = setup();
    let server = [BIN, "demo-server", "--call-log", log.to_str().unwrap()];
    let flags = ["--journal", journal.to_str().unwrap()];
    let mut calls = checkout();
    calls.push(("get_state", json!({"K": "\u{202e}x"})));
    session(dir.path(), &flags, &server, &calls);
    let text = std::fs::read(&journal).unwrap();
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    assert!(lines.len() >= 6);
    let join = |lines: &[Vec<u8>]| lines.concat();
    let owned: Vec<Vec<u8>> = lines.iter().map(|l| l.to_vec()).collect();
    // The first line with `from`, respelled.
    let replaced = |from: &str, to: &str| {
        let mut copy = owned.clone();
        let index = copy
            .iter()
            .position(|l| String::from_utf8_lossy(l).contains(from))
            .unwrap_or_else(|| panic!("no line has {from}"));
        let line = String::from_utf8(copy[index].clone()).unwrap();
        copy[index] = line.replacen(from, to, 1).into_bytes();
        join(&copy)
    };
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("intact", text.clone()),
        ("edited", replaced("\"quantity\":2", "\"quantity\":20")),
        (
            "extra space",
            replaced("\"kind\":\"call.outcome\"", "\"kind\": \"call.outcome\""),
        ),
        ("escaped letter", replaced("\"K\":", "\"\\u004b\":")),
        ("escaped slash", replaced("sku-widget", "sku\\/widget")),
        (
            "duplicate member",
            replaced("{\"arguments\"", "{\"seq\":3,\"arguments\""),
        ),
        ("added member", replaced("{\"", "{\"zz\":1,\"")),
        ("truncated", text[..text.len() - 5].to_vec()),
        ("no newline", text[..text.len() - 1].to_vec()),
        ("blank line", [&text[..], b"\n"].concat()),
        ("crlf", replaced("}\n", "}\r\n")),
        ("bom", [b"\xef\xbb\xbf", &text[..]].concat()),
    ];
    let mut invalid = owned.clone();
    let at = invalid[2].iter().position(|&b| b == b'u').unwrap();
    invalid[2][at] = 0xff;
    cases.push(("invalid UTF-8", join(&invalid)));
    let mut removed = owned.clone();
    removed.remove(2);
    cases.push(("removed", join(&removed)));
    let mut swapped = owned.clone();
    swapped.swap(3, 4);
    cases.push(("swapped", join(&swapped)));

    let verifier = common::python_verifier(dir.path());
    let mut disagreements = Vec::new();
    for (name, bytes) in &cases {
        let path = dir.path().join(format!("{}.jsonl", name.replace(' ', "-")));
        std::fs::write(&path, bytes).unwrap();
        let ours = run_in(dir.path(), &["audit", "verify", path.to_str().unwrap()]);
        let theirs = Command::new("python3")
            .arg(&verifier)
            .arg(&path)
            .output()
            .expect("python3 runs");
        let ours_at = verdict(ours.status.code(), &stdout(&ours));
        let theirs_at = verdict(theirs.status.code(), &stdout(&theirs));
        let agree = match (ours_at, theirs_at) {
            (None, None) => true,
            (Some(a), Some(b)) => a == b || b == 0,
            _ => false,
        };
        if !agree || (*name == "intact") != ours_at.is_none() {
            disagreements.push(format!(
                "{name}: audit verify {ours_at:?} ({}), python {theirs_at:?} ({})",
                stdout(&ours).trim(),
                stdout(&theirs).trim()
            ));
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
