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

mod ambiguous;
mod approval;
mod approvals_endpoint;
mod ask_quorum;
mod classify;
mod error;
mod event;
mod http_upstream;
#[cfg(unix)]
mod internal_socket;
mod interrupt;
mod listen;
mod names;
mod note;
mod overlays;
mod policy;
mod quorum;
mod rollback;
mod scripted;
mod session;
mod settings;
mod slack;
mod spec;
mod stdio;
mod unfinished;
mod upstream;
mod webhooks;
mod wire;

pub use approval::{Approver, Verdict, describe};
pub use approvals_endpoint::serve_approvals;
pub use ask_quorum::ask_quorum;
pub use classify::{Class, Classification, Source, classify};
pub use error::{ProxyError, new_session_id};
pub use event::Event;
pub use interrupt::interrupt;
pub use listen::{Limits, Listener, serve};
pub use names::{fold_name, glob_match};
pub use overlays::{NamedOverlay, Overlays};
pub use policy::{
    Action, ApprovalRule, ApproverEntry, ClassActions, Decision, Fetch, Notify, NotifyFormat,
    OnFailure, OnInterrupt, Policy, PolicyError, PolicyFile, ToolRule,
};
pub use quorum::{
    Board, DECISION_TYPE, Outcome, Pending, Refusal, call_digest, canonical, parse_rfc3339,
    rfc3339, unix_now,
};
pub use rollback::{
    Effects, Prior, ROLLBACK_META_KEY, Reply, Report, prior_compensations, prior_key, rollback,
};
pub use scripted::{ScriptRun, run_scripted};
pub use session::{Session, redacted_record};
pub use settings::{Closing, DEFAULT_ROLLBACK_WINDOW, End, Settings, SharedJournal};
pub use slack::{MAX_AGE_SECS as SLACK_MAX_AGE_SECS, SlackHeaders};
pub use spec::UpstreamSpec;
pub use stdio::{run_on_stdio, run_stdio};
pub use unfinished::{Unfinished, unfinished};
pub use upstream::{HttpUpstream, Launch, ScriptedUpstream, StdioUpstream, Upstream};
pub use wire::{Line, REQUEST_METHODS, parse_line, read_lines};
