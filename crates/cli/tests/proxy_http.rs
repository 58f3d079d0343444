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
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{
    Running, audit_verify, bin_in, code, demo_http, initialize_params, journal_kinds,
    journal_records as records, run_in,
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
    common::listen(dir, flags, &[])
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
                // A priming event carries only an id.
                if !data.is_empty() {
                    messages.push(serde_json::from_str(&data).unwrap());
                }
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

/// A URL's query (`?api_key=…`) is never shown: not in the journal, on stderr, in a note on a
/// failed exchange or in what `rollback` prints; the URL is shown as scheme, host, port, path.
#[test]
fn a_query_of_the_upstream_url_is_never_shown() {
    const KEY: &str = "k3y-in-the-query";
    let (dir, log, journal, _server, upstream) = behind_demo();
    let keyed = format!("{upstream}?api_key={KEY}");
    let journaled = ["--journal", journal.to_str().unwrap(), "--url", &keyed];
    let mut proxy = StdioProxy::start(dir.path(), &journaled);
    proxy.ask(1, "initialize", initialize_params());
    let reserve = json!({"name": "reserve_inventory",
                         "arguments": {"sku": "sku-widget", "quantity": 1}});
    proxy.ask(2, "tools/call", reserve);
    let output = proxy.finish();
    let mut shown = String::from_utf8_lossy(&output.stderr).into_owned();
    let start = &journal_kinds(&journal, "session.start")[0];
    assert_eq!(start["upstream"], upstream.as_str());
    // Its effect is left: `rollback` names the session and its upstream, and undoes it.
    let rollback = [
        "rollback",
        "--journal",
        journal.to_str().unwrap(),
        "--url",
        &keyed,
    ];
    let output = run_in(dir.path(), &rollback);
    assert_eq!(code(&output), 0, "{output:?}");
    shown.push_str(&String::from_utf8_lossy(&output.stdout));
    shown.push_str(&String::from_utf8_lossy(&output.stderr));
    assert!(shown.contains(&format!("upstream {upstream})")), "{shown}");
    assert_eq!(calls_named(&log, "release_inventory").len(), 1);
    // A server that cannot be reached is named in the note on stderr.
    let closed = "http://127.0.0.1:1/mcp";
    let unreachable = format!("{closed}?api_key={KEY}");
    let mut proxy = StdioProxy::start(dir.path(), &["--url", &unreachable]);
    proxy.ask(1, "initialize", initialize_params());
    let output = proxy.finish();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(closed), "{stderr}");
    shown.push_str(&stderr);
    shown.push_str(&std::fs::read_to_string(&journal).unwrap());
    assert!(!shown.contains(KEY), "{shown}");
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
    let upstream = mid_call_server();
    let (_proxy, url, stderr) = listen(dir.path(), &["--max-sessions", "2", "--url", &upstream]);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": initialize_params()});
    let mut first = Client::new(&url);
    first.initialize();
    // A GET stream only listens: its session, with no request pending, is idle.
    let mut listening = open_get(&url, &first);
    let mut second = Client::new(&url);
    second.initialize();
    // At the cap, a new client is served: the least recently used idle session is closed,
    // said on stderr, its stream ends, and its later requests are answered as an ended
    // session's.
    let mut third = Client::new(&url);
    third.initialize();
    let noted = stderr_line(&stderr, "closed to make room");
    assert!(noted.contains("least recently used"), "{noted}");
    let mut rest = Vec::new();
    while !rest.ends_with(b"0\r\n\r\n") {
        let mut byte = [0u8];
        listening.read_exact(&mut byte).unwrap();
        rest.push(byte[0]);
    }
    let ended = first.post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}));
    assert_eq!(ended.status, 404, "{:?}", ended.messages);
    // When every session has a request pending, a new one is refused.
    let _pending = [pending_call(&second), pending_call(&third)];
    let refused = Client::new(&url).post(&initialize);
    assert_eq!(refused.status, 503, "{:?}", refused.messages);
    let huge = format!("{{\"pad\":\"{}\"}}", "x".repeat(9 * 1024 * 1024));
    assert_eq!(status_of(&url, &[], &huge), 413);
    assert_eq!(status_of(&url, &[], "not json"), 400);
    // A closed session frees its place.
    assert_eq!(third.delete(), 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = Client::new(&url).post(&initialize);
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

type Events = EventReader<BufReader<ureq::BodyReader<'static>>>;

/// POSTs `call` in `client`'s session (with its extra headers): the events of its stream, as
/// they come.
fn call_events(client: &Client, call: &Value) -> Events {
    let request = client
        .agent
        .post(&client.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", client.session.as_deref().unwrap());
    let request = client
        .headers
        .iter()
        .fold(request, |request, (name, value)| {
            request.header(name, value)
        });
    let response = request.send(call.to_string()).unwrap();
    assert_eq!(response.status().as_u16(), 200);
    EventReader::new(BufReader::new(response.into_body().into_reader()), 1 << 20)
}

/// Starts a call of the scripted `slow` tool and leaves its server request unanswered: the
/// call's stream, open, once its first event has come.
fn pending_call(client: &Client) -> Events {
    let call = json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}});
    let mut events = call_events(client, &call);
    assert!(matches!(
        events.next_event().unwrap(),
        StreamEvent::Message(_)
    ));
    events
}

/// The first line of `stderr` containing `needle`, waiting up to 30 s.
fn stderr_line(stderr: &Receiver<String>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = stderr
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no stderr line with {needle:?}"));
        if line.contains(needle) {
            return line;
        }
    }
}

/// Opens `client`'s GET stream on the proxy (with the client's extra headers) and checks its
/// head arrives at once; the open connection, read past the head.
fn open_get(url: &str, client: &Client) -> BufReader<TcpStream> {
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap();
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let extra: String = (client.headers.iter())
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n{extra}\
         Mcp-Session-Id: {}\r\n\r\n",
        client.session.as_deref().unwrap()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let read = reader.read_line(&mut line);
        assert!(
            read.is_ok(),
            "the GET stream's head did not come: {head:?} {read:?}"
        );
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push_str(&line);
    }
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );
    reader
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

/// One request a scripted server received: its method, headers (lowercase names) and JSON
/// body.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    headers: std::collections::HashMap<String, String>,
    body: Value,
}

