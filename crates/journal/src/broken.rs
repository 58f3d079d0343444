//! The first fault found in a journal, and how text from the file is shown in it.

use std::fmt;

/// The first fault of a journal: its 1-based line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// 1-based line number (0 when the fault is not at a line, such as a missing head).
    pub line: usize,
    /// Why, in words.
    pub reason: String,
}

impl Broken {
    /// A fault at `line`.
    pub fn new(line: usize, reason: impl Into<String>) -> Broken {
        Broken {
            line,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.reason)
        } else {
            write!(f, "line {}: {}", self.line, self.reason)
        }
    }
}

/// A hash from the file for the message: shortened, and escaped like all text from input.
pub(crate) fn shown(hash: &str) -> String {
    let short: String = hash.chars().take(64).collect();
    mcp_recovery_base::text::escape_controls(&short).into_owned()
}
