//! What a rollback does in the world ([`Effects`]), and what earlier runs did about each
//! compensating call, read from the journal ([`prior_compensations`]).

use std::collections::HashMap;
use std::time::Duration;

use mcp_recovery_journal::{JournalError, Kind};
use serde_json::{Map, Value};

use crate::approval::Verdict;

/// What came back for a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A `result`.
    Result(Value),
    /// A JSON-RPC `error`.
    Error(Value),
    /// Nothing usable: timed out, the server exited, the connection broke (why).
    Lost(String),
}

/// What a rollback does in the world; implemented by the proxy session and by the `rollback`
/// command.
pub trait Effects {
    /// Sends `tools/call` and waits at most `timeout` for its answer.
    fn call_tool(&mut self, name: &str, arguments: &Map<String, Value>, timeout: Duration)
    -> Reply;
    /// Asks whether a compensating call of an `ask` policy may run.
    fn approve(&mut self, impact: &Value) -> Verdict;
    /// Appends one record to the journal (a no-op without a journal).
    fn journal(&mut self, kind: Kind, fields: Map<String, Value>) -> Result<(), JournalError>;
    /// Why nothing more can be sent (an earlier call timed out on the connection, the server
    /// exited), asked before each compensation's intent is journaled: such a compensation is
    /// journaled as not sent, and a rerun sends it.
    fn unsent(&mut self) -> Option<String> {
        None
    }
    /// Offers a compensating call the policy's `[[approvals]]` gate to its quorum and waits for
    /// it: the verdict and the members of its approval record. `None` when this run takes no
    /// decisions, which refuses the compensation.
    fn approve_quorum(
        &mut self,
        impact: &Value,
        arguments: &Map<String, Value>,
        class: crate::classify::Class,
    ) -> Option<(Verdict, Map<String, Value>)> {
        let _ = (impact, arguments, class);
        None
    }
}

/// What earlier runs did about one call's compensation, read from the journal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Prior {
    /// Compensation attempts sent (or about to be: an intent is journaled before sending).
    pub intents: u32,
    /// Compensation attempts the server answered (a result, successful or not, or a JSON-RPC
    /// error). An attempt with no answer (no outcome, or one with `result: null` and a
    /// `reason`: timed out, the server exited) has an unknown outcome.
    pub outcomes: u32,
    /// True when a recorded outcome succeeded.
    pub succeeded: bool,
}

/// The key of one compensating call in [`prior_compensations`]: the journal's `call` member (as
/// JSON text), the `part` member for the further calls of an undo that makes several (part 1,
/// 2, …; the first call's records have no `part`) and the compensating tool's `name`, so a
/// record of another tool never counts for this one.
pub fn prior_key(call: &Value, part: usize, name: &str) -> String {
    format!("{call}/{part}/{name}")
}

/// Earlier compensations of a session, keyed by [`prior_key`].
pub fn prior_compensations(
    records: &[Map<String, Value>],
    session: &str,
) -> HashMap<String, Prior> {
    let mut prior: HashMap<String, Prior> = HashMap::new();
    for record in records {
        if record.get("session").and_then(Value::as_str) != Some(session) {
            continue;
        }
        let kind = record
            .get("kind")
            .and_then(Value::as_str)
            .and_then(Kind::parse);
        let part = record.get("part").and_then(Value::as_u64).unwrap_or(0);
        let key = prior_key(
            record.get("call").unwrap_or(&Value::Null),
            usize::try_from(part).unwrap_or(usize::MAX),
            record
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
        match kind {
            Some(Kind::CompensationIntent) => prior.entry(key).or_default().intents += 1,
            Some(Kind::CompensationOutcome) if answered(record) => {
                let entry = prior.entry(key).or_default();
                entry.outcomes += 1;
                entry.succeeded |= succeeded(record.get("result"));
            }
            _ => {}
        }
    }
    prior
}

/// Whether a `compensation.outcome` records an answer of the server (not a lost one).
fn answered(record: &Map<String, Value>) -> bool {
    record.get("error").is_some() || record.get("result").is_some_and(|r| !r.is_null())
}

pub(super) fn succeeded(result: Option<&Value>) -> bool {
    match result {
        Some(Value::Object(result)) => result.get("isError") != Some(&Value::Bool(true)),
        _ => false,
    }
}
