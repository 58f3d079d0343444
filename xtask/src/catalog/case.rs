//! What a workflow is: its server, its calls, what the rollback must report and how its state is
//! observed; shared by every part of the check.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// How long one answer may take.
pub(super) const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// One tool call of a workflow or an observation.
pub(super) type Call = (&'static str, Value);

/// One workflow against one server.
pub(super) struct Case {
    /// What the messages call it.
    pub(super) label: String,
    /// `overlays/{overlay}.toml`: the server's `serverInfo.name`.
    pub(super) overlay: &'static str,
    /// The server command line.
    pub(super) server: Vec<String>,
    /// Its extra environment.
    pub(super) env: Vec<(String, String)>,
    /// Calls run through a plain proxy first: state the workflow must leave as it is.
    pub(super) setup: Vec<Call>,
    /// The workflow: every call but the last succeeds, the last fails.
    pub(super) workflow: Vec<Call>,
    /// How many compensations the rollback must run.
    pub(super) undone: usize,
    /// How many compensating calls the client must be told they made (more than `undone` when
    /// an undo makes several).
    pub(super) undo_calls: usize,
    /// Whether the failing call's outcome is unknown: a server whose every failure is a
    /// JSON-RPC internal error may have acted before it failed, so the rollback must report
    /// that call as not undone (and the state check shows it did not act).
    pub(super) unknown_failure: bool,
    /// The state, observed from outside.
    pub(super) observe: Observe,
    /// Paths a tree observation finds after the rollback and not before: what an undo moved
    /// out of the way because the server cannot delete it.
    pub(super) set_aside: Vec<&'static str>,
}

/// Where a case's state is read from.
pub(super) enum Observe {
    /// The results of the server's own read tools.
    Reads(Vec<Call>),
    /// Every file and directory below a directory, with the files' contents.
    Tree(PathBuf),
    /// The output of commands run in a directory (`git status`, …).
    Commands(PathBuf, Vec<Vec<&'static str>>),
}

pub(super) fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
