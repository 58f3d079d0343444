//! Calls that need a quorum of approvers, end to end: the binary's demo server behind the proxy
//! on stdio, decisions signed by `mcp-recovery approve` (and forged ones sent by hand) at the
//! proxy's approvals endpoint, and the journal's approval records afterwards.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(feature = "demo")]

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Running, calls_at_server, code, journal_kinds, run_in, wait_for};
use mcp_recovery_journal::keys::{PublicKey, SecretKey};
use mcp_recovery_proxy::{canonical, rfc3339, unix_now};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");

/// The Slack app's signing secret the proxy is given (through the environment only).
const SLACK_SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5-test-secret";

/// A proxy on stdio in front of the demo server, taking decisions on a loopback port.
struct Proxy {
    _child: Running,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    url: String,
}

impl Proxy {
    fn start(dir: &Path) -> Proxy {
        let stderr = std::fs::File::create(dir.join("proxy.stderr")).unwrap();
        let mut child: Child = Command::new(BIN)
            .current_dir(dir)
            .args([
                "proxy",
                "--journal",
                "journal.jsonl",
                "--policy",
                "policy.toml",
            ])
            .args([
                "--approvals-listen",
                "127.0.0.1:0",
                "--",
                BIN,
                "demo-server",
            ])
            .args(["--call-log", "calls.jsonl"])
            .env("SLACK_SIGNING_SECRET", SLACK_SECRET)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = sender.send(serde_json::from_str::<Value>(&line).unwrap());
            }
        });
        let url = announced(
            &dir.join("proxy.stderr"),
            "mcp-recovery proxy: approvals at ",
        );
        let mut proxy = Proxy {
            _child: Running(child),
            stdin,
            lines,
            url,
        };
        proxy.send(1, "initialize", common::initialize_params());
        proxy.answer(1);
        writeln!(
            proxy.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        proxy
    }

    fn send(&mut self, id: u64, method: &str, params: Value) {
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        message["params"] = params;
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn answer(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.lines.recv_timeout(left).expect("an answer in time");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Sends a `charge_payment` call as request `id`, not waiting for its answer (the amount
    /// written as `1.250E1`: the call digest covers the arguments as sent, and every place that
    /// shows them keeps that text).
    fn charge(&mut self, id: u64) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"charge_payment","arguments":{{"customerId":"c-1","amount":1.250E1,"currency":"EUR"}}}}}}"#
        );
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }
}

/// Three approvers' key pairs in `dir` and a policy: charges need `quorum` of the three, each
/// approver also known as Slack user `U` + their name in capitals.
fn setup(dir: &Path, quorum: usize, timeout: u64) {
    let mut approvers = String::new();
    for name in ["alice", "bob", "carol"] {
        let output = run_in(dir, &["audit", "keygen", name]);
        assert_eq!(code(&output), 0, "{output:?}");
        let key = std::fs::read_to_string(dir.join(format!("{name}.pub"))).unwrap();
        approvers.push_str(&format!(
            "[[approvers]]\nname = \"{name}\"\nkey = \"{}\"\nslack-user = \"U{}\"\n",
            key.trim(),
            name.to_uppercase()
        ));
    }
    let policy = format!(
        "approval-timeout-secs = {timeout}\n{approvers}\n[[approvals]]\nmatch = \"CHARGE_*\"\n\
         quorum = {quorum}\nof = [\"alice\", \"bob\", \"carol\"]\n"
    );
    std::fs::write(dir.join("policy.toml"), policy).unwrap();
}

fn approve(dir: &Path, args: &[&str]) -> (i32, String) {
    let output = run_in(dir, &[&["approve"], args].concat());
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (code(&output), stdout)
}

/// `approve --key NAME --as NAME REQUEST VERDICT`.
fn decide(dir: &Path, url: &str, name: &str, request: &str, verdict: &str) -> (i32, String) {
    approve(
        dir,
        &["--url", url, "--key", name, "--as", name, request, verdict],
    )
}

/// Waits until the proxy lists a pending request; its id.
fn pending(dir: &Path, url: &str) -> String {
    let mut id = String::new();
    wait_for("a pending request", || {
        let (status, listing) = approve(dir, &["--url", url]);
        assert_eq!(status, 0, "{listing}");
        listing
            .lines()
            .find_map(|l| l.strip_prefix("request "))
            .map(|r| id = r.to_owned())
            .is_some()
    });
    id
}

/// What follows `prefix` on the first whole line of `path` that starts with it, once one is
/// there: the file may be read while the process is still writing the line.
fn announced(path: &Path, prefix: &str) -> String {
    let mut found = String::new();
    wait_for(prefix, || {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        text.split_inclusive('\n')
            .filter_map(|l| l.strip_suffix('\n'))
            .find_map(|l| l.strip_prefix(prefix))
            .map(|rest| found = rest.to_owned())
            .is_some()
    });
    found
}

fn listing(url: &str) -> Value {
    let mut text = String::new();
    ureq::get(url)
        .call()
        .unwrap()
        .body_mut()
        .as_reader()
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The status of an answer of the approvals endpoint, and its `error`.
fn status_and_error(mut response: ureq::http::Response<ureq::Body>) -> (u16, String) {
    let mut text = String::new();
    response
        .body_mut()
        .as_reader()
        .read_to_string(&mut text)
        .unwrap();
    let answer: Value = serde_json::from_str(&text).unwrap();
    (
        response.status().as_u16(),
        answer["error"].as_str().unwrap_or_default().to_owned(),
    )
}

/// POSTs a decision by hand: the status and the answer's `error`.
fn post(url: &str, body: &Value) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let response = agent
        .post(url)
        .header("Content-Type", "application/json")
        .send(body.to_string().as_bytes())
        .unwrap();
    status_and_error(response)
}

/// Asserts that the charge sent as request 2 has not reached the server, then that `name`'s
/// approval from the terminal makes it run.
fn runs_once_approved_by(proxy: &mut Proxy, dir: &Path, name: &str, request: &str) {
    let log = dir.join("calls.jsonl");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(calls_at_server(&log, "charge_payment"), 0);
    let url = proxy.url.clone();
    let (status, said) = decide(dir, &url, name, request, "--approve");
    assert_eq!(status, 0, "{said}");
    let answer = proxy.answer(2);
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
    assert_eq!(calls_at_server(&log, "charge_payment"), 1);
}

/// A decision signed with `key`'s secret.
fn signed(dir: &Path, key: &str, statement: &Value) -> Value {
    let secret = SecretKey::read(&dir.join(key)).unwrap();
    json!({"statement": statement, "key": secret.public().id(),
        "signature": secret.sign(&canonical(statement))})
}

