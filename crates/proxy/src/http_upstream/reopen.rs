//! How often and after how long a stream the server ended is reopened.

use std::time::Duration;

/// How long to wait before resuming a stream that named no `retry` time.
pub(super) const DEFAULT_RETRY_MS: u64 = 1000;
/// The shortest wait before reopening the GET stream.
pub(super) const MIN_RETRY_MS: u64 = 500;
/// Reopenings in a row that bring no new event before a stream is given up (the GET stream
/// for the rest of the session, a request's stream with an error answer).
pub(super) const MAX_FRUITLESS: u32 = 5;
/// The longest wait between reopenings (each fruitless one doubles the wait).
pub(super) const MAX_RETRY_MS: u64 = 30_000;

/// Reopenings of one stream that brought no new event (an event with data): each waits
/// twice as long as the one before, and after [`MAX_FRUITLESS`] in a row the stream is given up.
#[derive(Default)]
pub(super) struct Reopenings {
    fruitless: u32,
}

impl Reopenings {
    /// The wait before the next reopening of a stream that asked for `retry` ms and whose last
    /// opening brought a new event when `fruitful`; `None` when it is time to give up.
    pub(super) fn next(&mut self, retry: Option<u64>, fruitful: bool) -> Option<Duration> {
        if fruitful {
            self.fruitless = 0;
        }
        if self.fruitless >= MAX_FRUITLESS {
            return None;
        }
        let base = retry.unwrap_or(DEFAULT_RETRY_MS).max(MIN_RETRY_MS);
        let wait = base.saturating_mul(1 << self.fruitless).min(MAX_RETRY_MS);
        self.fruitless += 1;
        Some(Duration::from_millis(wait))
    }
}
