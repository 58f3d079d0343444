//! `proxy`, `audit verify` and `rollback` end to end: the binary's hidden `demo-server` behind
//! the proxy, driven over JSON-RPC lines; faults (kill -9 of the proxy, of the server and of
//! `rollback`), hostile servers, and the journal afterwards.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(feature = "demo")]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use common::{bin_in, code, run_in};
use mcp_recovery_base::text::is_unsafe_char;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");

/// The proxy as a child, with a reader thread on its stdout.
struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    next_id: u64,
    /// Methods of the server's requests and notifications seen while waiting.
    seen: Vec<String>,
    /// Speak 2026-07-28: no `initialize`, the version in every request's `_meta`.
    per_request: bool,
}

impl Proxy {
    fn start(dir: &Path, flags: &[&str], server: &[&str]) -> Proxy {
        let mut command = bin_in(dir);
        command.arg("proxy").args(flags).arg("--").args(server);
        Proxy::spawn(dir, command)
    }

    /// Starts `command`, a `proxy` command line.
    fn spawn(dir: &Path, command: Command) -> Proxy {
        let (mut child, lines) = spawn_piped(dir, command, |line| {
            serde_json::from_str::<Value>(&line).expect("stdout carries only JSON")
        });
        let stdin = child.stdin.take();
        Proxy {
            child,
            stdin,
            lines,
            next_id: 0,
            seen: Vec::new(),
            per_request: false,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns the response with its id (within `limit`).
    fn request_within(&mut self, method: &str, mut params: Value, limit: Duration) -> Value {
        if self.per_request {
            params["_meta"] = per_request_meta();
        }
        self.next_id += 1;
        let id = self.next_id;
        // Built without `json!`, which would respell the numbers of `params`.
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        message["params"] = params;
        self.send(&message);
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method} within {limit:?}"));
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            // Requests from the server are answered like a client would.
            if let Some(method) = message["method"].as_str() {
                self.seen.push(method.to_owned());
                if message.get("id").is_some() {
                    let result = match method {
                        "roots/list" => json!({"roots": []}),
                        _ => json!({}),
                    };
                    let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                    self.send(&answer);
                }
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_within(method, params, Duration::from_secs(30))
    }

    fn initialize(&mut self) {
        if self.per_request {
            let found = self.request("server/discover", json!({}));
            assert_eq!(
                found["result"]["supportedVersions"][0], "2026-07-28",
                "{found}"
            );
            return;
        }
        let answer = self.request("initialize", common::initialize_params());
        assert!(answer["result"]["protocolVersion"].is_string(), "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let mut params = json!({"name": name});
        params["arguments"] = arguments;
        let answer = self.request("tools/call", params);
        answer["result"].clone()
    }

    fn state(&mut self) -> Value {
        self.call("get_state", json!({}))["structuredContent"].clone()
    }

    /// Closes stdin and waits for the exit status.
    fn finish(mut self) -> i32 {
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "the proxy did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// Starts `command` (a `proxy` command line) with its stderr appended to `proxy.stderr` of the
/// test directory `dir` (every proxy of a directory shares it), and its stdout lines, each
/// read by `read`, on a channel.
fn spawn_piped<T: Send + 'static>(
    dir: &Path,
    mut command: Command,
    read: fn(String) -> T,
) -> (Child, Receiver<T>) {
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("proxy.stderr"))
        .unwrap();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr);
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if sender.send(read(line)).is_err() {
                return;
            }
        }
    });
    (child, lines)
}

/// The demo server as the upstream: this binary's hidden `demo-server`, logging its calls.
fn demo(log: &Path, extra: &[&str]) -> Vec<String> {
    let mut command = vec![
        BIN.to_owned(),
        "demo-server".to_owned(),
        "--call-log".to_owned(),
        log.display().to_string(),
    ];
    command.extend(extra.iter().map(|s| (*s).to_owned()));
    command
}

/// What the proxies of the test directory `dir` wrote on stderr.
fn proxy_stderr(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("proxy.stderr")).unwrap_or_default()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

use common::{
    audit_verify as verify, calls_at_server, journal_kinds as kinds, journal_records as records,
    wait_for,
};

fn tools_file(dir: &Path) -> PathBuf {
    let output = run_in(dir, &["fetch", "--stdio", "--", BIN, "demo-server"]);
    assert_eq!(code(&output), 0);
    let path = dir.join("tools.json");
    std::fs::write(&path, &output.stdout).unwrap();
    path
}

/// A proxy with a journal that rolls back on failure, in front of the demo server started with
/// `extra`; also the journal and the server's call log.
fn rolling_back(dir: &Path, extra: &[&str]) -> (Proxy, PathBuf, PathBuf) {
    let journal = dir.join("journal.jsonl");
    let log = dir.join("calls.jsonl");
    let server = demo(&log, extra);
    let flags = [
        "--journal",
        journal.to_str().unwrap(),
        "--on-failure",
        "rollback",
    ];
    (Proxy::start(dir, &flags, &strs(&server)), journal, log)
}

/// Reserve and charge, then a failing shipment: the proxy rolls back before answering.
#[test]
fn a_failed_workflow_is_rolled_back_and_the_journal_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, journal, log) = rolling_back(dir.path(), &[]);
    let (start, end) = failing_workflow(&mut proxy);
    assert_eq!(end, start);
    let listed = proxy.request("tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 7);
    assert_eq!(proxy.finish(), 0);

    assert_eq!(calls_at_server(&log, "refund_payment"), 1);
    assert_eq!(calls_at_server(&log, "release_inventory"), 1);
    let (status, out) = verify(dir.path(), &journal);
    assert_eq!(status, 0, "{out}");
    let outcomes = kinds(&journal, "compensation.outcome");
    assert_eq!(outcomes.len(), 2);
    assert_eq!(outcomes[0]["name"], "refund_payment");
    assert_eq!(outcomes[1]["name"], "release_inventory");
    // Every intent is on disk before its outcome.
    let all = records(&journal);
    for outcome in all.iter().filter(|r| r["kind"] == "call.outcome") {
        let intent = all
            .iter()
            .position(|r| r["kind"] == "call.intent" && r["call"] == outcome["call"])
            .unwrap();
        let at = all.iter().position(|r| r == outcome).unwrap();
        assert!(intent < at);
    }

    // The journal reads as a plan trace directly.
    let tools = tools_file(dir.path());
    let output = run_in(
        dir.path(),
        &[
            "plan",
            "--tools",
            tools.to_str().unwrap(),
            "--trace",
            journal.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
    let statuses: Vec<&str> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert!(statuses.contains(&"compensate"), "{plan}");
    assert!(statuses.contains(&"failed"), "{plan}");
    // --session keeps one session's calls.
    let session = records(&journal)[0]["session"].as_str().unwrap().to_owned();
    for (id, steps) in [(session.as_str(), statuses.len()), ("another", 0)] {
        let output = run_in(
            dir.path(),
            &[
                "plan",
                "--tools",
                tools.to_str().unwrap(),
                "--trace",
                journal.to_str().unwrap(),
                "--format",
                "json",
                "--session",
                id,
            ],
        );
        let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(plan["steps"].as_array().unwrap().len(), steps);
    }
}

/// A window of one effectful call: read-only calls never take its place; with a journal the
/// older calls are read back from it, without one the rollback says what it leaves undone.
#[test]
fn calls_past_the_rollback_window_are_read_back_or_reported() {
    for with_journal in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        let log = dir.path().join("calls.jsonl");
        let server = demo(&log, &[]);
        let mut flags = vec!["--on-failure", "rollback", "--rollback-window", "1"];
        if with_journal {
            flags.extend(["--journal", journal.to_str().unwrap()]);
        }
        let mut proxy = Proxy::start(dir.path(), &flags, &strs(&server));
        let (start, end) = failing_workflow(&mut proxy);
        assert_eq!(proxy.finish(), 0);
        let stderr = proxy_stderr(dir.path());
        // The get_state calls after the charge did not push it out of the window.
        assert_eq!(calls_at_server(&log, "refund_payment"), 1, "{stderr}");
        if with_journal {
            assert_eq!(end, start, "{stderr}");
            assert_eq!(calls_at_server(&log, "release_inventory"), 1);
            assert!(!stderr.contains("beyond the rollback window"), "{stderr}");
            assert_eq!(verify(dir.path(), &journal).0, 0);
        } else {
            assert_ne!(end, start);
            assert_eq!(calls_at_server(&log, "release_inventory"), 0);
            assert!(
                stderr.contains(
                    "1 earlier effectful call (call 2) is beyond the rollback window of 1 and the proxy runs without a journal: not compensated"
                ),
                "{stderr}"
            );
            assert!(
                stderr.contains("1 compensated, 0 failed, 1 skipped"),
                "{stderr}"
            );
        }
    }
}

/// `_meta` of a 2026-07-28 request.
fn per_request_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}})
}

