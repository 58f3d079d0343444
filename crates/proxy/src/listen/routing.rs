//! Routing: each HTTP request checked (origin, host) and sent where it belongs — the approval
//! board, or the MCP endpoint's POST, GET and DELETE.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_recovery_base::text::escape_controls;
use serde_json::Value;
use tiny_http::{Request, Response, StatusCode};

use crate::approvals_endpoint::{json_body, read_capped};
use crate::event::Event;
use crate::note::note;
use crate::slack::SlackHeaders;
use crate::wire::{Line, id_key, is_request, method};

use super::body::{messages, read_body};
use super::config::{BATCH_REVISION, ENDPOINT};
use super::downstream::stopped;
use super::http::{add, answer, header, json_response, lock, plain, rebinding_refusal, rpc_error};
use super::queue::queue;
use super::registry::Hub;
use super::stream::{Stream, event_stream};

impl Hub {
    pub(super) fn handle(self: &Arc<Hub>, mut request: Request) {
        let path = request
            .url()
            .split('?')
            .next()
            .unwrap_or_default()
            .to_owned();
        if let Some((refused, noted)) = rebinding_refusal(
            &request,
            &self.listener.allowed_origins,
            self.listener.allow_remote,
        ) {
            note(&noted);
            return answer(request, plain(403, refused));
        }
        if let Some(board) = &self.settings.approvals
            && path.starts_with("/approvals")
        {
            let method = request.method().as_str().to_ascii_uppercase();
            let headers = SlackHeaders::of(&request);
            let reply = read_capped(&mut request)
                .and_then(|body| board.route(&method, &path, &body, &headers));
            return match reply {
                Some((status, value)) => answer(request, json_body(status, &value)),
                None => answer(request, plain(413, "the decision is too large")),
            };
        }
        if path != ENDPOINT {
            return answer(request, plain(404, "not found; the endpoint is /mcp"));
        }
        let session = header(&request, "Mcp-Session-Id").filter(|id| !id.is_empty());
        match request.method() {
            tiny_http::Method::Post => {
                let body = match read_body(&mut request, self.listener.limits.max_body_bytes) {
                    Ok(body) => body,
                    Err(response) => return answer(request, response),
                };
                self.post(request, session, &body);
            }
            tiny_http::Method::Get => self.get(request, session),
            tiny_http::Method::Delete => self.delete(request, session),
            _ => answer(
                request,
                add(
                    plain(405, "method not allowed"),
                    "Allow",
                    "GET, POST, DELETE",
                ),
            ),
        }
    }

