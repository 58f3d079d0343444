//! The approvals endpoint: `GET /approvals` lists the pending requests of a [`Board`],
//! `POST /approvals/{request}` and `POST /approvals/slack` decide them; served beside the MCP
//! endpoint or on an address of its own, where every request but a Slack interaction passes
//! the `Host` and `Origin` checks of the MCP endpoint.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use mcp_recovery_model::json::with;
use serde_json::{Value, json};

#[cfg(unix)]
use crate::listen::Slot;
use crate::listen::rebinding_refusal;
use crate::note::note;
use crate::quorum::Board;
use crate::slack::SlackHeaders;
use crate::webhooks::MAX_DECISION_BYTES;

/// Threads answering the requests that arrived whole.
const HANDLERS: usize = 4;

impl Board {
    /// Answers the approvals endpoint: `GET /approvals`, `POST /approvals/{request}`, `POST
    /// /approvals/slack` (with the request's Slack signature `headers`). `None` when `url` is
    /// not under `/approvals`.
    pub fn route(
        &self,
        method: &str,
        url: &str,
        body: &[u8],
        headers: &SlackHeaders,
    ) -> Option<(u16, Value)> {
        let path = url.split('?').next().unwrap_or_default();
        let rest = path.strip_prefix("/approvals")?;
        let submitted = match (method, rest.strip_prefix('/')) {
            // Built with `with`: `json!` would spell the arguments' numbers its own way
            // (`1E2` as `1e+2`), and `approve` recomputes the call digest from this listing.
            ("GET", None | Some("")) => {
                let pending = Value::Array(self.list());
                return Some((200, with(json!({}), [("pending", pending)])));
            }
            ("POST", Some("slack")) => self.submit_slack(headers, body),
            ("POST", Some(id)) if !id.is_empty() && !id.contains('/') => {
                self.submit(id, body, "cli")
            }
            _ => {
                return Some((
                    405,
                    json!({"error": "GET /approvals lists, POST /approvals/{request} decides, \
                        POST /approvals/slack takes Slack interactions"}),
                ));
            }
        };
        Some(match submitted {
            Ok(said) => (200, json!({"counted": true, "message": said})),
            Err(r) => (r.status, json!({"counted": false, "error": r.reason})),
        })
    }
}

/// Serves the approvals endpoint of `board` on `address`, a loopback address, in threads of its
/// own; returns the address bound.
///
/// The endpoint may be reached through a tunnel (Slack posts its interactions through one), so
/// no connection may hold it: a gate accepts, admits at most 64 connections at once (one beyond
/// them is closed unanswered), and passes a request on only once it has arrived whole (its
/// head, and a body of at most 16 KiB given by `Content-Length`) within 10 s of the
/// connection's opening; a slower one is answered 408 and closed. Each connection carries one
/// request, and a fixed few threads answer the requests that arrived.
pub fn serve_approvals(board: Arc<Board>, address: SocketAddr) -> Result<SocketAddr, String> {
    if !address.ip().is_loopback() {
        return Err(format!(
            "{address} is not a loopback address: approvals are taken on loopback only"
        ));
    }
    let public = TcpListener::bind(address).map_err(|e| e.to_string())?;
    let bound = public.local_addr().map_err(|e| e.to_string())?;
    let server = Arc::new(gated_server(public).map_err(|e| e.to_string())?);
    for _ in 0..HANDLERS {
        let (server, board) = (Arc::clone(&server), Arc::clone(&board));
        std::thread::spawn(move || {
            while let Ok(request) = server.recv() {
                answer(&board, request);
            }
        });
    }
    Ok(bound)
}

/// Answers one request that arrived whole.
fn answer(board: &Board, mut request: tiny_http::Request) {
    let url = request.url().to_owned();
    let method = request.method().as_str().to_ascii_uppercase();
    // Against DNS rebinding, the checks of the `--listen` address: a web page a browser shows
    // must not read the pending arguments. A Slack interaction comes through a tunnel with the
    // tunnel's name as its Host, and its signature checks it.
    let slack = method == "POST" && url.split('?').next() == Some("/approvals/slack");
    if let Some((refused, noted)) = rebinding_refusal(&request, &[], false).filter(|_| !slack) {
        note(&noted);
        let _ = request.respond(json_body(403, &json!({"error": refused})));
        return;
    }
    let headers = SlackHeaders::of(&request);
    let (status, value) = match read_capped(&mut request) {
        Some(body) => board.route(&method, &url, &body, &headers).unwrap_or((
            404,
            json!({"error": "not found; the endpoint is /approvals"}),
        )),
        None => (413, json!({"error": too_large()})),
    };
    let _ = request.respond(json_body(status, &value));
}

