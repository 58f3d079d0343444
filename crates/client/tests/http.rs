//! Streamable HTTP against scripted loopback servers: sessions and headers, SSE answers, and
//! servers that hang, overflow or refuse.

// Helpers shared by the tests fail loudly, like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use mcp_recovery_client::{ClientError, Connection, Header, Options};
use serde_json::{Value, json};

/// One received request: head lines (lowercased names) and the JSON body.
#[derive(Debug)]
struct Seen {
    method: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Serves connections on a loopback port; `answer` turns each request into raw response bytes
/// (`None`: answer nothing). Returns the URL and the requests seen.
fn scripted(answer: fn(&Seen) -> Option<Vec<u8>>) -> (String, mpsc::Receiver<Seen>) {
    scripted_holding(answer, false)
}

/// [`scripted`], keeping each connection open after the bytes when `hold` is true.
fn scripted_holding(
    answer: fn(&Seen) -> Option<Vec<u8>>,
    hold: bool,
) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (name, value) = line.split_once(':').unwrap();
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
            let length: usize = headers
                .iter()
                .find(|(n, _)| n == "content-length")
                .map_or(0, |(_, v)| v.parse().unwrap());
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let method = request_line.split(' ').next().unwrap().to_string();
            let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let seen = Seen {
                method,
                headers,
                body,
            };
            let bytes = answer(&seen);
            if let Some(bytes) = &bytes {
                let _ = stream.write_all(bytes);
            }
            if bytes.is_none() || hold {
                thread::spawn(move || {
                    thread::sleep(Duration::from_secs(30));
                    drop(stream);
                });
            }
            if tx.send(seen).is_err() {
                return;
            }
        }
    });
    (url, rx)
}

fn response(status: u16, headers: &[(&str, &str)], content_type: &str, body: &str) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    format!("{head}\r\n{body}").into_bytes()
}

fn result_for(seen: &Seen, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": result}).to_string()
}

/// A well-behaved server: SSE answers with noise before the response, a session, two pages.
fn polite(seen: &Seen) -> Option<Vec<u8>> {
    let session = [("Mcp-Session-Id", "sess-42")];
    let method = seen.body["method"].as_str().unwrap_or_default();
    Some(match (seen.method.as_str(), method) {
        ("DELETE", _) => response(200, &[], "text/plain", ""),
        (_, "initialize") => {
            let result = json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                "serverInfo": {"name": "scripted", "version": "1"}});
            response(200, &session, "application/json", &result_for(seen, result))
        }
        (_, "tools/list") => {
            let page = match seen.body["params"]["cursor"].as_str() {
                None => json!({"tools": [{"name": "a", "inputSchema": {"type": "object"},
                                          "annotations": {"x-new": 1}}], "nextCursor": "p2"}),
                Some(_) => json!({"tools": [{"name": "b", "inputSchema": {"type": "object"}}]}),
            };
            let stream = format!(
                ": comment\n\nevent: message\ndata: {}\n\ndata: {}\n\ndata: {}\n\n",
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}),
                json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}),
                result_for(seen, page)
            );
            response(200, &[], "text/event-stream", &stream)
        }
        _ => response(202, &[], "text/plain", ""),
    })
}

#[test]
fn sessions_headers_and_event_streams() {
    let (url, seen) = scripted(polite);
    let header =
        Header::parse_with("Authorization: Bearer ${T}", |_| Some("s3cret".into())).unwrap();
    let mut connection = Connection::http(&url, vec![header], &Options::default()).unwrap();
    assert_eq!(connection.protocol_version(), "2025-06-18");
    let tools = connection.list_tools().unwrap();
    assert_eq!(
        tools,
        json!({"tools": [
            {"name": "a", "inputSchema": {"type": "object"}, "annotations": {"x-new": 1}},
            {"name": "b", "inputSchema": {"type": "object"}}
        ]})
    );
    connection.close();

    let requests: Vec<Seen> = seen.try_iter().collect();
    let kinds: Vec<String> = requests
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r.method,
                r.body["method"].as_str().unwrap_or("(reply)")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "POST initialize",
            "POST notifications/initialized",
            "POST tools/list",
            "POST (reply)",
            "POST tools/list",
            "POST (reply)",
            "DELETE (reply)"
        ]
    );
    let init = &requests[0];
    assert_eq!(
        init.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(init.header("authorization"), Some("Bearer s3cret"));
    assert_eq!(init.header("mcp-session-id"), None);
    assert_eq!(init.body["params"]["protocolVersion"], "2025-11-25");
    for later in &requests[1..] {
        assert_eq!(later.header("mcp-session-id"), Some("sess-42"), "{later:?}");
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-06-18"));
        assert_eq!(later.header("authorization"), Some("Bearer s3cret"));
    }
    // The ping inside the stream was answered.
    assert_eq!(
        requests[3].body,
        json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}})
    );
    assert_eq!(requests[2].body.get("params"), None);
    assert_eq!(requests[4].body["params"], json!({"cursor": "p2"}));
}

