//! How a session is run, how it ends, and the journal sessions share.

use std::sync::{Arc, Mutex};

use mcp_recovery_client::Secrets;
use mcp_recovery_journal::Journal;

use crate::approval::Approver;
use crate::overlays::Overlays;
use crate::policy::Policy;
use crate::quorum::Board;

/// How the session is run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The policy in force.
    pub policy: Policy,
    /// Who decides `ask`.
    pub approver: Approver,
    /// The session id journaled with every record.
    pub session: String,
    /// What the upstream is (command line or URL, no secrets), journaled at the start.
    pub upstream: String,
    /// Declarations merged into the server's tools before they are classified and planned from.
    pub overlays: Overlays,
    /// Values never written to the journal (replaced by `***`).
    pub secrets: Secrets,
    /// How many of the session's effectful completed calls are kept in memory for a rollback
    /// (see [`DEFAULT_ROLLBACK_WINDOW`]).
    pub rollback_window: usize,
    /// Where calls the policy's `[[approvals]]` gate wait for their quorum.
    pub approvals: Option<Arc<Board>>,
}

/// The default [`Settings::rollback_window`]. Older calls are read back from the journal
/// when a rollback needs them; without a journal the rollback reports them as not compensated.
pub const DEFAULT_ROLLBACK_WINDOW: usize = 1000;

/// Why a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The client closed its side.
    ClientClosed,
    /// The server exited or closed its stdout.
    ServerClosed(String),
    /// The proxy closed it.
    Closed(Closing),
}

impl End {
    /// The `cause` of the session's `session.end` record.
    pub fn cause(&self) -> &'static str {
        match self {
            End::ClientClosed => "client-closed",
            End::ServerClosed(_) => "server-exited",
            End::Closed(closing) => closing.cause(),
        }
    }
}

/// Why the proxy closes a session itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closing {
    /// The proxy was interrupted (SIGINT, SIGTERM): pending calls are given up at once, and
    /// the policy's `on-interrupt` runs.
    Interrupt,
    /// `--listen`: the session was idle past the limit.
    Idle,
    /// `--listen`: the session was closed to make room for a new one.
    Evicted,
}

impl Closing {
    /// The spelling in the journal.
    pub fn cause(self) -> &'static str {
        match self {
            Closing::Interrupt => "interrupt",
            Closing::Idle => "idle",
            Closing::Evicted => "evicted",
        }
    }
}

/// A journal several sessions append to (the records of each carry its session id).
pub type SharedJournal = Arc<Mutex<Journal>>;
