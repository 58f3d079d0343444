//! `proxy` refuses what the gate and the server could read differently, on stdio and over
//! `--listen`: member names repeated or equal under case folding, numeric ids past 2^53 - 1,
//! and ids holding the prefix of the proxy's own requests. The demo server behind `tee` shows
//! that nothing refused reached it; the journal shows that nothing refused was journaled.
// The demo server is the upstream: without the `demo` feature there is none.
#![cfg(feature = "demo")]
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use common::{Running, bin_in, journal_kinds};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");

/// The demo server behind `tee`: `received.jsonl` holds every line it got.
fn recording() -> Vec<String> {
    let script = r#"tee -a received.jsonl | "$0" demo-server --call-log calls.jsonl"#;
    vec!["sh".into(), "-c".into(), script.into(), BIN.into()]
}

/// The messages the server received, batches split.
fn received(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("received.jsonl"))
        .unwrap_or_default()
        .lines()
        .flat_map(|line| match serde_json::from_str::<Value>(line).unwrap() {
            Value::Array(items) => items,
            other => vec![other],
        })
        .collect()
}

/// The tools the server was asked to call.
fn calls_received(dir: &Path) -> Vec<String> {
    received(dir)
        .iter()
        .filter(|m| m["method"] == "tools/call")
        .map(|m| m["params"]["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Nothing the server received holds `text`.
fn never_received(dir: &Path, text: &str) {
    let raw = std::fs::read_to_string(dir.join("received.jsonl")).unwrap_or_default();
    assert!(!raw.contains(text), "{text} reached the server:\n{raw}");
}

fn intents(journal: &Path) -> Vec<String> {
    journal_kinds(journal, "call.intent")
        .iter()
        .map(|r| r["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A -32600 error naming what it refused.
fn assert_refused(answer: &Value, id: &Value, says: &[&str]) {
    assert_eq!(answer["id"], *id, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    for part in says {
        assert!(message.contains(part), "{part} in {message}");
    }
}

const NAME_AND_NAME: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_state","NAME":"charge_payment","arguments":{}}}"#;
const NAME_TWICE: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_state","name":"charge_payment","arguments":{}}}"#;
const METHOD_AND_METHOD: &str = r#"{"jsonrpc":"2.0","id":3,"method":"ping","Method":"tools/call","params":{"name":"charge_payment","arguments":{}}}"#;
const PAST_2_53: &str = r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"get_state","arguments":{}}}"#;
const OWN_ID: &str = r#"{"jsonrpc":"2.0","id":"mcp-recovery-proxy-1","method":"tools/call","params":{"name":"get_state","arguments":{}}}"#;
const TWO_IDS: &str = r#"{"jsonrpc":"2.0","id":5,"ID":6,"method":"tools/call","params":{"name":"get_state","arguments":{}}}"#;
const GOOD: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_state","arguments":{}}}"#;

struct Wire {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Wire {
    fn start(dir: &Path, flags: &[&str]) -> Wire {
        let stderr = std::fs::File::create(dir.join("proxy.stderr")).unwrap();
        let mut child = bin_in(dir)
            .arg("proxy")
            .args(flags)
            .arg("--")
            .args(recording())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
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

    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("a line from the proxy within 30 s");
        serde_json::from_str(&line).unwrap()
    }

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

#[test]
fn ambiguous_messages_and_unsafe_ids_are_refused_on_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let flags = ["--journal", journal.to_str().unwrap(), "--deny", "charge_*"];
    let mut wire = Wire::start(dir.path(), &flags);
    wire.send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert!(wire.next()["result"]["protocolVersion"].is_string());
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    for (line, id, says) in [
        (NAME_AND_NAME, json!(1), &[r#""name""#, r#""NAME""#][..]),
        (NAME_TWICE, json!(2), &[r#""name""#, "written twice"][..]),
        (
            METHOD_AND_METHOD,
            json!(3),
            &[r#""method""#, r#""Method""#][..],
        ),
        (
            PAST_2_53,
            json!(9_007_199_254_740_993_u64),
            &["2^53 - 1"][..],
        ),
        (
            OWN_ID,
            json!("mcp-recovery-proxy-1"),
            &["reserved for the proxy's own requests"][..],
        ),
        (TWO_IDS, Value::Null, &[r#""id""#, r#""ID""#][..]),
    ] {
        wire.send(line);
        assert_refused(&wire.next(), &id, says);
    }
    // In a batch, only the ambiguous element is refused.
    wire.send(
        r#"[{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"get_state","arguments":{}}},{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"get_state","Name":"charge_payment","arguments":{}}}]"#,
    );
    let batch = wire.next();
    let answers = batch.as_array().unwrap_or_else(|| panic!("{batch}"));
    let by_id = |id: &str| answers.iter().find(|a| a["id"] == id).unwrap();
    assert!(by_id("b1")["result"].is_object(), "{batch}");
    assert_refused(by_id("b2"), &json!("b2"), &[r#""Name""#]);
    wire.send(GOOD);
    assert_eq!(wire.next()["id"], 7);
    assert!(wire.finish().is_empty());
    assert_eq!(calls_received(dir.path()), ["get_state", "get_state"]);
    never_received(dir.path(), "charge_payment");
    never_received(dir.path(), "9007199254740993");
    assert_eq!(intents(&journal), ["get_state", "get_state"]);
    let stderr = std::fs::read_to_string(dir.path().join("proxy.stderr")).unwrap();
    assert!(stderr.contains("ambiguous member names"), "{stderr}");
}

/// `proxy --listen 127.0.0.1:0 FLAGS… -- the recording server`: the child and its URL.
fn listen(dir: &Path, flags: &[&str]) -> (Running, String) {
    let server = recording();
    let mut args: Vec<&str> = flags.to_vec();
    args.push("--");
    args.extend(server.iter().map(String::as_str));
    let (running, url, _stderr) = common::listen(dir, &args, &[]);
    (running, url)
}

/// A POST of `body` (raw text): the status, the session it names, the messages it answers.
fn post(url: &str, session: Option<&str>, body: &str) -> (u16, Option<String>, Vec<Value>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let mut request = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request.header("Mcp-Session-Id", session);
    }
    let response = request.send(body.to_owned()).unwrap();
    let status = response.status().as_u16();
    let named = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let stream = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let mut text = String::new();
    response
        .into_body()
        .into_reader()
        .take(1 << 24)
        .read_to_string(&mut text)
        .unwrap();
    let messages = if stream {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .filter(|data| !data.is_empty())
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    } else if text.is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_str(&text).unwrap()]
    };
    (status, named, messages)
}

#[test]
fn ambiguous_messages_and_unsafe_ids_are_refused_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let (_proxy, url) = listen(
        dir.path(),
        &["--journal", journal.to_str().unwrap(), "--deny", "charge_*"],
    );
    let (status, session, _) = post(
        &url,
        None,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(status, 200);
    let session = session.expect("the proxy names the session");
    let session = Some(session.as_str());
    let (status, _, _) = post(
        &url,
        session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status, 202);
    // Refused in the POST's own answer, before the session sees them.
    for (body, id, says) in [
        (NAME_AND_NAME, json!(1), &[r#""name""#, r#""NAME""#][..]),
        (NAME_TWICE, json!(2), &[r#""name""#, "written twice"][..]),
        (
            METHOD_AND_METHOD,
            json!(3),
            &[r#""method""#, r#""Method""#][..],
        ),
        (TWO_IDS, Value::Null, &[r#""id""#, r#""ID""#][..]),
    ] {
        let (status, _, answers) = post(&url, session, body);
        assert_eq!(status, 400, "{body}: {answers:?}");
        assert_eq!(answers.len(), 1, "{answers:?}");
        assert_refused(&answers[0], &id, says);
    }
    // Answered by the session, with the id.
    for (body, id, says) in [
        (PAST_2_53, json!(9_007_199_254_740_993_u64), "2^53 - 1"),
        (
            OWN_ID,
            json!("mcp-recovery-proxy-1"),
            "reserved for the proxy's own requests",
        ),
    ] {
        let (status, _, answers) = post(&url, session, body);
        assert_eq!(status, 200, "{body}: {answers:?}");
        let answer = answers.iter().find(|a| a["id"] == id).unwrap();
        assert_refused(answer, &id, &[says]);
    }
    let (status, _, answers) = post(&url, session, GOOD);
    assert_eq!(status, 200);
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 7 && a["result"].is_object()),
        "{answers:?}"
    );
    assert_eq!(calls_received(dir.path()), ["get_state"]);
    never_received(dir.path(), "charge_payment");
    never_received(dir.path(), "9007199254740993");
    assert_eq!(intents(&journal), ["get_state"]);
}
