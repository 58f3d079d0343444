//! Rolling a session back: the plan crate decides each step, the policy gates each
//! compensating call, and every step is journaled. Shared by the proxy's on-failure rollback and
//! `mcp-recovery rollback`.

use std::collections::HashMap;
use std::time::Duration;

use mcp_recovery_base::text::{escape_controls, excerpt};
use mcp_recovery_journal::{JournalError, Kind};
use mcp_recovery_model::json::with;
use mcp_recovery_model::{Count, Tool};
use mcp_recovery_plan::{PlannedCall, Planner, Status, TracedCall};
use serde_json::{Map, Value, json};

use crate::policy::Policy;
use crate::wire::members;

mod check;
mod effects;
mod part;

pub use effects::{Effects, Prior, Reply, prior_compensations, prior_key};
use part::{ARGUMENTS_SHOWN, Part, PartEnd, named};

/// How a rollback ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Compensations that succeeded in this run (a step whose undo makes several calls counts
    /// once, when its last call succeeded and this run made at least one of them).
    pub compensated: usize,
    /// Compensations an earlier run completed (for an undo of several calls, every call
    /// succeeded earlier).
    pub already: usize,
    /// Compensations with a call that failed (in this run or an earlier one, which is not
    /// retried), was refused or whose outcome is unknown.
    pub failed: usize,
    /// Steps not compensated: failed calls, read-only tools, those needing attention, and
    /// compensations not sent (the connection could take no more; a rerun sends them).
    pub skipped: usize,
    /// Steps whose effect stays in place with nobody undoing it (unknown outcomes,
    /// irreversible or undeclared tools, unavailable or failed compensations).
    pub attention: Vec<String>,
    /// The calls this run undid, newest first.
    pub undone: Vec<Undone>,
}

/// A call a rollback undid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Undone {
    /// Which call of the journal (its `call` member): the number a notice names it by.
    pub call: Value,
    /// Its tool.
    pub name: String,
    /// What it was called with, as journaled (secrets replaced).
    pub arguments: Map<String, Value>,
    /// The compensating tools, in the order they were called (one, or several for an undo
    /// that makes several calls).
    pub by: Vec<String>,
}

