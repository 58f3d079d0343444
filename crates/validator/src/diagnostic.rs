//! Diagnostics are data: the library reports, the caller renders.

use std::fmt;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Informational; never fails a run.
    Info,
    /// Fails a run only under `--deny warnings`.
    Warning,
    /// Fails a run.
    Error,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A place in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset one past the last byte.
    pub end: usize,
    /// 1-based line of `start`.
    pub line: usize,
    /// 1-based column of `start`, in Unicode code points.
    pub column: usize,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable code, such as `R101`.
    pub code: &'static str,
    /// Stable kebab-case name, such as `dangling-operation-id`.
    pub name: &'static str,
    /// Effective severity (after configuration).
    pub severity: Severity,
    /// What is wrong, naming the values involved.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// Name of the tool concerned, if any.
    pub tool: Option<String>,
    /// RFC 6901 pointer into the linted document.
    pub pointer: String,
    /// Where in the source text, when there is source text.
    pub span: Option<Span>,
    /// Documentation of the rule.
    pub url: String,
}

/// The outcome of linting one document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Number of tools in the document (0 when it could not be read as a tools list).
    pub tools: usize,
    /// Findings in a stable order.
    pub diagnostics: Vec<Diagnostic>,
}
