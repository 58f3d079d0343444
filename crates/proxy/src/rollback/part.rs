//! One compensating call of a rollback step: resumed from what earlier runs journaled, gated by
//! the policy, sent (retried when idempotent) and journaled. A step makes one such call, or
//! several in order for an overlay's undo with further calls (`then`); the records of the
//! further ones carry `part` (1, 2, …).

use std::time::Duration;

use mcp_recovery_base::text::{escape_controls, excerpt};
use mcp_recovery_journal::{JournalError, Kind};
use mcp_recovery_model::json::with;
use mcp_recovery_model::{Hint, Tool};
use mcp_recovery_plan::{PlannedCall, TracedCall};
use serde_json::{Map, Value, json};

use super::effects::{Effects, Prior, Reply, succeeded};
use crate::approval::Verdict;
use crate::classify::classify;
use crate::policy::{Action, Policy};
use crate::wire::members;

/// How one compensating call ended; anything but `Done` stops its step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartEnd {
    /// It succeeded, in this run (`now`) or an earlier one.
    Done { now: bool },
    /// An earlier run sent it and the server answered with a failure.
    AlreadyFailed,
    /// Not sent: its outcome from an earlier run is unknown and it is not idempotent, or the
    /// connection could take no more.
    Skipped,
    /// Refused by the policy or an approver, or sent without success.
    Failed,
}

/// One compensating call of a step and what is known about it.
pub(super) struct Part<'a> {
    /// The journal's `call` member of the call undone.
    pub id: &'a Value,
    /// The call undone.
    pub call: &'a TracedCall,
    /// The compensating call.
    pub planned: &'a PlannedCall,
    /// Its place among the step's calls (0 for the first) and how many there are.
    pub index: usize,
    pub of: usize,
    /// What earlier runs did about it.
    pub prior: Prior,
    pub timeout: Duration,
    /// The declared retries (made only when the compensator is idempotent).
    pub max_retries: Option<u64>,
}

