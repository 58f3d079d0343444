//! Group commit: the records of every writer of one journal are made durable together. A writer
//! appends under the journal's lock and gets a [`Pending`]; it waits for the durability of its
//! record outside that lock, so other writers append meanwhile. Whoever waits while no sync is
//! running starts one that covers every record written so far; the others wait for it, and those
//! whose records came during it are covered by the next one. One `fsync` thus serves every
//! record that arrived while the previous one ran.
//!
//! Waiters sleep parked, each woken only when it has something to do: when a sync covered its
//! record, or (the earliest one left) when it is to start the next sync. A condition variable
//! woken for all would wake every waiter after every sync, most of them to sleep again.

use std::fs::File;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::Thread;

use crate::error::JournalError;

/// The syncs of one journal file, shared by its writers.
#[derive(Debug)]
pub(crate) struct Group {
    /// A handle on the journal's file (a sync through it covers every write to the file).
    file: File,
    path: String,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Appends written to the file since it was opened.
    written: u64,
    /// Appends known to be on disk.
    durable: u64,
    /// Whether a sync is running.
    syncing: bool,
    /// The error of a failed sync: after it, nothing written is known to be durable, so every
    /// later wait fails too.
    failed: Option<(io::ErrorKind, String)>,
    /// The threads waiting while a sync runs, with the append each waits for.
    waiters: Vec<(u64, Thread)>,
}

impl Group {
    pub(crate) fn new(file: File, path: String) -> Arc<Group> {
        Arc::new(Group {
            file,
            path,
            state: Mutex::new(State::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one more append written to the file (under the journal's lock, so in file order);
    /// gives its number.
    pub(crate) fn written(&self) -> u64 {
        let mut state = self.lock();
        state.written += 1;
        state.written
    }

    /// Stops the journal: every wait not yet over, and every later one, fails with `error`.
    pub(crate) fn stop(&self, error: &io::Error) {
        let mut state = self.lock();
        state
            .failed
            .get_or_insert_with(|| (error.kind(), error.to_string()));
        wake(&mut state);
    }

    /// Fails once a sync failed or the journal was stopped: nothing written after that is
    /// trusted to be durable, so nothing more is written.
    pub(crate) fn stopped(&self) -> Result<(), JournalError> {
        match &self.lock().failed {
            Some(failed) => Err(self.failure(failed)),
            None => Ok(()),
        }
    }

    fn failure(&self, (kind, message): &(io::ErrorKind, String)) -> JournalError {
        JournalError::Io {
            path: self.path.clone(),
            source: io::Error::new(*kind, message.clone()),
        }
    }

    /// Returns once append `number` is on disk (syncing it when no sync is running).
    fn wait(&self, number: u64) -> Result<(), JournalError> {
        let me = std::thread::current();
        let mut state = self.lock();
        loop {
            if let Some(failed) = &state.failed {
                return Err(self.failure(failed));
            }
            if state.durable >= number {
                return Ok(());
            }
            if state.syncing {
                state.waiters.push((number, me.clone()));
                drop(state);
                // Woken by the sync that covers the append, or to start the next one; a wake
                // for any other reason only checks again.
                std::thread::park();
                state = self.lock();
                state.waiters.retain(|(_, waiter)| waiter.id() != me.id());
                continue;
            }
            // Every append counted so far has been written: this sync covers them all.
            let covers = state.written;
            state.syncing = true;
            drop(state);
            let result = self.file.sync_data();
            state = self.lock();
            state.syncing = false;
            match result {
                Ok(()) => state.durable = state.durable.max(covers),
                Err(error) => state.failed = Some((error.kind(), error.to_string())),
            }
            wake(&mut state);
        }
    }
}

/// After a sync: wakes the waiters it made durable (every one when it failed), and the earliest
/// waiter left, which starts the next sync.
fn wake(state: &mut State) {
    let (durable, failed) = (state.durable, state.failed.is_some());
    state.waiters.retain(|(number, waiter)| {
        let done = failed || *number <= durable;
        if done {
            waiter.unpark();
        }
        !done
    });
    if let Some((_, next)) = state.waiters.iter().min_by_key(|(number, _)| *number) {
        next.unpark();
    }
}

/// A record written to the journal, not yet known to be on disk: [`Pending::wait`] returns once
/// it is (at once for a journal that does not sync).
#[derive(Debug)]
#[must_use = "a record is durable only once `wait` returns"]
pub struct Pending {
    pub(crate) group: Option<Arc<Group>>,
    pub(crate) number: u64,
}

impl Pending {
    /// Waits until the record is on disk.
    ///
    /// # Errors
    ///
    /// The sync failed (this one or an earlier one: after a failed sync nothing is trusted to
    /// be durable).
    pub fn wait(self) -> Result<(), JournalError> {
        match &self.group {
            Some(group) => group.wait(self.number),
            None => Ok(()),
        }
    }
}
