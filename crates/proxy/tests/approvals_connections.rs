//! The approvals endpoint on an address of its own: a connection that is slow, stalled or idle
//! never holds another's request, is answered 408 and closed once its request is late, and a
//! body too large or not framed by `Content-Length` is refused before it is read. And a wait of
//! any length offers a request that can be decided, under a call digest that says nothing about
//! a secret its approvers are not shown.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use mcp_recovery_journal::keys::{SecretKey, generate};
use mcp_recovery_proxy::{
    Board, DECISION_TYPE, Outcome, Pending, PolicyFile, call_digest, canonical, parse_rfc3339,
    rfc3339, serve_approvals, unix_now,
};
use serde_json::{Map, Value, json};

/// Two approvers with keys of their own in `dir`, and a policy of two of them for `charge_*`.
fn board(dir: &Path) -> (PolicyFile, Arc<Board>) {
    let mut text = String::new();
    for name in ["alice", "bob"] {
        let public = generate(&dir.join(name)).unwrap();
        text.push_str(&format!(
            "[[approvers]]\nname = \"{name}\"\nkey = \"{}\"\n\n",
            public.to_hex()
        ));
    }
    text.push_str("[[approvals]]\nmatch = \"charge_*\"\nquorum = 2\nof = [\"alice\", \"bob\"]\n");
    let file = PolicyFile::parse(&text).unwrap();
    let board = Board::new(&file).unwrap();
    (file, board)
}

/// A `charge_payment` call offered to the board, decided on a thread of its own: the request
/// as `GET /approvals` lists it, and the outcome to come.
fn offer(
    file: &PolicyFile,
    board: &Arc<Board>,
    timeout: Duration,
) -> (Map<String, Value>, std::thread::JoinHandle<Outcome>) {
    let (offered, listed) = channel();
    let (rule, board) = (file.approvals[0].clone(), Arc::clone(board));
    let decided = std::thread::spawn(move || {
        let arguments = json!({"customerId": "c-1", "amount": 1});
        let arguments = arguments.as_object().unwrap();
        let pending = Pending {
            session: "s1",
            tool: "charge_payment",
            arguments,
            shown_arguments: Value::Object(arguments.clone()),
            class: "irreversible",
            compensation: Value::Null,
        };
        board.decide(&rule, None, &pending, timeout, |shown| {
            offered.send(shown.clone()).unwrap();
        })
    });
    (listed.recv().unwrap(), decided)
}

/// `name`'s signed approval of `request`.
fn approval(dir: &Path, name: &str, request: &Map<String, Value>) -> String {
    let secret = SecretKey::read(&dir.join(name)).unwrap();
    let statement = json!({"type": DECISION_TYPE, "request": request["request"],
        "call": request["callDigest"], "decision": "approve",
        "expires": rfc3339(unix_now() + 120), "approver": name});
    json!({"statement": statement, "key": secret.public().id(),
        "signature": secret.sign(&canonical(&statement))})
    .to_string()
}

/// One request on a fresh connection: the status and the body, read for at most `wait`.
fn exchange(address: SocketAddr, request: &str, wait: Duration) -> (u16, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(wait)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    read_answer(&mut stream)
}

fn read_answer(stream: &mut TcpStream) -> (u16, String) {
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned());
    (status, body.unwrap_or_default())
}

fn post(address: SocketAddr, path: &str, body: &str) -> (u16, String) {
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    exchange(address, &request, Duration::from_secs(5))
}

fn connect(address: SocketAddr, sent: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(sent.as_bytes()).unwrap();
    stream
}

/// Connections that send a head and stall, stop inside their head or body, or send nothing
/// hold nothing up: the pending list is read and both approvals are counted at once, and the
/// call is approved.
#[test]
fn stalled_connections_never_hold_a_decision() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (file, board) = board(dir);
    let address = serve_approvals(Arc::clone(&board), "127.0.0.1:0".parse().unwrap()).unwrap();
    let stalled: Vec<TcpStream> = (0..8)
        .flat_map(|_| {
            [
                "POST /approvals/slack HTTP/1.1\r\nHost: x\r\nContent-Length: 16000\r\n\r\n",
                "POST /approvals/slack HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":",
                "POST /approvals/slack HTTP/1.1\r\nHost: x\r\n",
                "",
            ]
        })
        .map(|sent| connect(address, sent))
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let (request, decided) = offer(&file, &board, Duration::from_secs(60));
    let id = request["request"].as_str().unwrap();
    let (status, listed) = exchange(
        address,
        "GET /approvals HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        Duration::from_secs(5),
    );
    assert_eq!(status, 200, "{listed}");
    assert!(listed.contains(id), "{listed}");
    for name in ["alice", "bob"] {
        let (status, said) = post(
            address,
            &format!("/approvals/{id}"),
            &approval(dir, name, &request),
        );
        assert_eq!(status, 200, "{said}");
        assert!(
            said.contains(&format!("counted approve by '{name}'")),
            "{said}"
        );
    }
    let outcome = decided.join().unwrap();
    assert!(outcome.approved, "{}", outcome.reason);
    assert_eq!(outcome.record["decisions"].as_array().unwrap().len(), 2);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    drop(stalled);
}

