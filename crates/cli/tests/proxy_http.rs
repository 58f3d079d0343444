//! `proxy --listen` and `proxy --url` end to end: a client speaking Streamable HTTP to the
//! proxy, the binary's hidden `demo-server --http` (or a scripted server) behind it; rollback
//! over HTTP both ways, one rollback scope per `Mcp-Session-Id`, the Origin and Host rules,
//! the limits, hostile HTTP servers and 2026-07-28 peers.
// The demo server runs in process here: without the `demo` feature there is none.
#![cfg(feature = "demo")]
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{
    Running, audit_verify, bin_in, code, demo_http, initialize_params, journal_kinds,
    journal_records as records,
};
use mcp_recovery_client::{EventReader, StreamEvent};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");
const MODERN: &str = "2026-07-28";

/// A test directory, the demo server's call log and a journal path in it, the demo server over
/// HTTP and its URL.
fn behind_demo() -> (tempfile::TempDir, PathBuf, PathBuf, Running, String) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let journal = dir.path().join("journal.jsonl");
    let (server, url) = demo_http(&log);
    (dir, log, journal, server, url)
}

/// `proxy --listen 127.0.0.1:0 FLAGS…`: the child, its URL and its stderr lines.
fn listen(dir: &Path, flags: &[&str]) -> (Running, String, Receiver<String>) {
    let mut child = bin_in(dir)
        .args(["proxy", "--listen", "127.0.0.1:0"])
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (sender, lines) = channel();
    std::thread::spawn(move || {
        // Read to the end even when nobody listens, so the proxy's stderr never closes.
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            let _ = sender.send(line);
        }
    });
    let running = Running(child);
    let prefix = "mcp-recovery proxy: listening on ";
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the proxy names its address");
        if let Some(url) = line.strip_prefix(prefix) {
            return (running, url.to_owned(), lines);
        }
    }
}

/// `proxy --listen ARGS…` and the first line of its stderr, after which the pipe is closed.
fn first_stderr_line(dir: &Path, args: &[&str]) -> (Running, String) {
    let mut child = bin_in(dir)
        .args(["proxy", "--listen"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    (Running(child), first)
}

/// What a POST gave back.
struct Answer {
    status: u16,
    session: Option<String>,
    messages: Vec<Value>,
}

/// A Streamable HTTP client of the proxy.
struct Client {
    agent: ureq::Agent,
    url: String,
    session: Option<String>,
    next_id: u64,
    /// Extra headers on every request.
    headers: Vec<(String, String)>,
    /// `_meta` added to every request (2026-07-28).
    meta: Option<Value>,
}

impl Client {
    fn new(url: &str) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        Client {
            agent,
            url: url.to_owned(),
            session: None,
            next_id: 0,
            headers: Vec::new(),
            meta: None,
        }
    }

    fn modern(url: &str) -> Client {
        let mut client = Client::new(url);
        client.meta = Some(json!({"io.modelcontextprotocol/protocolVersion": MODERN}));
        client
            .headers
            .push(("MCP-Protocol-Version".into(), MODERN.into()));
        client
    }

    fn post(&mut self, body: &Value) -> Answer {
        let mut request = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            request = request.header("Mcp-Session-Id", session);
        }
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let response = request.send(body.to_string()).unwrap();
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_owned());
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let reader = response.into_body().into_reader();
        let mut messages = Vec::new();
        if content_type.starts_with("text/event-stream") {
            let mut events = EventReader::new(BufReader::new(reader), 1 << 26);
            while let StreamEvent::Message(data) = events.next_event().unwrap() {
                messages.push(serde_json::from_str(&data).unwrap());
            }
        } else {
            let mut bytes = Vec::new();
            reader.take(1 << 26).read_to_end(&mut bytes).unwrap();
            if !bytes.is_empty() {
                messages.push(serde_json::from_slice(&bytes).unwrap_or(Value::Null));
            }
        }
        Answer {
            status,
            session,
            messages,
        }
    }

    /// Sends a request and returns its response; the server's requests met on the way are
    /// answered afterwards, as a client would.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut params = params;
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        let answer =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(answer.status, 200, "{method}: {:?}", answer.messages);
        if self.session.is_none() {
            self.session = answer.session.clone();
        }
        let mut response = None;
        for message in answer.messages {
            if message.get("method").is_none() && message["id"] == id {
                response = Some(message);
            } else if message.get("method").is_some() && message.get("id").is_some() {
                let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": {}});
                assert_eq!(self.post(&reply).status, 202);
            }
        }
        response.unwrap_or_else(|| panic!("no answer to {method}"))
    }

    fn initialize(&mut self) {
        let answer = self.request("initialize", initialize_params());
        assert!(answer["result"]["protocolVersion"].is_string(), "{answer}");
        assert!(self.session.is_some(), "the proxy names the session");
        let notified = self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(notified.status, 202);
    }

    fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))["result"].clone()
    }

    fn state(&mut self) -> Value {
        self.call("get_state", json!({}))["structuredContent"].clone()
    }

    fn delete(&mut self) -> u16 {
        let mut request = self.agent.delete(&self.url);
        if let Some(session) = &self.session {
            request = request.header("Mcp-Session-Id", session);
        }
        request.call().unwrap().status().as_u16()
    }
}

