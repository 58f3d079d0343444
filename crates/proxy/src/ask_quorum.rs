//! Offering a call to its quorum: what the proxy does for a call or a compensation the
//! policy's `[[approvals]]` gate, and what `mcp-recovery rollback` does for a compensation.

use std::sync::Arc;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_client::Secrets;
use mcp_recovery_model::json::with;
use serde_json::{Map, Value, json};

use crate::approval::Verdict;
use crate::classify::Class;
use crate::note::note;
use crate::policy::Policy;
use crate::quorum::{Board, Pending};
use crate::webhooks::notify;

/// Offers the call `impact` describes (its `tool`, `class`, `session`, `compensation`, or for a
/// compensating call what it `undoes`) of session `session` to the quorum of `policy`'s
/// `[[approvals]]` rule for it on `board`, and waits for it: notifies the rule's webhook, polls
/// its decisions URL, shows the arguments with `secrets` replaced. Returns the verdict and the
/// members the approval record gets (`None` when there is no board or no rule applies).
pub fn ask_quorum(
    board: Option<&Arc<Board>>,
    policy: &Policy,
    secrets: &Secrets,
    session: &str,
    impact: &Value,
    arguments: &Map<String, Value>,
    class: Class,
) -> (Verdict, Option<Map<String, Value>>) {
    let tool = impact["tool"].as_str().unwrap_or_default();
    let (Some(board), Some(rule)) = (board, policy.quorum(tool, class)) else {
        return (
            Verdict {
                approved: true,
                by: "policy",
                reason: "no quorum applies".into(),
            },
            None,
        );
    };
    let mut shown = Value::Object(arguments.clone());
    secrets.redact_value(&mut shown);
    let mut compensation = match impact.get("undoes") {
        Some(undoes) => with(json!({"undoes": undoes}), []),
        None => impact.get("compensation").cloned().unwrap_or(Value::Null),
    };
    secrets.redact_value(&mut compensation);
    let offered = Pending {
        session,
        tool,
        arguments,
        shown_arguments: shown,
        class: class.as_str(),
        compensation,
    };
    let file = &policy.file;
    let outcome = board.decide(
        rule,
        file.fetch_for(rule),
        &offered,
        policy.approval_timeout(),
        |request| {
            if let Some(hook) = file.notify_for(rule) {
                notify(hook, request);
            }
            note(&format!(
                "'{}' waits for {} approval(s) as request {}",
                escape_controls(tool),
                rule.quorum,
                request["request"].as_str().unwrap_or_default()
            ));
        },
    );
    let verdict = Verdict {
        approved: outcome.approved,
        by: "quorum",
        reason: outcome.reason,
    };
    (verdict, Some(outcome.record))
}
