//! A Streamable HTTP server behind the proxy: each request is POSTed by one of a small pool of
//! worker threads, each notification and response in turn (nothing after it is sent before the
//! server has taken it, so the server sees the client's order), and everything the server
//! answers (a JSON body or a `text/event-stream`, requests and notifications before the response
//! included) reaches the session as [`Event::MeteredServer`] lines, as a child's stdout would:
//! while the session holds 16 MiB of them unhandled, the server's answers wait to be read.
//!
//! The `Mcp-Session-Id` the server hands out is sent back with every later request, and
//! `MCP-Protocol-Version` carries the version the peers settled (the `initialize` answer's, or
//! the one a 2026-07-28 request names in its `_meta`). After `notifications/initialized` the
//! proxy opens the GET stream for server-initiated messages, which a server may refuse (405).
//! Closing sends DELETE. A failure of the exchange (a refused connection, a status, a body that
//! is not JSON-RPC, one too large, no answer in time) becomes a JSON-RPC error answer to the
//! request, so the client always gets one.

use std::io::BufReader;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_recovery_base::text::{excerpt, excerpt_bytes};
use mcp_recovery_client::{EXCERPT_CHARS, EventReader, Header, Secrets, StreamEvent, Target};
use serde_json::Value;
use ureq::Agent;

use crate::event::{Budget, Event, SERVER_BYTES};
use crate::note::note;
use crate::wire::{Line, MAX_LINE_BYTES, error_response, is_request, is_response, method};

use reopen::{MAX_FRUITLESS, Reopenings};

mod get_stream;
mod reopen;

/// Messages POSTed at once; later ones wait in the queue.
const WORKERS: usize = 8;
/// Messages waiting for a worker before `send` refuses more.
const QUEUE: usize = 1024;
/// How much longer than the call timeout one exchange may take before it is cut off (the
/// session answers the client at the call timeout itself).
const GRACE: Duration = Duration::from_secs(5);
/// Longest time `close` spends on the DELETE.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);
/// Most times one request's stream is resumed in all.
const MAX_RESUMES: usize = 100;
/// The `_meta` key of a 2026-07-28 request's protocol version.
const VERSION_META: &str = "/params/_meta/io.modelcontextprotocol~1protocolVersion";

/// A Streamable HTTP endpoint a session forwards to.
pub struct HttpUpstream {
    shared: Arc<Shared>,
    outgoing: Option<SyncSender<String>>,
}

impl std::fmt::Debug for HttpUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpUpstream")
            .field("url", &self.shared.shown)
            .finish_non_exhaustive()
    }
}

struct Shared {
    agent: Agent,
    url: String,
    /// The URL without a password, for messages.
    shown: String,
    headers: Vec<Header>,
    /// Header values and a URL password: never shown.
    secrets: Secrets,
    /// How long one exchange may take in all.
    timeout: Duration,
    events: SyncSender<Event>,
    /// The bytes of the server's messages the session has not handled yet are held against it:
    /// past it the server's answers wait to be read.
    budget: Arc<Budget>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    session_id: Option<String>,
    protocol_version: Option<String>,
    stream_opened: bool,
    closed: bool,
}

/// What one POST gave back.
enum Outcome {
    /// Every message was delivered (and the request, if any, answered).
    Done,
    /// The exchange failed: why (redacted where it is told).
    Failed(String),
}

impl HttpUpstream {
    /// Prepares the endpoint `url` with `headers` on every request; each exchange may take
    /// `timeout` (plus a short grace). Nothing is sent yet.
    pub fn new(
        url: &str,
        headers: Vec<Header>,
        timeout: Duration,
        events: SyncSender<Event>,
    ) -> HttpUpstream {
        let target = Target::Http {
            url: url.to_owned(),
            headers: headers.clone(),
        };
        let agent: Agent = Agent::config_builder()
            // Statuses are answers to interpret, not transport failures.
            .http_status_as_error(false)
            // A redirect would re-send the body and the credentials elsewhere.
            .max_redirects(0)
            .user_agent(concat!("mcp-recovery-proxy/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let shared = Arc::new(Shared {
            agent,
            url: url.to_owned(),
            shown: target.to_string(),
            secrets: target.secrets(&mcp_recovery_client::Options::default()),
            headers,
            timeout: timeout + GRACE,
            events,
            budget: Budget::new(SERVER_BYTES),
            state: Mutex::new(State::default()),
        });
        let (outgoing, queue) = sync_channel::<String>(QUEUE);
        let (requests, jobs) = sync_channel::<String>(QUEUE);
        let jobs = Arc::new(Mutex::new(jobs));
        for _ in 0..WORKERS {
            let shared = Arc::clone(&shared);
            let jobs = Arc::clone(&jobs);
            std::thread::spawn(move || worker(&shared, &jobs));
        }
        let dispatching = Arc::clone(&shared);
        std::thread::spawn(move || dispatch(&dispatching, &queue, &requests));
        HttpUpstream {
            shared,
            outgoing: Some(outgoing),
        }
    }