/// A raw request with chosen headers: the status.
fn status_of(url: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let mut request = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send(body.to_owned()).unwrap().status().as_u16()
}

fn calls(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn calls_named(log: &Path, name: &str) -> Vec<Value> {
    calls(log)
        .into_iter()
        .filter(|c| c["name"] == name)
        .collect()
}

fn verified(dir: &Path, journal: &Path) {
    let (status, out) = audit_verify(dir, journal);
    assert_eq!(status, 0, "{out}");
}

/// `proxy --listen` with a journal and `--on-failure rollback` in front of `upstream`.
fn rolling_back(dir: &Path, journal: &Path, upstream: &str) -> (Running, String) {
    let journal = journal.to_str().unwrap();
    let flags = [
        "--url",
        upstream,
        "--journal",
        journal,
        "--on-failure",
        "rollback",
    ];
    let (proxy, url, _stderr) = listen(dir, &flags);
    (proxy, url)
}

/// The checkout workflow with a failing third step: the proxy rolls it back.
fn failing_workflow(client: &mut Client) -> (Value, Value) {
    let start = client.state();
    let reserved = client.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 3}),
    );
    client.call(
        "charge_payment",
        json!({"customerId": "c", "amount": 12, "currency": "EUR"}),
    );
    let failed = client.call(
        "create_shipment",
        json!({"reservationId": reserved["structuredContent"]["reservationId"],
               "address": "a", "simulateFailure": true}),
    );
    assert_eq!(failed["isError"], true, "{failed}");
    (start, client.state())
}

#[test]
fn a_failed_workflow_is_rolled_back_over_http_both_ways() {
    let (dir, log, journal, _server, upstream) = behind_demo();
    let (_proxy, url) = rolling_back(dir.path(), &journal, &upstream);
    let mut client = Client::new(&url);
    client.initialize();
    let listed = client.request("tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 7);
    let (start, end) = failing_workflow(&mut client);
    assert_eq!(start, end);
    assert_eq!(calls_named(&log, "refund_payment").len(), 1);
    assert_eq!(calls_named(&log, "release_inventory").len(), 1);
    assert_eq!(client.delete(), 200);
    // The session is gone: its id is refused.
    let after = client.post(&json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}));
    assert_eq!(after.status, 404);
    verified(dir.path(), &journal);
    assert_eq!(journal_kinds(&journal, "compensation.outcome").len(), 2);
}