/// A 2026-07-28 client and a 2026-07-28 server (no `initialize`): discovery passes through,
/// the proxy's own tools/list and compensating calls carry the client's version, and the
/// failed workflow is rolled back. The same with a server that speaks both revisions.
#[test]
fn a_2026_07_28_client_and_server_behind_the_proxy() {
    for revisions in ["2026-07-28", "both"] {
        let dir = tempfile::tempdir().unwrap();
        let (mut proxy, journal, log) = rolling_back(dir.path(), &["--revisions", revisions]);
        proxy.per_request = true;
        let (start, end) = failing_workflow(&mut proxy);
        assert_eq!(end, start);
        // Results reach the client as the server wrote them.
        let state = proxy.call("get_state", json!({}));
        assert_eq!(state["resultType"], "complete", "{state}");
        assert_eq!(proxy.finish(), 0);
        let stderr = proxy_stderr(dir.path());
        assert!(
            stderr.contains("reserve_inventory                compensable"),
            "{stderr}"
        );
        assert_eq!(calls_at_server(&log, "refund_payment"), 1, "{stderr}");
        assert_eq!(calls_at_server(&log, "release_inventory"), 1);
        assert_eq!(verify(dir.path(), &journal).0, 0);
    }
}

/// The proxy does not translate between revisions: what one side cannot speak, the other
/// side's own error says, unchanged, and the client may fall back.
#[test]
fn mixed_revisions_pass_through_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    // A 2025-11-25 client and a 2026-07-28-only server: the server's refusal of `initialize`.
    let server = demo(&log, &["--revisions", "2026-07-28"]);
    let mut proxy = Proxy::start(dir.path(), &[], &strs(&server));
    let refused = proxy.request("initialize", common::initialize_params());
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("speaks MCP 2026-07-28 only"),
        "{refused}"
    );
    assert_eq!(proxy.finish(), 0);

    // A 2026-07-28 client and an older server: discovery fails, the client falls back to
    // `initialize`, and the proxy's own requests stop carrying the 2026-07-28 version.
    let server = demo(&log, &["--revisions", "2025-11-25"]);
    let mut proxy = Proxy::start(dir.path(), &["--on-failure", "rollback"], &strs(&server));
    proxy.per_request = true;
    let found = proxy.request("server/discover", json!({}));
    proxy.per_request = false;
    assert_eq!(found["error"]["code"], -32601, "{found}");
    let (start, end) = failing_workflow(&mut proxy);
    assert_eq!(end, start);
    assert_eq!(proxy.finish(), 0);
    assert_eq!(calls_at_server(&log, "refund_payment"), 1);
}

#[test]
fn denials_and_approvals_by_command() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let log = dir.path().join("calls.jsonl");
    let server = demo(&log, &[]);
    let seen = dir.path().join("impact.json");
    let approver = format!("cat > '{}'; exit 1", seen.display());
    let mut proxy = Proxy::start(
        dir.path(),
        &[
            "--journal",
            journal.to_str().unwrap(),
            "--deny",
            "charge_*",
            "--ask",
            "reserve_inventory",
            "--approve-with",
            &approver,
        ],
        &strs(&server),
    );
    proxy.initialize();
    let denied = proxy.call(
        "charge_payment",
        json!({"customerId": "c", "amount": 1, "currency": "EUR"}),
    );
    assert_eq!(denied["isError"], true);
    assert!(
        denied["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("refused"),
        "{denied}"
    );
    let refused = proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 1}),
    );
    assert_eq!(refused["isError"], true);
    assert_eq!(proxy.finish(), 0);
    // The server never saw either call.
    assert_eq!(calls_at_server(&log, "charge_payment"), 0);
    assert_eq!(calls_at_server(&log, "reserve_inventory"), 0);
    // The approver saw the impact: tool, arguments, class and the compensation.
    let impact: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(impact["tool"], "reserve_inventory");
    assert_eq!(impact["arguments"]["quantity"], 1);
    assert_eq!(impact["class"], "compensable");
    assert_eq!(impact["compensation"]["tool"], "release_inventory");
    let approvals = kinds(&journal, "approval");
    assert_eq!(approvals.len(), 2);
    assert_eq!(approvals[0]["decision"], "deny");
    assert_eq!(approvals[0]["by"], "policy");
    assert_eq!(approvals[1]["by"], "command");

    // An approver that exits 0 lets the call through.
    let mut proxy = Proxy::start(
        dir.path(),
        &["--ask", "reserve_inventory", "--approve-with", "exit 0"],
        &strs(&server),
    );
    proxy.initialize();
    let approved = proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 1}),
    );
    assert!(approved.get("isError").is_none(), "{approved}");
    assert_eq!(proxy.finish(), 0);
    assert_eq!(calls_at_server(&log, "reserve_inventory"), 1);
}

#[test]
fn a_policy_file_gates_by_class_and_glob() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let server = demo(&log, &[]);
    let policy = dir.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[classes]\ncompensable = \"deny\"\n[[tools]]\nmatch = \"reserve_*\"\naction = \"allow\"\n",
    )
    .unwrap();
    let mut proxy = Proxy::start(
        dir.path(),
        &["--policy", policy.to_str().unwrap()],
        &strs(&server),
    );
    proxy.initialize();
    let allowed = proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 1}),
    );
    assert!(allowed.get("isError").is_none(), "{allowed}");
    let denied = proxy.call(
        "charge_payment",
        json!({"customerId": "c", "amount": 1, "currency": "EUR"}),
    );
    assert_eq!(denied["isError"], true);
    assert_eq!(proxy.finish(), 0);

    std::fs::write(&policy, "[classes]\nunknown = \"sometimes\"\n").unwrap();
    let output = run_in(
        dir.path(),
        &["proxy", "--policy", policy.to_str().unwrap(), "--", "true"],
    );
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("policy.toml"), "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");
}

/// The proxy over `server`, journaling to `journal`, initialized.
fn journaling(dir: &Path, journal: &Path, server: &[String]) -> Proxy {
    let mut proxy = Proxy::start(
        dir,
        &["--journal", journal.to_str().unwrap()],
        &strs(server),
    );
    proxy.initialize();
    proxy
}

