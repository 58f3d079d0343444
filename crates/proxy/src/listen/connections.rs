//! The connection cap of `proxy --listen`. The HTTP server spawns a thread for every connection
//! it accepts, so it never accepts from the network itself: the gate accepts, admits at most
//! [`Limits::max_connections`](super::Limits) connections at once and relays each to the HTTP
//! server over an internal Unix socket (`crate::internal_socket`); a connection beyond the cap is answered
//! `503 Service Unavailable` with `Retry-After` and closed.
//!
//! The relay also keeps the I/O bounds: a request must arrive whole (its head, and a body
//! counted by `Content-Length` or sent in chunks, which it follows chunk by chunk) within the
//! I/O timeout of its first byte, however the bytes trickle in, and a connection idle between
//! requests is closed after the same timeout; a connection waiting for
//! its answer is not (an event stream's keep-alive comments count as traffic); a peer that does
//! not take what is written to it is dropped after the same timeout. A request whose end the
//! relay cannot tell (a head over [`MAX_HEAD`], a transfer coding that does not end in chunked,
//! a malformed or twice-given different `Content-Length`, a malformed chunk) is not passed on:
//! the connection is closed, so no request escapes the bounds by being framed oddly, and the
//! relay and the server never disagree on where a request ends.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::internal_socket::InternalSocket;

use super::config::Limits;
use super::workers::Workers;

/// Connections answered 503 at once; beyond it an excess connection is closed unanswered.
const REFUSERS: usize = 4;
/// Longest request head the relay passes on.
const MAX_HEAD: usize = 64 * 1024;
/// What the relay reads at a time.
const CHUNK: usize = 16 * 1024;

/// A counter slot, given back when dropped.
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// Takes a slot when fewer than `max` are taken.
    pub(crate) fn take(counter: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
        counter
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(Arc::clone(counter)))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Accepts from `public` until it fails, relaying admitted connections to the HTTP server at
/// `internal`.
pub(crate) fn run(public: &TcpListener, internal: &Arc<InternalSocket>, limits: Limits) {
    let open = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    let max = limits.max_connections.max(1);
    let workers = Arc::new(Workers::new());
    for stream in public.incoming() {
        let Ok(stream) = stream else {
            continue;
        };
        match Slot::take(&open, max) {
            Some(slot) => {
                let internal = Arc::clone(internal);
                let threads = Arc::clone(&workers);
                workers.run(move || relay(stream, &internal, limits.io_timeout, slot, &threads));
            }
            None => {
                // Answered by a bounded few; past them the connection is simply closed.
                if let Some(slot) = Slot::take(&refusing, REFUSERS) {
                    std::thread::spawn(move || refuse(stream, max, slot));
                }
            }
        }
    }
}

/// `503` with `Retry-After`, after reading the request head (so the peer sees the answer, not
/// a reset).
fn refuse(mut stream: TcpStream, max: usize, _slot: Slot) {
    let wait = Some(Duration::from_secs(1));
    let _ = stream.set_read_timeout(wait);
    let _ = stream.set_write_timeout(wait);
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while head.len() < MAX_HEAD && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
    }
    let body =
        format!("mcp-recovery proxy: {max} connections are open, the most allowed; retry later\n");
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(answer.as_bytes()).is_ok() {
        let _ = stream.shutdown(Shutdown::Write);
        // Take what the peer still sends (bounded), so closing does not reset the answer away.
        let mut drained = 0;
        while drained < MAX_HEAD {
            match stream.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    }
}

/// Where the relay is in the client's current request.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Framing {
    /// Between requests.
    Idle,
    /// Inside a request head (its bytes so far, bounded).
    Head(Vec<u8>),
    /// Inside a body with this many bytes to come.
    Body(usize),
    /// Inside a chunked body.
    Chunked(Chunk),
    /// At bytes the relay cannot follow (a head too long, a malformed or conflicting length, a
    /// malformed chunk, a transfer coding other than chunked): the connection is closed.
    Refused,
}

/// Where the relay is in a chunked body (RFC 9112 §7.1).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Chunk {
    /// A chunk-size line (its bytes so far, bounded).
    Size(Vec<u8>),
    /// A chunk's data and the line break after it, with this many bytes to come.
    Data(usize),
    /// The trailer section, after the last chunk: the current line's bytes so far (bounded).
    Trailer(Vec<u8>),
}