#[test]
fn a_charge_runs_only_after_two_of_three_valid_signed_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 2, 60);
    let mut proxy = Proxy::start(dir);
    proxy.charge(2);
    let request = pending(dir, &proxy.url);
    let (_, shown) = approve(dir, &["--url", &proxy.url]);
    for part in [
        "tool: charge_payment",
        "refund_payment",
        "class: compensable",
        "1.250E1",
    ] {
        assert!(shown.contains(part), "{part} in {shown}");
    }
    let found = listing(&proxy.url)["pending"][0].clone();
    let statement = |approver: &str, call: &Value, expires: &str, request: &str| {
        json!({"type": "mcp-recovery/decision", "request": request, "call": call,
            "decision": "approve", "expires": expires, "approver": approver})
    };
    let expires = found["expires"].as_str().unwrap().to_owned();
    let digest = found["callDigest"].clone();
    let at = format!("{}/{request}", proxy.url);
    // Forged, replayed elsewhere, altered or expired decisions are refused and counted nowhere.
    let carol_as_alice = signed(
        dir,
        "carol",
        &statement("alice", &digest, &expires, &request),
    );
    assert_eq!(post(&at, &carol_as_alice).0, 403);
    let mut tampered = signed(
        dir,
        "alice",
        &statement("alice", &digest, &expires, &request),
    );
    tampered["statement"]["decision"] = json!("deny");
    let (status, why) = post(&at, &tampered);
    assert_eq!(
        (status, why.as_str()),
        (403, "the signature does not verify")
    );
    let other = signed(dir, "alice", &statement("alice", &digest, &expires, "0000"));
    assert_eq!(post(&at, &other).0, 400);
    assert_eq!(post(&format!("{}/0000", proxy.url), &other).0, 404);
    let changed = json!("sha256:0000000000000000000000000000000000000000000000000000000000000000");
    let (status, why) = post(
        &at,
        &signed(
            dir,
            "alice",
            &statement("alice", &changed, &expires, &request),
        ),
    );
    assert_eq!(status, 400, "{why}");
    assert!(why.contains("digest"), "{why}");
    let past = rfc3339(unix_now() - 1);
    let (status, why) = post(
        &at,
        &signed(dir, "alice", &statement("alice", &digest, &past, &request)),
    );
    assert_eq!((status, why.as_str()), (400, "the decision has expired"));
    let (status, why) = post(
        &at,
        &signed(
            dir,
            "alice",
            &statement("dave", &digest, &expires, &request),
        ),
    );
    assert_eq!(status, 403, "{why}");
    // One valid approval is not a quorum.
    let (status, said) = decide(dir, &proxy.url, "alice", &request, "--approve");
    assert_eq!(status, 0, "{said}");
    let (status, said) = decide(dir, &proxy.url, "alice", &request, "--approve");
    assert_eq!(status, 1, "a replay counts once: {said}");
    assert!(said.contains("decided already"), "{said}");
    runs_once_approved_by(&mut proxy, dir, "bob", &request);
    // The journal says who approved, with statements an auditor can check.
    let journal = dir.join("journal.jsonl");
    let approvals = journal_kinds(&journal, "approval");
    assert_eq!(approvals.len(), 1);
    let record = &approvals[0];
    assert_eq!(record["decision"], "allow", "{record}");
    assert_eq!(
        record["quorum"],
        json!({"need": 2, "of": ["alice", "bob", "carol"]})
    );
    let decisions = record["decisions"].as_array().unwrap();
    let names: Vec<&str> = decisions
        .iter()
        .map(|d| d["approver"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alice", "bob"]);
    for decision in decisions {
        let name = decision["approver"].as_str().unwrap();
        let public = PublicKey::read(&dir.join(format!("{name}.pub"))).unwrap();
        assert_eq!(decision["key"], public.id());
        assert_eq!(decision["via"], "cli");
        assert_eq!(decision["statement"]["call"], digest);
        let bytes = canonical(&decision["statement"]);
        assert!(public.verify(&bytes, decision["signature"].as_str().unwrap()));
    }
    let (status, out) = common::audit_verify(dir, &journal);
    assert_eq!(status, 0, "{out}");
    assert_eq!(audit_with_policy(dir, None), (0, String::new()));
    let policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    let (status, out) = audit_with_policy(dir, Some(policy.replace("quorum = 2", "quorum = 3")));
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("'charge_payment'") && out.contains("2 valid approval(s) of the 3"),
        "{out}"
    );
    // A policy giving bob another key: his decision no longer counts.
    let output = run_in(dir, &["audit", "keygen", "stranger"]);
    assert!(output.status.success(), "{output:?}");
    let stranger = std::fs::read_to_string(dir.join("stranger.pub")).unwrap();
    let bob = std::fs::read_to_string(dir.join("bob.pub")).unwrap();
    let (status, out) = audit_with_policy(dir, Some(policy.replace(bob.trim(), stranger.trim())));
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("the decision of 'bob' was signed with a key the policy does not give them"),
        "{out}"
    );
}

/// `audit verify journal.jsonl --policy P`, P the test's policy or `policy` written to a file:
/// the exit code and the lines that are not the chain summary. The verifier of spec/journal.md
/// must agree: the same exit code, and the same calls named.
fn audit_with_policy(dir: &Path, policy: Option<String>) -> (i32, String) {
    audit_journal_with_policy(dir, "journal.jsonl", policy)
}

fn audit_journal_with_policy(dir: &Path, journal: &str, policy: Option<String>) -> (i32, String) {
    let file = match policy {
        Some(text) => {
            std::fs::write(dir.join("audit.toml"), text).unwrap();
            "audit.toml"
        }
        None => "policy.toml",
    };
    let output = run_in(dir, &["audit", "verify", journal, "--policy", file]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let problems: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.contains("chain intact"))
        .collect();
    let theirs = Command::new("python3")
        .current_dir(dir)
        .arg(common::python_verifier(dir))
        .args([journal, "--policy", file])
        .output()
        .unwrap();
    let their_out = String::from_utf8_lossy(&theirs.stdout);
    let calls = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.split("seq ").nth(1)?.split(' ').next().map(str::to_owned))
            .collect()
    };
    assert_eq!(
        (theirs.status.code(), calls(&their_out)),
        (output.status.code(), calls(&stdout)),
        "the verifier of spec/journal.md disagrees: {their_out}{}\naudit verify: {stdout}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    (code(&output), problems.join("\n"))
}

