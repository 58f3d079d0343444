//! Streamable HTTP against scripted loopback servers: sessions and headers, SSE answers, and
//! servers that hang, overflow or refuse.

// Helpers shared by the tests fail loudly, like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use mcp_recovery_client::{ClientError, Connection, Header, Negotiation, Options};
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

/// A server of a revision before 2026-07-28, on a loopback port: `server/discover` is refused
/// as the TypeScript SDK refuses any request before `initialize` (400 with a JSON-RPC error);
/// `answer` turns every other request into raw response bytes (`None`: answer nothing).
/// Returns the URL and the requests seen (the refused `server/discover` included).
fn scripted(answer: fn(&Seen) -> Option<Vec<u8>>) -> (String, mpsc::Receiver<Seen>) {
    scripted_with(answer, false, true)
}

/// [`scripted`], keeping each connection open after the bytes when `hold` is true.
fn scripted_holding(
    answer: fn(&Seen) -> Option<Vec<u8>>,
    hold: bool,
) -> (String, mpsc::Receiver<Seen>) {
    scripted_with(answer, hold, true)
}

/// A 2026-07-28 server: `answer` sees every request, `server/discover` included.
fn scripted_modern(answer: fn(&Seen) -> Option<Vec<u8>>) -> (String, mpsc::Receiver<Seen>) {
    scripted_with(answer, false, false)
}

/// What a 2025 TypeScript SDK server answers to a request that is not `initialize` before a
/// session exists.
fn not_initialized() -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": null,
                      "error": {"code": -32000, "message": "Bad Request: Server not initialized"}});
    response(400, &[], "application/json", &body.to_string())
}

fn scripted_with(
    answer: fn(&Seen) -> Option<Vec<u8>>,
    hold: bool,
    legacy: bool,
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
            let bytes = if legacy && seen.body["method"] == "server/discover" {
                Some(not_initialized())
            } else {
                answer(&seen)
            };
            // The request is recorded before it is answered, so a test that has its answer
            // always finds the request among those seen.
            let listening = tx.send(seen).is_ok();
            if let Some(bytes) = &bytes {
                let _ = stream.write_all(bytes);
            }
            if bytes.is_none() || hold {
                thread::spawn(move || {
                    thread::sleep(Duration::from_secs(30));
                    drop(stream);
                });
            }
            if !listening {
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
            "POST server/discover",
            "POST initialize",
            "POST notifications/initialized",
            "POST tools/list",
            "POST (reply)",
            "POST tools/list",
            "POST (reply)",
            "DELETE (reply)"
        ]
    );
    let discover = &requests[0];
    assert_eq!(discover.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(
        discover.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    let init = &requests[1];
    assert_eq!(
        init.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(init.header("authorization"), Some("Bearer s3cret"));
    assert_eq!(init.header("mcp-session-id"), None);
    // The handshake carries no version header: the version is not settled yet.
    assert_eq!(init.header("mcp-protocol-version"), None);
    assert_eq!(init.body["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(init.body["params"].get("_meta"), None);
    for later in &requests[2..] {
        assert_eq!(later.header("mcp-session-id"), Some("sess-42"), "{later:?}");
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-06-18"));
        assert_eq!(later.header("authorization"), Some("Bearer s3cret"));
    }
    // The ping inside the stream was answered.
    assert_eq!(
        requests[4].body,
        json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}})
    );
    assert_eq!(requests[3].body.get("params"), None);
    assert_eq!(requests[5].body["params"], json!({"cursor": "p2"}));
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
    for _ in 0..2 {
        assert_eq!(
            seen.recv().unwrap().header("authorization"),
            Some("Bearer s3cret")
        );
    }
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

/// The version a 2026-07-28 request names in `params._meta`.
fn meta_version(seen: &Seen) -> Option<&str> {
    seen.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str()
}

fn rpc_refusal(seen: &Seen, status: u16, error: Value) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": seen.body["id"], "error": error});
    response(status, &[], "application/json", &body.to_string())
}

/// A server that speaks only 2026-07-28: no `initialize`, no session; every request must name
/// the version in `_meta` and the same one in `MCP-Protocol-Version`.
fn modern(seen: &Seen) -> Option<Vec<u8>> {
    if seen.method == "DELETE" {
        return Some(response(405, &[], "text/plain", ""));
    }
    let method = seen.body["method"].as_str().unwrap_or_default();
    let header = seen.header("mcp-protocol-version");
    match meta_version(seen) {
        None => {
            let error = json!({"code": -32602, "message": "params._meta is required"});
            return Some(rpc_refusal(seen, 400, error));
        }
        Some(version) if Some(version) != header => {
            let error = json!({"code": -32020, "message": "header and _meta disagree"});
            return Some(rpc_refusal(seen, 400, error));
        }
        Some("2026-07-28") => {}
        Some(other) => {
            let error = json!({"code": -32022, "message": "unsupported",
                               "data": {"requested": other, "supported": ["2026-07-28"]}});
            return Some(rpc_refusal(seen, 400, error));
        }
    }
    let result = match method {
        "server/discover" => json!({
            "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "cacheScope": "public", "ttlMs": 0, "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}}
        }),
        "tools/list" => match seen.body["params"]["cursor"].as_str() {
            None => json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}],
                           "nextCursor": "p2", "resultType": "complete",
                           "cacheScope": "public", "ttlMs": 0}),
            Some(_) => json!({"tools": [{"name": "b", "inputSchema": {"type": "object"}}],
                              "resultType": "complete", "cacheScope": "public", "ttlMs": 0}),
        },
        _ => {
            let error = json!({"code": -32601, "message": "method not found"});
            return Some(rpc_refusal(seen, 200, error));
        }
    };
    Some(response(
        200,
        &[],
        "application/json",
        &result_for(seen, result),
    ))
}

