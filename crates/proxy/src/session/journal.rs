//! The journal stage: every record the session writes (synced before it goes on), the outcome
//! of each call, and what a rollback will need of the completed ones.

use std::io::Write;
use std::sync::PoisonError;

use mcp_recovery_client::Secrets;
use mcp_recovery_journal::{JournalError, Kind};
use mcp_recovery_model::json::with;
use mcp_recovery_plan::{Completion, REDACTED_MEMBER, TracedCall};
use serde_json::{Map, Value, json};

use crate::classify::{Class, Classification};
use crate::note::note;
use crate::wire::members;
use crate::wire::{error_response, id_value_key};

use super::state::{CallContext, Session};

/// A record's members with every secret replaced by `***`; a record that lost one says so
/// (`redacted: true`): a value read back from it is not the one sent, and a rollback must not
/// send it as if it were.
pub fn redacted_record(secrets: &Secrets, fields: Map<String, Value>) -> Map<String, Value> {
    let mut value = Value::Object(fields);
    let redacted = secrets.redact_value(&mut value);
    let mut fields = members(value);
    if redacted {
        fields.insert(REDACTED_MEMBER.to_owned(), Value::Bool(true));
    }
    fields
}

/// A call's outcome record: the call, its `result` (`null` when unknown), then `reason` or
/// `error`, and its after-image.
fn outcome_record(
    call: &CallContext,
    request: &Value,
    result: Option<Map<String, Value>>,
    reason: Option<&str>,
    error: Option<Value>,
) -> Map<String, Value> {
    let mut record = members(with(
        json!({"call": call.number, "name": call.name}),
        [
            ("request", request.clone()),
            ("arguments", Value::Object(call.arguments.clone())),
            ("result", result.map_or(Value::Null, Value::Object)),
        ],
    ));
    if let Some(reason) = reason {
        record.insert("reason".into(), Value::from(reason));
    }
    if let Some(error) = error {
        record.insert("error".into(), error);
    }
    if let Some(after) = &call.after {
        record.insert("after".into(), Value::Object(after.clone()));
    }
    record
}

/// The fields a call's approval and intent records share: the call, its class and the rule
/// that decided it.
pub(super) fn intent_base(
    id: &Value,
    name: &str,
    arguments: &Map<String, Value>,
    classification: Classification,
    rule: &str,
) -> Value {
    with(
        json!({"name": name, "class": classification.class.as_str(),
            "classSource": classification.source.as_str(), "rule": rule}),
        [
            ("request", id.clone()),
            ("arguments", Value::Object(arguments.clone())),
        ],
    )
}

/// The intent record of `call`: the shared fields, its number and its before-image.
pub(super) fn intent_record(base: Value, call: &CallContext) -> Map<String, Value> {
    let mut record = members(base);
    record.insert("call".into(), Value::from(call.number));
    if let Some(before) = &call.before {
        record.insert("before".into(), Value::Object(before.clone()));
    }
    record
}

impl<W: Write> Session<W> {
    /// Journals the intent of `call` before the server sees it; a journal that fails stops the
    /// call (answered with an error) and the session.
    pub(super) fn journal_intent(
        &mut self,
        id: &Value,
        call: &CallContext,
        base: Value,
    ) -> Result<(), JournalError> {
        if let Err(e) = self.record(Kind::CallIntent, intent_record(base, call)) {
            note(&format!(
                "cannot journal the call, so it is not forwarded: {e}"
            ));
            self.stopping();
            self.reply(&error_response(
                id,
                -32603,
                "mcp-recovery proxy cannot write its journal; the call was not forwarded",
            ));
            return Err(e);
        }
        Ok(())
    }

    pub(super) fn record(
        &mut self,
        kind: Kind,
        fields: Map<String, Value>,
    ) -> Result<(), JournalError> {
        let scope = self.scope().to_owned();
        self.record_in(&scope, kind, fields)
    }

    /// Journals a record of the journal session `scope`.
    pub(super) fn record_in(
        &mut self,
        scope: &str,
        kind: Kind,
        fields: Map<String, Value>,
    ) -> Result<(), JournalError> {
        if let Some(journal) = &self.journal {
            let fields = redacted_record(&self.settings.secrets, fields);
            // Written under the lock, synced outside it: one sync covers the records every
            // session writes meanwhile, and this one returns only once its record is on disk.
            let pending = {
                let mut journal = journal.lock().unwrap_or_else(PoisonError::into_inner);
                journal.append_pending(scope, kind, fields)?
            };
            pending.1.wait()?;
        }
        Ok(())
    }

    pub(super) fn finish_call(
        &mut self,
        call: &CallContext,
        request: &Value,
        result: Option<Map<String, Value>>,
        reason: Option<&str>,
    ) -> Result<(), JournalError> {
        self.finish_call_with(call, request, result, reason, None)
    }