/// An HTTP server on a loopback port: each request is recorded, then `answer` writes to the
/// connection whatever it likes (returning false closes it); a GET is answered 405. Returns
/// the URL and the record.
fn scripted(
    answer: impl Fn(&Seen, &mut TcpStream) -> bool + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    scripted_with(false, answer)
}

/// [`scripted`], with GET requests answered by `answer` too when `get`.
fn scripted_with(
    get: bool,
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
                        method: request_line
                            .split(' ')
                            .next()
                            .unwrap_or_default()
                            .to_owned(),
                        headers,
                        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                    };
                    // Recorded before it is answered.
                    record.lock().unwrap().push(seen.clone());
                    if !(request_line.starts_with("POST") || get && seen.method == "GET") {
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
    // No sessions in 2026-07-28: the proxy names none, and each call is a rollback scope of
    // its own, so a failure rolls nothing back.
    assert_eq!(client.session, None);
    let listed = client.request("tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 7);
    let (start, end) = failing_workflow(&mut client);
    assert_ne!(start, end);
    assert_eq!(calls_named(&log, "release_inventory").len(), 0);
    // Every request upstream, the proxy's own included, spoke 2026-07-28.
    let requests = seen.lock().unwrap().clone();
    assert!(
        requests
            .iter()
            .all(|r| r.body.get("method").and_then(Value::as_str) != Some("initialize"))
    );
    assert!(requests.iter().any(|r| r.body["method"] == "tools/list"
        && r.headers.get("mcp-protocol-version").map(String::as_str) == Some(MODERN)));
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
    // Every request upstream, the proxy's own compensation included, spoke 2026-07-28.
    let requests = seen.lock().unwrap().clone();
    assert!(requests.iter().any(|r| r.body["method"] == "tools/list"
        && r.headers.get("mcp-protocol-version").map(String::as_str) == Some(MODERN)));
    assert!(requests.iter().any(|r| {
        r.body["params"]["name"] == "release_inventory"
            && r.headers.get("mcp-protocol-version").map(String::as_str) == Some(MODERN)
    }));
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

/// The JSON-RPC answer to a scripted server's `initialize` or `tools/list` (one `slow` tool),
/// or `None` for another method.
fn scripted_answer(body: &Value) -> Option<Value> {
    let result = match body["method"].as_str()? {
        "initialize" => json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "1"}}),
        "tools/list" => json!({"tools": [{"name": "slow", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}}]}),
        _ => return None,
    };
    Some(json!({"jsonrpc": "2.0", "id": body["id"], "result": result}))
}

/// A JSON answer naming the session `s-1`.
fn in_session(stream: &mut TcpStream, answer: &str) -> bool {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\n\
         Content-Length: {}\r\n\r\n",
        answer.len()
    );
    stream.write_all(head.as_bytes()).is_ok() && stream.write_all(answer.as_bytes()).is_ok()
}

fn accepted(stream: &mut TcpStream) -> bool {
    stream
        .write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
        .is_ok()
}

/// A server whose `slow` tool, mid-call, sends a progress notification and a sampling request
/// on the call's event stream, then waits (up to 10 s) for the client's answer to it before
/// answering the call: the result says whether the answer came.
fn mid_call_server() -> String {
    let answered = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let (url, _seen) = scripted(move |seen, stream| {
        let body = &seen.body;
        if let Some(answer) = scripted_answer(body) {
            return http(stream, "200 OK", "application/json", &answer.to_string());
        }
        if body["method"] != "tools/call" {
            if body["id"] == "s1" && body.get("result").is_some() {
                *answered.0.lock().unwrap() = true;
                answered.1.notify_all();
            }
            return accepted(stream);
        }
        let token = &body["params"]["_meta"]["progressToken"];
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1, "total": 2}});
        let sampling = json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 1}});
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
        let events = format!(
            "{head}event: message\ndata: {progress}\n\nevent: message\ndata: {sampling}\n\n"
        );
        if stream.write_all(events.as_bytes()).is_err() {
            return false;
        }
        let (flag, signal) = &*answered;
        let (done, _) = signal
            .wait_timeout_while(flag.lock().unwrap(), Duration::from_secs(10), |done| !*done)
            .unwrap();
        let text = if *done { "answered" } else { "not answered" };
        let result = json!({"jsonrpc": "2.0", "id": body["id"],
            "result": {"content": [{"type": "text", "text": text}]}});
        let _ = write!(stream, "event: message\ndata: {result}\n\n");
        false
    });
    url
}

/// What reached the client on one call's event stream, in order, as it arrived: the server's
/// requests are answered as they come.
fn call_stream(client: &Client, id: u64, name: &str) -> Vec<(String, Value)> {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": {}, "_meta": {"progressToken": "p1"}}});
    let mut events = call_events(client, &call);
    let mut seen = Vec::new();
    while let StreamEvent::Message(data) = events.next_event().unwrap() {
        if data.is_empty() {
            continue;
        }
        let message: Value = serde_json::from_str(&data).unwrap();
        let kind = match (message.get("method"), message.get("id")) {
            (Some(method), Some(_)) => {
                let reply = json!({"jsonrpc": "2.0", "id": message["id"],
                    "result": {"role": "assistant", "content": {"type": "text", "text": "ok"},
                               "model": "m"}});
                let mut replier = Client::new(&client.url);
                replier.session = client.session.clone();
                assert_eq!(replier.post(&reply).status, 202);
                format!("request {}", method.as_str().unwrap())
            }
            (Some(method), None) => format!("notification {}", method.as_str().unwrap()),
            (None, _) => "response".to_owned(),
        };
        let last = kind == "response" && message["id"] == id;
        seen.push((kind, message));
        if last {
            break;
        }
    }
    seen
}

/// Each event reaches the client as the server writes it: a progress notification and a
/// server request sent mid-call arrive before the call's result, the client's answer reaches
/// the server while the call waits for it, and a GET stream's head comes at once.
#[test]
fn events_reach_the_client_as_they_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = mid_call_server();
    let (_proxy, url, _stderr) = listen(dir.path(), &["--url", &upstream]);
    let mut client = Client::new(&url);
    client.initialize();
    let started = Instant::now();
    let seen = call_stream(&client, 7, "slow");
    let kinds: Vec<&str> = seen.iter().map(|(kind, _)| kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "notification notifications/progress",
            "request sampling/createMessage",
            "response"
        ],
        "{seen:?}"
    );
    let (_, result) = &seen[2];
    assert_eq!(
        result["result"]["content"][0]["text"], "answered",
        "{result}"
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    // The GET stream's head arrives before any event.
    drop(open_get(&url, &client));
}

