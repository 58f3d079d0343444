//! A session with one server: opening it on either transport, settling the protocol revision,
//! paging through `tools/list` and closing.

use std::collections::HashSet;
use std::fmt;
use std::time::{Duration, Instant};

use mcp_recovery_model::json::with;
use serde_json::{Map, Value, json};

use crate::error::ClientError;
use crate::header::Header;
use crate::http::HttpTransport;
use crate::jsonrpc;
use crate::options::Options;
use crate::protocol::{self, Choice, Negotiation};
use crate::secrets::Secrets;
use crate::stdio::StdioTransport;
use crate::target::Target;
use mcp_recovery_base::text::excerpt;

use crate::text::{EXCERPT_CHARS, StderrTail};
use crate::versions::{HANDSHAKE_VERSIONS, LATEST_VERSION};

/// The version the `initialize` handshake asks for; the server answers with the one it speaks.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// Longest wait for an answer to `server/discover` before the `initialize` handshake is tried
/// (the per-request timeout when that is shorter).
pub const DISCOVER_PATIENCE: Duration = Duration::from_secs(10);

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