/// Rewrites `journal.jsonl` as a forger with write access would, every hash recomputed, with
/// `edit` applied to the first approval record (dropped when it returns false), and checks that
/// `audit verify --policy` (and the verifier of spec/journal.md) names the call, saying `why`.
fn forged_approval_is_caught(dir: &Path, why: &str, mut edit: impl FnMut(&mut Value) -> bool) {
    let text = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let path = dir.join("forged.jsonl");
    let _ = std::fs::remove_file(&path);
    let mut forged = mcp_recovery_journal::Journal::open(&path, 64 << 20).unwrap();
    forged.set_sync(false);
    let mut edited = false;
    for record in mcp_recovery_journal::read_records(&text).unwrap() {
        let mut record = Value::Object(record);
        if record["kind"] == "approval" && !edited {
            edited = true;
            if !edit(&mut record) {
                continue;
            }
        }
        let Value::Object(record) = record else {
            unreachable!()
        };
        let kind = mcp_recovery_journal::Kind::parse(record["kind"].as_str().unwrap()).unwrap();
        let session = record["session"].as_str().unwrap().to_owned();
        forged.append(&session, kind, record).unwrap();
    }
    drop(forged);
    let (status, out) = audit_journal_with_policy(dir, "forged.jsonl", None);
    assert_eq!(status, 1, "{why}: {out}");
    assert!(out.contains(why), "{why}: {out}");
}

/// The forgeries of a journal whose first approval counted two signed decisions.
fn forged_signed_approvals_are_caught(dir: &Path) {
    forged_approval_is_caught(dir, "ran with 1 valid approval(s) of the 2", |r| {
        r["decisions"].as_array_mut().unwrap().truncate(1);
        true
    });
    forged_approval_is_caught(dir, "ran with no approval record", |_| false);
    forged_approval_is_caught(dir, "has a signature that does not verify", |r| {
        r["decisions"][0]["statement"]["expires"] = json!("2099-01-01T00:00:00.000Z");
        true
    });
    forged_approval_is_caught(
        dir,
        "signed with a key the policy does not give them",
        |r| {
            r["decisions"][1]["approver"] = json!("carol");
            true
        },
    );
    forged_approval_is_caught(
        dir,
        "is a statement about another request, call or approver",
        |r| {
            r["approvalRequest"] = json!("0".repeat(32));
            true
        },
    );
}

#[test]
fn any_valid_deny_wins_and_silence_is_a_deny() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 2, 2);
    // The approvers' webhook: a local receiver that keeps what it is sent.
    let (hook_url, received) = webhook();
    let mut policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    policy.push_str(&format!(
        "\n[approvals-notify]\nurl = \"{hook_url}\"\ntimeout-secs = 5\n"
    ));
    std::fs::write(dir.join("policy.toml"), policy).unwrap();
    let mut proxy = Proxy::start(dir);
    proxy.charge(2);
    let request = pending(dir, &proxy.url);
    let offered = received.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(offered["request"], request.as_str());
    assert_eq!(offered["tool"], "charge_payment");
    assert_eq!(offered["class"], "compensable");
    assert_eq!(offered["compensation"]["tool"], "refund_payment");
    for member in ["session", "expires", "callDigest", "arguments"] {
        assert!(offered.get(member).is_some(), "{member} in {offered}");
    }
    let (status, said) = decide(dir, &proxy.url, "alice", &request, "--approve");
    assert_eq!(status, 0, "{said}");
    let (status, said) = decide(dir, &proxy.url, "carol", &request, "--deny");
    assert_eq!(status, 0, "{said}");
    let answer = proxy.answer(2);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("denied by 'carol'"), "{text}");
    // Nobody answers the second call within the two seconds: it is refused.
    let started = Instant::now();
    proxy.charge(3);
    let answer = proxy.answer(3);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(
        calls_at_server(&dir.join("calls.jsonl"), "charge_payment"),
        0
    );
    let approvals = journal_kinds(&dir.join("journal.jsonl"), "approval");
    assert_eq!(approvals.len(), 2);
    assert_eq!(
        approvals[0]["decisions"][1]["statement"]["decision"],
        "deny"
    );
    assert_eq!(approvals[1]["decision"], "deny");
    assert_eq!(approvals[1]["decisions"], json!([]));
    assert!(
        approvals[1]["reason"]
            .as_str()
            .unwrap()
            .contains("0 of the 2")
    );
    // Of a refused call only its arguments' digest and size are kept, and the auditor reads it.
    for approval in &approvals {
        assert_eq!(approval["arguments"], json!(null));
        assert_eq!(approval["outOfLine"]["arguments"]["kept"], false);
    }
    assert_eq!(audit_with_policy(dir, None), (0, String::new()));
}

#[test]
fn bad_approval_rules_are_refused_naming_the_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 2, 60);
    let good = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    let cases = [
        (
            good.replace("quorum = 2", "quorum = 4"),
            "approvals[0].quorum = 4",
        ),
        (
            good.replace("\"carol\"]", "\"dave\"]"),
            "approvals[0].of: 'dave' is not in [[approvers]]",
        ),
        (
            good.replacen("key = \"", "key = \"zz", 1),
            "approvers[0].key (of 'alice')",
        ),
        (
            good.replace("match = \"CHARGE_*\"\n", ""),
            "approvals[0] needs `match`",
        ),
        (
            format!("{good}[approvals.fetch]\nurl = \"file:///decisions\"\n"),
            "approvals[0].fetch.url must be an http:// or https:// URL",
        ),
        (
            format!(
                "{good}[approvals.fetch]\nurl = \"https://d.example/{{request}}\"\ninterval-secs = 0\n"
            ),
            "approvals[0].fetch.interval-secs must be at least 1",
        ),
        (
            format!("{good}[approvals.notify]\nurl = \"https://h.example\"\nformat = \"slack\"\n"),
            "approvals[0].notify: format = \"slack\" needs signing-secret-env",
        ),
        (
            format!("{good}[approvals-fetch]\nurl = \"https://d.example\"\npoll = 1\n"),
            "unknown field `poll`",
        ),
    ];
    for (policy, expected) in cases {
        std::fs::write(dir.join("bad.toml"), policy).unwrap();
        let output = run_in(
            dir,
            &[
                "proxy",
                "--policy",
                "bad.toml",
                "--approvals-listen",
                "127.0.0.1:0",
                "--",
                BIN,
                "demo-server",
            ],
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(code(&output), 2, "{stderr}");
        assert!(
            stderr.contains("bad.toml") && stderr.contains(expected),
            "{expected}: {stderr}"
        );
    }
    let output = run_in(
        dir,
        &[
            "proxy",
            "--policy",
            "policy.toml",
            "--approvals-listen",
            "0.0.0.0:0",
            "--",
            BIN,
            "demo-server",
        ],
    );
    assert_eq!(code(&output), 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("loopback"));
}

