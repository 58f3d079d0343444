//! Messages from the client: batches split; ambiguous, invalid and duplicate requests and ids
//! the proxy cannot pass on refused; notifications and cancellations passed on, requests
//! registered and forwarded.

use std::io::Write;

use mcp_recovery_journal::JournalError;
use serde_json::Value;

use crate::ambiguous::{Finding, findings};
use crate::note::note;
use crate::wire::{
    BATCH_REVISION, REQUEST_METHODS, Shape, error_response, id_value_key, inexact_id, method,
    respelled_method, shape,
};

use super::state::{Batch, OWN_ID_PREFIX, Session};

/// Why a request's id cannot be passed on: one the server side would take for the proxy's own
/// (a string holding its prefix: the answer would go to the proxy, not the client), or a number
/// some servers cannot read exactly.
fn id_refusal(id: &Value) -> Option<String> {
    if let Value::String(text) = id
        && text.contains(OWN_ID_PREFIX)
    {
        return Some(format!(
            "a request id holding \"{OWN_ID_PREFIX}\" is reserved for the proxy's own requests upstream"
        ));
    }
    inexact_id(id)
}

impl<W: Write> Session<W> {
    /// A message or a batch from the client.
    pub(super) fn on_client(&mut self, message: Value, text: &str) -> Result<(), JournalError> {
        // Member names are judged on the text as it came: the value keeps one of two members
        // of one name, and it is the text that is forwarded.
        let mut found = findings(text);
        match message {
            Value::Array(items) => self.on_batch(items, found),
            message => match found.pop().flatten() {
                Some(finding) => {
                    self.refuse_ambiguous(&message, &finding);
                    Ok(())
                }
                None => self.on_message(message, text),
            },
        }
    }

    /// A message whose member names other parsers read differently: never forwarded. A
    /// request is answered (with its id, unless the id itself is in doubt); anything else is
    /// dropped.
    pub(super) fn refuse_ambiguous(&mut self, message: &Value, finding: &Finding) {
        let why = finding.ambiguity.describe();
        if matches!(shape(message), Shape::Notification | Shape::Response) {
            note(&format!(
                "client: a message with ambiguous member names was dropped: {why}"
            ));
            return;
        }
        note(&format!(
            "client: a request with ambiguous member names was refused: {why}"
        ));
        let id = match message.get("id") {
            Some(id) if !finding.id_unsure => id.clone(),
            _ => Value::Null,
        };
        let answer =
            format!("invalid request: ambiguous member names: {why}; it was not forwarded");
        self.reply(&error_response(&id, -32600, &answer));
    }

    /// A JSON-RPC batch: in a 2025-03-26 session each element is handled as if it came alone
    /// and the answers go back as one array; in any other (or before a revision is known)
    /// nothing is forwarded and each request gets an error.
    /// `found` holds each element's ambiguity.
    pub(super) fn on_batch(
        &mut self,
        items: Vec<Value>,
        found: Vec<Option<Finding>>,
    ) -> Result<(), JournalError> {
        if items.is_empty() {
            note("client: an empty batch was refused");
            self.send_client_value(&error_response(
                &Value::Null,
                -32600,
                "an empty batch is not a request",
            ));
            return Ok(());
        }
        if self.revision.as_deref() != Some(BATCH_REVISION) {
            let revision = match &self.revision {
                Some(revision) => format!("this session speaks {revision}"),
                None => "this session has no protocol revision yet".to_owned(),
            };
            let why = format!(
                "JSON-RPC batches exist only in MCP {BATCH_REVISION} and {revision}: nothing in the batch was forwarded"
            );
            note(&format!(
                "client: a batch of {} was refused: {why}",
                items.len()
            ));
            let errors: Vec<Value> = items
                .iter()
                .zip(found.iter().chain(std::iter::repeat(&None)))
                .filter(|(item, _)| !matches!(shape(item), Shape::Notification | Shape::Response))
                .map(|(item, finding)| {
                    let id = match item.get("id") {
                        Some(id) if finding.as_ref().is_none_or(|f| !f.id_unsure) => id.clone(),
                        _ => Value::Null,
                    };
                    error_response(&id, -32600, &why)
                })
                .collect();
            if !errors.is_empty() {
                self.send_client_value(&Value::Array(errors));
            }
            return Ok(());
        }
        let number = self.next_batch;
        self.next_batch += 1;
        self.batches.insert(number, Batch::default());
        let mut found = found.into_iter();
        for item in items {
            let finding = found.next().flatten();
            let answered = !matches!(shape(&item), Shape::Notification | Shape::Response);
            self.current = match self.batches.get_mut(&number) {
                Some(batch) if answered => {
                    batch.answers.push(None);
                    batch.open += 1;
                    Some((number, batch.answers.len() - 1))
                }
                _ => None,
            };
            let outcome = match finding {
                Some(finding) => {
                    self.refuse_ambiguous(&item, &finding);
                    Ok(())
                }
                None => {
                    let text = item.to_string();
                    self.on_message(item, &text)
                }
            };
            self.current = None;
            outcome?;
        }
        if let Some(batch) = self.batches.get_mut(&number) {
            batch.sealed = true;
        }
        self.flush_batch(number);
        Ok(())
    }