fn too_large() -> String {
    format!("a decision is at most {MAX_DECISION_BYTES} bytes")
}

/// A JSON answer.
pub fn json_body(status: u16, value: &Value) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let mut response =
        tiny_http::Response::from_data(format!("{value}\n").into_bytes()).with_status_code(status);
    if let Ok(header) = tiny_http::Header::from_bytes("Content-Type", "application/json") {
        response.add_header(header);
    }
    response
}

/// The request body, `None` when it is larger than a decision may be.
pub fn read_capped(request: &mut tiny_http::Request) -> Option<Vec<u8>> {
    mcp_recovery_base::read::read_up_to(request.as_reader(), MAX_DECISION_BYTES as u64, 0)
        .ok()
        .flatten()
}

/// The HTTP server behind the gate, which accepts from `public`.
#[cfg(unix)]
fn gated_server(public: TcpListener) -> std::io::Result<tiny_http::Server> {
    let (internal, listener) =
        crate::internal_socket::InternalSocket::bind("mcp-recovery-approvals-")?;
    let server = tiny_http::Server::from_listener(listener, None).map_err(std::io::Error::other)?;
    let internal = Arc::new(internal);
    std::thread::spawn(move || {
        let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        for client in public.incoming() {
            // Beyond the cap a connection is closed at once.
            let (Ok(client), Some(slot)) = (client, Slot::take(&open, gate::MAX_CONNECTIONS))
            else {
                continue;
            };
            let internal = Arc::clone(&internal);
            std::thread::spawn(move || {
                gate::relay(client, &internal);
                drop(slot);
            });
        }
    });
    Ok(server)
}

/// Without Unix sockets the HTTP server accepts from `public` itself, with no gate.
#[cfg(not(unix))]
fn gated_server(public: TcpListener) -> std::io::Result<tiny_http::Server> {
    tiny_http::Server::from_listener(public, None).map_err(std::io::Error::other)
}

/// The gate in front of the HTTP server: connections counted, requests taken whole by a
/// deadline, answers written back by another.
#[cfg(unix)]
mod gate {
    use std::io::{ErrorKind, Read, Write};
    use std::net::{Shutdown, TcpStream};
    use std::time::{Duration, Instant};

    use serde_json::json;

    use crate::internal_socket::InternalSocket;

    use super::too_large;
    use crate::webhooks::MAX_DECISION_BYTES;

    /// Connections the endpoint on an address of its own holds open at once.
    pub(super) const MAX_CONNECTIONS: usize = 64;
    /// How long a connection may take to send its whole request, and again to take its answer.
    const REQUEST_DEADLINE: Duration = Duration::from_secs(10);
    /// The longest request head passed on.
    const MAX_HEAD: usize = 16 * 1024;

    /// A request the gate answers itself: its status and why.
    type Refused = (u16, String);