/// kill -9 of the proxy between forwarding a call and its answer: the intent is on disk, the
/// outcome unknown; `rollback` compensates what completed and never the unknown call.
#[test]
fn a_killed_proxy_leaves_an_unknown_outcome_that_is_never_compensated() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let log = dir.path().join("calls.jsonl");
    let server = demo(&log, &["--slow", "charge_payment=60000"]);
    let mut proxy = journaling(dir.path(), &journal, &server);
    proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 2}),
    );
    proxy.next_id += 1;
    let id = proxy.next_id;
    proxy.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params":
        {"name": "charge_payment", "arguments": {"customerId": "c", "amount": 3, "currency": "EUR"}}}));
    wait_for("the server to receive the charge", || {
        calls_at_server(&log, "charge_payment") == 1
    });
    proxy.kill();

    let (status, out) = verify(dir.path(), &journal);
    assert_eq!(status, 0, "{out}");
    let tools = tools_file(dir.path());
    let output = run_in(
        dir.path(),
        &[
            "plan",
            "--tools",
            tools.to_str().unwrap(),
            "--trace",
            journal.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(plan["steps"][0]["tool"], "charge_payment");
    assert_eq!(plan["steps"][0]["status"], "unknown-outcome");
    assert_eq!(plan["steps"][1]["status"], "compensate");

    let log2 = dir.path().join("calls2.jsonl");
    let server2 = demo(&log2, &[]);
    let mut args = vec![
        "rollback",
        "--journal",
        journal.to_str().unwrap(),
        "--stdio",
        "--",
    ];
    args.extend(strs(&server2));
    let output = run_in(dir.path(), &args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The unknown outcome is reported, so the run needs attention.
    assert_eq!(code(&output), 1, "{stdout}");
    assert!(stdout.contains("unknown-outcome"), "{stdout}");
    // This server is a fresh process without the reservation, so the idempotent release fails
    // and is retried up to its maxRetries; every attempt is journaled, and the charge whose
    // outcome is unknown is never refunded.
    let attempts = kinds(&journal, "compensation.intent");
    assert!(attempts.iter().all(|r| r["name"] == "release_inventory"));
    assert_eq!(calls_at_server(&log2, "release_inventory"), attempts.len());
    assert_eq!(calls_at_server(&log2, "refund_payment"), 0);
    let (status, out) = verify(dir.path(), &journal);
    assert_eq!(status, 0, "{out}");
}

/// A read-only call that timed out has nothing to undo: `rollback` undoes the session's other
/// effect, reports the read as read-only rather than needing attention, and exits 0.
#[test]
fn a_timed_out_read_only_call_needs_no_attention() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "call-timeout-secs = 1\n").unwrap();
    let log = dir.path().join("calls.jsonl");
    let (_server, url) = common::demo_http_with(&log, &["--slow", "get_state=60000"]);
    let mut command = bin_in(dir.path());
    let journaled = ["--journal", journal.to_str().unwrap(), "--url", &url];
    command
        .args(["proxy", "--policy", policy.to_str().unwrap()])
        .args(journaled);
    let mut proxy = Proxy::spawn(dir.path(), command);
    proxy.initialize();
    proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 2}),
    );
    let read = json!({"name": "get_state", "arguments": {}});
    let answer = proxy.request_within("tools/call", read, Duration::from_secs(10));
    assert!(answer.get("error").is_some(), "{answer}");
    proxy.kill();
    let outcome = kinds(&journal, "call.outcome").pop().unwrap();
    assert_eq!(outcome["name"], "get_state");
    assert!(outcome["result"].is_null(), "{outcome}");

    let rollback = [
        "rollback",
        "--journal",
        journal.to_str().unwrap(),
        "--url",
        &url,
    ];
    let output = run_in(dir.path(), &rollback);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        code(&output),
        0,
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !stdout.contains("unknown-outcome") && !stdout.contains("attention"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 compensated, 0 already done, 0 failed, 1 skipped"),
        "{stdout}"
    );
    let skipped = kinds(&journal, "compensation.skip");
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0]["name"], "get_state");
    assert_eq!(skipped[0]["status"], "read-only");
    assert_eq!(calls_at_server(&log, "release_inventory"), 1);
    // Nothing is left: a second run finds no session to roll back.
    let output = run_in(dir.path(), &rollback);
    assert_eq!(code(&output), 0);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("has effects left to roll back"), "{stdout}");
}

/// kill -9 of `rollback` while a compensation is in flight; the rerun never re-sends one whose
/// outcome was recorded, and re-sends the in-flight one only because it is idempotent.
#[test]
fn rollback_resumes_after_a_crash_without_double_compensation() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let log = dir.path().join("calls.jsonl");
    let server = demo(&log, &[]);
    let mut proxy = journaling(dir.path(), &journal, &server);
    proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 2}),
    );
    proxy.call(
        "charge_payment",
        json!({"customerId": "c", "amount": 3, "currency": "EUR"}),
    );
    assert_eq!(proxy.finish(), 0);

    let dry = {
        let mut args = vec![
            "rollback",
            "--journal",
            journal.to_str().unwrap(),
            "--dry-run",
            "--stdio",
            "--",
        ];
        let s = demo(&dir.path().join("dry.jsonl"), &[]);
        let owned = strs(&s).into_iter().map(str::to_owned).collect::<Vec<_>>();
        args.extend(owned.iter().map(String::as_str));
        run_in(dir.path(), &args)
    };
    assert_eq!(code(&dry), 0);
    let before = std::fs::read_to_string(&journal).unwrap();

    // First run: refund completes, release hangs at the server, rollback is killed.
    let log1 = dir.path().join("run1.jsonl");
    let server1 = demo(&log1, &["--slow", "release_inventory=60000"]);
    let mut command = Command::new(BIN);
    command
        .args([
            "rollback",
            "--journal",
            journal.to_str().unwrap(),
            "--stdio",
            "--",
        ])
        .args(&server1)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut rollback = command.spawn().unwrap();
    wait_for("the release to reach the server", || {
        calls_at_server(&log1, "release_inventory") == 1
    });
    rollback.kill().unwrap();
    rollback.wait().unwrap();
    assert_eq!(
        before,
        std::fs::read_to_string(&journal).unwrap()[..before.len()]
    );
    let (status, out) = verify(dir.path(), &journal);
    assert_eq!(status, 0, "{out}");
    assert_eq!(calls_at_server(&log1, "refund_payment"), 1);

    // Second run: refund has an outcome (not re-sent: a failure, as this server never saw
    // the charge, and counted failed); release's is unknown and it is idempotent (re-sent once).
    let log2 = dir.path().join("run2.jsonl");
    let server2 = demo(&log2, &[]);
    let mut args = vec![
        "rollback",
        "--journal",
        journal.to_str().unwrap(),
        "--stdio",
        "--",
    ];
    args.extend(strs(&server2));
    let output = run_in(dir.path(), &args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("0 already done, 2 failed"), "{stdout}");
    assert!(
        stdout.contains("'refund_payment' failed in an earlier rollback"),
        "{stdout}"
    );
    assert_eq!(calls_at_server(&log2, "refund_payment"), 0);
    assert!(calls_at_server(&log2, "release_inventory") >= 1);

    // A third run sends nothing at all.
    let log3 = dir.path().join("run3.jsonl");
    let server3 = demo(&log3, &[]);
    let mut args = vec![
        "rollback",
        "--journal",
        journal.to_str().unwrap(),
        "--stdio",
        "--",
    ];
    args.extend(strs(&server3));
    run_in(dir.path(), &args);
    assert_eq!(calls_at_server(&log3, "refund_payment"), 0);
    assert_eq!(calls_at_server(&log3, "release_inventory"), 0);
    let (status, out) = verify(dir.path(), &journal);
    assert_eq!(status, 0, "{out}");
}

/// Recovery for the demo server's tools, as a user would write it for a server declaring none;
/// plus a hint the server already sets otherwise and a tool it does not have.
const OVERLAY: &str = r#"
[tools.reserve_inventory._meta."dev.chronomcp/compensate"]
reversibility = "compensable"
compensation = { toolName = "release_inventory", parameterMapping = { reservationId = "$.output.structuredContent.reservationId" } }