/// A notification the client sent reaches an HTTP server before anything the proxy sends
/// after it: the server takes its time over `notifications/initialized`, and the proxy's own
/// `tools/list` still comes after it.
#[test]
fn the_clients_order_reaches_the_http_server() {
    let dir = tempfile::tempdir().unwrap();
    let order = Arc::new(Mutex::new(Vec::<String>::new()));
    let taken = Arc::clone(&order);
    let (upstream, _seen) = scripted(move |seen, stream| {
        let method = seen.body["method"]
            .as_str()
            .unwrap_or("(answer)")
            .to_owned();
        if method == "notifications/initialized" {
            std::thread::sleep(Duration::from_millis(500));
        }
        taken.lock().unwrap().push(method);
        match scripted_answer(&seen.body) {
            Some(answer) => http(stream, "200 OK", "application/json", &answer.to_string()),
            None => accepted(stream),
        }
    });
    let (_proxy, url, _stderr) = listen(dir.path(), &["--url", &upstream]);
    let mut client = Client::new(&url);
    client.initialize();
    let deadline = Instant::now() + Duration::from_secs(20);
    let has = |method: &str| order.lock().unwrap().iter().any(|m| m == method);
    while !has("tools/list") || !has("notifications/initialized") {
        assert!(Instant::now() < deadline, "{:?}", order.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    let order = order.lock().unwrap().clone();
    assert_eq!(
        &order[..3],
        ["initialize", "notifications/initialized", "tools/list"],
        "{order:?}"
    );
}

/// Batches exist only in MCP 2025-03-26: a batch under another revision's
/// `MCP-Protocol-Version` is refused with 400 and -32600 before any of it reaches the server;
/// one under 2025-03-26 is answered. Without the header a POST is of the revision its session
/// settled: answered in a 2025-03-26 session, refused in a 2025-11-25 one.
#[test]
fn batches_are_decided_by_the_protocol_revision() {
    let (dir, log, _journal, _server, upstream) = behind_demo();
    let (_proxy, url, _stderr) = listen(dir.path(), &["--url", &upstream]);
    let mut client = Client::new(&url);
    client.initialize();
    let batch = json!([
        {"jsonrpc": "2.0", "id": 11, "method": "tools/call",
         "params": {"name": "get_state", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 12, "method": "ping"}
    ]);
    for version in ["2025-06-18", "2025-11-25", "2026-07-28", "nonsense"] {
        client.headers = vec![("MCP-Protocol-Version".into(), version.into())];
        let refused = client.post(&batch);
        assert_eq!(refused.status, 400, "{version}: {:?}", refused.messages);
        assert_eq!(refused.messages[0]["error"]["code"], -32600, "{version}");
    }
    assert!(calls_named(&log, "get_state").is_empty());
    client.headers = Vec::new();
    let refused = client.post(&batch);
    assert_eq!(refused.status, 400, "{:?}", refused.messages);
    assert_eq!(refused.messages[0]["error"]["code"], -32600);
    assert!(calls_named(&log, "get_state").is_empty());
    let mut old = Client::new(&url);
    let mut params = initialize_params();
    params["protocolVersion"] = json!("2025-03-26");
    assert_eq!(
        old.request("initialize", params)["result"]["protocolVersion"],
        "2025-03-26"
    );
    client.headers = vec![("MCP-Protocol-Version".into(), "2025-03-26".into())];
    for client in [&mut client, &mut old] {
        let answered = client.post(&batch);
        assert_eq!(answered.status, 200, "{:?}", answered.messages);
        let ids: Vec<&Value> = answered.messages.iter().map(|m| &m["id"]).collect();
        assert!(
            ids.contains(&&json!(11)) && ids.contains(&&json!(12)),
            "{ids:?}"
        );
    }
    assert_eq!(calls_named(&log, "get_state").len(), 2);
}

/// A server that resumes, as the 2025-11-25 transport has it: its call stream sends a priming
/// event (an id, a retry time, no data) and closes; the call's result comes on the GET that
/// names that id in `Last-Event-ID`, after `delay`. Its GET stream primes and closes too, and
/// sends a log message once reopened after that id. The `Last-Event-ID`s it was sent.
fn resuming_server(delay: Duration) -> (String, Arc<Mutex<Vec<String>>>) {
    let pending = Arc::new(Mutex::new(Vec::<Value>::new()));
    let resumed = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&resumed);
    let (url, _seen) = scripted_with(true, move |seen, stream| {
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
        if seen.method == "GET" {
            let last = seen.headers.get("last-event-id");
            if let Some(last) = last {
                record.lock().unwrap().push(last.clone());
            }
            // The GET stream primes and ends; reopened after its id, it carries a message.
            match last.map(String::as_str) {
                None => {
                    let _ = write!(stream, "{head}id: g1\nretry: 100\ndata: \n\n");
                    return false;
                }
                Some("g1") => {
                    let message = json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "data": "after reconnecting"}});
                    let _ = write!(stream, "{head}event: message\ndata: {message}\n\n");
                    return false;
                }
                Some(_) => {}
            }
            let Some(id) = pending.lock().unwrap().pop() else {
                let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                return false;
            };
            let _ = stream.write_all(head.as_bytes());
            std::thread::sleep(delay);
            let result = json!({"jsonrpc": "2.0", "id": id,
                "result": {"content": [{"type": "text", "text": "resumed"}]}});
            let _ = write!(stream, "id: e2\nevent: message\ndata: {result}\n\n");
            return false;
        }
        if let Some(answer) = scripted_answer(&seen.body) {
            let answer = answer.to_string();
            return in_session(stream, &answer);
        }
        if seen.body["method"] != "tools/call" {
            return accepted(stream);
        }
        pending.lock().unwrap().push(seen.body["id"].clone());
        let _ = write!(stream, "{head}id: e1\nretry: 200\ndata: \n\n");
        false
    });
    (url, resumed)
}

