//! `--format junit`: JUnit XML as CI test reports read it (Jenkins, GitLab `reports:junit`,
//! Azure DevOps): one `testsuite` per document, one `testcase` per finding (errors and warnings
//! as `failure`, infos as passing cases with the text in `system-out`), one passing case for a
//! clean document so that it shows up, and for a source that was not linted (a server that did
//! not start, a file that could not be read) a suite with one errored (or skipped) case.
//!
//! Every text from input goes through [`escape_xml`], which writes each character XML 1.0 cannot
//! carry (controls, noncharacters such as `U+FFFE`) as its visible escape; the document is checked
//! once more as it is written, so that no character outside XML 1.0's `Char` production reaches a
//! CI parser, in an attribute value or anywhere else.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

use mcp_recovery_base::text::{is_xml_char, push_escape};
use mcp_recovery_validator::{Severity, escape_xml};

use crate::render::types::{Finding, Renderer, Source, Summary};
use crate::sources::{SourceReport, Status};

/// Keeps each suite, already rendered, and prints the document at the end.
#[derive(Debug, Default)]
pub struct Junit {
    suites: Vec<String>,
    /// The cases of the document being rendered, and how many of them there are and fail.
    cases: String,
    file_tests: usize,
    file_failures: usize,
    tests: usize,
    failures: usize,
    errors: usize,
}

/// The case name: code, rule name, tool and pointer, which together say what failed where.
fn case_name(finding: &Finding) -> String {
    let d = &finding.diagnostic;
    let mut name = format!("{} {}", d.code, d.name);
    if let Some(tool) = &d.tool {
        name.push_str(&format!(" ({tool})"));
    }
    if !d.pointer.is_empty() {
        name.push_str(&format!(" at {}", d.pointer));
    }
    name
}

/// `text` with any character outside XML 1.0's `Char` production written as its visible escape
/// (`\u{fffe}`); text that is already valid is returned as is.
fn xml_chars(text: &str) -> Cow<'_, str> {
    if text.chars().all(is_xml_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_xml_char(c) {
            out.push(c);
        } else {
            push_escape(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// The full text of a finding: the message, the help, the docs URL.
fn body(finding: &Finding) -> String {
    let d = &finding.diagnostic;
    let mut text = d.message.clone();
    if let Some(help) = &d.help {
        text.push_str(&format!("\nhelp: {help}"));
    }
    text.push_str(&format!("\n{}", d.url));
    text
}

impl Renderer for Junit {
    fn finding(
        &mut self,
        _out: &mut dyn Write,
        _source: Option<&Source<'_>>,
        finding: &Finding,
    ) -> io::Result<()> {
        let d = &finding.diagnostic;
        let file_attr = escape_xml(&finding.file, true);
        let line = finding
            .region
            .map(|region| format!(" line=\"{}\"", region.start_line))
            .unwrap_or_default();
        let cases = &mut self.cases;
        let _ = writeln!(
            cases,
            "    <testcase name=\"{}\" classname=\"{file_attr}\" file=\"{file_attr}\"{line}>",
            escape_xml(&case_name(finding), true),
        );
        let text = escape_xml(&body(finding), false);
        if d.severity == Severity::Info {
            let _ = writeln!(cases, "      <system-out>{text}</system-out>");
        } else {
            self.file_failures += 1;
            let _ = writeln!(
                cases,
                "      <failure type=\"{}\" message=\"{}\">{text}</failure>",
                d.severity.as_str(),
                escape_xml(&d.message, true),
            );
        }
        cases.push_str("    </testcase>\n");
        self.file_tests += 1;
        Ok(())
    }

    fn end_file(&mut self, _out: &mut dyn Write, file: &str) -> io::Result<()> {
        let file_attr = escape_xml(file, true);
        let mut cases = std::mem::take(&mut self.cases);
        let tests = std::mem::take(&mut self.file_tests).max(1);
        let failures = std::mem::take(&mut self.file_failures);
        if cases.is_empty() {
            let _ = writeln!(
                cases,
                "    <testcase name=\"mcp-recovery lint\" classname=\"{file_attr}\" \
                 file=\"{file_attr}\"/>"
            );
        }
        self.tests += tests;
        self.failures += failures;
        self.suites.push(format!(
            "  <testsuite name=\"{file_attr}\" tests=\"{tests}\" failures=\"{failures}\" \
             errors=\"0\" skipped=\"0\">\n{cases}  </testsuite>\n"
        ));
        Ok(())
    }

    fn source(&mut self, _out: &mut dyn Write, source: &SourceReport) -> io::Result<()> {
        if source.status == Status::Linted {
            return Ok(());
        }
        let name = escape_xml(&source.name, true);
        let status = source.status.as_str();
        let reason = escape_xml(source.reason(), true);
        let text = escape_xml(source.error.as_deref().unwrap_or(""), false);
        let (element, errors, skipped) = if source.status.failed() {
            (
                format!("<error type=\"{status}\" message=\"{reason}\">{text}</error>"),
                1,
                0,
            )
        } else {
            (format!("<skipped message=\"{reason}\"/>"), 0, 1)
        };
        self.tests += 1;
        self.errors += errors;
        self.suites.push(format!(
            "  <testsuite name=\"{name}\" tests=\"1\" failures=\"0\" errors=\"{errors}\" \
             skipped=\"{skipped}\">\n    <testcase name=\"mcp-recovery lint\" \
             classname=\"{name}\" file=\"{name}\">\n      {element}\n    </testcase>\n  \
             </testsuite>\n"
        ));
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write, _summary: &Summary) -> io::Result<()> {
        writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
        writeln!(
            out,
            "<testsuites name=\"mcp-recovery\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
            self.tests, self.failures, self.errors
        )?;
        for suite in &self.suites {
            out.write_all(xml_chars(suite).as_bytes())?;
        }
        writeln!(out, "</testsuites>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_xml_characters_are_written() {
        assert!(matches!(xml_chars("a\tb\n<c/> é 🦀"), Cow::Borrowed(_)));
        // U+10FFFF is a noncharacter, but an XML `Char`: escape_xml writes it as an escape.
        assert_eq!(
            xml_chars("a\u{fffe}b\u{ffff}\u{0}\u{1b}\u{10ffff}"),
            "a\\u{fffe}b\\u{ffff}\\u{0}\\u{1b}\u{10ffff}"
        );
        let hostile = "n\u{fffe}\u{ffff}\u{fdd0}\u{1fffe}\u{0}\u{1b}\u{85}\u{202e}\r\n\t\"'<&>";
        for attribute in [true, false] {
            let escaped = escape_xml(hostile, attribute);
            assert!(escaped.chars().all(is_xml_char), "{escaped:?}");
            assert!(
                escaped.contains("\\u{fffe}\\u{ffff}\\u{fdd0}\\u{1fffe}"),
                "{escaped:?}"
            );
        }
    }
}
