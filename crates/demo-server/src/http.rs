//! Streamable HTTP on a loopback address: a small HTTP/1.1 server on `std::net`, one thread per
//! connection, one request per connection.
//!
//! `POST /mcp` carries client messages; `initialize` opens a session (`Mcp-Session-Id`), later
//! requests must carry it; `DELETE /mcp` ends it; `GET /mcp` (a server-initiated stream) is
//! not offered (405). Requests with an `Origin` other than a loopback one are refused (403), as
//! the transport requires against DNS rebinding.

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::server::{SUPPORTED_VERSIONS, Server};

/// Largest request head (request line and headers) read.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest request body read.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// How long a connection may stay silent.
const IDLE: Duration = Duration::from_secs(30);

/// The HTTP side of a [`Server`].
#[derive(Debug)]
pub struct HttpServer {
    server: Server,
    /// Answer requests as `text/event-stream`, with a log notification and a `ping` before
    /// each response, instead of plain JSON.
    sse: bool,
    sessions: Mutex<HashSet<String>>,
    next_session: AtomicU64,
}

impl HttpServer {
    /// Wraps `server`; `sse` chooses event-stream answers.
    pub fn new(server: Server, sse: bool) -> HttpServer {
        HttpServer {
            server,
            sse,
            sessions: Mutex::new(HashSet::new()),
            next_session: AtomicU64::new(0),
        }
    }

