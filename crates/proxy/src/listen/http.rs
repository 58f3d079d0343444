//! Small pieces of HTTP shared by the listener's modules: headers, plain and JSON answers,
//! JSON-RPC errors, loopback hosts and the check against DNS rebinding (which the approvals
//! endpoint on an address of its own makes too), and a lock that outlives a panicked holder.

use std::io::Read;
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::{Value, json};
use tiny_http::{Header as HttpHeader, Request, Response, StatusCode};

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) fn header(request: &Request, name: &'static str) -> Option<String> {
    request
        .headers()
        .iter()
        .find(|h| h.field.equiv(name))
        .map(|h| h.value.as_str().to_owned())
}

pub(super) type Body = Response<std::io::Cursor<Vec<u8>>>;

/// Adds a header; names and values here are constants or hex ids, so none is ever refused.
pub(super) fn add<R: Read>(response: Response<R>, name: &str, value: &str) -> Response<R> {
    match HttpHeader::from_bytes(name, value) {
        Ok(header) => response.with_header(header),
        Err(()) => response,
    }
}

pub(super) fn plain(status: u16, text: &str) -> Body {
    let response = Response::from_string(text).with_status_code(StatusCode(status));
    add(response, "Content-Type", "text/plain; charset=utf-8")
}

pub(super) fn json_response(status: u16, body: &Value) -> Body {
    let response = Response::from_string(body.to_string()).with_status_code(StatusCode(status));
    add(response, "Content-Type", "application/json")
}

/// A JSON-RPC error with no id, for a request the proxy refuses as a whole.
pub(super) fn rpc_error(status: u16, code: i64, message: &str) -> Body {
    json_response(
        status,
        &json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}),
    )
}

pub(super) fn answer(request: Request, response: Response<impl Read>) {
    // A client that went away needs no answer.
    let _ = request.respond(response);
}

/// `localhost`, `127.0.0.1`, `[::1]` and the like, with or without a port.
pub(super) fn is_loopback_host(host: &str) -> bool {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split_once(']').map_or("", |(inside, _)| inside)
    } else {
        host.rsplit_once(':').map_or(host, |(name, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                name
            } else {
                host
            }
        })
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Against DNS rebinding, the check every request to a loopback endpoint passes: `Origin`, when
/// present, must be an `http` or `https` origin of a loopback host or one of `allowed_origins`;
/// `Host` must be given once (an HTTP/1.0 request may leave it out) and name a loopback host
/// unless `allow_remote`. A refusal is the 403
/// text and what to note.
pub(crate) fn rebinding_refusal(
    request: &Request,
    allowed_origins: &[String],
    allow_remote: bool,
) -> Option<(&'static str, String)> {
    if let Some(origin) = header(request, "Origin")
        && !origin_allowed(&origin, allowed_origins)
    {
        return Some((
            "origin not allowed",
            format!("refused a request from origin {origin}"),
        ));
    }
    let hosts = request
        .headers()
        .iter()
        .filter(|h| h.field.equiv("Host"))
        .count();
    // HTTP/1.1 asks for exactly one `Host` (RFC 9112, section 3.2); a request without one
    // could be meant for any name, so it is not taken as meant for a loopback one.
    if hosts > 1 || (hosts == 0 && *request.http_version() >= tiny_http::HTTPVersion(1, 1)) {
        return Some((
            "host not allowed",
            format!("refused a request with {hosts} Host headers"),
        ));
    }
    if let Some(host) = header(request, "Host")
        && !allow_remote
        && !is_loopback_host(&host)
    {
        return Some((
            "host not allowed",
            format!("refused a request for host {host}"),
        ));
    }
    None
}

/// Whether `origin` is one of `allowed`, or an `http` or `https` origin of a loopback host.
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let origin = origin.trim().trim_end_matches('/');
    if allowed
        .iter()
        .any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(origin))
    {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https")
        && !rest.contains('/')
        && is_loopback_host(rest)
}