#[test]
fn a_compensation_the_rules_gate_waits_for_its_quorum_too() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 1, 60);
    let policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    let policy = format!("on-failure = \"rollback\"\n{policy}").replace("CHARGE_*", "refund_*");
    std::fs::write(dir.join("policy.toml"), policy).unwrap();
    let mut proxy = Proxy::start(dir);
    proxy.send(
        2,
        "tools/call",
        json!({"name": "reserve_inventory", "arguments": {"sku": "sku-widget", "quantity": 3}}),
    );
    let reserved = proxy.answer(2)["result"]["structuredContent"]["reservationId"].clone();
    proxy.charge(3);
    assert_eq!(proxy.answer(3)["result"]["isError"], Value::Null);
    let mut failing = json!({"name": "create_shipment"});
    failing["arguments"] =
        json!({"reservationId": reserved, "address": "a", "simulateFailure": true});
    proxy.send(4, "tools/call", failing);
    let request = pending(dir, &proxy.url);
    let found = listing(&proxy.url)["pending"][0].clone();
    assert_eq!(found["tool"], "refund_payment", "{found}");
    assert_eq!(found["compensation"], json!({"undoes": "charge_payment"}));
    let log = dir.join("calls.jsonl");
    assert_eq!(calls_at_server(&log, "refund_payment"), 0);
    let (status, said) = decide(dir, &proxy.url, "bob", &request, "--approve");
    assert_eq!(status, 0, "{said}");
    let answer = proxy.answer(4);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(calls_at_server(&log, "refund_payment"), 1);
    assert_eq!(calls_at_server(&log, "release_inventory"), 1);
    let approvals = journal_kinds(&dir.join("journal.jsonl"), "approval");
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0]["compensation"], true);
    assert_eq!(approvals[0]["by"], "quorum");
    assert_eq!(approvals[0]["decisions"][0]["approver"], "bob");
    assert_eq!(audit_with_policy(dir, None), (0, String::new()));
    // Audited against a policy that gated the charge too, the charge ran unapproved.
    let policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    let (status, out) = audit_with_policy(dir, Some(policy.replace("refund_*", "*_payment")));
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("'charge_payment'") && out.contains("no approval record"),
        "{out}"
    );
    assert!(!out.contains("'refund_payment'"), "{out}");
}

#[test]
fn under_listen_the_approvals_endpoint_shares_its_address() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 2, 60);
    let stderr = std::fs::File::create(dir.join("proxy.stderr")).unwrap();
    let child = Command::new(BIN)
        .current_dir(dir)
        .args([
            "proxy",
            "--policy",
            "policy.toml",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--", BIN, "demo-server"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let _running = Running(child);
    let url = announced(
        &dir.join("proxy.stderr"),
        "mcp-recovery proxy: listening on ",
    )
    .replace("/mcp", "/approvals");
    assert_eq!(listing(&url), json!({"pending": []}));
    let (status, said) = approve(dir, &["--url", &url]);
    assert_eq!((status, said.trim()), (0, "no request is pending"));
    let (status, why) = post(&format!("{url}/abc"), &json!({"statement": {}}));
    assert_eq!(status, 400, "{why}");
}

/// The webhook stand-in: a local receiver handing on each body it is POSTed; its URL.
fn webhook() -> (String, Receiver<Value>) {
    let hook = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", hook.server_addr().to_ip().unwrap());
    let (sent, received) = channel();
    std::thread::spawn(move || {
        for mut request in hook.incoming_requests() {
            let mut body = String::new();
            request.as_reader().read_to_string(&mut body).unwrap();
            // Read as an approver's tool would, every number kept as written.
            let _ = sent.send(mcp_recovery_model::json::from_str(&body).unwrap());
            let _ = request.respond(tiny_http::Response::empty(204));
        }
    });
    (url, received)
}

/// A Slack interaction as Slack posts it: the form-encoded `block_actions` payload of `user`
/// pressing `action` on `request`, and its `X-Slack-Signature` (signed with `secret` at `at`).
fn slack_interaction(
    secret: &str,
    at: u64,
    user: &str,
    action: &str,
    request: &str,
) -> (String, String) {
    use hmac::{Hmac, Mac};
    let payload = json!({"type": "block_actions", "user": {"id": user, "username": "someone"},
        "team": {"id": "T0001"}, "actions": [{"action_id": action, "block_id": "b",
        "value": request, "type": "button", "action_ts": "1.2"}]})
    .to_string();
    let encoded: String = payload
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let body = format!("payload={encoded}");
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("v0:{at}:{body}").as_bytes());
    let digest: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    (body, format!("v0={digest}"))
}