impl Part<'_> {
    /// `fields` with the journal's `call` member, the call's arguments when `arguments`, and
    /// `part` for a further call.
    fn record(&self, fields: Value, arguments: bool) -> Map<String, Value> {
        let mut record = members(with(fields, [("call", self.id.clone())]));
        if arguments {
            record.insert(
                "arguments".into(),
                Value::Object(self.planned.arguments.clone()),
            );
        }
        if self.index > 0 {
            record.insert("part".into(), Value::from(self.index));
        }
        record
    }

    /// The compensating tool as messages name it, with its place when the step makes several.
    fn label(&self) -> String {
        if self.of > 1 {
            format!(
                "'{}' (call {} of {})",
                self.planned.name,
                self.index + 1,
                self.of
            )
        } else {
            format!("'{}'", self.planned.name)
        }
    }

    /// Resumes, gates, sends and journals the call; what needs attention goes to `attention`.
    pub(super) fn run(
        &self,
        effects: &mut dyn Effects,
        tools: &[Tool],
        policy: &Policy,
        attention: &mut Vec<String>,
    ) -> Result<PartEnd, JournalError> {
        let (call, planned, label) = (self.call, self.planned, self.label());
        let skip = |effects: &mut dyn Effects, status: &str, reason: &str| {
            effects.journal(
                Kind::CompensationSkip,
                self.record(
                    json!({"name": call.name, "status": status, "reason": reason}),
                    false,
                ),
            )
        };
        let compensator = tools.iter().find(|t| t.name == planned.name);
        let idempotent = compensator.and_then(|t| t.hint(Hint::Idempotent)) == Some(true);
        if self.prior.outcomes > 0 {
            let how = if self.prior.succeeded {
                "succeeded"
            } else {
                "failed"
            };
            skip(
                effects,
                "already-compensated",
                &format!("an earlier rollback sent {label} and it {how}"),
            )?;
            if self.prior.succeeded {
                return Ok(PartEnd::Done { now: false });
            }
            attention.push(format!(
                "{}: its compensation {label} failed in an earlier rollback",
                self.named()
            ));
            return Ok(PartEnd::AlreadyFailed);
        }
        if self.prior.intents > 0 && !idempotent {
            let reason = format!(
                "an earlier rollback sent {label} and its outcome is unknown; it is not idempotent, so it is not sent again"
            );
            skip(effects, "compensation-unknown", &reason)?;
            attention.push(format!("{}: {reason}", self.named()));
            return Ok(PartEnd::Skipped);
        }
        if let Some(refused) = self.gate(effects, policy, compensator)? {
            attention.push(format!(
                "{}: its compensation {label} was refused ({refused})",
                self.named()
            ));
            return Ok(PartEnd::Failed);
        }
        let retries = if idempotent {
            self.max_retries.unwrap_or(0)
        } else {
            0
        };
        let mut sent = 0;
        let mut last = String::new();
        for attempt in 1..=retries.saturating_add(1) {
            if let Some(why) = effects.unsent() {
                let reason =
                    format!("{label} was not sent ({why}); run the rollback again to send it");
                skip(effects, "not-sent", &reason)?;
                attention.push(format!("{}: {reason}", self.named()));
                break;
            }
            sent += 1;
            // The class the policy judged it by, so an audit applies the same `[[approvals]]`.
            let class = classify(compensator).class.as_str();
            let base = json!({"name": planned.name, "undoes": call.name, "attempt": attempt,
                "class": class});
            effects.journal(Kind::CompensationIntent, self.record(base.clone(), true))?;
            let reply = effects.call_tool(&planned.name, &planned.arguments, self.timeout);
            let mut outcome = self.record(base, true);
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
                return Ok(PartEnd::Done { now: true });
            }
            last = why_not(&reply);
            if let Reply::Lost(_) = reply
                && !idempotent
            {
                break;
            }
        }
        if sent == 0 {
            return Ok(PartEnd::Skipped);
        }
        attention.push(format!(
            "{}: its compensation {label} did not succeed ({last})",
            self.named()
        ));
        Ok(PartEnd::Failed)
    }

    /// How a notice names the call undone.
    fn named(&self) -> String {
        named(self.id, &self.call.name, &self.call.arguments)
    }

    /// Compensating calls go through the same policy as the calls they undo: `Some(why)` when
    /// this one is refused. A decision taken is journaled as an approval.
    fn gate(
        &self,
        effects: &mut dyn Effects,
        policy: &Policy,
        compensator: Option<&Tool>,
    ) -> Result<Option<String>, JournalError> {
        let (call, planned) = (self.call, self.planned);
        let class = classify(compensator);
        let decision = policy.decide(&planned.name, class.class);
        let mut impact = with(
            json!({
                "type": "compensation",
                "undoes": call.name,
                "tool": planned.name,
                "class": class.class.as_str(),
                "rule": decision.rule,
            }),
            [("arguments", Value::Object(planned.arguments.clone()))],
        );
        if self.index > 0 {
            impact["part"] = Value::from(self.index);
        }
        let mut quorum = Map::new();
        let verdict = match decision.action {
            Action::Deny => Verdict {
                approved: false,
                by: "policy",
                reason: format!("denied by {}", decision.rule),
            },
            _ if policy.quorum(&planned.name, class.class).is_some() => {
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
                }
            }
            Action::Allow => return Ok(None),
            Action::Ask => effects.approve(&impact),
        };
        let mut record = self.record(
            json!({
                "name": planned.name, "compensation": true,
                "decision": if verdict.approved { "allow" } else { "deny" },
                "by": verdict.by, "rule": decision.rule, "reason": verdict.reason,
            }),
            true,
        );
        record.extend(quorum);
        effects.journal(Kind::Approval, record)?;
        Ok((!verdict.approved).then_some(verdict.reason))
    }
}

/// Why a compensating call did not succeed, in a few words the server gave: the text of a
/// result with `isError: true`, the message of a JSON-RPC error, or why no answer came.
fn why_not(reply: &Reply) -> String {
    const MAX_CHARS: usize = 200;
    let said = match reply {
        Reply::Result(result) => {
            let text = result
                .as_object()
                .map(mcp_recovery_model::text_items)
                .unwrap_or_default();
            if text.is_empty() {
                "the server answered isError: true".to_owned()
            } else {
                format!("the server answered: {}", text.join(" "))
            }
        }
        Reply::Error(error) => format!(
            "the server answered with an error: {}",
            error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)")
        ),
        Reply::Lost(reason) => reason.clone(),
    };
    mcp_recovery_base::text::excerpt(&said, MAX_CHARS)
}

/// The longest excerpt of a call's arguments a notice quotes, in characters.
pub(super) const ARGUMENTS_SHOWN: usize = 160;

/// How a notice names a call: its tool, its number in the journal and its arguments, so an
/// agent can tell two calls of one tool apart.
pub(super) fn named(call: &Value, name: &str, arguments: &Map<String, Value>) -> String {
    let shown = excerpt(
        &Value::Object(arguments.clone()).to_string(),
        ARGUMENTS_SHOWN,
    );
    format!("'{}' (call {call}, {shown})", escape_controls(name))
}