/// The longest chunk-size or trailer line followed.
const MAX_LINE: usize = 8 * 1024;

/// What both directions of one relayed connection share.
#[derive(Debug)]
struct Traffic {
    /// A request is complete and no byte of an answer has come back since.
    awaiting: bool,
    /// When the server last wrote to the client (or the connection opened).
    last_answer: Instant,
}

impl Framing {
    /// Follows `bytes` from the client; true when they complete a request.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        let mut completed = false;
        while !bytes.is_empty() {
            match self {
                Framing::Idle => *self = Framing::Head(Vec::new()),
                Framing::Refused => return false,
                Framing::Chunked(chunk) => {
                    let (used, next) = chunk.feed(bytes);
                    bytes = &bytes[used..];
                    if let Some(next) = next {
                        completed |= next == Framing::Idle;
                        *self = next;
                    }
                }
                Framing::Body(left) => {
                    let taken = (*left).min(bytes.len());
                    *left -= taken;
                    bytes = &bytes[taken..];
                    if *left == 0 {
                        *self = Framing::Idle;
                        completed = true;
                    }
                }
                Framing::Head(head) => {
                    let before = head.len();
                    let room = MAX_HEAD.saturating_sub(before);
                    let taken = bytes.len().min(room.max(1));
                    head.extend_from_slice(&bytes[..taken]);
                    let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") else {
                        if head.len() >= MAX_HEAD {
                            *self = Framing::Refused;
                            return false;
                        }
                        bytes = &bytes[taken..];
                        continue;
                    };
                    let used = end + 4 - before;
                    let next = body_framing(&head[..end]);
                    bytes = &bytes[used.min(bytes.len())..];
                    *self = next;
                    if *self == Framing::Idle {
                        completed = true;
                    }
                }
            }
        }
        completed
    }

    /// True inside a request (a stall here is the client's).
    fn in_request(&self) -> bool {
        matches!(
            self,
            Framing::Head(_) | Framing::Body(_) | Framing::Chunked(_)
        )
    }
}

impl Chunk {
    /// Follows `bytes` within the chunked body: how many it used, and the framing that follows
    /// when the body ends (`Idle`) or cannot be followed (`Refused`).
    fn feed(&mut self, bytes: &[u8]) -> (usize, Option<Framing>) {
        match self {
            Chunk::Data(left) => {
                let taken = (*left).min(bytes.len());
                *left -= taken;
                if *left == 0 {
                    *self = Chunk::Size(Vec::new());
                }
                (taken, None)
            }
            Chunk::Size(line) | Chunk::Trailer(line) => {
                let end = bytes.iter().position(|&b| b == b'\n');
                let taken = end.map_or(bytes.len(), |at| at + 1);
                if line.len() + taken > MAX_LINE {
                    return (taken, Some(Framing::Refused));
                }
                line.extend_from_slice(&bytes[..taken]);
                if end.is_none() {
                    return (taken, None);
                }
                let text = line.strip_suffix(b"\n").unwrap_or(line);
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                let (size, empty) = (chunk_size(text), text.is_empty());
                *self = match (&*self, size) {
                    (Chunk::Size(_), Some(0)) => Chunk::Trailer(Vec::new()),
                    (Chunk::Size(_), Some(size)) => match size.checked_add(2) {
                        Some(left) => Chunk::Data(left),
                        None => return (taken, Some(Framing::Refused)),
                    },
                    (Chunk::Size(_), None) => return (taken, Some(Framing::Refused)),
                    // The empty line ends the trailer section, and the body.
                    _ if empty => return (taken, Some(Framing::Idle)),
                    _ => Chunk::Trailer(Vec::new()),
                };
                (taken, None)
            }
        }
    }
}

/// The size a chunk-size line gives (hex digits, then optional extensions after `;`).
fn chunk_size(line: &[u8]) -> Option<usize> {
    let digits = line.split(|&b| b == b';').next()?;
    let digits = std::str::from_utf8(digits).ok()?.trim_matches([' ', '\t']);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    usize::from_str_radix(digits, 16).ok()
}

