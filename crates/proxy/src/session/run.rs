//! The event loop: every input the session reacts to is one [`Input`], handled in turn until
//! the client closes (and its requests are answered) or the server is gone.

use std::io::Write;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use mcp_recovery_journal::{JournalError, Kind};
use serde_json::{Value, json};

use crate::note::note;
use crate::settings::{Closing, End};
use crate::wire::members;
use crate::wire::{error_response, id_value_key};

use super::input::Input;
use super::rollback::tell;
use super::state::{Pending, Running, Session, Slot};

impl<W: Write> Session<W> {
    /// Runs until the client closes (and its requests are answered) or the server exits; stops
    /// when the journal cannot be written, answering every request it forwarded first (a
    /// batch's among them in one array, without those it did not forward).
    pub fn run(mut self) -> Result<End, JournalError> {
        let end = self.serve();
        if end.is_err() {
            self.stopping();
            for pending in self.pending.take_all() {
                self.unjournaled(&pending.id, pending.batch, pending.call.is_some());
            }
            // A batch cut short sends what it holds now; the rest of it was never forwarded,
            // and whoever runs the session answers that.
            let cut: Vec<u64> = self.batches.keys().copied().collect();
            for number in cut {
                if let Some(batch) = self.batches.get_mut(&number) {
                    batch.sealed = true;
                    batch.open = 0;
                }
                self.flush_batch(number);
            }
        }
        end
    }

    fn serve(&mut self) -> Result<End, JournalError> {
        self.record(Kind::SessionStart, self.start_record(None))?;
        let end = loop {
            if let Some(input) = self.deferred.pop_front() {
                self.handle(input)?;
                continue;
            }
            if let Some(end) = self.ended()? {
                break end;
            }
            let input = self.wait_input(self.next_wait());
            self.handle(input)?;
            self.expire()?;
            if let Some(flag) = &self.effects_flag {
                let left = self.evicted.count > 0 || !self.completed.is_empty();
                flag.store(left, std::sync::atomic::Ordering::SeqCst);
            }
        };
        self.upstream.close(Duration::from_secs(2));
        self.end_tasks()?;
        let reason = match &end {
            End::ClientClosed => "client closed".to_owned(),
            End::ServerClosed(reason) => format!("server exited: {reason}"),
            End::Closed(Closing::Interrupt) => "the proxy was interrupted".to_owned(),
            End::Closed(Closing::Idle) => "idle past the limit".to_owned(),
            End::Closed(Closing::Evicted) => "closed to make room for a new session".to_owned(),
        };
        let left = self.effects_left();
        self.record(
            Kind::SessionEnd,
            members(json!({"reason": reason, "cause": end.cause(), "effectsLeft": left})),
        )?;
        Ok(end)
    }

    /// The numbers of the effectful calls no rollback has covered: those a rollback would
    /// compensate, or report as needing attention. Those past the rollback window are known
    /// only as the range from the first to the last of them (so memory stays flat), given
    /// whole: it may hold calls without effects.
    pub(super) fn effects_left(&self) -> Vec<u64> {
        let evicted = self.evicted;
        let older = (evicted.count > 0).then_some(evicted.first..=evicted.last);
        let retained = self
            .completed
            .iter()
            .filter_map(|(number, _)| number.as_u64());
        older.into_iter().flatten().chain(retained).collect()
    }

    /// How the session ends, once it does: the server gone (every waiting request answered
    /// first), or the client closed with nothing left to answer.
    pub(super) fn ended(&mut self) -> Result<Option<End>, JournalError> {
        if let Some(reason) = self.server_closed.clone() {
            self.fail_pending(&format!("the server exited ({reason})"))?;
            return Ok(Some(End::ServerClosed(reason)));
        }
        match self.closing {
            Some(Closing::Interrupt) => {
                self.fail_pending("the proxy was interrupted")?;
                self.on_interrupt()?;
                return Ok(Some(End::Closed(Closing::Interrupt)));
            }
            Some(closing) if self.pending.is_empty() => return Ok(Some(End::Closed(closing))),
            _ => {}
        }
        Ok((self.client_closed && self.pending.is_empty()).then_some(End::ClientClosed))
    }

    /// The next input, waiting at most `wait` for it.
    pub(super) fn wait_input(&mut self, wait: Duration) -> Input {
        match self.events.recv_timeout(wait) {
            Ok(event) => Input::from(event),
            Err(RecvTimeoutError::Timeout) => Input::Timeout,
            Err(RecvTimeoutError::Disconnected) => Input::Disconnected,
        }
    }

