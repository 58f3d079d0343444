//! The gate stage: the policy's decision for a call, and the approval it waits for (a person,
//! a program or a quorum), journaled before anything is forwarded.

use std::io::Write;

use mcp_recovery_journal::{JournalError, Kind};
use serde_json::{Map, Value};

use crate::approval::Verdict;
use crate::ask_quorum::ask_quorum;
use crate::classify::{Class, Classification};
use crate::note::note;
use crate::policy::{Action, ApprovalRule, Decision, Policy};
use crate::wire::members;
use crate::wire::{success, tool_error};

use super::state::Session;

/// The policy's decision for a call, and why its tool counts as unlisted when it does.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Gated {
    pub(super) decision: Decision,
    pub(super) unlisted: Option<String>,
}

/// The decision for `name` of `class`: the policy's, made stricter by its `unlisted-tools`
/// action when the server does not list the tool.
pub(super) fn decide(policy: &Policy, name: &str, class: Class, unlisted: Option<String>) -> Gated {
    let mut decision = policy.decide(name, class);
    if unlisted.is_some() {
        let action = policy.unlisted_tools();
        if action.is_stricter_than(decision.action) {
            decision = Decision {
                action,
                rule: "unlisted-tools".into(),
            };
        }
    }
    Gated { decision, unlisted }
}

/// The policy's own refusal of a call it denies.
pub(super) fn denial(gated: &Gated) -> Verdict {
    let rule = &gated.decision.rule;
    Verdict {
        approved: false,
        by: "policy",
        reason: match &gated.unlisted {
            Some(why) => format!("denied by {rule}: {why}"),
            None => format!("denied by {rule}"),
        },
    }
}

/// The approval record of a verdict: the call's intent fields, what a quorum adds, and the
/// decision.
pub(super) fn approval_record(
    base: &Value,
    quorum: Option<Map<String, Value>>,
    verdict: &Verdict,
) -> Map<String, Value> {
    let mut record = members(base.clone());
    record.extend(quorum.unwrap_or_default());
    record.insert(
        "decision".into(),
        Value::from(if verdict.approved { "allow" } else { "deny" }),
    );
    record.insert("by".into(), Value::from(verdict.by));
    record.insert("reason".into(), Value::from(verdict.reason.as_str()));
    record
}

impl<W: Write> Session<W> {
    /// The gate's decision for a call to `name` of `class`.
    pub(super) fn decide(&self, name: &str, class: Class) -> Gated {
        decide(&self.settings.policy, name, class, self.unlisted(name))
    }

    /// Asks whoever the decision names (nobody for `allow`, the policy itself for `deny`, a
    /// quorum, a person or a program for `ask`), journals the verdict, and answers a refused
    /// call. True when the call may go on.
    pub(super) fn admit(
        &mut self,
        id: &Value,
        name: &str,
        arguments: &Map<String, Value>,
        classification: Classification,
        gated: &Gated,
        base: &Value,
    ) -> Result<bool, JournalError> {
        let rule = gated.decision.rule.as_str();
        let mut quorum = None;
        let verdict = match gated.decision.action {
            Action::Deny => denial(gated),
            _ if self.quorum_rule(name, classification.class).is_some() => {
                let impact = self.impact(name, arguments, classification, rule);
                let (verdict, record) = self.ask_quorum(&impact, arguments, classification.class);
                quorum = record;
                verdict
            }
            Action::Allow => return Ok(true),
            Action::Ask => {
                let impact = self.impact(name, arguments, classification, rule);
                let timeout = self.settings.policy.approval_timeout();
                self.settings.approver.ask(&impact, timeout)
            }
        };
        self.record(Kind::Approval, approval_record(base, quorum, &verdict))?;
        if !verdict.approved {
            note(&format!("refused {name}: {}", verdict.reason));
            let text = format!(
                "mcp-recovery proxy refused this call to '{name}' ({}); the server was not called",
                verdict.reason
            );
            self.reply(&success(id, tool_error(&text)));
            return Ok(false);
        }
        Ok(true)
    }

    /// The `[[approvals]]` rule a call to `name` of `class` waits on, when there is a board.
    pub(super) fn quorum_rule(&self, name: &str, class: Class) -> Option<&ApprovalRule> {
        self.settings.approvals.as_ref()?;
        self.settings.policy.quorum(name, class)
    }

    /// Offers the call `impact` describes to its quorum and waits for it ([`ask_quorum`]).
    pub(super) fn ask_quorum(
        &self,
        impact: &Value,
        arguments: &Map<String, Value>,
        class: Class,
    ) -> (Verdict, Option<Map<String, Value>>) {
        let settings = &self.settings;
        ask_quorum(
            settings.approvals.as_ref(),
            &settings.policy,
            &settings.secrets,
            self.scope(),
            impact,
            arguments,
            class,
        )
    }
}
