//! Messages from the server: answers matched to the request they answer (the session's own
//! or the client's), its requests and notifications passed to the client, anything else
//! dropped.

use std::io::Write;

use mcp_recovery_journal::JournalError;
use mcp_recovery_plan::{Completion, TracedCall};
use serde_json::{Map, Value};

use crate::note::note;
use crate::rollback::Reply;
use crate::wire::{BATCH_REVISION, Shape, id_key, is_response, method, shape};

use super::rollback::tell;
use super::state::{CallContext, OWN_ID_PREFIX, Running, Session};

impl<W: Write> Session<W> {
    /// A message from the server.
    pub(super) fn on_server(
        &mut self,
        mut message: Value,
        text: String,
    ) -> Result<(), JournalError> {
        if is_response(&message) {
            self.observe_server_name(&message);
            let key = id_key(&message).unwrap_or_default();
            if self.waiting.contains(&key) {
                let reply = match (message.get("result"), message.get("error")) {
                    (Some(result), _) => Reply::Result(result.clone()),
                    (None, Some(error)) => Reply::Error(error.clone()),
                    (None, None) => Reply::Lost("an answer with neither result nor error".into()),
                };
                self.replies.insert(key, reply);
                return Ok(());
            }
            if key.contains(OWN_ID_PREFIX) {
                // A late answer to a request of ours that already timed out.
                return Ok(());
            }
            let Some(pending) = self.pending.remove(&key) else {
                return self.unmatched(&key, &message);
            };
            let mut text = text;
            if pending.method == "initialize"
                && let Some(Value::String(version)) = message.pointer("/result/protocolVersion")
            {
                self.revision = Some(version.clone());
            }
            let running = pending.task.as_ref().and_then(|task| {
                // Only the call's own result ends it: an error may be the task's (not
                // found, expired), so its outcome stays unknown.
                message.get("result")?;
                self.tasks.remove(task)
            });
            let call = match (pending.call, running) {
                (Some(call), _) => Some((call, pending.id.clone())),
                (None, Some(running)) => Some((running.call, running.request)),
                (None, None) => None,
            };
            if let Some((call, request)) = call {
                match self.call_answered(call, request, &mut message) {
                    Ok(true) => text = message.to_string(),
                    Ok(false) => {}
                    Err(e) => {
                        self.unjournaled(&pending.id, pending.batch, true);
                        return Err(e);
                    }
                }
            } else if pending.first_page && pending.method == "tools/list" {
                self.observe_tools(&message);
            }
            // The client hears its id as it spelled it (`1e0`, not the server's `1.0`).
            if message.get("id") != Some(&pending.id) {
                let mut respelled = message;
                respelled["id"] = pending.id.clone();
                text = respelled.to_string();
            }
            self.answer(pending.batch, text);
            return Ok(());
        }
        let shape = shape(&message);
        match message {
            // A batch of the one revision that has them: each element as if it came alone.
            Value::Array(items) if self.revision.as_deref() == Some(BATCH_REVISION) => {
                for item in items {
                    let text = item.to_string();
                    self.on_server(item, text)?;
                }
            }
            message if matches!(shape, Shape::Request(_) | Shape::Notification) => {
                if method(&message) == Some("notifications/tools/list_changed") {
                    self.tools = None;
                }
                self.send_client(&text);
            }
            // Neither a request, a notification nor an answer the proxy can match: passed on,
            // it could answer one of the client's requests with nothing journaled.
            message => {
                let why = match shape {
                    _ if message.is_array() => "a batch, in a session of another revision",
                    Shape::Invalid(why) => why,
                    _ => "an answer holding a member whose name only folds to `method`",
                };
                note(&format!("server: a message was dropped: {why}"));
            }
        }
        Ok(())
    }

    /// An answer that no waiting request of the client's is for: never passed to the client
    /// (which would take it for the answer to a request of its own, maybe a later one reusing
    /// the id). The late answer to a call given up unanswered is journaled as its outcome; any
    /// other (to another request given up, a second answer, an id the client never sent) is
    /// dropped with a note.
    fn unmatched(&mut self, key: &str, message: &Value) -> Result<(), JournalError> {
        let id = message.get("id").map(Value::to_string).unwrap_or_default();
        let given_up = self.unsettled.remove(key);
        if let Some((None, _, why)) = &given_up {
            note(&format!(
                "server: the answer with the id {id} came after its request was given up ({why}): dropped"
            ));
            return Ok(());
        }
        if let Some((Some(call), request, why)) = given_up {
            note(&format!(
                "server: the answer to call {} ({}, id {id}) came after it was given up ({why}); \
                 it is journaled, not passed to the client",
                call.number, call.name
            ));
            return self.finish_late(&call, &request, message, &why);
        }
        note(&format!(
            "server: an answer with the id {id} matches no request waiting for one: dropped"
        ));
        Ok(())
    }

    /// The answer to a call (to its `tools/call`, or to the `tasks/result` of its task): the
    /// outcome journaled, or the call kept running when the server made it a task; a failed
    /// call is followed by the policy's `on-failure`, and the answer told what it did (then
    /// `true`: the answer changed).
    fn call_answered(
        &mut self,
        call: CallContext,
        request: Value,
        message: &mut Value,
    ) -> Result<bool, JournalError> {
        let result = message.get("result").and_then(Value::as_object).cloned();
        let traced = TracedCall::new(call.name.clone(), Map::new(), result);
        if let Completion::Task(Some(task)) = traced.completion() {
            let task = task.to_owned();
            if let Some(earlier) = self.tasks.insert(task.clone(), Running { call, request }) {
                let why = format!(
                    "the server ran it as task '{task}' and then gave that id to another call"
                );
                self.finish_call(&earlier.call, &earlier.request, None, Some(&why))?;
            }
            // Bounded like the rollback window: past it, the oldest task's outcome is unknown.
            if self.tasks.len() > self.settings.rollback_window
                && let Some(oldest) = self
                    .tasks
                    .iter()
                    .min_by_key(|(_, running)| running.call.number)
                    .map(|(task, _)| task.clone())
                && let Some(running) = self.tasks.remove(&oldest)
            {
                let why = format!(
                    "the server ran it as task '{oldest}' and more than {} calls were running as tasks: its result is no longer awaited",
                    self.settings.rollback_window
                );
                self.finish_call(&running.call, &running.request, None, Some(&why))?;
            }
            return Ok(false);
        }
        let failed = traced.result.is_none() || traced.is_error();
        let mut call = call;
        if !failed && traced.completion() == Completion::Complete {
            // Taken before the outcome is journaled, so before the client has the answer.
            call.after = self.after_image(&call);
        }
        let error = message.get("error").cloned();
        self.finish_call_with(&call, &request, traced.result, None, error)?;
        if failed && let Some(report) = self.on_failure(&call)? {
            tell(message, &report.for_client(&call.name));
            return Ok(true);
        }
        Ok(false)
    }

    /// The name the server gives itself: in its `initialize` result, or (2026-07-28) in any
    /// result's `_meta`.
    pub(super) fn observe_server_name(&mut self, message: &Value) {
        let name = message
            .get("result")
            .and_then(mcp_recovery_model::server_name);
        if let Some(name) = name
            && self.server_name.as_deref() != Some(name)
        {
            self.server_name = Some(name.to_owned());
        }
    }

    pub(super) fn observe_tools(&mut self, message: &Value) {
        let complete = message
            .pointer("/result/nextCursor")
            .is_none_or(Value::is_null);
        if let (true, Some(Value::Array(tools))) = (complete, message.pointer("/result/tools")) {
            self.set_tools(tools);
        }
    }
}
