//! The mcp-recovery command line: lint tools/list documents and live servers, list and explain
//! rules, print the generated schemas.
//!
//! Exit status: 0 clean, 1 findings at the failing level, 2 the tool could not run (with a
//! one-line reason on stderr).

mod audit_cmd;
mod baseline;
mod census_cmd;
mod cli;
mod client_config;
mod config;
mod convert_cmd;
mod demo;
mod inputs;
mod lint;
mod live;
mod overlay_cmd;
mod overrides;
mod plan_cmd;
mod position;
mod profile_cmd;
mod proxy_cmd;
mod proxy_http;
mod render;
mod rollback_cmd;
mod spec_repo_cmd;
mod suggest;
mod suggest_cmd;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use mcp_recovery_validator::{DefaultLevel, escape_controls, find_rule, rules};

use crate::cli::{Cli, Command, ExplainArgs, FetchArgs, SchemaArgs};

/// Why a command could not run (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// A file or stdin could not be read, or was refused.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The input as given.
        path: String,
        /// Why.
        source: inputs::ReadError,
    },
    /// A file or directory could not be written.
    #[error("cannot write {path}: {source}")]
    WriteFile {
        /// The path as given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A directory could not be walked.
    #[error(transparent)]
    Walk(#[from] inputs::WalkError),
    /// The config file is unreadable or wrong.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// `--select`/`--ignore` name no rule.
    #[error(transparent)]
    UnknownRule(#[from] mcp_recovery_validator::UnknownRule),
    /// The live server failed (could not start, hung, answered garbage, was unreachable).
    #[error("server {source_name}: {error}")]
    Server {
        /// How the server is named in output (`stdio:PROGRAM`, the reduced URL or `--name`).
        source_name: String,
        /// What went wrong.
        error: mcp_recovery_client::ClientError,
    },
    /// The server flags are unusable (a malformed `--header`).
    #[error(transparent)]
    ServerArgs(mcp_recovery_client::ClientError),
    /// An MCP client config (`--config FILE --server NAME`) is unreadable or wrong.
    #[error(transparent)]
    ClientConfig(client_config::ConfigFileError),
    /// Output could not be written.
    #[error("cannot write output: {0}")]
    Write(#[from] std::io::Error),
    /// Anything else, already worded.
    #[error("{0}")]
    Usage(String),
}

impl Failure {
    /// Maps an error of the live server named `source_name`.
    pub fn server(source_name: String) -> impl FnOnce(mcp_recovery_client::ClientError) -> Self {
        move |error| Self::Server { source_name, error }
    }
}

fn main() -> ExitCode {
    // clap exits with 2 on usage errors (and 0 for --help/--version), as the contract wants.
    let cli = Cli::parse();
    check_server_args(&cli);
    exit_2_on_panic();
    inputs::set_policy(inputs::ReadPolicy {
        max_bytes: cli.max_file_size,
        follow_links: cli.follow_links,
    });
    let result = match cli.command {
        Command::Lint(args) => lint::run(&args),
        Command::Rules => list_rules().map(|()| ExitCode::SUCCESS),
        Command::Explain(args) => explain(&args).map(|()| ExitCode::SUCCESS),
        Command::Schema(args) => schema(&args).map(|()| ExitCode::SUCCESS),
        Command::Fetch(args) => fetch(&args).map(|()| ExitCode::SUCCESS),
        Command::Plan(args) => plan_cmd::run(&args),
        Command::Convert(args) => convert_cmd::run(&args),
        Command::Suggest(args) => suggest_cmd::run(&args),
        Command::Profile(args) => profile_cmd::run(&args),
        Command::Census(args) => census_cmd::run(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Proxy(args) => proxy_cmd::run(&args),
        Command::Audit(args) => audit_cmd::run(&args),
        Command::Rollback(args) => rollback_cmd::run(&args),
        Command::DemoServer(args) => demo::serve(&args),
    };
    match result {
        Ok(code) => code,
        // A reader that stops early (`lint … | head -1`) is not an error: end quietly, as
        // ripgrep does.
        Err(Failure::Write(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(failure) => {
            report_failure(&failure);
            ExitCode::from(2)
        }
    }
}

/// A bug must still end with the documented status (2, "could not run"), never Rust's 101, and
/// with one inert line.
fn exit_2_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        let message = escape_controls(&info.to_string()).into_owned();
        let _ = writeln!(
            std::io::stderr(),
            "error: internal error (please report it): {message}"
        );
        std::process::exit(2);
    }));
}

/// Requirements clap lets through when a path is also given (a conflicting argument lifts
/// `requires`): `--header` needs `--url`, a command after `--` needs `--stdio`.
fn check_server_args(cli: &Cli) {
    let server = match &cli.command {
        Command::Lint(args) => &args.server,
        Command::Fetch(args) => &args.server,
        Command::Suggest(args) => &args.server,
        Command::Profile(args) => &args.server,
        Command::Rollback(args) => &args.server,
        _ => return,
    };
    let problem = if !server.headers.is_empty() && server.url.is_none() {
        Some("--header needs --url")
    } else if !server.command.is_empty() && !server.stdio {
        Some("a server command after `--` needs --stdio")
    } else {
        None
    };
    if let Some(problem) = problem {
        // Exits with clap's usage status (2).
        Cli::command()
            .error(clap::error::ErrorKind::ArgumentConflict, problem)
            .exit();
    }
}

/// Prints `error: <reason>` on one line, then (for a config mistake) the excerpt of the file.
/// Every line is made inert here: reasons quote file names, config values and server output,
/// and a CR or a line starting with `::` would otherwise be a workflow command on GitHub.
fn report_failure(failure: &Failure) {
    let mut stderr = std::io::stderr().lock();
    let reason = match failure {
        // The client's message is one line, then the tail of the server's stderr, indented.
        Failure::Server { .. } => inert_lines(&failure.to_string()),
        _ => escape_controls(&failure.to_string().replace('\n', " ")).into_owned(),
    };
    let _ = writeln!(stderr, "error: {reason}");
    if let Failure::Config(config::ConfigError::Invalid {
        path,
        text,
        message,
        span: Some(span),
    }) = failure
    {
        let excerpt = config::ConfigExcerpt {
            path,
            text,
            message,
            span: span.clone(),
        };
        let handler =
            miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
                .with_width(100);
        let mut text = String::new();
        if handler.render_report(&mut text, &excerpt).is_ok() {
            let _ = writeln!(stderr, "{}", inert_lines(text.trim_end()));
        }
    }
}

/// `text` with each line made inert (the line breaks between them kept).
fn inert_lines(text: &str) -> String {
    text.split('\n')
        .map(|line| escape_controls(line))
        .collect::<Vec<_>>()
        .join("\n")
}

fn level_name(level: DefaultLevel) -> &'static str {
    match level {
        DefaultLevel::On(severity) => severity.as_str(),
        DefaultLevel::Off => "off",
    }
}

/// `rules`: one line per rule, aligned.
fn list_rules() -> Result<(), Failure> {
    let catalog = rules();
    let name_width = catalog.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let mut out = std::io::stdout().lock();
    for rule in catalog {
        writeln!(
            out,
            "{:<5}  {:<name_width$}  {:<7}  {}",
            rule.code,
            rule.name,
            level_name(rule.default),
            rule.summary
        )?;
    }
    Ok(())
}

/// `explain CODE|NAME`: the rule's heading, default level and docs.
fn explain(args: &ExplainArgs) -> Result<(), Failure> {
    let rule = find_rule(&args.rule).ok_or_else(|| {
        Failure::Usage(format!(
            "unknown rule '{}' (run `mcp-recovery rules` for the catalog)",
            args.rule
        ))
    })?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "# {} {}", rule.code, rule.name)?;
    writeln!(out)?;
    writeln!(out, "Default level: {}", level_name(rule.default))?;
    writeln!(out)?;
    writeln!(out, "{}", rule.summary)?;
    let docs = rule.docs.trim();
    if !docs.is_empty() {
        writeln!(out)?;
        writeln!(out, "{docs}")?;
    }
    Ok(())
}

