//! `audit verify --policy FILE`: every call and compensation that an `[[approvals]]` rule of the
//! policy gates ran only after its quorum of valid signed approvals, each decision re-checked
//! against the keys the policy gives its approvers, and none that a valid decision denied. A
//! Slack decision is signed with the Slack app's signing secret, which an auditor without it
//! cannot re-check: it counts for the approver whose `slack-user` it names, and a call that
//! reaches its quorum only by counting Slack decisions is noted as resting on them.

use mcp_recovery_base::text::escape_controls;
use std::collections::{HashMap, HashSet};

use mcp_recovery_journal::keys::PublicKey;
use mcp_recovery_proxy::{ApprovalRule, Class, PolicyFile, canonical};
use serde_json::{Map, Value};

/// A call or compensation that an `[[approvals]]` rule of the policy gates, with the latest
/// approval of its session and tool (and client request, for calls) when there is one.
pub struct Gated<'r> {
    /// Its `call.intent` or `compensation.intent` record.
    pub record: &'r Map<String, Value>,
    pub rule: &'r ApprovalRule,
    pub approval: Option<&'r Map<String, Value>>,
    pub session: String,
    pub name: String,
    /// `seq N 'name' (session S)`, escaped, for messages.
    pub shown: String,
}

/// Every call and compensation of the journal that the policy gates, in journal order.
pub fn gated<'r>(records: &'r [Map<String, Value>], policy: &'r PolicyFile) -> Vec<Gated<'r>> {
    let text = |record: &Map<String, Value>, name: &str| {
        record
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    // The latest approval of each session and tool (and client request, for calls).
    let mut approvals: HashMap<(String, String, String), &Map<String, Value>> = HashMap::new();
    let mut found = Vec::new();
    for record in records {
        let kind = text(record, "kind");
        let compensating = record.get("compensation") == Some(&Value::Bool(true))
            || kind.starts_with("compensation.");
        let request = if compensating {
            String::new()
        } else {
            record
                .get("request")
                .map(Value::to_string)
                .unwrap_or_default()
        };
        let key = (text(record, "session"), text(record, "name"), request);
        if kind == "approval" {
            approvals.insert(key, record);
            continue;
        }
        if kind != "call.intent" && kind != "compensation.intent" {
            continue;
        }
        let class = record
            .get("class")
            .cloned()
            .and_then(|c| serde_json::from_value::<Class>(c).ok());
        let name = &key.1;
        let Some(rule) = policy.approvals.iter().find(|r| match class {
            Some(class) => r.matches(name, class),
            None => r
                .pattern
                .as_ref()
                .is_some_and(|p| mcp_recovery_proxy::glob_match(p, name)),
        }) else {
            continue;
        };
        let shown = format!(
            "seq {} '{}' (session {})",
            record.get("seq").map(Value::to_string).unwrap_or_default(),
            escape_controls(name),
            escape_controls(&key.0)
        );
        found.push(Gated {
            record,
            rule,
            approval: approvals.get(&key).copied(),
            session: key.0.clone(),
            name: key.1.clone(),
            shown,
        });
    }
    found
}

/// What is wrong with the journal's decisions, one line per call (empty when nothing is), and
/// the calls that reached their quorum only by counting Slack decisions, which the journal
/// cannot prove (one note per call).
pub fn check(records: &[Map<String, Value>], policy: &PolicyFile) -> (Vec<String>, Vec<String>) {
    let keys: HashMap<&str, PublicKey> = policy
        .approvers
        .iter()
        .filter_map(|a| Some((a.name.as_str(), PublicKey::from_hex(&a.key).ok()?)))
        .collect();
    let (mut problems, mut notes) = (Vec::new(), Vec::new());
    for Gated {
        rule,
        approval,
        shown,
        ..
    } in gated(records, policy)
    {
        let Some(approval) = approval else {
            problems.push(format!(
                "{shown} ran with no approval record; it needs {} of {}",
                rule.quorum,
                escape_controls(&rule.of.join(", "))
            ));
            continue;
        };
        // The approvers whose approval counts: signed, and by Slack alone.
        let (mut signed, mut slack) = (HashSet::new(), Vec::new());
        let decisions = approval
            .get("decisions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for decision in &decisions {
            let approver = decision["approver"].as_str().unwrap_or_default();
            let via_slack = decision["via"] == "slack";
            let (why, verdict, what) = if via_slack {
                let why = slack_problem(policy, rule, approval, decision);
                (why, &decision["decision"], "Slack decision")
            } else {
                let why = signed_problem(&keys, rule, approval, decision);
                (why, &decision["statement"]["decision"], "decision")
            };
            match why {
                Some(why) => problems.push(format!(
                    "{shown}: the {what} of '{}' {why}",
                    escape_controls(approver)
                )),
                None if verdict == "approve" && via_slack => slack.push(approver.to_owned()),
                None if verdict == "approve" => {
                    signed.insert(approver.to_owned());
                }
                // A valid deny stops the call: one that ran was let through against it.
                None => problems.push(format!(
                    "{shown} ran although '{}' denied it{}",
                    escape_controls(approver),
                    if via_slack { " (on Slack)" } else { "" }
                )),
            }
        }
        slack.retain(|a| !signed.contains(a));
        slack.sort();
        slack.dedup();
        let valid = signed.len() + slack.len();
        if valid < rule.quorum {
            problems.push(format!(
                "{shown} ran with {valid} valid approval(s) of the {} its policy demands",
                rule.quorum
            ));
        } else if signed.len() < rule.quorum {
            let names: Vec<String> = slack
                .iter()
                .map(|a| format!("'{}'", escape_controls(a)))
                .collect();
            notes.push(format!(
                "{shown}: its quorum rests on the Slack decision(s) of {}, which the journal \
                 cannot prove: only the Slack signing secret and the body Slack sent re-check \
                 a slackSignature",
                names.join(", ")
            ));
        }
    }
    (problems, notes)
}

/// Why a signed decision does not count for its approver, `None` when it does.
fn signed_problem(
    keys: &HashMap<&str, PublicKey>,
    rule: &ApprovalRule,
    approval: &Map<String, Value>,
    decision: &Value,
) -> Option<&'static str> {
    let approver = decision["approver"].as_str().unwrap_or_default();
    let statement = &decision["statement"];
    let public = keys
        .get(approver)
        .filter(|k| Some(k.id().as_str()) == decision["key"].as_str());
    let signature = decision["signature"].as_str().unwrap_or_default();
    if !rule.of.iter().any(|n| n == approver) {
        Some("is not one of the rule's approvers")
    } else if public.is_none() {
        Some("was signed with a key the policy does not give them")
    } else if !public.is_some_and(|k| k.verify(&canonical(statement), signature)) {
        Some("has a signature that does not verify")
    } else if statement["approver"] != approver
        || statement["call"] != approval.get("callDigest").cloned().unwrap_or_default()
        || statement["request"] != approval.get("approvalRequest").cloned().unwrap_or_default()
    {
        Some("is a statement about another request, call or approver")
    } else if !expired_after(&statement["expires"], &decision["at"]) {
        Some("was counted when it had expired (its expires is not after its at)")
    } else {
        None
    }
}

