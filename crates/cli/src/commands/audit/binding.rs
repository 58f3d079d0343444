//! `audit verify --policy FILE`: each quorum approval tied to the one call it approved. The
//! decisions of an approval sign its request id and call digest; a call an `[[approvals]]` rule
//! gates runs under the latest approval of its session, tool and client request (as the quorum
//! check finds it), and that approval must have decided no other call, and its `callDigest`
//! must be the digest of the call as journaled (`spec/journal.md`, "Quorum decisions"). A call
//! journaled `redacted: true` with a secret replaced by `***` in its arguments does not
//! recompute: that is a note, not a fault; without `***` in them its arguments are the ones sent,
//! and a digest that does not recompute is a fault whatever `redacted` says.

use std::collections::HashMap;

use mcp_recovery_base::text::{REDACTED, escape_controls};
use mcp_recovery_model::holds_text;
use mcp_recovery_proxy::{PolicyFile, call_digest};
use serde_json::{Map, Value, json};

use crate::audit_quorum::{Gated, gated};

/// What ties an approval to a call that is not the call it approved (one line per call), and
/// the calls whose digest cannot be recomputed because the journal holds them redacted.
pub fn check(records: &[Map<String, Value>], policy: &PolicyFile) -> (Vec<String>, Vec<String>) {
    // Each approval request id, with the call it decided first and that call's seq.
    let mut decided: HashMap<String, (String, String)> = HashMap::new();
    let (mut problems, mut notes) = (Vec::new(), Vec::new());
    for Gated {
        record,
        approval,
        session,
        name,
        shown,
        ..
    } in gated(records, policy)
    {
        let Some(approval) = approval else {
            // No approval: the quorum check names the call.
            continue;
        };
        let (Some(id), Some(digest)) = (
            approval.get("approvalRequest").and_then(Value::as_str),
            approval.get("callDigest").and_then(Value::as_str),
        ) else {
            // No quorum approval: the quorum check names the call.
            continue;
        };
        let seq = record.get("seq").map(Value::to_string).unwrap_or_default();
        let kind = record
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // A compensation sent again (a further attempt) is the same call; a call.intent is
        // always another call, even one journaled again under the same call number.
        let again = (kind == "call.intent").then(|| record.get("seq"));
        let call = json!([session, kind, record.get("call"), record.get("part"), name, again])
            .to_string();
        match decided.get(id) {
            Some((first, at)) if *first != call => problems.push(format!(
                "{shown}: its approval request {} decided seq {at} already; an approval \
                 decides one call",
                escape_controls(id)
            )),
            Some(_) => {}
            None => {
                decided.insert(id.to_owned(), (call, seq.clone()));
            }
        }
        let recomputed = record
            .get("arguments")
            .and_then(Value::as_object)
            .map(|arguments| call_digest(&session, &name, arguments));
        if recomputed.as_deref() == Some(digest) {
            continue;
        }
        // Redaction excuses a digest that does not recompute only when it replaced something:
        // arguments without `***` are the arguments as sent, and must be the ones signed.
        let redacted = record.get("redacted") == Some(&Value::Bool(true))
            && record
                .get("arguments")
                .is_some_and(|arguments| holds_text(arguments, REDACTED));
        if redacted {
            notes.push(format!(
                "{shown}: its arguments were journaled with a secret replaced by {REDACTED}, so \
                 the call digest its approvers signed cannot be recomputed from them"
            ));
        } else {
            problems.push(format!(
                "{shown}: the call digest its approvers signed is not this call's (its tool or \
                 arguments are not those of the call they approved)"
            ));
        }
    }
    (problems, notes)
}
