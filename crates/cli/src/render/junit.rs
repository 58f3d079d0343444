//! `--format junit`: JUnit XML as CI test reports read it (Jenkins, GitLab `reports:junit`,
//! Azure DevOps): one `testsuite` per document, one `testcase` per finding (errors and warnings
//! as `failure`, infos as passing cases with the text in `system-out`), and one passing case
//! for a clean document so that it shows up.

use std::fmt::Write as _;
use std::io::{self, Write};

use mcp_recovery_validator::{Severity, is_unsafe_char, push_escape};

use super::{Finding, Renderer, Source, Summary};

/// Keeps each suite, already rendered, and prints the document at the end.
#[derive(Debug, Default)]
pub struct Junit {
    suites: Vec<String>,
    tests: usize,
    failures: usize,
}

/// Escapes text for XML 1.0 content and attribute values: the five predefined entities, and
/// control characters (most of which XML 1.0 cannot carry at all) written out. In attributes,
/// tab and line breaks are written as character references so that parsers keep them.
pub fn escape(text: &str, attribute: bool) -> String {
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
    fn file(
        &mut self,
        _out: &mut dyn Write,
        file: &str,
        _source: Option<&Source<'_>>,
        findings: &[Finding],
    ) -> io::Result<()> {
        let file_attr = escape(file, true);
        let mut cases = String::new();
        let mut failures = 0;
        for finding in findings {
            let d = &finding.diagnostic;
            let mut line = String::new();
            if let Some(region) = finding.region {
                line = format!(" line=\"{}\"", region.start_line);
            }
            let _ = writeln!(
                cases,
                "    <testcase name=\"{}\" classname=\"{file_attr}\" file=\"{file_attr}\"{line}>",
                escape(&case_name(finding), true),
            );
            let text = escape(&body(finding), false);
            if d.severity == Severity::Info {
                let _ = writeln!(cases, "      <system-out>{text}</system-out>");
            } else {
                failures += 1;
                let _ = writeln!(
                    cases,
                    "      <failure type=\"{}\" message=\"{}\">{text}</failure>",
                    d.severity.as_str(),
                    escape(&d.message, true),
                );
            }
            cases.push_str("    </testcase>\n");
        }
        let mut tests = findings.len();
        if tests == 0 {
            tests = 1;
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

    fn finish(&mut self, out: &mut dyn Write, _summary: &Summary) -> io::Result<()> {
        writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
        writeln!(
            out,
            "<testsuites name=\"mcp-recovery\" tests=\"{}\" failures=\"{}\" errors=\"0\">",
            self.tests, self.failures
        )?;
        for suite in &self.suites {
            out.write_all(suite.as_bytes())?;
        }
        writeln!(out, "</testsuites>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>", true),
            "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;"
        );
        assert_eq!(escape("a\nb\tc\rd", true), "a&#10;b&#9;c&#13;d");
        assert_eq!(escape("a\nb\tc", false), "a\nb\tc");
        assert_eq!(
            escape("esc\u{1b}[31m nul\u{0}", false),
            "esc\\u{1b}[31m nul\\u{0}"
        );
        assert_eq!(escape("]]>", false), "]]&gt;");
    }
}
