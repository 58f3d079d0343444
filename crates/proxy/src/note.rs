//! The human side of the proxy: notes on stderr.

use std::io::Write;

use crate::approval::escape;

/// The human side: stderr, one line per note, control characters escaped. A closed stderr
/// loses the note but never stops the proxy.
pub(crate) fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "mcp-recovery proxy: {}", escape(text));
}