    /// Takes one request from `client` within [`REQUEST_DEADLINE`], hands it whole to the HTTP
    /// server at `internal`, and writes its answer back within the same time again.
    pub(super) fn relay(mut client: TcpStream, internal: &InternalSocket) {
        let _ = client.set_nodelay(true);
        let deadline = Instant::now() + REQUEST_DEADLINE;
        let answer = match read_request(&mut client, deadline) {
            Ok(request) => internal.connect().and_then(|mut server| {
                server.write_all(&request)?;
                server.shutdown(Shutdown::Write)?;
                server.set_read_timeout(Some(REQUEST_DEADLINE))?;
                let mut answer = Vec::new();
                server.read_to_end(&mut answer)?;
                Ok(answer)
            }),
            Err(Some((status, why))) => Ok(refusal(status, &why)),
            Err(None) => return,
        };
        if let Ok(mut answer) = answer {
            // The client is told the connection ends with the answer, so it sends its next
            // request on another.
            if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
                if !head.contains("\r\nconnection:") {
                    answer.splice(end + 2..end + 2, *b"Connection: close\r\n");
                }
            }
            write_by(&mut client, &answer, Instant::now() + REQUEST_DEADLINE);
        }
        let _ = client.shutdown(Shutdown::Both);
    }

    /// The request `client` sends, head and body, by `deadline`; its head passed on with
    /// `Connection: close` (one request a connection). `Err(None)` when the peer went away.
    fn read_request(client: &mut TcpStream, deadline: Instant) -> Result<Vec<u8>, Option<Refused>> {
        let mut head = Vec::new();
        let mut buffer = [0u8; 4096];
        let end = loop {
            if let Some(at) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            if head.len() > MAX_HEAD {
                return Err(Some((431, "the request head is too long".into())));
            }
            let read = read_by(client, &mut buffer, deadline)?;
            head.extend_from_slice(&buffer[..read]);
        };
        let mut body = head.split_off(end);
        let (mut request, length, continues) = pass_on(&head).map_err(Some)?;
        if length > MAX_DECISION_BYTES {
            return Err(Some((413, too_large())));
        }
        if continues && body.len() < length {
            let _ = client.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        while body.len() < length {
            let read = read_by(client, &mut buffer, deadline)?;
            body.extend_from_slice(&buffer[..read]);
        }
        body.truncate(length);
        request.extend_from_slice(&body);
        Ok(request)
    }

    /// One read from `client` by `deadline`.
    fn read_by(
        client: &mut TcpStream,
        buffer: &mut [u8],
        deadline: Instant,
    ) -> Result<usize, Option<Refused>> {
        let late = || {
            let secs = REQUEST_DEADLINE.as_secs();
            Some((
                408,
                format!("the request did not arrive whole within {secs} s"),
            ))
        };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(late());
            }
            client.set_read_timeout(Some(left)).map_err(|_| None)?;
            match client.read(buffer) {
                Ok(0) => return Err(None),
                Ok(read) => return Ok(read),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(late());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Err(None),
            }
        }
    }

    /// The head to pass on (its `Connection` and `Expect` fields replaced by `Connection: close`),
    /// the body's length, and whether the client waits for `100 Continue`. A body not framed by one
    /// `Content-Length` is refused.
    fn pass_on(head: &[u8]) -> Result<(Vec<u8>, usize, bool), Refused> {
        let mut passed = Vec::with_capacity(head.len() + 20);
        let (mut length, mut continues) = (None, false);
        let lines = head
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        for (index, line) in lines.enumerate() {
            if line.is_empty() {
                continue;
            }
            let text = String::from_utf8_lossy(line);
            let (name, value) = text.split_once(':').unwrap_or((&text, ""));
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
            if index > 0 {
                match name.as_str() {
                    "transfer-encoding" => {
                        return Err((411, "a body is sent with Content-Length".into()));
                    }
                    "content-length" => {
                        let given = Some(value)
                            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                            .and_then(|v| v.parse::<usize>().ok())
                            .filter(|n| length.is_none_or(|seen| seen == *n));
                        length =
                            Some(given.ok_or((400, "Content-Length is malformed".to_owned()))?);
                    }
                    "expect" => {
                        continues = value.eq_ignore_ascii_case("100-continue");
                        continue;
                    }
                    "connection" => continue,
                    _ => {}
                }
            }
            passed.extend_from_slice(line);
            passed.extend_from_slice(b"\r\n");
        }
        passed.extend_from_slice(b"Connection: close\r\n\r\n");
        Ok((passed, length.unwrap_or(0), continues))
    }

    /// The answer the gate gives a request it does not pass on.
    fn refusal(status: u16, why: &str) -> Vec<u8> {
        let reason = match status {
            408 => "Request Timeout",
            411 => "Length Required",
            413 => "Content Too Large",
            431 => "Request Header Fields Too Large",
            _ => "Bad Request",
        };
        let body = format!("{}\n", json!({"error": why}));
        format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }

    /// Writes `bytes` to `client` by `deadline`, or gives up.
    fn write_by(client: &mut TcpStream, mut bytes: &[u8], deadline: Instant) {
        while !bytes.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || client.set_write_timeout(Some(left)).is_err() {
                return;
            }
            match client.write(bytes) {
                Ok(0) => return,
                Ok(written) => bytes = &bytes[written..],
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }
}
