//! The human side of the proxy: notes on stderr.

use mcp_recovery_base::text::escape_controls;
use std::io::Write;

/// The human side: stderr, one line per note, control characters escaped. A closed stderr
/// loses the note but never stops the proxy.
pub(crate) fn note(text: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "mcp-recovery proxy: {}",
        escape_controls(text)
    );
}
