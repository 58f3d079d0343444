//! The GET stream of an HTTP upstream: opened once for the server's own messages, reopened
//! with `Last-Event-ID` while it brings new events; and the resumption of a request's stream.

use std::io::BufReader;
use std::time::Instant;

use mcp_recovery_client::{EventReader, StreamEvent};

use crate::wire::MAX_LINE_BYTES;

use super::reopen::{MAX_FRUITLESS, Reopenings};
use super::{Shared, quote};

impl Shared {
    /// Continues a stream after event `last` with a GET carrying `Last-Event-ID`.
    pub(super) fn resume(
        &self,
        last: &str,
        deadline: Instant,
    ) -> Result<ureq::BodyReader<'static>, String> {
        let request = self
            .agent
            .get(&self.url)
            .config()
            .timeout_global(Some(deadline.saturating_duration_since(Instant::now())))
            .build()
            .header("Accept", "text/event-stream")
            .header("Last-Event-ID", last);
        let response = self
            .prepare(request, None)
            .call()
            .map_err(|e| format!("resuming the event stream: {}", self.transport(&e)))?;
        let status = response.status().as_u16();
        if status != 200 || mcp_recovery_client::media_type(&response) != "text/event-stream" {
            return Err(format!(
                "resuming the event stream after event {}: HTTP status {status}",
                quote(last)
            ));
        }
        Ok(response.into_body().into_reader())
    }

    /// Opens the GET stream for server-initiated messages once, on a thread of its own. A
    /// stream the server ends after an event id is reopened with `Last-Event-ID` after its
    /// `retry` time (at least half a second, doubled after each reopening that brought no new
    /// event, at most 30 s); after [`MAX_FRUITLESS`] such reopenings in a row it is given up
    /// (noted on stderr), and the session goes on with what requests carry.
    pub(super) fn open_stream(&self) {
        {
            let mut state = self.lock();
            if state.stream_opened || state.closed {
                return;
            }
            state.stream_opened = true;
        }
        let mut last: Option<String> = None;
        let mut reopenings = Reopenings::default();
        loop {
            let request = self
                .agent
                .get(&self.url)
                .config()
                .timeout_global(None)
                .build()
                .header("Accept", "text/event-stream");
            let request = match &last {
                Some(last) => request.header("Last-Event-ID", last),
                None => request,
            };
            let Ok(response) = self.prepare(request, None).call() else {
                return;
            };
            if response.status().as_u16() != 200
                || mcp_recovery_client::media_type(&response) != "text/event-stream"
            {
                // No stream offered (405 is the usual answer): requests carry everything.
                return;
            }
            let mut events = EventReader::new(
                BufReader::new(response.into_body().into_reader()),
                MAX_LINE_BYTES,
            );
            let mut fresh = false;
            while let Ok(StreamEvent::Message(data)) = events.next_event() {
                if self.lock().closed {
                    return;
                }
                fresh |= !data.trim().is_empty();
                match mcp_recovery_model::json::from_str(&data) {
                    Ok(message) if message.is_object() => {
                        if !self.deliver(message, data) {
                            return;
                        }
                    }
                    _ if data.trim().is_empty() => {}
                    _ => self.note("the GET stream carried an event that is not JSON-RPC"),
                }
            }
            last = events.last_event_id().map(str::to_owned);
            if last.is_none() || self.lock().closed {
                return;
            }
            let Some(wait) = reopenings.next(events.retry(), fresh) else {
                self.note(&format!(
                    "the GET stream was reopened {MAX_FRUITLESS} times in a row without a new \
                     event: not reopened again (requests still get their answers)"
                ));
                return;
            };
            std::thread::sleep(wait);
        }
    }
}
