//! A small blocking MCP client that fetches a live server's complete `tools/list`.
//!
//! It exists for linting: the document handed to a validator must be exactly what the server
//! sent. So results are never read through typed structs — unknown fields of a tool, unknown
//! keys in `annotations` (such as SEP-3172's `recovery`) and `_meta` all survive as they were.
//!
//! Protocol revisions: the client asks `server/discover` under 2026-07-28 (the version and the
//! client's capabilities travel in each request's `params._meta`, and over HTTP in the
//! `MCP-Protocol-Version` header too). A server that does not know that method (a JSON-RPC error,
//! or an HTTP 400/404/405) gets the `initialize` handshake of 2025-11-25 and answers with the
//! version it speaks: 2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05. A server that names only
//! versions this client does not speak fails with [`ClientError::UnsupportedProtocolVersion`];
//! [`Connection::negotiation`] and [`Connection::protocol_version`] say what was settled.
//!
//! Two transports:
//!
//! * **stdio** ([`Connection::stdio`]): the command is started directly (no shell), with
//!   [`Options::env`] added to its environment and in [`Options::cwd`], and speaks
//!   newline-delimited JSON-RPC; its stderr is kept (the last [`Options::stderr_lines`] lines)
//!   and shown when it fails. It runs in a process group of its own, which never outlives the
//!   [`Connection`]: stdin is closed on close or drop, then the whole group is killed after
//!   [`Options::shutdown_grace`]. A child that exits while something it started still holds
//!   stdout is reported with its exit status at once.
//! * **Streamable HTTP** ([`Connection::http`]): JSON and `text/event-stream` answers, the
//!   `Mcp-Session-Id` session (ended with DELETE on close), `MCP-Protocol-Version`, extra
//!   [`Header`]s whose values may come from the environment (`${VAR}`), http and https.
//!
//! Limits: every request waits at most [`Options::timeout`] and the whole connection, from
//! start to the last page, at most [`Options::total_timeout`]; a message larger than
//! [`Options::max_message_bytes`] is an error, and so is a server that sends more than
//! [`Options::max_total_bytes`] in all; pagination stops with an error on a repeated cursor or
//! after [`Options::max_pages`] pages. Server requests that arrive while the client waits are
//! answered (`ping`) or declined; notifications are ignored. Every queue between the threads of
//! the stdio transport is bounded.
//!
//! Secrets: header values and the values of [`Options::env`] are replaced by `***` in every
//! error and in the fetched tool list (a server may echo them), see [`Secrets`].
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
mod group;
mod header;
mod http;
mod jsonrpc;
mod lines;
mod protocol;
mod secrets;
mod sse;
mod stdio;
mod text;

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_recovery_model::json::with;
use serde_json::{Map, Value, json};

pub use error::ClientError;
pub use header::Header;
pub use http::{header_value, media_type};
pub use protocol::{HANDSHAKE_VERSIONS, LATEST_VERSION, Negotiation, SUPPORTED_VERSIONS};
pub use secrets::{MIN_SECRET_CHARS, REDACTED, Secrets};
pub use sse::{Event as StreamEvent, EventReader};
pub use text::{EXCERPT_CHARS, StderrTail, excerpt, excerpt_bytes};

use http::HttpTransport;
use protocol::Choice;
use stdio::StdioTransport;

/// The version the `initialize` handshake asks for; the server answers with the one it speaks.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// Longest wait for an answer to `server/discover` before the `initialize` handshake is tried
/// (the per-request timeout when that is shorter).
pub const DISCOVER_PATIENCE: Duration = Duration::from_secs(10);