/// What a client of 2025-11-25 gets from one call of `slow` at `url`: the first event's id and
/// the retry time when the call's stream primes, and the result, resuming the stream with
/// `Last-Event-ID` as the transport specifies when it ends first (or, with `leave`, right
/// after the priming event, coming back that much later, as a client whose connection dropped
/// would).
fn resumed_call(
    client: &mut Client,
    leave: Option<Duration>,
) -> (Option<String>, Option<u64>, Value) {
    client.headers = vec![("MCP-Protocol-Version".into(), "2025-11-25".into())];
    let call = json!({"jsonrpc": "2.0", "id": 70, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}});
    let mut events = call_events(client, &call);
    let mut primed = None;
    loop {
        match events.next_event().unwrap() {
            StreamEvent::Message(data) if data.is_empty() => {
                primed = Some((events.last_event_id().map(str::to_owned), events.retry()));
                if let Some(away) = leave {
                    drop(events);
                    std::thread::sleep(away);
                    let (id, retry) = primed.clone().unwrap_or_default();
                    return resume_with(client, id.as_deref().unwrap(), retry);
                }
            }
            StreamEvent::Message(data) => {
                let message: Value = serde_json::from_str(&data).unwrap();
                if message["id"] == 70 {
                    let (id, retry) = primed.unwrap_or_default();
                    return (id, retry, message);
                }
            }
            _ => break,
        }
    }
    let (_, retry) = primed.clone().unwrap_or_default();
    let last = events.last_event_id().map(str::to_owned);
    drop(events);
    let last = last.expect("the stream ended with no event id to resume from");
    resume_with(client, &last, retry)
}

/// Resumes a call's stream after event `last`: the priming id, the retry time and the result.
fn resume_with(
    client: &Client,
    last: &str,
    retry: Option<u64>,
) -> (Option<String>, Option<u64>, Value) {
    let id = Some(last.to_owned());
    let response = client
        .agent
        .get(&client.url)
        .header("Accept", "text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25")
        .header("Mcp-Session-Id", client.session.as_deref().unwrap())
        .header("Last-Event-ID", last)
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "resuming after {last}");
    let mut events = EventReader::new(BufReader::new(response.into_body().into_reader()), 1 << 20);
    while let StreamEvent::Message(data) = events.next_event().unwrap() {
        if !data.is_empty() {
            let message: Value = serde_json::from_str(&data).unwrap();
            if message["id"] == 70 {
                return (id, retry, message);
            }
        }
    }
    panic!("no result after resuming from {last}");
}

/// Resumption works through the proxy as it does directly: a call whose stream the server
/// closes after its priming event gets its result (the proxy resumes the server's stream with
/// `Last-Event-ID`), the client's stream primes with an id and a retry time, and a client that
/// leaves its call's stream resumes it from the proxy with `Last-Event-ID`; the server's GET
/// stream, ended after an id, is reopened with it.
#[test]
fn event_streams_resume_through_the_proxy_as_directly() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, resumed) = resuming_server(Duration::from_millis(300));
    let mut direct = Client::new(&upstream);
    direct.initialize();
    let (id, retry, result) = resumed_call(&mut direct, None);
    assert_eq!((id.as_deref(), retry), (Some("e1"), Some(200)));
    assert_eq!(
        result["result"]["content"][0]["text"], "resumed",
        "{result}"
    );
    assert_eq!(*resumed.lock().unwrap(), ["e1"]);

    let (_proxy, url, _stderr) = listen(dir.path(), &["--url", &upstream]);
    let mut client = Client::new(&url);
    client.initialize();
    // The proxy reopens the server's GET stream after the id it ended with: the message sent
    // then reaches the client's GET stream.
    let mut listening = open_get(&url, &client);
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("after reconnecting") {
        let mut buffer = [0u8; 1024];
        let n = listening
            .read(&mut buffer)
            .expect("the server's message after reconnecting");
        assert!(n > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buffer[..n]);
    }
    drop(listening);
    // Back before the answer comes (the stream is taken over), and after the answer was sent
    // to the connection that went away (the events are sent again).
    let away = [
        None,
        Some(Duration::ZERO),
        Some(Duration::from_millis(1500)),
    ];
    for leave in away {
        let (id, retry, result) = resumed_call(&mut client, leave);
        assert!(id.is_some_and(|id| !id.is_empty()), "leave {leave:?}");
        assert_eq!(retry, Some(1000), "leave {leave:?}");
        assert_eq!(
            result["result"]["content"][0]["text"], "resumed",
            "leave {leave:?}: {result}"
        );
    }
    // The proxy resumed the server's streams from the ids the server gave.
    assert_eq!(*resumed.lock().unwrap(), ["e1", "g1", "e1", "e1", "e1"]);
}

/// A request whose id the session would refuse (null, a fraction, an object, a boolean) is
/// refused in its POST's own answer, 400 with -32600 and id null, not accepted with 202; a
/// `tools/call` without an id is accepted and never reaches the server.
#[test]
fn invalid_ids_are_refused_in_the_posts_answer_and_request_notifications_never_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, seen) = scripted(|seen, stream| match scripted_answer(&seen.body) {
        Some(answer) => http(stream, "200 OK", "application/json", &answer.to_string()),
        None => accepted(stream),
    });
    let (_proxy, url, stderr) = listen(dir.path(), &["--url", &upstream]);
    let mut client = Client::new(&url);
    client.initialize();
    let call = json!({"jsonrpc": "2.0", "method": "tools/call",
                      "params": {"name": "slow", "arguments": {}}});
    for id in [json!(null), json!(1.5), json!({"a": 1}), json!(true)] {
        let mut message = call.clone();
        message["id"] = id.clone();
        let refused = client.post(&message);
        assert_eq!(refused.status, 400, "{id}: {:?}", refused.messages);
        assert_eq!(refused.messages.len(), 1, "{id}");
        assert_eq!(refused.messages[0]["error"]["code"], -32600, "{id}");
        assert_eq!(refused.messages[0]["id"], Value::Null, "{id}");
        // In a batch too.
        let batch = client.post(&json!([message, {"jsonrpc": "2.0", "id": 7, "method": "ping"}]));
        assert_eq!(batch.status, 400, "{id}: {:?}", batch.messages);
    }
    stderr_line(&stderr, "refused an invalid message");
    let notified = client.post(&call);
    assert_eq!(notified.status, 202, "{:?}", notified.messages);
    stderr_line(&stderr, "a tools/call without an id was dropped");
    // Something after it reaches the server, so the notification had its chance to.
    let answered = client.post(&json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));
    assert_eq!(answered.status, 200, "{:?}", answered.messages);
    let methods: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.body["method"].clone())
        .collect();
    assert!(methods.contains(&json!("ping")), "{methods:?}");
    assert!(!methods.contains(&json!("tools/call")), "{methods:?}");
}

