//! What a `lint` run does with each document it linted (or could not): its findings scoped,
//! matched against the baseline, counted and written to every report.

use mcp_recovery_validator::{Diagnostic, Report};

use crate::Failure;
use crate::baseline::{self, Baseline};
use crate::commands::lint::sink::Sink;
use crate::overrides::Scopes;
use crate::render::{Finding, Region, Source, Summary};
use crate::sources::{Kind, SourceReport};

/// One linted document, as the renderers get it.
pub struct Document<'a> {
    /// Its text, when a finding points into it.
    pub source: Option<&'a Source<'a>>,
    /// How many tools it lists.
    pub tools: usize,
    /// The validator's findings.
    pub diagnostics: Vec<Diagnostic>,
    /// The protocol revision a live server spoke.
    pub protocol: Option<String>,
}

impl<'a> Document<'a> {
    /// A document from the validator's report on it.
    pub fn of(report: Report, source: Option<&'a Source<'a>>, protocol: Option<String>) -> Self {
        let Report { tools, diagnostics } = report;
        Self {
            source,
            tools,
            diagnostics,
            protocol,
        }
    }
}

/// How many sources failed, by kind.
#[derive(Debug, Default)]
pub struct Unlinted {
    /// Servers that could not be reached or fetched.
    pub servers: usize,
    /// Files that could not be read.
    pub files: usize,
    /// Sources skipped (not a fault of the run, but not linted either).
    pub skipped: usize,
}

impl Unlinted {
    fn count(&mut self, report: &SourceReport) {
        if !report.status.failed() {
            self.skipped += 1;
            return;
        }
        if report.kind.live() {
            self.servers += 1;
        } else {
            self.files += 1;
        }
    }
}

/// The reports of a run and what it has counted so far.
pub struct Reporter {
    sinks: Vec<Sink>,
    scopes: Scopes,
    baseline: Option<Baseline>,
    /// Whether a baseline is to be written (`--write-baseline`): every finding is then kept and
    /// none fails the run.
    keep_all: bool,
    summary: Summary,
    /// Only kept when a baseline is to be written.
    all_findings: Vec<Finding>,
    /// How many sources of each kind failed (a file or a server).
    unlinted: Unlinted,
}

/// What a run has counted once every report is written.
pub struct Tally {
    /// The totals.
    pub summary: Summary,
    /// Every finding, under `--write-baseline`.
    pub all_findings: Vec<Finding>,
    /// The sources that could not be linted.
    pub unlinted: Unlinted,
    /// The baseline read with `--baseline`, told what the run found.
    pub baseline: Option<Baseline>,
}

impl Reporter {
    /// Reports to `sinks`, findings scoped by `scopes` and matched against `baseline`.
    pub fn new(
        sinks: Vec<Sink>,
        scopes: Scopes,
        baseline: Option<Baseline>,
        keep_all: bool,
    ) -> Self {
        Self {
            sinks,
            scopes,
            baseline,
            keep_all,
            summary: Summary::default(),
            all_findings: Vec::new(),
            unlinted: Unlinted::default(),
        }
    }

    /// Reports one document named `name` (already inert), or why it could not be linted.
    pub fn document(
        &mut self,
        name: &str,
        kind: Kind,
        outcome: Result<Document<'_>, SourceReport>,
    ) -> Result<(), Failure> {
        let Document {
            source,
            tools,
            diagnostics,
            protocol,
        } = match outcome {
            Ok(document) => document,
            Err(report) => {
                self.unlinted.count(&report);
                if let Some(baseline) = &mut self.baseline {
                    baseline.not_linted(name);
                }
                return self
                    .sinks
                    .iter_mut()
                    .try_for_each(|sink| sink.source(&report));
            }
        };
        let live = kind.live();
        let mut findings = findings(name, diagnostics, live);
        self.scopes.apply(&mut findings, |finding| {
            (
                baseline::normalize_file(&finding.file),
                &mut finding.diagnostic,
            )
        });
        if let Some(baseline) = &mut self.baseline {
            baseline.suppress(name, &mut findings);
        }
        if self.keep_all {
            self.all_findings.extend(findings.iter().cloned());
            for finding in &mut findings {
                finding.suppressed = true;
            }
        }
        self.summary.add(tools, &findings, live);
        let counted = findings.iter().filter(|f| !f.suppressed).count();
        let report = SourceReport {
            protocol,
            ..SourceReport::linted(name, kind, tools, Some(counted))
        };
        self.sinks.iter_mut().try_for_each(|sink| {
            sink.document(name, source, &findings)?;
            sink.source(&report)
        })
    }

    /// Ends every report with the summary and closes them (stdout is released, files are
    /// flushed).
    pub fn finish(mut self) -> Result<Tally, Failure> {
        for sink in &mut self.sinks {
            sink.finish(&self.summary)?;
        }
        drop(self.sinks);
        Ok(Tally {
            summary: self.summary,
            all_findings: self.all_findings,
            unlinted: self.unlinted,
            baseline: self.baseline,
        })
    }
}

/// Attaches the file name (already inert) and the region of the diagnostic's span.
fn findings(file: &str, diagnostics: Vec<Diagnostic>, live: bool) -> Vec<Finding> {
    diagnostics
        .into_iter()
        .map(|diagnostic| {
            let region = diagnostic.span.as_ref().map(Region::of);
            Finding {
                file: file.to_owned(),
                diagnostic,
                region,
                suppressed: false,
                live,
            }
        })
        .collect()
}
