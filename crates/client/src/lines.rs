//! Reading lines with a length cap, so that a server cannot make the client buffer without bound.

use std::io::{self, BufRead};

/// What one call to [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineRead {
    /// A line is in the buffer (without its `\n` or `\r\n`); `truncated` when bytes past the
    /// cap were discarded (only with [`Overflow::Discard`]).
    Line {
        /// Whether bytes were dropped.
        truncated: bool,
    },
    /// The line grew past the cap; nothing more was consumed ([`Overflow::Stop`]).
    TooLong,
    /// End of input, with no partial line left.
    Eof,
}

/// What to do with a line longer than the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// Stop reading and report [`LineRead::TooLong`] (protocol messages).
    Stop,
    /// Keep the first `cap` bytes and skip the rest of the line (diagnostic text).
    Discard,
}

/// Reads one line into `buf` (cleared first). A last line without `\n` still counts as a line.
pub(crate) fn read_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
    overflow: Overflow,
) -> io::Result<LineRead> {
    buf.clear();
    let mut truncated = false;
    let mut any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            if !any {
                return Ok(LineRead::Eof);
            }
            break;
        }
        any = true;
        let (chunk, consumed, done) = match available.iter().position(|&b| b == b'\n') {
            Some(pos) => (&available[..pos], pos + 1, true),
            None => (available, available.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        if chunk.len() > room {
            match overflow {
                Overflow::Stop => return Ok(LineRead::TooLong),
                Overflow::Discard => {
                    buf.extend_from_slice(&chunk[..room]);
                    truncated = true;
                }
            }
        } else {
            buf.extend_from_slice(chunk);
        }
        reader.consume(consumed);
        if done {
            break;
        }
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(LineRead::Line { truncated })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn all_lines(input: &[u8], cap: usize, overflow: Overflow) -> Vec<(String, LineRead)> {
        // A tiny buffer exercises lines that span several fills.
        let mut reader = BufReader::with_capacity(3, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            let read = read_line(&mut reader, &mut buf, cap, overflow).unwrap();
            let stop = matches!(read, LineRead::Eof | LineRead::TooLong);
            out.push((String::from_utf8_lossy(&buf).into_owned(), read));
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn splits_lines_and_strips_crlf() {
        let lines = all_lines(b"one\r\ntwo\n\nlast", 100, Overflow::Stop);
        let texts: Vec<&str> = lines.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["one", "two", "", "last", ""]);
        assert_eq!(lines[4].1, LineRead::Eof);
    }

    #[test]
    fn stops_at_the_cap() {
        let lines = all_lines(b"short\nway too long\nnext\n", 8, Overflow::Stop);
        assert_eq!(
            lines[0],
            ("short".into(), LineRead::Line { truncated: false })
        );
        assert_eq!(lines[1].1, LineRead::TooLong);
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn discards_past_the_cap() {
        let lines = all_lines(b"way too long\nnext\n", 3, Overflow::Discard);
        assert_eq!(lines[0], ("way".into(), LineRead::Line { truncated: true }));
        assert_eq!(lines[1], ("nex".into(), LineRead::Line { truncated: true }));
        assert_eq!(lines[2].1, LineRead::Eof);
    }
}