[tools.charge_payment.annotations.recovery]
strategy = "compensation"
compensatingOperation = { operationId = "refund_payment", parameters = { transactionId = "$response.body#/transactionId", amount = "$response.body#/amount" } }

[tools.get_state.annotations]
readOnlyHint = false

[tools.no_such_tool.annotations]
title = "Nothing"
"#;

/// The proxy over `server`, rolling back on failure from `overlay`'s declarations, journaling
/// to `journal`.
fn rolling_back_with(dir: &Path, overlay: &Path, journal: &Path, server: &[String]) -> Proxy {
    let flags = [
        "--on-failure",
        "rollback",
        "--overlay",
        overlay.to_str().unwrap(),
        "--journal",
        journal.to_str().unwrap(),
    ];
    Proxy::start(dir, &flags, &strs(server))
}

/// Reserve, charge, then a failing shipment, through `proxy`: the state before and after.
fn failing_workflow(proxy: &mut Proxy) -> (Value, Value) {
    proxy.initialize();
    let start = proxy.state();
    let reserved = proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 3}),
    );
    let reservation = reserved["structuredContent"]["reservationId"].clone();
    proxy.call(
        "charge_payment",
        json!({"customerId": "c", "amount": 12, "currency": "EUR"}),
    );
    assert_ne!(proxy.state(), start);
    let failed = proxy.call(
        "create_shipment",
        json!({"reservationId": reservation, "address": "a", "simulateFailure": true}),
    );
    // The failed call's own result reaches the client unchanged.
    assert_eq!(failed["isError"], true, "{failed}");
    let end = proxy.state();
    (start, end)
}

/// A server that declares no recovery: nothing can be undone, until an overlay declares it.
/// The client still sees the server's own tools/list; what the overlay could not apply is said
/// once on stderr.
#[test]
fn an_overlay_gives_an_undeclared_server_its_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("demo.overlay.toml");
    std::fs::write(&overlay, OVERLAY).unwrap();

    let bare_log = dir.path().join("bare.jsonl");
    let bare = demo(&bare_log, &["--undeclared"]);
    let mut proxy = Proxy::start(dir.path(), &["--on-failure", "rollback"], &strs(&bare));
    let (start, end) = failing_workflow(&mut proxy);
    assert_eq!(proxy.finish(), 0);
    assert_ne!(start, end, "nothing declared, nothing undone");
    assert_eq!(calls_at_server(&bare_log, "refund_payment"), 0);

    let log = dir.path().join("calls.jsonl");
    let server = demo(&log, &["--undeclared"]);
    let journal = dir.path().join("journal.jsonl");
    let mut proxy = rolling_back_with(dir.path(), &overlay, &journal, &server);
    let (start, end) = failing_workflow(&mut proxy);
    let listed = proxy.request("tools/list", json!({}));
    assert_eq!(proxy.finish(), 0);
    assert_eq!(start, end, "rolled back from the overlay's declarations");
    assert_eq!(calls_at_server(&log, "refund_payment"), 1);
    assert_eq!(calls_at_server(&log, "release_inventory"), 1);
    assert_eq!(verify(dir.path(), &journal).0, 0);
    // The client sees the server's list, not the merged one.
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .all(|t| t.get("_meta").is_none() && t["annotations"].get("recovery").is_none()),
        "{listed}"
    );

    let stderr = proxy_stderr(dir.path());
    let shown = overlay.display().to_string();
    let unknown = format!(
        "overlay {shown}:13:8 at /tools/no_such_tool: the server has no tool 'no_such_tool'"
    );
    let conflict = format!(
        "overlay {shown}:11:1 at /tools/get_state/annotations/readOnlyHint: the server declares \
         annotations/readOnlyHint of tool 'get_state' differently; that declaration is used"
    );
    // Said once, though the list was read twice (by the proxy and by the client).
    assert_eq!(stderr.matches(&unknown).count(), 1, "{stderr}");
    assert_eq!(stderr.matches(&conflict).count(), 1, "{stderr}");
    // The server's own readOnlyHint won: get_state is still read-only.
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("get_state") && l.contains("read-only")),
        "{stderr}"
    );

    // An overlay for another server is not used, as lint and rollback refuse it.
    let other = dir.path().join("other.overlay.json");
    std::fs::write(
        &other,
        "{\n  \"server\": \"someone-else\",\n  \"tools\": {\"charge_payment\": {\"annotations\": {\"title\": \"x\"}}}\n}\n",
    )
    .unwrap();
    let other_log = dir.path().join("other.jsonl");
    let server = demo(&other_log, &["--undeclared"]);
    let flags = [
        "--on-failure",
        "rollback",
        "--overlay",
        other.to_str().unwrap(),
    ];
    let mut proxy = Proxy::start(dir.path(), &flags, &strs(&server));
    let (start, end) = failing_workflow(&mut proxy);
    assert_eq!(proxy.finish(), 0);
    assert_ne!(start, end);
    let stderr = proxy_stderr(dir.path());
    let refused = format!(
        "overlay {}:2:3: it is for server 'someone-else', but the server names itself \
         'mcp-recovery-demo-server'; the overlay is not used",
        other.display()
    );
    assert_eq!(stderr.matches(&refused).count(), 1, "{stderr}");
}

