//! `--format markdown`: a heading, the summary and one table row per finding, for
//! `$GITHUB_STEP_SUMMARY` or a pull-request comment.
//!
//! Every piece of input text is escaped so that it renders as the same text and nothing else:
//! no crafted tool name can close the table cell, start a link or inject HTML.

use std::io::{self, Write};

use crate::render::types::{Finding, Renderer, Source, Summary};
use crate::sources::{SourceReport, Status};

/// Rows kept in the table: a job summary is capped (1 MiB on GitHub), and past a few hundred
/// rows nobody reads on; the rest is counted.
const MAX_ROWS: usize = 500;

/// Keeps the rows (the summary comes first in the output) and prints everything at the end.
#[derive(Debug, Default)]
pub struct Markdown {
    rows: Vec<String>,
    omitted: usize,
    /// The sources that were not linted (never capped: each is a whole server or file).
    unlinted: Vec<SourceReport>,
}

/// Escapes text for a Markdown table cell: the one escape of every Markdown output, census's
/// included.
pub use mcp_recovery_base::text::markdown_cell as escape;

/// A table of the sources among `sources` that were not linted, under `heading` and after an
/// empty line: each stated once, with its kind, status and the first line of the reason. Empty
/// when every source was linted.
pub fn unlinted_table(sources: &[SourceReport], heading: &str) -> String {
    let rows: Vec<String> = sources
        .iter()
        .filter(|s| s.status != Status::Linted)
        .map(|s| {
            format!(
                "| {} | {} | {} | {} |\n",
                escape(&s.name),
                s.kind.as_str(),
                s.status.as_str(),
                escape(s.reason()),
            )
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "\n{heading}:\n\n| Source | Kind | Status | Reason |\n|---|---|---|---|\n{}",
        rows.concat()
    )
}

/// The table row of one finding.
fn row(finding: &Finding) -> String {
    let d = &finding.diagnostic;
    let mut location = finding.file.clone();
    match finding.region {
        Some(r) => location.push_str(&format!(":{}:{}", r.start_line, r.start_column)),
        None if !d.pointer.is_empty() => location.push_str(&format!(" at {}", d.pointer)),
        None => {}
    }
    let mut message = escape(&d.message);
    if let Some(help) = &d.help {
        message.push_str("<br>help: ");
        message.push_str(&escape(help));
    }
    format!(
        "| {} | [{} {}](<{}>) | {} | {} | {} |",
        d.severity.as_str(),
        d.code,
        d.name,
        // The docs URL is ours; `<>` keeps it one destination whatever it holds.
        d.url.replace(['<', '>', ' '], ""),
        escape(&location),
        d.tool.as_deref().map(escape).unwrap_or_default(),
        message,
    )
}

impl Renderer for Markdown {
    fn finding(
        &mut self,
        _out: &mut dyn Write,
        _source: Option<&Source<'_>>,
        finding: &Finding,
    ) -> io::Result<()> {
        if self.rows.len() < MAX_ROWS {
            self.rows.push(row(finding));
        } else {
            self.omitted += 1;
        }
        Ok(())
    }

    fn source(&mut self, _out: &mut dyn Write, source: &SourceReport) -> io::Result<()> {
        if source.status != Status::Linted {
            self.unlinted.push(source.clone());
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
        writeln!(out, "## mcp-recovery lint")?;
        writeln!(out)?;
        writeln!(out, "{}", summary.line())?;
        write!(out, "{}", unlinted_table(&self.unlinted, "Not linted"))?;
        if self.rows.is_empty() {
            writeln!(out)?;
            writeln!(out, "No findings.")?;
            return Ok(());
        }
        writeln!(out)?;
        writeln!(out, "| Level | Rule | Location | Tool | Message |")?;
        writeln!(out, "|---|---|---|---|---|")?;
        for row in &self.rows {
            writeln!(out, "{row}")?;
        }
        if self.omitted > 0 {
            writeln!(out)?;
            writeln!(
                out,
                "{} more findings are not shown; run `mcp-recovery lint` for all of them.",
                self.omitted
            )?;
        }
        Ok(())
    }
}