/// `schema`: list, print one, or write all.
fn schema(args: &SchemaArgs) -> Result<(), Failure> {
    if let Some(repo) = &args.spec_repo {
        return spec_repo_cmd::run(repo, &args.protocol_version);
    }
    let schemas = mcp_recovery_schema::schemas();
    let short = |file: &str| {
        file.strip_suffix(".schema.json")
            .or_else(|| file.strip_suffix(".json"))
            .unwrap_or(file)
            .to_owned()
    };
    let mut out = std::io::stdout().lock();
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|source| Failure::WriteFile {
            path: dir.display().to_string(),
            source,
        })?;
        for (file, value) in &schemas {
            let path = dir.join(file);
            let text = format!("{}\n", pretty(value, "the schema")?);
            write_new(dir, file, text.as_bytes()).map_err(|source| Failure::WriteFile {
                path: path.display().to_string(),
                source,
            })?;
            writeln!(out, "{}", escape_controls(&path.display().to_string()))?;
        }
        return Ok(());
    }
    let Some(name) = &args.name else {
        for (file, _) in &schemas {
            writeln!(out, "{file}")?;
        }
        return Ok(());
    };
    let (_, value) = schemas
        .iter()
        .find(|(file, _)| file == name || short(file) == *name)
        .ok_or_else(|| {
            let known: Vec<String> = schemas.iter().map(|(f, _)| short(f)).collect();
            Failure::Usage(format!(
                "unknown schema '{name}' (one of: {})",
                known.join(", ")
            ))
        })?;
    writeln!(out, "{}", pretty(value, "the schema")?)?;
    Ok(())
}