/// Numbers keep their text through the proxy: the client's `1.2E1` in the journal's record of
/// the call, and a declared constant `1.2E1` in the compensating call it sends.
#[test]
fn numbers_keep_their_text_through_the_proxy_and_its_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("constants.overlay.json");
    std::fs::write(
        &overlay,
        r#"{"tools": {"charge_payment": {"annotations": {"recovery": {"strategy": "compensation",
            "compensatingOperation": {"operationId": "refund_payment",
              "parameters": {"transactionId": "$response.body#/transactionId", "amount": 1.2E1}}}}}}}"#,
    )
    .unwrap();
    let log = dir.path().join("calls.jsonl");
    let server = demo(&log, &["--undeclared"]);
    let journal = dir.path().join("journal.jsonl");
    let mut proxy = rolling_back_with(dir.path(), &overlay, &journal, &server);
    proxy.initialize();
    let charge = mcp_recovery_model::json::from_str(
        r#"{"customerId": "c", "amount": 1.2E1, "currency": "EUR"}"#,
    )
    .unwrap();
    let charged = proxy.call("charge_payment", charge);
    assert_eq!(charged["structuredContent"]["amount"], 12.0, "{charged}");
    let failed = proxy.call(
        "create_shipment",
        json!({"reservationId": "r", "address": "a", "simulateFailure": true}),
    );
    assert_eq!(failed["isError"], true, "{failed}");
    assert_eq!(proxy.finish(), 0);
    assert_eq!(calls_at_server(&log, "refund_payment"), 1);
    let written = std::fs::read_to_string(&journal).unwrap();
    let record = |kind: &str, name: &str| {
        written
            .lines()
            .find(|l| l.contains(&format!(r#""kind":"{kind}""#)) && l.contains(name))
            .unwrap_or_else(|| panic!("no {kind} of {name}: {written}"))
            .to_owned()
    };
    for line in [
        record("call.intent", "charge_payment"),
        record("call.outcome", "charge_payment"),
        record("compensation.intent", "refund_payment"),
    ] {
        assert!(line.contains(r#""amount":1.2E1"#), "{line}");
    }
    assert_eq!(verify(dir.path(), &journal).0, 0);
}

/// `rollback --overlay` plans from the merged list too, and resumes from the journal of a
/// session the proxy only recorded.
#[test]
fn rollback_with_an_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("demo.overlay.toml");
    // `rollback` refuses an overlay naming a tool the server lacks, as `plan` does.
    std::fs::write(&overlay, OVERLAY.split("[tools.get_state").next().unwrap()).unwrap();
    let journal = dir.path().join("journal.jsonl");
    let log = dir.path().join("calls.jsonl");
    let server = demo(&log, &["--undeclared"]);
    let mut proxy = Proxy::start(
        dir.path(),
        &["--journal", journal.to_str().unwrap()],
        &strs(&server),
    );
    let (start, end) = failing_workflow(&mut proxy);
    assert_eq!(proxy.finish(), 0);
    assert_ne!(start, end);

    let rollback = |extra: &[&str]| {
        let mut args = vec!["rollback", "--journal", journal.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.extend(["--stdio", "--"]);
        args.extend(strs(&server));
        run_in(dir.path(), &args)
    };
    let output = rollback(&[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("0 compensated"), "{stdout}");
    assert_eq!(calls_at_server(&log, "refund_payment"), 0);

    // The compensations are sent (a fresh demo server process no longer holds the session's
    // reservation and charge, so they fail there, and say so).
    let output = rollback(&["--overlay", overlay.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("2 failed"), "{stdout}");
    assert!(
        stdout.contains("'charge_payment' (call ")
            && stdout.contains(": its compensation 'refund_payment'"),
        "{stdout}"
    );
    assert_eq!(calls_at_server(&log, "refund_payment"), 1);
    assert_eq!(calls_at_server(&log, "release_inventory"), 1);

    std::fs::write(&overlay, OVERLAY).unwrap();
    let output = rollback(&["--overlay", overlay.to_str().unwrap()]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no_such_tool"), "{stderr}");
}

/// `proxy --config FILE --server NAME` and `rollback --config …` start the server as a client
/// config describes it (command, args, env, cwd, placeholders); what `${input:…}` and
/// `${env:…}` put into its arguments and environment never shows in any output.
#[test]
fn a_configured_server_behind_the_proxy_and_its_secrets() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("demo.overlay.toml"),
        OVERLAY.split("[tools.get_state").next().unwrap(),
    )
    .unwrap();
    // The server echoes its secret argument and environment on stderr, and writes its call log
    // relative to the working directory the config gives it.
    let script = "echo \"starting with $0 and $DEMO_KEY\" >&2; \
                  exec \"$1\" demo-server --call-log calls.jsonl --undeclared";
    let config = json!({"mcpServers": {
        "demo": {"command": "sh", "args": ["-c", script, "${input:token}", BIN],
                 "env": {"DEMO_KEY": "${env:PROXY_TEST_KEY}"}, "cwd": "${workspaceFolder}/work"},
        "remote": {"url": "http://127.0.0.1:9/mcp",
                   "headers": {"Authorization": "Bearer ${input:token}"}},
    }});
    std::fs::create_dir(dir.path().join("work")).unwrap();
    std::fs::write(dir.path().join("mcp.json"), config.to_string()).unwrap();
    let token = "tok-secret-314159";
    let key = "env-secret-271828";
    let input = format!("token={token}");
    let journal = dir.path().join("journal.jsonl");
    // `proxy` or `rollback` with the config's server, its input and the overlay.
    let configured = |subcommand: &str| {
        let mut command = bin_in(dir.path());
        command.env("PROXY_TEST_KEY", key).args([
            subcommand,
            "--config",
            "mcp.json",
            "--server",
            "demo",
            "--input",
            &input,
            "--overlay",
            "demo.overlay.toml",
            "--journal",
            journal.to_str().unwrap(),
        ]);
        command
    };
    let command = configured("proxy");
    let mut proxy = Proxy::spawn(dir.path(), command);
    let (start, end) = failing_workflow(&mut proxy);
    assert_ne!(start, end, "recorded only");
    assert_eq!(proxy.finish(), 0);
    let log = dir.path().join("work/calls.jsonl");
    assert_eq!(calls_at_server(&log, "charge_payment"), 1);

    let mut command = configured("rollback");
    let real = command.output().unwrap();
    assert_eq!(calls_at_server(&log, "refund_payment"), 1);
    command.arg("--dry-run");
    let dry = command.output().unwrap();
    assert_eq!(code(&dry), 0);
    // A stdio server starts afresh: the charge the compensation refunds is gone, it failed,
    // and the dry run says so instead of calling it done.
    let out = String::from_utf8_lossy(&dry.stdout);
    assert!(out.contains("(an earlier compensation failed)"), "{out}");

    // A `url` entry is reached over Streamable HTTP; nothing listens there, so the client
    // gets an error answer, and the header's value never shows.
    let mut command = bin_in(dir.path());
    command
        .args([
            "proxy", "--config", "mcp.json", "--server", "remote", "--input", &input,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n")
        .unwrap();
    let remote = child.wait_with_output().unwrap();
    assert_eq!(code(&remote), 0);
    let answer: Value = serde_json::from_slice(&remote.stdout).unwrap();
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot reach the server")),
        "{answer}"
    );

    let stderr = proxy_stderr(dir.path());
    assert!(stderr.contains("starting with *** and ***"), "{stderr}");
    let everything = format!(
        "{stderr}{}{}{}{}{}{}{}",
        std::fs::read_to_string(&journal).unwrap(),
        String::from_utf8_lossy(&real.stdout),
        String::from_utf8_lossy(&real.stderr),
        String::from_utf8_lossy(&dry.stdout),
        String::from_utf8_lossy(&dry.stderr),
        String::from_utf8_lossy(&remote.stdout),
        String::from_utf8_lossy(&remote.stderr),
    );
    assert!(everything.contains("sh -c"), "{everything}");
    assert!(
        !everything.contains(token) && !everything.contains(key),
        "{everything}"
    );
}

/// The server dies mid-call: the client gets an error at once, the outcome is unknown.
#[test]
fn a_server_killed_mid_call_gives_the_client_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let log = dir.path().join("calls.jsonl");
    let pid_file = dir.path().join("server.pid");
    let script = format!(
        "echo $$ > '{}'; exec '{BIN}' demo-server --call-log '{}' --slow charge_payment=60000",
        pid_file.display(),
        log.display()
    );
    let mut proxy = Proxy::start(
        dir.path(),
        &["--journal", journal.to_str().unwrap()],
        &["sh", "-c", &script],
    );
    proxy.initialize();
    proxy.next_id += 1;
    let id = proxy.next_id;
    proxy.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params":
        {"name": "charge_payment", "arguments": {"customerId": "c", "amount": 3, "currency": "EUR"}}}));
    wait_for("the server to receive the charge", || {
        calls_at_server(&log, "charge_payment") == 1
    });
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let killed = Command::new("kill")
        .args(["-KILL", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());
    let answer = proxy.lines.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(answer["id"], id);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exited"),
        "{answer}"
    );
    assert_eq!(proxy.finish(), 1);
    let outcome = kinds(&journal, "call.outcome").pop().unwrap();
    assert_eq!(outcome["name"], "charge_payment");
    assert!(outcome["result"].is_null());
    let (status, out) = verify(dir.path(), &journal);
    assert_eq!(status, 0, "{out}");
}

/// Hanging, crashing and garbage-speaking servers: the client always gets an answer in time.
#[test]
fn hostile_servers_never_hang_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "call-timeout-secs = 1\n").unwrap();
    let log = dir.path().join("calls.jsonl");
    for mode in ["hang", "garbage", "crash", "huge"] {
        let server = demo(&log, &["--hostile", mode]);
        let mut proxy = Proxy::start(
            dir.path(),
            &["--policy", policy.to_str().unwrap()],
            &strs(&server),
        );
        let started = Instant::now();
        proxy.initialize();
        if mode == "crash" {
            // The server dies on the proxy's own tools/list: the client gets an error for what
            // it has in flight, then the proxy exits (status 1) and the connection closes.
            proxy.next_id += 1;
            let id = proxy.next_id;
            // The proxy may already have exited: a closed pipe is one of the expected ends.
            let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
            let stdin = proxy.stdin.as_mut().unwrap();
            let _ = writeln!(stdin, "{request}").and_then(|()| stdin.flush());
            let answer = proxy.lines.recv_timeout(Duration::from_secs(10));
            if let Ok(answer) = answer {
                assert!(answer.get("error").is_some(), "{answer}");
            }
            assert_eq!(proxy.finish(), 1);
            assert!(started.elapsed() < Duration::from_secs(8));
            continue;
        }
        let answer = proxy.request_within("tools/list", json!({}), Duration::from_secs(10));
        assert!(started.elapsed() < Duration::from_secs(8), "{mode}");
        if mode == "huge" {
            // 8 MiB is within the line limit: it passes through.
            assert!(answer.get("result").is_some(), "{mode}");
        } else {
            assert!(answer.get("error").is_some(), "{mode}: {answer}");
        }
        drop(proxy.stdin.take());
        proxy.kill();
    }
}

