//! A finding before configuration and source positions are applied.

use crate::Severity;
use crate::codes::Rule;

/// Which part of the JSON value at the pointer a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Focus {
    /// The whole value.
    Value,
    /// The member name of the value (falls back to the value inside arrays).
    Key,
    /// One character of a string value, by byte offset into the decoded string.
    InString(usize),
    /// A byte range of the source, for faults found before any pointer exists (R001).
    Bytes { start: usize, end: usize },
}

/// What a rule found; [`crate::Linter`] turns it into a [`crate::Diagnostic`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub rule: Rule,
    /// Severity chosen by the rule itself (R110), before user overrides.
    pub severity: Option<Severity>,
    pub message: String,
    pub help: Option<String>,
    pub tool: Option<String>,
    pub pointer: String,
    pub focus: Focus,
}

impl Finding {
    /// A finding about the value at `pointer`.
    pub(crate) fn new(rule: Rule, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            rule,
            severity: None,
            message: message.into(),
            help: None,
            tool: None,
            pointer: pointer.into(),
            focus: Focus::Value,
        }
    }

    /// Adds how to fix it.
    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Names the tool concerned.
    pub(crate) fn tool(mut self, tool: Option<&str>) -> Self {
        self.tool = tool.map(str::to_owned);
        self
    }

    /// Narrows the place the finding points at.
    pub(crate) fn focus(mut self, focus: Focus) -> Self {
        self.focus = focus;
        self
    }

    /// Sets a severity that depends on the case (user overrides still win).
    pub(crate) fn severity(mut self, severity: Severity) -> Self {
        self.severity = Some(severity);
        self
    }
}

/// Shortens a value's text for a message, on a character boundary (escaping is the
/// renderer's).
pub(crate) fn excerpt(text: &str, max_chars: usize) -> String {
    mcp_recovery_base::text::shorten(text, max_chars).into_owned()
}

/// A JSON value rendered briefly for a message.
pub(crate) fn show(value: &serde_json::Value) -> String {
    excerpt(&value.to_string(), 60)
}