/// A server whose event streams each send only a priming event (an id, `retry: 0`) and close:
/// the GET stream is reopened at most 5 times in a row without a new event, with growing
/// waits, then given up (said on stderr) while requests still work; a call's stream is resumed
/// at most 5 times too, and the client gets an error instead of an endless resumption.
#[test]
fn streams_that_bring_nothing_new_are_reopened_a_bounded_number_of_times() {
    let dir = tempfile::tempdir().unwrap();
    let gets = Arc::new(Mutex::new(Vec::<(Instant, Option<String>)>::new()));
    let record = Arc::clone(&gets);
    let (upstream, _seen) = scripted_with(true, move |seen, stream| {
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
        let prime = |stream: &mut TcpStream, id: &str| {
            let _ = stream.write_all(format!("{head}id: {id}\nretry: 0\ndata: \n\n").as_bytes());
            false
        };
        if seen.method == "GET" {
            let last = seen.headers.get("last-event-id").cloned();
            record.lock().unwrap().push((Instant::now(), last.clone()));
            return prime(
                stream,
                if last.as_deref() == Some("c1") {
                    "c1"
                } else {
                    "p"
                },
            );
        }
        match scripted_answer(&seen.body) {
            Some(answer) => http(stream, "200 OK", "application/json", &answer.to_string()),
            None if seen.body["method"] == "tools/call" => prime(stream, "c1"),
            None => accepted(stream),
        }
    });
    let (_proxy, url, stderr) = listen(dir.path(), &["--url", &upstream]);
    let mut client = Client::new(&url);
    client.initialize();
    let line = stderr_line(&stderr, "the GET stream was reopened");
    assert!(line.contains("not reopened again"), "{line}");
    let stream_opens = |gets: &[(Instant, Option<String>)]| -> Vec<Instant> {
        gets.iter()
            .filter(|(_, last)| last.as_deref() != Some("c1"))
            .map(|(at, _)| *at)
            .collect()
    };
    let opens = stream_opens(&gets.lock().unwrap());
    assert_eq!(opens.len(), 6, "one opening and 5 reopenings");
    // Each wait at least half a second, and longer than the one before.
    let waits: Vec<Duration> = opens.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(waits[0] >= Duration::from_millis(450), "{waits:?}");
    assert!(waits.windows(2).all(|w| w[1] > w[0]), "{waits:?}");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(stream_opens(&gets.lock().unwrap()).len(), 6, "given up");
    // The session still answers requests.
    let listed = client.request("tools/list", json!({}));
    assert_eq!(listed["result"]["tools"][0]["name"], "slow", "{listed}");
    let started = Instant::now();
    let failed = client.request("tools/call", json!({"name": "slow", "arguments": {}}));
    assert!(
        failed.get("error").is_some() || failed["result"]["isError"] == true,
        "{failed}"
    );
    assert!(failed.to_string().contains("not resumed again"), "{failed}");
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "{:?}",
        started.elapsed()
    );
    let resumes = gets
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, last)| last.as_deref() == Some("c1"))
        .count();
    assert_eq!(resumes, 5);
}

/// Four clients trickling one header byte at a time hold every place of `--max-connections 4`
/// only until the request deadline, not for as long as they keep trickling.
#[test]
fn trickling_clients_hold_their_places_only_until_the_request_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = mid_call_server();
    let flags = [
        "--max-connections",
        "4",
        "--request-timeout",
        "2",
        "--url",
        &upstream,
    ];
    let (_proxy, url, _stderr) = listen(dir.path(), &flags);
    let address = common::address_of(&url);
    let started = Instant::now();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nX-Slow: {}\r\n\r\n",
        "a".repeat(64)
    );
    let tricklers: Vec<_> = (0..4)
        .map(|_| {
            let mut stream = TcpStream::connect(&address).unwrap();
            let head = head.clone().into_bytes();
            std::thread::spawn(move || {
                // One byte every 250 ms: the whole head would take over 40 s.
                for byte in head {
                    if stream.write_all(&[byte]).is_err() {
                        return Instant::now();
                    }
                    std::thread::sleep(Duration::from_millis(250));
                }
                panic!("a trickled request was let in whole");
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": initialize_params()})
    .to_string();
    assert_eq!(
        status_of(&url, &[], &initialize),
        503,
        "the places were not all taken"
    );
    let served = loop {
        if status_of(&url, &[], &initialize) == 200 {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no place came free"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(served >= Duration::from_secs(2), "served after {served:?}");
    for trickler in tricklers {
        let cut = trickler.join().unwrap().duration_since(started);
        assert!(cut < Duration::from_secs(15), "cut after {cut:?}");
    }
}

/// Sends one POST on `stream` and reads its whole answer: the head (lower-cased) and the body,
/// unchunked.
fn exchange(
    stream: &mut TcpStream,
    session: Option<&str>,
    accept: &str,
    body: &Value,
) -> (String, String) {
    let address = stream.peer_addr().unwrap();
    let body = body.to_string();
    let session = session.map_or_else(String::new, |id| format!("Mcp-Session-Id: {id}\r\n"));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: {accept}\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "closed after {head:?}"
        );
        if line == "\r\n" {
            break;
        }
        head.push_str(&line.to_ascii_lowercase());
    }
    let mut text = Vec::new();
    if let Some(length) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
    {
        text.resize(length.trim().parse().unwrap(), 0);
        reader.read_exact(&mut text).unwrap();
    } else if head.contains("transfer-encoding: chunked") {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                break;
            }
            text.extend_from_slice(&chunk[..size]);
        }
    }
    // Whatever the reader holds beyond the answer would belong to the next one: there is none.
    assert!(reader.buffer().is_empty(), "bytes after the answer");
    (head, String::from_utf8(text).unwrap())
}

/// A call answered at once comes back as plain JSON, and the connection carries the next
/// request; a client that accepts only event streams, or a call that sends events before its
/// answer, gets a stream as before.
#[test]
fn quick_answers_are_json_on_a_connection_kept_open() {
    let (dir, _log, _journal, _server, upstream) = behind_demo();
    let (_proxy, url, _stderr) = listen(dir.path(), &["--url", &upstream]);
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let both = "application/json, text/event-stream";
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": initialize_params()});
    let (head, body) = exchange(&mut stream, None, both, &initialize);
    assert!(head.contains("content-type: application/json"), "{head}");
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .trim()
        .to_owned();
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    let notified = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (head, _) = exchange(&mut stream, Some(&session), both, &notified);
    assert!(head.starts_with("http/1.1 202"), "{head}");
    for id in 2..5 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "get_state", "arguments": {}}});
        let (head, body) = exchange(&mut stream, Some(&session), both, &call);
        assert!(head.contains("content-type: application/json"), "{head}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        assert!(
            answer["result"]["structuredContent"].is_object(),
            "{answer}"
        );
    }
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "get_state", "arguments": {}}});
    let (head, body) = exchange(&mut stream, Some(&session), "text/event-stream", &call);
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(body.contains("\"id\":9"), "{body}");

    // Events before the answer keep the stream.
    let upstream = mid_call_server();
    let (_proxy, url, _stderr) = listen(dir.path(), &["--url", &upstream]);
    let mut client = Client::new(&url);
    client.initialize();
    let seen = call_stream(&client, 7, "slow");
    assert_eq!(seen.len(), 3, "{seen:?}");
}