    /// Queues one message for POSTing.
    pub fn send(&mut self, text: &str) -> std::io::Result<()> {
        let Some(outgoing) = &self.outgoing else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the connection to the server is closed",
            ));
        };
        match outgoing.try_send(text.to_owned()) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(std::io::Error::other(format!(
                "more than {QUEUE} messages wait for the server"
            ))),
            Err(TrySendError::Disconnected(_)) => Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the connection to the server is closed",
            )),
        }
    }

    /// Stops sending and ends the server's session with DELETE (within `grace`, at most 2 s).
    pub fn close(&mut self, grace: Duration) {
        self.outgoing = None;
        let session = {
            let mut state = self.shared.lock();
            state.closed = true;
            state.session_id.take()
        };
        let Some(session) = session else {
            return;
        };
        let request = self
            .shared
            .agent
            .delete(&self.shared.url)
            .config()
            .timeout_global(Some(grace.min(CLOSE_TIMEOUT)))
            .build()
            .header("Mcp-Session-Id", &session);
        let request = self.shared.headers.iter().fold(request, |request, header| {
            request.header(header.name(), header.value())
        });
        // The server may refuse with 405; the session is over either way.
        let _ = request.call();
    }
}

impl Drop for HttpUpstream {
    fn drop(&mut self) {
        if self.outgoing.is_some() {
            self.close(Duration::from_millis(500));
        }
    }
}

/// Takes the messages in the order they were sent: a request goes to the workers (its answer
/// may take as long as the call), a notification or a response is POSTed here, and nothing
/// sent after it is POSTed before the server has taken it, so the server sees the client's
/// order (`notifications/initialized` before the proxy's own `tools/list`).
fn dispatch(shared: &Arc<Shared>, queue: &Receiver<String>, requests: &SyncSender<String>) {
    while let Ok(text) = queue.recv() {
        let message: Value = mcp_recovery_model::json::from_str(&text).unwrap_or(Value::Null);
        if is_request(&message) {
            if requests.send(text).is_err() {
                return;
            }
        } else {
            shared.post(&text);
        }
    }
}