    pub(super) fn post(self: &Arc<Hub>, request: Request, session: Option<String>, body: &[u8]) {
        let messages = match messages(&request, body) {
            Ok(messages) => messages,
            Err(response) => return answer(request, response),
        };
        let (downstream, created) = match session {
            Some(id) => match self.find(&id) {
                Some(downstream) => (downstream, None),
                None => {
                    let unknown =
                        || rpc_error(404, -32001, "unknown or ended session; start a new one");
                    return answer(request, self.gone(&id).unwrap_or_else(unknown));
                }
            },
            None if messages.iter().any(|m| method(m) == Some("initialize")) => {
                match self.open(None) {
                    Ok((id, downstream)) => (downstream, Some(id)),
                    Err(response) => return answer(request, response),
                }
            }
            // 2026-07-28 has no sessions: its clients share one.
            None => match self.sessionless() {
                Ok(downstream) => (downstream, None),
                Err(response) => return answer(request, response),
            },
        };
        if downstream.stopped() {
            return answer(request, stopped());
        }
        // Without the header, a POST is of the revision the session settled (the transport's
        // 2025-03-26 only when none is known): a batch in a session of another is refused.
        let batch = body.trim_ascii_start().starts_with(b"[");
        if let Some(revision) = lock(&downstream.revision).clone()
            && batch
            && revision != BATCH_REVISION
            && header(&request, "MCP-Protocol-Version").is_none()
        {
            let revision = escape_controls(&revision);
            note(&format!(
                "refused a batch in a session of protocol {revision}: batches exist only in {BATCH_REVISION}"
            ));
            let why = format!(
                "a JSON-RPC batch is not allowed: this session speaks {revision}, a revision \
                 without batches (only {BATCH_REVISION} has them)"
            );
            return answer(request, rpc_error(400, -32600, &why));
        }
        let ids: Vec<String> = messages
            .iter()
            .filter(|m| is_request(m))
            .filter_map(id_key)
            .collect();
        let accept = header(&request, "Accept").map(|accept| accept.to_ascii_lowercase());
        let accepts = |kind: &str| accept.as_ref().is_some_and(|accept| accept.contains(kind));
        let wants_stream = accepts("text/event-stream");
        let (sender, receiver) = queue();
        let stream = if ids.is_empty() {
            None
        } else {
            match downstream.expect(&ids, &sender, wants_stream) {
                Ok(stream) => stream,
                Err(response) => return answer(request, response),
            }
        };
        // The routes hold the senders: once they drop them (the session ended), the stream ends.
        drop(sender);
        for message in messages {
            let text = message.to_string();
            // Past the session's bytes in flight, or its queue, the POST is answered busy.
            let sent = downstream
                .budget
                .try_acquire(text.len() + 1)
                .is_some_and(|credit| {
                    let line = Line::Message(message, text);
                    downstream
                        .events
                        .try_send(Event::MeteredClient(line, credit))
                        .is_ok()
                });
            if !sent {
                downstream.forget(&ids, stream);
                if downstream.stopped() {
                    return answer(request, stopped());
                }
                return answer(
                    request,
                    rpc_error(503, -32000, "the session is busy or ended"),
                );
            }
        }
        if ids.is_empty() {
            return answer(request, Response::empty(StatusCode(202)));
        }
        let body = Stream {
            downstream: Arc::clone(&downstream),
            receiver,
            number: stream,
            remaining: Some(ids.into_iter().collect()),
            standalone: false,
            replay: VecDeque::new(),
            patience: self.patience(),
            last: Instant::now(),
        };
        if wants_stream {
            let json = accepts("application/json");
            return event_stream(request, body, created.as_deref(), json);
        }
        let answers = body.collect();
        let value = match <[Value; 1]>::try_from(answers) {
            Ok([single]) => single,
            Err(many) => Value::Array(many),
        };
        let response = json_response(200, &value);
        match created {
            Some(id) => answer(request, add(response, "Mcp-Session-Id", &id)),
            None => answer(request, response),
        }
    }

    pub(super) fn get(self: &Arc<Hub>, request: Request, session: Option<String>) {
        // Clients without a session share one upstream session: a stream of it, or one resumed,
        // would carry the others' requests and answers to whoever asked.
        let Some(id) = session else {
            return answer(
                request,
                add(
                    plain(405, "a GET stream needs an Mcp-Session-Id"),
                    "Allow",
                    "POST, DELETE",
                ),
            );
        };
        let Some(downstream) = self.find(&id) else {
            let unknown = || plain(404, "unknown or missing Mcp-Session-Id");
            return answer(request, self.gone(&id).unwrap_or_else(unknown));
        };
        if downstream.stopped() {
            return answer(request, stopped());
        }
        if let Some(last) = header(&request, "Last-Event-ID") {
            return match Stream::resume(&downstream, &last, self.patience()) {
                Ok(body) => event_stream(request, body, None, false),
                Err((status, why)) => answer(request, plain(status, why)),
            };
        }
        let (sender, receiver) = queue();
        let number = {
            let mut routes = lock(&downstream.routes);
            if routes.get_open {
                drop(routes);
                return answer(
                    request,
                    plain(409, "this session's GET stream is already open"),
                );
            }
            routes.get_open = true;
            let number = routes.add_stream(sender, false);
            routes.get_stream = number;
            number
        };
        let body = Stream {
            downstream,
            receiver,
            number: Some(number),
            remaining: None,
            standalone: true,
            replay: VecDeque::new(),
            patience: Duration::MAX,
            last: Instant::now(),
        };
        event_stream(request, body, None, false);
    }

    pub(super) fn delete(&self, request: Request, session: Option<String>) {
        let Some(id) = session else {
            return answer(request, plain(400, "missing Mcp-Session-Id"));
        };
        let Some(downstream) = lock(&self.sessions).remove(&id) else {
            return answer(request, plain(404, "unknown session"));
        };
        downstream.end_by_client();
        answer(request, Response::empty(StatusCode(200)));
    }
}
