//! Everything that can go wrong while talking to a server.

use std::io;
use std::time::Duration;

use crate::text::{StderrTail, human_duration};

/// Why a request to an MCP server failed.
///
/// Every message is one line, followed by the last lines of the server's stderr when the server
/// is a child process and wrote any. Header values never appear in a message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server command could not be started.
    #[error("could not start `{program}`: {source}")]
    Spawn {
        /// The program as given.
        program: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// The server process ended, or closed its stdout, before it answered.
    #[error("the server exited ({status}) before it answered `{method}`{stderr}")]
    Exited {
        /// The request that was waiting.
        method: String,
        /// The exit status as the operating system reports it, e.g. `exit status: 3`.
        status: String,
        /// The last lines of the server's stderr.
        stderr: StderrTail,
    },
    /// The server did not answer in time.
    #[error("no answer to `{method}` within {}{stderr}", human_duration(*.timeout))]
    Timeout {
        /// The request that was waiting.
        method: String,
        /// How long the client waited.
        timeout: Duration,
        /// The last lines of the server's stderr.
        stderr: StderrTail,
    },
    /// The server sent something that is not the JSON-RPC the protocol requires.
    #[error("protocol error while waiting for `{method}`: {detail}{stderr}")]
    Protocol {
        /// The request that was waiting.
        method: String,
        /// What was wrong, quoting (a bounded, escaped excerpt of) what the server sent.
        detail: String,
        /// The last lines of the server's stderr.
        stderr: StderrTail,
    },
    /// The server answered with a JSON-RPC error.
    #[error("the server answered `{method}` with JSON-RPC error {code}: {message}")]
    Rpc {
        /// The request that failed.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The server's message (escaped, bounded).
        message: String,
        /// The error's `data` member, as sent.
        data: Option<Box<serde_json::Value>>,
    },
    /// A message from the server exceeded the size limit.
    #[error(
        "{what} while waiting for `{method}` is larger than the limit of {limit} bytes{stderr}"
    )]
    TooLarge {
        /// The request that was waiting.
        method: String,
        /// What was too large: a stdout line, an HTTP body, an event stream.
        what: String,
        /// The limit in bytes.
        limit: u64,
        /// The last lines of the server's stderr.
        stderr: StderrTail,
    },
    /// `tools/list` returned a cursor it had returned before.
    #[error(
        "pagination loop: `tools/list` returned the cursor {cursor:?} a second time (page {page})"
    )]
    PaginationLoop {
        /// The repeated cursor (escaped, bounded).
        cursor: String,
        /// The page that returned it again, counting from 1.
        page: usize,
    },
    /// `tools/list` kept returning a next cursor past the page limit.
    #[error("`tools/list` still had a next cursor after {limit} pages")]
    TooManyPages {
        /// The page limit.
        limit: usize,
    },
    /// The HTTP server answered with a status that is not a success.
    #[error("HTTP status {status} in answer to `{method}`{}", body_suffix(.body))]
    HttpStatus {
        /// The request that failed.
        method: String,
        /// The HTTP status code.
        status: u16,
        /// The beginning of the response body (escaped, bounded), possibly empty.
        body: String,
    },
    /// The HTTP request could not be made (connection, TLS, DNS, malformed URL).
    #[error("HTTP request for `{method}` failed: {detail}")]
    Http {
        /// The request that failed.
        method: String,
        /// What failed.
        detail: String,
    },
    /// The whole operation (connecting, negotiating, every page) took longer than
    /// `Options::total_timeout`.
    #[error(
        "the total time limit of {} ran out while waiting for `{method}`{stderr}",
        human_duration(*.total)
    )]
    DeadlineExceeded {
        /// The request that was waiting.
        method: String,
        /// The total limit.
        total: Duration,
        /// The last lines of the server's stderr.
        stderr: StderrTail,
    },
    /// Client and server have no protocol revision in common (the server answered with an
    /// `UnsupportedProtocolVersionError`, or offered or chose only versions this client does not
    /// speak).
    #[error(
        "no protocol version in common: `{method}` asked for {requested}, the server supports {}; \
         this client speaks {}",
        version_list(.supported),
        crate::versions::SUPPORTED_VERSIONS.join(", ")
    )]
    UnsupportedProtocolVersion {
        /// The request that was refused or answered.
        method: String,
        /// The version the client asked for.
        requested: String,
        /// The versions the server says it supports (escaped, bounded), possibly empty.
        supported: Vec<String>,
    },
    /// The server found the HTTP headers of a request at odds with its body (`HeaderMismatchError`).
    #[error(
        "the server rejected `{method}` because its HTTP headers do not match the request body \
         (HeaderMismatchError: {message}); a proxy or gateway that rewrites or drops headers such \
         as MCP-Protocol-Version is the usual cause"
    )]
    HeaderMismatch {
        /// The request that was refused.
        method: String,
        /// The server's message (escaped, bounded).
        message: String,
    },
    /// A `--header` specification is malformed or names an unset environment variable.
    #[error("invalid header{}: {reason}", header_name(.name))]
    InvalidHeader {
        /// The header name as given (never the value).
        name: String,
        /// What is wrong.
        reason: String,
    },
}

