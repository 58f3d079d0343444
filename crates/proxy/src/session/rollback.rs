//! The roll-back stage: what the policy's `on-failure` does after a failed call, the calls a
//! rollback covers, and what the client is told about it.

use std::collections::HashMap;
use std::io::Write;
use std::sync::PoisonError;
use std::time::Duration;

use mcp_recovery_journal::{JournalError, Kind};
use mcp_recovery_model::json::{to_value, with};
use mcp_recovery_plan::{Planner, TracedCall, parse_session_calls};
use serde_json::{Map, Value, json};

use crate::approval::Verdict;
use crate::classify::Class;
use crate::note::note;
use crate::policy::{OnFailure, OnInterrupt};
use crate::rollback::{Effects, ROLLBACK_META_KEY, Reply, Report, rollback};
use crate::wire::members;

use super::state::{CallContext, Evicted, Session};

impl<W: Write> Session<W> {
    /// The calls a rollback covers: the settled ones, then those still waiting for their answer
    /// or their task's result, which may have taken effect: never left out, they are unknown
    /// outcomes (read-only tools aside). When older calls cannot be read back, says which.
    pub(super) fn rollback_calls(&self) -> (Vec<(Value, TracedCall)>, Option<String>) {
        let (mut calls, beyond) = self.settled_calls();
        let mut running: Vec<&CallContext> = self
            .pending
            .values()
            .filter_map(|pending| pending.call.as_ref())
            .chain(self.tasks.values().map(|running| &running.call))
            .filter(|call| !self.read_only(&call.name))
            .collect();
        running.sort_by_key(|call| call.number);
        calls.extend(running.into_iter().map(|call| {
            let traced = TracedCall::new(call.name.clone(), call.arguments.clone(), None);
            (
                Value::from(call.number),
                traced.with_before(call.before.clone()),
            )
        }));
        (calls, beyond)
    }

    /// The completed calls a rollback covers: those past the window read back from the journal,
    /// then the retained ones. When the older ones cannot be read back, says which were left out.
    fn settled_calls(&self) -> (Vec<(Value, TracedCall)>, Option<String>) {
        let evicted = self.evicted;
        let retained = self.completed.clone();
        if evicted.count == 0 {
            return (retained.into(), None);
        }
        let missing = |why: &str| {
            let which = if evicted.count == 1 {
                format!("1 earlier effectful call (call {}) is", evicted.first)
            } else {
                format!(
                    "{} earlier effectful calls (calls {} to {}) are",
                    evicted.count, evicted.first, evicted.last
                )
            };
            format!(
                "{which} beyond the rollback window of {} and {why}: not compensated",
                self.settings.rollback_window
            )
        };
        let Some(journal) = &self.journal else {
            return (
                retained.into(),
                Some(missing("the proxy runs without a journal")),
            );
        };
        let path = journal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .path()
            .to_path_buf();
        let session = self.settings.session.as_str();
        let older = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                // Big results are beside the journal; the plan binds from them.
                // Only those of the calls left out of the window are needed.
                let mut evicted_call = |record: &Map<String, Value>| {
                    record
                        .get("call")
                        .and_then(Value::as_u64)
                        .is_some_and(|n| (evicted.first..=evicted.last).contains(&n))
                };
                mcp_recovery_journal::inline_out_of_line(
                    &text,
                    &path,
                    Some(session),
                    mcp_recovery_journal::READ_BACK_MAX_BYTES,
                    &mut evicted_call,
                )
                .map_err(|e| e.to_string())
            })
            .and_then(|text| parse_session_calls(&text, session).map_err(|e| e.to_string()));
        let older = match older {
            Ok(calls) => calls,
            Err(e) => {
                let why = format!("the journal cannot be read back ({e})");
                return (retained.into(), Some(missing(&why)));
            }
        };
        let mut calls: Vec<(Value, TracedCall)> = older
            .into_iter()
            .filter_map(|(key, call)| {
                let number = key.as_u64()?;
                (evicted.first..=evicted.last)
                    .contains(&number)
                    .then(|| (Value::from(number), call))
            })
            .collect();
        calls.extend(retained);
        (calls, None)
    }

    /// A call failed: the policy's `on-failure` decides what happens to the session's completed
    /// calls. Runs before the failed call's answer is forwarded, so the client sees the state
    /// after the rollback.
    /// A call that is a scope of its own has nothing else to roll back.
    pub(super) fn on_failure(
        &mut self,
        call: &CallContext,
    ) -> Result<Option<Report>, JournalError> {
        if self.rolling_back || self.server_closed.is_some() || call.scope.is_some() {
            return Ok(None);
        }
        let name = call.name.as_str();
        let run = match self.settings.policy.on_failure() {
            OnFailure::Record => false,
            OnFailure::Rollback => true,
            OnFailure::Ask => {
                let tools = self.tools.clone().unwrap_or_default();
                let (calls, beyond) = self.rollback_calls();
                let calls: Vec<TracedCall> = calls.into_iter().map(|(_, c)| c).collect();
                let plan = Planner::new(&tools).build_plan(&calls);
                let impact = with(
                    json!({"type": "rollback", "session": self.settings.session,
                        "failed": name, "beyondWindow": beyond}),
                    [("plan", to_value(&plan).unwrap_or(Value::Null))],
                );
                let timeout = self.settings.policy.approval_timeout();
                let verdict = self.settings.approver.ask(&impact, timeout);
                self.record(
                    Kind::Approval,
                    members(json!({"rollback": true, "failed": name,
                        "decision": if verdict.approved { "allow" } else { "deny" },
                        "by": verdict.by, "reason": verdict.reason})),
                )?;
                verdict.approved
            }
        };
        if !run {
            return Ok(None);
        }
        let said = format!("rolled back after '{name}' failed");
        self.roll_back(json!({"failed": name}), &said).map(Some)
    }

    /// The proxy was interrupted: the policy's `on-interrupt` decides whether the session's
    /// completed calls are rolled back before it ends.
    pub(super) fn on_interrupt(&mut self) -> Result<(), JournalError> {
        if self.rolling_back
            || self.server_closed.is_some()
            || self.settings.policy.on_interrupt() != OnInterrupt::Rollback
            || self.effects_left().is_empty()
        {
            return Ok(());
        }
        let said = format!(
            "session {} rolled back on the interrupt",
            self.settings.session
        );
        self.roll_back(json!({"interrupt": true}), &said)?;
        Ok(())
    }

    /// Rolls back every call a rollback covers, journaling `trigger` as its cause; notes what
    /// it did, after `said`.
    fn roll_back(&mut self, trigger: Value, said: &str) -> Result<Report, JournalError> {
        let (calls, beyond) = self.rollback_calls();
        self.completed.clear();
        self.evicted = Evicted::default();
        let tools = self.tools.clone().unwrap_or_default();
        let policy = self.settings.policy.clone();
        let timeout = policy.call_timeout();
        self.rolling_back = true;
        let result = rollback(
            self,
            &tools,
            &policy,
            &calls,
            &HashMap::new(),
            trigger,
            timeout,
            beyond.as_deref(),
        );
        self.rolling_back = false;
        let report = result?;
        note(&format!(
            "{said}: {} compensated, {} failed, {} skipped",
            report.compensated, report.failed, report.skipped
        ));
        for line in &report.attention {
            note(&format!("needs attention: {line}"));
        }
        Ok(report)
    }
}