/// A request still incomplete 10 s after its connection opened is answered 408 and closed,
/// however its bytes trickle in.
#[test]
fn a_late_request_is_answered_408_and_closed() {
    let dir = tempfile::tempdir().unwrap();
    let (_, board) = board(dir.path());
    let address = serve_approvals(board, "127.0.0.1:0".parse().unwrap()).unwrap();
    let started = Instant::now();
    let mut trickling = connect(
        address,
        "POST /approvals/slack HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n",
    );
    let mut stalled = connect(address, "GET /approvals HTTP/1.1\r\n");
    let writer = trickling.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        let mut writer = writer;
        // One byte a second: never whole before the deadline.
        while writer.write_all(b"x").is_ok() && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    for stream in [&mut trickling, &mut stalled] {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let (status, body) = read_answer(stream);
        assert_eq!(status, 408, "{body}");
        assert!(body.contains("did not arrive whole within 10 s"), "{body}");
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(15),
        "{took:?}"
    );
    let _ = trickling.shutdown(std::net::Shutdown::Both);
    trickle.join().unwrap();
}

/// A body larger than a decision may be, or framed other than by one `Content-Length`, is
/// refused at once, before any of it is read.
#[test]
fn bodies_too_large_or_unframed_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_, board) = board(dir.path());
    let address = serve_approvals(board, "127.0.0.1:0".parse().unwrap()).unwrap();
    let started = Instant::now();
    let wait = Duration::from_secs(5);
    for (head, status, said) in [
        (
            "Content-Length: 16385\r\n",
            413,
            "a decision is at most 16384 bytes",
        ),
        ("Transfer-Encoding: chunked\r\n", 411, "Content-Length"),
        (
            "Content-Length: 1e3\r\n",
            400,
            "Content-Length is malformed",
        ),
        (
            "Content-Length: 2\r\nContent-Length: 3\r\n",
            400,
            "Content-Length is malformed",
        ),
    ] {
        let request = format!("POST /approvals/slack HTTP/1.1\r\nHost: x\r\n{head}\r\n");
        let (got, body) = exchange(address, &request, wait);
        assert_eq!(got, status, "{head}: {body}");
        assert!(body.contains(said), "{head}: {body}");
    }
    // A request that keeps its connection open is still answered once, told the connection
    // ends with its answer, and the connection closed.
    let mut stream = connect(
        address,
        "GET /approvals HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n",
    );
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(
        head.to_ascii_lowercase().contains("\r\nconnection: close"),
        "{head}"
    );
    assert_eq!(body.trim(), r#"{"pending":[]}"#);
    // A foreign Host is still refused, a Slack interaction still reaches its checks.
    let (status, body) = exchange(
        address,
        "GET /approvals HTTP/1.1\r\nHost: rebound.example\r\n\r\n",
        wait,
    );
    assert_eq!(status, 403, "{body}");
    let (status, body) = post(address, "/approvals/slack", "payload=%7B%7D");
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("signing-secret-env"), "{body}");
    assert!(started.elapsed() < wait, "{:?}", started.elapsed());
}

/// A wait past the longest a policy may set (7 days), up to the longest `Duration`, is that
/// longest: the request's expiry is an RFC 3339 time 7 days ahead, nothing panics, and an
/// approval is still counted.
#[test]
fn any_wait_offers_a_request_that_can_be_decided() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (file, board) = board(dir);
    let address = serve_approvals(Arc::clone(&board), "127.0.0.1:0".parse().unwrap()).unwrap();
    for timeout in [
        Duration::from_secs(604_800),
        Duration::from_secs(1_000_000_000_000),
        Duration::from_secs(u64::MAX),
        Duration::MAX,
    ] {
        let before = unix_now();
        let (request, decided) = offer(&file, &board, timeout);
        let expires = parse_rfc3339(request["expires"].as_str().unwrap()).unwrap();
        assert!(
            expires >= before + 604_800 && expires <= unix_now() + 604_800,
            "{timeout:?}: {}",
            request["expires"]
        );
        let id = request["request"].as_str().unwrap();
        for name in ["alice", "bob"] {
            let (status, said) = post(
                address,
                &format!("/approvals/{id}"),
                &approval(dir, name, &request),
            );
            assert_eq!(status, 200, "{timeout:?}: {said}");
        }
        let outcome = decided.join().unwrap();
        assert!(outcome.approved, "{timeout:?}: {}", outcome.reason);
    }
}

/// The digest a call is offered under, when its approvers are shown `shown`.
fn offered_digest(file: &PolicyFile, board: &Arc<Board>, shown: Value) -> Value {
    let arguments = json!({"customerId": "c-1", "pin": "4711"});
    let pending = Pending {
        session: "s1",
        tool: "charge_payment",
        arguments: arguments.as_object().unwrap(),
        shown_arguments: shown,
        class: "irreversible",
        compensation: Value::Null,
    };
    let mut digest = Value::Null;
    board.decide(
        &file.approvals[0],
        None,
        &pending,
        Duration::ZERO,
        |request| {
            digest = request["callDigest"].clone();
        },
    );
    digest
}

#[test]
fn a_digest_over_a_secret_is_salted_and_one_over_what_is_shown_recomputes() {
    let dir = tempfile::tempdir().unwrap();
    let (file, board) = board(dir.path());
    let sent = json!({"customerId": "c-1", "pin": "4711"});
    let plain = call_digest("s1", "charge_payment", sent.as_object().unwrap());
    assert_eq!(offered_digest(&file, &board, sent), plain);
    // The pin is replaced in what approvers see: whoever sees the digest cannot test guesses
    // of the pin against it, and each offer draws a salt of its own.
    let shown = json!({"customerId": "c-1", "pin": "***"});
    let first = offered_digest(&file, &board, shown.clone());
    let second = offered_digest(&file, &board, shown);
    assert!(first.as_str().unwrap().starts_with("sha256:"));
    assert_ne!(first, plain);
    assert_ne!(first, second);
}