#[test]
fn a_2026_07_28_server_is_spoken_to_without_initialize() {
    let (url, seen) = scripted_modern(modern);
    let mut connection = Connection::http(&url, Vec::new(), &quick()).unwrap();
    assert_eq!(connection.protocol_version(), "2026-07-28");
    assert_eq!(connection.negotiation(), Negotiation::Discover);
    assert_eq!(
        connection.initialize_result()["supportedVersions"][0],
        "2026-07-28"
    );
    let tools = connection.list_tools().unwrap();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    // The first page's other members are kept; the result type is not part of the list.
    assert_eq!(tools["cacheScope"], "public");
    connection.close();
    let requests: Vec<Seen> = seen.try_iter().collect();
    let methods: Vec<&str> = requests
        .iter()
        .map(|r| r.body["method"].as_str().unwrap_or("(none)"))
        .collect();
    assert_eq!(methods, ["server/discover", "tools/list", "tools/list"]);
    for request in &requests {
        assert_eq!(meta_version(request), Some("2026-07-28"), "{request:?}");
        assert_eq!(request.header("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(request.header("mcp-session-id"), None);
    }
    assert_eq!(requests[2].body["params"]["cursor"], "p2");
}

#[test]
fn a_2025_03_26_server_gets_the_handshake() {
    fn old(seen: &Seen) -> Option<Vec<u8>> {
        let session = [("Mcp-Session-Id", "old-1")];
        Some(match seen.body["method"].as_str().unwrap_or_default() {
            "initialize" => {
                let result = json!({"protocolVersion": "2025-03-26", "capabilities": {},
                                    "serverInfo": {"name": "old", "version": "1"}});
                response(200, &session, "application/json", &result_for(seen, result))
            }
            "tools/list" if seen.body["params"].get("_meta").is_none() => {
                let result = json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}]});
                response(200, &[], "application/json", &result_for(seen, result))
            }
            _ => response(202, &[], "text/plain", ""),
        })
    }
    let (url, seen) = scripted(old);
    let mut connection = Connection::http(&url, Vec::new(), &quick()).unwrap();
    assert_eq!(connection.protocol_version(), "2025-03-26");
    assert_eq!(connection.negotiation(), Negotiation::Initialize);
    assert_eq!(connection.list_tools().unwrap()["tools"][0]["name"], "a");
    connection.close();
    let last = seen
        .try_iter()
        .filter(|r| r.method == "POST")
        .last()
        .unwrap();
    assert_eq!(last.header("mcp-protocol-version"), Some("2025-03-26"));
    assert_eq!(last.header("mcp-session-id"), Some("old-1"));
}

#[test]
fn a_version_refusal_naming_an_older_version_falls_back_to_it() {
    fn refuses(seen: &Seen) -> Option<Vec<u8>> {
        if seen.body["method"] == "server/discover" {
            let error = json!({"code": -32022, "message": "unsupported",
                               "data": {"requested": "2026-07-28",
                                        "supported": ["2025-03-26", "2025-06-18"]}});
            return Some(rpc_refusal(seen, 400, error));
        }
        polite(seen)
    }
    let (url, seen) = scripted_modern(refuses);
    let connection = Connection::http(&url, Vec::new(), &quick()).unwrap();
    assert_eq!(connection.negotiation(), Negotiation::Initialize);
    assert_eq!(connection.protocol_version(), "2025-06-18");
    let requests: Vec<Seen> = seen.try_iter().collect();
    assert_eq!(requests[1].body["params"]["protocolVersion"], "2025-06-18");
}

