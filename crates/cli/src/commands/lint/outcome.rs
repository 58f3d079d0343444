//! The end of a `lint` run: the summary line, the baseline written or checked, and the exit code.

use std::io::Write;
use std::process::ExitCode;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_validator::Severity;

use crate::Failure;
use crate::args::lint::{Format, LintArgs};
use crate::baseline::{self, Stale};
use crate::commands::lint::report::Tally;

/// Prints what the reports leave to stderr, writes `--write-baseline`, and returns the exit code
/// (0 clean, 1 findings at the failing level or stale baseline entries, 2 a source that could
/// not be linted).
pub fn conclude(args: &LintArgs, deny_warnings: bool, tally: Tally) -> Result<ExitCode, Failure> {
    let Tally {
        summary,
        all_findings,
        unlinted,
        baseline,
    } = tally;
    if args.format == Format::Github {
        // Workflow commands own stdout; the summary goes to the log.
        eprintln!("{}", summary.line());
    }
    if let Some(path) = &args.write_baseline {
        let text = crate::pretty(&baseline::document(&all_findings), "the baseline")?;
        crate::written::write(path, format!("{text}\n").as_bytes())?;
        eprintln!(
            "wrote {} ({} findings)",
            escape_controls(&path.display().to_string()),
            all_findings.len()
        );
    }
    let (stale, elsewhere) = match &baseline {
        Some(baseline) => (baseline.stale(), baseline.names_nothing_here()),
        None => (Stale(Vec::new()), false),
    };
    report_stale(args, &stale, elsewhere);
    let failing = [
        (Severity::Error, summary.errors),
        (Severity::Warning, summary.warnings),
        (Severity::Info, summary.infos),
    ]
    .into_iter()
    .any(|(severity, count)| count > 0 && fails(severity, deny_warnings));
    let failed = unlinted.servers + unlinted.files;
    if summary.files + summary.servers == 0 && failed == 0 && unlinted.skipped > 0 {
        // Every source was skipped: nothing was checked, which is no pass (SARIF says
        // `executionSuccessful: false` too).
        eprintln!(
            "error: no source could be linted ({} skipped)",
            unlinted.skipped
        );
        return Ok(ExitCode::from(2));
    }
    if unlinted.servers + unlinted.files > 0 {
        // The worst outcome wins: a source that could not be linted fails the run with 2.
        if unlinted.servers > 0 {
            eprintln!("error: {} server(s) could not be linted", unlinted.servers);
        }
        if unlinted.files > 0 {
            eprintln!("error: {} file(s) could not be read", unlinted.files);
        }
        return Ok(ExitCode::from(2));
    }
    Ok(if failing || !stale.0.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Lists the baseline entries that no longer match a finding, on stderr; `elsewhere`: none of
/// the files the baseline names exists here.
fn report_stale(args: &LintArgs, stale: &Stale, elsewhere: bool) {
    if stale.0.is_empty() {
        return;
    }
    let mut err = std::io::stderr().lock();
    let shown = args.baseline.as_deref().map(|p| p.display().to_string());
    let _ = writeln!(
        err,
        "error: {} of {} no longer {} a finding; remove {} (or rewrite the file with \
         --write-baseline):",
        if stale.0.len() == 1 {
            "1 entry".to_owned()
        } else {
            format!("{} entries", stale.0.len())
        },
        escape_controls(&shown.unwrap_or_default()),
        if stale.0.len() == 1 {
            "matches"
        } else {
            "match"
        },
        if stale.0.len() == 1 { "it" } else { "them" },
    );
    for line in stale.lines() {
        let _ = writeln!(err, "  {line}");
    }
    if elsewhere {
        let _ = writeln!(
            err,
            "note: none of the files the baseline names exists here: its paths are relative to \
             the directory lint ran in when it was written; run lint from there"
        );
    }
}

/// Whether findings of this severity fail a run.
pub fn fails(severity: Severity, deny_warnings: bool) -> bool {
    match severity {
        Severity::Error => true,
        Severity::Warning => deny_warnings,
        Severity::Info => false,
    }
}