/// POSTs a Slack interaction to the proxy: the status and the answer's `error`.
fn post_slack(url: &str, at: u64, body: &str, signature: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let response = agent
        .post(format!("{url}/slack"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("X-Slack-Request-Timestamp", at.to_string())
        .header("X-Slack-Signature", signature)
        .send(body.as_bytes())
        .unwrap();
    status_and_error(response)
}

#[test]
fn a_charge_runs_after_one_cli_and_one_slack_approval() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 2, 60);
    let (hook_url, received) = webhook();
    let mut policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    policy.push_str(&format!(
        "\n[approvals-notify]\nurl = \"{hook_url}\"\nformat = \"slack\"\n\
         signing-secret-env = \"SLACK_SIGNING_SECRET\"\n"
    ));
    std::fs::write(dir.join("policy.toml"), policy).unwrap();
    let mut proxy = Proxy::start(dir);
    proxy.charge(2);
    let request = pending(dir, &proxy.url);
    // The Block Kit message: what is asked, and buttons carrying the request id.
    let message = received.recv_timeout(Duration::from_secs(10)).unwrap();
    let found = listing(&proxy.url)["pending"][0].clone();
    assert_eq!(message["blocks"][0]["type"], "section", "{message}");
    let text = message["blocks"][0]["text"]["text"].as_str().unwrap();
    for part in [
        "charge_payment",
        "compensable",
        found["session"].as_str().unwrap(),
        found["expires"].as_str().unwrap(),
        "\"amount\":1.250E1",
    ] {
        assert!(text.contains(part), "{part} in {text}");
    }
    let actions = &message["blocks"][1];
    assert_eq!(actions["type"], "actions");
    let buttons: Vec<(&str, &str)> = actions["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["action_id"].as_str().unwrap(),
                b["value"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        buttons,
        [("approve", request.as_str()), ("deny", request.as_str())]
    );
    // Forged, stale, unknown-user and unknown-request interactions count nowhere.
    let now = unix_now();
    let (body, _) = slack_interaction(SLACK_SECRET, now, "UBOB", "approve", &request);
    let (_, forged) = slack_interaction("not-the-secret", now, "UBOB", "approve", &request);
    let (status, why) = post_slack(&proxy.url, now, &body, &forged);
    assert_eq!(
        (status, why.as_str()),
        (401, "the Slack signature does not verify")
    );
    let stale = now - 301;
    let (body, signature) = slack_interaction(SLACK_SECRET, stale, "UBOB", "approve", &request);
    let (status, why) = post_slack(&proxy.url, stale, &body, &signature);
    assert_eq!(status, 401, "{why}");
    assert!(why.contains("five minutes"), "{why}");
    let (denying, signature) = slack_interaction(SLACK_SECRET, now, "UBOB", "deny", &request);
    let (status, _) = post_slack(
        &proxy.url,
        now,
        &denying.replace("deny", "approve"),
        &signature,
    );
    assert_eq!(status, 401, "a body changed after signing");
    let (body, signature) = slack_interaction(SLACK_SECRET, now, "UMALLORY", "deny", &request);
    let (status, why) = post_slack(&proxy.url, now, &body, &signature);
    assert_eq!(
        (status, why.as_str()),
        (
            403,
            "Slack user 'UMALLORY' is not an approver of the policy"
        )
    );
    let (body, signature) = slack_interaction(SLACK_SECRET, now, "UBOB", "deny", "0000");
    assert_eq!(post_slack(&proxy.url, now, &body, &signature).0, 404);
    // Bob approves in Slack; the same interaction replayed counts once.
    let (body, signature) = slack_interaction(SLACK_SECRET, now, "UBOB", "approve", &request);
    let (status, why) = post_slack(&proxy.url, now, &body, &signature);
    assert_eq!(status, 200, "{why}");
    let (status, why) = post_slack(&proxy.url, now, &body, &signature);
    assert_eq!(status, 409, "{why}");
    // Alice approves from the terminal: two of three.
    runs_once_approved_by(&mut proxy, dir, "alice", &request);
    let journal = dir.join("journal.jsonl");
    let approvals = journal_kinds(&journal, "approval");
    assert_eq!(approvals.len(), 1);
    let decisions = approvals[0]["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 2, "{decisions:?}");
    let slack = &decisions[0];
    assert_eq!(
        (
            &slack["approver"],
            &slack["via"],
            &slack["slackUser"],
            &slack["decision"]
        ),
        (
            &json!("bob"),
            &json!("slack"),
            &json!("UBOB"),
            &json!("approve")
        )
    );
    assert_eq!(slack["request"], request.as_str());
    assert_eq!(slack["slackTimestamp"], now.to_string());
    assert_eq!(slack["slackSignature"], signature);
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(body.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(slack["bodySha256"], format!("sha256:{digest}"));
    assert_eq!(
        (&decisions[1]["approver"], &decisions[1]["via"]),
        (&json!("alice"), &json!("cli"))
    );
    // A deny pressed in Slack wins over any approvals.
    proxy.charge(3);
    let second = pending(dir, &proxy.url);
    let (body, signature) = slack_interaction(SLACK_SECRET, unix_now(), "UCAROL", "deny", &second);
    let (status, why) = post_slack(&proxy.url, unix_now(), &body, &signature);
    assert_eq!(status, 200, "{why}");
    let answer = proxy.answer(3);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("denied by 'carol'"), "{text}");
    assert_eq!(
        calls_at_server(&dir.join("calls.jsonl"), "charge_payment"),
        1
    );
    for file in ["journal.jsonl", "proxy.stderr"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(!text.contains(SLACK_SECRET), "the secret in {file}");
    }
    // The auditor counts the Slack decision for the approver whose slack-user it names, and
    // notes that the quorum rests on it.
    let (status, out) = audit_with_policy(dir, None);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("note: seq") && out.contains("rests on the Slack decision(s) of 'bob'"),
        "{out}"
    );
    let policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    let (status, out) = audit_with_policy(dir, Some(policy.replace("\"UBOB\"", "\"UBOBBY\"")));
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains(
            "the Slack decision of 'bob' came from a Slack user the policy does not give them"
        ) && out.contains("1 valid approval(s) of the 2"),
        "{out}"
    );
    forged_approval_is_caught(
        dir,
        "came from a Slack user the policy does not give them",
        |r| {
            r["decisions"][0]["slackUser"] = json!("UCAROL");
            true
        },
    );
    forged_approval_is_caught(dir, "is about another request", |r| {
        r["decisions"][0]["request"] = json!("0".repeat(32));
        true
    });
}

#[test]
fn slack_needs_its_signing_secret_named_and_set() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 1, 60);
    let good = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    let notify = "\n[approvals-notify]\nurl = \"http://127.0.0.1:9/hook\"\nformat = \"slack\"\n";
    let cases = [
        (format!("{good}{notify}"), "needs signing-secret-env"),
        (
            format!("{good}{notify}signing-secret-env = \"MCP_RECOVERY_TEST_UNSET\"\n"),
            "names MCP_RECOVERY_TEST_UNSET, which is not set",
        ),
        (
            good.replace("slack-user = \"UBOB\"", "slack-user = \"UALICE\""),
            "approvers[1].slack-user: 'UALICE' is given twice",
        ),
    ];
    for (policy, expected) in cases {
        std::fs::write(dir.join("bad.toml"), policy).unwrap();
        let output = Command::new(BIN)
            .current_dir(dir)
            .args([
                "proxy",
                "--policy",
                "bad.toml",
                "--approvals-listen",
                "127.0.0.1:0",
            ])
            .args(["--", BIN, "demo-server"])
            .env_remove("MCP_RECOVERY_TEST_UNSET")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(code(&output), 2, "{stderr}");
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }
}

/// Decisions published per request id, and how many times they were served.
type Published = Arc<Mutex<HashMap<String, (Vec<Value>, usize)>>>;

/// The decisions URL stand-in: serves, at `/decisions/{request}`, the decisions `published`
/// holds for that request (404 while it holds none), counting each time; its URL template.
fn decisions_store() -> (String, Published) {
    let store = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/decisions/{{request}}",
        store.server_addr().to_ip().unwrap()
    );
    let published: Published = Arc::default();
    let shared = Arc::clone(&published);
    std::thread::spawn(move || {
        for request in store.incoming_requests() {
            let id = request.url().trim_start_matches("/decisions/").to_owned();
            let found = shared
                .lock()
                .unwrap()
                .get_mut(&id)
                .map(|(decisions, served)| {
                    *served += 1;
                    decisions.clone()
                });
            let response = match found {
                Some(decisions) => {
                    tiny_http::Response::from_string(Value::from(decisions).to_string())
                }
                None => tiny_http::Response::from_string("").with_status_code(404),
            };
            let _ = request.respond(response);
        }
    });
    (url, published)
}

