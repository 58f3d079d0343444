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

mod body;
mod config;
#[cfg(unix)]
mod connections;
mod downstream;
mod http;
mod queue;
mod registry;
mod routing;
mod stream;
#[cfg(unix)]
mod workers;

#[cfg(test)]
mod tests;

#[cfg(unix)]
pub(crate) use connections::Slot;
pub(crate) use http::rebinding_refusal;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::ProxyError;
use crate::settings::{Settings, SharedJournal};
use crate::spec::UpstreamSpec;

pub use config::{Limits, Listener};
use registry::Hub;

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
        closed: Mutex::new(VecDeque::new()),
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

/// The HTTP server behind the connection gate ([`connections`]), which accepts from `public`.
#[cfg(unix)]
fn http_server(
    public: std::net::TcpListener,
    limits: Limits,
) -> std::io::Result<tiny_http::Server> {
    let (internal, listener) = crate::internal_socket::InternalSocket::bind("mcp-recovery-proxy-")?;
    let server = tiny_http::Server::from_listener(listener, None).map_err(std::io::Error::other)?;
    let internal = Arc::new(internal);
    std::thread::spawn(move || connections::run(&public, &internal, limits));
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
