//! `lint`: settings (config file, then flags), inputs, the validator, a renderer, the exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_recovery_validator::{
    LintOptions, Linter, Report, Severity, escape_controls, map_in_order,
};

use crate::Failure;
use crate::baseline::{self, Baseline, Stale};
use crate::cli::{Deny, Format, LintArgs, OutputFile};
use crate::config::{self, Config};
use crate::inputs::{self, ReadError, ReadPolicy};
use crate::live;
use crate::overlay_cmd::{LoadedOverlay, OverlayArg};
use crate::overrides::Scopes;
use crate::progress::{self, Progress};
use crate::render::{self, Finding, Region, Source, Style, Summary};
use crate::server_json;
use crate::sources::{Kind, SourceReport, Status};

/// Settings of one run after merging the config file and the flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Validator options.
    pub options: LintOptions,
    /// Whether warnings fail the run.
    pub deny_warnings: bool,
}

/// Flags override the config: a list given on the command line replaces the config's list.
pub fn merge(config: Config, args: &LintArgs) -> Settings {
    let select = if args.select.is_empty() {
        config.select
    } else {
        args.select.clone()
    };
    let ignore = if args.ignore.is_empty() {
        config.ignore
    } else {
        args.ignore.clone()
    };
    Settings {
        options: LintOptions {
            preset: args
                .preset
                .map(crate::cli::PresetArg::preset)
                .or(config.preset)
                .unwrap_or_default(),
            select,
            ignore,
            severity: config.severity,
        },
        deny_warnings: config.deny_warnings || args.deny.contains(&Deny::Warnings),
    }
}

/// Reads the config named by `--config`, or the one found upward from the working directory;
/// none under `--isolated`.
fn load_config(args: &LintArgs) -> Result<Config, Failure> {
    if args.isolated {
        return Ok(Config::default());
    }
    let cwd = std::env::current_dir().map_err(|source| Failure::Read {
        path: ".".to_owned(),
        source: source.into(),
    })?;
    // With --server/--all-servers, --config is the MCP client config, not settings.
    let settings = args
        .config
        .as_ref()
        .filter(|_| !live::names_config_servers(&args.server));
    let (path, root, shown) = match settings {
        Some(path) => (path.clone(), cwd, path.display().to_string()),
        None => match config::discover(&cwd) {
            Some(path) => {
                let shown = config::display_path(&path, &cwd);
                let root = path.parent().map_or_else(|| cwd.clone(), Path::to_owned);
                (path, root, shown)
            }
            None => return Ok(Config::default()),
        },
    };
    let shown = escape_controls(&shown).into_owned();
    // A symbolic link must resolve inside `root` (the config's own directory when discovered,
    // the working directory when named); the file must be a small regular file of UTF-8 text.
    let policy = ReadPolicy {
        max_bytes: config::MAX_CONFIG_BYTES,
        ..inputs::policy()
    };
    let unreadable = |source| Failure::Read {
        path: shown.clone(),
        source,
    };
    let bytes = inputs::read_file(&path, &root, policy).map_err(unreadable)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        unreadable(ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "it is not UTF-8 text",
        )))
    })?;
    if settings.is_some() && crate::client_config::looks_like_client_config(&text) {
        return Err(Failure::Usage(format!(
            "{shown} is an MCP client config, not mcp-recovery.toml settings: add --server NAME \
             or --all-servers to lint its servers"
        )));
    }
    Ok(config::parse(&text, &shown)?)
}

/// One report of the run: stdout or an `--output-file`.
struct Sink {
    renderer: Box<dyn render::Renderer>,
    out: Box<dyn Write>,
    /// The file, for errors (`None`: stdout).
    path: Option<PathBuf>,
}

impl Sink {
    /// Opens `--output-file` before linting, so a bad path fails the run at once.
    fn file(output: &OutputFile) -> Result<Self, Failure> {
        let file = std::fs::File::create(&output.path).map_err(|source| Failure::WriteFile {
            path: output.path.display().to_string(),
            source,
        })?;
        // Files never get colors, whatever the terminal.
        let style = Style {
            color: false,
            ..Style::detect()
        };
        Ok(Self {
            renderer: render::renderer(output.format, style),
            out: Box::new(std::io::BufWriter::new(file)),
            path: Some(output.path.clone()),
        })
    }