fn worker(shared: &Arc<Shared>, queue: &Mutex<Receiver<String>>) {
    loop {
        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(text) = next else {
            return;
        };
        shared.post(&text);
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn note(&self, text: &str) {
        note(&format!("{}: {}", self.shown, self.secrets.redact(text)));
    }

    /// Hands a message to the session; false when the session is gone.
    fn deliver(&self, message: Value, text: String) -> bool {
        let credit = self.budget.acquire(text.len() + 1);
        self.events
            .send(Event::MeteredServer(Line::Message(message, text), credit))
            .is_ok()
    }

    /// Adds the session, version and configured headers to a request.
    fn prepare<B>(
        &self,
        request: ureq::RequestBuilder<B>,
        version: Option<&str>,
    ) -> ureq::RequestBuilder<B> {
        let state = self.lock();
        let mut request = request;
        if let Some(session) = &state.session_id {
            request = request.header("Mcp-Session-Id", session);
        }
        if let Some(version) = version.or(state.protocol_version.as_deref()) {
            request = request.header("MCP-Protocol-Version", version);
        }
        drop(state);
        self.headers.iter().fold(request, |request, header| {
            request.header(header.name(), header.value())
        })
    }

    fn post(self: &Arc<Shared>, text: &str) {
        let message: Value = mcp_recovery_model::json::from_str(text).unwrap_or(Value::Null);
        let request_id = is_request(&message)
            .then(|| message.get("id").cloned())
            .flatten();
        let method = method(&message).unwrap_or_default().to_owned();
        let version = message
            .pointer(VERSION_META)
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(version) = &version {
            self.lock().protocol_version = Some(version.clone());
        }
        let request = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(self.timeout))
            .build()
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        let request = self.prepare(request, version.as_deref());
        let outcome = match request.send(text) {
            Ok(response) => self.answer(response, request_id.as_ref(), &method),
            Err(e) => Outcome::Failed(self.transport(&e)),
        };
        match outcome {
            Outcome::Done => {
                if method == "notifications/initialized" {
                    let shared = Arc::clone(self);
                    std::thread::spawn(move || shared.open_stream());
                }
            }
            Outcome::Failed(reason) => {
                // What the server sent back may quote a header or variable given as a secret.
                let reason = self.secrets.redact(&reason);
                self.note(&format!("{method}: {reason}"));
                if let Some(id) = request_id {
                    let text =
                        format!("mcp-recovery proxy: the server's answer to {method}: {reason}");
                    let answer = error_response(&id, -32000, &text);
                    let line = answer.to_string();
                    self.deliver(answer, line);
                }
            }
        }
    }

    fn transport(&self, error: &ureq::Error) -> String {
        let timed_out = match error {
            ureq::Error::Timeout(_) => true,
            ureq::Error::Io(e) => e.kind() == std::io::ErrorKind::TimedOut,
            _ => false,
        };
        if timed_out {
            format!("no answer within {} s", self.timeout.as_secs())
        } else {
            format!(
                "cannot reach the server: {}",
                self.secrets.redact(&error.to_string())
            )
        }
    }

    /// Reads one POST's response and delivers the messages it carries.
    fn answer(
        &self,
        response: ureq::http::Response<ureq::Body>,
        id: Option<&Value>,
        method: &str,
    ) -> Outcome {
        let status = response.status().as_u16();
        let sent_session = self.lock().session_id.is_some();
        if let Some(session) = mcp_recovery_client::header_value(&response, "mcp-session-id") {
            self.lock().session_id = Some(session);
        }
        let content_type = mcp_recovery_client::media_type(&response);
        let body = response.into_body();
        let mut answered = id.is_none();
        let outcome = match content_type.as_str() {
            "text/event-stream" if (200..300).contains(&status) => {
                self.events_of(body, id, method, &mut answered)
            }
            _ => match read_capped(body) {
                Err(reason) => Outcome::Failed(reason),
                Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => {
                    if (200..300).contains(&status) {
                        Outcome::Done
                    } else {
                        Outcome::Failed(format!("HTTP status {status}"))
                    }
                }
                // A JSON-RPC answer is read whatever the status (2026-07-28 servers refuse a
                // version with 400 and a JSON-RPC error).
                Ok(bytes) => match self.json_of(&bytes, id, method, &mut answered) {
                    Outcome::Failed(_) if !(200..300).contains(&status) => {
                        Outcome::Failed(format!(
                            "HTTP status {status}: `{}`",
                            excerpt_bytes(&bytes, EXCERPT_CHARS)
                        ))
                    }
                    outcome => outcome,
                },
            },
        };
        match outcome {
            Outcome::Done if !answered && (200..300).contains(&status) => {
                Outcome::Failed("the response carries no answer to the request".into())
            }
            // A 404 to a request of a session is the transport's word that the session is over.
            Outcome::Done if !answered && status == 404 && sent_session => {
                Outcome::Failed("HTTP status 404: the server no longer knows this session".into())
            }
            Outcome::Done if !answered => Outcome::Failed(format!("HTTP status {status}")),
            outcome => outcome,
        }
    }

    /// Delivers one message of a response; marks the request answered when it is.
    fn take(
        &self,
        message: Value,
        text: String,
        id: Option<&Value>,
        method: &str,
        answered: &mut bool,
    ) -> Result<(), String> {
        if !message.is_object() {
            return Err(format!("not a JSON-RPC message: {}", quote(&text)));
        }
        if is_response(&message) && id.is_some_and(|id| message.get("id") == Some(id)) {
            *answered = true;
            if method == "initialize"
                && let Some(version) = message
                    .pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
            {
                self.lock().protocol_version = Some(version.to_owned());
            }
        }
        if self.deliver(message, text) {
            Ok(())
        } else {
            Err("the session ended".into())
        }
    }

    fn json_of(
        &self,
        bytes: &[u8],
        id: Option<&Value>,
        method: &str,
        answered: &mut bool,
    ) -> Outcome {
        let Ok(value) = mcp_recovery_model::json::from_slice(bytes) else {
            return Outcome::Failed(format!(
                "the body is not JSON: `{}`",
                excerpt_bytes(bytes, EXCERPT_CHARS)
            ));
        };
        let messages = match value {
            Value::Array(batch) => batch,
            single => vec![single],
        };
        for message in messages {
            let text = message.to_string();
            if let Err(reason) = self.take(message, text, id, method, answered) {
                return Outcome::Failed(reason);
            }
        }
        Outcome::Done
    }

    /// Delivers the events of a response. A stream that ends before the request's answer,
    /// after giving an event id, is resumed as the transport specifies: after the `retry` time
    /// it asked for (at least half a second, doubled after each resumption that brought no new
    /// event), a GET with `Last-Event-ID` continues it, until the answer comes, the exchange's
    /// time is up, [`MAX_FRUITLESS`] resumptions in a row brought nothing new or
    /// [`MAX_RESUMES`] were made.
    fn events_of(
        &self,
        body: ureq::Body,
        id: Option<&Value>,
        method: &str,
        answered: &mut bool,
    ) -> Outcome {
        let deadline = Instant::now() + self.timeout;
        let mut events = EventReader::new(BufReader::new(body.into_reader()), MAX_LINE_BYTES);
        let mut resumed = 0;
        let mut reopenings = Reopenings::default();
        loop {
            let mut fresh = false;
            match self.read_events(&mut events, id, method, answered, &mut fresh) {
                Some(outcome) => return outcome,
                None => {
                    let Some(last) = events.last_event_id().map(str::to_owned) else {
                        return Outcome::Done;
                    };
                    if id.is_none() {
                        return Outcome::Done;
                    }
                    let wait = match reopenings.next(events.retry(), fresh) {
                        Some(wait) if resumed < MAX_RESUMES => wait,
                        _ => {
                            return Outcome::Failed(format!(
                                "the event stream was resumed {resumed} times ({MAX_FRUITLESS} in \
                                 a row without a new event, at most {MAX_RESUMES} in all) and \
                                 no answer came: not resumed again"
                            ));
                        }
                    };
                    if Instant::now() + wait >= deadline {
                        return Outcome::Failed(format!(
                            "the event stream ended after event {} and no answer came in time",
                            quote(&last)
                        ));
                    }
                    std::thread::sleep(wait);
                    resumed += 1;
                    match self.resume(&last, deadline) {
                        Ok(body) => {
                            events = EventReader::new(BufReader::new(body), MAX_LINE_BYTES);
                        }
                        Err(reason) => return Outcome::Failed(reason),
                    }
                }
            }
        }
    }

    /// Reads events until the request is answered (`Some(Done)`), the exchange fails, or the
    /// stream ends (`None`); `fresh` becomes true once an event with data came.
    fn read_events(
        &self,
        events: &mut EventReader<BufReader<ureq::BodyReader<'static>>>,
        id: Option<&Value>,
        method: &str,
        answered: &mut bool,
        fresh: &mut bool,
    ) -> Option<Outcome> {
        loop {
            let data = match events.next_event() {
                Ok(StreamEvent::Message(data)) => data,
                Ok(StreamEvent::TooLarge) => {
                    return Some(Outcome::Failed(format!(
                        "an event larger than {} MiB",
                        MAX_LINE_BYTES / (1024 * 1024)
                    )));
                }
                Ok(StreamEvent::End) => return None,
                Err(e) => return Some(Outcome::Failed(self.transport(&ureq::Error::from(e)))),
            };
            // An event with no data (a priming event) carries only its id.
            if data.trim().is_empty() {
                continue;
            }
            *fresh = true;
            let Ok(message) = mcp_recovery_model::json::from_str(&data) else {
                return Some(Outcome::Failed(format!(
                    "an event is not JSON: {}",
                    quote(&data)
                )));
            };
            if let Err(reason) = self.take(message, data, id, method, answered) {
                return Some(Outcome::Failed(reason));
            }
            // The response ends the request's business; the server may keep the stream open.
            if *answered && id.is_some() {
                return Some(Outcome::Done);
            }
        }
    }
}

fn read_capped(body: ureq::Body) -> Result<Vec<u8>, String> {
    mcp_recovery_base::read::read_up_to(body.into_reader(), MAX_LINE_BYTES as u64, 0)
        .map_err(|e| format!("reading the body failed: {e}"))?
        .ok_or_else(|| format!("a body larger than {} MiB", MAX_LINE_BYTES / (1024 * 1024)))
}

/// The start of a text, quoted for a message.
fn quote(text: &str) -> String {
    format!("`{}`", excerpt(text, EXCERPT_CHARS))
}
