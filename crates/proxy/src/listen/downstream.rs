//! One session's client side: where the requests of each POST wait for their answers, the
//! streams open on it, and the session's output routed to them.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use crate::event::{Budget, Event};
use crate::note::note;
use crate::settings::Closing;
use crate::wire::{Line, error_response, id_key, is_response};

use super::config::{BACKLOG, BACKLOG_BYTES, RESUMABLE_BYTES, RESUMABLE_EVENTS};
use super::http::{Body, lock, rpc_error};
use super::queue::Outlet;

/// One session's client side: where its messages go in and its answers come out.
pub(super) struct Downstream {
    /// The session id in the journal (not the `Mcp-Session-Id`, which acts as a credential).
    pub(super) journal_id: String,
    pub(super) events: SyncSender<Event>,
    /// The bytes of the client's messages the session has not handled yet, and of those queued
    /// for the server's stdin, are held against it: past it a POST is answered busy.
    pub(super) budget: Arc<Budget>,
    pub(super) routes: Mutex<Routes>,
    pub(super) last_used: Mutex<Instant>,
    pub(super) ended: AtomicBool,
    /// Set while the session has effectful calls no rollback has covered.
    pub(super) effects: Arc<AtomicBool>,
    /// The protocol revision the server's answer to `initialize` settled, once it passed: a
    /// POST without `MCP-Protocol-Version` is of it.
    pub(super) revision: Mutex<Option<String>>,
}

#[derive(Default)]
pub(super) struct Routes {
    /// Request id → the stream of the POST that carried it (its number, 0 for a JSON answer).
    pub(super) waiting: HashMap<String, (u64, Outlet)>,
    /// Open streams for everything else, the newest POST first, then GET.
    pub(super) streams: Vec<(u64, Outlet)>,
    pub(super) backlog: VecDeque<String>,
    pub(super) next_stream: u64,
    pub(super) get_open: bool,
    /// The number of the latest GET stream.
    pub(super) get_stream: u64,
    /// The events last sent on the streams, for a client resuming one (bounded).
    pub(super) sent: VecDeque<Sent>,
    pub(super) sent_bytes: usize,
    /// The number of the latest event sent.
    pub(super) last_event: u64,
    /// A stream whose connection went away → its requests then still unanswered, for a client
    /// resuming it (bounded).
    pub(super) parked: HashMap<u64, HashSet<String>>,
    /// The session stopped because its journal could not be written: it takes no request.
    pub(super) stopped: bool,
}

/// One event sent on a stream.
pub(super) struct Sent {
    pub(super) stream: u64,
    pub(super) event: u64,
    pub(super) text: String,
}

