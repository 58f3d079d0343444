//! `mcp-recovery proxy`: an MCP proxy that sits between a client and a real server, passes
//! every message through unchanged, and around each `tools/call`
//!
//! * classifies the tool (declared recovery metadata, then MCP hints, then a conservative
//!   reading of its name; nothing known means unknown, never safe);
//! * gates the call by a [`Policy`] (`allow`, `deny`, `ask` a person or a program);
//! * journals the intent (synced to disk) before forwarding and the outcome before answering,
//!   in the hash-chained journal of `mcp-recovery-journal`;
//! * on failure, rolls the session back newest first with the compensations the tools declare
//!   ([`rollback()`]), each compensating call gated and journaled like any call.
//!
//! [`rollback()`] also drives `mcp-recovery rollback`, which resumes a recorded session's
//! rollback against a live server without compensating anything twice.

mod approval;
mod classify;
mod overlays;
mod policy;
mod rollback;
mod session;
mod upstream;
mod wire;

use std::sync::mpsc::sync_channel;

pub use approval::{Approver, Verdict, describe, escape};
pub use classify::{Class, Classification, Source, classify};
pub use overlays::{NamedOverlay, Overlays};
pub use policy::{
    Action, ClassActions, Decision, OnFailure, Policy, PolicyError, PolicyFile, ToolRule,
    glob_match,
};
pub use rollback::{Effects, Prior, Reply, Report, prior_compensations, rollback};
pub use session::{End, Event, Session, Settings};
pub use upstream::{Launch, StdioUpstream};

use mcp_recovery_journal::{Journal, JournalError};

/// Why the proxy stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The server could not be started.
    #[error("cannot start the server {command}: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The journal failed; the proxy stops rather than forward unjournaled calls.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// Messages buffered between a reader thread and the session (backpressure beyond it).
const EVENT_BUFFER: usize = 1024;

/// Runs one stdio session: the client on this process's stdin/stdout, the server started as
/// `launch` says.
pub fn run_stdio(
    settings: Settings,
    journal: Option<Journal>,
    launch: &Launch,
) -> Result<End, ProxyError> {
    let (sender, events) = sync_channel(EVENT_BUFFER);
    let upstream =
        StdioUpstream::spawn(launch, &settings.secrets, sender.clone()).map_err(|source| {
            ProxyError::Spawn {
                command: settings.upstream.clone(),
                source,
            }
        })?;
    std::thread::spawn(move || {
        wire::read_lines(std::io::stdin(), &sender, Event::Client);
    });
    let stdout = std::io::stdout();
    let session = Session::new(settings, journal, events, upstream, stdout.lock());
    Ok(session.run()?)
}

/// A fresh session id: time and process id, unique enough to tell sessions of one journal
/// apart.
pub fn new_session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{nanos:x}-{:x}", std::process::id())
}
