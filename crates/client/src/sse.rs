//! A minimal `text/event-stream` parser: enough of the WHATWG rules for MCP's use.

use std::io::{self, BufRead};

use crate::lines::{LineRead, Overflow, read_line};

/// What reading the next event gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// The `data` of one `message` event (data lines joined with `\n`).
    Message(String),
    /// An event's data grew past the cap.
    TooLarge,
    /// The stream ended.
    End,
}

/// Reads events from a stream, skipping comments and events of other types.
pub struct EventReader<R> {
    reader: R,
    cap: usize,
    line: Vec<u8>,
    /// The last event id the stream set (WHATWG: kept from event to event).
    last_id: Option<String>,
    /// The id field of the event being read.
    id: Option<String>,
    /// The reconnection time the stream asked for, in milliseconds.
    retry: Option<u64>,
}

impl<R: BufRead> EventReader<R> {
    /// Reads `reader`, allowing at most `cap` bytes of data per event.
    pub fn new(reader: R, cap: usize) -> EventReader<R> {
        EventReader {
            reader,
            cap,
            line: Vec::new(),
            last_id: None,
            id: None,
            retry: None,
        }
    }

    /// The last event id the stream gave (for `Last-Event-ID` when resuming), if any.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection time the stream's `retry` field asked for, in milliseconds, if any.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// The underlying reader.
    pub fn reader(&self) -> &R {
        &self.reader
    }

    /// The next `message` event.
    pub fn next_event(&mut self) -> io::Result<Event> {
        let mut data: Option<String> = None;
        let mut kind = String::new();
        loop {
            let read = read_line(&mut self.reader, &mut self.line, self.cap, Overflow::Stop)?;
            match read {
                LineRead::TooLong => return Ok(Event::TooLarge),
                // An event not ended by a blank line before the stream closes is discarded.
                LineRead::Eof => return Ok(Event::End),
                LineRead::Line { .. } => {}
            }
            if self.line.is_empty() {
                // An event, dispatched or not (an empty one primes the client), sets the id.
                if let Some(id) = self.id.take() {
                    self.last_id = (!id.is_empty()).then_some(id);
                }
                let is_message = kind.is_empty() || kind == "message";
                match data.take() {
                    Some(mut data) if is_message => {
                        data.pop();
                        return Ok(Event::Message(data));
                    }
                    _ => {
                        kind.clear();
                        continue;
                    }
                }
            }
            let line = String::from_utf8_lossy(&self.line);
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_ref(), ""),
            };
            match field {
                "data" => {
                    let data = data.get_or_insert_with(String::new);
                    if data.len() + value.len() + 1 > self.cap {
                        return Ok(Event::TooLarge);
                    }
                    // Per the standard: append the value and a newline; the last one goes at dispatch.
                    data.push_str(value);
                    data.push('\n');
                }
                "event" => kind = value.to_string(),
                "id" if !value.contains('\0') => self.id = Some(value.to_string()),
                "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    self.retry = value.parse().ok();
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &str, cap: usize) -> Vec<Event> {
        let mut reader = EventReader::new(input.as_bytes(), cap);
        let mut out = Vec::new();
        loop {
            let event = reader.next_event().unwrap();
            let stop = event != Event::TooLarge && !matches!(event, Event::Message(_));
            let too_large = event == Event::TooLarge;
            out.push(event);
            if stop || too_large {
                return out;
            }
        }
    }

    #[test]
    fn parses_messages_and_skips_the_rest() {
        let input = ": keep-alive\n\nid: 1\ndata: {\"a\":\ndata:1}\n\nevent: other\ndata: x\n\n\
                     event: message\r\ndata: second\r\n\r\ndata: unterminated";
        assert_eq!(
            events(input, 100),
            [
                Event::Message("{\"a\":\n1}".into()),
                Event::Message("second".into()),
                Event::End
            ]
        );
    }

    #[test]
    fn keeps_the_last_event_id_and_the_retry_time() {
        let input =
            "id: e1\nretry: 500\ndata: \n\n: comment\n\ndata: {}\n\nid: e2\nretry: x\n\nid:\n\n";
        let mut reader = EventReader::new(input.as_bytes(), 100);
        // The priming event: an id and empty data.
        assert_eq!(reader.next_event().unwrap(), Event::Message(String::new()));
        assert_eq!(
            (reader.last_event_id(), reader.retry()),
            (Some("e1"), Some(500))
        );
        // An event without an id keeps the last one.
        assert_eq!(reader.next_event().unwrap(), Event::Message("{}".into()));
        assert_eq!(reader.last_event_id(), Some("e1"));
        // An event without data still sets it; a malformed retry is ignored; an empty id
        // resets it.
        assert_eq!(reader.next_event().unwrap(), Event::End);
        assert_eq!((reader.last_event_id(), reader.retry()), (None, Some(500)));
    }

    #[test]
    fn caps_event_size() {
        assert_eq!(events("data: 0123456789\n\n", 8), [Event::TooLarge]);
        assert_eq!(
            events("data: 01234\ndata: 56789\n\n", 10),
            [Event::TooLarge]
        );
    }
}
