//! One stream's queue of the messages it is to send: bounded in messages and in bytes, so a
//! client that reads slowly while the server writes fast holds at most so much of the proxy's
//! memory (a message may be 64 MiB).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{
    Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError, sync_channel,
};
use std::time::Duration;

use super::config::{STREAM_BUFFER, STREAM_BYTES};

/// A new queue: its sending and its receiving end.
pub(super) fn queue() -> (Outlet, Inlet) {
    let (sender, receiver) = sync_channel(STREAM_BUFFER);
    let queued = Arc::new(AtomicUsize::new(0));
    let outlet = Outlet {
        sender,
        queued: Arc::clone(&queued),
    };
    (outlet, Inlet { receiver, queued })
}

/// Where messages for a stream are put; full past [`STREAM_BUFFER`] messages, and for messages
/// that answer none of its requests past [`STREAM_BYTES`] bytes (a first message larger than that
/// is taken alone). The answers it owes are as many as its requests, so they are taken whatever
/// their size.
#[derive(Clone, Debug)]
pub(super) struct Outlet {
    sender: SyncSender<String>,
    queued: Arc<AtomicUsize>,
}

impl Outlet {
    /// Queues a message that answers none of the stream's requests.
    pub(super) fn try_send(&self, text: String) -> Result<(), TrySendError<String>> {
        let queued = self.queued.load(Ordering::SeqCst);
        if queued > 0 && queued.saturating_add(text.len()) > STREAM_BYTES {
            return Err(TrySendError::Full(text));
        }
        self.try_send_answer(text)
    }

    /// Queues the answer to one of the stream's requests.
    pub(super) fn try_send_answer(&self, text: String) -> Result<(), TrySendError<String>> {
        let len = text.len();
        self.queued.fetch_add(len, Ordering::SeqCst);
        self.sender.try_send(text).inspect_err(|_| {
            self.queued.fetch_sub(len, Ordering::SeqCst);
        })
    }
}

/// Where the stream takes its messages from.
pub(super) struct Inlet {
    receiver: Receiver<String>,
    queued: Arc<AtomicUsize>,
}

impl Inlet {
    pub(super) fn recv_timeout(&self, wait: Duration) -> Result<String, RecvTimeoutError> {
        self.receiver
            .recv_timeout(wait)
            .inspect(|text| self.taken(text))
    }

    pub(super) fn try_recv(&self) -> Result<String, TryRecvError> {
        self.receiver.try_recv().inspect(|text| self.taken(text))
    }

    fn taken(&self, text: &str) {
        self.queued.fetch_sub(text.len(), Ordering::SeqCst);
    }
}