/// Notifications and requests from the server pass through; the client's answers go back.
#[test]
fn server_requests_and_notifications_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let server = demo(&log, &["--hostile", "chatty"]);
    let mut proxy = Proxy::start(dir.path(), &[], &strs(&server));
    proxy.initialize();
    let answer = proxy.request("tools/list", json!({}));
    let seen = proxy.seen.clone();
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    assert!(seen.iter().any(|m| m == "ping"), "{seen:?}");
    assert!(seen.iter().any(|m| m == "roots/list"), "{seen:?}");
    assert!(
        seen.iter().any(|m| m.starts_with("notifications/")),
        "{seen:?}"
    );
    assert_eq!(proxy.finish(), 0);
}

#[test]
fn audit_verify_names_the_broken_line() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let log = dir.path().join("calls.jsonl");
    let server = demo(&log, &[]);
    let mut proxy = journaling(dir.path(), &journal, &server);
    proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 2}),
    );
    proxy.call("get_state", json!({}));
    assert_eq!(proxy.finish(), 0);
    let text = std::fs::read_to_string(&journal).unwrap();
    let (status, out) = verify(dir.path(), &journal);
    assert_eq!(status, 0);
    let head = out.trim().rsplit(' ').next().unwrap().to_owned();
    let lines: Vec<&str> = text.lines().collect();
    let write = |name: &str, lines: &[&str]| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
        )
        .unwrap();
        path
    };
    let edited_line = lines[2].replacen("\"quantity\":2", "\"quantity\":20", 1);
    let mut edited = lines.clone();
    edited[2] = &edited_line;
    let mut removed = lines.clone();
    removed.remove(1);
    let mut reordered = lines.clone();
    reordered.swap(2, 3);
    for (name, tampered, line, why) in [
        ("edited", edited, 3, "edited"),
        ("removed", removed, 2, "removed"),
        ("reordered", reordered, 3, "expected 3"),
    ] {
        let path = write(name, &tampered);
        let (status, out) = verify(dir.path(), &path);
        assert_eq!(status, 1, "{name}: {out}");
        assert!(out.contains(&format!("line {line}:")), "{name}: {out}");
        assert!(out.contains(why), "{name}: {out}");
    }
    let cut = dir.path().join("cut");
    std::fs::write(&cut, &text[..text.len() - 3]).unwrap();
    let (status, out) = verify(dir.path(), &cut);
    assert_eq!(status, 1);
    assert!(
        out.contains(&format!("line {}:", lines.len())) && out.contains("truncated"),
        "{out}"
    );
    // Dropping whole last lines is caught against the saved head.
    let shorter = write("shorter", &lines[..lines.len() - 1]);
    let output = run_in(
        dir.path(),
        &[
            "audit",
            "verify",
            shorter.to_str().unwrap(),
            "--head",
            &head,
        ],
    );
    assert_eq!(code(&output), 1);
    assert!(String::from_utf8_lossy(&output.stdout).contains("truncated"));
    let output = run_in(
        dir.path(),
        &[
            "audit",
            "verify",
            journal.to_str().unwrap(),
            "--head",
            &head,
        ],
    );
    assert_eq!(code(&output), 0);
    // A proxy refuses to append to a tampered journal.
    let path = write("edited", &edited_lines(&lines));
    let output = run_in(
        dir.path(),
        &["proxy", "--journal", path.to_str().unwrap(), "--", "true"],
    );
    assert_eq!(code(&output), 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("refusing"));
}

fn edited_lines<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let mut out = lines.to_vec();
    out.swap(0, 1);
    out
}

/// `ask` on the controlling terminal: the proxy runs under a pseudo-terminal (`script` from
/// util-linux), its MCP stdio on named pipes; the impact is shown on the terminal before the
/// call reaches the server, a typed `y` approves and a typed `n` denies.
/// A customer id with one character of each class that could drive a terminal or reorder text:
/// ESC, BEL, a C1 CSI, NEL, a bidi override and isolate, the line and paragraph separators.
const HOSTILE_ID: &str = "c\u{1b}]0;t\u{7}\u{9b}2J\u{85}\u{202e}\u{2066}\u{2028}\u{2029}\r\n";

#[test]
fn ask_prompts_on_the_terminal_and_a_typed_answer_decides() {
    let dir = tempfile::tempdir().unwrap();
    for fifo in ["to-proxy", "from-proxy"] {
        let made = Command::new("mkfifo").arg(dir.path().join(fifo)).status();
        assert!(made.unwrap().success());
    }
    let inner = format!(
        "exec '{BIN}' proxy --ask charge_payment -- '{BIN}' demo-server --call-log calls.jsonl \
         < to-proxy > from-proxy 2> proxy.stderr"
    );
    let mut terminal = Command::new("script")
        .args(["-q", "-e", "-c", &inner, "/dev/null"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("`script` (util-linux) runs");
    let mut keyboard = terminal.stdin.take().unwrap();
    let mut screen = terminal.stdout.take().unwrap();
    let (shown, screen_text) = channel::<String>();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n) = std::io::Read::read(&mut screen, &mut buffer) {
            if n == 0
                || shown
                    .send(String::from_utf8_lossy(&buffer[..n]).into_owned())
                    .is_err()
            {
                return;
            }
        }
    });
    // The shell opens the pipes in this order; each open waits for the other end.
    let to_proxy = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("to-proxy"))
        .unwrap();
    let from_proxy = std::fs::File::open(dir.path().join("from-proxy")).unwrap();
    let (sender, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from_proxy).lines() {
            let Ok(line) = line else { return };
            if sender
                .send(serde_json::from_str::<Value>(&line).unwrap())
                .is_err()
            {
                return;
            }
        }
    });
    let mut proxy = Proxy {
        child: terminal,
        stdin: None,
        lines,
        next_id: 0,
        seen: Vec::new(),
        per_request: false,
    };
    let mut to_proxy = Some(to_proxy);
    let mut send = |message: Value| {
        let pipe = to_proxy.as_mut().unwrap();
        writeln!(pipe, "{message}").unwrap();
        pipe.flush().unwrap();
    };
    let mut screen = String::new();
    let wait_for_prompt = |screen: &mut String| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !screen.contains("approve? [y/N]") {
            let left = deadline.saturating_duration_since(Instant::now());
            let chunk = screen_text
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no prompt on the terminal: {screen}"));
            screen.push_str(&chunk);
        }
        let prompt = screen.clone();
        screen.clear();
        prompt
    };
    let answer = |proxy: &mut Proxy, id: u64| loop {
        let message = proxy
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer");
        if message["id"] == id {
            return message;
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "test", "version": "1"}}}));
    answer(&mut proxy, 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let log = dir.path().join("calls.jsonl");
    for (id, typed, approved) in [(2, "y", true), (3, "n", false)] {
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "charge_payment",
                               "arguments": {"customerId": HOSTILE_ID, "amount": 7, "currency": "EUR"}}}));
        let prompt = wait_for_prompt(&mut screen);
        // Every character of the argument that could drive the terminal shows escaped; the
        // terminal itself ends lines with CR LF.
        let raw: Vec<char> = prompt
            .chars()
            .filter(|c| is_unsafe_char(*c) && !matches!(c, '\r' | '\n'))
            .collect();
        assert!(raw.is_empty(), "raw {raw:?} in {prompt:?}");
        assert!(prompt.contains("\\u{202e}"), "{prompt}");
        // The impact comes before any effect: tool, arguments, class and the undoing call.
        assert!(prompt.contains("charge_payment"), "{prompt}");
        assert!(prompt.contains("\"amount\":7"), "{prompt}");
        assert!(prompt.contains("class: compensable"), "{prompt}");
        assert!(prompt.contains("refund_payment"), "{prompt}");
        assert_eq!(calls_at_server(&log, "charge_payment"), id as usize - 2);
        writeln!(keyboard, "{typed}").unwrap();
        keyboard.flush().unwrap();
        let result = answer(&mut proxy, id)["result"].clone();
        assert_eq!(
            result.get("isError") == Some(&json!(true)),
            !approved,
            "{result}"
        );
        assert_eq!(calls_at_server(&log, "charge_payment"), 1);
    }
    // The client closes its side: the proxy ends, and with it the terminal session.
    drop(to_proxy.take());
    assert_eq!(proxy.finish(), 0);
    drop(keyboard);
}

