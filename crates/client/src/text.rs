//! Small helpers that turn untrusted server output into short, printable text.

use std::fmt;
use std::time::Duration;

/// Longest excerpt of server output quoted in an error, in characters.
pub const EXCERPT_CHARS: usize = 160;

/// Quotes at most `max_chars` characters of `text`, with the workspace's one escape
/// ([`mcp_recovery_model::text::escape_controls`]) so that terminal escape sequences, carriage
/// returns or bidirectional controls from a server cannot rewrite the screen.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    for c in chars.by_ref().take(max_chars) {
        if mcp_recovery_model::text::is_unsafe_char(c) {
            mcp_recovery_model::text::push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

/// [`excerpt`] for raw bytes that may not be UTF-8.
pub fn excerpt_bytes(bytes: &[u8], max_chars: usize) -> String {
    // Never decode more than needed: a line may be megabytes long.
    let head = &bytes[..bytes
        .len()
        .min(max_chars.saturating_mul(4).saturating_add(4))];
    let text = String::from_utf8_lossy(head);
    let mut quoted = excerpt(&text, max_chars);
    if head.len() < bytes.len() && !quoted.ends_with('…') {
        quoted.push('…');
    }
    quoted
}

/// Renders a duration the way people write timeouts: `2s`, `1.5s`, `250ms`.
pub(crate) fn human_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis}ms")
    } else if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}

/// The last lines a server wrote to its stderr, shown under an error message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StderrTail(pub Vec<String>);

impl StderrTail {
    /// The captured lines, oldest first.
    pub fn lines(&self) -> &[String] {
        &self.0
    }
}

impl fmt::Display for StderrTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        write!(f, "\n  last lines of the server's stderr:")?;
        for line in &self.0 {
            write!(f, "\n  | {}", excerpt(line, 2 * EXCERPT_CHARS))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_escapes_controls_and_truncates() {
        assert_eq!(excerpt("a\u{1b}[2Jb\r", 10), "a\\u{1b}[2Jb\\r");
        assert_eq!(
            excerpt("x\u{202e}y\u{2028}\u{200b}", 10),
            "x\\u{202e}y\\u{2028}\\u{200b}"
        );
        assert_eq!(excerpt("abcdef", 3), "abc…");
        assert_eq!(excerpt("abc", 3), "abc");
    }

    #[test]
    fn excerpt_bytes_handles_invalid_utf8_and_long_input() {
        assert_eq!(excerpt_bytes(b"ok\xff", 10), "ok\u{fffd}");
        let long = vec![b'x'; 10_000];
        let quoted = excerpt_bytes(&long, 5);
        assert_eq!(quoted, "xxxxx…");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(Duration::from_secs(2)), "2s");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(human_duration(Duration::from_millis(250)), "250ms");
    }

    #[test]
    fn stderr_tail_renders_below_the_message() {
        assert_eq!(StderrTail::default().to_string(), "");
        let tail = StderrTail(vec!["boom".into(), "bye\u{7}".into()]);
        assert_eq!(
            tail.to_string(),
            "\n  last lines of the server's stderr:\n  | boom\n  | bye\\u{7}"
        );
    }
}
