//! The stream writer: a POST's answers or a GET's messages as server-sent events, written and
//! flushed one by one (the head with the first), resumable with `Last-Event-ID`.

use std::collections::{HashSet, VecDeque};
use std::io::Write;
use std::sync::Arc;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use serde_json::Value;
use tiny_http::Request;

use crate::wire::{id_key, is_response};

use super::config::{HEAD_HOLD, KEEP_ALIVE, PARKED_STREAMS, PRIMING_REVISION, RETRY_MS};
use super::downstream::Downstream;
use super::http::{header, lock};
use super::queue::{Inlet, queue};

/// Answers `request` with `body` as a `text/event-stream`, each event sent (and flushed) as it
/// is written: the HTTP server's own writer would hold events back until 8 KiB had gathered,
/// so an answer the client must give mid-call would never be asked for in time. The head (and
/// the priming event) wait at most [`HEAD_HOLD`] for the first message, and the last event
/// carries the end of the body, so a call answered quickly costs one write, not four. When
/// `json` (the client accepts `application/json` too) and that first message is the stream's
/// last, it is answered as plain JSON instead: there is nothing to resume, and a client that
/// reads the body to its end can send its next request on the same connection.
pub(super) fn event_stream(request: Request, mut body: Stream, session: Option<&str>, json: bool) {
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
    let mut next = body.next_message_within(HEAD_HOLD);
    if json
        && body.finished()
        && let Some(Ok(text)) = &next
    {
        let mut out = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            text.len()
        );
        if let Some(id) = session {
            out.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
        }
        if close {
            out.push_str("Connection: close\r\n");
        }
        out.push_str("\r\n");
        out.push_str(text);
        let _ = writer
            .write_all(out.as_bytes())
            .and_then(|()| writer.flush());
        return;
    }
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
    let frame = |out: &mut Vec<u8>, bytes: &[u8]| {
        if chunked {
            out.extend_from_slice(format!("{:x}\r\n", bytes.len()).as_bytes());
            out.extend_from_slice(bytes);
            out.extend_from_slice(b"\r\n");
        } else {
            out.extend_from_slice(bytes);
        }
    };
    // What the next write sends: the head first.
    let mut out = head.into_bytes();
    if prime {
        frame(&mut out, &body.priming());
    }
    loop {
        match next {
            None => break,
            Some(Ok(text)) => frame(&mut out, &body.event(&text)),
            Some(Err(())) if out.is_empty() => frame(&mut out, b": keep-alive\n\n"),
            // The hold is over: the head leaves without an event.
            Some(Err(())) => {}
        }
        if body.finished() {
            break;
        }
        // A client that went away ends the stream.
        if writer
            .write_all(&out)
            .and_then(|()| writer.flush())
            .is_err()
        {
            return;
        }
        out.clear();
        next = body.next_message_within(KEEP_ALIVE);
    }
    if chunked {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    let _ = writer.write_all(&out).and_then(|()| writer.flush());
}

/// A response body that streams a session's messages as server-sent events.
pub(super) struct Stream {
    pub(super) downstream: Arc<Downstream>,
    pub(super) receiver: Inlet,
    /// The stream's number among the session's streams (`None`: it takes only answers).
    pub(super) number: Option<u64>,
    /// The requests still unanswered (`None`: a GET stream, open until the session ends).
    pub(super) remaining: Option<HashSet<String>>,
    /// The session's GET stream (its end lets another open).
    pub(super) standalone: bool,
    /// Events sent before on the stream this one resumes, to send again first (with ids of
    /// this stream).
    pub(super) replay: VecDeque<String>,
    /// Longest wait for the next message.
    pub(super) patience: Duration,
    /// When the last message came (or the stream opened).
    pub(super) last: Instant,
}

impl Stream {
    /// A stream continuing the one whose event `last` (`STREAM-EVENT`, as this proxy numbers
    /// them) the client saw last: the events after it again, then what the stream still owes
    /// (the answers to its requests, or for a GET stream everything until the session ends).
    /// Refused (the status and why) when no such stream is known, or when it is the session's
    /// GET stream and that is open: a session has one.
    pub(super) fn resume(
        downstream: &Arc<Downstream>,
        last: &str,
        patience: Duration,
    ) -> Result<Stream, (u16, &'static str)> {
        const UNKNOWN: (u16, &str) = (404, "no stream of this session has that Last-Event-ID");
        let (stream, event) = last.trim().split_once('-').ok_or(UNKNOWN)?;
        let (Ok(stream), Ok(event)) = (stream.parse::<u64>(), event.parse::<u64>()) else {
            return Err(UNKNOWN);
        };
        let (sender, receiver) = queue();
        let mut routes = lock(&downstream.routes);
        if stream == 0 || stream > routes.next_stream || event > routes.last_event {
            return Err(UNKNOWN);
        }
        if stream == routes.get_stream && routes.get_open {
            return Err((409, "this session's GET stream is already open"));
        }
        let replay: VecDeque<String> = routes
            .sent
            .iter()
            .filter(|sent| sent.stream == stream && sent.event > event)
            .map(|sent| sent.text.clone())
            .collect();
        let listening = stream == routes.get_stream;
        let standalone = listening;
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
        Ok(Stream {
            downstream: Arc::clone(downstream),
            receiver,
            number: Some(number),
            remaining: (!listening).then_some(owed),
            standalone,
            replay,
            patience: if listening { Duration::MAX } else { patience },
            last: Instant::now(),
        })
    }

    /// Whether the stream has nothing more to send: no event to send again and every request
    /// it carries answered.
    pub(super) fn finished(&self) -> bool {
        self.replay.is_empty() && self.remaining.as_ref().is_some_and(HashSet::is_empty)
    }

    /// The next message (`Err` when none came within `wait`), or `None` when the stream is
    /// over.
    pub(super) fn next_message_within(&mut self, wait: Duration) -> Option<Result<String, ()>> {
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
            .recv_timeout((self.patience - waited).min(wait))
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
    pub(super) fn answered(&mut self, text: &str) {
        if let Some(remaining) = self.remaining.as_mut()
            && let Ok(message) = mcp_recovery_model::json::from_str(text)
            && is_response(&message)
            && let Some(key) = id_key(&message)
        {
            remaining.remove(&key);
        }
    }

    /// Waits for every answer (for a client that accepts only JSON).
    pub(super) fn collect(mut self) -> Vec<Value> {
        let mut answers = Vec::new();
        while let Some(next) = self.next_message_within(KEEP_ALIVE) {
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
    /// The event that sends `text`, numbered.
    pub(super) fn event(&self, text: &str) -> Vec<u8> {
        let stream = self.number.unwrap_or(0);
        let event = self.downstream.sent(stream, text);
        let mut bytes = format!("id: {stream}-{event}\nevent: message\ndata: ").into_bytes();
        bytes.extend_from_slice(text.as_bytes());
        bytes.extend_from_slice(b"\n\n");
        bytes
    }

    /// The priming event: an id for the stream's start and the reconnection time.
    pub(super) fn priming(&self) -> Vec<u8> {
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