/// The proxy as a child whose stdout lines are kept as the exact text it wrote.
struct Wire {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Wire {
    fn start(dir: &Path, flags: &[&str], server: &[String]) -> Wire {
        let mut command = bin_in(dir);
        command.arg("proxy").args(flags).arg("--").args(server);
        let (mut child, lines) = spawn_piped(dir, command, |line| line);
        let stdin = child.stdin.take();
        Wire {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{text}").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .expect("a line from the proxy within 30 s")
    }

    /// Initializes the session (the server answers with its own revision).
    fn initialize(&mut self, revision: &str) {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{revision}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        ));
        let answer = self.next();
        assert!(answer.contains("protocolVersion"), "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// Closes stdin and returns every line still to come, once the proxy has exited.
    fn finish(mut self) -> Vec<String> {
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the proxy did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
        self.lines.try_iter().collect()
    }
}

/// The demo server behind `tee`, so that `received.jsonl` holds every line the server got;
/// with a `sed` program, its output is edited by it.
fn recording(extra: &[&str], sed: &str) -> Vec<String> {
    let sed = if sed.is_empty() {
        String::new()
    } else {
        format!(" | sed -u -E '{sed}'")
    };
    let script =
        format!(r#"tee -a received.jsonl | "$0" demo-server --call-log calls.jsonl "$@"{sed}"#);
    let mut command = vec!["sh".to_owned(), "-c".to_owned(), script, BIN.to_owned()];
    command.extend(extra.iter().map(|s| (*s).to_owned()));
    command
}

/// The lines the recording server received.
fn received(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("received.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The `tools/call` requests among the received lines, by tool name (batches included).
fn calls_received(dir: &Path) -> Vec<String> {
    received(dir)
        .iter()
        .flat_map(|line| match serde_json::from_str::<Value>(line).unwrap() {
            Value::Array(items) => items,
            other => vec![other],
        })
        .filter(|m| m["method"] == "tools/call")
        .map(|m| m["params"]["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

const CHARGE_BATCH: &str = r#"[{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"charge_payment"}},{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"get_state"}}]"#;

/// A batch on stdio: in a 2025-03-26 session each element is gated and journaled and the answers
/// come back as one array; in a later one the batch is refused whole and nothing is forwarded.
#[test]
fn a_batch_on_stdio_is_gated_or_refused_by_revision() {
    for revision in ["2025-11-25", "2025-03-26"] {
        let dir = tempfile::tempdir().unwrap();
        let server = recording(&[], "");
        let journal = dir.path().join("journal.jsonl");
        let flags = ["--journal", journal.to_str().unwrap(), "--deny", "charge_*"];
        let mut wire = Wire::start(dir.path(), &flags, &server);
        wire.initialize(revision);
        wire.send(CHARGE_BATCH);
        let answer: Value = serde_json::from_str(&wire.next()).unwrap();
        let answers = answer.as_array().unwrap_or_else(|| panic!("{answer}"));
        assert_eq!(answers.len(), 2, "{answer}");
        let by_id = |id: &str| answers.iter().find(|a| a["id"] == id).unwrap();
        assert!(wire.finish().is_empty());
        assert!(!received(dir.path()).iter().any(|l| l.starts_with('[')));
        let intents = kinds(&journal, "call.intent");
        if revision == "2025-03-26" {
            assert_eq!(calls_received(dir.path()), ["get_state"]);
            assert_eq!(by_id("b1")["result"]["isError"], true, "{answer}");
            assert!(
                by_id("b2")["result"]["structuredContent"].is_object(),
                "{answer}"
            );
            assert_eq!(intents.len(), 1);
            assert_eq!(intents[0]["name"], "get_state");
            let refusals = kinds(&journal, "approval");
            assert_eq!(refusals[0]["name"], "charge_payment");
            assert_eq!(refusals[0]["decision"], "deny");
        } else {
            assert!(calls_received(dir.path()).is_empty());
            assert!(intents.is_empty());
            for id in ["b1", "b2"] {
                assert_eq!(by_id(id)["error"]["code"], -32600, "{answer}");
            }
            assert!(proxy_stderr(dir.path()).contains("batches exist only in MCP 2025-03-26"));
        }
        assert_eq!(verify(dir.path(), &journal).0, 0);
    }
}

/// A 2025-03-26 batch whose second call's intent does not fit under `--max-file-size`: the
/// proxy stops, the first call (forwarded) is answered that its outcome is unknown and the
/// second that it was not forwarded, each once.
#[test]
fn a_batch_cut_short_by_the_journal_tells_each_call_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let flags = [
        "--journal",
        journal.to_str().unwrap(),
        "--max-file-size",
        "32K",
    ];
    let mut wire = Wire::start(dir.path(), &flags, &recording(&[], ""));
    wire.initialize("2025-03-26");
    let call = |id: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "reserve_inventory", "arguments": arguments}})
    };
    let reserve = json!({"sku": "sku-widget", "quantity": 1});
    let mut too_big = reserve.clone();
    too_big["note"] = json!("x".repeat(40 << 10));
    wire.send(&json!([call("b1", reserve), call("b2", too_big)]).to_string());
    let elements = |line: &str| match serde_json::from_str(line).unwrap() {
        Value::Array(items) => items,
        other => vec![other],
    };
    let mut answers = Vec::new();
    while answers.len() < 2 {
        answers.extend(elements(&wire.next()));
    }
    answers.extend(wire.finish().iter().flat_map(|line| elements(line)));
    assert_eq!(calls_received(dir.path()), ["reserve_inventory"]);
    for (id, told) in [
        ("b1", "the call was forwarded and its outcome is unknown"),
        ("b2", "was not forwarded"),
    ] {
        let mine: Vec<&Value> = answers.iter().filter(|a| a["id"] == id).collect();
        assert_eq!(mine.len(), 1, "{answers:?}");
        let message = mine[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains(told), "{id}: {message}");
    }
}

/// `tools/call` (or any request method) without an id is dropped and noted, never forwarded;
/// values that are not objects and ids that are null or fractions are refused.
#[test]
fn request_methods_without_an_id_and_invalid_messages_are_never_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let server = recording(&[], "");
    let mut wire = Wire::start(dir.path(), &["--deny", "charge_*"], &server);
    wire.initialize("2025-11-25");
    for method in ["tools/call", "resources/read", "prompts/get", "initialize"] {
        wire.send(&format!(
            r#"{{"jsonrpc":"2.0","method":"{method}","params":{{"name":"charge_payment"}}}}"#
        ));
    }
    for invalid in [
        r#""tools/call""#,
        "42",
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get_state"}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"get_state"}}"#,
    ] {
        wire.send(invalid);
        let answer: Value = serde_json::from_str(&wire.next()).unwrap();
        assert_eq!(answer["error"]["code"], -32600, "{invalid}: {answer}");
        assert_eq!(answer["id"], Value::Null);
    }
    assert!(wire.finish().is_empty());
    assert!(
        calls_received(dir.path()).is_empty(),
        "{:?}",
        received(dir.path())
    );
    let forwarded: Vec<String> = received(dir.path())
        .into_iter()
        .filter(|l| l.contains("charge") || l.contains("resources/read") || l.contains("\"42\""))
        .collect();
    assert!(forwarded.is_empty(), "{forwarded:?}");
    let stderr = proxy_stderr(dir.path());
    assert!(
        stderr.contains("a tools/call without an id was dropped"),
        "{stderr}"
    );
    assert!(
        stderr.contains("a prompts/get without an id was dropped"),
        "{stderr}"
    );
}

/// `--deny 'charge_*'` holds against `CHARGE_payment`; a name the server never listed is
/// refused, a look-alike of a listed one named in the refusal, and both are journaled.
#[test]
fn names_are_matched_case_insensitively_and_unlisted_tools_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = recording(&[], "");
    let journal = dir.path().join("journal.jsonl");
    let flags = ["--journal", journal.to_str().unwrap(), "--deny", "charge_*"];
    let mut wire = Wire::start(dir.path(), &flags, &server);
    wire.initialize("2025-11-25");
    for (id, name) in [
        (1, "CHARGE_payment"),
        (2, "Get_State"),
        (3, "ｇｅｔ_state"),
        (4, "never_listed"),
    ] {
        wire.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}"}}}}"#
        ));
        let answer: Value = serde_json::from_str(&wire.next()).unwrap();
        assert_eq!(answer["result"]["isError"], true, "{name}: {answer}");
    }
    assert!(wire.finish().is_empty());
    assert!(
        calls_received(dir.path()).is_empty(),
        "{:?}",
        received(dir.path())
    );
    let refusals = kinds(&journal, "approval");
    assert_eq!(refusals.len(), 4);
    assert_eq!(refusals[0]["rule"], "--deny 'charge_*'");
    let reasons: Vec<&str> = refusals
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons[0].contains("looks like the listed 'charge_payment'"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].contains("looks like the listed 'get_state'"),
        "{reasons:?}"
    );
    assert!(
        reasons[2].contains("looks like the listed 'get_state'"),
        "{reasons:?}"
    );
    assert!(
        reasons[3].contains("not in the server's tools/list"),
        "{reasons:?}"
    );
    assert!(refusals[1..].iter().all(|r| r["rule"] == "unlisted-tools"));
    assert!(kinds(&journal, "call.intent").is_empty());
    // `--unlisted-tools allow` lets the unlisted name through; the --deny still holds.
    let flags = ["--deny", "charge_*", "--unlisted-tools", "allow"];
    let mut wire = Wire::start(dir.path(), &flags, &server);
    wire.initialize("2025-11-25");
    for (id, name) in [(1, "CHARGE_payment"), (2, "never_listed")] {
        wire.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}"}}}}"#
        ));
        wire.next();
    }
    wire.finish();
    assert_eq!(calls_received(dir.path()), ["never_listed"]);
}