/// The server a session starts never sees the variable holding the Slack signing secret.
#[test]
fn a_session_server_never_sees_the_slack_signing_secret() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("policy.toml"),
        "[approvals-notify]\nurl = \"http://127.0.0.1:9/hook\"\nformat = \"slack\"\n\
         signing-secret-env = \"LISTEN_TEST_SLACK_SECRET\"\n",
    )
    .unwrap();
    let script = "echo \"secret=${LISTEN_TEST_SLACK_SECRET-unset} other=${LISTEN_TEST_OTHER-unset}\" \
                  > seen.txt; exec \"$0\" demo-server";
    let (_proxy, url, _stderr) = common::listen(
        dir,
        &["--policy", "policy.toml", "--", "sh", "-c", script, BIN],
        &[
            ("LISTEN_TEST_SLACK_SECRET", "s3cr3t-value"),
            ("LISTEN_TEST_OTHER", "visible"),
        ],
    );
    Client::new(&url).initialize();
    let seen = std::fs::read_to_string(dir.join("seen.txt")).unwrap();
    assert_eq!(seen.trim(), "secret=unset other=visible");
}

/// A server that reads nothing fills the bytes a session may hold: past them a POST is
/// answered busy (503), and the proxy holds no more.
#[test]
fn a_session_that_cannot_pass_its_messages_on_answers_busy() {
    let dir = tempfile::tempdir().unwrap();
    let (_proxy, url, _stderr) = listen(dir.path(), &["--", "sleep", "600"]);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "x".repeat(1 << 20)}})
    .to_string();
    let mut statuses = Vec::new();
    for _ in 0..40 {
        let status = status_of(&url, &[], &note);
        statuses.push(status);
        if status == 503 {
            break;
        }
    }
    assert_eq!(statuses.last(), Some(&503), "{statuses:?}");
    // About 16 MiB pass before it: the cap, whatever the server does.
    assert!((10..=24).contains(&statuses.len()), "{statuses:?}");
    assert!(
        statuses[..statuses.len() - 1].iter().all(|s| *s == 202),
        "{statuses:?}"
    );
}

/// A server that answers with the credentials it was sent (a 401 quoting the `Authorization`
/// header): the error the client gets, like the proxy's stderr, says `***` in their place.
#[test]
fn an_answer_quoting_the_credentials_reaches_the_client_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, _seen) = scripted(|seen, stream| {
        let sent = seen
            .headers
            .get("authorization")
            .cloned()
            .unwrap_or_default();
        http(
            stream,
            "401 Unauthorized",
            "text/plain",
            &format!("invalid credentials: {sent}"),
        )
    });
    let (_proxy, url, stderr) = listen(
        dir.path(),
        &[
            "--url",
            &upstream,
            "--header",
            "Authorization: Bearer s3cret-credential-7",
        ],
    );
    let mut client = Client::new(&url);
    let answer = client.request("initialize", initialize_params());
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("invalid credentials: ") && message.contains("***"),
        "{answer}"
    );
    assert!(!answer.to_string().contains("s3cret"), "{answer}");
    drop(_proxy);
    let said: Vec<String> = stderr.try_iter().collect();
    assert!(!said.concat().contains("s3cret"), "{said:?}");
}

/// A GET stream belongs to a session: without an `Mcp-Session-Id` (clients that share the
/// session-less upstream) it is refused 405, resumed or not, so nobody reads another's
/// messages; and a session's GET stream that is open is not opened again by resuming it (409),
/// so one client cannot hold every connection the proxy serves.
#[test]
fn get_streams_need_a_session_and_a_session_has_one() {
    let (dir, _log, _journal, _server, upstream) = behind_demo();
    let (_proxy, url, _stderr) = listen(dir.path(), &["--url", &upstream]);
    let mut client = Client::new(&url);
    client.initialize();
    // A 2025-11-25 client's GET stream begins with a priming event: its id names the stream.
    client.headers = vec![("MCP-Protocol-Version".into(), "2025-11-25".into())];
    let get = |session: Option<&str>, last: Option<&str>| {
        let mut request = client.agent.get(&url).header("Accept", "text/event-stream");
        if let Some(session) = session {
            request = request.header("Mcp-Session-Id", session);
        }
        if let Some(last) = last {
            request = request.header("Last-Event-ID", last);
        }
        request.call().unwrap().status().as_u16()
    };
    assert_eq!(get(None, None), 405);
    assert_eq!(get(None, Some("1-0")), 405);
    let mut listening = open_get(&url, &client);
    let mut seen = String::new();
    let id = loop {
        let mut buffer = [0u8; 256];
        let n = listening.read(&mut buffer).expect("the priming event");
        assert!(n > 0, "{seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
        if let Some(line) = seen.lines().find(|l| l.starts_with("id: ")) {
            break line["id: ".len()..].trim().to_owned();
        }
    };
    let session = client.session.clone();
    for _ in 0..3 {
        assert_eq!(get(session.as_deref(), Some(&id)), 409, "{id}");
    }
    drop(listening);
}

/// A server that forgets the session (404, a JSON-RPC error that answers nothing) gives the
/// client an error saying so.
#[test]
fn a_session_the_server_forgot_is_said_to_be_over() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, _seen) = scripted(|seen, stream| {
        if seen.body["method"] == "initialize" {
            let answer = scripted_answer(&seen.body).unwrap().to_string();
            return in_session(stream, &answer);
        }
        if seen.body.get("id").is_none() {
            return accepted(stream);
        }
        let gone =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#;
        http(stream, "404 Not Found", "application/json", gone)
    });
    let (_proxy, url, _stderr) = listen(dir.path(), &["--url", &upstream]);
    let mut client = Client::new(&url);
    client.initialize();
    let answer = client.request("ping", json!({}));
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("HTTP status 404: the server no longer knows this session"),
        "{answer}"
    );
}

