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
}

impl<R: BufRead> EventReader<R> {
    /// Reads `reader`, allowing at most `cap` bytes of data per event.
    pub fn new(reader: R, cap: usize) -> EventReader<R> {
        EventReader {
            reader,
            cap,
            line: Vec::new(),
        }
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
                // `id` and `retry` matter only for resuming, which this client does not do.
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
    fn caps_event_size() {
        assert_eq!(events("data: 0123456789\n\n", 8), [Event::TooLarge]);
        assert_eq!(
            events("data: 01234\ndata: 56789\n\n", 10),
            [Event::TooLarge]
        );
    }
}