#[test]
fn a_stdio_client_reaches_an_http_server_and_header_values_never_show() {
    let (dir, log, journal, _server, upstream) = behind_demo();
    let mut proxy = StdioProxy::start(
        dir.path(),
        &[
            "--on-failure",
            "rollback",
            "--journal",
            journal.to_str().unwrap(),
            "--url",
            &upstream,
            "--header",
            "X-Api-Key: ${PROXY_TEST_KEY}",
        ],
    );
    let mut ask = |id: u64, method: &str, params: Value| proxy.ask(id, method, params);
    let init = ask(1, "initialize", initialize_params());
    assert_eq!(
        init["result"]["serverInfo"]["name"],
        "mcp-recovery-demo-server"
    );
    let reserved = ask(
        2,
        "tools/call",
        json!({"name": "reserve_inventory", "arguments": {"sku": "sku-widget", "quantity": 1}}),
    );
    let reservation = reserved["result"]["structuredContent"]["reservationId"].clone();
    let failed = ask(
        3,
        "tools/call",
        json!({"name": "create_shipment", "arguments":
               {"reservationId": reservation, "address": "a", "simulateFailure": true}}),
    );
    assert_eq!(failed["result"]["isError"], true);
    let released = calls_named(&log, "release_inventory");
    assert_eq!(released.len(), 1);
    assert_eq!(released[0]["arguments"]["reservationId"], reservation);
    let output = proxy.finish();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("s3cret"), "{stderr}");
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(!text.contains("s3cret"));
    verified(dir.path(), &journal);
}

#[test]
fn each_session_has_its_own_rollback_scope() {
    let (dir, log, journal, _server, upstream) = behind_demo();
    let (_proxy, url) = rolling_back(dir.path(), &journal, &upstream);
    let mut first = Client::new(&url);
    first.initialize();
    let mut second = Client::new(&url);
    second.initialize();
    assert_ne!(first.session, second.session);
    let kept = first.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 2}),
    );
    let kept = kept["structuredContent"]["reservationId"].clone();
    let undone = second.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 1}),
    );
    let undone = undone["structuredContent"]["reservationId"].clone();
    let failed = second.call(
        "create_shipment",
        json!({"reservationId": undone, "address": "a", "simulateFailure": true}),
    );
    assert_eq!(failed["isError"], true);
    // Only the failing session's reservation was released.
    let released = calls_named(&log, "release_inventory");
    assert_eq!(released.len(), 1, "{released:?}");
    assert_eq!(released[0]["arguments"]["reservationId"], undone);
    let state = first.state().to_string();
    assert!(state.contains(kept.as_str().unwrap()), "{state}");
    // One session's id is not a key to another's requests.
    let mut stranger = Client::new(&url);
    stranger.session = Some("0".repeat(32));
    assert_eq!(
        stranger
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .status,
        404
    );
    assert_eq!(first.delete(), 200);
    assert_eq!(second.delete(), 200);
    verified(dir.path(), &journal);
    let all = records(&journal);
    let sessions: std::collections::HashSet<&str> =
        all.iter().map(|r| r["session"].as_str().unwrap()).collect();
    assert_eq!(sessions.len(), 2);
    let compensated: std::collections::HashSet<&str> = all
        .iter()
        .filter(|r| r["kind"] == "compensation.outcome")
        .map(|r| r["session"].as_str().unwrap())
        .collect();
    assert_eq!(compensated.len(), 1);
    // The journal's session ids are not the HTTP session ids.
    for id in [&first.session, &second.session] {
        assert!(!sessions.contains(id.as_deref().unwrap()));
    }
}