/// Limits, timing and, for stdio servers, the process environment of one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// How long one request may wait for its answer (default 30 s).
    pub timeout: Duration,
    /// How long the whole connection may take, from starting or reaching the server to the
    /// last page of `tools/list` (default 120 s).
    pub total_timeout: Duration,
    /// Largest message accepted: one stdout line, one HTTP body or one event (default 64 MiB).
    pub max_message_bytes: u64,
    /// Most bytes accepted from the server over the whole connection, all pages and noise
    /// included (default 128 MiB).
    pub max_total_bytes: u64,
    /// Most `tools/list` pages followed before giving up (default 10,000).
    pub max_pages: usize,
    /// How many of the last stderr lines of a stdio server are kept (default 20).
    pub stderr_lines: usize,
    /// How long a stdio server gets to exit after its stdin closes before its process group is
    /// killed (default 1 s).
    pub shutdown_grace: Duration,
    /// Variables added to a stdio server's environment (values are secrets: never shown).
    pub env: Vec<(String, String)>,
    /// The working directory of a stdio server (default: the client's).
    pub cwd: Option<PathBuf>,
    /// More values to hide in everything printed: those a client config substituted into the
    /// command line, the URL or a header from `${env:…}` and `${input:…}`.
    pub secrets: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(120),
            max_message_bytes: 64 * 1024 * 1024,
            max_total_bytes: 128 * 1024 * 1024,
            max_pages: 10_000,
            stderr_lines: 20,
            shutdown_grace: Duration::from_secs(1),
            env: Vec::new(),
            cwd: None,
            secrets: Vec::new(),
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

