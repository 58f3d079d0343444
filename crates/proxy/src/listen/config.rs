//! What a listener is told: where it listens, for whom, and its bounds; and the constants of
//! the HTTP transport it speaks.

use std::net::SocketAddr;
use std::time::Duration;

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
/// taken to be of it when its session settled no other, as the transport specifies for a
/// request without the header.
pub(super) use crate::wire::BATCH_REVISION;

/// Events kept for clients resuming a stream with `Last-Event-ID`, and their most bytes.
pub(super) const RESUMABLE_EVENTS: usize = 1024;
pub(super) const RESUMABLE_BYTES: usize = 4 * 1024 * 1024;
/// Streams whose unanswered requests are kept for a resuming client.
pub(super) const PARKED_STREAMS: usize = 64;
/// The reconnection time a stream's priming event asks for, in milliseconds.
pub(super) const RETRY_MS: u64 = 1000;
/// The first revision whose clients are sent priming events (an id with empty data).
pub(super) const PRIMING_REVISION: &str = "2025-11-25";

/// Messages waiting for a stream before the oldest are dropped.
pub(super) const BACKLOG: usize = 1024;
/// Bytes of the messages waiting for a stream before the oldest are dropped (one message
/// larger than this is kept alone).
pub(super) const BACKLOG_BYTES: usize = 16 * 1024 * 1024;
/// Messages queued for one stream before the session's writes to it are dropped.
pub(super) const STREAM_BUFFER: usize = 256;
/// Bytes queued for one stream before it takes no more (one message larger than this is taken
/// alone).
pub(super) const STREAM_BYTES: usize = 16 * 1024 * 1024;
/// How often an open stream sends a comment, so a client that went away is noticed.
pub(super) const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Longest a stream's head waits for its first event, so that both leave in one write.
pub(super) const HEAD_HOLD: Duration = Duration::from_millis(50);

/// The key of the session shared by clients without `Mcp-Session-Id` (never a real id, which
/// is 32 hex digits).
pub(super) const SESSIONLESS: &str = "";
