//! `lint` over live servers: those named on the command line, of a client config, or of a
//! registry `server.json`, each fetched, saved when asked, linted and reported in turn.

use mcp_recovery_validator::{Linter, Report};

use crate::Failure;
use crate::allowed_hosts::AllowedHosts;
use crate::args::lint::LintArgs;
use crate::commands::lint::report::{Document, Reporter};
use crate::live;
use crate::overlay::LoadedOverlay;
use crate::progress::{self, Progress};
use crate::render::Source;
use crate::save;
use crate::server_json;

/// The servers the flags name, with the entries that were skipped (`None`: lint files).
pub fn named(args: &LintArgs) -> Result<Option<live::Servers>, Failure> {
    match &args.server_json {
        Some(path) => {
            let base = live::options(&args.server)?;
            let allowed = AllowedHosts::new(&args.server.allow_hosts);
            Ok(Some(server_json::with_real_host(&allowed, |host| {
                server_json::load(path, &base, host)
            })?))
        }
        None => live::server_sources(&args.server, args.config.as_deref()),
    }
}

/// Lints `servers` (after reporting the `skipped` entries) and returns the overlay's findings,
/// when an overlay applies.
pub fn lint(
    args: &LintArgs,
    (servers, skipped): live::Servers,
    linter: &Linter,
    overlay: Option<&LoadedOverlay>,
    reporter: &mut Reporter,
) -> Result<Option<Report>, Failure> {
    let mut overlay_findings = None;
    // A client config says its own on stderr; what a registry entry found before any server
    // started is said here, whatever the format, so that stderr names every source not linted.
    let tell = args.server_json.is_some();
    for report in skipped {
        if tell {
            live::tell(&report);
        }
        reporter.document(&report.name.clone(), report.kind, Err(report))?;
    }
    // One section per server; one that cannot be reached is reported (the only one too, so
    // that every report states it) and the rest still run.
    let several = servers.len() > 1 || args.server_json.is_some();
    let saves = args
        .server
        .save
        .as_deref()
        .map(|save| save::save_paths(save, &servers, several));
    let progress = Progress::counter(progress::wanted(args.quiet), servers.len(), "servers");
    for (i, server) in servers.iter().enumerate() {
        progress.say(format!("starting {}", server.name()));
        let fetched = server.fetch_full(args.server.verbose);
        progress.step();
        let live::Fetched {
            tools: fetched,
            server_name,
            protocol,
        } = match fetched {
            Ok(fetched) => fetched,
            Err(error) => {
                let report = progress.suspend(|| live::report(server, error));
                progress
                    .suspend(|| reporter.document(&server.name(), server.kind(), Err(report)))?;
                continue;
            }
        };
        // Linted as pretty text, so that findings have lines to point at.
        let text = live::document_text(&fetched)?;
        if let Some(path) = saves.as_ref().and_then(|paths| paths.get(i)) {
            save::save(path, &text)?;
        }
        let name = server.name();
        let bytes = text.into_bytes();
        let report = match overlay {
            Some(overlay) => {
                overlay.check_server(server_name.as_deref())?;
                let both = linter.lint_source_with_overlay(&bytes, &overlay.overlay, &overlay.text);
                overlay_findings = Some(both.overlay);
                both.document
            }
            None => linter.lint_source(&bytes),
        };
        let source = Source::new(&bytes);
        let linted = Document::of(report, Some(&source), Some(protocol));
        // The report may go to the same terminal: the progress line steps aside.
        progress.suspend(|| reporter.document(&name, server.kind(), Ok(linted)))?;
    }
    Ok(overlay_findings)
}