impl Target {
    /// The values to hide in everything printed about this target: its header values, the
    /// environment given in `options` and the further secrets listed there.
    pub fn secrets(&self, options: &Options) -> Secrets {
        let mut secrets = Secrets::new(options.env.iter().map(|(_, v)| v.clone()));
        for value in &options.secrets {
            secrets.add(value.clone());
        }
        if let Target::Http { url, headers } = self {
            for header in headers {
                secrets.add(header.value().to_string());
            }
            if let Some(password) = url_password(url) {
                secrets.add(password);
            }
        }
        secrets
    }
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

/// The password of `scheme://user:password@host`, if any.
fn url_password(url: &str) -> Option<String> {
    let rest = &url[url.find("://")? + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let userinfo = &authority[..authority.rfind('@')?];
    userinfo.split_once(':').map(|(_, pw)| pw.to_string())
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

/// A session with one MCP server, its protocol revision settled.
pub struct Connection {
    transport: Transport,
    next_id: u64,
    server_info: Value,
    protocol_version: String,
    negotiation: Negotiation,
    options: Options,
    secrets: Secrets,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("protocol_version", &self.protocol_version)
            .field("negotiation", &self.negotiation)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Starts `program args…` (no shell) and settles the protocol revision.
    pub fn stdio(
        program: &str,
        args: &[String],
        options: &Options,
    ) -> Result<Connection, ClientError> {
        let target = Target::Stdio {
            program: program.to_string(),
            args: args.to_vec(),
        };
        Connection::open(&target, options)
    }

    /// Connects to a Streamable HTTP endpoint and settles the protocol revision.
    pub fn http(
        url: &str,
        headers: Vec<Header>,
        options: &Options,
    ) -> Result<Connection, ClientError> {
        let target = Target::Http {
            url: url.to_string(),
            headers,
        };
        Connection::open(&target, options)
    }

    /// Connects to `target` and settles the protocol revision: `server/discover` under
    /// 2026-07-28, else the `initialize` handshake.
    pub fn open(target: &Target, options: &Options) -> Result<Connection, ClientError> {
        let secrets = target.secrets(options);
        let deadline = Instant::now() + options.total_timeout;
        let transport = match target {
            Target::Stdio { program, args } => {
                StdioTransport::spawn(program, args, options, deadline).map(Transport::Stdio)
            }
            Target::Http { url, headers } => Ok(Transport::Http(HttpTransport::new(
                url,
                headers.clone(),
                options,
                deadline,
            ))),
        }
        .map_err(|e| e.redacted(&secrets))?;
        let mut connection = Connection {
            transport,
            next_id: 0,
            server_info: Value::Null,
            protocol_version: LATEST_VERSION.to_string(),
            negotiation: Negotiation::Discover,
            options: options.clone(),
            secrets,
        };
        match connection.negotiate() {
            Ok(()) => Ok(connection),
            Err(error) => Err(error.redacted(&connection.secrets)),
        }
    }

    fn negotiate(&mut self) -> Result<(), ClientError> {
        const DISCOVER: &str = "server/discover";
        self.set_http_version(Some(LATEST_VERSION));
        // A server that ignores methods it does not know never answers: after a short wait,
        // try the handshake, which such a server was written for.
        self.set_request_timeout(self.options.timeout.min(DISCOVER_PATIENCE));
        let discovered = self.raw_request(DISCOVER, None);
        self.set_request_timeout(self.options.timeout);
        let supported = match discovered {
            Ok(result) => match protocol::supported_versions(&result) {
                Ok(supported) => {
                    self.server_info = result;
                    supported
                }
                Err(detail) => return Err(self.protocol_error(DISCOVER, detail)),
            },
            Err(ClientError::UnsupportedProtocolVersion { supported, .. }) => supported,
            Err(error)
                if protocol::predates_discover(&error)
                    || matches!(error, ClientError::Timeout { .. }) =>
            {
                return self.initialize(PROTOCOL_VERSION);
            }
            Err(error) => return Err(error),
        };
        match protocol::choose(&supported) {
            Some(Choice::Latest) => Ok(()),
            Some(Choice::Handshake(version)) => self.initialize(version),
            None => Err(ClientError::UnsupportedProtocolVersion {
                method: DISCOVER.to_string(),
                requested: LATEST_VERSION.to_string(),
                supported,
            }),
        }
    }

    /// The `initialize` handshake asking for `version`.
    fn initialize(&mut self, version: &str) -> Result<(), ClientError> {
        const INITIALIZE: &str = "initialize";
        self.negotiation = Negotiation::Initialize;
        self.protocol_version = version.to_string();
        self.server_info = Value::Null;
        self.set_http_version(None);
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": protocol::client_info(),
        });
        let result = self.raw_request(INITIALIZE, Some(params))?;
        match result.get("protocolVersion") {
            Some(Value::String(chosen)) => {
                if !HANDSHAKE_VERSIONS.contains(&chosen.as_str()) {
                    return Err(ClientError::UnsupportedProtocolVersion {
                        method: INITIALIZE.to_string(),
                        requested: version.to_string(),
                        supported: vec![excerpt(chosen, EXCERPT_CHARS)],
                    });
                }
                self.protocol_version = chosen.clone();
            }
            // A server that omits it is lenient about versions; keep speaking ours.
            None => {}
            Some(other) => {
                return Err(self.protocol_error(
                    INITIALIZE,
                    format!(
                        "`protocolVersion` is not a string: {}",
                        excerpt(&other.to_string(), EXCERPT_CHARS)
                    ),
                ));
            }
        }
        self.server_info = result;
        let chosen = self.protocol_version.clone();
        let initialized = jsonrpc::notification("notifications/initialized");
        match &mut self.transport {
            Transport::Stdio(stdio) => {
                let _ = stdio.send(&initialized);
            }
            Transport::Http(http) => {
                http.set_protocol_version(Some(&chosen));
                http.send(&initialized, "notifications/initialized")?;
            }
        }
        Ok(())
    }

    fn set_request_timeout(&mut self, timeout: Duration) {
        match &mut self.transport {
            Transport::Stdio(stdio) => stdio.set_timeout(timeout),
            Transport::Http(http) => http.set_timeout(timeout),
        }
    }

    fn set_http_version(&mut self, version: Option<&str>) {
        if let Transport::Http(http) = &mut self.transport {
            http.set_protocol_version(version);
        }
    }

    /// What the server said about itself: its `initialize` result (`serverInfo`,
    /// `capabilities`, `instructions`), or under 2026-07-28 its `server/discover` result
    /// (`supportedVersions`, `capabilities`, `_meta`), as sent.
    pub fn initialize_result(&self) -> &Value {
        &self.server_info
    }

    /// The name the server gives itself: `serverInfo.name` of its `initialize` result, or under
    /// 2026-07-28 the name in its `server/discover` result's
    /// `_meta["io.modelcontextprotocol/serverInfo"]`.
    pub fn server_name(&self) -> Option<&str> {
        mcp_recovery_model::server_name(&self.server_info)
    }

    /// The protocol version in use.
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }

    /// How the version was settled.
    pub fn negotiation(&self) -> Negotiation {
        self.negotiation
    }