impl Routes {
    /// Registers a stream for messages that answer no request; hands it the backlog.
    pub(super) fn add_stream(&mut self, sender: Outlet, front: bool) -> u64 {
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
    pub(super) fn route(&mut self, text: String) {
        let mut text = text;
        for (_, stream) in &self.streams {
            match stream.try_send(text) {
                Ok(()) => return,
                Err(TrySendError::Full(back) | TrySendError::Disconnected(back)) => text = back,
            }
        }
        // Bounded in messages and in bytes (a message may be 64 MiB): the oldest go first.
        let mut held: usize = self.backlog.iter().map(String::len).sum();
        while !self.backlog.is_empty()
            && (self.backlog.len() >= BACKLOG || held + text.len() > BACKLOG_BYTES)
        {
            held -= self.backlog.pop_front().map_or(0, |old| old.len());
            note("a server message with no open stream to take it was dropped");
        }
        self.backlog.push_back(text);
    }
}

impl Downstream {
    /// Registers the requests of a POST; with `stream`, the POST also takes other messages.
    pub(super) fn expect(
        &self,
        ids: &[String],
        sender: &Outlet,
        stream: bool,
    ) -> Result<Option<u64>, Body> {
        let mut routes = lock(&self.routes);
        if routes.stopped {
            return Err(stopped());
        }
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
    pub(super) fn forget(&self, ids: &[String], stream: Option<u64>) {
        let mut routes = lock(&self.routes);
        for id in ids {
            routes.waiting.remove(id);
        }
        if let Some(number) = stream {
            routes.streams.retain(|(n, _)| *n != number);
        }
    }

    /// Records an event sent on stream `number`; its number.
    pub(super) fn sent(&self, number: u64, text: &str) -> u64 {
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

    /// No request of the session waits for its answer and no POST stream of it is open (its
    /// GET stream only listens, and a client that went away leaves it open until a keep-alive
    /// finds out).
    pub(super) fn at_rest(&self) -> bool {
        let routes = lock(&self.routes);
        routes.waiting.is_empty() && routes.streams.len() <= usize::from(routes.get_open)
    }

    /// Asks the session to finish: the client closed it (DELETE).
    pub(super) fn end_by_client(&self) {
        let _ = self.events.try_send(Event::Client(Line::Closed(None)));
    }

    /// The session is stopping on a journal error: it takes no more requests.
    pub(super) fn stopping(&self) {
        lock(&self.routes).stopped = true;
    }

    /// The session stopped on a journal error, having answered the requests it forwarded:
    /// every request still waiting was not forwarded, and is told so.
    pub(super) fn stop(&self) {
        let mut routes = lock(&self.routes);
        routes.stopped = true;
        for (key, (_, outlet)) in routes.waiting.drain() {
            let Some(id) = key_id(&key) else { continue };
            let answer = error_response(
                &id,
                -32603,
                "mcp-recovery proxy cannot write its journal, so it stopped this session: the \
                 request was not forwarded",
            );
            let _ = outlet.try_send_answer(answer.to_string());
        }
    }

    /// Whether the session stopped on a journal error.
    pub(super) fn stopped(&self) -> bool {
        lock(&self.routes).stopped
    }

    /// Asks the session to finish for `closing` (it answers what is pending, then closes its
    /// upstream).
    pub(super) fn end(&self, closing: Closing) {
        let _ = self.events.try_send(Event::Close(closing));
    }

    /// Drops every stream's sender, so open streams end.
    pub(super) fn close_streams(&self) {
        let mut routes = lock(&self.routes);
        routes.waiting.clear();
        routes.streams.clear();
    }
}

/// The refusal of a request to a session that stopped on a journal error.
pub(super) fn stopped() -> Body {
    rpc_error(
        500,
        -32603,
        "mcp-recovery proxy: this session stopped because the proxy cannot write its journal; \
         nothing was forwarded; start a new session",
    )
}

/// The id whose [`id_key`] is `key`: a string as it was, an integer in plain digits (one too
/// large for any client to read exactly with its exponent).
fn key_id(key: &str) -> Option<Value> {
    if let Some(text) = key.strip_prefix("s:") {
        return Some(Value::String(text.to_owned()));
    }
    let number = key.strip_prefix("n:")?;
    let text = match number.split_once('e') {
        Some((digits, exponent)) if exponent.len() <= 2 => {
            format!("{digits}{}", "0".repeat(exponent.parse().ok()?))
        }
        _ => number.to_owned(),
    };
    mcp_recovery_model::json::from_str(&text).ok()
}

/// The session's output: each line is routed to the stream waiting for it.
pub(super) struct Writer {
    pub(super) downstream: Arc<Downstream>,
    pub(super) line: Vec<u8>,
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
    pub(super) fn send(&self, text: String) {
        let message: Value = mcp_recovery_model::json::from_str(&text).unwrap_or(Value::Null);
        if let Some(Value::String(revision)) = message.pointer("/result/protocolVersion")
            && message.pointer("/result/capabilities").is_some()
        {
            // The first: a later result shaped alike settles nothing.
            lock(&self.downstream.revision).get_or_insert_with(|| revision.clone());
        }
        let mut routes = lock(&self.downstream.routes);
        let key = is_response(&message).then(|| id_key(&message)).flatten();
        if let Some(key) = &key {
            // An answer no stream waits for is no longer owed to a resuming client.
            for parked in routes.parked.values_mut() {
                parked.remove(key);
            }
        }
        if let Some((_, sender)) = key.and_then(|key| routes.waiting.remove(&key)) {
            match sender.try_send_answer(text) {
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
