//! `--format human`: miette-rendered diagnostics with a source excerpt, the code and name, the
//! tool, help and the docs URL; then the summary line.

use std::fmt;
use std::io::{self, Write};

use mcp_recovery_base::text::{is_unsafe_char, push_escape};
use mcp_recovery_validator::Severity;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};

use crate::render::types::{Finding, Renderer, Source, Summary};

/// Lines longer than this (in bytes) are cut to a window around the span: minified documents
/// are one long line, and printing it whole would drown the finding.
const LONG_LINE: usize = 200;
/// Bytes kept before the span in a cut line.
const WINDOW_BEFORE: usize = 60;
/// Bytes kept from the span's start in a cut line.
const WINDOW_AFTER: usize = 100;
/// A span over more lines than this is shown by its first lines only.
const MAX_SPAN_LINES: usize = 6;

/// How human output looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// ANSI colors.
    pub color: bool,
    /// Wrapping width.
    pub width: usize,
}

impl Style {
    /// Colors as `--color` and the environment decide; the width from `COLUMNS` (at least 40,
    /// else 100).
    pub fn detect() -> Self {
        let color = crate::color::stdout_color();
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse().ok())
            .filter(|&w: &usize| w >= 40)
            .unwrap_or(100);
        Self { color, width }
    }
}

/// Renders each file's diagnostics as soon as it is linted.
pub struct Human {
    handler: GraphicalReportHandler,
}

impl Human {
    /// A renderer with `style`.
    pub fn new(style: Style) -> Self {
        let theme = if style.color {
            GraphicalTheme::unicode()
        } else {
            GraphicalTheme::unicode_nocolor()
        };
        // Text links: the docs URL is printed, not hidden behind a terminal hyperlink.
        let handler = GraphicalReportHandler::new_themed(theme)
            .with_links(false)
            .with_width(style.width);
        Self { handler }
    }
}

/// A window of the source, shown with its real line and column numbers; its text is inert
/// (controls, bidi overrides and the like are escaped).
struct Excerpt {
    name: String,
    text: String,
    /// 0-based line of the window's first byte.
    line: usize,
    /// Code points before the window's first byte on that line.
    column: usize,
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self.text.read_span(span, before, after)?;
        let column = if inner.line() == 0 {
            inner.column() + self.column
        } else {
            inner.column()
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.line,
            column,
            inner.line_count(),
        )))
    }
}

/// Moves `offset` forward to a UTF-8 character boundary.
fn char_boundary(text: &[u8], mut offset: usize) -> usize {
    while offset < text.len() && text[offset] & 0xC0 == 0x80 {
        offset += 1;
    }
    offset
}

/// The window `text[from..to]` made inert, with the span `start..end` (offsets into `text`)
/// moved to the escaped text. Line breaks stay (a CR before LF is dropped), tabs stay, every
/// other unsafe character is escaped. `None` when the window is not UTF-8.
fn inert_window(
    text: &[u8],
    from: usize,
    to: usize,
    start: usize,
    end: usize,
) -> Option<(String, SourceSpan)> {
    let window = std::str::from_utf8(text.get(from..to)?).ok()?;
    let mut out = String::with_capacity(window.len());
    let (mut new_start, mut new_end) = (None, None);
    let mut chars = window.char_indices().peekable();
    loop {
        let next = chars.next();
        let offset = from + next.map_or(window.len(), |(i, _)| i);
        if new_start.is_none() && offset >= start {
            new_start = Some(out.len());
        }
        if new_end.is_none() && offset >= end {
            new_end = Some(out.len());
        }
        let Some((_, c)) = next else { break };
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if chars.peek().is_some_and(|&(_, n)| n == '\n') => {}
            c if is_unsafe_char(c) => push_escape(&mut out, c),
            c => out.push(c),
        }
    }
    let new_start = new_start.unwrap_or(out.len());
    let new_end = new_end.unwrap_or(out.len()).max(new_start);
    Some((out, SourceSpan::new(new_start.into(), new_end - new_start)))
}

/// Cuts the source to the lines around the span (long lines to a window), makes it inert and
/// returns the excerpt with the span inside it; `None` for text that is not UTF-8, whose bytes
/// are never shown.
fn excerpt(
    name: &str,
    source: &Source<'_>,
    start: usize,
    end: usize,
) -> Option<(Excerpt, SourceSpan)> {
    if !source.utf8 {
        return None;
    }
    let text = source.text;
    let lines = source.lines();
    let start = start.min(text.len());
    let end = end.clamp(start, text.len());
    let line = lines.line_of(start);
    let bounds = lines.line_range(line)?;
    let is_long = |range: &std::ops::Range<usize>| range.len() > LONG_LINE;

    if is_long(&bounds) {
        let from = char_boundary(text, start.saturating_sub(WINDOW_BEFORE).max(bounds.start));
        let to = char_boundary(text, (start + WINDOW_AFTER).min(bounds.end));
        let column = lines.position(from).1 - 1;
        let (text, span) = inert_window(text, from, to, start, end.min(to))?;
        let excerpt = Excerpt {
            name: name.to_owned(),
            text,
            line: line - 1,
            column,
        };
        return Some((excerpt, span));
    }

    // One short line of context either side, unless that line is long itself.
    let mut first_line = line;
    let mut from = bounds.start;
    if let Some(before) = line.checked_sub(1).and_then(|l| lines.line_range(l))
        && !is_long(&before)
    {
        first_line -= 1;
        from = before.start;
    }
    // The span's lines, at most MAX_SPAN_LINES of them, none of them long.
    let mut last = bounds;
    let mut count = 1;
    while last.end < end && count < MAX_SPAN_LINES {
        match lines.line_range(line + count) {
            Some(next) if !is_long(&next) => last = next,
            _ => break,
        }
        count += 1;
    }
    let mut to = last.end;
    if let Some(after) = lines.line_range(line + count)
        && !is_long(&after)
    {
        to = after.end;
    }
    let (text, span) = inert_window(text, from, to, start, end.min(last.end))?;
    let excerpt = Excerpt {
        name: name.to_owned(),
        text,
        line: first_line - 1,
        column: 0,
    };
    Some((excerpt, span))
}