#[test]
fn decisions_fetched_from_the_policys_url_count_once_and_only_when_valid() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 2, 60);
    let (hook_url, received) = webhook();
    let (store_url, published) = decisions_store();
    // `[approvals.notify]` and `[approvals.fetch]` after the rule are that rule's own.
    let mut policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    policy.push_str(&format!(
        "[approvals.notify]\nurl = \"{hook_url}\"\n[approvals.fetch]\nurl = \"{store_url}\"\n\
         interval-secs = 1\n"
    ));
    std::fs::write(dir.join("policy.toml"), policy).unwrap();
    let mut proxy = Proxy::start(dir);
    proxy.charge(2);
    // The approver signs from the request the webhook was posted, without reaching the proxy.
    let offered = received.recv_timeout(Duration::from_secs(10)).unwrap();
    let request = offered["request"].as_str().unwrap().to_owned();
    std::fs::write(dir.join("pending.json"), offered.to_string()).unwrap();
    let sign = |name: &str| {
        let args = ["--pending", "pending.json", "--key", name, "--as", name];
        let (status, out) = approve(dir, &[&args[..], &[request.as_str(), "--approve"]].concat());
        assert_eq!(status, 0, "{out}");
        serde_json::from_str::<Value>(out.trim()).unwrap()
    };
    let alice = sign("alice");
    let statement = |approver: &str, expires: String| {
        json!({"type": "mcp-recovery/decision", "request": request,
            "call": offered["callDigest"], "decision": "approve", "expires": expires,
            "approver": approver})
    };
    let ahead = offered["expires"].as_str().unwrap().to_owned();
    let forged = signed(dir, "carol", &statement("bob", ahead.clone()));
    let expired = signed(dir, "carol", &statement("carol", rfc3339(unix_now() - 5)));
    let mut changed = statement("carol", ahead);
    changed["call"] = json!(format!("sha256:{}", "0".repeat(64)));
    let changed = signed(dir, "carol", &changed);
    let publish = |decisions: Vec<Value>| {
        published
            .lock()
            .unwrap()
            .insert(request.clone(), (decisions, 0));
    };
    publish(vec![forged, expired, changed, alice.clone(), alice.clone()]);
    let refusals = [
        "the key is not the one the policy gives 'bob'",
        "the decision has expired",
        "the call digest is not the pending call's",
    ];
    // Fetched twice (each refusal said on stderr by then), alice counts once, and none of the
    // others count at all.
    let stderr = dir.join("proxy.stderr");
    wait_for("the decisions fetched twice and refused", || {
        let said = std::fs::read_to_string(&stderr).unwrap_or_default();
        published.lock().unwrap()[&request].1 >= 2
            && refusals
                .iter()
                .all(|why| said.contains(&format!("{why}\n")))
    });
    let log = dir.join("calls.jsonl");
    assert_eq!(calls_at_server(&log, "charge_payment"), 0);
    publish(vec![alice, sign("bob")]);
    let answer = proxy.answer(2);
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
    assert_eq!(calls_at_server(&log, "charge_payment"), 1);
    let approvals = journal_kinds(&dir.join("journal.jsonl"), "approval");
    let decisions = approvals[0]["decisions"].as_array().unwrap();
    let counted: Vec<(&Value, &Value)> = decisions
        .iter()
        .map(|d| (&d["approver"], &d["via"]))
        .collect();
    assert_eq!(
        counted,
        [
            (&json!("alice"), &json!("url")),
            (&json!("bob"), &json!("url"))
        ]
    );
    let stderr = std::fs::read_to_string(stderr).unwrap();
    for why in refusals {
        assert_eq!(
            stderr.matches(why).count(),
            1,
            "{why} said once in {stderr}"
        );
    }
    assert!(!stderr.contains(&store_url[..20]), "{stderr}");
    assert_eq!(audit_with_policy(dir, None), (0, String::new()));
    forged_signed_approvals_are_caught(dir);
}

#[test]
fn approve_reads_a_pending_request_from_a_file_and_prints_the_decision() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 1, 60);
    let digest = format!("sha256:{}", "a".repeat(64));
    let request = json!({"request": "r-1", "callDigest": digest, "expires": "2030-01-01T00:00:00.000Z",
        "tool": "charge_payment"});
    std::fs::write(dir.join("one.json"), request.to_string()).unwrap();
    std::fs::write(
        dir.join("listing.json"),
        json!({"pending": [request]}).to_string(),
    )
    .unwrap();
    // Alice's deny of `request` as the pending request in `file` shows it.
    let deny = |file: &str, request: &str| {
        approve(
            dir,
            &[
                "--pending",
                file,
                "--key",
                "alice",
                "--as",
                "alice",
                request,
                "--deny",
            ],
        )
    };
    for file in ["one.json", "listing.json"] {
        let (status, out) = deny(file, "r-1");
        assert_eq!(status, 0, "{out}");
        let decision: Value = serde_json::from_str(out.trim()).unwrap();
        let statement = &decision["statement"];
        assert_eq!(
            (
                &statement["decision"],
                &statement["call"],
                &statement["request"]
            ),
            (&json!("deny"), &json!(digest), &json!("r-1"))
        );
        let key = std::fs::read_to_string(dir.join("alice.pub")).unwrap();
        let public = PublicKey::from_hex(key.trim()).unwrap();
        assert_eq!(decision["key"], public.id());
        assert!(public.verify(
            &canonical(statement),
            decision["signature"].as_str().unwrap()
        ));
    }
    // What the request carries reaches the terminal inert, and the decision still reads the same.
    let hostile = "2030-01-01T00:00:00.000Z\u{202e}\u{9b}2J\u{1b}[0m";
    let mut odd = request.clone();
    odd["expires"] = json!(hostile);
    std::fs::write(dir.join("odd.json"), odd.to_string()).unwrap();
    let (status, out) = deny("odd.json", "r-1");
    assert_eq!(status, 0, "{out}");
    assert!(
        !out.trim_end()
            .chars()
            .any(mcp_recovery_base::text::is_unsafe_char),
        "{out:?}"
    );
    let decision: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(decision["statement"]["expires"], hostile);
    let (status, _) = deny("one.json", "r-2");
    assert_eq!(status, 2, "another request id is not pending there");
    std::fs::write(dir.join("bad.json"), "[1").unwrap();
    let output = run_in(
        dir,
        &[
            "approve",
            "--pending",
            "bad.json",
            "--key",
            "alice",
            "--as",
            "alice",
            "r-1",
            "--deny",
        ],
    );
    assert_eq!(code(&output), 2);
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("bad.json"),
        "{output:?}"
    );
}

