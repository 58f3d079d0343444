//! Small helpers that turn untrusted server output into short, printable text.

use std::fmt;
use std::time::Duration;

use mcp_recovery_base::text::excerpt;

/// Longest excerpt of server output quoted in an error, in characters.
pub const EXCERPT_CHARS: usize = 160;

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
