//! What every renderer works with: a finding and the region it points at, the text of a
//! document, the totals of a run, and the `Renderer` trait itself.

use std::io::{self, Write};

use mcp_recovery_validator::{Diagnostic, LineIndex, Severity, Span};

use crate::sources::SourceReport;

/// A region of source text, 1-based; `end_column` is exclusive (the column after the last
/// character), as in SARIF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Line of the first character.
    pub start_line: usize,
    /// Column of the first character, in code points.
    pub start_column: usize,
    /// Line of the end.
    pub end_line: usize,
    /// Column after the last character, in code points.
    pub end_column: usize,
}

/// The text of a linted document; its line index is built only when an excerpt is shown (the
/// regions come with the validator's spans).
#[derive(Debug, Clone)]
pub struct Source<'a> {
    /// The bytes as read.
    pub text: &'a [u8],
    /// Line starts and code-point checkpoints of `text`, built on first use.
    lines: std::cell::OnceCell<LineIndex<'a>>,
    /// Whether `text` is UTF-8; excerpts of other text are never shown.
    pub utf8: bool,
}

impl<'a> Source<'a> {
    /// Wraps `text`.
    pub fn new(text: &'a [u8]) -> Self {
        Self {
            text,
            lines: std::cell::OnceCell::new(),
            utf8: std::str::from_utf8(text).is_ok(),
        }
    }

    /// The line index of the text.
    pub fn lines(&self) -> &LineIndex<'a> {
        self.lines.get_or_init(|| LineIndex::new(self.text))
    }
}

impl Region {
    /// The region of `span`, with the span's own positions.
    pub fn of(span: &Span) -> Self {
        Self {
            start_line: span.line,
            start_column: span.column,
            end_line: span.end_line,
            end_column: span.end_column,
        }
    }
}

/// One diagnostic with the file it was found in.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The file as given, made inert (`-` for stdin, the name of a live server).
    pub file: String,
    /// What the validator reported.
    pub diagnostic: Diagnostic,
    /// Where, when there is source text.
    pub region: Option<Region>,
    /// Accepted by the baseline: it does not count and only SARIF shows it (as suppressed).
    pub suppressed: bool,
    /// Whether `file` names a live server rather than a file.
    pub live: bool,
}

/// Totals of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Files linted (overlay files included).
    pub files: usize,
    /// Live servers linted.
    pub servers: usize,
    /// Tools in them.
    pub tools: usize,
    /// Diagnostics at error level.
    pub errors: usize,
    /// Diagnostics at warning level.
    pub warnings: usize,
    /// Diagnostics at info level.
    pub infos: usize,
    /// Diagnostics the baseline accepts (counted in none of the levels).
    pub baselined: usize,
}

impl Summary {
    /// Counts one linted document: a live server's list or a file.
    pub fn add(&mut self, tools: usize, findings: &[Finding], live: bool) {
        if live {
            self.servers += 1;
        } else {
            self.files += 1;
        }
        self.tools += tools;
        for finding in findings {
            if finding.suppressed {
                self.baselined += 1;
                continue;
            }
            match finding.diagnostic.severity {
                Severity::Error => self.errors += 1,
                Severity::Warning => self.warnings += 1,
                Severity::Info => self.infos += 1,
            }
        }
    }

    /// The closing line of human output: `3 files, 12 tools: 1 error, 2 warnings, 0 infos`
    /// (`2 servers, …` for live servers, `1 server, 1 file, …` with an overlay file).
    pub fn line(&self) -> String {
        fn count(n: usize, one: &str, many: &str) -> String {
            format!("{n} {}", if n == 1 { one } else { many })
        }
        let mut documents = Vec::new();
        if self.servers > 0 {
            documents.push(count(self.servers, "server", "servers"));
        }
        if self.files > 0 || self.servers == 0 {
            documents.push(count(self.files, "file", "files"));
        }
        let mut line = format!(
            "{}, {}: {}, {}, {}",
            documents.join(", "),
            count(self.tools, "tool", "tools"),
            count(self.errors, "error", "errors"),
            count(self.warnings, "warning", "warnings"),
            count(self.infos, "info", "infos"),
        );
        if self.baselined > 0 {
            line.push_str(&format!(" ({} baselined)", self.baselined));
        }
        line
    }
}

/// One output format. Each linted document reaches it as [`Renderer::finding`] for each of its
/// findings, in order, then [`Renderer::end_file`]; [`Renderer::finish`] comes after the last.
pub trait Renderer {
    /// One finding of the current document; `source` is that document's text, when known.
    fn finding(
        &mut self,
        out: &mut dyn Write,
        source: Option<&Source<'_>>,
        finding: &Finding,
    ) -> io::Result<()>;

    /// Called after the findings of each document, a clean one included.
    fn end_file(&mut self, _out: &mut dyn Write, _file: &str) -> io::Result<()> {
        Ok(())
    }

    /// One source of the run and what became of it: every source, linted or not, once, after
    /// its findings (a source that failed has none).
    fn source(&mut self, _out: &mut dyn Write, _source: &SourceReport) -> io::Result<()> {
        Ok(())
    }

    /// Called once after the last document.
    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> io::Result<()>;

    /// Whether the renderer also gets the findings the baseline accepts.
    fn shows_suppressed(&self) -> bool {
        false
    }
}

/// Hands one linted document, `file` with its `findings` in order, to `renderer`.
pub fn document(
    renderer: &mut dyn Renderer,
    out: &mut dyn Write,
    file: &str,
    source: Option<&Source<'_>>,
    findings: &[Finding],
) -> io::Result<()> {
    let shows_suppressed = renderer.shows_suppressed();
    for finding in findings {
        if shows_suppressed || !finding.suppressed {
            renderer.finding(out, source, finding)?;
        }
    }
    renderer.end_file(out, file)
}