/// The journal's records rewritten by `edit` and written again as `name` by a forger with
/// write access, every hash recomputed.
fn forged(
    dir: &Path,
    name: &str,
    edit: impl FnOnce(Vec<serde_json::Map<String, Value>>) -> Vec<serde_json::Map<String, Value>>,
) {
    let text = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let path = dir.join(name);
    let mut forged = mcp_recovery_journal::Journal::open(&path, 64 << 20).unwrap();
    forged.set_sync(false);
    for record in edit(mcp_recovery_journal::read_records(&text).unwrap()) {
        let kind = mcp_recovery_journal::Kind::parse(record["kind"].as_str().unwrap()).unwrap();
        let session = record["session"].as_str().unwrap().to_owned();
        forged.append(&session, kind, record).unwrap();
    }
}

/// An approval decides the one call it approved: copied onto a second call with other
/// arguments, or left on a call whose arguments were changed, `audit verify --policy` (and the
/// verifier of spec/journal.md) names the call; a call journaled redacted cannot be recomputed,
/// and says so.
#[test]
fn an_approval_decides_only_the_call_it_approved() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 2, 60);
    let mut proxy = Proxy::start(dir);
    proxy.charge(2);
    let request = pending(dir, &proxy.url);
    let (status, said) = decide(dir, &proxy.url, "alice", &request, "--approve");
    assert_eq!(status, 0, "{said}");
    runs_once_approved_by(&mut proxy, dir, "bob", &request);
    drop(proxy);
    assert_eq!(audit_with_policy(dir, None), (0, String::new()));
    let is = |record: &serde_json::Map<String, Value>, kind: &str| record["kind"] == kind;

    // The approval and the call copied, as a second call of another amount.
    forged(dir, "copied.jsonl", |mut records| {
        let charge: Vec<_> = records
            .iter()
            .filter(|r| {
                (is(r, "approval") || is(r, "call.intent") || is(r, "call.outcome"))
                    && r["name"] == "charge_payment"
            })
            .cloned()
            .collect();
        for mut record in charge {
            record.insert("request".into(), json!(3));
            if !is(&record, "approval") {
                record.insert("call".into(), json!(record["call"].as_u64().unwrap() + 1));
                record["arguments"]["amount"] = json!(9999);
            }
            records.push(record);
        }
        records
    });
    let (status, out) = audit_journal_with_policy(dir, "copied.jsonl", None);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains(&format!("its approval request {request} decided seq"))
            && out.contains("the call digest its approvers signed is not this call's"),
        "{out}"
    );

    // The approved call's amount changed after the fact.
    forged(dir, "edited.jsonl", |mut records| {
        for record in &mut records {
            if is(record, "call.intent") && record["name"] == "charge_payment" {
                record["arguments"]["amount"] = json!(1250);
            }
        }
        records
    });
    let (status, out) = audit_journal_with_policy(dir, "edited.jsonl", None);
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("is not this call's"), "{out}");

    // Journaled with a secret replaced: the digest cannot be recomputed, which is said.
    forged(dir, "redacted.jsonl", |mut records| {
        for record in &mut records {
            if is(record, "call.intent") && record["name"] == "charge_payment" {
                record["arguments"]["customerId"] = json!("***");
                record.insert("redacted".into(), json!(true));
            }
        }
        records
    });
    let (status, out) = audit_journal_with_policy(dir, "redacted.jsonl", None);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("note: seq") && out.contains("cannot be recomputed"),
        "{out}"
    );
}

/// One HTTP/1.1 exchange on a fresh connection: the status and the body.
fn exchange(address: &str, request: &str) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The approvals address on a port of its own refuses what a web page could make a browser
/// send it through DNS rebinding, as the `--listen` address does: a Host that is not loopback,
/// an Origin that is not loopback (403, nothing listed). A Slack interaction, which comes
/// through a tunnel under the tunnel's name and is checked by its signature, is not refused
/// for its Host.
#[test]
fn the_approvals_address_refuses_foreign_hosts_and_origins() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 2, 60);
    let mut proxy = Proxy::start(dir);
    proxy.charge(2);
    let request = pending(dir, &proxy.url);
    let address = proxy
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/approvals")
        .to_owned();
    let port = address.rsplit(':').next().unwrap().to_owned();
    let get = |host: &str, origin: Option<&str>| {
        let origin = origin
            .map(|o| format!("Origin: {o}\r\n"))
            .unwrap_or_default();
        exchange(
            &address,
            &format!(
                "GET /approvals HTTP/1.1\r\nHost: {host}\r\n{origin}Connection: close\r\n\r\n"
            ),
        )
    };
    let (status, body) = get(&format!("rebound.example:{port}"), None);
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("host not allowed") && !body.contains("charge_payment"),
        "{body}"
    );
    let (status, body) = get(&address, Some("http://rebound.example"));
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("origin not allowed"), "{body}");
    let (status, body) = get(
        &format!("localhost:{port}"),
        Some(&format!("http://localhost:{port}")),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(&request), "{body}");
    // A Slack interaction under a tunnel's name reaches its signature check.
    let form = "payload=%7B%7D";
    let (status, body) = exchange(
        &address,
        &format!(
            "POST /approvals/slack HTTP/1.1\r\nHost: tunnel.example\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{form}",
            form.len()
        ),
    );
    assert!(
        (400..500).contains(&status) && !body.contains("host not allowed"),
        "{status} {body}"
    );
    let stderr = std::fs::read_to_string(dir.join("proxy.stderr")).unwrap();
    assert!(
        stderr.contains("refused a request for host rebound.example"),
        "{stderr}"
    );
}

/// The stdio proxy in front of `upstream`, with `flags`, sent `calls` (tool name and arguments)
/// one after the other: their answers' results.
fn through_proxy(
    dir: &Path,
    upstream: &str,
    flags: &[&str],
    calls: &[(&str, Value)],
) -> Vec<Value> {
    let mut command = Command::new(BIN);
    command
        .current_dir(dir)
        .arg("proxy")
        .args(flags)
        .args(["--url", upstream]);
    let (child, mut stdin, mut lines) = common::spawn_piped(&mut command);
    let _running = Running(child);
    let mut ask = |id: usize, method: &str, params: Value| -> Value {
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        message["params"] = params;
        writeln!(stdin, "{message}").unwrap();
        loop {
            let answer: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            if answer["id"] == id {
                return answer;
            }
        }
    };
    ask(0, "initialize", common::initialize_params());
    calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| {
            let params = json!({"name": name, "arguments": arguments});
            ask(i + 1, "tools/call", params)["result"].clone()
        })
        .collect()
}

/// The demo server's state, read through a proxy without a journal.
fn server_state(dir: &Path, upstream: &str) -> Value {
    let read = through_proxy(dir, upstream, &[], &[("get_state", json!({}))]);
    read[0]["structuredContent"].clone()
}