/// A session whose journal write fails stops, and says so at once: the call it forwarded gets
/// an error saying its outcome is unknown (the server ran it), and every later request of the
/// session is refused saying why.
#[test]
fn a_session_stopped_by_its_journal_answers_what_it_owes_at_once() {
    let (dir, log, journal, _server, upstream) = behind_demo();
    let journal = journal.to_str().unwrap();
    // Room for the session's start and the call's intent, not for its outcome, which repeats
    // the arguments.
    let flags = [
        "--url",
        &upstream,
        "--journal",
        journal,
        "--max-file-size",
        "24K",
    ];
    let (_proxy, url, _stderr) = listen(dir.path(), &flags);
    let mut client = Client::new(&url);
    client.initialize();
    let arguments = json!({"customerId": "c".repeat(16_000), "amount": 1, "currency": "EUR"});
    let started = Instant::now();
    let answer = client.request(
        "tools/call",
        json!({"name": "charge_payment", "arguments": arguments}),
    );
    assert!(started.elapsed() < Duration::from_secs(10), "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("its outcome is unknown"), "{answer}");
    assert_eq!(calls_named(&log, "charge_payment").len(), 1);
    for id in [50, 51] {
        let later = client.post(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        assert_eq!(later.status, 500, "{:?}", later.messages);
        let refusal = later.messages[0]["error"]["message"].to_string();
        assert!(refusal.contains("cannot write its journal"), "{refusal}");
    }
    assert_eq!(calls(&log).len(), 1);
}

/// Clients without a session (2026-07-28) share the proxy's upstream, not a rollback scope: one
/// client's failing call rolls back nothing another was told had succeeded.
#[test]
fn clients_without_a_session_never_roll_back_each_others_calls() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let journal = dir.path().join("journal.jsonl");
    let flags = [
        "--journal",
        journal.to_str().unwrap(),
        "--on-failure",
        "rollback",
        "--",
        BIN,
        "demo-server",
        "--revisions",
        MODERN,
        "--call-log",
        log.to_str().unwrap(),
    ];
    let (_proxy, url, _stderr) = listen(dir.path(), &flags);
    let client = |name: &str| {
        let mut client = Client::modern(&url);
        client.meta = Some(json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"},
        }));
        client
    };
    let (mut x, mut y) = (client("x"), client("y"));
    x.request("server/discover", json!({}));
    let listed = x.request("tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"].as_array().map(Vec::len),
        Some(7),
        "{listed}"
    );
    let kept = x.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 2}),
    );
    assert_ne!(kept["isError"], true, "{kept}");
    let kept = kept["structuredContent"]["reservationId"].clone();
    let theirs = y.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 1}),
    );
    let failed = y.call(
        "create_shipment",
        json!({"reservationId": theirs["structuredContent"]["reservationId"],
               "address": "a", "simulateFailure": true}),
    );
    assert_eq!(failed["isError"], true, "{failed}");
    assert!(
        failed["_meta"].get("dev.mcp-recovery/rollback").is_none(),
        "{failed}"
    );
    assert_eq!(calls_named(&log, "release_inventory").len(), 0);
    let state = x.state().to_string();
    assert!(state.contains(kept.as_str().unwrap()), "{state}");
    verified(dir.path(), &journal);
    // Each call is journaled as a session of its own, started and ended, naming the session
    // whose upstream it shares.
    let all = records(&journal);
    let connection = all[0]["session"].as_str().unwrap();
    let intents: Vec<&Value> = all.iter().filter(|r| r["kind"] == "call.intent").collect();
    let scopes: std::collections::HashSet<&str> = intents
        .iter()
        .map(|r| r["session"].as_str().unwrap())
        .collect();
    assert_eq!(scopes.len(), intents.len());
    for scope in scopes {
        let kinds: Vec<&str> = all
            .iter()
            .filter(|r| r["session"] == scope)
            .map(|r| r["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "session.start",
                "call.intent",
                "call.outcome",
                "session.end"
            ]
        );
        let start = all.iter().find(|r| r["session"] == scope).unwrap();
        assert_eq!(start["connection"], connection, "{start}");
    }
    assert!(journal_kinds(&journal, "rollback.start").is_empty());
}

/// The journal id of the session the proxy opened next, from its note on `stderr`.
fn opened(stderr: &Receiver<String>) -> String {
    let line = stderr_line(stderr, " opened");
    let id = line
        .split("session ")
        .nth(1)
        .and_then(|s| s.split(' ').next());
    id.unwrap_or_else(|| panic!("{line}")).to_owned()
}

