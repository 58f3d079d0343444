//! Messages from the server: answers matched to the request they answer (the session's own
//! or the client's), everything else passed to the client.

use std::io::Write;

use mcp_recovery_journal::JournalError;
use serde_json::Value;

use crate::rollback::Reply;
use crate::wire::{id_key, is_response, method};

use super::rollback::tell;
use super::state::{OWN_ID_PREFIX, Session};

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
            let mut slot = None;
            let mut text = text;
            if let Some(pending) = self.pending.remove(&key) {
                if pending.method == "initialize"
                    && let Some(Value::String(version)) = message.pointer("/result/protocolVersion")
                {
                    self.revision = Some(version.clone());
                }
                if let Some(call) = &pending.call {
                    let result = message.get("result").and_then(Value::as_object).cloned();
                    let failed = match &result {
                        Some(result) => result.get("isError") == Some(&Value::Bool(true)),
                        None => true,
                    };
                    let error = message.get("error").cloned();
                    self.finish_call_with(call, &pending.id, result, None, error)?;
                    if failed && let Some(report) = self.on_failure(&call.name)? {
                        tell(&mut message, &report.for_client(&call.name));
                        text = message.to_string();
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
                slot = pending.batch;
            }
            self.answer(slot, text);
            return Ok(());
        }
        if method(&message) == Some("notifications/tools/list_changed") {
            self.tools = None;
        }
        self.send_client(&text);
        Ok(())
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