/// One finding in miette's terms.
struct Report<'a> {
    finding: &'a Finding,
    code: String,
    message: String,
    source: Option<(Excerpt, SourceSpan)>,
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Report").field("code", &self.code).finish()
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(&self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.finding.diagnostic.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.finding
            .diagnostic
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn url<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(&self.finding.diagnostic.url))
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|(e, _)| e as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (_, span) = self.source.as_ref()?;
        let label = self
            .finding
            .diagnostic
            .tool
            .as_ref()
            .map(|tool| format!("in tool `{tool}`"));
        Some(Box::new(std::iter::once(
            LabeledSpan::new_primary_with_span(label, *span),
        )))
    }
}

impl Report<'_> {
    fn new<'a>(finding: &'a Finding, source: Option<&Source<'_>>) -> Report<'a> {
        let d = &finding.diagnostic;
        let source = match (source, &d.span) {
            (Some(source), Some(span)) => excerpt(&finding.file, source, span.start, span.end),
            _ => None,
        };
        let mut message = d.message.clone();
        if source.is_none() {
            // No excerpt to point at: say where in words.
            message.push_str(&format!("\nat {}", finding.file));
            if !d.pointer.is_empty() {
                message.push_str(&format!("#{}", d.pointer));
            }
            if let Some(tool) = &d.tool {
                message.push_str(&format!(" (tool `{tool}`)"));
            }
        }
        Report {
            finding,
            code: format!("{} {}", d.code, d.name),
            message,
            source,
        }
    }
}

impl Renderer for Human {
    fn finding(
        &mut self,
        out: &mut dyn Write,
        source: Option<&Source<'_>>,
        finding: &Finding,
    ) -> io::Result<()> {
        let report = Report::new(finding, source);
        let mut text = String::new();
        self.handler
            .render_report(&mut text, &report)
            .map_err(|_| io::Error::other("cannot render a diagnostic"))?;
        writeln!(out, "{}", text.trim_end())?;
        writeln!(out)
    }

    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
        writeln!(out, "{}", summary.line())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &[u8], start: usize, end: usize) -> (Excerpt, SourceSpan) {
        excerpt("f", &Source::new(text), start, end).unwrap()
    }

    #[test]
    fn long_line_is_windowed() {
        let mut text = vec![b'x'; 1000];
        text[500..503].copy_from_slice(b"\"a\"");
        let (window, span) = cut(&text, 500, 503);
        assert!(window.text.len() <= WINDOW_BEFORE + WINDOW_AFTER);
        assert_eq!(window.column, 440);
        assert_eq!(span.offset(), 60);
        assert_eq!(span.len(), 3);
    }

    #[test]
    fn short_lines_keep_context() {
        let text = b"a\nbb\ncc\ndd\n";
        let (window, span) = cut(text, 5, 7);
        assert_eq!(window.text, "bb\ncc\ndd");
        assert_eq!(window.line, 1);
        assert_eq!(span.offset(), 3);
        assert_eq!(span.len(), 2);
    }

    #[test]
    fn empty_and_edge_offsets() {
        let (window, span) = cut(b"", 0, 0);
        assert!(window.text.is_empty());
        assert_eq!(span.len(), 0);
        let (_, span) = cut(b"ab", 9, 99);
        assert_eq!(span.len(), 0);
    }

    #[test]
    fn excerpts_are_inert_and_spans_follow() {
        let text = "{\"a\u{202e}\": \"\u{1b}]0;t\u{7}\", \"b\": 1}\r\n".as_bytes();
        let at = text.windows(3).position(|w| w == b"\"b\"").unwrap();
        let (window, span) = cut(text, at, at + 3);
        assert!(
            !window.text.chars().any(|c| is_unsafe_char(c) && c != '\n'),
            "{:?}",
            window.text
        );
        assert!(window.text.contains("\\u{202e}") && window.text.contains("\\u{1b}"));
        assert_eq!(
            &window.text[span.offset()..span.offset() + span.len()],
            "\"b\""
        );
        // An unterminated CR (not a CRLF) is shown escaped, never as a line break.
        let (window, _) = cut(b"[1,\r::x]", 0, 1);
        assert_eq!(window.text, "[1,\\r::x]");
    }

    #[test]
    fn no_excerpt_of_text_that_is_not_utf8() {
        assert!(excerpt("f", &Source::new(b"{\"a\": \"\xff\"}"), 0, 1).is_none());
    }
}