    /// The last lines a stdio server wrote to stderr (empty for HTTP), secrets redacted.
    pub fn stderr_tail(&self) -> StderrTail {
        let mut tail = match &self.transport {
            Transport::Stdio(stdio) => stdio.stderr_tail(),
            Transport::Http(_) => StderrTail::default(),
        };
        tail.0
            .iter_mut()
            .for_each(|line| self.secrets.redact_in_place(line));
        tail
    }

    /// The process id of a stdio server (also the id of its process group on Unix).
    pub fn pid(&self) -> Option<u32> {
        match &self.transport {
            Transport::Stdio(stdio) => Some(stdio.pid()),
            Transport::Http(_) => None,
        }
    }

    /// Sends one request and returns its `result` as sent; a JSON-RPC error becomes
    /// [`ClientError::Rpc`] (or one of the version errors). Under 2026-07-28 the request's
    /// `params._meta` carries the version and the client's capabilities.
    pub fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, ClientError> {
        self.raw_request(method, params)
            .map_err(|e| e.redacted(&self.secrets))
    }

    fn raw_request(&mut self, method: &str, params: Option<Value>) -> Result<Value, ClientError> {
        self.next_id += 1;
        let id = json!(self.next_id);
        let params = match self.negotiation {
            Negotiation::Discover => {
                Some(protocol::with_request_meta(params, &self.protocol_version))
            }
            Negotiation::Initialize => params,
        };
        let message = jsonrpc::request(self.next_id, method, params);
        let answer = match &mut self.transport {
            Transport::Stdio(stdio) => stdio.round_trip(&message, &id, method)?,
            Transport::Http(http) => http.round_trip(&message, &id, method)?,
        };
        let Value::Object(mut answer) = answer else {
            return Err(self.protocol_error(method, "the response is not an object".into()));
        };
        if let Some(error) = answer.remove("error") {
            return Err(protocol::rpc_error(method, &self.protocol_version, &error));
        }
        let Some(result) = answer.remove("result") else {
            return Err(self.protocol_error(
                method,
                "the response has neither `result` nor `error`".into(),
            ));
        };
        // Absent means complete (earlier revisions); anything else asks for a follow-up this
        // client cannot give.
        match result.get("resultType") {
            None | Some(Value::Null) => Ok(result),
            Some(Value::String(kind)) if kind == "complete" => Ok(result),
            Some(other) => Err(self.protocol_error(
                method,
                format!(
                    "the result's `resultType` is {}; this client handles only complete results",
                    excerpt(&other.to_string(), EXCERPT_CHARS)
                ),
            )),
        }
    }

    /// Fetches every page of `tools/list` and returns `{"tools": [...]}`: all tools in server
    /// order, each as sent, followed by any other members of the first page's result (such as
    /// `_meta`); `nextCursor` is removed. Secrets given to the client (header values, the
    /// server's environment) are replaced by `***` wherever the server echoed them.
    pub fn list_tools(&mut self) -> Result<Value, ClientError> {
        let mut tools = self
            .raw_list_tools()
            .map_err(|e| e.redacted(&self.secrets))?;
        self.secrets.redact_value(&mut tools);
        Ok(tools)
    }

    fn raw_list_tools(&mut self) -> Result<Value, ClientError> {
        const METHOD: &str = "tools/list";
        let mut tools = Vec::new();
        let mut first_page: Option<Map<String, Value>> = None;
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for page in 1..=self.options.max_pages {
            let params = cursor.take().map(|cursor| json!({"cursor": cursor}));
            let result = self.raw_request(METHOD, params)?;
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
            Some(with(json!({"name": name}), [("arguments", arguments)])),
        )
    }

    /// Ends the session: a stdio server has its stdin closed and its process group is killed
    /// if it does not exit within [`Options::shutdown_grace`]; an HTTP session is deleted.
    /// Dropping does the same.
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
        let stderr = match &self.transport {
            Transport::Stdio(stdio) => stdio.stderr_tail(),
            Transport::Http(_) => StderrTail::default(),
        };
        ClientError::Protocol {
            method: method.to_string(),
            detail,
            stderr,
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
            "the server exited (exit status: 3) before it answered `server/discover`\n  \
             last lines of the server's stderr:\n  | config file missing"
        );
    }
}