    /// Names the file in a write error.
    fn error(&self, source: std::io::Error) -> Failure {
        match &self.path {
            Some(path) => Failure::WriteFile {
                path: path.display().to_string(),
                source,
            },
            None => Failure::Write(source),
        }
    }

    fn document(
        &mut self,
        name: &str,
        source: Option<&Source<'_>>,
        findings: &[Finding],
    ) -> Result<(), Failure> {
        let result = render::document(&mut *self.renderer, &mut self.out, name, source, findings);
        result.map_err(|e| self.error(e))
    }

    fn source(&mut self, source: &SourceReport) -> Result<(), Failure> {
        let result = self.renderer.source(&mut self.out, source);
        result.map_err(|e| self.error(e))
    }

    fn finish(&mut self, summary: &Summary) -> Result<(), Failure> {
        let result = self
            .renderer
            .finish(&mut self.out, summary)
            .and_then(|()| self.out.flush());
        result.map_err(|e| self.error(e))
    }
}

/// Runs `lint` and returns the exit code (0 clean, 1 findings at the failing level).
pub fn run(args: &LintArgs) -> Result<ExitCode, Failure> {
    let config = load_config(args)?;
    let overrides = config.overrides.clone();
    let settings = merge(config, args);
    let scopes = Scopes::new(&settings.options, overrides);
    let linter = if scopes.is_empty() {
        Linter::new(settings.options.clone())?
    } else {
        // Every rule runs; the scopes keep what each file and tool asks for.
        Linter::new(Scopes::linter_options(&settings.options)?)?
    };
    let mut baseline = match &args.baseline {
        Some(path) => Some(Baseline::load(path)?),
        None => None,
    };
    if let Some(baseline) = &mut baseline {
        cover(baseline, args);
    }
    let mut sinks = vec![Sink {
        renderer: render::renderer(args.format, Style::detect()),
        out: Box::new(std::io::stdout().lock()),
        path: None,
    }];
    for output in &args.output_files {
        sinks.push(Sink::file(output)?);
    }
    let mut summary = Summary::default();
    // Only kept when a baseline is to be written.
    let mut all_findings = Vec::new();
    // How many sources of each kind failed (a file or a server).
    let mut unlinted = Unlinted::default();
    let mut document = |name: &str, kind: Kind, outcome: Result<Document<'_>, SourceReport>| {
        let Document {
            source,
            tools,
            diagnostics,
            protocol,
        } = match outcome {
            Ok(document) => document,
            Err(report) => {
                unlinted.count(&report);
                return sinks.iter_mut().try_for_each(|sink| sink.source(&report));
            }
        };
        let live = kind.live();
        let mut findings = findings(name, diagnostics, live);
        scopes.apply(&mut findings, |finding| {
            (
                crate::baseline::normalize_file(&finding.file),
                &mut finding.diagnostic,
            )
        });
        if let Some(baseline) = &mut baseline {
            baseline.suppress(name, &mut findings);
        }
        if args.write_baseline.is_some() {
            all_findings.extend(findings.iter().cloned());
            for finding in &mut findings {
                finding.suppressed = true;
            }
        }
        summary.add(tools, &findings, live);
        let counted = findings.iter().filter(|f| !f.suppressed).count();
        let report = SourceReport {
            protocol,
            ..SourceReport::linted(name, kind, tools, Some(counted))
        };
        sinks.iter_mut().try_for_each(|sink| {
            sink.document(name, source, &findings)?;
            sink.source(&report)
        })
    };

    let overlay = args
        .overlay
        .as_deref()
        .map(LoadedOverlay::read)
        .transpose()?;
    let mut overlay_findings = None;

    let servers = match &args.server_json {
        Some(path) => {
            let base = live::options(&args.server)?;
            Some(server_json::with_real_host(|host| {
                server_json::load(path, &base, host)
            })?)
        }
        None => live::server_sources(&args.server, args.config.as_deref())?,
    };
    if let Some((servers, skipped)) = servers {
        for report in skipped {
            document(&report.name.clone(), report.kind, Err(report))?;
        }
        // One section per server; one that cannot be reached is reported and the rest still run
        // (always for a registry entry, whose packages are sources of one file).
        let several = servers.len() > 1 || args.server_json.is_some();
        let progress = Progress::counter(progress::wanted(args.quiet), servers.len(), "servers");
        for server in &servers {
            progress.say(format!("starting {}", server.name()));
            let fetched = server.fetch_full(args.server.verbose);
            progress.step();
            let live::Fetched {
                tools: fetched,
                server_name,
                protocol,
            } = match fetched {
                Ok(fetched) => fetched,
                Err(error) if several => {
                    let report = progress.suspend(|| live::report(server, error));
                    progress.suspend(|| document(&server.name(), server.kind(), Err(report)))?;
                    continue;
                }
                Err(error) => return Err(Failure::server(server.name())(error)),
            };
            // Linted as pretty text, so that findings have lines to point at.
            let text = live::document_text(&fetched)?;
            if let Some(save) = &args.server.save {
                live::save(&live::save_path(save, server, several), &text)?;
            }
            let name = server.name();
            let bytes = text.into_bytes();
            let Report { tools, diagnostics } = match &overlay {
                Some(overlay) => {
                    overlay.check_server(server_name.as_deref())?;
                    let both =
                        linter.lint_source_with_overlay(&bytes, &overlay.overlay, &overlay.text);
                    overlay_findings = Some(both.overlay);
                    both.document
                }
                None => linter.lint_source(&bytes),
            };
            let source = Source::new(&bytes);
            let linted = Document {
                source: Some(&source),
                tools,
                diagnostics,
                protocol: Some(protocol),
            };
            // The report may go to the same terminal: the progress line steps aside.
            progress.suspend(|| document(&name, server.kind(), Ok(linted)))?;
        }
    } else {
        let paths = if args.paths.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            args.paths.clone()
        };
        let inputs = inputs::collect(&paths)?;
        if overlay.is_some() && inputs.len() != 1 {
            return Err(Failure::Usage(format!(
                "--overlay applies to one tools/list document, and {} were given",
                inputs.len()
            )));
        }
        // Files are read and linted on every core; they are reported in the order given, each
        // once its predecessors are, with the files in flight bounded.
        let threads = match &overlay {
            Some(_) => 1,
            None => std::thread::available_parallelism().map_or(1, usize::from),
        };
        let several = inputs.len() > 1;
        let lint = |input: &inputs::Input| -> Result<Linted, Failure> {
            let kind = match input {
                inputs::Input::Stdin => Kind::Stdin,
                inputs::Input::File(_) => Kind::File,
            };
            // With several inputs, one that cannot be read is reported and the rest still run.
            let source = match input.read() {
                Ok(source) => source,
                Err(failure) if several => {
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
                Err(failure) => return Err(failure),
            };
            let (report, overlay) = match &overlay {
                Some(overlay) => {
                    let both =
                        linter.lint_source_with_overlay(&source, &overlay.overlay, &overlay.text);
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
        };
        let weight =
            |linted: &Result<Linted, Failure>| linted.as_ref().map_or(0, |l| l.source.len());
        map_in_order(&inputs, threads, lint, weight, |linted| {
            let linted = linted?;
            if linted.overlay.is_some() {
                overlay_findings = linted.overlay;
            }
            let Report { tools, diagnostics } = match linted.report {
                Ok(report) => report,
                Err(unreadable) => return document(&linted.name, linted.kind, Err(unreadable)),
            };
            // Indexed once per document, and only when a finding points into it.
            let source = diagnostics
                .iter()
                .any(|d| d.span.is_some())
                .then(|| Source::new(&linted.source));
            let linted_document = Document {
                source: source.as_ref(),
                tools,
                diagnostics,
                protocol: None,
            };
            document(&linted.name, linted.kind, Ok(linted_document))
        })?;
    }
    if let (Some(overlay), Some(report)) = (&overlay, overlay_findings) {
        let source = Source::new(overlay.text.as_bytes());
        let overlay_document = Document {
            source: Some(&source),
            tools: 0,
            diagnostics: report.diagnostics,
            protocol: None,
        };
        document(&overlay.shown, Kind::Overlay, Ok(overlay_document))?;
    }
    for sink in &mut sinks {
        sink.finish(&summary)?;
    }
    drop(sinks);
    if args.format == Format::Github {
        // Workflow commands own stdout; the summary goes to the log.
        eprintln!("{}", summary.line());
    }
    if let Some(path) = &args.write_baseline {
        baseline::write(path, &all_findings)?;
        eprintln!(
            "wrote {} ({} findings)",
            escape_controls(&path.display().to_string()),
            all_findings.len()
        );
    }
    let stale = baseline.map(|b| b.stale()).unwrap_or(Stale(Vec::new()));
    if !stale.0.is_empty() {
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
    }

    let failing = [
        (Severity::Error, summary.errors),
        (Severity::Warning, summary.warnings),
        (Severity::Info, summary.infos),
    ]
    .into_iter()
    .any(|(severity, count)| count > 0 && fails(severity, settings.deny_warnings));
    if summary.files + summary.servers == 0 && args.server_json.is_some() {
        // Every entry was skipped: nothing was checked, which is no pass.
        eprintln!("error: no server of the server.json could be linted");
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

/// One linted document, as the renderers get it.
struct Document<'a> {
    /// Its text, when a finding points into it.
    source: Option<&'a Source<'a>>,
    /// How many tools it lists.
    tools: usize,
    /// The validator's findings.
    diagnostics: Vec<mcp_recovery_validator::Diagnostic>,
    /// The protocol revision a live server spoke.
    protocol: Option<String>,
}

/// How many sources failed, by kind.
#[derive(Debug, Default)]
struct Unlinted {
    servers: usize,
    files: usize,
}

impl Unlinted {
    fn count(&mut self, report: &SourceReport) {
        if !report.status.failed() {
            return;
        }
        if report.kind.live() {
            self.servers += 1;
        } else {
            self.files += 1;
        }
    }
}

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

/// Attaches the file name (already inert) and the region of the diagnostic's span.
fn findings(
    file: &str,
    diagnostics: Vec<mcp_recovery_validator::Diagnostic>,
    live: bool,
) -> Vec<Finding> {
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

/// Whether findings of this severity fail a run.
fn fails(severity: Severity, deny_warnings: bool) -> bool {
    match severity {
        Severity::Error => true,
        Severity::Warning => deny_warnings,
        Severity::Info => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn lint_args(argv: &[&str]) -> LintArgs {
        let mut full = vec!["mcp-recovery", "lint"];
        full.extend_from_slice(argv);
        match crate::cli::Cli::parse_from(full).command {
            crate::cli::Command::Lint(args) => args,
            other => panic!("not lint: {other:?}"),
        }
    }

    #[test]
    fn flags_replace_config_lists() {
        let config = Config {
            preset: None,
            select: vec!["R101".into()],
            ignore: vec!["R114".into()],
            deny_warnings: false,
            severity: [("R108".to_owned(), Severity::Error)].into(),
            overrides: Vec::new(),
        };
        let settings = merge(
            config.clone(),
            &lint_args(&["--select", "R102,R103", "--select", "R104"]),
        );
        assert_eq!(settings.options.select, ["R102", "R103", "R104"]);
        assert_eq!(settings.options.ignore, ["R114"]);
        assert_eq!(
            settings.options.severity.get("R108"),
            Some(&Severity::Error)
        );
        assert!(!settings.deny_warnings);
        let settings = merge(
            config,
            &lint_args(&["--deny", "warnings", "--ignore", "R107"]),
        );
        assert_eq!(settings.options.select, ["R101"]);
        assert_eq!(settings.options.ignore, ["R107"]);
        assert!(settings.deny_warnings);
    }

    #[test]
    fn failing_levels() {
        assert!(fails(Severity::Error, false));
        assert!(!fails(Severity::Warning, false));
        assert!(fails(Severity::Warning, true));
        assert!(!fails(Severity::Info, true));
    }
}
