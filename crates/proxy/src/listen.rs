//! The proxy as a Streamable HTTP server (`proxy --listen`): `POST /mcp` carries client
//! messages, `GET /mcp` opens the stream for server-initiated messages, `DELETE /mcp` ends the
//! session.
//!
//! A session is one `Mcp-Session-Id`: a POST without one opens a session (its own upstream:
//! a child process or an HTTP connection, and its own rollback scope in the journal), and every
//! later request must carry the id the response named. Answers to a POST's requests come back
//! on a `text/event-stream` (or a JSON body for a client that accepts only JSON), together with
//! the server's notifications and requests sent while it is open; when no POST stream is open
//! they go to the GET stream, or wait (bounded) for the next stream.
//!
//! Against DNS rebinding every request's `Origin`, when present, must be a loopback origin or
//! one allowed explicitly, and `Host` must name a loopback host unless the listener was allowed
//! to bind another address; anything else is answered 403. Bounded: connections (beyond the cap
//! a connection is answered 503 with `Retry-After`), sessions, handler threads, request body
//! size, idle sessions and connections, and every wait of a stream.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tiny_http::{Header as HttpHeader, Request, Response, StatusCode};

use crate::session::{Event, Session, Settings, SharedJournal};
use crate::wire::{Line, Shape, id_key, is_request, is_response, method, shape};
use crate::{EVENT_BUFFER, ProxyError, UpstreamSpec, new_session_id};

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

/// The bounds of a listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Sessions open at once; beyond it the least recently used one with nothing pending is
    /// closed, and a new one is refused with 503 only when none is.
    pub max_sessions: usize,
    /// Largest request body; a larger one is refused with 413.
    pub max_body_bytes: usize,
    /// A session with no request and no open stream for this long is closed.
    pub idle: Duration,
    /// Threads answering requests (each open stream holds one); when all are busy, requests
    /// wait for one.
    pub threads: usize,
    /// How long a connection may take to send a request, or to take what is written to it,
    /// before it is dropped (so a slow or stalled peer cannot hold a thread); also how long a
    /// connection may stay idle between requests.
    pub io_timeout: Duration,
    /// Connections open at once; one beyond it is answered 503 with `Retry-After` and closed.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_sessions: 16,
            max_body_bytes: 8 * 1024 * 1024,
            idle: Duration::from_secs(600),
            threads: 40,
            io_timeout: Duration::from_secs(30),
            max_connections: 64,
        }
    }
}

/// Where and for whom the proxy listens.
#[derive(Debug, Clone)]
pub struct Listener {
    /// The address to bind (port 0 picks a free one).
    pub address: SocketAddr,
    /// Allow an address other than loopback (anyone who can reach it can use the server).
    pub allow_remote: bool,
    /// Origins accepted besides loopback ones, as `scheme://host[:port]`.
    pub allowed_origins: Vec<String>,
    /// The bounds.
    pub limits: Limits,
}

/// The one protocol revision with JSON-RPC batches. A POST without `MCP-Protocol-Version` is
/// taken to be of it, as the transport specifies for a request without the header.
const BATCH_REVISION: &str = "2025-03-26";

/// Events kept for clients resuming a stream with `Last-Event-ID`, and their most bytes.
const RESUMABLE_EVENTS: usize = 1024;
const RESUMABLE_BYTES: usize = 4 * 1024 * 1024;
/// Streams whose unanswered requests are kept for a resuming client.
const PARKED_STREAMS: usize = 64;
/// The reconnection time a stream's priming event asks for, in milliseconds.
const RETRY_MS: u64 = 1000;
/// The first revision whose clients are sent priming events (an id with empty data).
const PRIMING_REVISION: &str = "2025-11-25";

