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
    /// A `--header` specification is malformed or names an unset environment variable.
    #[error("invalid header {name:?}: {reason}")]
    InvalidHeader {
        /// The header name as given (never the value).
        name: String,
        /// What is wrong.
        reason: String,
    },
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
            | ClientError::TooLarge { stderr, .. } => Some(stderr),
            _ => None,
        }
    }
}
