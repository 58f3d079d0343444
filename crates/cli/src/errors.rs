//! Why a command could not run (exit status 2), and how that is reported: one inert line on
//! stderr, never a panic's text or Rust's status 101.

use std::io::Write;

use mcp_recovery_base::text::escape_controls;

use crate::{client_config, config};

/// A directory that cannot be walked.
#[derive(Debug, thiserror::Error)]
#[error("cannot walk {path}: {source}")]
pub struct WalkError {
    /// The directory as given.
    pub path: String,
    /// Why.
    pub source: mcp_recovery_base::walk::WalkError,
}

/// Why a command could not run (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// A file or stdin could not be read, or was refused.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The input as given.
        path: String,
        /// Why.
        source: mcp_recovery_base::read::ReadError,
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
    Walk(#[from] WalkError),
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

/// Prints `error: <reason>` on one line, then (for a config mistake) the excerpt of the file.
/// Every line is made inert here: reasons quote file names, config values and server output,
/// and a CR or a line starting with `::` would otherwise be a workflow command on GitHub.
pub fn report(failure: &Failure) {
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
pub fn inert_lines(text: &str) -> String {
    text.split('\n')
        .map(|line| escape_controls(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A bug must still end with the documented status (2, "could not run"), never Rust's 101, and
/// with one inert line.
pub fn exit_2_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        let message = escape_controls(&info.to_string()).into_owned();
        let _ = writeln!(
            std::io::stderr(),
            "error: internal error (please report it): {message}"
        );
        std::process::exit(2);
    }));
}
