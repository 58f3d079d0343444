//! The Streamable HTTP transport: one POST per message; the answer comes back as a JSON body or
//! as a `text/event-stream` that may carry server requests and notifications first.

use std::io::{BufReader, Read};
use std::time::{Duration, Instant};

use serde_json::Value;
use ureq::Agent;
use ureq::http::Response;

use crate::error::ClientError;
use crate::header::Header;
use crate::jsonrpc::{Incoming, classify};
use crate::options::Options;
use crate::sse::{Event, EventReader};
use mcp_recovery_base::text::{excerpt, excerpt_bytes};

use crate::text::{EXCERPT_CHARS, StderrTail};

/// Longest time `close` spends telling the server that the session ends.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// A Streamable HTTP endpoint and the session held with it.
pub(crate) struct HttpTransport {
    agent: Agent,
    url: String,
    headers: Vec<Header>,
    session_id: Option<String>,
    protocol_version: Option<String>,
    options: Options,
    /// When the whole operation must be over.
    deadline: Instant,
    /// Bytes of bodies and events read so far, against `max_total_bytes`.
    received: u64,
    /// When the request being made must be answered (the earlier of its own limit and
    /// `deadline`).
    request_deadline: Instant,
    closed: bool,
}

enum Body {
    Json(Vec<u8>),
    Events(ureq::Body),
    Empty,
}

impl HttpTransport {
    /// Prepares requests to `url`; nothing is sent yet.
    pub(crate) fn new(
        url: &str,
        headers: Vec<Header>,
        options: &Options,
        deadline: Instant,
    ) -> HttpTransport {
        let agent: Agent = Agent::config_builder()
            .timeout_global(Some(options.timeout))
            // Statuses are answers to interpret, not transport failures.
            .http_status_as_error(false)
            // A redirect would re-send the body and drop credentials; report it instead.
            .max_redirects(0)
            .user_agent(concat!("mcp-recovery-client/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        HttpTransport {
            agent,
            url: url.to_string(),
            headers,
            session_id: None,
            protocol_version: None,
            options: options.clone(),
            deadline,
            received: 0,
            request_deadline: deadline,
            closed: false,
        }
    }

    /// Changes how long each later request may wait.
    pub(crate) fn set_timeout(&mut self, timeout: Duration) {
        self.options.timeout = timeout;
    }

    /// Sends `MCP-Protocol-Version` with every later request (`None`: no such header).
    pub(crate) fn set_protocol_version(&mut self, version: Option<&str>) {
        self.protocol_version = version.map(str::to_string);
    }

    /// Sends a notification (or a reply); the server answers 202 with no body.
    pub(crate) fn send(&mut self, message: &Value, method: &str) -> Result<(), ClientError> {
        self.post(message, method).map(drop)
    }

    /// Sends a request and returns the message that answers `id`.
    pub(crate) fn round_trip(
        &mut self,
        message: &Value,
        id: &Value,
        method: &str,
    ) -> Result<Value, ClientError> {
        match self.post(message, method)? {
            Body::Json(bytes) => self.answer_in_json(&bytes, id, method),
            Body::Events(body) => self.answer_in_events(body, id, method),
            Body::Empty => Err(protocol(
                method,
                "the server answered a request with no body".into(),
            )),
        }
    }

    fn post(&mut self, message: &Value, method: &str) -> Result<Body, ClientError> {
        let now = Instant::now();
        if now >= self.deadline {
            return Err(self.out_of_time(method));
        }
        self.request_deadline = (now + self.options.timeout).min(self.deadline);
        let mut request = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(self.request_deadline.saturating_duration_since(now)))
            .build()
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if let Some(session) = &self.session_id {
            request = request.header("Mcp-Session-Id", session);
        }
        if let Some(version) = &self.protocol_version {
            request = request.header("MCP-Protocol-Version", version);
        }
        for header in &self.headers {
            request = request.header(header.name(), header.value());
        }
        let response = request
            .send(message.to_string())
            .map_err(|e| self.transport(method, e))?;
        self.interpret(response, method)
    }