impl Report {
    /// The counts as journal fields.
    fn fields(&self) -> Map<String, Value> {
        members(json!({
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
    /// were not and why, as `_meta` JSON and as one text item a model reads. Every name and
    /// reason is escaped as for a terminal: a server's tool names and answers reach the model
    /// inert.
    pub fn for_client(&self, failed: &str) -> (Value, String) {
        let safe = |text: &str| escape_controls(text).into_owned();
        let failed = safe(failed);
        let attention: Vec<String> = self.attention.iter().map(|why| safe(why)).collect();
        let listed: Vec<Value> = self
            .undone
            .iter()
            .map(|undone| {
                let by: Vec<String> = undone.by.iter().map(|name| safe(name)).collect();
                let mut listed = json!({"call": safe(&undone.name), "compensation": by.first()});
                if by.len() > 1 {
                    listed["then"] = json!(by[1..]);
                }
                listed["callNumber"] = undone.call.clone();
                listed["arguments"] = json!(excerpt(
                    &Value::Object(undone.arguments.clone()).to_string(),
                    ARGUMENTS_SHOWN
                ));
                listed
            })
            .collect();
        let meta = json!({
            "failed": failed,
            "undone": listed,
            "notUndone": attention,
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
                .map(|undone| {
                    let by: Vec<String> = undone.by.iter().map(|name| safe(name)).collect();
                    format!(
                        "{} by '{}'",
                        named(&undone.call, &undone.name, &undone.arguments),
                        by.join("', then '")
                    )
                })
                .collect();
            text.push_str(&format!(
                " Undone, so their effects no longer stand: {}.",
                list.join(", ")
            ));
        }
        if attention.is_empty() {
            text.push_str(" Nothing else of this session was left in place.");
        } else {
            text.push_str(&format!(
                " Not undone, so their effects remain: {}.",
                attention.join("; ")
            ));
        }
        text.push_str(" Do not retry the workflow as if its earlier steps still stood.");
        (meta, text)
    }
}

/// One rollback over `calls` (journal `call` id and call, in completion order): LIFO, each step
/// decided by the plan crate, each compensation gated by `policy`, retried only when the
/// compensator is idempotent (up to `maxRetries`), waiting at most `timeoutMs` (else
/// `default_timeout`). `prior` makes it resumable: a compensation the server answered is never
/// re-sent; one whose outcome is unknown is re-sent only to an idempotent compensator; one never
/// sent (journaled as a `not-sent` skip when [`Effects::unsent`] says so) is sent. A step whose
/// undo makes several calls makes them in order, each gated, journaled (with `part`) and resumed
/// on its own; the first that does not succeed stops the step. A step with a check (an undo
/// from a before-image whose overlay declares `unchanged`) is made only when the read, made
/// again before its first call, still returns the after-image; otherwise it is skipped as
/// needing attention (`changed`, or `unchecked` when the read cannot be made or answered).
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
        members(with(
            json!({}),
            [("trigger", trigger), ("calls", Value::Array(ids))],
        )),
    )?;
    if let Some(reason) = beyond {
        effects.journal(
            Kind::CompensationSkip,
            members(json!({"call": Value::Null, "status": "beyond-window", "reason": reason})),
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
                members(with(
                    json!({"name": call.name, "status": status, "reason": reason}),
                    [("call", id.clone())],
                )),
            )
        };
        if step.status != Status::Compensate || step.call.is_none() {
            skip(effects, step.status.as_str(), &step.reason)?;
            report.skipped += 1;
            if step.status.needs_attention() {
                report.attention.push(format!(
                    "{} ({}): {}",
                    named(id, &call.name, &call.arguments),
                    step.status,
                    step.reason
                ));
            }
            continue;
        }
        let declared = tools
            .iter()
            .find(|t| t.name == call.name)
            .and_then(|t| t.declared_recovery().into_iter().next())
            .and_then(|d| d.compensation);
        let parts: Vec<&PlannedCall> = step.calls().collect();
        // The target must still be as the call left it, unless an earlier run began the step
        // (its first call may have changed it) or nothing can be sent (the first call says so).
        let begun = parts
            .iter()
            .enumerate()
            .any(|(index, planned)| prior.contains_key(&prior_key(id, index, &planned.name)));
        if let Some(check) = &step.check
            && !begun
            && effects.unsent().is_none()
            && let Some(refused) =
                check::verify(effects, tools, policy, &call.name, check, default_timeout)
        {
            skip(effects, refused.status, &refused.reason)?;
            report.skipped += 1;
            report.attention.push(format!(
                "{} ({}): {}",
                named(id, &call.name, &call.arguments),
                refused.status,
                refused.reason
            ));
            continue;
        }
        let mut sent_now = false;
        let mut stopped = None;
        for (index, planned) in parts.iter().enumerate() {
            let part = Part {
                id,
                call,
                planned,
                index,
                of: parts.len(),
                prior: prior
                    .get(&prior_key(id, index, &planned.name))
                    .copied()
                    .unwrap_or_default(),
                timeout: declared
                    .as_ref()
                    .and_then(|c| c.timeout_ms.as_ref())
                    .map_or(default_timeout, |ms| {
                        Duration::from_millis(ms.saturating_u64())
                    }),
                max_retries: (declared.as_ref())
                    .and_then(|c| c.max_retries.as_ref())
                    .map(Count::saturating_u64),
            };
            match part.run(effects, tools, policy, &mut report.attention)? {
                PartEnd::Done { now } => sent_now |= now,
                end => {
                    stopped = Some(end);
                    break;
                }
            }
        }
        match stopped {
            None if sent_now => {
                report.compensated += 1;
                report.undone.push(Undone {
                    call: id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    by: parts.iter().map(|p| p.name.clone()).collect(),
                });
            }
            None => report.already += 1,
            Some(PartEnd::Skipped) => report.skipped += 1,
            Some(PartEnd::Failed | PartEnd::AlreadyFailed) => report.failed += 1,
            Some(PartEnd::Done { .. }) => {}
        }
    }
    effects.journal(Kind::RollbackEnd, report.fields())?;
    Ok(report)
}

#[cfg(test)]
mod tests;