#[test]
fn origins_and_hosts_other_than_loopback_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let server = [BIN, "demo-server", "--call-log", log.to_str().unwrap()];
    let mut flags = vec!["--allow-origin", "https://app.example", "--"];
    flags.extend(server);
    let (_proxy, url, stderr) = listen(dir.path(), &flags);
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": initialize_params()})
    .to_string();
    for origin in [
        "http://evil.test",
        "http://127.0.0.1.evil.test",
        "https://localhost.evil.test:8080",
        "null",
        "https://app.example.evil",
        "file://",
    ] {
        assert_eq!(
            status_of(&url, &[("Origin", origin)], &ping),
            403,
            "{origin}"
        );
    }
    let refused = stderr.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        refused.contains("refused a request from origin"),
        "{refused}"
    );
    assert_eq!(
        status_of(&url, &[("Host", "evil.test:80")], &ping),
        403,
        "a rebound host name"
    );
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "http://[::1]:5173",
        "https://app.example",
    ] {
        assert_eq!(
            status_of(&url, &[("Origin", origin)], &ping),
            200,
            "{origin}"
        );
    }
    // No Origin at all: a client that is not a browser.
    assert_eq!(status_of(&url, &[], &ping), 200);
    // Nothing refused reached the server.
    assert!(calls(&log).is_empty());
}

#[test]
fn only_loopback_is_listened_on_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let output = bin_in(dir.path())
        .args(["proxy", "--listen", "0.0.0.0:0", "--", BIN, "demo-server"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a loopback address"), "{stderr}");
    assert!(stderr.contains("--allow-remote"), "{stderr}");
    // Allowed, it says so loudly before anything else.
    let (_running, first) = first_stderr_line(
        dir.path(),
        &["0.0.0.0:0", "--allow-remote", "--", BIN, "demo-server"],
    );
    assert!(first.contains("WARNING"), "{first}");
    assert!(first.contains("not loopback"), "{first}");
}

#[test]
fn limits_on_bodies_and_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let (_proxy, url, _stderr) = listen(
        dir.path(),
        &["--max-sessions", "1", "--", BIN, "demo-server"],
    );
    let mut first = Client::new(&url);
    first.initialize();
    let mut second = Client::new(&url);
    let refused = second.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": initialize_params()}));
    assert_eq!(refused.status, 503);
    let huge = format!("{{\"pad\":\"{}\"}}", "x".repeat(9 * 1024 * 1024));
    assert_eq!(status_of(&url, &[], &huge), 413);
    assert_eq!(status_of(&url, &[], "not json"), 400);
    // A closed session frees its place.
    assert_eq!(first.delete(), 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut third = Client::new(&url);
        let answer = third.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": initialize_params()}));
        if answer.status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the closed session's place was never freed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `proxy FLAGS…` with the client on its stdio (`PROXY_TEST_KEY` set in its environment).
struct StdioProxy {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl StdioProxy {
    fn start(dir: &Path, flags: &[&str]) -> StdioProxy {
        let mut child = bin_in(dir)
            .env("PROXY_TEST_KEY", "s3cret-header-value")
            .arg("proxy")
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        StdioProxy {
            child,
            stdin,
            lines,
        }
    }

    /// Sends a request; its response (the messages before it are skipped).
    fn ask(&mut self, id: u64, method: &str, params: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin.as_mut().unwrap(), "{request}").unwrap();
        loop {
            let line = self.lines.next().unwrap().unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    /// Closes stdin; the exit status and stderr.
    fn finish(mut self) -> std::process::Output {
        self.stdin = None;
        self.child.wait_with_output().unwrap()
    }
}

/// One request a scripted server received: its headers (lowercase names) and JSON body.
#[derive(Debug, Clone)]
struct Seen {
    headers: std::collections::HashMap<String, String>,
    body: Value,
}

/// An HTTP server on a loopback port: each request is recorded, then `answer` writes to the
/// connection whatever it likes (returning false closes it). Returns the URL and the record.
fn scripted(
    answer: impl Fn(&Seen, &mut TcpStream) -> bool + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let record = Arc::clone(&record);
            let answer = Arc::clone(&answer);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut headers = std::collections::HashMap::new();
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':') {
                            headers
                                .insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
                        }
                    }
                    let length: usize = headers
                        .get("content-length")
                        .map_or(0, |v| v.parse().unwrap());
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let seen = Seen {
                        headers,
                        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                    };
                    // Recorded before it is answered.
                    record.lock().unwrap().push(seen.clone());
                    if !request_line.starts_with("POST") {
                        let _ = stream.write_all(
                            b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n",
                        );
                        continue;
                    }
                    if !answer(&seen, &mut stream) {
                        return;
                    }
                }
            });
        }
    });
    (url, seen)
}

