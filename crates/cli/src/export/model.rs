//! A journal read as what happened: per session, its tool calls and compensations (each from
//! its intent to its outcome), its rollbacks and the approvals that decided them. Both export
//! formats are written from this one reading.

/// A record's place: its line, `seq`, time and hash.
#[derive(Debug, Clone)]
pub struct Place {
    /// The `seq` member (the line number when it has none).
    pub seq: u64,
    /// The `time` member as written.
    pub time_text: String,
    /// `time` in nanoseconds since the Unix epoch.
    pub time: u64,
    /// The `hash` member when it is 64 lowercase hex digits, else the sha256 of the line (a
    /// journal exported with `--unverified`).
    pub hash: String,
}

/// A value's size and digest: the bytes of its JSON text as the journal holds it, never the
/// value itself.
#[derive(Debug, Clone)]
pub struct Body {
    /// Bytes of the JSON text.
    pub size: u64,
    /// Lowercase hex sha256 of the JSON text.
    pub sha256: String,
}

/// How a call or compensation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A result without `isError`.
    Ok,
    /// A result with `isError: true`.
    ToolError,
    /// A JSON-RPC error, with its code's text (empty when it has none).
    RpcError(String),
    /// `result: null`: the outcome is unknown (timed out, cancelled, the server exited).
    Unknown(String),
    /// An intent with no outcome record.
    Missing,
    /// Refused by an approval: never sent.
    Refused,
}

impl Outcome {
    /// The outcome in one word or two, as the CSV shows it.
    pub fn label(&self) -> String {
        match self {
            Outcome::Ok => "ok".into(),
            Outcome::ToolError => "tool-error".into(),
            Outcome::RpcError(code) if code.is_empty() => "error".into(),
            Outcome::RpcError(code) => format!("error {code}"),
            Outcome::Unknown(reason) => format!("unknown: {reason}"),
            Outcome::Missing => "no-outcome".into(),
            Outcome::Refused => "refused".into(),
        }
    }

    /// Why this is a failure, or `None` when it is not.
    pub fn failure(&self) -> Option<String> {
        match self {
            Outcome::Ok => None,
            Outcome::ToolError => Some("the tool returned isError: true".into()),
            Outcome::RpcError(code) => Some(format!("JSON-RPC error {code}").trim().to_owned()),
            Outcome::Unknown(reason) => Some(format!("outcome unknown: {reason}")),
            Outcome::Missing => Some("no outcome was recorded".into()),
            Outcome::Refused => Some("refused: never sent".into()),
        }
    }

    /// The `error.type` of the semantic conventions.
    pub fn error_type(&self) -> Option<String> {
        match self {
            Outcome::Ok => None,
            Outcome::ToolError => Some("tool_error".into()),
            Outcome::RpcError(code) if !code.is_empty() => Some(code.clone()),
            Outcome::Unknown(reason) if reason == "timed out" => Some("timeout".into()),
            _ => Some("_OTHER".into()),
        }
    }
}

/// An approval record.
#[derive(Debug, Clone)]
pub struct Approval {
    /// Its place.
    pub place: Place,
    /// `allow` or `deny`.
    pub decision: String,
    /// String members worth showing: `by`, `rule`, `reason`, and an approver's identity.
    pub details: Vec<(&'static str, String)>,
    /// For a quorum: each counted decision's approver and key id (`slack:USER` for a Slack
    /// decision), in the order they were counted.
    pub deciders: Vec<(String, String)>,
}

impl Approval {
    /// `allow by command`; for a quorum, `allow by quorum: alice (KEY_ID), bob (slack:USER)`.
    pub fn label(&self) -> String {
        let label = match self.details.iter().find(|(k, _)| *k == "by") {
            Some((_, by)) => format!("{} by {by}", self.decision),
            None => self.decision.clone(),
        };
        if self.deciders.is_empty() {
            return label;
        }
        let deciders: Vec<String> = self
            .deciders
            .iter()
            .map(|(name, id)| format!("{name} ({id})"))
            .collect();
        format!("{label}: {}", deciders.join(", "))
    }
}

/// Whether an operation is a client's call or a rollback's compensation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// A `tools/call` of the client.
    Call,
    /// A compensating call of a rollback.
    Compensation,
}

/// A call or a compensation.
#[derive(Debug, Clone)]
pub struct Op {
    /// Which.
    pub kind: OpKind,
    /// The tool called.
    pub tool: String,
    /// The proxy's class of the tool (calls only).
    pub class: Option<String>,
    /// The call number within the session (of the call undone, for a compensation).
    pub call: Option<String>,
    /// The client's JSON-RPC id, as text.
    pub request: Option<String>,
    /// For a compensation: the tool it undoes and the attempt number.
    pub undoes: Option<String>,
    /// The attempt number of a compensation.
    pub attempt: Option<String>,
    /// For a further call of an undo that makes several: its place (1, 2, …).
    pub part: Option<String>,
    /// The intent (or, for a refused call, the approval).
    pub start: Place,
    /// The outcome record.
    pub end: Option<Place>,
    /// How it ended.
    pub outcome: Outcome,
    /// The arguments' size and digest.
    pub arguments: Option<Body>,
    /// The result's size and digest.
    pub result: Option<Body>,
    /// The approvals that decided it.
    pub approvals: Vec<Approval>,
    /// The rollback it belongs to (index in the session's rollbacks).
    pub rollback: Option<usize>,
}

impl Op {
    /// Milliseconds from intent to outcome.
    pub fn duration_ms(&self) -> Option<u64> {
        self.end
            .as_ref()
            .map(|end| end.time.saturating_sub(self.start.time) / 1_000_000)
    }
}

/// A rollback: from `rollback.start` to `rollback.end`.
#[derive(Debug, Clone)]
pub struct Rollback {
    /// `rollback.start`.
    pub start: Place,
    /// `rollback.end`, when it was written.
    pub end: Option<Place>,
    /// The time of its last record.
    pub last: u64,
    /// The counts of `rollback.end` (`compensated`, `already`, `failed`, `skipped`).
    pub counts: Vec<(&'static str, String)>,
    /// Its `compensation.skip` records: place, call, tool, status.
    pub skips: Vec<(Place, Vec<(&'static str, String)>)>,
    /// Approvals of the rollback itself (an on-failure `ask`).
    pub approvals: Vec<Approval>,
}

impl Rollback {
    /// Why the rollback counts as failed, if it does.
    pub fn failure(&self) -> Option<String> {
        if self.end.is_none() {
            return Some("the rollback did not finish (no rollback.end)".into());
        }
        let failed = self
            .counts
            .iter()
            .find(|(k, _)| *k == "failed")
            .map(|(_, v)| v.as_str());
        match failed {
            Some(n) if n != "0" => Some(format!("{n} compensation(s) failed")),
            _ => None,
        }
    }
}

/// One session of the journal.
#[derive(Debug, Clone)]
pub struct Session {
    /// The `session` member.
    pub id: String,
    /// Its first record.
    pub first: Place,
    /// The time of its last record.
    pub last: u64,
    /// Calls and compensations, in the order their first record was written.
    pub ops: Vec<Op>,
    /// Rollbacks, in order.
    pub rollbacks: Vec<Rollback>,
    /// Approvals that decided nothing else in the journal.
    pub approvals: Vec<Approval>,
    /// How the proxy reached the server, from `session.start`: `tcp` for a URL, `pipe` for a
    /// command (the conventions' `network.transport`).
    pub transport: Option<&'static str>,
}