fn header_name(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!(" {name:?}")
    }
}

fn version_list(versions: &[String]) -> String {
    if versions.is_empty() {
        "none that it names".to_string()
    } else {
        versions.join(", ")
    }
}

fn body_suffix(body: &str) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!(": {body}")
    }
}

impl ClientError {
    /// The last lines of the server's stderr carried by this error, if any.
    pub fn stderr_tail(&self) -> Option<&StderrTail> {
        match self {
            ClientError::Exited { stderr, .. }
            | ClientError::Timeout { stderr, .. }
            | ClientError::Protocol { stderr, .. }
            | ClientError::TooLarge { stderr, .. }
            | ClientError::DeadlineExceeded { stderr, .. } => Some(stderr),
            _ => None,
        }
    }
}

impl ClientError {
    /// The same error with every secret replaced by `***` in every text it carries.
    pub(crate) fn redacted(mut self, secrets: &crate::secrets::Secrets) -> ClientError {
        if secrets.is_empty() {
            return self;
        }
        let tail =
            |tail: &mut StderrTail| tail.0.iter_mut().for_each(|l| secrets.redact_in_place(l));
        match &mut self {
            ClientError::Spawn { program, .. } => secrets.redact_in_place(program),
            ClientError::Exited { stderr, .. } | ClientError::Timeout { stderr, .. } => {
                tail(stderr)
            }
            ClientError::DeadlineExceeded { stderr, .. } => tail(stderr),
            ClientError::Protocol { detail, stderr, .. } => {
                secrets.redact_in_place(detail);
                tail(stderr);
            }
            ClientError::Rpc { message, data, .. } => {
                secrets.redact_in_place(message);
                if let Some(data) = data {
                    secrets.redact_value(data);
                }
            }
            ClientError::TooLarge { stderr, .. } => tail(stderr),
            ClientError::PaginationLoop { cursor, .. } => secrets.redact_in_place(cursor),
            ClientError::HttpStatus { body, .. } => secrets.redact_in_place(body),
            ClientError::Http { detail, .. } => secrets.redact_in_place(detail),
            ClientError::UnsupportedProtocolVersion { supported, .. } => {
                supported
                    .iter_mut()
                    .for_each(|v| secrets.redact_in_place(v));
            }
            ClientError::HeaderMismatch { message, .. } => secrets.redact_in_place(message),
            ClientError::InvalidHeader { name, reason } => {
                secrets.redact_in_place(name);
                secrets.redact_in_place(reason);
            }
            ClientError::TooManyPages { .. } => {}
        }
        self
    }
}
