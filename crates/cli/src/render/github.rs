//! `--format github`: one workflow command per diagnostic
//! (`::error file=…,line=…,col=…,title=R101 dangling-operation-id::message`).
//!
//! Everything that comes from input (file names, messages quoting tool names, help) is escaped
//! the way the Actions runner unescapes it, so no crafted tool name can end the command early,
//! add a property or start a second command.

use std::io::{self, Write};

use mcp_recovery_validator::Severity;

use crate::render::types::{Finding, Renderer, Source, Summary};
use crate::sources::{SourceReport, Status};

/// Streams one line per diagnostic; prints nothing else on stdout.
#[derive(Debug, Default)]
pub struct Github;

/// Escapes a command's message: `%`, CR and LF.
pub fn escape_data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes a property value: as data, plus `:` and `,` (which would end or split properties).
pub fn escape_property(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in escape_data(text).chars() {
        match c {
            ':' => out.push_str("%3A"),
            ',' => out.push_str("%2C"),
            _ => out.push(c),
        }
    }
    out
}

/// The workflow command of one finding.
pub fn command(finding: &Finding) -> String {
    let d = &finding.diagnostic;
    let name = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    let mut properties = vec![format!("file={}", escape_property(&finding.file))];
    if let Some(region) = finding.region {
        properties.push(format!("line={}", region.start_line));
        properties.push(format!("col={}", region.start_column));
        properties.push(format!("endLine={}", region.end_line));
        properties.push(format!("endColumn={}", region.end_column));
    }
    properties.push(format!(
        "title={}",
        escape_property(&format!("{} {}", d.code, d.name))
    ));
    let mut message = d.message.clone();
    if finding.region.is_none() {
        // Without a line the annotation cannot point at the place; the pointer can.
        message.push_str(&format!("\nat {}", d.pointer));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    message.push_str(&format!("\n{}", d.url));
    format!(
        "::{name} {}::{}",
        properties.join(","),
        escape_data(&message)
    )
}

impl Renderer for Github {
    fn finding(
        &mut self,
        out: &mut dyn Write,
        _source: Option<&Source<'_>>,
        finding: &Finding,
    ) -> io::Result<()> {
        writeln!(out, "{}", command(finding))
    }

    /// A source that was not linted: one `::error` (`::notice` when skipped) naming it.
    fn source(&mut self, out: &mut dyn Write, source: &SourceReport) -> io::Result<()> {
        if source.status == Status::Linted {
            return Ok(());
        }
        let name = if source.status.failed() {
            "error"
        } else {
            "notice"
        };
        let title = format!("mcp-recovery {}", source.status.as_str());
        let message = format!(
            "{} {} was not linted: {}",
            source.kind.as_str(),
            source.name,
            source.error.as_deref().unwrap_or("")
        );
        writeln!(
            out,
            "::{name} title={}::{}",
            escape_property(&title),
            escape_data(&message)
        )
    }

    fn finish(&mut self, _out: &mut dyn Write, _summary: &Summary) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::Region;
    use mcp_recovery_validator::Diagnostic;

    fn finding(file: &str, tool: &str, severity: Severity) -> Finding {
        Finding {
            file: file.to_owned(),
            diagnostic: Diagnostic {
                code: "R101",
                name: "dangling-operation-id",
                severity,
                message: format!("tool '{tool}' names compensating operation '{tool}'"),
                help: Some(format!("declare '{tool}'\r\n::warning::x")),
                tool: Some(tool.to_owned()),
                pointer: "/tools/0/annotations/recovery".to_owned(),
                span: None,
                url: "https://example.invalid/rules#r101".to_owned(),
            },
            region: Some(Region {
                start_line: 3,
                start_column: 5,
                end_line: 3,
                end_column: 9,
            }),
            suppressed: false,
            live: false,
        }
    }

    /// Parses a line the way the runner does: `::name props::data`, props split on `,`, each
    /// `key=value`. Returns (name, props, data) or None when the line is no command.
    type Command<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

    fn parse(line: &str) -> Option<Command<'_>> {
        let rest = line.strip_prefix("::")?;
        let (head, data) = rest.split_once("::")?;
        let (name, props) = head.split_once(' ').unwrap_or((head, ""));
        let props = props
            .split(',')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        Some((name, props, data))
    }

    /// The runner's unescaping: one pass over `%XX`.
    fn unescape(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(i) = rest.find('%') {
            out.push_str(&rest[..i]);
            let code = rest.get(i + 1..i + 3).unwrap_or("");
            match code {
                "25" => out.push('%'),
                "0D" => out.push('\r'),
                "0A" => out.push('\n'),
                "3A" => out.push(':'),
                "2C" => out.push(','),
                _ => panic!("unexpected escape in {text}"),
            }
            rest = &rest[i + 3..];
        }
        out.push_str(rest);
        out
    }

    #[test]
    fn plain_command() {
        let mut f = finding("fixtures/a.json", "create_order", Severity::Error);
        f.diagnostic.help = None;
        assert_eq!(
            command(&f),
            "::error file=fixtures/a.json,line=3,col=5,endLine=3,endColumn=9,\
             title=R101 dangling-operation-id::tool 'create_order' names compensating operation \
             'create_order'%0Ahttps://example.invalid/rules#r101"
        );
    }

    #[test]
    fn levels() {
        for (severity, name) in [
            (Severity::Error, "error"),
            (Severity::Warning, "warning"),
            (Severity::Info, "notice"),
        ] {
            let line = command(&finding("a.json", "t", severity));
            assert_eq!(parse(&line).unwrap().0, name);
        }
    }

    #[test]
    fn crafted_names_cannot_inject() {
        let evil = [
            "evil\n::error::pwned",
            "evil\r\n::error file=x::pwned",
            "100%0A::error::pwned",
            "a::b",
            "a,title=pwned",
            "a:b,c:d",
            "%25%0A%3A%2C",
        ];
        for tool in evil {
            for file in ["a.json", tool] {
                let findings: Vec<_> = [Severity::Error, Severity::Warning, Severity::Info]
                    .into_iter()
                    .map(|s| finding(file, tool, s))
                    .collect();
                let mut out = Vec::new();
                super::super::types::document(&mut Github, &mut out, file, None, &findings)
                    .unwrap();
                let text = String::from_utf8(out).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines.len(), findings.len(), "{text}");
                for line in lines {
                    let (name, props, data) = parse(line).unwrap();
                    assert!(["error", "warning", "notice"].contains(&name));
                    let keys: Vec<&str> = props.iter().map(|(k, _)| *k).collect();
                    assert_eq!(
                        keys,
                        ["file", "line", "col", "endLine", "endColumn", "title"],
                        "{line}"
                    );
                    for (_, value) in &props {
                        assert!(!value.contains(':') && !value.contains(','), "{line}");
                    }
                    assert!(!data.contains('\n') && !data.contains('\r'));
                    // The runner unescapes exactly once: the original text comes back.
                    assert!(unescape(data).contains(tool), "{line}");
                    assert_eq!(unescape(props[0].1), file);
                }
            }
        }
    }
}
