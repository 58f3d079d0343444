//! A `tools/call` from the client, stage by stage: its arguments checked, the tool classified,
//! the call gated, its intent journaled, then forwarded.

use std::io::Write;

use mcp_recovery_journal::JournalError;
use serde_json::{Map, Value};

use crate::wire::{error_response, params};

use super::journal::intent_base;
use super::state::{CallContext, Session};

impl<W: Write> Session<W> {
    /// A `tools/call` request whose id `key` is not pending.
    pub(super) fn on_call(
        &mut self,
        message: &Value,
        text: &str,
        key: String,
    ) -> Result<(), JournalError> {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if self.refused_as_too_many(&id, "tools/call") {
            return Ok(());
        }
        let (name, arguments) = match call_arguments(message) {
            Ok(call) => call,
            Err(why) => {
                self.reply(&error_response(&id, -32602, why));
                return Ok(());
            }
        };
        let classification = self.classification(&name);
        let gated = self.decide(&name, classification.class);
        let base = intent_base(&id, &name, &arguments, classification, &gated.decision.rule);
        self.open_scope()?;
        let handled = match self.admit(&id, &name, &arguments, classification, &gated, &base) {
            Ok(true) => {
                let call = self.start_call(name, arguments);
                self.journal_intent(&id, &call, base)
                    .and_then(|()| self.forward_call(key, id, call, text))
            }
            Ok(false) => match self.scope.clone() {
                Some(scope) => self.close_scope(&scope, "its call was refused"),
                None => Ok(()),
            },
            Err(e) => Err(e),
        };
        self.scope = None;
        handled
    }

    /// Numbers an admitted call and takes the before-image an overlay declares for it.
    pub(super) fn start_call(
        &mut self,
        name: String,
        arguments: Map<String, Value>,
    ) -> CallContext {
        self.calls += 1;
        let before = self.before_image(&name, &arguments);
        CallContext {
            number: self.calls,
            name,
            arguments,
            before,
            after: None,
            scope: self.scope.clone(),
        }
    }
}

/// The tool's name and arguments of a `tools/call` (absent or null arguments are none), or
/// why the request is invalid.
pub(super) fn call_arguments(
    message: &Value,
) -> Result<(String, Map<String, Value>), &'static str> {
    let params = params(message);
    let Some(Value::String(name)) = params.get("name") else {
        return Err("tools/call needs a string \"name\"");
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => return Err("tools/call \"arguments\" must be an object"),
    };
    Ok((name.clone(), arguments))
}
