//! Diagnostics are data: the library reports, the caller renders.

use std::fmt;

use mcp_recovery_base::text::{is_unsafe_char, push_escape};

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
#[non_exhaustive]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset one past the last byte.
    pub end: usize,
    /// 1-based line of `start`.
    pub line: usize,
    /// 1-based column of `start`, in Unicode code points.
    pub column: usize,
    /// 1-based line of `end`.
    pub end_line: usize,
    /// 1-based column of `end` (the column after the last character), in Unicode code points.
    pub end_column: usize,
}

/// One finding. Every text in it that comes from the document (`message`, `help`, `tool`,
/// `pointer`) has its [unsafe characters](is_unsafe_char) escaped, so it prints safely as is.
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

/// `text` escaped for XML 1.0 (and HTML) content and attribute values: the five predefined
/// entities, and every [unsafe character](is_unsafe_char) (most of which XML 1.0 cannot carry at
/// all) written as its visible escape. Line breaks and tabs stay where `attribute` is false, and
/// become character references where it is true, so that parsers keep them. `]]>` cannot form.
pub fn escape_xml(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\n' | '\t' => out.push(c),
            c if is_unsafe_char(c) => push_escape(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escaping() {
        assert_eq!(
            escape_xml("<a href=\"x\">'&'</a>", true),
            "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;"
        );
        assert_eq!(escape_xml("a\nb\tc\rd", true), "a&#10;b&#9;c&#13;d");
        assert_eq!(escape_xml("a\nb\tc", false), "a\nb\tc");
        assert_eq!(
            escape_xml("esc\u{1b}[31m nul\u{0} \u{202e}", false),
            "esc\\u{1b}[31m nul\\u{0} \\u{202e}"
        );
        assert_eq!(escape_xml("]]>", false), "]]&gt;");
    }
}
