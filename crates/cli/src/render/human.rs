//! `--format human`: miette-rendered diagnostics with a source excerpt, the code and name, the
//! tool, help and the docs URL; then the summary line.

use std::fmt;
use std::io::{self, Write};

use mcp_recovery_validator::Severity;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};

use super::{Finding, Renderer, Summary};

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
    /// ANSI colors (only on a terminal without `NO_COLOR`).
    pub color: bool,
    /// Wrapping width.
    pub width: usize,
}

impl Style {
    /// Colors as [`super::use_color`] decides; the width from `COLUMNS` (at least 40, else 100).
    pub fn detect() -> Self {
        let color = super::use_color();
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

/// A window of the source, shown with its real line and column numbers.
struct Excerpt {
    name: String,
    text: Vec<u8>,
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

/// Start and end (excluding the newline) of the line containing `offset`.
fn line_bounds(text: &[u8], offset: usize) -> (usize, usize) {
    let start = text[..offset]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let end = text[offset..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| offset + i);
    (start, end)
}

/// Moves `offset` forward to a UTF-8 character boundary.
fn char_boundary(text: &[u8], mut offset: usize) -> usize {
    while offset < text.len() && text[offset] & 0xC0 == 0x80 {
        offset += 1;
    }
    offset
}

/// Cuts the source to the lines around the span (long lines to a window) and returns the
/// excerpt with the span inside it.
fn excerpt(name: &str, text: &[u8], start: usize, end: usize) -> (Excerpt, SourceSpan) {
    let start = start.min(text.len());
    let end = end.clamp(start, text.len());
    let (line_start, line_end) = line_bounds(text, start);
    let line_index = text[..line_start].iter().filter(|&&b| b == b'\n').count();

    if line_end - line_start > LONG_LINE {
        let from = char_boundary(text, start.saturating_sub(WINDOW_BEFORE).max(line_start));
        let to = char_boundary(text, (start + WINDOW_AFTER).min(line_end));
        let column = text[line_start..from]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count();
        let span_end = end.min(to);
        return (
            Excerpt {
                name: name.to_owned(),
                text: text[from..to].to_vec(),
                line: line_index,
                column,
            },
            SourceSpan::new((start - from).into(), span_end - start),
        );
    }

    // One short line of context either side, unless that line is long itself.
    let mut from = line_start;
    if line_start > 0 {
        let (before_start, before_end) = line_bounds(text, line_start - 1);
        if before_end - before_start <= LONG_LINE {
            from = before_start;
        }
    }
    // The span's lines, at most MAX_SPAN_LINES of them, none of them long.
    let mut last_end = line_end;
    let mut lines = 1;
    while last_end < end && last_end < text.len() && lines < MAX_SPAN_LINES {
        let (next_start, next_end) = line_bounds(text, last_end + 1);
        if next_end - next_start > LONG_LINE {
            break;
        }
        last_end = next_end;
        lines += 1;
    }
    let mut to = last_end;
    if last_end < text.len() {
        let (after_start, after_end) = line_bounds(text, last_end + 1);
        if after_end - after_start <= LONG_LINE {
            to = after_end;
        }
    }
    let span_end = end.min(last_end);
    let first_line = if from < line_start {
        line_index - 1
    } else {
        line_index
    };
    (
        Excerpt {
            name: name.to_owned(),
            text: text[from..to].to_vec(),
            line: first_line,
            column: 0,
        },
        SourceSpan::new((start - from).into(), span_end - start),
    )
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
    fn new<'a>(finding: &'a Finding, source: Option<&[u8]>) -> Report<'a> {
        let d = &finding.diagnostic;
        let source = match (source, &d.span) {
            (Some(text), Some(span)) => Some(excerpt(&finding.file, text, span.start, span.end)),
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
    fn file(
        &mut self,
        out: &mut dyn Write,
        _file: &str,
        source: Option<&[u8]>,
        findings: &[Finding],
    ) -> io::Result<()> {
        for finding in findings {
            let report = Report::new(finding, source);
            let mut text = String::new();
            self.handler
                .render_report(&mut text, &report)
                .map_err(|_| io::Error::other("cannot render a diagnostic"))?;
            writeln!(out, "{}", text.trim_end())?;
            writeln!(out)?;
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
        writeln!(out, "{}", summary.line())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_line_is_windowed() {
        let mut text = vec![b'x'; 1000];
        text[500..503].copy_from_slice(b"\"a\"");
        let (window, span) = excerpt("f", &text, 500, 503);
        assert!(window.text.len() <= WINDOW_BEFORE + WINDOW_AFTER);
        assert_eq!(window.column, 440);
        assert_eq!(span.offset(), 60);
        assert_eq!(span.len(), 3);
    }

    #[test]
    fn short_lines_keep_context() {
        let text = b"a\nbb\ncc\ndd\n";
        let (window, span) = excerpt("f", text, 5, 7);
        assert_eq!(window.text, b"bb\ncc\ndd");
        assert_eq!(window.line, 1);
        assert_eq!(span.offset(), 3);
        assert_eq!(span.len(), 2);
    }

    #[test]
    fn empty_and_edge_offsets() {
        let (window, span) = excerpt("f", b"", 0, 0);
        assert!(window.text.is_empty());
        assert_eq!(span.len(), 0);
        let (_, span) = excerpt("f", b"ab", 9, 99);
        assert_eq!(span.len(), 0);
    }
}
