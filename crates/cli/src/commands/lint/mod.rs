//! `lint`: settings (config file, then flags), inputs, the validator, a renderer, the exit code.
//!
//! `run` is a pipeline of named steps, each in its own file: the settings and the linter
//! (`settings`), the baseline to match, the reports to write (`sink`), the overlay, the sources
//! linted one by one (`servers` for live servers, `files` for documents) into a `Reporter`
//! (`report`), the overlay's own findings, and the end of the run (`outcome`).

mod files;
mod outcome;
mod report;
mod servers;
mod settings;
mod sink;

use std::process::ExitCode;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_validator::{Linter, Report};

use crate::Failure;
use crate::args::lint::LintArgs;
use crate::baseline::Baseline;
use crate::inputs;
use crate::live;
use crate::overlay::{LoadedOverlay, OverlayArg};
use crate::overrides::Scopes;
use crate::render::Source;
use crate::sources::Kind;

use self::report::{Document, Reporter};

/// Runs `lint` and returns the exit code (0 clean, 1 findings at the failing level).
pub fn run(args: &LintArgs) -> Result<ExitCode, Failure> {
    let (settings, overrides) = settings::resolve(args)?;
    let scopes = Scopes::new(&settings.options, overrides);
    let linter = settings::linter(&settings, &scopes)?;
    let baseline = load_baseline(args)?;
    let sinks = sink::open_all(args)?;
    let mut reporter = Reporter::new(sinks, scopes, baseline, args.write_baseline.is_some());
    let overlay = read_overlay(args)?;
    let overlay_findings = lint_sources(args, &linter, overlay.as_ref(), &mut reporter)?;
    report_overlay(overlay.as_ref(), overlay_findings, &mut reporter)?;
    let tally = reporter.finish()?;
    outcome::conclude(args, settings.deny_warnings, tally)
}

/// The baseline of `--baseline`, told what the run covers.
fn load_baseline(args: &LintArgs) -> Result<Option<Baseline>, Failure> {
    let Some(path) = &args.baseline else {
        return Ok(None);
    };
    let mut baseline = Baseline::load(path)?;
    cover(&mut baseline, args);
    Ok(Some(baseline))
}

/// The overlay of `--overlay`, read and checked.
fn read_overlay(args: &LintArgs) -> Result<Option<LoadedOverlay>, Failure> {
    args.overlay.as_deref().map(LoadedOverlay::read).transpose()
}

/// Lints the live servers the flags name, or else the files, and returns the overlay's
/// findings.
fn lint_sources(
    args: &LintArgs,
    linter: &Linter,
    overlay: Option<&LoadedOverlay>,
    reporter: &mut Reporter,
) -> Result<Option<Report>, Failure> {
    match servers::named(args)? {
        Some(servers) => servers::lint(args, servers, linter, overlay, reporter),
        None => files::lint(args, linter, overlay, reporter),
    }
}

/// Reports the findings about the overlay itself, as a document of their own.
fn report_overlay(
    overlay: Option<&LoadedOverlay>,
    findings: Option<Report>,
    reporter: &mut Reporter,
) -> Result<(), Failure> {
    let (Some(overlay), Some(report)) = (overlay, findings) else {
        return Ok(());
    };
    let source = Source::new(overlay.text.as_bytes());
    let document = Document {
        source: Some(&source),
        tools: 0,
        diagnostics: report.diagnostics,
        protocol: None,
    };
    reporter.document(&overlay.shown, Kind::Overlay, Ok(document))
}

/// Tells the baseline what the run covers as a whole: the directories it walks, or every server
/// of a client config under `--all-servers`.
fn cover(baseline: &mut Baseline, args: &LintArgs) {
    if live::names_config_servers(&args.server) {
        if let (true, Some(config)) = (args.server.all_servers, &args.config) {
            baseline.cover_servers_of(&escape_controls(&config.display().to_string()));
        }
        return;
    }
    if args.server.stdio || args.server.url.is_some() || args.server_json.is_some() {
        return;
    }
    if args.paths.is_empty() {
        baseline.cover_dir(".");
    }
    for path in args.paths.iter().filter(|path| path.is_dir()) {
        baseline.cover_dir(&inputs::Input::File(path.clone()).display());
    }
}

#[cfg(test)]
mod tests;
