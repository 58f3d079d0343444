//! `--format json`: one object, exactly the contract of DESIGN §5 (`version: 1`).

use std::io::{self, Write};

use serde_json::{Value, json};

use super::{Finding, Renderer, Summary};

/// Keeps every diagnostic and prints the object at the end.
#[derive(Debug, Default)]
pub struct Json {
    diagnostics: Vec<Value>,
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
    fn file(
        &mut self,
        _out: &mut dyn Write,
        _file: &str,
        _source: Option<&[u8]>,
        findings: &[Finding],
    ) -> io::Result<()> {
        self.diagnostics.extend(findings.iter().map(record));
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
        let document = json!({
            "version": 1,
            "summary": {
                "files": summary.files,
                "tools": summary.tools,
                "errors": summary.errors,
                "warnings": summary.warnings,
                "infos": summary.infos,
            },
            "diagnostics": std::mem::take(&mut self.diagnostics),
        });
        serde_json::to_writer_pretty(&mut *out, &document)?;
        writeln!(out)
    }
}
