//! Rolling a session back: the plan crate decides each step, the policy gates each
//! compensating call, and every step is journaled. Shared by the proxy's on-failure rollback and
//! `mcp-recovery rollback`.

use std::collections::HashMap;
use std::time::Duration;

use mcp_recovery_journal::{JournalError, Kind};
use mcp_recovery_model::json::with;
use mcp_recovery_model::{Hint, Tool};
use mcp_recovery_plan::{Planner, Status, TracedCall};
use serde_json::{Map, Value, json};

use crate::approval::Verdict;
use crate::classify::classify;
use crate::policy::{Action, Policy};

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

/// Earlier compensations of a session, keyed by the journal's `call` member (as JSON text).
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
        let key = record.get("call").map(Value::to_string).unwrap_or_default();
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

fn succeeded(result: Option<&Value>) -> bool {
    match result {
        Some(Value::Object(result)) => result.get("isError") != Some(&Value::Bool(true)),
        _ => false,
    }
}

/// How a rollback ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Compensating calls that succeeded in this run.
    pub compensated: usize,
    /// Compensations an earlier run sent and the server answered (successfully or not).
    pub already: usize,
    /// Compensating calls that failed, were refused or whose outcome is unknown.
    pub failed: usize,
    /// Steps not compensated: failed calls, read-only tools, those needing attention, and
    /// compensations not sent (the connection could take no more; a rerun sends them).
    pub skipped: usize,
    /// Steps whose effect stays in place with nobody undoing it (unknown outcomes,
    /// irreversible or undeclared tools, unavailable or failed compensations).
    pub attention: Vec<String>,
    /// The calls this run undid, newest first: the call's tool and its compensating tool.
    pub undone: Vec<(String, String)>,
}

impl Report {
    /// The counts as journal fields.
    fn fields(&self) -> Map<String, Value> {
        map(json!({
            "compensated": self.compensated,
            "already": self.already,
            "failed": self.failed,
            "skipped": self.skipped,
            "attention": self.attention,
        }))
    }
}

/// The `_meta` key (and `error.data` member) under which the proxy tells the client what a
/// rollback did.
pub const ROLLBACK_META_KEY: &str = "dev.mcp-recovery/rollback";

