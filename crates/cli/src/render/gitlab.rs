//! `--format gitlab`: GitLab Code Quality, the subset of the Code Climate issue format GitLab
//! reads (`artifacts:reports:codequality`): a JSON array of issues with a description, check
//! name, fingerprint, severity and location.

use std::io::{self, Write};

use mcp_recovery_validator::Severity;
use serde_json::{Value, json};

use super::json::{pretty, write_array};
use crate::baseline::{Key, Occurrences, normalize_file};
use crate::render::types::{Finding, Renderer, Source, Summary};
use crate::sources::{SourceReport, Status};

/// Keeps the issues, already rendered, and prints the array at the end.
#[derive(Debug, Default)]
pub struct Gitlab {
    issues: Vec<String>,
    occurrences: Occurrences,
}

/// GitLab's severities are `info`, `minor`, `major`, `critical` and `blocker`.
fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "major",
        Severity::Warning => "minor",
        Severity::Info => "info",
    }
}

/// One issue; a finding without a line is placed on line 1 (GitLab needs a line).
fn issue(finding: &Finding, fingerprint: String) -> Value {
    let d = &finding.diagnostic;
    let mut description = d.message.clone();
    if finding.region.is_none() && !d.pointer.is_empty() {
        description.push_str(&format!(" (at {})", d.pointer));
    }
    let mut issue = json!({
        "type": "issue",
        "check_name": d.code,
        "description": description,
        "categories": ["Bug Risk"],
        "fingerprint": fingerprint,
        "severity": severity(d.severity),
        "location": {
            "path": normalize_file(&finding.file),
            "lines": { "begin": finding.region.map_or(1, |r| r.start_line) },
        },
    });
    if let (Some(help), Some(object)) = (&d.help, issue.as_object_mut()) {
        object.insert("content".into(), json!({ "body": help }));
    }
    issue
}

impl Renderer for Gitlab {
    fn finding(
        &mut self,
        _out: &mut dyn Write,
        _source: Option<&Source<'_>>,
        finding: &Finding,
    ) -> io::Result<()> {
        let fingerprint = self.occurrences.fingerprint(finding);
        self.issues
            .push(pretty(&issue(finding, fingerprint), "  ", true)?);
        Ok(())
    }

    /// A source that was not linted is one issue on its first line: `critical` when it failed
    /// (nothing of it was checked), `info` when it was skipped.
    fn source(&mut self, _out: &mut dyn Write, source: &SourceReport) -> io::Result<()> {
        if source.status == Status::Linted {
            return Ok(());
        }
        let check = format!("mcp-recovery/{}", source.status.as_str());
        let key = Key {
            file: normalize_file(&source.name),
            tool: None,
            code: check.clone(),
            pointer: String::new(),
        };
        let issue = json!({
            "type": "issue",
            "check_name": check,
            "description": format!(
                "{} {} was not linted ({}): {}",
                source.kind.as_str(),
                source.name,
                source.status.as_str(),
                source.reason()
            ),
            "categories": ["Bug Risk"],
            "fingerprint": key.fingerprint(0),
            "severity": if source.status.failed() { "critical" } else { "info" },
            "location": { "path": key.file, "lines": { "begin": 1 } },
        });
        self.issues.push(pretty(&issue, "  ", true)?);
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write, _summary: &Summary) -> io::Result<()> {
        write_array(out, &std::mem::take(&mut self.issues), "")?;
        writeln!(out)
    }
}
