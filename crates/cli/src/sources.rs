//! What became of each input of a run (a file, stdin, a live server, a client config's entry, a
//! registry entry): linted, or why not. Every machine format states each source once, so that a
//! CI job reading a report can tell "linted clean" from "never started".

use mcp_recovery_client::{ClientError, Target};
use serde_json::{Value, json};

/// Where a source came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file given or found in a directory.
    File,
    /// Standard input (`-`).
    Stdin,
    /// A server started with `--stdio`.
    Stdio,
    /// A server reached at `--url`.
    Url,
    /// A server of an MCP client config (`--config FILE --server NAME`), named `FILE#NAME`.
    Config,
    /// A package or remote of an MCP Registry `server.json`, named `FILE#/packages/N`.
    ServerJson,
    /// The overlay file of `--overlay`.
    Overlay,
}

impl Kind {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::File => "file",
            Self::Stdin => "stdin",
            Self::Stdio => "stdio",
            Self::Url => "url",
            Self::Config => "config",
            Self::ServerJson => "server-json",
            Self::Overlay => "overlay",
        }
    }

    /// The kind of a server reached directly at `target`.
    pub fn of_target(target: &Target) -> Self {
        match target {
            Target::Stdio { .. } => Self::Stdio,
            Target::Http { .. } => Self::Url,
        }
    }

    /// Whether the source is a live server rather than a file.
    pub fn live(self) -> bool {
        matches!(
            self,
            Self::Stdio | Self::Url | Self::Config | Self::ServerJson
        )
    }
}

/// What became of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Read (or fetched) and linted.
    Linted,
    /// The server could not be started or reached, or ended before it answered.
    FailedToStart,
    /// The server did not answer in time.
    TimedOut,
    /// The server answered with something the protocol does not allow, or refused.
    ProtocolError,
    /// The source could not be read: a file, or a client-config or server.json entry.
    Unreadable,
    /// Not tried, for a reason that is not a fault of the run (disabled in its config, a
    /// runtime this machine lacks).
    Skipped,
}

impl Status {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linted => "linted",
            Self::FailedToStart => "failed-to-start",
            Self::TimedOut => "timed-out",
            Self::ProtocolError => "protocol-error",
            Self::Unreadable => "unreadable",
            Self::Skipped => "skipped",
        }
    }

    /// Whether the source failed: the run then exits 2.
    pub fn failed(self) -> bool {
        !matches!(self, Self::Linted | Self::Skipped)
    }

    /// The status of a server that failed with `error`.
    pub fn of_error(error: &ClientError) -> Self {
        match error {
            ClientError::Timeout { .. } | ClientError::DeadlineExceeded { .. } => Self::TimedOut,
            ClientError::Spawn { .. }
            | ClientError::Exited { .. }
            | ClientError::Http { .. }
            | ClientError::InvalidHeader { .. } => Self::FailedToStart,
            _ => Self::ProtocolError,
        }
    }
}

/// One source and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceReport {
    /// Its name as shown everywhere else (made inert): the file, `stdio:PROGRAM`, the URL,
    /// `FILE#NAME`.
    pub name: String,
    /// Where it came from.
    pub kind: Kind,
    /// What became of it.
    pub status: Status,
    /// Why it was not linted (made inert; lines after the first are the server's stderr tail).
    pub error: Option<String>,
    /// The protocol revision the server spoke.
    pub protocol: Option<String>,
    /// How many tools it lists, when linted.
    pub tools: Option<usize>,
    /// How many findings it has that count (the baseline's are left out); `None` when it was
    /// not linted, or its findings are not counted per source (`census`).
    pub findings: Option<usize>,
}

impl SourceReport {
    /// A source that was linted.
    pub fn linted(name: &str, kind: Kind, tools: usize, findings: Option<usize>) -> Self {
        Self {
            name: name.to_owned(),
            kind,
            status: Status::Linted,
            error: None,
            protocol: None,
            tools: Some(tools),
            findings,
        }
    }

    /// A source that was not linted, with the reason.
    pub fn not_linted(name: &str, kind: Kind, status: Status, error: &str) -> Self {
        Self {
            name: name.to_owned(),
            kind,
            status,
            error: Some(crate::errors::inert_lines(error)),
            protocol: None,
            tools: None,
            findings: None,
        }
    }

    /// The first line of the reason (without the server's stderr tail), for one-line formats.
    pub fn reason(&self) -> &str {
        self.error
            .as_deref()
            .and_then(|e| e.lines().next())
            .unwrap_or("")
    }

    /// The record of the JSON contract.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "kind": self.kind.as_str(),
            "status": self.status.as_str(),
            "error": self.error,
            "protocol": self.protocol,
            "tools": self.tools,
            "findings": self.findings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_errors_map_to_statuses() {
        let spawn = ClientError::Spawn {
            program: "x".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(Status::of_error(&spawn), Status::FailedToStart);
        let http = ClientError::Http {
            method: "initialize".into(),
            detail: "connection refused".into(),
        };
        assert_eq!(Status::of_error(&http), Status::FailedToStart);
        let deadline = ClientError::DeadlineExceeded {
            method: "tools/list".into(),
            total: std::time::Duration::from_secs(1),
            stderr: Default::default(),
        };
        assert_eq!(Status::of_error(&deadline), Status::TimedOut);
        let status = ClientError::HttpStatus {
            method: "initialize".into(),
            status: 500,
            body: String::new(),
        };
        assert_eq!(Status::of_error(&status), Status::ProtocolError);
        assert!(Status::Unreadable.failed() && !Status::Skipped.failed());
    }

    #[test]
    fn reasons_are_inert_and_one_line_on_request() {
        let report = SourceReport::not_linted(
            "stdio:x",
            Kind::Stdio,
            Status::FailedToStart,
            "could not start\u{1b}[31m\n  | tail",
        );
        let error = report.error.as_deref().unwrap();
        assert!(!error.contains('\u{1b}'), "{error}");
        assert!(!report.reason().contains('\n'));
        assert!(report.reason().starts_with("could not start"));
    }
}
