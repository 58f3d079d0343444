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
#[cfg(unix)]
mod gate;
mod http_upstream;
mod listen;
mod overlays;
mod policy;
mod quorum;
mod rollback;
mod session;
mod slack;
mod upstream;
mod wire;

use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use approval::{Approver, Verdict, describe, escape};
pub use classify::{Class, Classification, Source, classify};
pub use listen::{Limits, Listener, serve};
pub use overlays::{NamedOverlay, Overlays};
pub use policy::{
    Action, ApprovalRule, ApproverEntry, ClassActions, Decision, Fetch, Notify, NotifyFormat,
    OnFailure, Policy, PolicyError, PolicyFile, ToolRule, fold_name, glob_match,
};
pub use quorum::{
    Board, DECISION_TYPE, Outcome, Pending, Refusal, call_digest, canonical, parse_rfc3339,
    rfc3339, serve_approvals, unix_now,
};
pub use rollback::{
    Effects, Prior, ROLLBACK_META_KEY, Reply, Report, prior_compensations, rollback,
};
pub use session::{DEFAULT_ROLLBACK_WINDOW, End, Event, Session, Settings, SharedJournal};
pub use slack::{MAX_AGE_SECS as SLACK_MAX_AGE_SECS, SlackHeaders};
pub use upstream::{
    HttpUpstream, Launch, ScriptRun, ScriptedUpstream, StdioUpstream, Upstream, run_scripted,
};
pub use wire::{Line, REQUEST_METHODS, parse_line, read_lines};

use mcp_recovery_client::{Header, Secrets, Target};
use mcp_recovery_journal::{Journal, JournalError};

/// Why the proxy stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// The downstream HTTP endpoint could not be opened.
    #[error("cannot listen on {address}: {reason}")]
    Listen {
        /// The address asked for.
        address: String,
        /// Why.
        reason: String,
    },
    /// The operating system's random source failed.
    #[error("cannot draw a random session id: {0}")]
    Random(String),
}

/// The server behind the proxy, before it is started or reached.
#[derive(Debug, Clone)]
pub enum UpstreamSpec {
    /// A command run as a child on stdio (no shell).
    Stdio(Launch),
    /// A Streamable HTTP endpoint.
    Http {
        /// The URL (`http://` or `https://`).
        url: String,
        /// Headers sent with every request (values are never shown).
        headers: Vec<Header>,
    },
}

impl UpstreamSpec {
    /// The command line or the URL, without secrets (journaled at the start of a session).
    pub fn describe(&self) -> String {
        self.target().to_string()
    }

    fn target(&self) -> Target {
        match self.clone() {
            UpstreamSpec::Stdio(launch) => Target::Stdio {
                program: launch.program,
                args: launch.args,
            },
            UpstreamSpec::Http { url, headers } => Target::Http { url, headers },
        }
    }

    /// Starts the child or prepares the endpoint; its messages arrive on `events`. A child's
    /// stderr is shown with every one of `secrets` replaced.
    pub fn start(
        &self,
        timeout: Duration,
        secrets: &Secrets,
        events: SyncSender<Event>,
    ) -> Result<Upstream, ProxyError> {
        match self {
            UpstreamSpec::Stdio(launch) => StdioUpstream::spawn(launch, secrets, events)
                .map(Upstream::Stdio)
                .map_err(|source| ProxyError::Spawn {
                    command: self.describe(),
                    source,
                }),
            UpstreamSpec::Http { url, headers } => Ok(Upstream::Http(HttpUpstream::new(
                url,
                headers.clone(),
                timeout,
                events,
            ))),
        }
    }
}

/// Messages buffered between a reader thread and the session (backpressure beyond it).
pub(crate) const EVENT_BUFFER: usize = 1024;

/// Runs one stdio session: the client on this process's stdin/stdout, the server started as
/// `launch` says.
pub fn run_stdio(
    settings: Settings,
    journal: Option<Journal>,
    launch: &Launch,
) -> Result<End, ProxyError> {
    run_on_stdio(settings, journal, &UpstreamSpec::Stdio(launch.clone()))
}

/// Runs one session with the client on this process's stdin/stdout and `upstream` behind.
pub fn run_on_stdio(
    settings: Settings,
    journal: Option<Journal>,
    upstream: &UpstreamSpec,
) -> Result<End, ProxyError> {
    let (sender, events) = sync_channel(EVENT_BUFFER);
    let upstream = upstream.start(
        settings.policy.call_timeout(),
        &settings.secrets,
        sender.clone(),
    )?;
    std::thread::spawn(move || {
        wire::read_lines(std::io::stdin(), &sender, Event::Client);
    });
    let stdout = std::io::stdout();
    let journal = journal.map(|j| Arc::new(Mutex::new(j)));
    let session = Session::new(settings, journal, events, upstream, stdout.lock());
    Ok(session.run()?)
}

/// A fresh session id: 128 bits from the operating system's random source, in hex.
pub fn new_session_id() -> Result<String, ProxyError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| ProxyError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