/// Adds what a rollback did to the failed answer the client receives: to a result, a text item
/// and `_meta[ROLLBACK_META_KEY]`; to a JSON-RPC error, `error.data[ROLLBACK_META_KEY]` with the
/// same text in its `text` member. A member the server sent in another shape (a `content` or
/// `_meta` that is not what MCP says, a `data` that is not an object) is left as it is.
pub(super) fn tell(answer: &mut Value, (meta, text): &(Value, String)) {
    if let Some(Value::Object(result)) = answer.get_mut("result") {
        if let Value::Array(content) = result
            .entry("content")
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            content.push(json!({"type": "text", "text": text}));
        }
        if let Value::Object(own) = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()))
        {
            own.insert(ROLLBACK_META_KEY.to_owned(), meta.clone());
        }
    } else if let Some(Value::Object(error)) = answer.get_mut("error") {
        // Clients show a model the error's message, not its data: it says it too.
        if let Some(Value::String(message)) = error.get_mut("message") {
            message.push_str(" — ");
            message.push_str(text);
        }
        let data = error
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(data) = data {
            let mut told = meta.clone();
            told["text"] = Value::String(text.clone());
            data.insert(ROLLBACK_META_KEY.to_owned(), told);
        }
    }
}

impl<W: Write> Effects for Session<W> {
    fn call_tool(
        &mut self,
        name: &str,
        arguments: &Map<String, Value>,
        timeout: Duration,
    ) -> Reply {
        let mut params = with(
            json!({"name": name}),
            [("arguments", Value::Object(arguments.clone()))],
        );
        if let Some(meta) = &self.request_meta {
            params["_meta"] = Value::Object(meta.clone());
        }
        self.request_upstream("tools/call", params, timeout)
    }

    fn approve(&mut self, impact: &Value) -> Verdict {
        let timeout = self.settings.policy.approval_timeout();
        self.settings.approver.ask(impact, timeout)
    }

    fn journal(&mut self, kind: Kind, fields: Map<String, Value>) -> Result<(), JournalError> {
        self.record(kind, fields)
    }

    fn approve_quorum(
        &mut self,
        impact: &Value,
        arguments: &Map<String, Value>,
        class: Class,
    ) -> Option<(Verdict, Map<String, Value>)> {
        let (verdict, record) = self.ask_quorum(impact, arguments, class);
        Some((verdict, record?))
    }

    fn unsent(&mut self) -> Option<String> {
        let reason = self.server_closed.as_ref()?;
        Some(format!("the server exited ({reason})"))
    }
}