/// Writes `bytes` as `dir/file` without ever following a symbolic link placed in `dir`: into a
/// new file (`create_new` fails on anything already there, a link included), then renamed over
/// the target, which replaces a link itself rather than the file it points to.
fn write_new(dir: &Path, file: &str, bytes: &[u8]) -> std::io::Result<()> {
    let mut attempt = 0u32;
    loop {
        let temporary = dir.join(format!(".{file}.{}-{attempt}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(mut handle) => {
                let written = handle.write_all(bytes).and_then(|()| handle.sync_all());
                drop(handle);
                let result = written.and_then(|()| std::fs::rename(&temporary, dir.join(file)));
                if result.is_err() {
                    let _ = std::fs::remove_file(&temporary);
                }
                return result;
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => {
                attempt += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

/// `value` as pretty JSON; `what` names it should that fail. Characters that are valid in a
/// JSON string but unsafe on a terminal (C1 controls, DEL, bidi overrides, line separators) are
/// written as `\uXXXX` escapes: the same JSON value, inert text.
pub fn pretty<T: serde::Serialize>(value: &T, what: &str) -> Result<String, Failure> {
    serde_json::to_string_pretty(value)
        .map(|text| render::json_inert(&text))
        .map_err(|e| Failure::Usage(format!("cannot serialize {what}: {e}")))
}

/// `fetch`: the merged raw tools/list of a live server, or with `--save` of several.
fn fetch(args: &FetchArgs) -> Result<(), Failure> {
    let Some(servers) = live::servers(&args.server, args.config.as_deref())? else {
        return Err(Failure::Usage(
            "fetch needs a server: --stdio -- CMD ARGS..., --url URL or --config FILE --server NAME"
                .to_owned(),
        ));
    };
    let several = servers.len() > 1;
    if several && args.server.save.is_none() {
        return Err(Failure::Usage(
            "fetch prints one server's tools/list: name one --server, or give --save DIR for \
             several"
                .to_owned(),
        ));
    }
    let mut out = std::io::stdout().lock();
    let mut failed = None;
    for server in &servers {
        let text = match server.fetch(args.server.verbose) {
            Ok(value) => live::document_text(&value)?,
            Err(error) if several => {
                live::report(server, error);
                failed = Some(server.name());
                continue;
            }
            Err(error) => return Err(Failure::server(server.name())(error)),
        };
        match &args.server.save {
            Some(save) => {
                let path = live::save_path(save, server, several);
                live::save(&path, &text)?;
                if several {
                    writeln!(out, "{}", path.display())?;
                } else {
                    out.write_all(text.as_bytes())?;
                }
            }
            None => out.write_all(text.as_bytes())?,
        }
    }
    match failed {
        Some(name) => Err(Failure::Usage(format!(
            "not every server could be fetched (the last that failed: {name})"
        ))),
        None => Ok(()),
    }
}