#[test]
fn no_common_version_and_header_mismatch_are_named() {
    fn future(seen: &Seen) -> Option<Vec<u8>> {
        let error = json!({"code": -32022, "message": "unsupported",
                           "data": {"requested": "2026-07-28", "supported": ["2027-03-01"]}});
        Some(rpc_refusal(seen, 400, error))
    }
    let (url, _seen) = scripted_modern(future);
    let error = Connection::http(&url, Vec::new(), &quick()).unwrap_err();
    assert!(
        matches!(error, ClientError::UnsupportedProtocolVersion { .. }),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "no protocol version in common: `server/discover` asked for 2026-07-28, the server \
         supports 2027-03-01; this client speaks 2026-07-28, 2025-11-25, 2025-06-18, \
         2025-03-26, 2024-11-05"
    );

    fn mismatched(seen: &Seen) -> Option<Vec<u8>> {
        let error = json!({"code": -32020, "message": "MCP-Protocol-Version header missing"});
        Some(rpc_refusal(seen, 400, error))
    }
    let (url, _seen) = scripted_modern(mismatched);
    let error = Connection::http(&url, Vec::new(), &quick()).unwrap_err();
    assert!(
        matches!(error, ClientError::HeaderMismatch { .. }),
        "{error}"
    );
    assert!(
        error.to_string().starts_with(
            "the server rejected `server/discover` because its HTTP headers do not match the \
             request body (HeaderMismatchError: MCP-Protocol-Version header missing)"
        ),
        "{error}"
    );

    fn chooses_unknown(seen: &Seen) -> Option<Vec<u8>> {
        let result = json!({"protocolVersion": "1999-01-01", "capabilities": {}});
        Some(response(
            200,
            &[],
            "application/json",
            &result_for(seen, result),
        ))
    }
    let (url, _seen) = scripted(chooses_unknown);
    let error = Connection::http(&url, Vec::new(), &quick()).unwrap_err();
    assert!(
        error.to_string().starts_with(
            "no protocol version in common: `initialize` asked for 2025-11-25, the server \
             supports 1999-01-01;"
        ),
        "{error}"
    );
}

#[test]
fn an_incomplete_result_is_refused() {
    fn wants_input(seen: &Seen) -> Option<Vec<u8>> {
        if seen.body["method"] == "server/discover" {
            return modern(seen);
        }
        let result = json!({"resultType": "input_required", "inputRequests": {}});
        Some(response(
            200,
            &[],
            "application/json",
            &result_for(seen, result),
        ))
    }
    let (url, _seen) = scripted_modern(wants_input);
    let mut connection = Connection::http(&url, Vec::new(), &quick()).unwrap();
    let error = connection.list_tools().unwrap_err();
    assert_eq!(
        error.to_string(),
        "protocol error while waiting for `tools/list`: the result's `resultType` is \
         \"input_required\"; this client handles only complete results"
    );
}

#[test]
fn echoed_header_values_are_redacted_everywhere() {
    // The server quotes the Authorization header back in a 401 body, in an error message and
    // in a tool description.
    fn echo(seen: &Seen) -> Option<Vec<u8>> {
        let token = seen.header("authorization").unwrap_or_default().to_string();
        match seen.body["method"].as_str().unwrap_or_default() {
            "initialize" if seen.header("x-mode") == Some("401") => Some(response(
                401,
                &[],
                "text/plain",
                &format!("invalid credentials: {token}"),
            )),
            "initialize" if seen.header("x-mode") == Some("rpc") => Some(rpc_refusal(
                seen,
                200,
                json!({"code": -32001, "message": format!("rejected {token}"),
                       "data": {"got": token}}),
            )),
            "initialize" => {
                let result = json!({"protocolVersion": "2025-11-25", "capabilities": {}});
                Some(response(
                    200,
                    &[],
                    "application/json",
                    &result_for(seen, result),
                ))
            }
            "tools/list" => {
                let tool = json!({"name": "t", "description": format!("key {token}"),
                                  "inputSchema": {"type": "object"}});
                let result = json!({"tools": [tool]});
                Some(response(
                    200,
                    &[],
                    "application/json",
                    &result_for(seen, result),
                ))
            }
            _ => Some(response(202, &[], "text/plain", "")),
        }
    }
    let (url, _seen) = scripted(echo);
    let auth = || Header::new("Authorization", "Bearer s3cret-token").unwrap();
    for mode in ["401", "rpc"] {
        let headers = vec![auth(), Header::new("X-Mode", mode).unwrap()];
        let error = Connection::http(&url, headers, &quick()).unwrap_err();
        let shown = format!("{error} {error:?}");
        assert!(!shown.contains("s3cret"), "{mode}: {shown}");
        assert!(shown.contains("***"), "{mode}: {shown}");
    }
    let mut connection = Connection::http(&url, vec![auth()], &quick()).unwrap();
    let tools = connection.list_tools().unwrap();
    assert_eq!(tools["tools"][0]["description"], "key ***");
}
