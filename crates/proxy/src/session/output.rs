//! The client side of the session: lines written to it, and a batch's answers gathered into
//! one array.

use std::io::Write;

use mcp_recovery_base::text::json_inert;
use serde_json::Value;

use super::state::{Session, Slot};

impl<W: Write> Session<W> {
    /// Writes one message to the client, every unsafe character in its strings written as a
    /// `\uXXXX` escape: the same JSON value, inert should the client's side be a terminal.
    pub(super) fn send_client(&mut self, text: &str) {
        let text = json_inert(text);
        let mut line = Vec::with_capacity(text.len() + 1);
        line.extend_from_slice(text.as_bytes());
        line.push(b'\n');
        if self
            .downstream
            .write_all(&line)
            .and_then(|()| self.downstream.flush())
            .is_err()
        {
            self.client_closed = true;
        }
    }

    pub(super) fn send_client_value(&mut self, message: &Value) {
        self.send_client(&message.to_string());
    }

    /// An answer to the client: written at once, or kept for its batch's array.
    pub(super) fn answer(&mut self, slot: Option<Slot>, text: String) {
        let Some((number, index)) = slot else {
            return self.send_client(&text);
        };
        let Some(batch) = self.batches.get_mut(&number) else {
            return self.send_client(&text);
        };
        if let Some(entry @ None) = batch.answers.get_mut(index) {
            *entry = Some(text);
            batch.open -= 1;
        }
        self.flush_batch(number);
    }

    /// A request of a batch that will get no answer (cancelled by the client).
    pub(super) fn forget(&mut self, slot: Option<Slot>) {
        if let Some((number, _)) = slot
            && let Some(batch) = self.batches.get_mut(&number)
        {
            batch.open = batch.open.saturating_sub(1);
            self.flush_batch(number);
        }
    }

    /// Sends a batch's answers as one array once all are in (nothing when none are).
    pub(super) fn flush_batch(&mut self, number: u64) {
        let done = self
            .batches
            .get(&number)
            .is_some_and(|b| b.sealed && b.open == 0);
        if !done {
            return;
        }
        let Some(batch) = self.batches.remove(&number) else {
            return;
        };
        let answers: Vec<String> = batch.answers.into_iter().flatten().collect();
        if !answers.is_empty() {
            self.send_client(&format!("[{}]", answers.join(",")));
        }
    }

    /// The proxy's own answer to the client message being handled.
    pub(super) fn reply(&mut self, message: &Value) {
        self.answer(self.current, message.to_string());
    }
}
