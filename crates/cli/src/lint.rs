//! `lint`: settings (config file, then flags), inputs, the validator, a renderer, the exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_recovery_validator::{LintOptions, Linter, Report, Severity, escape_controls};

use crate::Failure;
use crate::cli::{Deny, Format, LintArgs};
use crate::config::{self, Config};
use crate::inputs::{self, ReadError, ReadPolicy};
use crate::live;
use crate::render::{self, Finding, Region, Source, Style, Summary};

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

/// Runs `lint` and returns the exit code (0 clean, 1 findings at the failing level).
pub fn run(args: &LintArgs) -> Result<ExitCode, Failure> {
    let settings = merge(load_config(args)?, args);
    let linter = Linter::new(settings.options.clone())?;
    let style = Style::detect();
    let mut renderer = render::renderer(args.format, style);
    let mut out = std::io::stdout().lock();
    let mut summary = Summary::default();
    let mut unlinted = 0;

    if let Some(servers) = live::servers(&args.server, args.config.as_deref())? {
        // One section per server; one that cannot be reached is reported and the rest still run.
        let several = servers.len() > 1;
        for server in &servers {
            let document = match server.fetch(args.server.verbose) {
                Ok(document) => document,
                Err(error) if several => {
                    live::report(server, error);
                    unlinted += 1;
                    continue;
                }
                Err(error) => return Err(Failure::server(server.name())(error)),
            };
            // Linted as pretty text, so that findings have lines to point at.
            let text = live::document_text(&document)?;
            if let Some(save) = &args.server.save {
                live::save(&live::save_path(save, server, several), &text)?;
            }
            let name = server.name();
            let bytes = text.into_bytes();
            let Report { tools, diagnostics } = linter.lint_source(&bytes);
            let source = Source::new(&bytes);
            let findings = findings(&name, Some(&source), diagnostics, true);
            summary.add(tools, &findings);
            renderer.file(&mut out, &name, Some(&source), &findings)?;
        }
    } else {
        let paths = if args.paths.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            args.paths.clone()
        };
        for input in inputs::collect(&paths)? {
            let name = input.display();
            let source = input.read()?;
            let Report { tools, diagnostics } = linter.lint_source(&source);
            // Indexed once per document, and only when a finding points into it.
            let source = diagnostics
                .iter()
                .any(|d| d.span.is_some())
                .then(|| Source::new(&source));
            let findings = findings(&name, source.as_ref(), diagnostics, false);
            summary.add(tools, &findings);
            renderer.file(&mut out, &name, source.as_ref(), &findings)?;
        }
    }
    renderer.finish(&mut out, &summary)?;
    out.flush()?;
    if args.format == Format::Github {
        // Workflow commands own stdout; the summary goes to the log.
        eprintln!("{}", summary.line());
    }

    let failing = [
        (Severity::Error, summary.errors),
        (Severity::Warning, summary.warnings),
        (Severity::Info, summary.infos),
    ]
    .into_iter()
    .any(|(severity, count)| count > 0 && fails(severity, settings.deny_warnings));
    if unlinted > 0 {
        // The worst outcome wins: a server that could not be linted fails the run with 2.
        eprintln!("error: {unlinted} server(s) could not be linted");
        return Ok(ExitCode::from(2));
    }
    Ok(if failing {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Attaches the file name (already inert) and the region (computed while the text is at hand).
fn findings(
    file: &str,
    source: Option<&Source<'_>>,
    diagnostics: Vec<mcp_recovery_validator::Diagnostic>,
    live: bool,
) -> Vec<Finding> {
    diagnostics
        .into_iter()
        .map(|diagnostic| {
            let region = match (source, &diagnostic.span) {
                (Some(source), Some(span)) => Some(Region::of(span, &source.lines)),
                _ => None,
            };
            Finding {
                file: file.to_owned(),
                diagnostic,
                region,
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
            select: vec!["R101".into()],
            ignore: vec!["R114".into()],
            deny_warnings: false,
            severity: [("R108".to_owned(), Severity::Error)].into(),
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
