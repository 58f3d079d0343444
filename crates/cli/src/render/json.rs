//! `--format json`: one object, the stable contract described in the README (`version: 1`).

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::render::types::{Finding, Renderer, Source, Summary};
use crate::sources::SourceReport;

/// Keeps every diagnostic, already rendered (a `Value` per record costs several times the
/// text), and prints the object at the end.
#[derive(Debug, Default)]
pub struct Json {
    diagnostics: Vec<String>,
    sources: Vec<String>,
}

/// `value` as pretty JSON with its lines prefixed by `prefix` (the first one only when `first`),
/// ready to be embedded in a pretty document.
pub fn pretty(value: &Value, prefix: &str, first: bool) -> io::Result<String> {
    Ok(indent(&serde_json::to_string_pretty(value)?, prefix, first))
}

/// Prefixes the lines of `text` with `prefix` (the first one only when `first`).
fn indent(text: &str, prefix: &str, first: bool) -> String {
    let mut out = String::with_capacity(text.len() + 16 * prefix.len());
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if i > 0 || first {
            out.push_str(prefix);
        }
        out.push_str(line);
    }
    out
}

/// Writes pre-indented elements as a pretty JSON array whose brackets sit at `outer`.
pub fn write_array(out: &mut dyn Write, elements: &[String], outer: &str) -> io::Result<()> {
    if elements.is_empty() {
        return write!(out, "[]");
    }
    writeln!(out, "[")?;
    for (i, element) in elements.iter().enumerate() {
        let comma = if i + 1 < elements.len() { "," } else { "" };
        writeln!(out, "{element}{comma}")?;
    }
    write!(out, "{outer}]")
}

/// One diagnostic record; `line`/`column` are null without source text.
fn record(finding: &Finding) -> Value {
    let d = &finding.diagnostic;
    json!({
        "code": d.code,
        "name": d.name,
        "severity": d.severity.as_str(),
        "message": d.message,
        "file": finding.file,
        "tool": d.tool,
        "pointer": d.pointer,
        "line": finding.region.map(|r| r.start_line),
        "column": finding.region.map(|r| r.start_column),
        "help": d.help,
        "url": d.url,
    })
}

impl Renderer for Json {
    fn finding(
        &mut self,
        _out: &mut dyn Write,
        _source: Option<&Source<'_>>,
        finding: &Finding,
    ) -> io::Result<()> {
        self.diagnostics
            .push(pretty(&record(finding), "    ", true)?);
        Ok(())
    }

    fn source(&mut self, _out: &mut dyn Write, source: &SourceReport) -> io::Result<()> {
        self.sources.push(pretty(&source.to_json(), "    ", true)?);
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
        let summary = json!({
            "files": summary.files,
            "servers": summary.servers,
            "tools": summary.tools,
            "errors": summary.errors,
            "warnings": summary.warnings,
            "infos": summary.infos,
        });
        let summary = pretty(&summary, "  ", false)?;
        // The layout of `serde_json::to_writer_pretty` for the whole object.
        write!(
            out,
            "{{\n  \"version\": 1,\n  \"summary\": {summary},\n  \"diagnostics\": "
        )?;
        write_array(out, &std::mem::take(&mut self.diagnostics), "  ")?;
        write!(out, ",\n  \"sources\": ")?;
        write_array(out, &std::mem::take(&mut self.sources), "  ")?;
        writeln!(out, "\n}}")
    }
}