fn http(stream: &mut TcpStream, status: &str, content_type: &str, body: &str) -> bool {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).is_ok() && stream.write_all(body.as_bytes()).is_ok()
}

#[test]
fn hostile_http_servers_give_the_client_an_error_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "call-timeout-secs = 2\n").unwrap();
    type Script = fn(&Seen, &mut TcpStream) -> bool;
    let hang: Script = |_, _| {
        std::thread::sleep(Duration::from_secs(60));
        false
    };
    let garbage: Script = |_, stream| http(stream, "200 OK", "application/json", "<html>no</html>");
    let status: Script = |_, stream| http(stream, "500 Oops", "text/plain", "\u{1b}[31mboom");
    let huge: Script = |_, stream| {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                    Content-Length: 100000000\r\n\r\n[";
        if stream.write_all(head.as_bytes()).is_err() {
            return false;
        }
        let chunk = vec![b' '; 1 << 20];
        while stream.write_all(&chunk).is_ok() {}
        false
    };
    let endless: Script = |_, stream| {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
        if stream.write_all(head.as_bytes()).is_err() {
            return false;
        }
        let event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\
                     \"params\":{\"level\":\"info\",\"data\":\"more\"}}\n\n";
        while stream.write_all(event.as_bytes()).is_ok() {
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    };
    for (mode, script) in [
        ("hang", hang),
        ("garbage", garbage),
        ("status", status),
        ("huge", huge),
        ("endless", endless),
    ] {
        let (upstream, seen) = scripted(script);
        let (_proxy, url, _stderr) = listen(
            dir.path(),
            &["--policy", policy.to_str().unwrap(), "--url", &upstream],
        );
        let started = Instant::now();
        let mut client = Client::new(&url);
        let answer = client.request("initialize", initialize_params());
        let elapsed = started.elapsed();
        assert!(answer.get("error").is_some(), "{mode}: {answer}");
        assert!(elapsed < Duration::from_secs(20), "{mode}: {elapsed:?}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(!message.contains('\u{1b}'), "{mode}: {message}");
        assert!(!seen.lock().unwrap().is_empty(), "{mode}");
    }
}

/// A 2026-07-28 server: `server/discover` instead of `initialize`, the version in every
/// request's `_meta` and header (answered 400 otherwise), the demo's tools and state.
fn modern_server(log: &Path) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let demo = mcp_recovery_demo_server::Server::new(mcp_recovery_demo_server::Config {
        call_log: Some(log.to_path_buf()),
        ..mcp_recovery_demo_server::Config::default()
    });
    scripted(move |seen, stream| {
        let body = &seen.body;
        if body.get("method").is_none() || body.get("id").is_none() {
            return stream
                .write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                .is_ok();
        }
        let id = &body["id"];
        let version = body
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str);
        if version != Some(MODERN)
            || seen.headers.get("mcp-protocol-version").map(String::as_str) != Some(MODERN)
        {
            let error = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32602, "message": "the protocol version is missing or wrong"}});
            return http(
                stream,
                "400 Bad Request",
                "application/json",
                &error.to_string(),
            );
        }
        let answer = match body["method"].as_str() {
            Some("server/discover") => json!({"jsonrpc": "2.0", "id": id, "result": {
                "supportedVersions": [MODERN], "capabilities": {"tools": {}},
                "serverInfo": {"name": "modern", "version": "1"}, "resultType": "complete"}}),
            Some("initialize") => json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found: initialize"}}),
            _ => {
                let mut answer = demo.handle(body).unwrap();
                if let Some(result) = answer.get_mut("result") {
                    result["resultType"] = json!("complete");
                }
                answer
            }
        };
        let event = format!("event: message\ndata: {answer}\n\n");
        http(stream, "200 OK", "text/event-stream", &event)
    })
}