    /// One message from the client (alone or an element of a batch).
    pub(super) fn on_message(&mut self, message: Value, text: &str) -> Result<(), JournalError> {
        let key = match shape(&message) {
            Shape::Invalid(why) => {
                note(&format!("client: an invalid message was refused: {why}"));
                let answer = format!("invalid request: {why}; it was not forwarded");
                self.reply(&error_response(&Value::Null, -32600, &answer));
                return Ok(());
            }
            Shape::Response => {
                self.send_server(text);
                return Ok(());
            }
            Shape::Notification => return self.on_notification(&message, text),
            Shape::Request(key) => key,
        };
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let method = method(&message).unwrap_or_default().to_owned();
        if let Some(known) = respelled_method(&method) {
            let why = format!("the method '{method}' is spelled like '{known}' but is not it");
            note(&format!("client: a request was refused: {why}"));
            let answer = format!("invalid request: {why}; it was not forwarded");
            self.reply(&error_response(&id, -32600, &answer));
            return Ok(());
        }
        if let Some(why) = id_refusal(&id) {
            note(&format!(
                "client: a {method} whose id {id} cannot be passed on was refused: {why}"
            ));
            let answer = format!("invalid request: {why}; this {method} was not forwarded");
            self.reply(&error_response(&id, -32600, &answer));
            return Ok(());
        }
        if self.pending.contains_key(&key) || self.waiting.contains(&key) {
            note(&format!(
                "client: a {method} whose id {id} is already pending was refused"
            ));
            let answer = format!(
                "an id already pending: a request with the id {id} is unanswered; this {method} was not forwarded"
            );
            self.reply(&error_response(&id, -32600, &answer));
            return Ok(());
        }
        // The server may still answer the request given up under this id, and an answer names
        // only the id: which of the two it meant could not be told.
        if self.unsettled.contains(&key) {
            note(&format!(
                "client: a {method} reusing the id {id} of a request given up unanswered was refused"
            ));
            let answer = format!(
                "an id still in use: the request given up under the id {id} may still be \
                 answered; a request needs an id not used before in the session; this {method} \
                 was not forwarded"
            );
            self.reply(&error_response(&id, -32600, &answer));
            return Ok(());
        }
        // A 2026-07-28 client's requests carry the version, and the proxy's own copy the
        // latest one; a client that falls back to `initialize` stops carrying it.
        let meta = message
            .pointer("/params/_meta")
            .and_then(Value::as_object)
            .filter(|meta| meta.contains_key("io.modelcontextprotocol/protocolVersion"));
        if let Some(Value::String(version)) =
            meta.and_then(|meta| meta.get("io.modelcontextprotocol/protocolVersion"))
        {
            self.revision = Some(version.clone());
        }
        self.request_meta = meta.map(|meta| {
            let mut template = meta.clone();
            template.remove("progressToken");
            template
        });
        if method == "tools/call" {
            return self.on_call(&message, text, key);
        }
        let first_page =
            method == "tools/list" && message.pointer("/params/cursor").is_none_or(Value::is_null);
        let mut pending = self.awaiting(id, method, None, first_page);
        if pending.method == "tasks/result"
            && let Some(Value::String(task)) = message.pointer("/params/taskId")
        {
            pending.task = Some(task.clone());
        }
        self.forward(key, pending, text);
        Ok(())
    }

    /// A notification from the client. One whose method is a request method is a request in
    /// disguise that no gate or journal would see: dropped.
    pub(super) fn on_notification(
        &mut self,
        message: &Value,
        text: &str,
    ) -> Result<(), JournalError> {
        let method = method(message).unwrap_or_default();
        if REQUEST_METHODS.contains(&method) || respelled_method(method).is_some() {
            note(&format!(
                "client: a {method} without an id was dropped: a request method sent as a notification is never forwarded"
            ));
            return Ok(());
        }
        if method == "notifications/cancelled"
            && let Some(Value::String(request)) = message.pointer("/params/requestId")
            && request.contains(OWN_ID_PREFIX)
        {
            // No client request holds the prefix: this would cancel one of the proxy's own.
            note("client: a cancellation of a request id reserved for the proxy was dropped");
            return Ok(());
        }
        if method == "notifications/cancelled"
            && let Some(spelled) = self.on_cancelled(message)?
        {
            // The server hears the id as the request spelled it.
            let mut cancel = message.clone();
            cancel["params"]["requestId"] = spelled;
            self.send_server(&cancel.to_string());
        } else {
            self.send_server(text);
        }
        if method == "notifications/initialized" && self.tools.is_none() {
            self.fetch_tools();
        }
        Ok(())
    }

    /// Ends the cancelled request (matched by value); returns its id as the request spelled it
    /// when the cancellation spelled it otherwise.
    pub(super) fn on_cancelled(&mut self, message: &Value) -> Result<Option<Value>, JournalError> {
        let Some(request) = message.pointer("/params/requestId") else {
            return Ok(None);
        };
        let Some(key) = id_value_key(request) else {
            return Ok(None);
        };
        let Some(pending) = self.pending.remove(&key) else {
            return Ok(None);
        };
        match &pending.call {
            // The server need not answer a cancelled request: its outcome is unknown.
            Some(call) => {
                let why = Some("cancelled by the client");
                if let Err(e) = self.finish_call(call, &pending.id, None, why) {
                    self.unjournaled(&pending.id, pending.batch, true);
                    return Err(e);
                }
            }
            None => self.give_up(key, &pending.id, "cancelled by the client"),
        }
        self.forget(pending.batch);
        Ok((*request != pending.id).then_some(pending.id))
    }
}
