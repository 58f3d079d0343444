//! A small blocking MCP client that fetches a live server's complete `tools/list`.
//!
//! It exists for linting: the document handed to a validator must be exactly what the server
//! sent. So results are never read through typed structs — unknown fields of a tool, unknown
//! keys in `annotations` (such as SEP-3172's `recovery`) and `_meta` all survive as they were.
//!
//! Two transports:
//!
//! * **stdio** ([`Connection::stdio`]): the command is started directly (no shell) and speaks
//!   newline-delimited JSON-RPC; its stderr is kept (the last [`Options::stderr_lines`] lines)
//!   and shown when it fails; it never outlives the [`Connection`] (stdin is closed on close or
//!   drop, then the process is killed after [`Options::shutdown_grace`]).
//! * **Streamable HTTP** ([`Connection::http`]): JSON and `text/event-stream` answers, the
//!   `Mcp-Session-Id` session (ended with DELETE on close), `MCP-Protocol-Version` after the
//!   handshake, extra [`Header`]s whose values may come from the environment (`${VAR}`), http
//!   and https.
//!
//! Limits: every request waits at most [`Options::timeout`]; a message larger than
//! [`Options::max_message_bytes`] is an error; pagination stops with an error on a repeated
//! cursor or after [`Options::max_pages`] pages. Server requests that arrive while the client
//! waits are answered (`ping`) or declined; notifications are ignored.
//!
//! ```no_run
//! use mcp_recovery_client::{Options, Target, fetch_tools};
//!
//! let target = Target::Stdio { program: "node".into(), args: vec!["build/index.js".into()] };
//! let tools = fetch_tools(&target, &Options::default())?;
//! println!("{}", tools["tools"].as_array().map_or(0, Vec::len));
//! # Ok::<(), mcp_recovery_client::ClientError>(())
//! ```

mod error;
mod header;
mod http;
mod jsonrpc;
mod lines;
mod sse;
mod stdio;
mod text;

use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value, json};

pub use error::ClientError;
pub use header::Header;
pub use text::StderrTail;

use http::HttpTransport;
use stdio::StdioTransport;
use text::{EXCERPT_CHARS, excerpt};

/// The protocol version the client asks for; it accepts whatever version the server answers.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// Limits and timing for one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// How long one request may wait for its answer (default 30 s).
    pub timeout: Duration,
    /// Largest message accepted: one stdout line, one HTTP body or one event (default 64 MiB).
    pub max_message_bytes: u64,
    /// Most `tools/list` pages followed before giving up (default 10,000).
    pub max_pages: usize,
    /// How many of the last stderr lines of a stdio server are kept (default 20).
    pub stderr_lines: usize,
    /// How long a stdio server gets to exit after its stdin closes before it is killed
    /// (default 1 s).
    pub shutdown_grace: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(30),
            max_message_bytes: 64 * 1024 * 1024,
            max_pages: 10_000,
            stderr_lines: 20,
            shutdown_grace: Duration::from_secs(1),
        }
    }
}

/// Where a server lives: what `lint --stdio -- CMD ARGS` and `lint --url URL` name.
#[derive(Debug, Clone)]
pub enum Target {
    /// A command started as a child process.
    Stdio {
        /// The program (looked up in `PATH` when it has no slash).
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint URL (`http://` or `https://`).
        url: String,
        /// Headers sent with every request.
        headers: Vec<Header>,
    },
}

/// Shows the command line (shell-quoted) or the URL (without any password), never header values:
/// suitable as the `file` of a diagnostic.
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Stdio { program, args } => {
                write!(f, "{}", shell_quote(program))?;
                for arg in args {
                    write!(f, " {}", shell_quote(arg))?;
                }
                Ok(())
            }
            Target::Http { url, .. } => f.write_str(&redact_url(url)),
        }
    }
}

fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Replaces the password of `scheme://user:password@host` with `***`.
fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => match authority[..at].split_once(':') {
            Some((user, _)) => {
                format!("{}{user}:***{}", &url[..scheme_end + 3], &rest[at..])
            }
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

enum Transport {
    Stdio(StdioTransport),
    Http(HttpTransport),
}

/// An initialized session with one MCP server.
pub struct Connection {
    transport: Transport,
    next_id: u64,
    initialize: Value,
    protocol_version: String,
    options: Options,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("protocol_version", &self.protocol_version)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Starts `program args…` (no shell) and performs the handshake.
    pub fn stdio(
        program: &str,
        args: &[String],
        options: &Options,
    ) -> Result<Connection, ClientError> {
        let transport = StdioTransport::spawn(program, args, options)?;
        Connection::handshake(Transport::Stdio(transport), options)
    }

    /// Connects to a Streamable HTTP endpoint and performs the handshake.
    pub fn http(
        url: &str,
        headers: Vec<Header>,
        options: &Options,
    ) -> Result<Connection, ClientError> {
        let transport = HttpTransport::new(url, headers, options);
        Connection::handshake(Transport::Http(transport), options)
    }

    /// Connects to `target` and performs the handshake.
    pub fn open(target: &Target, options: &Options) -> Result<Connection, ClientError> {
        match target {
            Target::Stdio { program, args } => Connection::stdio(program, args, options),
            Target::Http { url, headers } => Connection::http(url, headers.clone(), options),
        }
    }

    fn handshake(transport: Transport, options: &Options) -> Result<Connection, ClientError> {
        let mut connection = Connection {
            transport,
            next_id: 0,
            initialize: Value::Null,
            protocol_version: PROTOCOL_VERSION.to_string(),
            options: options.clone(),
        };
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp-recovery", "version": env!("CARGO_PKG_VERSION")},
        });
        let result = connection.request("initialize", Some(params))?;
        match result.get("protocolVersion") {
            Some(Value::String(version)) => connection.protocol_version = version.clone(),
            // A server that omits it is lenient about versions; keep speaking ours.
            None => {}
            Some(other) => {
                return Err(connection.protocol_error(
                    "initialize",
                    format!(
                        "`protocolVersion` is not a string: {}",
                        excerpt(&other.to_string(), EXCERPT_CHARS)
                    ),
                ));
            }
        }
        connection.initialize = result;
        let version = connection.protocol_version.clone();
        let initialized = jsonrpc::notification("notifications/initialized");
        match &mut connection.transport {
            Transport::Stdio(stdio) => stdio.send(&initialized),
            Transport::Http(http) => {
                http.set_protocol_version(&version);
                http.send(&initialized, "notifications/initialized")?;
            }
        }
        Ok(connection)
    }

    /// The server's `initialize` result, as sent (`serverInfo`, `capabilities`, `instructions`).
    pub fn initialize_result(&self) -> &Value {
        &self.initialize
    }

    /// The protocol version the server chose.
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }

    /// The last lines a stdio server wrote to stderr (empty for HTTP).
    pub fn stderr_tail(&self) -> StderrTail {
        match &self.transport {
            Transport::Stdio(stdio) => stdio.stderr_tail(),
            Transport::Http(_) => StderrTail::default(),
        }
    }

    /// The process id of a stdio server.
    pub fn pid(&self) -> Option<u32> {
        match &self.transport {
            Transport::Stdio(stdio) => Some(stdio.pid()),
            Transport::Http(_) => None,
        }
    }

    /// Sends one request and returns its `result` as sent; a JSON-RPC error becomes
    /// [`ClientError::Rpc`].
    pub fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, ClientError> {
        self.next_id += 1;
        let id = json!(self.next_id);
        let message = jsonrpc::request(self.next_id, method, params);
        let answer = match &mut self.transport {
            Transport::Stdio(stdio) => stdio.round_trip(&message, &id, method)?,
            Transport::Http(http) => http.round_trip(&message, &id, method)?,
        };
        let Value::Object(mut answer) = answer else {
            return Err(self.protocol_error(method, "the response is not an object".into()));
        };
        if let Some(error) = answer.remove("error") {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)");
            return Err(ClientError::Rpc {
                method: method.to_string(),
                code,
                message: excerpt(message, 2 * EXCERPT_CHARS),
                data: error.get("data").cloned().map(Box::new),
            });
        }
        match answer.remove("result") {
            Some(result) => Ok(result),
            None => Err(self.protocol_error(
                method,
                "the response has neither `result` nor `error`".into(),
            )),
        }
    }

    /// Fetches every page of `tools/list` and returns `{"tools": [...]}`: all tools in server
    /// order, each exactly as sent, followed by any other members of the first page's result
    /// (such as `_meta`); `nextCursor` is removed.
    pub fn list_tools(&mut self) -> Result<Value, ClientError> {
        const METHOD: &str = "tools/list";
        let mut tools = Vec::new();
        let mut first_page: Option<Map<String, Value>> = None;
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for page in 1..=self.options.max_pages {
            let params = cursor.take().map(|cursor| json!({"cursor": cursor}));
            let result = self.request(METHOD, params)?;
            let Value::Object(mut result) = result else {
                return Err(self.protocol_error(METHOD, "the result is not an object".into()));
            };
            match result.remove("tools") {
                Some(Value::Array(page_tools)) => tools.extend(page_tools),
                Some(_) => {
                    return Err(self.protocol_error(METHOD, "`tools` is not an array".into()));
                }
                None => return Err(self.protocol_error(METHOD, "the result has no `tools`".into())),
            }
            let next = result.remove("nextCursor");
            if first_page.is_none() {
                first_page = Some(result);
            }
            match next {
                None | Some(Value::Null) => {
                    let mut merged = Map::new();
                    merged.insert("tools".into(), Value::Array(tools));
                    merged.extend(first_page.unwrap_or_default());
                    return Ok(Value::Object(merged));
                }
                Some(Value::String(next)) => {
                    if !seen.insert(next.clone()) {
                        return Err(ClientError::PaginationLoop {
                            cursor: excerpt(&next, EXCERPT_CHARS),
                            page,
                        });
                    }
                    cursor = Some(next);
                }
                Some(_) => {
                    return Err(self.protocol_error(METHOD, "`nextCursor` is not a string".into()));
                }
            }
        }
        Err(ClientError::TooManyPages {
            limit: self.options.max_pages,
        })
    }

    /// Calls a tool and returns the `CallToolResult` as sent. A result with `isError: true` is
    /// a successful answer, not an error.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        self.request(
            "tools/call",
            Some(json!({"name": name, "arguments": arguments})),
        )
    }

    /// Ends the session: a stdio server has its stdin closed and is killed if it does not exit
    /// within [`Options::shutdown_grace`]; an HTTP session is deleted. Dropping does the same.
    pub fn close(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        match &mut self.transport {
            Transport::Stdio(stdio) => stdio.close(),
            Transport::Http(http) => http.close(),
        }
    }

    fn protocol_error(&self, method: &str, detail: String) -> ClientError {
        ClientError::Protocol {
            method: method.to_string(),
            detail,
            stderr: self.stderr_tail(),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Connects to `target`, fetches the complete tool list ([`Connection::list_tools`]) and
/// closes the connection.
pub fn fetch_tools(target: &Target, options: &Options) -> Result<Value, ClientError> {
    let mut connection = Connection::open(target, options)?;
    let tools = connection.list_tools();
    connection.close();
    tools
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_display_without_secrets() {
        let stdio = Target::Stdio {
            program: "npx".into(),
            args: vec![
                "-y".into(),
                "@scope/server".into(),
                "it's here".into(),
                String::new(),
            ],
        };
        assert_eq!(stdio.to_string(), r"npx -y @scope/server 'it'\''s here' ''");
        let header = Header::new("Authorization", "Bearer s3cret").unwrap();
        let http = Target::Http {
            url: "https://u:pw@example.test:8443/mcp?x=1".into(),
            headers: vec![header],
        };
        assert_eq!(http.to_string(), "https://u:***@example.test:8443/mcp?x=1");
        assert!(!format!("{http:?}").contains("s3cret"));
        assert_eq!(redact_url("http://h/p@q"), "http://h/p@q");
        assert_eq!(redact_url("http://user@h/"), "http://user@h/");
    }

    #[test]
    fn spawn_failure_names_the_program() {
        let error =
            Connection::stdio("/nonexistent/mcp-server", &[], &Options::default()).unwrap_err();
        assert!(matches!(error, ClientError::Spawn { .. }), "{error}");
        assert!(
            error
                .to_string()
                .starts_with("could not start `/nonexistent/mcp-server`: ")
        );
    }

    #[test]
    fn a_silent_server_times_out_and_is_killed() {
        let options = Options {
            timeout: Duration::from_secs(1),
            shutdown_grace: Duration::from_millis(100),
            ..Options::default()
        };
        let args = [
            "-c".to_string(),
            "echo starting >&2; exec sleep 30".to_string(),
        ];
        let error = Connection::stdio("sh", &args, &options).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no answer to `initialize` within 1s\n  last lines of the server's stderr:\n  | starting"
        );
    }

    #[test]
    fn a_server_that_exits_at_once_reports_status_and_stderr() {
        let args = [
            "-c".to_string(),
            "echo 'config file missing' >&2; exit 3".to_string(),
        ];
        let error = Connection::stdio("sh", &args, &Options::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the server exited (exit status: 3) before it answered `initialize`\n  \
             last lines of the server's stderr:\n  | config file missing"
        );
    }
}