/// The body that follows a request head: `Content-Length` bytes, chunks, none, or refused
/// (RFC 9112 §6.3: a coding that does not end in chunked, a malformed length, or lengths that
/// differ).
fn body_framing(head: &[u8]) -> Framing {
    let text = String::from_utf8_lossy(head);
    let mut length: Option<usize> = None;
    for line in text.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("transfer-encoding") {
            // Chunked framing applies when chunked is the last coding.
            let last = value.rsplit(',').next().unwrap_or_default().trim();
            return if last.eq_ignore_ascii_case("chunked") {
                Framing::Chunked(Chunk::Size(Vec::new()))
            } else {
                Framing::Refused
            };
        }
        if name.eq_ignore_ascii_case("content-length") {
            match (value.parse::<usize>(), length) {
                (Ok(n), None) => length = Some(n),
                (Ok(n), Some(seen)) if n == seen => {}
                _ => return Framing::Refused,
            }
        }
    }
    match length {
        None | Some(0) => Framing::Idle,
        Some(length) => Framing::Body(length),
    }
}

fn lock(traffic: &Mutex<Traffic>) -> std::sync::MutexGuard<'_, Traffic> {
    traffic
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Relays one admitted connection until either side closes; the slot is held until both
/// directions are done.
fn relay(
    client: TcpStream,
    internal: &InternalSocket,
    io_timeout: Duration,
    slot: Slot,
    workers: &Workers,
) {
    let Ok(server) = internal.connect() else {
        return;
    };
    let (Ok(client_out), Ok(server_in)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let _ = client.set_read_timeout(Some(io_timeout));
    let _ = client.set_write_timeout(Some(io_timeout));
    // An answer is written whole as soon as it is complete: nothing to gain from holding it back.
    let _ = client.set_nodelay(true);
    let traffic = Arc::new(Mutex::new(Traffic {
        awaiting: false,
        last_answer: Instant::now(),
    }));
    let answers = Arc::clone(&traffic);
    let slot = Arc::new(slot);
    let held = Arc::clone(&slot);
    workers.run(move || {
        answers_to_client(server_in, client_out, &answers);
        drop(held);
    });
    requests_to_server(client, server, io_timeout, &traffic);
    drop(slot);
}

fn close(client: &TcpStream, server: &UnixStream) {
    let _ = client.shutdown(Shutdown::Both);
    let _ = server.shutdown(Shutdown::Both);
}

fn requests_to_server(
    mut client: TcpStream,
    mut server: UnixStream,
    io_timeout: Duration,
    traffic: &Mutex<Traffic>,
) {
    let mut framing = Framing::Idle;
    let mut buffer = vec![0u8; CHUNK];
    // When the request under way must be in whole: one deadline per request, so a client
    // trickling bytes cannot hold its place longer than a stalled one.
    let mut deadline: Option<Instant> = None;
    // The read timeout last set (set again only when it changes: one system call less a read).
    let mut timeout = Some(io_timeout);
    loop {
        let wait = deadline.map_or(io_timeout, |at| {
            at.saturating_duration_since(Instant::now()).min(io_timeout)
        });
        if wait.is_zero() {
            return close(&client, &server);
        }
        if timeout != Some(wait) {
            let _ = client.set_read_timeout(Some(wait));
            timeout = Some(wait);
        }
        match client.read(&mut buffer) {
            Ok(0) => {
                let _ = server.shutdown(Shutdown::Write);
                return;
            }
            Ok(n) => {
                let before = framing.in_request();
                let completed = framing.feed(&buffer[..n]);
                if completed {
                    lock(traffic).awaiting = true;
                }
                deadline = match (framing.in_request(), deadline) {
                    (false, _) => None,
                    // A request still under way keeps its deadline, unless it began in this
                    // read (after the previous one ended).
                    (true, Some(at)) if before && !completed => Some(at),
                    (true, _) => Some(Instant::now() + io_timeout),
                };
                if framing == Framing::Refused || server.write_all(&buffer[..n]).is_err() {
                    return close(&client, &server);
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                let waiting = {
                    let traffic = lock(traffic);
                    traffic.awaiting || traffic.last_answer.elapsed() < io_timeout
                };
                // A stalled request, or a connection idle for the whole timeout, is dropped.
                if framing.in_request() || !waiting {
                    return close(&client, &server);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return close(&client, &server),
        }
    }
}

fn answers_to_client(mut server: UnixStream, mut client: TcpStream, traffic: &Mutex<Traffic>) {
    let mut buffer = vec![0u8; CHUNK];
    loop {
        match server.read(&mut buffer) {
            Ok(0) | Err(_) => return close(&client, &server),
            Ok(n) => {
                {
                    let mut traffic = lock(traffic);
                    traffic.awaiting = false;
                    traffic.last_answer = Instant::now();
                }
                if client.write_all(&buffer[..n]).is_err() {
                    return close(&client, &server);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_requests_with_and_without_bodies() {
        let mut framing = Framing::Idle;
        assert!(!framing.feed(b"POST /mcp HTTP/1.1\r\nContent-Length: 4\r\n"));
        assert!(framing.in_request());
        assert!(!framing.feed(b"\r\nab"));
        assert_eq!(framing, Framing::Body(2));
        assert!(framing.feed(b"cd"));
        assert_eq!(framing, Framing::Idle);
        // A head and its body in one read, and the next request's head in the same read.
        assert!(framing.feed(b"GET /mcp HTTP/1.1\r\nHost: x\r\n\r\nPOST /mcp HTTP/1.1\r\n"));
        assert!(framing.in_request());
        assert!(framing.feed(b"content-length: 1\r\n\r\nx"));
        assert!(!framing.in_request());
        // The same length twice is one length.
        assert!(
            !framing.feed(b"POST / HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n")
        );
        assert_eq!(framing, Framing::Body(2));
    }

    #[test]
    fn follows_chunked_bodies_through_every_split() {
        let request: &[u8] = b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n\
            4;name=value\r\nabcd\r\nA\r\n0123456789\r\n0\r\nExpires: never\r\n\r\n";
        let next = b"GET /mcp HTTP/1.1\r\n\r\n";
        // Fed in two reads split anywhere, then the next request: the body ends exactly at its
        // last byte, and the client is inside a request up to it.
        for split in 0..=request.len() {
            let mut framing = Framing::Idle;
            let early = framing.feed(&request[..split]);
            assert_eq!(early, split == request.len(), "split at {split}");
            assert_eq!(
                framing.in_request(),
                split > 0 && split < request.len(),
                "split at {split}"
            );
            let done = framing.feed(&request[split..]);
            assert_eq!(done, split < request.len(), "split at {split}");
            assert_eq!(framing, Framing::Idle, "split at {split}");
            assert!(framing.feed(next));
        }
        // One byte at a time.
        let mut framing = Framing::Idle;
        let completed: Vec<usize> = (0..request.len())
            .filter(|&i| framing.feed(&request[i..=i]))
            .collect();
        assert_eq!(completed, [request.len() - 1]);
    }

    #[test]
    fn requests_it_cannot_follow_are_refused() {
        for body in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"ffffffffffffffffffffffff\r\n",
            &[b'1'; MAX_LINE + 1],
        ] {
            let mut framing = Framing::Idle;
            framing.feed(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
            assert!(!framing.feed(body));
            assert_eq!(framing, Framing::Refused, "{body:?}");
            // Nothing after it is followed.
            assert!(!framing.feed(b"GET / HTTP/1.1\r\n\r\n"));
            assert_eq!(framing, Framing::Refused);
        }
        for head in [
            &b"Transfer-Encoding: gzip\r\n"[..],
            b"Transfer-Encoding: identity\r\n",
            b"Transfer-Encoding: chunked, gzip\r\n",
            b"Content-Length: 100\r\nContent-Length: 2\r\n",
            b"Content-Length: -1\r\n",
            b"Content-Length: 1e2\r\n",
            b"Content-Length: 99999999999999999999999999\r\n",
        ] {
            let mut framing = Framing::Idle;
            let mut request = b"POST / HTTP/1.1\r\n".to_vec();
            request.extend_from_slice(head);
            request.extend_from_slice(b"\r\n");
            assert!(!framing.feed(&request));
            assert_eq!(
                framing,
                Framing::Refused,
                "{}",
                String::from_utf8_lossy(head)
            );
        }
        let mut huge = Framing::Idle;
        assert!(!huge.feed(&vec![b'a'; MAX_HEAD + 10]));
        assert_eq!(huge, Framing::Refused);
    }

    #[test]
    fn slots_are_bounded_and_given_back() {
        let counter = Arc::new(AtomicUsize::new(0));
        let first = Slot::take(&counter, 2);
        let second = Slot::take(&counter, 2);
        assert!(first.is_some() && second.is_some());
        assert!(Slot::take(&counter, 2).is_none());
        drop(first);
        assert!(Slot::take(&counter, 2).is_some());
    }
}
