//! What a session's reader threads hand it: one line from either side, and the byte budgets
//! that keep a flooding peer from growing memory or wedging the session.

use std::io::Read;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use crate::settings::Closing;
use crate::wire::{Line, read_lines};

/// Something that happened on either side.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A line from the client.
    Client(Line),
    /// A line from the server.
    Server(Line),
    /// A line from the client, its bytes held against the session's client budget until the
    /// session has handled it.
    MeteredClient(Line, Credit),
    /// A line from the server, its bytes held against the server budget until handled.
    MeteredServer(Line, Credit),
    /// The proxy closes the session.
    Close(Closing),
}

/// Messages buffered between a reader thread and the session (backpressure beyond it).
pub(crate) const EVENT_BUFFER: usize = 1024;

/// Bytes of the client's lines in flight (read but not yet handled, deferred while the proxy
/// waits for its own request, or queued for the server's stdin) beyond which the client's
/// reader waits before reading more. One line always passes when nothing is in flight.
pub(crate) const CLIENT_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of the server's lines read but not yet handled beyond which its reader waits.
pub(crate) const SERVER_BYTES: usize = 16 * 1024 * 1024;

/// Client requests waiting for the server's answer at once; beyond it a request is refused.
pub(crate) const MAX_PENDING: usize = 4096;

/// A count of bytes in flight, shared by whoever holds them (as [`Credit`]s) and whoever waits
/// for room.
#[derive(Debug)]
pub(crate) struct Budget {
    cap: usize,
    held: Mutex<usize>,
    freed: Condvar,
}

impl Budget {
    /// A budget of `cap` bytes.
    pub(crate) fn new(cap: usize) -> Arc<Budget> {
        Arc::new(Budget {
            cap,
            held: Mutex::new(0),
            freed: Condvar::new(),
        })
    }

    /// Waits until `bytes` fit under the cap (or nothing is held, so a line longer than the
    /// cap still passes alone), then holds them.
    pub(crate) fn acquire(self: &Arc<Budget>, bytes: usize) -> Credit {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        while *held > 0 && held.saturating_add(bytes) > self.cap {
            held = self
                .freed
                .wait(held)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *held += bytes;
        self.credit(bytes)
    }

    /// Holds `bytes` when they fit under the cap now (or nothing is held); `None` otherwise,
    /// for a caller that answers "busy" rather than wait.
    pub(crate) fn try_acquire(self: &Arc<Budget>, bytes: usize) -> Option<Credit> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if *held > 0 && held.saturating_add(bytes) > self.cap {
            return None;
        }
        *held += bytes;
        Some(self.credit(bytes))
    }

    /// Holds `bytes` at once, over the cap if need be (the session never waits).
    pub(crate) fn charge(self: &Arc<Budget>, bytes: usize) -> Credit {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        *held += bytes;
        self.credit(bytes)
    }

    /// The bytes held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        *self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn credit(self: &Arc<Budget>, bytes: usize) -> Credit {
        Credit {
            budget: Arc::clone(self),
            bytes,
        }
    }
}

/// Bytes held against a budget; dropping it gives them back.
#[derive(Debug)]
pub struct Credit {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Drop for Credit {
    fn drop(&mut self) {
        let mut held = self
            .budget
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *held = held.saturating_sub(self.bytes);
        self.budget.freed.notify_all();
    }
}

/// What a line weighs against a budget: its text.
fn weight(line: &Line) -> usize {
    match line {
        Line::Message(_, text) => text.len() + 1,
        Line::Garbage(reason) => reason.len() + 1,
        Line::Oversized(_) => 1,
        Line::Closed(_) => 0,
    }
}

/// Reads lines from `input` (with [`read_lines`]) until it ends, and sends each into `events`
/// once `budget` has room for it, wrapped with its credit; returns when the input ends or the
/// session is gone. While it waits for room it holds the one line it read.
pub(crate) fn read_metered(
    input: impl Read,
    events: &SyncSender<Event>,
    budget: &Arc<Budget>,
    wrap: impl Fn(Line, Credit) -> Event,
) {
    read_lines(input, events, |line| {
        let credit = budget.acquire(weight(&line));
        wrap(line, credit)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn credits_are_given_back_when_dropped() {
        let budget = Budget::new(10);
        let a = budget.acquire(6);
        let b = budget.charge(20);
        assert_eq!(budget.held(), 26);
        drop(a);
        assert_eq!(budget.held(), 20);
        drop(b);
        assert_eq!(budget.held(), 0);
        // Alone, a line longer than the cap passes.
        let big = budget.acquire(100);
        assert_eq!(budget.held(), 100);
        // Past the cap a try is refused, never waits; alone it passes.
        assert!(budget.try_acquire(1).is_none());
        drop(big);
        let first = budget.try_acquire(100);
        assert!(first.is_some() && budget.try_acquire(1).is_none());
        drop(first);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn acquiring_waits_for_room() {
        let budget = Budget::new(10);
        let first = budget.acquire(8);
        let (done, finished) = std::sync::mpsc::channel();
        let waiting = Arc::clone(&budget);
        let thread = std::thread::spawn(move || {
            let credit = waiting.acquire(8);
            done.send(()).unwrap_or_default();
            drop(credit);
        });
        assert!(finished.recv_timeout(Duration::from_millis(50)).is_err());
        drop(first);
        assert!(finished.recv_timeout(Duration::from_secs(60)).is_ok());
        thread.join().unwrap_or_default();
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn metered_lines_carry_their_credit() {
        let budget = Budget::new(1024);
        let (sender, events) = std::sync::mpsc::sync_channel(16);
        read_metered(
            &b"{\"id\":1}\nnot json\n"[..],
            &sender,
            &budget,
            Event::MeteredClient,
        );
        let mut held = Vec::new();
        while let Ok(event) = events.try_recv() {
            held.push(event);
        }
        assert_eq!(held.len(), 3, "two lines and the end: {held:?}");
        assert!(budget.held() > 0);
        drop(held);
        assert_eq!(budget.held(), 0);
    }
}
