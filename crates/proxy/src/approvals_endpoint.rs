//! The approvals endpoint: `GET /approvals` lists the pending requests of a [`Board`],
//! `POST /approvals/{request}` and `POST /approvals/slack` decide them; served beside the MCP
//! endpoint or on an address of its own, where every request but a Slack interaction passes
//! the `Host` and `Origin` checks of the MCP endpoint.

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::listen::rebinding_refusal;
use crate::note::note;
use crate::quorum::Board;
use crate::slack::SlackHeaders;
use crate::webhooks::MAX_DECISION_BYTES;

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
            ("GET", None | Some("")) => return Some((200, json!({"pending": self.list()}))),
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

/// Serves the approvals endpoint of `board` on `address`, a loopback address, in a thread of
/// its own; returns the address bound.
pub fn serve_approvals(board: Arc<Board>, address: SocketAddr) -> Result<SocketAddr, String> {
    if !address.ip().is_loopback() {
        return Err(format!(
            "{address} is not a loopback address: approvals are taken on loopback only"
        ));
    }
    let server = tiny_http::Server::http(address).map_err(|e| e.to_string())?;
    let bound = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| "the approvals endpoint has no IP address".to_owned())?;
    std::thread::spawn(move || {
        for mut request in server.incoming_requests() {
            let url = request.url().to_owned();
            let method = request.method().as_str().to_ascii_uppercase();
            // Against DNS rebinding, the checks of the `--listen` address: a web page a
            // browser shows must not read the pending arguments. A Slack interaction comes
            // through a tunnel with the tunnel's name as its Host, and its signature checks it.
            let slack = method == "POST" && url.split('?').next() == Some("/approvals/slack");
            if let Some((refused, noted)) =
                rebinding_refusal(&request, &[], false).filter(|_| !slack)
            {
                note(&noted);
                let _ = request.respond(json_body(403, &json!({"error": refused})));
                continue;
            }
            let headers = SlackHeaders::of(&request);
            let body = read_capped(&mut request);
            let (status, value) = match body {
                Some(body) => board.route(&method, &url, &body, &headers).unwrap_or((
                    404,
                    json!({"error": "not found; the endpoint is /approvals"}),
                )),
                None => (
                    413,
                    json!({"error": format!("a decision is at most {MAX_DECISION_BYTES} bytes")}),
                ),
            };
            let _ = request.respond(json_body(status, &value));
        }
    });
    Ok(bound)
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