    fn interpret(
        &mut self,
        response: Response<ureq::Body>,
        method: &str,
    ) -> Result<Body, ClientError> {
        let status = response.status().as_u16();
        let header = |name: &str| header_value(&response, name);
        if let Some(session) = header("mcp-session-id") {
            self.session_id = Some(session);
        }
        let content_type = media_type(&response);
        let location = header("location");
        let body = response.into_body();
        if status == 400 && content_type == "application/json" {
            // 2026-07-28 servers refuse a version or mismatched headers with 400 and a JSON-RPC
            // error (UnsupportedProtocolVersionError, HeaderMismatchError): read it as the answer.
            let bytes = self.read_capped(body, method)?;
            let is_rpc_error = mcp_recovery_model::json::from_slice(&bytes)
                .is_ok_and(|v| v.get("error").is_some_and(Value::is_object));
            if is_rpc_error {
                return Ok(Body::Json(bytes));
            }
            return Err(ClientError::HttpStatus {
                method: method.to_string(),
                status,
                body: excerpt_bytes(&bytes, EXCERPT_CHARS),
            });
        }
        if !(200..300).contains(&status) {
            let mut detail = match location {
                Some(location) => format!("redirected to {}", excerpt(&location, EXCERPT_CHARS)),
                None => self
                    .read_capped(body, method)
                    .map(|b| excerpt_bytes(&b, EXCERPT_CHARS))?,
            };
            if status == 404 && self.session_id.is_some() {
                detail = format!("the session is unknown to the server {detail}")
                    .trim()
                    .to_string();
            }
            return Err(ClientError::HttpStatus {
                method: method.to_string(),
                status,
                body: detail,
            });
        }
        if status == 202 || status == 204 {
            return Ok(Body::Empty);
        }
        match content_type.as_str() {
            "application/json" => Ok(Body::Json(self.read_capped(body, method)?)),
            "text/event-stream" => Ok(Body::Events(body)),
            "" => {
                let bytes = self.read_capped(body, method)?;
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    Ok(Body::Empty)
                } else {
                    Err(protocol(
                        method,
                        "the response has a body but no Content-Type".into(),
                    ))
                }
            }
            other => Err(protocol(
                method,
                format!(
                    "the response's Content-Type is {}, not application/json or text/event-stream",
                    excerpt(other, EXCERPT_CHARS)
                ),
            )),
        }
    }

    fn read_capped(&mut self, body: ureq::Body, method: &str) -> Result<Vec<u8>, ClientError> {
        let limit = self.options.max_message_bytes.min(self.total_left());
        let bytes = mcp_recovery_base::read::read_up_to(body.into_reader(), limit, 0)
            .map_err(|e| self.transport(method, ureq::Error::from(e)))?
            .ok_or_else(|| self.over_limit(method, "the HTTP response body"))?;
        self.received += bytes.len() as u64;
        Ok(bytes)
    }

    /// Bytes the server may still send before `max_total_bytes` is reached.
    fn total_left(&self) -> u64 {
        self.options.max_total_bytes.saturating_sub(self.received)
    }

    /// The size error: the per-message cap, or the total when that is what ran out.
    fn over_limit(&self, method: &str, what: &str) -> ClientError {
        if self.total_left() < self.options.max_message_bytes {
            too_large(
                method,
                "everything the server sent",
                self.options.max_total_bytes,
            )
        } else {
            too_large(method, what, self.options.max_message_bytes)
        }
    }

    /// The error when time ran out: the request's own limit or the whole operation's.
    fn out_of_time(&self, method: &str) -> ClientError {
        if self.request_deadline >= self.deadline {
            ClientError::DeadlineExceeded {
                method: method.to_string(),
                total: self.options.total_timeout,
                stderr: StderrTail::default(),
            }
        } else {
            ClientError::Timeout {
                method: method.to_string(),
                timeout: self.options.timeout,
                stderr: StderrTail::default(),
            }
        }
    }

    fn answer_in_json(
        &mut self,
        bytes: &[u8],
        id: &Value,
        method: &str,
    ) -> Result<Value, ClientError> {
        let message: Value = match crate::jsonrpc::parse(bytes) {
            Some(Ok(message)) => message,
            Some(Err(why)) => return Err(protocol(method, format!("the response body: {why}"))),
            None => {
                let quoted = excerpt_bytes(bytes, EXCERPT_CHARS);
                return Err(protocol(
                    method,
                    format!("the response body is not JSON: `{quoted}`"),
                ));
            }
        };
        let messages = match message {
            Value::Array(batch) => batch,
            single => vec![single],
        };
        for message in messages {
            match classify(message, id) {
                Incoming::Answer(answer) => return Ok(answer),
                Incoming::ServerRequest(reply) => self.send(&reply, method)?,
                Incoming::Ignore => {}
                Incoming::Invalid(why) => {
                    return Err(protocol(
                        method,
                        format!("the response body is not JSON-RPC: {why}"),
                    ));
                }
            }
        }
        Err(protocol(
            method,
            "the JSON response does not answer the request".into(),
        ))
    }

    fn answer_in_events(
        &mut self,
        body: ureq::Body,
        id: &Value,
        method: &str,
    ) -> Result<Value, ClientError> {
        let limit = self.options.max_message_bytes.min(self.total_left());
        let cap = usize::try_from(limit).unwrap_or(usize::MAX);
        // The stream as a whole counts against the total too (comments and noise included).
        let before = self.received;
        let allowed = self.total_left().saturating_add(1);
        let mut events = EventReader::new(BufReader::new(body.into_reader().take(allowed)), cap);
        loop {
            let event = events
                .next_event()
                .map_err(|e| self.transport(method, ureq::Error::from(e)))?;
            let left = events.reader().get_ref().limit();
            self.received = before + (allowed - left);
            let data = match event {
                _ if left == 0 => {
                    return Err(self.over_limit(method, "the response stream"));
                }
                Event::Message(data) => data,
                Event::TooLarge => {
                    return Err(self.over_limit(method, "an event in the response stream"));
                }
                Event::End => {
                    return Err(protocol(
                        method,
                        "the event stream ended before the response".into(),
                    ));
                }
            };
            if data.trim().is_empty() {
                continue;
            }
            let message: Value = match crate::jsonrpc::parse(data.as_bytes()) {
                Some(Ok(message)) => message,
                Some(Err(why)) => return Err(protocol(method, format!("an event's data: {why}"))),
                None => {
                    let quoted = excerpt(&data, EXCERPT_CHARS);
                    return Err(protocol(
                        method,
                        format!("an event's data is not JSON: `{quoted}`"),
                    ));
                }
            };
            match classify(message, id) {
                Incoming::Answer(answer) => return Ok(answer),
                Incoming::ServerRequest(reply) => self.send(&reply, method)?,
                Incoming::Ignore => {}
                Incoming::Invalid(why) => {
                    return Err(protocol(method, format!("an event is not JSON-RPC: {why}")));
                }
            }
        }
    }

    fn transport(&self, method: &str, error: ureq::Error) -> ClientError {
        let timed_out = match &error {
            ureq::Error::Timeout(_) => true,
            ureq::Error::Io(e) => e.kind() == std::io::ErrorKind::TimedOut,
            _ => false,
        };
        if timed_out {
            return self.out_of_time(method);
        }
        ClientError::Http {
            method: method.to_string(),
            detail: error.to_string(),
        }
    }

    /// Ends the session with a DELETE (servers may refuse with 405; either way it is over).
    pub(crate) fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        let Some(session) = self.session_id.take() else {
            return;
        };
        let mut request = self
            .agent
            .delete(&self.url)
            .config()
            .timeout_global(Some(self.options.timeout.min(CLOSE_TIMEOUT)))
            .build()
            .header("Mcp-Session-Id", &session);
        if let Some(version) = &self.protocol_version {
            request = request.header("MCP-Protocol-Version", version);
        }
        for header in &self.headers {
            request = request.header(header.name(), header.value());
        }
        let _ = request.call();
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        self.close();
    }
}

fn protocol(method: &str, detail: String) -> ClientError {
    ClientError::Protocol {
        method: method.to_string(),
        detail,
        stderr: StderrTail::default(),
    }
}

fn too_large(method: &str, what: &str, limit: u64) -> ClientError {
    ClientError::TooLarge {
        method: method.to_string(),
        what: what.to_string(),
        limit,
        stderr: StderrTail::default(),
    }
}

/// The value of a response header, when it is present and visible ASCII.
pub fn header_value<B>(response: &Response<B>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The media type of a response's `Content-Type`, lowercase and without parameters (empty when
/// there is none).
pub fn media_type<B>(response: &Response<B>) -> String {
    header_value(response, "content-type")
        .and_then(|v| v.split(';').next().map(|t| t.trim().to_ascii_lowercase()))
        .unwrap_or_default()
}