/// A session journaled in `journal.jsonl` by a proxy without a policy in front of the demo
/// server over HTTP: a charge; then a policy under which refunds need `quorum` of alice, bob and
/// carol. The server's log, the server and its URL.
fn charged_session(dir: &Path, quorum: usize) -> (std::path::PathBuf, Running, String) {
    let log = dir.join("calls.jsonl");
    let (server, upstream) = common::demo_http(&log);
    let charge = json!({"customerId": "c-1", "amount": 12.50, "currency": "EUR"});
    let charged = through_proxy(
        dir,
        &upstream,
        &["--journal", "journal.jsonl"],
        &[("charge_payment", charge)],
    );
    assert_eq!(charged[0]["isError"], Value::Null, "{charged:?}");
    setup(dir, quorum, 60);
    let policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    std::fs::write(
        dir.join("policy.toml"),
        policy.replace("CHARGE_*", "refund_*"),
    )
    .unwrap();
    (log, server, upstream)
}

/// `rollback --policy policy.toml --approvals-listen 127.0.0.1:0` against `upstream`, its stdout
/// and stderr in files of `dir`; the running command and its approvals URL.
fn rollback_taking_decisions(dir: &Path, upstream: &str) -> (Running, String) {
    let stdout = std::fs::File::create(dir.join("rollback.stdout")).unwrap();
    let stderr = std::fs::File::create(dir.join("rollback.stderr")).unwrap();
    let child = Command::new(BIN)
        .current_dir(dir)
        .args([
            "rollback",
            "--journal",
            "journal.jsonl",
            "--policy",
            "policy.toml",
        ])
        .args(["--approvals-listen", "127.0.0.1:0", "--url", upstream])
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap();
    let url = announced(
        &dir.join("rollback.stderr"),
        "mcp-recovery rollback: approvals at ",
    );
    (Running(child), url)
}

/// Waits for `child` to exit: its exit code and what it wrote on stdout.
fn finished(dir: &Path, child: &mut Running) -> (i32, String) {
    let mut status = None;
    wait_for("the rollback to end", || {
        status = child.0.try_wait().unwrap();
        status.is_some()
    });
    let stdout = std::fs::read_to_string(dir.join("rollback.stdout")).unwrap();
    (status.unwrap().code().unwrap(), stdout)
}

#[test]
fn rollback_runs_a_compensation_the_rules_gate_once_two_of_three_approve() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (log, _server, upstream) = charged_session(dir, 2);
    // Without a place to take decisions, or with one and no [[approvals]], nothing is done.
    let rollback = ["rollback", "--journal", "journal.jsonl", "--url", &upstream];
    let output = run_in(dir, &[&rollback[..], &["--policy", "policy.toml"]].concat());
    assert_eq!(code(&output), 2, "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("need a place to take decisions"),
        "{stderr}"
    );
    std::fs::write(dir.join("none.toml"), "").unwrap();
    let listen = ["--approvals-listen", "127.0.0.1:0", "--policy", "none.toml"];
    let output = run_in(dir, &[&rollback[..], &listen[..]].concat());
    assert_eq!(code(&output), 2, "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("needs a policy with [[approvals]]"),
        "{stderr}"
    );
    assert_eq!(calls_at_server(&log, "refund_payment"), 0);

    let (mut child, url) = rollback_taking_decisions(dir, &upstream);
    let request = pending(dir, &url);
    let found = listing(&url)["pending"][0].clone();
    assert_eq!(found["tool"], "refund_payment", "{found}");
    assert_eq!(found["compensation"], json!({"undoes": "charge_payment"}));
    let (status, said) = decide(dir, &url, "alice", &request, "--approve");
    assert_eq!(status, 0, "{said}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        calls_at_server(&log, "refund_payment"),
        0,
        "one is no quorum"
    );
    let (status, said) = decide(dir, &url, "carol", &request, "--approve");
    assert_eq!(status, 0, "{said}");
    let (status, stdout) = finished(dir, &mut child);
    assert_eq!(status, 0, "{stdout}");
    assert!(stdout.contains("1 compensated"), "{stdout}");
    assert_eq!(calls_at_server(&log, "refund_payment"), 1);
    assert_eq!(server_state(dir, &upstream)["charges"], json!({}));
    let journal = dir.join("journal.jsonl");
    let outcomes = journal_kinds(&journal, "compensation.outcome");
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0]["name"], "refund_payment");
    assert_eq!(
        outcomes[0]["result"]["isError"],
        Value::Null,
        "{}",
        outcomes[0]
    );
    let approvals = journal_kinds(&journal, "approval");
    assert_eq!(approvals.len(), 1);
    let approval = &approvals[0];
    assert_eq!(
        (
            &approval["compensation"],
            &approval["by"],
            &approval["decision"]
        ),
        (&json!(true), &json!("quorum"), &json!("allow"))
    );
    assert_eq!(approval["session"], outcomes[0]["session"]);
    assert_eq!(approval["approvalRequest"], request.as_str());
    assert_eq!(approval["callDigest"], found["callDigest"]);
    let names: Vec<&Value> = approval["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["approver"])
        .collect();
    assert_eq!(names, [&json!("alice"), &json!("carol")]);
    assert_eq!(audit_with_policy(dir, None), (0, String::new()));
    let policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
    let (status, out) = audit_with_policy(dir, Some(policy.replace("quorum = 2", "quorum = 3")));
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("'refund_payment'") && out.contains("2 valid approval(s) of the 3"),
        "{out}"
    );
}

#[test]
fn rollback_leaves_a_compensation_an_approver_denies_needing_attention() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (log, _server, upstream) = charged_session(dir, 2);
    let (mut child, url) = rollback_taking_decisions(dir, &upstream);
    let request = pending(dir, &url);
    let (status, said) = decide(dir, &url, "bob", &request, "--deny");
    assert_eq!(status, 0, "{said}");
    let (status, stdout) = finished(dir, &mut child);
    assert_eq!(status, 1, "{stdout}");
    assert!(
        stdout.contains("needs attention") && stdout.contains("denied by 'bob'"),
        "{stdout}"
    );
    assert_eq!(calls_at_server(&log, "refund_payment"), 0);
    assert_eq!(
        server_state(dir, &upstream)["charges"]
            .as_object()
            .unwrap()
            .len(),
        1
    );
    let journal = dir.join("journal.jsonl");
    assert!(journal_kinds(&journal, "compensation.intent").is_empty());
    let approvals = journal_kinds(&journal, "approval");
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0]["decision"], "deny");
    assert_eq!(
        approvals[0]["decisions"][0]["statement"]["decision"],
        "deny"
    );
    assert_eq!(audit_with_policy(dir, None), (0, String::new()));
}