    /// Binds `address`, which must be a loopback address (port 0 picks a free port).
    pub fn bind(address: SocketAddr) -> io::Result<TcpListener> {
        if !address.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{address} is not a loopback address; the demo server listens on loopback only"
                ),
            ));
        }
        TcpListener::bind(address)
    }

    /// Serves connections from `listener` until it fails.
    pub fn serve(self: Arc<Self>, listener: &TcpListener) -> io::Result<()> {
        for stream in listener.incoming() {
            let stream = match stream {
                Ok(stream) => stream,
                // A connection that failed before it was accepted concerns only its client.
                Err(_) => continue,
            };
            let this = Arc::clone(&self);
            thread::spawn(move || {
                let _ = this.connection(stream);
            });
        }
        Ok(())
    }

    fn connection(&self, stream: TcpStream) -> io::Result<()> {
        stream.set_read_timeout(Some(IDLE))?;
        stream.set_write_timeout(Some(IDLE))?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut writer = stream;
        let request = match read_request(&mut reader) {
            Ok(request) => request,
            Err(reason) => return respond(&mut writer, 400, &[], "text/plain", reason.as_bytes()),
        };
        self.route(&request, &mut writer)
    }

    fn route(&self, request: &Request, out: &mut TcpStream) -> io::Result<()> {
        if request.path.split('?').next() != Some("/mcp") {
            return respond(
                out,
                404,
                &[],
                "text/plain",
                b"not found; the endpoint is /mcp",
            );
        }
        if let Some(origin) = request.header("origin")
            && !is_loopback_origin(origin)
        {
            return respond(out, 403, &[], "text/plain", b"origin not allowed");
        }
        if let Some(version) = request.header("mcp-protocol-version")
            && !SUPPORTED_VERSIONS.contains(&version)
        {
            return respond(
                out,
                400,
                &[],
                "text/plain",
                b"unsupported MCP-Protocol-Version",
            );
        }
        match request.method.as_str() {
            "POST" => self.post(request, out),
            "DELETE" => {
                let Some(session) = request.header("mcp-session-id") else {
                    return respond(out, 400, &[], "text/plain", b"missing Mcp-Session-Id");
                };
                let removed = self.sessions().remove(session);
                respond(out, if removed { 200 } else { 404 }, &[], "text/plain", b"")
            }
            _ => respond(
                out,
                405,
                &[("Allow", "POST, DELETE")],
                "text/plain",
                b"method not allowed",
            ),
        }
    }

    fn post(&self, request: &Request, out: &mut TcpStream) -> io::Result<()> {
        let content_type = request.header("content-type").unwrap_or_default();
        if !content_type
            .to_ascii_lowercase()
            .starts_with("application/json")
        {
            return respond(
                out,
                415,
                &[],
                "text/plain",
                b"Content-Type must be application/json",
            );
        }
        let message: Value = match serde_json::from_slice(&request.body) {
            Ok(message) => message,
            Err(e) => {
                let answer = json!({"jsonrpc": "2.0", "id": null,
                                    "error": {"code": -32700, "message": format!("parse error: {e}")}});
                return respond(
                    out,
                    400,
                    &[],
                    "application/json",
                    answer.to_string().as_bytes(),
                );
            }
        };
        let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
        let mut extra = Vec::new();
        let session;
        if is_initialize {
            let n = self.next_session.fetch_add(1, Ordering::Relaxed) + 1;
            session = format!("demo-{}-{n}", std::process::id());
            self.sessions().insert(session.clone());
            extra.push(("Mcp-Session-Id", session.as_str()));
        } else {
            match request.header("mcp-session-id") {
                None => return respond(out, 400, &[], "text/plain", b"missing Mcp-Session-Id"),
                Some(id) if !self.sessions().contains(id) => {
                    return respond(out, 404, &[], "text/plain", b"unknown session");
                }
                Some(_) => {}
            }
        }
        let Some(answer) = self.server.handle(&message) else {
            // Notifications and responses are accepted without a body.
            return respond(out, 202, &extra, "text/plain", b"");
        };
        if !self.sse {
            return respond(
                out,
                200,
                &extra,
                "application/json",
                answer.to_string().as_bytes(),
            );
        }
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "info", "data": "working on it"}});
        let ping = json!({"jsonrpc": "2.0", "id": "server-ping", "method": "ping"});
        let mut body = String::from(": demo stream\n\n");
        for (n, event) in [log, ping, answer].iter().enumerate() {
            body.push_str(&format!("id: {n}\nevent: message\ndata: {event}\n\n"));
        }
        respond(out, 200, &extra, "text/event-stream", body.as_bytes())
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `http://localhost`, `http://127.0.0.1:1234`, `http://[::1]` and the like.
fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => rest.split(':').next().unwrap_or_default(),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn read_request(reader: &mut impl BufRead) -> Result<Request, String> {
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let read = Read::take(&mut *reader, (MAX_HEAD_BYTES + 1 - head.len()) as u64)
            .read_until(b'\n', &mut head)
            .map_err(|e| format!("reading the request failed: {e}"))?;
        if head.len() > MAX_HEAD_BYTES {
            return Err("request head too large".into());
        }
        if read == 0 {
            return Err("connection closed mid-request".into());
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    let head = String::from_utf8(head).map_err(|_| "request head is not UTF-8".to_string())?;
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(path), Some(_version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err("malformed request line".into());
    };
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_string(), value.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .map(|(_, value)| value.parse::<usize>())
        .transpose()
        .map_err(|_| "invalid Content-Length".to_string())?
        .unwrap_or(0);
    if headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("transfer-encoding"))
    {
        return Err("chunked request bodies are not supported; send Content-Length".into());
    }
    if length > MAX_BODY_BYTES {
        return Err("request body too large".into());
    }
    let mut body = vec![0; length];
    reader
        .read_exact(&mut body)
        .map_err(|e| format!("reading the body failed: {e}"))?;
    Ok(Request {
        method: method.to_string(),
        path: path.to_string(),
        headers,
        body,
    })
}

fn respond(
    out: &mut impl Write,
    status: u16,
    headers: &[(&str, &str)],
    content_type: &str,
    body: &[u8],
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        415 => "Unsupported Media Type",
        _ => "Status",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\nCache-Control: no-cache\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    out.write_all(body)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_only() {
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "http://127.0.0.1:80",
            "http://[::1]:9",
        ] {
            assert!(is_loopback_origin(ok), "{ok}");
        }
        for bad in [
            "http://evil.test",
            "http://127.0.0.1.evil.test",
            "null",
            "file://x",
        ] {
            assert!(!is_loopback_origin(bad), "{bad}");
        }
    }

    #[test]
    fn parses_requests_with_limits() {
        let raw =
            b"POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        let request = read_request(&mut &raw[..]).unwrap();
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/mcp")
        );
        assert_eq!(request.header("content-type"), Some("application/json"));
        assert_eq!(request.body, b"{}");
        let huge = format!(
            "POST /mcp HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEAD_BYTES)
        );
        assert!(read_request(&mut huge.as_bytes()).is_err());
        let big_body = b"POST /mcp HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n";
        assert!(read_request(&mut &big_body[..]).is_err());
        assert!(read_request(&mut &b"POST /mcp HTTP/1.1\r\n"[..]).is_err());
    }
}