    pub(super) fn finish_call_with(
        &mut self,
        call: &CallContext,
        request: &Value,
        result: Option<Map<String, Value>>,
        reason: Option<&str>,
        error: Option<Value>,
    ) -> Result<(), JournalError> {
        let unknown = result.is_none() && error.is_none();
        let record = outcome_record(call, request, result.clone(), reason, error);
        // The outcome is on disk before the client sees the answer.
        self.record_of(call, Kind::CallOutcome, record)?;
        if let Some(scope) = &call.scope {
            self.close_scope(scope, "its call ended")?;
        }
        // Given up unanswered while the server is still there: its answer may yet come.
        if unknown
            && self.server_closed.is_none()
            && let Some(key) = id_value_key(request)
        {
            let why = reason.unwrap_or("no answer").to_owned();
            self.unsettled
                .insert(key, Some(call.clone()), request.clone(), why);
        }
        self.retain(call, result);
        Ok(())
    }

    /// The answer to a call whose outcome was journaled unknown (`why`: it timed out, the
    /// client cancelled it): journaled as the call's outcome, marked `late` with that reason,
    /// and what a rollback keeps of the call replaced by it.
    pub(super) fn finish_late(
        &mut self,
        call: &CallContext,
        request: &Value,
        message: &Value,
        why: &str,
    ) -> Result<(), JournalError> {
        let result = message.get("result").and_then(Value::as_object).cloned();
        let error = message.get("error").cloned();
        let mut record = outcome_record(call, request, result.clone(), None, error);
        record.insert("late".into(), Value::from(why));
        self.record_of(call, Kind::CallOutcome, record)?;
        let number = Value::from(call.number);
        self.completed.retain(|(kept, _)| *kept != number);
        self.retain(call, result);
        Ok(())
    }

    /// Journals a record about `call`, in its scope.
    fn record_of(
        &mut self,
        call: &CallContext,
        kind: Kind,
        fields: Map<String, Value>,
    ) -> Result<(), JournalError> {
        let scope = call
            .scope
            .clone()
            .unwrap_or_else(|| self.settings.session.clone());
        self.record_in(&scope, kind, fields)
    }

    /// True when the tool is classified read-only: its calls are never compensated.
    pub(super) fn read_only(&self, name: &str) -> bool {
        self.classes
            .get(name)
            .is_some_and(|c| c.class == Class::ReadOnly)
    }

    /// Keeps what a rollback will need of a completed call: nothing for a call that is a scope
    /// of its own, a read-only tool, a failed call or one that asked for input (none is ever
    /// compensated), else the name, the
    /// arguments and the parts of the result the planner reads. The oldest retained call leaves
    /// past the window.
    pub(super) fn retain(&mut self, call: &CallContext, result: Option<Map<String, Value>>) {
        let traced = TracedCall::new(call.name.clone(), call.arguments.clone(), result)
            .with_before(call.before.clone())
            .with_after(call.after.clone());
        if call.scope.is_some()
            || self.read_only(&call.name)
            || traced.is_error()
            || traced.completion() == Completion::InputRequired
        {
            return;
        }
        // A result an overlay reads from text keeps its text content.
        let reads_text = self.tools.iter().flatten().any(|tool| {
            tool.name == call.name
                && tool
                    .overlay_meta()
                    .is_some_and(|m| m.contains_key(mcp_recovery_model::RESULT_SECTION))
        });
        self.completed
            .push_back((Value::from(call.number), compact(traced, reads_text)));
        // Before the client sees the answer: from then on, the session is closed to make room
        // only after those without effects.
        if let Some(flag) = &self.effects_flag {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        while self.completed.len() > self.settings.rollback_window {
            let Some((Value::Number(number), _)) = self.completed.pop_front() else {
                continue;
            };
            let number = number.as_u64().unwrap_or_default();
            if self.evicted.count == 0 {
                self.evicted.first = number;
            }
            self.evicted.count += 1;
            self.evicted.last = number;
        }
    }
}

/// A call with only what the planner reads of its result: `isError` and `structuredContent`,
/// and `content` only when an overlay declares the tool's result is read from its text (text
/// content is otherwise never parsed, so it is dropped).
pub(super) fn compact(mut call: TracedCall, reads_text: bool) -> TracedCall {
    let keys: &[&str] = if reads_text {
        &["isError", "structuredContent", "content"]
    } else {
        &["isError", "structuredContent"]
    };
    let result = call.result.take().map(|mut full| {
        let mut kept = Map::new();
        for &key in keys {
            if let Some(value) = full.remove(key) {
                kept.insert(key.to_owned(), value);
            }
        }
        kept
    });
    TracedCall { result, ..call }
}
