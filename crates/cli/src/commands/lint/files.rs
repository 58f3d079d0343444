//! `lint` over files, directories and stdin: read and linted on every core, reported in the
//! order given.

use std::path::{Path, PathBuf};

use mcp_recovery_base::ordered::map_in_order;
use mcp_recovery_validator::{Linter, Report};

use crate::Failure;
use crate::args::lint::LintArgs;
use crate::commands::lint::report::{Document, Reporter};
use crate::inputs;
use crate::overlay::LoadedOverlay;
use crate::render::Source;
use crate::sources::{Kind, SourceReport, Status};

/// One file, read and linted by a worker.
struct Linted {
    /// Its name as shown (already inert).
    name: String,
    /// A file or stdin.
    kind: Kind,
    source: Vec<u8>,
    /// The findings, or why the file could not be read.
    report: Result<Report, SourceReport>,
    /// The overlay's findings, when `--overlay` applies to it.
    overlay: Option<Report>,
}

/// Lints the paths of the command line (the working directory without any) and returns the
/// overlay's findings, when an overlay applies.
pub fn lint(
    args: &LintArgs,
    linter: &Linter,
    overlay: Option<&LoadedOverlay>,
    reporter: &mut Reporter,
) -> Result<Option<Report>, Failure> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let inputs = own_files_left_out(args, &paths, inputs::collect(&paths)?)?;
    if inputs.is_empty() {
        // A walk that finds nothing (all ignored, hidden or moved) is no clean run.
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Failure::Usage(format!(
            "nothing to lint: no JSON document found in {}",
            shown.join(", ")
        )));
    }
    if overlay.is_some() && inputs.len() != 1 {
        return Err(Failure::Usage(format!(
            "--overlay applies to one tools/list document, and {} were given",
            inputs.len()
        )));
    }
    // Files are read and linted on every core; they are reported in the order given, each
    // once its predecessors are, with the files in flight bounded.
    let threads = match overlay {
        Some(_) => 1,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    let lint = |input: &inputs::Input| lint_one(input, linter, overlay);
    let weight = |linted: &Result<Linted, Failure>| linted.as_ref().map_or(0, |l| l.source.len());
    let mut overlay_findings = None;
    map_in_order(&inputs, threads, lint, weight, |linted| {
        let linted = linted?;
        if linted.overlay.is_some() {
            overlay_findings = linted.overlay;
        }
        let report = match linted.report {
            Ok(report) => report,
            Err(unreadable) => {
                return reporter.document(&linted.name, linted.kind, Err(unreadable));
            }
        };
        // Indexed once per document, and only when a finding points into it.
        let source = report
            .diagnostics
            .iter()
            .any(|d| d.span.is_some())
            .then(|| Source::new(&linted.source));
        let document = Document::of(report, source.as_ref(), None);
        reporter.document(&linted.name, linted.kind, Ok(document))
    })?;
    Ok(overlay_findings)
}

/// `inputs` without the files the run itself reads or writes besides its documents (its reports,
/// baselines and overlay) where a walk found them; a document named on the command line that the
/// run would write over is refused.
fn own_files_left_out(
    args: &LintArgs,
    named: &[PathBuf],
    inputs: Vec<inputs::Input>,
) -> Result<Vec<inputs::Input>, Failure> {
    let written: Vec<&Path> = args
        .output_files
        .iter()
        .map(|o| o.path.as_path())
        .chain(args.write_baseline.as_deref())
        .collect();
    let read = args.baseline.iter().chain(&args.overlay).map(PathBuf::as_path);
    let own: Vec<PathBuf> = written
        .iter()
        .copied()
        .chain(read)
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    if own.is_empty() {
        return Ok(inputs);
    }
    let same = |path: &Path, among: &[PathBuf]| {
        std::fs::canonicalize(path).is_ok_and(|p| among.contains(&p))
    };
    let written: Vec<PathBuf> = written
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    if let Some(path) = named.iter().find(|p| same(p, &written)) {
        return Err(Failure::Usage(format!(
            "{} is both a document to lint and a file this run writes (--output-file or \
             --write-baseline): its report would replace it",
            path.display()
        )));
    }
    Ok(inputs
        .into_iter()
        .filter(|input| match input {
            inputs::Input::File(path) => named.contains(path) || !same(path, &own),
            inputs::Input::Stdin | inputs::Input::Unlisted(..) => true,
        })
        .collect())
}

/// Reads and lints one input (on a worker thread). One that cannot be read is reported (the
/// only one too, so that every report states it) and the rest still run.
fn lint_one(
    input: &inputs::Input,
    linter: &Linter,
    overlay: Option<&LoadedOverlay>,
) -> Result<Linted, Failure> {
    let kind = match input {
        inputs::Input::Stdin => Kind::Stdin,
        inputs::Input::File(_) | inputs::Input::Unlisted(..) => Kind::File,
    };
    let source = match input.read() {
        Ok(source) => source,
        Err(failure) => {
            crate::errors::report(&failure);
            return Ok(Linted {
                name: input.display(),
                kind,
                source: Vec::new(),
                report: Err(SourceReport::not_linted(
                    &input.display(),
                    kind,
                    Status::Unreadable,
                    &failure.to_string(),
                )),
                overlay: None,
            });
        }
    };
    let (report, overlay) = match overlay {
        Some(overlay) => {
            // A saved 2026-07-28 list names its server: an overlay for another is refused.
            if overlay.overlay.server().is_some()
                && let Ok(document) = mcp_recovery_model::json::from_slice(&source)
            {
                overlay.check_document(&document)?;
            }
            let both = linter.lint_source_with_overlay(&source, &overlay.overlay, &overlay.text);
            (both.document, Some(both.overlay))
        }
        None => (linter.lint_source(&source), None),
    };
    Ok(Linted {
        name: input.display(),
        kind,
        source,
        report: Ok(report),
        overlay,
    })
}
