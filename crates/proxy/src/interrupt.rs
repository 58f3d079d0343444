//! The proxy interrupted (SIGINT, SIGTERM): every running session is closed as interrupted,
//! each journaling its end and running the policy's `on-interrupt`, and so is every session
//! opened after it.

use std::sync::mpsc::SyncSender;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use crate::event::Event;
use crate::settings::Closing;

/// The running sessions, each by its number and the sender of its events.
struct Running {
    next: u64,
    sessions: Vec<(u64, SyncSender<Event>)>,
    interrupted: bool,
}

static RUNNING: Mutex<Running> = Mutex::new(Running {
    next: 0,
    sessions: Vec::new(),
    interrupted: false,
});
static ENDED: Condvar = Condvar::new();

fn running() -> MutexGuard<'static, Running> {
    RUNNING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running session, until dropped.
pub(crate) struct Registration(u64);

/// Registers the session whose events `sender` takes; one registered after an interrupt is
/// closed as interrupted at once.
pub(crate) fn register(sender: &SyncSender<Event>) -> Registration {
    let mut running = running();
    if running.interrupted {
        let _ = sender.try_send(Event::Close(Closing::Interrupt));
    }
    running.next += 1;
    let number = running.next;
    running.sessions.push((number, sender.clone()));
    Registration(number)
}

impl Drop for Registration {
    fn drop(&mut self) {
        running().sessions.retain(|(number, _)| *number != self.0);
        ENDED.notify_all();
    }
}

/// Closes every running session, and every one opened from now on, as interrupted; returns
/// once none runs.
pub fn interrupt() {
    let senders: Vec<SyncSender<Event>> = {
        let mut running = running();
        running.interrupted = true;
        running.sessions.iter().map(|(_, s)| s.clone()).collect()
    };
    for sender in senders {
        // A session that has ended no longer takes it.
        let _ = sender.send(Event::Close(Closing::Interrupt));
    }
    let mut running = running();
    while !running.sessions.is_empty() {
        running = ENDED.wait(running).unwrap_or_else(PoisonError::into_inner);
    }
}