/// Messages waiting for a stream before the oldest are dropped.
const BACKLOG: usize = 1024;
/// Messages queued for one stream before the session's writes to it are dropped.
const STREAM_BUFFER: usize = 256;
/// How often an open stream sends a comment, so a client that went away is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Serves until the process ends; `ready` gets the bound address first.
pub fn serve(
    listener: &Listener,
    settings: &Settings,
    journal: Option<SharedJournal>,
    upstream: &UpstreamSpec,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ProxyError> {
    let refuse = |reason: String| ProxyError::Listen {
        address: listener.address.to_string(),
        reason,
    };
    if !listener.address.ip().is_loopback() && !listener.allow_remote {
        return Err(refuse(
            "not a loopback address; pass --allow-remote to listen on it (anyone who can reach \
             it can then call the server's tools)"
                .into(),
        ));
    }
    let socket =
        std::net::TcpListener::bind(listener.address).map_err(|e| refuse(e.to_string()))?;
    let bound = socket.local_addr().map_err(|e| refuse(e.to_string()))?;
    let server = http_server(socket, listener.limits).map_err(|e| refuse(e.to_string()))?;
    let hub = Arc::new(Hub {
        listener: listener.clone(),
        settings: settings.clone(),
        journal,
        upstream: upstream.clone(),
        sessions: Mutex::new(HashMap::new()),
        opening: Mutex::new(()),
    });
    ready(bound);
    let server = Arc::new(server);
    for _ in 0..listener.limits.threads.max(1) {
        let server = Arc::clone(&server);
        let hub = Arc::clone(&hub);
        std::thread::spawn(move || {
            while let Ok(request) = server.recv() {
                hub.handle(request);
            }
        });
    }
    loop {
        std::thread::sleep(Duration::from_secs(1));
        hub.close_idle();
    }
}

/// Everything the handler threads share.
struct Hub {
    listener: Listener,
    settings: Settings,
    journal: Option<SharedJournal>,
    upstream: UpstreamSpec,
    sessions: Mutex<HashMap<String, Arc<Downstream>>>,
    /// Held while the sessionless session is found or opened.
    opening: Mutex<()>,
}

/// The key of the session shared by clients without `Mcp-Session-Id` (never a real id, which
/// is 32 hex digits).
const SESSIONLESS: &str = "";

/// One session's client side: where its messages go in and its answers come out.
struct Downstream {
    /// The session id in the journal (not the `Mcp-Session-Id`, which acts as a credential).
    journal_id: String,
    events: SyncSender<Event>,
    routes: Mutex<Routes>,
    last_used: Mutex<Instant>,
    ended: AtomicBool,
}

#[derive(Default)]
struct Routes {
    /// Request id → the stream of the POST that carried it (its number, 0 for a JSON answer).
    waiting: HashMap<String, (u64, SyncSender<String>)>,
    /// Open streams for everything else, the newest POST first, then GET.
    streams: Vec<(u64, SyncSender<String>)>,
    backlog: VecDeque<String>,
    next_stream: u64,
    get_open: bool,
    /// The number of the latest GET stream.
    get_stream: u64,
    /// The events last sent on the streams, for a client resuming one (bounded).
    sent: VecDeque<Sent>,
    sent_bytes: usize,
    /// The number of the latest event sent.
    last_event: u64,
    /// A stream whose connection went away → its requests then still unanswered, for a client
    /// resuming it (bounded).
    parked: HashMap<u64, HashSet<String>>,
}

/// One event sent on a stream.
struct Sent {
    stream: u64,
    event: u64,
    text: String,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn note(text: &str) {
    crate::session::note(text);
}

fn header(request: &Request, name: &'static str) -> Option<String> {
    request
        .headers()
        .iter()
        .find(|h| h.field.equiv(name))
        .map(|h| h.value.as_str().to_owned())
}

type Body = Response<std::io::Cursor<Vec<u8>>>;

/// Adds a header; names and values here are constants or hex ids, so none is ever refused.
fn add<R: Read>(response: Response<R>, name: &str, value: &str) -> Response<R> {
    match HttpHeader::from_bytes(name, value) {
        Ok(header) => response.with_header(header),
        Err(()) => response,
    }
}

fn plain(status: u16, text: &str) -> Body {
    let response = Response::from_string(text).with_status_code(StatusCode(status));
    add(response, "Content-Type", "text/plain; charset=utf-8")
}

fn json_response(status: u16, body: &Value) -> Body {
    let response = Response::from_string(body.to_string()).with_status_code(StatusCode(status));
    add(response, "Content-Type", "application/json")
}

/// Answers `request` with `body` as a `text/event-stream`, each event sent (and flushed) as it
/// is written, the head at once: the HTTP server's own writer would hold events back until 8 KiB
/// had gathered, so an answer the client must give mid-call would never be asked for in time.
fn event_stream(request: Request, mut body: Stream, session: Option<&str>) {
    // Priming events go to clients of the revisions that define them.
    let prime = header(&request, "MCP-Protocol-Version")
        .is_some_and(|version| version.trim() >= PRIMING_REVISION);
    let version = request.http_version().clone();
    let close = version < tiny_http::HTTPVersion(1, 1)
        || header(&request, "Connection")
            .is_some_and(|value| value.to_ascii_lowercase().contains("close"));
    // HTTP/1.0 has no chunks: the body ends when the connection does.
    let chunked = version >= tiny_http::HTTPVersion(1, 1);
    let mut writer = request.into_writer();
    let mut head = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n",
    );
    if let Some(id) = session {
        head.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    head.push_str(if chunked {
        "Transfer-Encoding: chunked\r\n"
    } else {
        "Connection: close\r\n"
    });
    if close && chunked {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let send = |writer: &mut dyn Write, bytes: &[u8]| -> std::io::Result<()> {
        if chunked {
            write!(writer, "{:x}\r\n", bytes.len())?;
            writer.write_all(bytes)?;
            writer.write_all(b"\r\n")?;
        } else {
            writer.write_all(bytes)?;
        }
        writer.flush()
    };
    if writer
        .write_all(head.as_bytes())
        .and_then(|()| writer.flush())
        .is_err()
    {
        return;
    }
    if prime && send(&mut *writer, &body.priming()).is_err() {
        return;
    }
    while let Some(event) = body.next_event() {
        // A client that went away ends the stream.
        if send(&mut *writer, &event).is_err() {
            return;
        }
    }
    if chunked {
        let _ = writer.write_all(b"0\r\n\r\n").and_then(|()| writer.flush());
    }
}

/// A JSON-RPC error with no id, for a request the proxy refuses as a whole.
fn rpc_error(status: u16, code: i64, message: &str) -> Body {
    json_response(
        status,
        &json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}),
    )
}

fn answer(request: Request, response: Response<impl Read>) {
    // A client that went away needs no answer.
    let _ = request.respond(response);
}

impl Hub {
    fn handle(self: &Arc<Hub>, mut request: Request) {
        let path = request
            .url()
            .split('?')
            .next()
            .unwrap_or_default()
            .to_owned();
        if let Some(origin) = header(&request, "Origin")
            && !self.origin_allowed(&origin)
        {
            note(&format!("refused a request from origin {origin}"));
            return answer(request, plain(403, "origin not allowed"));
        }
        if let Some(host) = header(&request, "Host")
            && !self.listener.allow_remote
            && !is_loopback_host(&host)
        {
            note(&format!("refused a request for host {host}"));
            return answer(request, plain(403, "host not allowed"));
        }
        if let Some(board) = &self.settings.approvals
            && path.starts_with("/approvals")
        {
            let method = request.method().as_str().to_ascii_uppercase();
            let headers = crate::slack::SlackHeaders::of(&request);
            let reply = crate::quorum::read_capped(&mut request)
                .and_then(|body| board.route(&method, &path, &body, &headers));
            return match reply {
                Some((status, value)) => answer(request, crate::quorum::json_body(status, &value)),
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

    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim().trim_end_matches('/');
        if self
            .listener
            .allowed_origins
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

    fn find(&self, id: &str) -> Option<Arc<Downstream>> {
        let found = lock(&self.sessions).get(id).cloned();
        if let Some(found) = &found {
            *lock(&found.last_used) = Instant::now();
        }
        found
    }

    fn post(self: &Arc<Hub>, request: Request, session: Option<String>, body: &[u8]) {
        let Ok(value) = mcp_recovery_model::json::from_slice(body) else {
            return answer(
                request,
                rpc_error(400, -32700, "parse error: the body is not JSON"),
            );
        };
        let messages = match value {
            Value::Array(batch) if batch.is_empty() => {
                return answer(request, rpc_error(400, -32600, "an empty batch"));
            }
            Value::Array(batch) => {
                if let Some(version) = header(&request, "MCP-Protocol-Version")
                    .filter(|version| version.trim() != BATCH_REVISION)
                {
                    note(&format!(
                        "refused a batch under protocol {}: batches exist only in {BATCH_REVISION}",
                        crate::escape(&version)
                    ));
                    return answer(
                        request,
                        rpc_error(
                            400,
                            -32600,
                            &format!(
                                "a JSON-RPC batch is not allowed: MCP-Protocol-Version names a \
                                 revision without batches (only {BATCH_REVISION} has them)"
                            ),
                        ),
                    );
                }
                batch
            }
            single => vec![single],
        };
        if messages.iter().any(|m| !m.is_object()) {
            return answer(request, rpc_error(400, -32600, "not a JSON-RPC message"));
        }
        // What the session would refuse with id null (an id that is null, a fraction, an
        // object or a boolean) is refused here, in this POST's own answer.
        if let Some(why) = messages.iter().find_map(|m| match shape(m) {
            Shape::Invalid(why) => Some(why),
            _ => None,
        }) {
            note(&format!("refused an invalid message: {why}"));
            let message = format!("invalid request: {why}; nothing in this POST was forwarded");
            return answer(request, rpc_error(400, -32600, &message));
        }
        let (downstream, created) = match session {
            Some(id) => match self.find(&id) {
                Some(downstream) => (downstream, None),
                None => {
                    return answer(
                        request,
                        rpc_error(404, -32001, "unknown or ended session; start a new one"),
                    );
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
        let ids: Vec<String> = messages
            .iter()
            .filter(|m| is_request(m))
            .filter_map(id_key)
            .collect();
        let wants_stream = header(&request, "Accept")
            .is_some_and(|accept| accept.to_ascii_lowercase().contains("text/event-stream"));
        let (sender, receiver) = sync_channel(STREAM_BUFFER);
        let stream = if ids.is_empty() {
            None
        } else {
            match downstream.expect(&ids, &sender, wants_stream) {
                Ok(stream) => stream,
                Err(response) => return answer(request, response),
            }
        };
        for message in messages {
            let text = message.to_string();
            if downstream
                .events
                .try_send(Event::Client(Line::Message(message, text)))
                .is_err()
            {
                downstream.forget(&ids, stream);
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
            return event_stream(request, body, created.as_deref());
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

    /// How long a stream waits for the next message: a call, its approval and a rollback
    /// after it are each bounded by the policy, so this is too.
    fn patience(&self) -> Duration {
        let policy = &self.settings.policy;
        policy.call_timeout() * 3 + policy.approval_timeout() * 2 + Duration::from_secs(30)
    }

    fn get(self: &Arc<Hub>, request: Request, session: Option<String>) {
        let id = session.unwrap_or_else(|| SESSIONLESS.to_owned());
        let Some(downstream) = self.find(&id) else {
            return answer(request, plain(404, "unknown or missing Mcp-Session-Id"));
        };
        if let Some(last) = header(&request, "Last-Event-ID") {
            return match downstream.resume(&last, self.patience()) {
                Some(body) => event_stream(request, body, None),
                None => answer(
                    request,
                    plain(404, "no stream of this session has that Last-Event-ID"),
                ),
            };
        }
        let (sender, receiver) = sync_channel(STREAM_BUFFER);
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
        event_stream(request, body, None);
    }

    fn delete(&self, request: Request, session: Option<String>) {
        let Some(id) = session else {
            return answer(request, plain(400, "missing Mcp-Session-Id"));
        };
        let Some(downstream) = lock(&self.sessions).remove(&id) else {
            return answer(request, plain(404, "unknown session"));
        };
        downstream.end();
        answer(request, Response::empty(StatusCode(200)));
    }

    /// The session of the clients that send no `Mcp-Session-Id`, opened on first use.
    fn sessionless(self: &Arc<Hub>) -> Result<Arc<Downstream>, Body> {
        let _turn = lock(&self.opening);
        if let Some(found) = self.find(SESSIONLESS) {
            return Ok(found);
        }
        self.open(Some(SESSIONLESS.to_owned()))
            .map(|(_, downstream)| downstream)
    }

    /// Opens a session under `key` (a fresh random id when `None`): its upstream and the
    /// thread that runs it.
    fn open(self: &Arc<Hub>, key: Option<String>) -> Result<(String, Arc<Downstream>), Body> {
        let failed = |e: ProxyError| {
            note(&e.to_string());
            rpc_error(502, -32000, &format!("mcp-recovery proxy: {e}"))
        };
        let (id, journal_id) = match (key.map_or_else(new_session_id, Ok), new_session_id()) {
            (Ok(id), Ok(journal_id)) => (id, journal_id),
            (Err(e), _) | (_, Err(e)) => return Err(failed(e)),
        };
        self.make_room()?;
        let (sender, events) = sync_channel(EVENT_BUFFER);
        let upstream = self
            .upstream
            .start(
                self.settings.policy.call_timeout(),
                &self.settings.secrets,
                sender.clone(),
            )
            .map_err(failed)?;
        let downstream = Arc::new(Downstream {
            journal_id: journal_id.clone(),
            events: sender,
            routes: Mutex::new(Routes::default()),
            last_used: Mutex::new(Instant::now()),
            ended: AtomicBool::new(false),
        });
        let mut settings = self.settings.clone();
        settings.session = journal_id.clone();
        let writer = Writer {
            downstream: Arc::clone(&downstream),
            line: Vec::new(),
        };
        let session = Session::new(settings, self.journal.clone(), events, upstream, writer);
        lock(&self.sessions).insert(id.clone(), Arc::clone(&downstream));
        note(&format!("session {journal_id} opened"));
        let hub = Arc::clone(self);
        let key = id.clone();
        let running = Arc::clone(&downstream);
        std::thread::spawn(move || {
            let end = session.run();
            running.ended.store(true, Ordering::SeqCst);
            running.close_streams();
            let mut sessions = lock(&hub.sessions);
            if sessions.get(&key).is_some_and(|d| Arc::ptr_eq(d, &running)) {
                sessions.remove(&key);
            }
            drop(sessions);
            match end {
                Ok(end) => note(&format!("session {} ended: {end:?}", running.journal_id)),
                Err(e) => note(&format!("session {} stopped: {e}", running.journal_id)),
            }
        });
        Ok((id, downstream))
    }

    /// At the session cap, closes the least recently used session with nothing pending (no
    /// request waiting for its answer, no POST stream open), so clients that never send DELETE do
    /// not lock new ones out; refuses (503) only when every session is busy.
    fn make_room(&self) -> Result<(), Body> {
        let mut sessions = lock(&self.sessions);
        if sessions.len() < self.listener.limits.max_sessions {
            return Ok(());
        }
        let oldest = sessions
            .iter()
            .filter(|(_, d)| d.at_rest())
            .min_by_key(|(_, d)| *lock(&d.last_used))
            .map(|(id, _)| id.clone());
        let Some(downstream) = oldest.and_then(|id| sessions.remove(&id)) else {
            return Err(rpc_error(
                503,
                -32000,
                &format!(
                    "mcp-recovery proxy: {} sessions are open and busy, the most allowed",
                    sessions.len()
                ),
            ));
        };
        drop(sessions);
        note(&format!(
            "session {} closed to make room: {} sessions were open, the most allowed, and it \
             was the least recently used with nothing pending",
            downstream.journal_id, self.listener.limits.max_sessions
        ));
        downstream.end();
        Ok(())
    }

    /// Closes the sessions idle for longer than the limit.
    fn close_idle(&self) {
        let now = Instant::now();
        let idle = self.listener.limits.idle;
        let mut sessions = lock(&self.sessions);
        let stale: Vec<String> = sessions
            .iter()
            .filter(|(_, d)| {
                let routes = lock(&d.routes);
                routes.streams.is_empty()
                    && routes.waiting.is_empty()
                    && now.duration_since(*lock(&d.last_used)) > idle
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in stale {
            if let Some(downstream) = sessions.remove(&id) {
                note(&format!("session {} idle: closed", downstream.journal_id));
                downstream.end();
            }
        }
    }
}

impl Routes {
    /// Registers a stream for messages that answer no request; hands it the backlog.
    fn add_stream(&mut self, sender: SyncSender<String>, front: bool) -> u64 {
        self.next_stream += 1;
        let number = self.next_stream;
        while let Some(text) = self.backlog.pop_front() {
            if let Err(TrySendError::Full(text)) = sender.try_send(text) {
                self.backlog.push_front(text);
                break;
            }
        }
        if front {
            self.streams.insert(0, (number, sender));
        } else {
            self.streams.push((number, sender));
        }
        number
    }

    /// A message for whichever stream takes it, else the backlog (the oldest dropped).
    fn route(&mut self, text: String) {
        let mut text = text;
        for (_, stream) in &self.streams {
            match stream.try_send(text) {
                Ok(()) => return,
                Err(TrySendError::Full(back) | TrySendError::Disconnected(back)) => text = back,
            }
        }
        if self.backlog.len() >= BACKLOG {
            self.backlog.pop_front();
            note("a server message with no open stream to take it was dropped");
        }
        self.backlog.push_back(text);
    }
}

impl Downstream {
    /// Registers the requests of a POST; with `stream`, the POST also takes other messages.
    fn expect(
        &self,
        ids: &[String],
        sender: &SyncSender<String>,
        stream: bool,
    ) -> Result<Option<u64>, Body> {
        let mut routes = lock(&self.routes);
        let unique: HashSet<&String> = ids.iter().collect();
        if unique.len() < ids.len() || ids.iter().any(|id| routes.waiting.contains_key(id)) {
            return Err(rpc_error(
                409,
                -32600,
                "a request id is used twice while pending",
            ));
        }
        let number = stream.then(|| routes.add_stream(sender.clone(), true));
        for id in ids {
            routes
                .waiting
                .insert(id.clone(), (number.unwrap_or(0), sender.clone()));
        }
        Ok(number)
    }

    /// Unregisters a POST's requests and its stream.
    fn forget(&self, ids: &[String], stream: Option<u64>) {
        let mut routes = lock(&self.routes);
        for id in ids {
            routes.waiting.remove(id);
        }
        if let Some(number) = stream {
            routes.streams.retain(|(n, _)| *n != number);
        }
    }

    /// Records an event sent on stream `number`; its number.
    fn sent(&self, number: u64, text: &str) -> u64 {
        let mut routes = lock(&self.routes);
        routes.last_event += 1;
        let event = routes.last_event;
        routes.sent_bytes += text.len();
        routes.sent.push_back(Sent {
            stream: number,
            event,
            text: text.to_owned(),
        });
        while routes.sent.len() > RESUMABLE_EVENTS || routes.sent_bytes > RESUMABLE_BYTES {
            match routes.sent.pop_front() {
                Some(old) => routes.sent_bytes -= old.text.len(),
                None => break,
            }
        }
        event
    }

    /// A stream continuing the one whose event `last` (`STREAM-EVENT`, as this proxy numbers
    /// them) the client saw last: the events after it again, then what the stream still owes
    /// (the answers to its requests, or for a GET stream everything until the session ends).
    /// `None` when no such stream is known.
    fn resume(self: &Arc<Downstream>, last: &str, patience: Duration) -> Option<Stream> {
        let (stream, event) = last.trim().split_once('-')?;
        let (stream, event): (u64, u64) = (stream.parse().ok()?, event.parse().ok()?);
        let (sender, receiver) = sync_channel(STREAM_BUFFER);
        let mut routes = lock(&self.routes);
        if stream == 0 || stream > routes.next_stream || event > routes.last_event {
            return None;
        }
        let replay: VecDeque<String> = routes
            .sent
            .iter()
            .filter(|sent| sent.stream == stream && sent.event > event)
            .map(|sent| sent.text.clone())
            .collect();
        let listening = stream == routes.get_stream;
        let standalone = listening && !routes.get_open;
        if standalone {
            routes.get_open = true;
        }
        let number = routes.add_stream(sender.clone(), !listening);
        if listening {
            routes.get_stream = number;
        }
        // The requests it owes: those parked when its connection went away, and those whose
        // answers would still go to it.
        let mut owed = routes.parked.remove(&stream).unwrap_or_default();
        for (key, waiting) in &mut routes.waiting {
            if waiting.0 == stream {
                *waiting = (number, sender.clone());
                owed.insert(key.clone());
            }
        }
        for key in &owed {
            routes.waiting.insert(key.clone(), (number, sender.clone()));
        }
        drop(routes);
        Some(Stream {
            downstream: Arc::clone(self),
            receiver,
            number: Some(number),
            remaining: (!listening).then_some(owed),
            standalone,
            replay,
            patience: if listening { Duration::MAX } else { patience },
            last: Instant::now(),
        })
    }

    /// No request of the session waits for its answer and no POST stream of it is open (its
    /// GET stream only listens, and a client that went away leaves it open until a keep-alive
    /// finds out).
    fn at_rest(&self) -> bool {
        let routes = lock(&self.routes);
        routes.waiting.is_empty() && routes.streams.len() <= usize::from(routes.get_open)
    }

    /// Asks the session to finish (it answers what is pending, then closes its upstream).
    fn end(&self) {
        let _ = self.events.try_send(Event::Client(Line::Closed(None)));
    }

    /// Drops every stream's sender, so open streams end.
    fn close_streams(&self) {
        let mut routes = lock(&self.routes);
        routes.waiting.clear();
        routes.streams.clear();
    }
}

/// The session's output: each line is routed to the stream waiting for it.
struct Writer {
    downstream: Arc<Downstream>,
    line: Vec<u8>,
}

impl Write for Writer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.downstream.ended.load(Ordering::SeqCst) {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        self.line.extend_from_slice(bytes);
        while let Some(end) = self.line.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.line.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line).trim_end().to_owned();
            self.send(text);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Writer {
    fn send(&self, text: String) {
        let message: Value = mcp_recovery_model::json::from_str(&text).unwrap_or(Value::Null);
        let mut routes = lock(&self.downstream.routes);
        let key = is_response(&message).then(|| id_key(&message)).flatten();
        if let Some(key) = &key {
            // An answer no stream waits for is no longer owed to a resuming client.
            for parked in routes.parked.values_mut() {
                parked.remove(key);
            }
        }
        if let Some((_, sender)) = key.and_then(|key| routes.waiting.remove(&key)) {
            match sender.try_send(text) {
                Ok(()) => return,
                Err(TrySendError::Full(text) | TrySendError::Disconnected(text)) => {
                    note(
                        "an answer whose request's stream is closed or full went to another stream",
                    );
                    routes.route(text);
                    return;
                }
            }
        }
        routes.route(text);
    }
}

/// A response body that streams a session's messages as server-sent events.
struct Stream {
    downstream: Arc<Downstream>,
    receiver: Receiver<String>,
    /// The stream's number among the session's streams (`None`: it takes only answers).
    number: Option<u64>,
    /// The requests still unanswered (`None`: a GET stream, open until the session ends).
    remaining: Option<HashSet<String>>,
    /// The session's GET stream (its end lets another open).
    standalone: bool,
    /// Events sent before on the stream this one resumes, to send again first (with ids of
    /// this stream).
    replay: VecDeque<String>,
    /// Longest wait for the next message.
    patience: Duration,
    /// When the last message came (or the stream opened).
    last: Instant,
}

impl Stream {
    /// The next message, or `None` when the stream is over.
    fn next_message(&mut self) -> Option<Result<String, ()>> {
        if let Some(text) = self.replay.pop_front() {
            self.answered(&text);
            return Some(Ok(text));
        }
        if self.remaining.as_ref().is_some_and(HashSet::is_empty) {
            return None;
        }
        let waited = self.last.elapsed();
        if waited >= self.patience {
            return None;
        }
        match self
            .receiver
            .recv_timeout((self.patience - waited).min(KEEP_ALIVE))
        {
            Ok(text) => {
                self.last = Instant::now();
                self.answered(&text);
                Some(Ok(text))
            }
            Err(RecvTimeoutError::Timeout) => Some(Err(())),
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Counts `text` off the requests still unanswered when it answers one.
    fn answered(&mut self, text: &str) {
        if let Some(remaining) = self.remaining.as_mut()
            && let Ok(message) = mcp_recovery_model::json::from_str(text)
            && is_response(&message)
            && let Some(key) = id_key(&message)
        {
            remaining.remove(&key);
        }
    }

    /// Waits for every answer (for a client that accepts only JSON).
    fn collect(mut self) -> Vec<Value> {
        let mut answers = Vec::new();
        while let Some(next) = self.next_message() {
            if let Ok(text) = next
                && let Ok(value) = mcp_recovery_model::json::from_str(&text)
            {
                answers.push(value);
            }
        }
        answers
    }
}

impl Stream {
    /// The next event's bytes (a keep-alive comment when none came in time), or `None` when the
    /// stream is over.
    fn next_event(&mut self) -> Option<Vec<u8>> {
        match self.next_message()? {
            Ok(text) => {
                let stream = self.number.unwrap_or(0);
                let event = self.downstream.sent(stream, &text);
                let mut event =
                    format!("id: {stream}-{event}\nevent: message\ndata: ").into_bytes();
                event.extend_from_slice(text.as_bytes());
                event.extend_from_slice(b"\n\n");
                Some(event)
            }
            Err(()) => Some(b": keep-alive\n\n".to_vec()),
        }
    }

    /// The priming event: an id for the stream's start and the reconnection time.
    fn priming(&self) -> Vec<u8> {
        let event = lock(&self.downstream.routes).last_event;
        let stream = self.number.unwrap_or(0);
        format!("id: {stream}-{event}\nretry: {RETRY_MS}\ndata: \n\n").into_bytes()
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let mut routes = lock(&self.downstream.routes);
        if let Some(number) = self.number {
            routes.streams.retain(|(n, _)| *n != number);
        }
        if self.standalone {
            routes.get_open = false;
        }
        if let (Some(remaining), Some(number)) = (&self.remaining, self.number) {
            // The requests still waiting on this stream are kept for a client resuming it.
            let mine: HashSet<String> = remaining
                .iter()
                .filter(|key| routes.waiting.get(*key).is_some_and(|(n, _)| *n == number))
                .cloned()
                .collect();
            for key in &mine {
                routes.waiting.remove(key);
            }
            if !mine.is_empty() {
                if routes.parked.len() >= PARKED_STREAMS
                    && let Some(oldest) = routes.parked.keys().min().copied()
                {
                    routes.parked.remove(&oldest);
                }
                routes.parked.insert(number, mine);
            }
        } else if let Some(remaining) = &self.remaining {
            for key in remaining {
                routes.waiting.remove(key);
            }
        }
        // What reached this stream after its last answer goes to another.
        while let Ok(text) = self.receiver.try_recv() {
            routes.route(text);
        }
    }
}

/// The HTTP server behind the connection gate ([`crate::gate`]), which accepts from `public`.
#[cfg(unix)]
fn http_server(
    public: std::net::TcpListener,
    limits: Limits,
) -> std::io::Result<tiny_http::Server> {
    let dir = crate::gate::SocketDir::new()?;
    let path = dir.socket();
    let internal = std::os::unix::net::UnixListener::bind(&path)?;
    let server = tiny_http::Server::from_listener(internal, None).map_err(std::io::Error::other)?;
    std::thread::spawn(move || {
        crate::gate::run(&public, &path, limits);
        drop(dir);
    });
    Ok(server)
}

/// Without Unix sockets the HTTP server accepts from `public` itself, with no connection cap.
#[cfg(not(unix))]
fn http_server(
    public: std::net::TcpListener,
    _limits: Limits,
) -> std::io::Result<tiny_http::Server> {
    tiny_http::Server::from_listener(public, None).map_err(std::io::Error::other)
}

/// Reads a request body of at most `cap` bytes.
fn read_body(request: &mut Request, cap: usize) -> Result<Vec<u8>, Body> {
    let too_large = || {
        plain(
            413,
            &format!("the request body is larger than {} bytes", cap),
        )
    };
    if request.body_length().is_some_and(|length| length > cap) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    request
        .as_reader()
        .take(cap as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| plain(400, &format!("reading the request body failed: {e}")))?;
    if body.len() > cap {
        return Err(too_large());
    }
    Ok(body)
}

/// `localhost`, `127.0.0.1`, `[::1]` and the like, with or without a port.
fn is_loopback_host(host: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, ErrorKind};
    use std::net::TcpStream;

    use super::*;
    use crate::{Approver, Launch, Overlays, Policy};

    /// A listener in front of a command that is never started (no session is opened).
    fn listening(limits: Limits) -> SocketAddr {
        let listener = Listener {
            address: "127.0.0.1:0".parse().unwrap(),
            allow_remote: false,
            allowed_origins: Vec::new(),
            limits,
        };
        let settings = Settings {
            policy: Policy::default(),
            approver: Approver::Command("exit 1".into()),
            session: String::new(),
            upstream: String::new(),
            overlays: Overlays::default(),
            secrets: Default::default(),
            rollback_window: crate::DEFAULT_ROLLBACK_WINDOW,
            approvals: None,
        };
        let upstream = UpstreamSpec::Stdio(Launch {
            program: "/nonexistent".into(),
            ..Launch::default()
        });
        let (sender, bound) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = serve(&listener, &settings, None, &upstream, |address| {
                let _ = sender.send(address);
            });
        });
        bound.recv_timeout(Duration::from_secs(30)).unwrap()
    }

    /// A connection to `address` whose reads give up after 30 s.
    fn connect(address: SocketAddr) -> TcpStream {
        let stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream
    }

    #[test]
    fn a_stalled_request_is_dropped_after_the_io_timeout() {
        let address = listening(Limits {
            io_timeout: Duration::from_millis(300),
            ..Limits::default()
        });
        let mut stream = connect(address);
        // Half a request head, then nothing: the proxy gives up on it.
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .unwrap();
        let started = Instant::now();
        let mut answer = String::new();
        let read = BufReader::new(stream).read_line(&mut answer);
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(
            read.is_ok_and(|n| n == 0) || answer.contains("408"),
            "{answer:?}"
        );
    }

    /// A body that stops coming, whether counted or chunked, is the client's stall too: the
    /// connection is dropped and its place freed.
    #[cfg(unix)]
    #[test]
    fn a_stalled_request_body_is_dropped_after_the_io_timeout() {
        let address = listening(Limits {
            io_timeout: Duration::from_millis(300),
            max_connections: 1,
            ..Limits::default()
        });
        let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
        for stalled in [
            format!("{head}Content-Length: 40\r\n\r\n{{\"jsonrpc\""),
            format!("{head}Transfer-Encoding: chunked\r\n\r\n"),
            format!("{head}Transfer-Encoding: chunked\r\n\r\n1"),
            format!("{head}Transfer-Encoding: chunked\r\n\r\n10\r\n{{\"json"),
            format!("{head}Transfer-Encoding: chunked\r\n\r\n2\r\n{{}}"),
            format!("{head}Transfer-Encoding: chunked\r\n\r\n2\r\n{{}}\r\n0\r\n"),
        ] {
            let started = Instant::now();
            // The one place is free again once the relay has seen the previous close.
            let answer = loop {
                assert!(started.elapsed() < Duration::from_secs(20), "{stalled:?}");
                let mut stream = connect(address);
                stream.write_all(stalled.as_bytes()).unwrap();
                let mut answer = String::new();
                let read = BufReader::new(stream).read_to_string(&mut answer);
                assert!(read.is_ok(), "{stalled:?}: {read:?}");
                if !answer.starts_with("HTTP/1.1 503") {
                    break answer;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            assert!(started.elapsed() < Duration::from_secs(20), "{stalled:?}");
            assert!(
                answer.is_empty() || answer.contains("408"),
                "{stalled:?}: {answer:?}"
            );
        }
    }

    /// Clients trickling a request a byte at a time, each byte well within the I/O timeout,
    /// are cut when the whole request is not in by the timeout, so they cannot keep every
    /// place taken: a new client is served while they still trickle.
    #[cfg(unix)]
    #[test]
    fn trickling_clients_are_cut_at_the_request_deadline() {
        let timeout = Duration::from_millis(1500);
        let address = listening(Limits {
            io_timeout: timeout,
            max_connections: 4,
            ..Limits::default()
        });
        let started = Instant::now();
        let request = b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
        let tricklers: Vec<_> = (0..4)
            .map(|_| {
                let mut stream = connect(address);
                std::thread::spawn(move || {
                    // One byte every 200 ms: the whole request would take over 14 s.
                    for byte in request {
                        if stream.write_all(&[*byte]).is_err() {
                            return Instant::now();
                        }
                        std::thread::sleep(Duration::from_millis(200));
                    }
                    let mut answer = String::new();
                    let _ = stream.read_to_string(&mut answer);
                    assert!(
                        answer.is_empty(),
                        "a trickled request was answered: {answer}"
                    );
                    Instant::now()
                })
            })
            .collect();
        // Wait until all four hold a place: a fifth connection is refused.
        std::thread::sleep(Duration::from_millis(300));
        let ask = || {
            let mut stream = connect(address);
            let request = "GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
            stream.write_all(request.as_bytes()).unwrap();
            let mut answer = String::new();
            let _ = BufReader::new(stream).read_to_string(&mut answer);
            answer
        };
        assert!(ask().starts_with("HTTP/1.1 503"));
        // Once the deadline has passed the places are free again, long before the tricklers
        // would finish.
        let served = loop {
            let answer = ask();
            if answer.starts_with("HTTP/1.1 404") {
                break started.elapsed();
            }
            assert!(
                started.elapsed() < Duration::from_secs(8),
                "no place came free: {answer}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(served >= timeout, "served after {served:?}");
        for trickler in tricklers {
            let cut = trickler.join().unwrap().duration_since(started);
            assert!(cut < Duration::from_secs(8), "cut after {cut:?}");
        }
    }

    /// A request whose end the relay cannot tell is closed at once, never left waiting for an
    /// answer the server may not give.
    #[cfg(unix)]
    #[test]
    fn requests_it_cannot_frame_are_closed() {
        let address = listening(Limits::default());
        let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
        for request in [
            format!("{head}Transfer-Encoding: gzip\r\n\r\n{{}}"),
            format!("{head}Transfer-Encoding: identity\r\n\r\n{{}}"),
            format!("{head}Content-Length: 100\r\nContent-Length: 2\r\n\r\n{{}}"),
            format!("{head}Content-Length: two\r\n\r\n{{}}"),
            format!("{head}X-Long: {}", "a".repeat(70 * 1024)),
        ] {
            let started = Instant::now();
            let mut stream = connect(address);
            // The relay may close before it has read everything: a reset is a close too.
            let _ = stream.write_all(request.as_bytes());
            let mut answer = String::new();
            match BufReader::new(stream).read_to_string(&mut answer) {
                Ok(_) => assert!(answer.is_empty(), "{answer:?}"),
                Err(e) => assert!(
                    !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                    "{e}"
                ),
            }
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{:?}",
                &request[..80]
            );
        }
    }

    /// Connections beyond the cap get 503 with Retry-After at once; a closed one frees its
    /// place.
    #[cfg(unix)]
    #[test]
    fn connections_beyond_the_cap_are_answered_503() {
        let address = listening(Limits {
            max_connections: 2,
            ..Limits::default()
        });
        let ask = |mut stream: TcpStream| {
            let request = "GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
            stream.write_all(request.as_bytes()).unwrap();
            let mut answer = String::new();
            let _ = BufReader::new(stream).read_to_string(&mut answer);
            answer
        };
        // Two connections held open, each proven admitted by an answer on it.
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut stream = connect(address);
            stream
                .write_all(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                .unwrap();
            let mut line = String::new();
            BufReader::new(stream.try_clone().unwrap())
                .read_line(&mut line)
                .unwrap();
            assert!(line.starts_with("HTTP/1.1 404"), "{line}");
            held.push(stream);
        }
        let refused = ask(connect(address));
        assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
        assert!(refused.contains("Retry-After: 1"), "{refused}");
        assert!(refused.contains("2 connections are open"), "{refused}");
        drop(held.pop());
        // The freed place is taken again once the relay has seen the close.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let answer = ask(connect(address));
            if answer.starts_with("HTTP/1.1 404") {
                break;
            }
            assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
            assert!(
                Instant::now() < deadline,
                "the closed connection's place was not freed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A connection idle after its answer is closed after the I/O timeout.
    #[test]
    fn an_idle_connection_is_closed_after_the_io_timeout() {
        let address = listening(Limits {
            io_timeout: Duration::from_millis(300),
            ..Limits::default()
        });
        let mut stream = connect(address);
        stream
            .write_all(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let started = Instant::now();
        let mut answer = String::new();
        // Read to the end: the answer, then the close.
        BufReader::new(stream).read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    /// A session that cannot start is an error answer, whether the request's body is counted or
    /// chunked; a chunked one, once its last chunk and trailer are in, is waited on, not taken
    /// for a stall.
    #[test]
    fn a_session_that_cannot_start_is_an_error_answer() {
        let address = listening(Limits {
            io_timeout: Duration::from_millis(300),
            ..Limits::default()
        });
        let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                    Connection: close\r\n";
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let (first, rest) = body.split_at(10);
        for request in [
            format!("{head}Content-Length: {}\r\n\r\n{body}", body.len()),
            format!(
                "{head}Transfer-Encoding: chunked\r\n\r\n\
                 {:x}\r\n{first}\r\n{:x};ext=1\r\n{rest}\r\n0\r\n\r\n",
                first.len(),
                rest.len()
            ),
        ] {
            let mut stream = connect(address);
            stream.write_all(request.as_bytes()).unwrap();
            let mut answer = String::new();
            BufReader::new(stream).read_to_string(&mut answer).unwrap();
            assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
            assert!(answer.contains("cannot start the server"), "{answer}");
        }
    }

    #[test]
    fn loopback_hosts() {
        for host in [
            "localhost",
            "LOCALHOST:3000",
            "127.0.0.1",
            "127.3.4.5:80",
            "[::1]",
            "[::1]:9",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.test",
            "127.0.0.1.evil.test",
            "localhost.evil.test:80",
            "10.0.0.1",
            "[::2]",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