/// The rollback command of a session closed with effects left, behind a `--config` server
/// whose arguments come from `${env:…}` and `--input`, shows neither value: not on the proxy's
/// stderr, not at the next start, and the client's 404 holds no command line and no path.
#[test]
fn the_rollback_command_of_a_closed_session_shows_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let script = "exec \"$1\" demo-server --call-log calls.jsonl";
    let config = json!({"mcpServers": {
        "demo": {"command": "sh", "args": ["-c", script, "${env:PROXY_TEST_KEY}", BIN, "${input:token}"]},
    }});
    std::fs::write(dir.path().join("mcp.json"), config.to_string()).unwrap();
    let (key, token) = ("env-secret-271828", "tok-secret-314159");
    let input = format!("--input=token={token}");
    let journal_flag = format!("--journal={}", journal.display());
    let args = ["--config=mcp.json", "--server=demo", &input, &journal_flag];
    let env = [("PROXY_TEST_KEY", key)];
    let (mut proxy, url, stderr) = common::listen(
        dir.path(),
        &[&["--max-sessions", "1"], &args[..]].concat(),
        &env,
    );
    let mut a = Client::new(&url);
    a.initialize();
    let reserved = a.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 1}),
    );
    assert_ne!(reserved["isError"], true, "{reserved}");
    // A second session makes room by closing the first, whose effects stay, once the first
    // has nothing pending (until then it is answered 503).
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                            "params": initialize_params()});
    common::wait_for("room for a second session", || {
        Client::new(&url).post(&initialize).status == 200
    });
    let named = stderr_line(&stderr, "rolls them back");
    let gone = a.post(&json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}));
    assert_eq!(gone.status, 404, "{:?}", gone.messages);
    let told = gone.messages[0]["error"]["message"].as_str().unwrap();
    assert!(told.contains("mcp-recovery rollback --session "), "{told}");
    assert!(
        !told.contains("journal.jsonl") && !told.contains("sh -c"),
        "{told}"
    );
    proxy.0.kill().unwrap();
    proxy.0.wait().unwrap();
    let next = bin_in(dir.path())
        .env("PROXY_TEST_KEY", key)
        .arg("proxy")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let next = String::from_utf8_lossy(&next.stderr);
    assert!(next.contains("rolls them back"), "{next}");
    for shown in [named.as_str(), told, &next] {
        assert!(!shown.contains(key) && !shown.contains(token), "{shown}");
    }
    for command in [named.as_str(), &next] {
        assert!(command.contains(" --stdio -- sh -c 'exec "), "{command}");
    }
}

/// The `session.end` of journal session `id`, once it is written.
fn session_end(journal: &Path, id: &str) -> Value {
    let mut end = None;
    common::wait_for("the session's end in the journal", || {
        end = journal_kinds(journal, "session.end")
            .into_iter()
            .find(|r| r["session"] == id);
        end.is_some()
    });
    end.unwrap()
}

/// At `--max-sessions`, a session whose calls left effects is closed to make room only when
/// every session has some. Closed, its `session.end` says so and which calls' effects stay, its
/// client's next request is told that they stand and which command undoes them, no rollback
/// message says nothing else was left in place, and `rollback` names it as closed to make room.
#[test]
fn a_session_with_effects_is_closed_last_and_its_client_is_told() {
    let (dir, _log, journal, _server, upstream) = behind_demo();
    let flags = [
        "--max-sessions",
        "2",
        "--url",
        &upstream,
        "--journal",
        journal.to_str().unwrap(),
        "--on-failure",
        "rollback",
    ];
    let (mut proxy, url, stderr) = listen(dir.path(), &flags);
    let reserve = json!({"sku": "sku-widget", "quantity": 1});
    let mut a = Client::new(&url);
    a.initialize();
    let a_id = opened(&stderr);
    let reserved = a.call("reserve_inventory", reserve.clone());
    assert_ne!(reserved["isError"], true, "{reserved}");
    let mut b = Client::new(&url);
    b.initialize();
    let b_id = opened(&stderr);
    // `a` is the least recently used, but `b` left no effects: `b` makes room.
    let mut c = Client::new(&url);
    c.initialize();
    let closed = stderr_line(&stderr, "closed to make room");
    assert!(closed.contains(&b_id), "{closed}");
    let c_id = opened(&stderr);
    let ping = json!({"jsonrpc": "2.0", "id": 99, "method": "ping"});
    let ended = b.post(&ping);
    assert_eq!(ended.status, 404, "{:?}", ended.messages);
    assert!(!format!("{:?}", ended.messages).contains("left in place"));
    assert_eq!(session_end(&journal, &b_id)["effectsLeft"], json!([]));
    assert_eq!(a.request("ping", json!({}))["result"], json!({}));
    // Every session has effects now: the least recently used, `a`, makes room.
    let reserved = c.call("reserve_inventory", reserve);
    assert_ne!(reserved["isError"], true, "{reserved}");
    let mut d = Client::new(&url);
    d.initialize();
    let closed = stderr_line(&stderr, "closed to make room");
    assert!(closed.contains(&a_id), "{closed}");
    let named = stderr_line(&stderr, "rolls them back");
    assert!(
        named.contains(&format!(
            "`mcp-recovery rollback --journal {}",
            journal.display()
        )) && named.contains(&format!("--session {a_id} --url ")),
        "{named}"
    );
    let end = session_end(&journal, &a_id);
    let intent = journal_kinds(&journal, "call.intent")
        .into_iter()
        .find(|r| r["session"] == a_id.as_str() && r["name"] == "reserve_inventory")
        .unwrap();
    assert_eq!(
        (&end["cause"], &end["effectsLeft"]),
        (&json!("evicted"), &json!([intent["call"]]))
    );
    let gone = a.post(&ping);
    assert_eq!(gone.status, 404, "{:?}", gone.messages);
    let told = gone.messages[0]["error"]["message"].as_str().unwrap();
    for said in [
        "were left in place, not undone",
        &format!("`mcp-recovery rollback --session {a_id}` with the journal and the server"),
        "named on the proxy's stderr",
    ] {
        assert!(told.contains(said), "{said} in {told}");
    }
    assert!(!told.contains(journal.to_str().unwrap()), "{told}");
    // The client's next session fails and is rolled back: its message speaks of that session
    // only, never of nothing else being left while `a`'s effect stands.
    let mut again = Client::new(&url);
    again.initialize();
    let failed = again.call(
        "create_shipment",
        json!({"reservationId": "r", "address": "a", "simulateFailure": true}),
    );
    let text = failed["content"].to_string();
    assert!(text.contains("Nothing else of this session"), "{text}");
    assert!(!text.contains("Nothing else was left in place"), "{text}");
    proxy.0.kill().unwrap();
    proxy.0.wait().unwrap();
    // `rollback` names the session closed to make room, and `c`, cut off by the kill.
    let journal = journal.to_str().unwrap();
    let listing = run_in(
        dir.path(),
        &["rollback", "--journal", journal, "--url", &upstream],
    );
    assert_eq!(code(&listing), 2, "{listing:?}");
    let stdout = String::from_utf8_lossy(&listing.stdout);
    for (id, how) in [
        (&a_id, "; it was closed to make room"),
        (&c_id, "; it was cut off (the proxy was killed or crashed)"),
    ] {
        let line = stdout.lines().find(|l| l.contains(id.as_str()));
        assert!(
            line.is_some_and(|l| l.ends_with(how)),
            "{id} {how} in {stdout}"
        );
    }
}