impl Report {
    /// What the client is told with the failed result: which earlier calls were undone, which
    /// were not and why, as `_meta` JSON and as one text item a model reads.
    pub fn for_client(&self, failed: &str) -> (Value, String) {
        let undone: Vec<Value> = self
            .undone
            .iter()
            .map(|(call, by)| json!({"call": call, "compensation": by}))
            .collect();
        let meta = json!({
            "failed": failed,
            "undone": undone,
            "notUndone": self.attention,
            "counts": {
                "compensated": self.compensated,
                "already": self.already,
                "failed": self.failed,
                "skipped": self.skipped,
            },
        });
        let mut text = format!(
            "mcp-recovery: '{failed}' failed, so the earlier calls of this session were rolled back."
        );
        if self.undone.is_empty() {
            text.push_str(" No call was undone.");
        } else {
            let list: Vec<String> = self
                .undone
                .iter()
                .map(|(call, by)| format!("'{call}' (by '{by}')"))
                .collect();
            text.push_str(&format!(
                " Undone, so their effects no longer stand: {}.",
                list.join(", ")
            ));
        }
        if self.attention.is_empty() {
            text.push_str(" Nothing else was left in place.");
        } else {
            text.push_str(&format!(
                " Not undone, so their effects remain: {}.",
                self.attention.join("; ")
            ));
        }
        text.push_str(" Do not retry the workflow as if its earlier steps still stood.");
        (meta, text)
    }
}

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// One rollback over `calls` (journal `call` id and call, in completion order): LIFO, each step
/// decided by the plan crate, each compensation gated by `policy`, retried only when the
/// compensator is idempotent (up to `maxRetries`), waiting at most `timeoutMs` (else
/// `default_timeout`). `prior` makes it resumable: a compensation the server answered is never
/// re-sent; one whose outcome is unknown is re-sent only to an idempotent compensator; one never
/// sent (journaled as a `not-sent` skip when [`Effects::unsent`] says so) is sent.
/// `beyond` says which calls the rollback cannot reach (the proxy's rollback window): it is
/// journaled as a `beyond-window` skip and reported as needing attention.
#[allow(clippy::too_many_arguments)]
pub fn rollback(
    effects: &mut dyn Effects,
    tools: &[Tool],
    policy: &Policy,
    calls: &[(Value, TracedCall)],
    prior: &HashMap<String, Prior>,
    trigger: Value,
    default_timeout: Duration,
    beyond: Option<&str>,
) -> Result<Report, JournalError> {
    let mut report = Report::default();
    let ids: Vec<Value> = calls.iter().map(|(id, _)| id.clone()).collect();
    effects.journal(
        Kind::RollbackStart,
        map(with(
            json!({}),
            [("trigger", trigger), ("calls", Value::Array(ids))],
        )),
    )?;
    if let Some(reason) = beyond {
        effects.journal(
            Kind::CompensationSkip,
            map(json!({"call": Value::Null, "status": "beyond-window", "reason": reason})),
        )?;
        report.skipped += 1;
        report.attention.push(reason.to_owned());
    }
    let mut planner = Planner::new(tools);
    for (id, call) in calls.iter().rev() {
        let step = planner.resolve_step(call);
        let skip = |effects: &mut dyn Effects, status: &str, reason: &str| {
            effects.journal(
                Kind::CompensationSkip,
                map(with(
                    json!({"name": call.name, "status": status, "reason": reason}),
                    [("call", id.clone())],
                )),
            )
        };
        let Some(planned) = step
            .call
            .as_ref()
            .filter(|_| step.status == Status::Compensate)
        else {
            skip(effects, step.status.as_str(), &step.reason)?;
            report.skipped += 1;
            if step.status.needs_attention() {
                report
                    .attention
                    .push(format!("{} ({}): {}", call.name, step.status, step.reason));
            }
            continue;
        };
        let compensator = tools.iter().find(|t| t.name == planned.name);
        let idempotent = compensator.and_then(|t| t.hint(Hint::Idempotent)) == Some(true);
        let earlier = prior.get(&id.to_string()).copied().unwrap_or_default();
        if earlier.outcomes > 0 {
            let how = if earlier.succeeded {
                "succeeded"
            } else {
                "failed"
            };
            skip(
                effects,
                "already-compensated",
                &format!("an earlier rollback sent '{}' and it {how}", planned.name),
            )?;
            report.already += 1;
            if !earlier.succeeded {
                report.attention.push(format!(
                    "{}: its compensation '{}' failed in an earlier rollback",
                    call.name, planned.name
                ));
            }
            continue;
        }
        if earlier.intents > 0 && !idempotent {
            let reason = format!(
                "an earlier rollback sent '{}' and its outcome is unknown; it is not idempotent, so it is not sent again",
                planned.name
            );
            skip(effects, "compensation-unknown", &reason)?;
            report.skipped += 1;
            report.attention.push(format!("{}: {reason}", call.name));
            continue;
        }
        let declared = tools
            .iter()
            .find(|t| t.name == call.name)
            .and_then(|t| t.declared_recovery().into_iter().next())
            .and_then(|d| d.compensation);
        let timeout = declared
            .as_ref()
            .and_then(|c| c.timeout_ms)
            .map_or(default_timeout, Duration::from_millis);
        let retries = if idempotent {
            declared.as_ref().and_then(|c| c.max_retries).unwrap_or(0)
        } else {
            0
        };
        // Compensating calls go through the same policy as the calls they undo.
        let class = classify(compensator);
        let decision = policy.decide(&planned.name, class.class);
        let impact = with(
            json!({
                "type": "compensation",
                "undoes": call.name,
                "tool": planned.name,
                "class": class.class.as_str(),
                "rule": decision.rule,
            }),
            [("arguments", Value::Object(planned.arguments.clone()))],
        );
        let mut quorum = Map::new();
        let verdict = match decision.action {
            Action::Deny => Some(Verdict {
                approved: false,
                by: "policy",
                reason: format!("denied by {}", decision.rule),
            }),
            _ if policy.quorum(&planned.name, class.class).is_some() => Some(
                match effects.approve_quorum(&impact, &planned.arguments, class.class) {
                    Some((verdict, record)) => {
                        quorum = record;
                        verdict
                    }
                    None => Verdict {
                        approved: false,
                        by: "quorum",
                        reason: "it needs a quorum of approvers, and this run takes no decisions"
                            .into(),
                    },
                },
            ),
            Action::Allow => None,
            Action::Ask => Some(effects.approve(&impact)),
        };
        if let Some(verdict) = &verdict {
            let mut record = map(with(
                json!({
                    "name": planned.name, "compensation": true,
                    "decision": if verdict.approved { "allow" } else { "deny" },
                    "by": verdict.by, "rule": decision.rule, "reason": verdict.reason,
                }),
                [
                    ("call", id.clone()),
                    ("arguments", Value::Object(planned.arguments.clone())),
                ],
            ));
            record.extend(quorum);
            effects.journal(Kind::Approval, record)?;
            if !verdict.approved {
                report.failed += 1;
                report.attention.push(format!(
                    "{}: its compensation '{}' was refused ({})",
                    call.name, planned.name, verdict.reason
                ));
                continue;
            }
        }
        let mut done = false;
        let mut sent = 0;
        for attempt in 1..=retries.saturating_add(1) {
            if let Some(why) = effects.unsent() {
                let reason = format!(
                    "'{}' was not sent ({why}); run the rollback again to send it",
                    planned.name
                );
                skip(effects, "not-sent", &reason)?;
                report.attention.push(format!("{}: {reason}", call.name));
                break;
            }
            sent += 1;
            let base = with(
                json!({"name": planned.name, "undoes": call.name, "attempt": attempt}),
                [
                    ("call", id.clone()),
                    ("arguments", Value::Object(planned.arguments.clone())),
                ],
            );
            effects.journal(Kind::CompensationIntent, map(base.clone()))?;
            let reply = effects.call_tool(&planned.name, &planned.arguments, timeout);
            let mut outcome = map(base);
            match &reply {
                Reply::Result(result) => {
                    outcome.insert("result".into(), result.clone());
                }
                Reply::Error(error) => {
                    outcome.insert("result".into(), Value::Null);
                    outcome.insert("error".into(), error.clone());
                }
                Reply::Lost(reason) => {
                    outcome.insert("result".into(), Value::Null);
                    outcome.insert("reason".into(), Value::from(reason.as_str()));
                }
            }
            effects.journal(Kind::CompensationOutcome, outcome)?;
            if let Reply::Result(result) = &reply
                && succeeded(Some(result))
            {
                done = true;
                break;
            }
            if let Reply::Lost(_) = reply
                && !idempotent
            {
                break;
            }
        }
        if done {
            report.compensated += 1;
            report
                .undone
                .push((call.name.clone(), planned.name.clone()));
        } else if sent == 0 {
            report.skipped += 1;
        } else {
            report.failed += 1;
            report.attention.push(format!(
                "{}: its compensation '{}' did not succeed",
                call.name, planned.name
            ));
        }
    }
    effects.journal(Kind::RollbackEnd, report.fields())?;
    Ok(report)
}

#[cfg(test)]
mod tests;