    /// Reacts to one input.
    pub(super) fn handle(&mut self, input: Input) -> Result<(), JournalError> {
        match input {
            // The input's bytes are held until it is handled.
            Input::FromClient(message, text, _held) => return self.on_client(message, &text),
            Input::ClientGarbage(reason, id) => {
                note(&format!("client: {reason}"));
                // A line too long to read still ends its request, unless its id is one another
                // request holds (that one's answer is still to come).
                let free = |key: &String| {
                    !self.pending.contains_key(key)
                        && !self.waiting.contains(key)
                        && !self.unsettled.contains(key)
                };
                let answer = match id.filter(|id| id_value_key(id).is_some_and(|key| free(&key))) {
                    Some(id) => error_response(&id, -32600, &format!("invalid request: {reason}")),
                    None => error_response(&Value::Null, -32700, "parse error"),
                };
                self.send_client_value(&answer);
            }
            Input::ClientClosed => self.client_closed = true,
            Input::FromUpstream(message, text, _held) => return self.on_server(message, text),
            Input::UpstreamGarbage(reason) => note(&format!("server: {reason}")),
            Input::UpstreamClosed(reason) => {
                self.server_closed = Some(reason.unwrap_or_else(|| "its stdout closed".into()));
            }
            Input::Timeout => {}
            // An interrupt stands over any other closing.
            Input::Close(closing) => {
                if self.closing != Some(Closing::Interrupt) {
                    self.closing = Some(closing);
                }
            }
            Input::Disconnected => {
                self.server_closed
                    .get_or_insert_with(|| "disconnected".into());
            }
        }
        Ok(())
    }

    pub(super) fn next_wait(&self) -> Duration {
        let now = Instant::now();
        self.pending
            .next_deadline()
            .map_or(Duration::from_secs(1), |deadline| {
                deadline.saturating_duration_since(now)
            })
            .clamp(Duration::from_millis(1), Duration::from_secs(1))
    }

    /// Answers every request whose deadline passed; a timed-out call's outcome is unknown.
    pub(super) fn expire(&mut self) -> Result<(), JournalError> {
        if self
            .pending
            .next_deadline()
            .is_none_or(|deadline| deadline > Instant::now())
        {
            return Ok(());
        }
        let mut expired = self.pending.take_expired(Instant::now()).into_iter();
        while let Some(pending) = expired.next() {
            let secs = self.settings.policy.call_timeout().as_secs();
            let message = format!(
                "mcp-recovery proxy: the server did not answer {} within {secs} s",
                pending.method
            );
            let mut cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"reason": "timed out"}});
            cancel["params"]["requestId"] = pending.id.clone();
            self.send_server(&cancel.to_string());
            let mut answer = error_response(&pending.id, -32001, &message);
            if let Some(call) = &pending.call {
                // The rollback runs first, so the answer can say what it did.
                let settled = self
                    .finish_call(call, &pending.id, None, Some("timed out"))
                    .and_then(|()| self.on_failure(call));
                match settled {
                    Ok(Some(report)) => tell(&mut answer, &report.for_client(&call.name)),
                    Ok(None) => {}
                    Err(e) => {
                        self.restore(std::iter::once(pending).chain(expired));
                        return Err(e);
                    }
                }
            } else if let Some(key) = id_value_key(&pending.id) {
                self.give_up(key, &pending.id, "timed out");
            }
            self.answer(pending.batch, answer.to_string());
        }
        Ok(())
    }

    /// The session is over: a call still running as a task has an unknown outcome.
    fn end_tasks(&mut self) -> Result<(), JournalError> {
        let mut tasks: Vec<(String, Running)> = self.tasks.drain().collect();
        tasks.sort_by_key(|(_, running)| running.call.number);
        for (task, running) in tasks {
            let why = format!(
                "the server ran it as task '{task}', whose result the client had not fetched when the session ended"
            );
            self.finish_call(&running.call, &running.request, None, Some(&why))?;
        }
        Ok(())
    }

    /// The server is gone: every waiting request gets an error, calls an unknown outcome.
    pub(super) fn fail_pending(&mut self, why: &str) -> Result<(), JournalError> {
        let mut all = self.pending.take_all().into_iter();
        while let Some(p) = all.next() {
            if let Some(call) = &p.call
                && let Err(e) = self.finish_call(call, &p.id, None, Some(why))
            {
                self.restore(std::iter::once(p).chain(all));
                return Err(e);
            }
            let message = format!("mcp-recovery proxy: {why} before answering {}", p.method);
            self.answer(p.batch, error_response(&p.id, -32000, &message).to_string());
        }
        Ok(())
    }

    /// The journal failed: the session stops (the hook hears it first, so that no request
    /// comes after this answer).
    pub(super) fn stopping(&mut self) {
        if let Some(hook) = self.on_stop.take() {
            hook();
        }
    }

    /// Answers a request the session forwarded and stops without answering, its journal
    /// failing: a call's outcome is unknown.
    pub(super) fn unjournaled(&mut self, id: &Value, slot: Option<Slot>, call: bool) {
        self.stopping();
        let what = if call {
            "the call was forwarded and its outcome is unknown"
        } else {
            "the request was forwarded and its answer will not come"
        };
        let message = format!(
            "mcp-recovery proxy cannot write its journal, so it stopped this session: {what}"
        );
        self.answer(slot, error_response(id, -32603, &message).to_string());
    }

    /// Requests taken out to be answered whose outcome could not be journaled: waiting again,
    /// for the session's stop to answer.
    fn restore(&mut self, requests: impl Iterator<Item = Pending>) {
        for pending in requests {
            if let Some(key) = id_value_key(&pending.id) {
                self.pending.insert(key, pending);
            }
        }
    }
}
