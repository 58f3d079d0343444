//! The forward stage: messages sent to the server, and the session's own requests to it, waited
//! for while the other side's messages keep flowing.

use std::io::Write;
use std::time::{Duration, Instant};

use mcp_recovery_journal::JournalError;
use mcp_recovery_model::json::with;
use serde_json::{Value, json};

use crate::event::MAX_PENDING;
use crate::rollback::Reply;
use crate::wire::{error_response, id_value_key, is_response};

use super::input::Input;
use super::state::{CallContext, OWN_ID_PREFIX, Pending, Session};

impl<W: Write> Session<W> {
    /// A client's request about to be forwarded: answered by the call timeout, in its batch's
    /// place when it came in one.
    pub(super) fn awaiting(
        &self,
        id: Value,
        method: String,
        call: Option<CallContext>,
        first_page: bool,
    ) -> Pending {
        Pending {
            id,
            method,
            deadline: Instant::now() + self.settings.policy.call_timeout(),
            call,
            first_page,
            batch: self.current,
            task: None,
        }
    }

    /// Forwards a client's request; its answer is awaited under `key`. At [`MAX_PENDING`]
    /// requests waiting, it is refused instead.
    pub(super) fn forward(&mut self, key: String, pending: Pending, text: &str) {
        if self.pending.len() >= MAX_PENDING {
            let answer = too_many(&pending.id, &pending.method);
            self.answer(pending.batch, answer.to_string());
            return;
        }
        self.pending.insert(key, pending);
        self.send_server(text);
    }

    /// Remembers a request other than a call, given up unanswered, while the server may still
    /// answer it (a call's outcome is journaled instead, which remembers it).
    pub(super) fn give_up(&mut self, key: String, id: &Value, why: &str) {
        if self.server_closed.is_none() {
            self.unsettled.insert(key, None, id.clone(), why.to_owned());
        }
    }

    /// True, after refusing the request of `id`, when [`MAX_PENDING`] requests wait already.
    pub(super) fn refused_as_too_many(&mut self, id: &Value, method: &str) -> bool {
        if self.pending.len() < MAX_PENDING {
            return false;
        }
        self.reply(&too_many(id, method));
        true
    }

    /// Forwards a call whose intent is journaled (when too many requests wait meanwhile, its
    /// outcome is journaled as not forwarded).
    pub(super) fn forward_call(
        &mut self,
        key: String,
        id: Value,
        call: CallContext,
        text: &str,
    ) -> Result<(), JournalError> {
        if self.pending.len() >= MAX_PENDING {
            let why = format!(
                "not forwarded: {MAX_PENDING} requests were waiting for the server's answer"
            );
            self.finish_call_with(&call, &id, None, Some(&why), None)?;
            // Never sent: no answer will come.
            self.unsettled.remove(&key);
            self.reply(&too_many(&id, "tools/call"));
            return Ok(());
        }
        let pending = self.awaiting(id, "tools/call".into(), Some(call), false);
        self.forward(key, pending, text);
        Ok(())
    }

    pub(super) fn send_server(&mut self, text: &str) {
        if let Err(e) = self.upstream.send(text) {
            self.server_closed
                .get_or_insert_with(|| format!("cannot write to it: {e}"));
        }
    }

    /// Sends a request of our own and waits for its answer, forwarding everything else.
    pub(super) fn request_upstream(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Reply {
        self.own_ids += 1;
        let id = format!("{OWN_ID_PREFIX}{}", self.own_ids);
        let key = id_value_key(&Value::from(id.as_str())).unwrap_or_default();
        let request = with(
            json!({"jsonrpc": "2.0", "id": id, "method": method}),
            [("params", params)],
        );
        self.waiting.insert(key.clone());
        self.send_server(&request.to_string());
        let deadline = Instant::now() + timeout;
        let reply = loop {
            if let Some(reply) = self.replies.remove(&key) {
                break reply;
            }
            if let Some(reason) = &self.server_closed {
                break Reply::Lost(format!("the server exited ({reason})"));
            }
            let now = Instant::now();
            if now >= deadline {
                let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": id, "reason": "timed out"}});
                self.send_server(&cancel.to_string());
                break Reply::Lost(format!("no answer within {} ms", timeout.as_millis()));
            }
            let wait = (deadline - now).min(self.next_wait());
            let outcome = match self.wait_input(wait) {
                // Answers to the server's own requests (a ping, roots/list) go on at once: the
                // server may be waiting for them before it answers us.
                Input::FromClient(message, text, _held) if is_response(&message) => {
                    self.send_server(&text);
                    Ok(())
                }
                // Everything else from the client waits until this answer is in, its bytes held
                // (so the client's reader stops reading once they reach the budget).
                client @ (Input::FromClient(..)
                | Input::ClientGarbage(..)
                | Input::ClientClosed) => {
                    self.deferred.push_back(client);
                    Ok(())
                }
                other => self.handle(other),
            };
            if let Err(e) = outcome.and_then(|()| self.expire()) {
                break Reply::Lost(format!("the journal failed: {e}"));
            }
        };
        self.waiting.remove(&key);
        reply
    }
}

/// The refusal of a request past [`MAX_PENDING`].
fn too_many(id: &Value, method: &str) -> Value {
    let message = format!(
        "mcp-recovery proxy: {MAX_PENDING} requests are waiting for the server's answer, the \
         most allowed; this {method} was not forwarded"
    );
    error_response(id, -32000, &message)
}