/// Bidi controls, line separators and zero-width characters in a tool name and its arguments
/// reach the approver's JSON (as JSON) but never the class table or the notes raw.
#[test]
fn unsafe_characters_reach_neither_the_class_table_nor_the_notes_raw() {
    let dir = tempfile::tempdir().unwrap();
    let name = "get\u{202e}etats\u{2028}x\u{200b}\u{feff}\u{2066}\u{85}\u{7f}\u{ad}\u{1b}[2J";
    // The server's get_state is listed under that name (JSON escapes, as a server writes them).
    let escaped = r"get\\u202eetats\\u2028x\\u200b\\ufeff\\u2066\\u0085\\u007f\\u00ad\\u001b[2J";
    let server = recording(&[], &format!(r#"s/"name":"get_state"/"name":"{escaped}"/"#));
    let flags = [
        "--ask",
        "*",
        "--approve-with",
        "cat >> impacts.jsonl; exit 1",
    ];
    let mut wire = Wire::start(dir.path(), &flags, &server);
    wire.initialize("2025-11-25");
    let mut call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": {"note": "a\u{2029}b\u{200d}c\u{61c}"}}});
    wire.send(&call.to_string());
    let answer: Value = serde_json::from_str(&wire.next()).unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    call["id"] = json!(2);
    call["params"]["name"] = json!("unlisted\u{202e}\u{2028}");
    wire.send(&call.to_string());
    wire.next();
    wire.finish();
    let impacts = std::fs::read_to_string(dir.path().join("impacts.jsonl")).unwrap();
    let impact: Value = serde_json::from_str(impacts.lines().next().unwrap()).unwrap();
    assert_eq!(impact["tool"], name);
    let stderr = proxy_stderr(dir.path());
    assert!(
        stderr.contains("get\\u{202e}etats\\u{2028}x\\u{200b}"),
        "{stderr}"
    );
    assert!(stderr.contains("refused"), "{stderr}");
    for c in stderr.chars() {
        assert!(
            c == '\n' || !mcp_recovery_base::text::is_unsafe_char(c),
            "{c:?} raw in {stderr}"
        );
    }
}

/// `rollback` where an overlay names a compensating tool the server does not list: the
/// compensation is not sent, even with a policy of `unlisted-tools = "allow"`; the step is reported as
/// needing attention, naming the tool, and the run exits 1.
#[test]
fn rollback_never_sends_a_compensator_the_server_did_not_list() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let server = demo(&dir.path().join("calls.jsonl"), &[]);
    let mut proxy = journaling(dir.path(), &journal, &server);
    proxy.call(
        "charge_payment",
        json!({"customerId": "c", "amount": 3, "currency": "EUR"}),
    );
    assert_eq!(proxy.finish(), 0);
    let overlay = dir.path().join("missing.overlay.toml");
    std::fs::write(
        &overlay,
        r#"
[tools.charge_payment.annotations.recovery]
strategy = "compensation"
compensatingOperation = { operationId = "refund_missing", parameters = { transactionId = "$response.body#/transactionId" } }
"#,
    )
    .unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "unlisted-tools = \"allow\"\n").unwrap();
    let session = std::fs::read(&journal).unwrap();
    for extra in [&[][..], &["--policy", policy.to_str().unwrap()][..]] {
        // Each run starts from the session alone (a reported step is not reported again).
        std::fs::write(&journal, &session).unwrap();
        let log = dir.path().join(format!("rollback{}.jsonl", extra.len()));
        let server = demo(&log, &["--undeclared"]);
        let mut args = vec![
            "rollback",
            "--journal",
            journal.to_str().unwrap(),
            "--overlay",
            overlay.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.extend(["--stdio", "--"]);
        args.extend(strs(&server));
        let output = run_in(dir.path(), &args);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(code(&output), 1, "{extra:?}: {stdout} {stderr}");
        assert!(stdout.contains("needs attention"), "{stdout}");
        assert!(
            stdout.contains("'refund_missing' is not in the tool list"),
            "{stdout}"
        );
        assert!(calls_at_server(&log, "refund_missing") == 0, "{extra:?}");
        assert!(
            kinds(&journal, "compensation.intent").is_empty(),
            "{extra:?}"
        );
    }
}