/// Whether the RFC 3339 time `expires` is after `at`, both read to the second (a fraction
/// dropped), as the proxy compares them when it counts a decision.
fn expired_after(expires: &Value, at: &Value) -> bool {
    let seconds = |time: &Value| {
        time.as_str()
            .and_then(mcp_recovery_journal::time::parse_rfc3339)
    };
    matches!((seconds(expires), seconds(at)), (Some(expires), Some(at)) if expires > at)
}

/// Why a `via: "slack"` decision does not count for its approver, `None` when it does: the
/// approver is one of the rule's, the policy gives them the Slack user the entry names, and the
/// entry is about the approval's request, with the Slack headers and body digest in the form the
/// proxy records them.
fn slack_problem(
    policy: &PolicyFile,
    rule: &ApprovalRule,
    approval: &Map<String, Value>,
    decision: &Value,
) -> Option<&'static str> {
    let approver = decision["approver"].as_str().unwrap_or_default();
    let user = policy
        .approvers
        .iter()
        .find(|a| a.name == approver)
        .and_then(|a| a.slack_user.as_deref());
    if !rule.of.iter().any(|n| n == approver) {
        Some("is not one of the rule's approvers")
    } else if user.is_none() || decision["slackUser"].as_str() != user {
        Some("came from a Slack user the policy does not give them")
    } else if Some(&decision["request"]) != approval.get("approvalRequest") {
        Some("is about another request")
    } else if decision["decision"] != "approve" && decision["decision"] != "deny" {
        Some("is neither approve nor deny")
    } else if !slack_evidence(decision) {
        Some(
            "does not carry a slackTimestamp, slackSignature and bodySha256 in the form the \
             proxy records them",
        )
    } else {
        None
    }
}

/// True when a Slack decision carries `slackTimestamp` (decimal digits), `slackSignature`
/// (`v0=` and 64 lowercase hex digits) and `bodySha256` (`sha256:` and 64 of them).
fn slack_evidence(decision: &Value) -> bool {
    let hex64 = |text: Option<&str>| {
        text.is_some_and(|t| {
            t.len() == 64 && t.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
    };
    let member = |name: &str| decision[name].as_str();
    member("slackTimestamp").is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        && hex64(member("slackSignature").and_then(|s| s.strip_prefix("v0=")))
        && hex64(member("bodySha256").and_then(|s| s.strip_prefix("sha256:")))
}