fn quick() -> Options {
    Options {
        timeout: Duration::from_secs(2),
        ..Options::default()
    }
}

#[test]
fn a_server_that_never_answers_times_out() {
    let (url, _seen) = scripted(|_| None);
    let started = Instant::now();
    let error = Connection::http(&url, Vec::new(), &quick()).unwrap_err();
    assert!(matches!(error, ClientError::Timeout { .. }), "{error}");
    assert_eq!(error.to_string(), "no answer to `initialize` within 2s");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_stream_that_stalls_after_noise_times_out() {
    // The stream starts and carries a notification; the response never comes and the
    // connection stays open.
    fn stalls(seen: &Seen) -> Option<Vec<u8>> {
        if seen.body["method"] == "initialize" {
            let result = json!({"protocolVersion": "2025-11-25", "capabilities": {}});
            let session = [("Mcp-Session-Id", "s")];
            return Some(response(
                200,
                &session,
                "application/json",
                &result_for(seen, result),
            ));
        }
        if seen.body["method"] != "tools/list" {
            return Some(response(202, &[], "text/plain", ""));
        }
        let note = json!({"jsonrpc": "2.0", "method": "notifications/progress"});
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
        Some(format!("{head}data: {note}\n\n").into_bytes())
    }
    let (url, _seen) = scripted_holding(stalls, true);
    let mut connection = Connection::http(&url, Vec::new(), &quick()).unwrap();
    let started = Instant::now();
    let error = connection.list_tools().unwrap_err();
    assert!(matches!(error, ClientError::Timeout { .. }), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_event_stream_that_ends_early_is_a_protocol_error() {
    fn ends(seen: &Seen) -> Option<Vec<u8>> {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/progress"});
        Some(response(
            200,
            &[],
            "text/event-stream",
            &format!("data: {note}\n\n"),
        ))
        .filter(|_| seen.body["method"] == "initialize")
    }
    let (url, _seen) = scripted(ends);
    let error = Connection::http(&url, Vec::new(), &quick()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "protocol error while waiting for `initialize`: the event stream ended before the response"
    );
}

#[test]
fn bodies_over_the_cap_are_refused() {
    fn huge(seen: &Seen) -> Option<Vec<u8>> {
        let padding = "x".repeat(4096);
        Some(response(
            200,
            &[],
            "application/json",
            &result_for(seen, json!({"pad": padding})),
        ))
    }
    let (url, _seen) = scripted(huge);
    let options = Options {
        max_message_bytes: 1024,
        ..quick()
    };
    let error = Connection::http(&url, Vec::new(), &options).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the HTTP response body while waiting for `initialize` is larger than the limit of 1024 bytes"
    );
}

#[test]
fn refusals_show_status_and_body_but_never_header_values() {
    fn refuse(_: &Seen) -> Option<Vec<u8>> {
        Some(response(401, &[], "text/plain", "bad token\u{1b}[31m"))
    }
    let (url, seen) = scripted(refuse);
    let header = Header::new("Authorization", "Bearer s3cret").unwrap();
    let error = Connection::http(&url, vec![header], &quick()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "HTTP status 401 in answer to `initialize`: bad token\\u{1b}[31m"
    );
    assert!(!format!("{error:?}").contains("s3cret"));
    assert_eq!(
        seen.recv().unwrap().header("authorization"),
        Some("Bearer s3cret")
    );
}

#[test]
fn redirects_are_reported_not_followed() {
    fn moved(_: &Seen) -> Option<Vec<u8>> {
        Some(response(
            307,
            &[("Location", "http://127.0.0.1:1/mcp/")],
            "text/plain",
            "",
        ))
    }
    let (url, _seen) = scripted(moved);
    let error = Connection::http(&url, Vec::new(), &quick()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "HTTP status 307 in answer to `initialize`: redirected to http://127.0.0.1:1/mcp/"
    );
}

#[test]
fn json_rpc_errors_and_wrong_content_types() {
    fn rpc_error(seen: &Seen) -> Option<Vec<u8>> {
        let error = json!({"jsonrpc": "2.0", "id": seen.body["id"],
                           "error": {"code": -32602, "message": "unsupported protocol version"}});
        Some(response(
            200,
            &[],
            "application/json; charset=utf-8",
            &error.to_string(),
        ))
    }
    let (url, _seen) = scripted(rpc_error);
    let error = Connection::http(&url, Vec::new(), &quick()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the server answered `initialize` with JSON-RPC error -32602: unsupported protocol version"
    );
    fn html(_: &Seen) -> Option<Vec<u8>> {
        Some(response(200, &[], "text/html", "<html></html>"))
    }
    let (url, _seen) = scripted(html);
    let error = Connection::http(&url, Vec::new(), &quick()).unwrap_err();
    assert!(
        error.to_string().contains("Content-Type is text/html"),
        "{error}"
    );
}
