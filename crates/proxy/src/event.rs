//! What a session's reader threads hand it: one line from either side.

use crate::wire::Line;

/// Something that happened on either side.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A line from the client.
    Client(Line),
    /// A line from the server.
    Server(Line),
}

/// Messages buffered between a reader thread and the session (backpressure beyond it).
pub(crate) const EVENT_BUFFER: usize = 1024;