#[test]
fn a_2026_07_28_client_and_server_pass_through_and_are_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let journal = dir.path().join("journal.jsonl");
    let (upstream, seen) = modern_server(&log);
    let (_proxy, url) = rolling_back(dir.path(), &journal, &upstream);
    let mut client = Client::modern(&url);
    let discovered = client.request("server/discover", json!({}));
    assert_eq!(
        discovered["result"]["supportedVersions"][0], MODERN,
        "{discovered}"
    );
    assert_eq!(discovered["result"]["resultType"], "complete");
    // No sessions in 2026-07-28: the proxy names none, and keeps one scope for such clients.
    assert_eq!(client.session, None);
    let listed = client.request("tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 7);
    let (start, end) = failing_workflow(&mut client);
    assert_eq!(start, end);
    assert_eq!(calls_named(&log, "release_inventory").len(), 1);
    assert_eq!(calls_named(&log, "refund_payment").len(), 1);
    // Every request upstream, the proxy's own compensations included, spoke 2026-07-28.
    let requests = seen.lock().unwrap().clone();
    assert!(
        requests
            .iter()
            .all(|r| r.body.get("method").and_then(Value::as_str) != Some("initialize"))
    );
    assert!(requests.iter().any(|r| {
        r.body["params"]["name"] == "release_inventory"
            && r.headers.get("mcp-protocol-version").map(String::as_str) == Some(MODERN)
    }));
    verified(dir.path(), &journal);
    let classes: Vec<Value> = records(&journal)
        .into_iter()
        .filter(|r| r["kind"] == "call.intent" && r["name"] == "reserve_inventory")
        .collect();
    assert_eq!(classes[0]["class"], "compensable", "{classes:?}");
}

#[test]
fn a_2026_07_28_stdio_client_reaches_a_2026_07_28_http_server() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let (upstream, seen) = modern_server(&log);
    let mut proxy = StdioProxy::start(
        dir.path(),
        &["--on-failure", "rollback", "--url", &upstream],
    );
    let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}});
    let with = |mut params: Value| {
        params["_meta"] = meta["_meta"].clone();
        params
    };
    let discovered = proxy.ask(1, "server/discover", with(json!({})));
    assert_eq!(
        discovered["result"]["supportedVersions"][0], MODERN,
        "{discovered}"
    );
    let reserved = proxy.ask(
        2,
        "tools/call",
        with(
            json!({"name": "reserve_inventory", "arguments": {"sku": "sku-widget", "quantity": 1}}),
        ),
    );
    let reservation = reserved["result"]["structuredContent"]["reservationId"].clone();
    let failed = proxy.ask(
        3,
        "tools/call",
        with(json!({"name": "create_shipment", "arguments":
               {"reservationId": reservation, "address": "a", "simulateFailure": true}})),
    );
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    // The proxy found the tools list on its own (no initialize) and rolled back.
    let released = calls_named(&log, "release_inventory");
    assert_eq!(released.len(), 1);
    assert_eq!(released[0]["arguments"]["reservationId"], reservation);
    assert_eq!(proxy.finish().status.code(), Some(0));
    let requests = seen.lock().unwrap().clone();
    assert!(requests.iter().any(|r| r.body["method"] == "tools/list"
        && r.headers.get("mcp-protocol-version").map(String::as_str) == Some(MODERN)));
}

#[test]
fn a_closed_stderr_never_stops_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    // The address, then the pipe is closed: every later note fails to write.
    let (_running, first) =
        first_stderr_line(dir.path(), &["127.0.0.1:0", "--", BIN, "demo-server"]);
    let url = first.trim().rsplit(' ').next().unwrap().to_owned();
    let mut client = Client::new(&url);
    client.initialize();
    assert!(client.state().is_object());
    assert_eq!(client.delete(), 200);
}
