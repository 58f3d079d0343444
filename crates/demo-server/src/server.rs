//! The MCP protocol, by hand with `serde_json`: lifecycle, `ping`, paginated `tools/list` and
//! `tools/call`. Transport-free: [`Server::handle`] takes one message and returns the answer.
//!
//! Two revisions are spoken. Up to 2025-11-25 a session opens with `initialize`. In 2026-07-28
//! there is no `initialize`: every request names its version in
//! `params._meta["io.modelcontextprotocol/protocolVersion"]` (with the client's capabilities in
//! `io.modelcontextprotocol/clientCapabilities`), `server/discover` advertises the versions and
//! capabilities, and every result carries `resultType` and the server's identity in `_meta`.
//! With [`Revisions::Both`] a request is answered in the revision it is written in; the default
//! is the older revisions alone.

use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value, json};

use crate::checkout::Checkout;

/// Protocol versions the server negotiates with `initialize`, newest first.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The revision without `initialize`, whose requests carry their version.
pub const PER_REQUEST_VERSION: &str = "2026-07-28";

/// Where a 2026-07-28 request names its protocol version.
pub const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// Where a 2026-07-28 request declares the client's capabilities.
pub const CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";
/// Where a 2026-07-28 result names the server.
pub const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// Which revisions the server speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Revisions {
    /// Both: `initialize` for the older ones, per-request versions for 2026-07-28.
    Both,
    /// Only up to 2025-11-25 (the default): `server/discover` is an unknown method and
    /// per-request versions are ignored, as an older server does.
    #[default]
    UpTo2025,
    /// Only 2026-07-28: `initialize` is an unknown method and a request without a version is
    /// refused.
    Only2026,
}

/// How the server is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// The tools announced by `tools/list` (a JSON array).
    pub tools: Vec<Value>,
    /// Tools per `tools/list` page; 0 puts every tool on one page.
    pub page_size: usize,
    /// Answer `initialize` with this version whatever the client asks (to test negotiation).
    pub protocol_version: Option<String>,
    /// Append every `tools/call` (name and arguments, one JSON line, flushed) to this file, so
    /// tests can count what reached the server across runs and restarts.
    pub call_log: Option<std::path::PathBuf>,
    /// Tools that wait this many milliseconds before answering (to test calls in flight).
    pub slow: Vec<(String, u64)>,
    /// The protocol revisions spoken.
    pub revisions: Revisions,
}

impl std::str::FromStr for Revisions {
    type Err = String;

    fn from_str(text: &str) -> Result<Revisions, String> {
        match text {
            "both" => Ok(Revisions::Both),
            "2025-11-25" => Ok(Revisions::UpTo2025),
            "2026-07-28" => Ok(Revisions::Only2026),
            other => Err(format!(
                "{other:?} is not a revision: both, 2025-11-25 or 2026-07-28"
            )),
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        let tools = match crate::tools() {
            Value::Object(mut map) => match map.remove("tools") {
                Some(Value::Array(tools)) => tools,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        Config {
            tools,
            page_size: 0,
            protocol_version: None,
            call_log: None,
            slow: Vec::new(),
            revisions: Revisions::UpTo2025,
        }
    }
}

/// One server: its configuration and the shared checkout state.
#[derive(Debug)]
pub struct Server {
    config: Config,
    checkout: Mutex<Checkout>,
}

impl Server {
    /// A server with a fresh checkout.
    pub fn new(config: Config) -> Server {
        Server {
            config,
            checkout: Mutex::new(Checkout::new()),
        }
    }

    /// Answers one line of newline-delimited JSON-RPC; `None` when nothing must be sent back.
    pub fn handle_line(&self, line: &str) -> Option<Value> {
        match serde_json::from_str::<Value>(line) {
            Ok(message) => self.handle(&message),
            Err(e) => Some(error(&Value::Null, -32700, &format!("parse error: {e}"))),
        }
    }

    /// Answers one message; notifications and responses get `None`.
    pub fn handle(&self, message: &Value) -> Option<Value> {
        let Value::Object(message) = message else {
            return Some(error(
                &Value::Null,
                -32600,
                "a request must be a JSON object",
            ));
        };
        let id = message.get("id")?;
        let Some(method) = message.get("method") else {
            // A response to a request of ours (such as a ping): nothing to answer.
            return None;
        };
        let Some(method) = method.as_str() else {
            return Some(error(id, -32600, "`method` must be a string"));
        };
        let params = match message.get("params") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(params)) => params.clone(),
            Some(_) => return Some(error(id, -32602, "`params` must be an object")),
        };
        let requested = match params.get("_meta").and_then(|m| m.get(VERSION_META)) {
            _ if self.config.revisions == Revisions::UpTo2025 => None,
            None => None,
            Some(Value::String(version)) => Some(version.as_str()),
            Some(_) => {
                return Some(error(
                    id,
                    -32602,
                    &format!("_meta[\"{VERSION_META}\"] must be a string"),
                ));
            }
        };
        match requested {
            Some(version) => Some(self.handle_per_request(id, method, &params, version)),
            None if self.config.revisions == Revisions::Only2026 && method != "server/discover" => {
                Some(error(
                    id,
                    -32602,
                    &format!(
                        "this server speaks MCP {PER_REQUEST_VERSION} only: every request names its version in params._meta[\"{VERSION_META}\"]"
                    ),
                ))
            }
            None if method == "server/discover" && self.config.revisions != Revisions::UpTo2025 => {
                Some(success(id, self.discover()))
            }
            None => Some(self.handle_method(id, method, &params)),
        }
    }

    /// The methods both revisions share (and `initialize`, `ping` of the older ones).
    fn handle_method(&self, id: &Value, method: &str, params: &Map<String, Value>) -> Value {
        match method {
            "initialize" if self.config.revisions != Revisions::Only2026 => {
                success(id, self.initialize(params))
            }
            "ping" if self.config.revisions != Revisions::Only2026 => success(id, json!({})),
            "tools/list" => match self.list_tools(params) {
                Ok(result) => success(id, result),
                Err(message) => error(id, -32602, &message),
            },
            "tools/call" => match self.call_tool(params) {
                Ok(result) => success(id, result),
                Err(message) => error(id, -32602, &message),
            },
            other => error(id, -32601, &format!("method not found: {other}")),
        }
    }

    /// A 2026-07-28 request: its version checked, its capabilities required, its result marked.
    fn handle_per_request(
        &self,
        id: &Value,
        method: &str,
        params: &Map<String, Value>,
        version: &str,
    ) -> Value {
        if version != PER_REQUEST_VERSION {
            return json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32022,
                "message": format!("unsupported protocol version {version:?}"),
                "data": {"requested": version, "supported": [PER_REQUEST_VERSION]}
            }});
        }
        if method == "server/discover" {
            return success(id, self.discover());
        }
        let capabilities = params.get("_meta").and_then(|m| m.get(CAPABILITIES_META));
        if !capabilities.is_some_and(Value::is_object) {
            return error(
                id,
                -32602,
                &format!("params._meta[\"{CAPABILITIES_META}\"] must be an object"),
            );
        }
        if matches!(method, "initialize" | "ping") {
            // Neither exists in 2026-07-28.
            return error(id, -32601, &format!("method not found: {method}"));
        }
        let mut answer = self.handle_method(id, method, params);
        if let Some(Value::Object(result)) = answer.get_mut("result") {
            result.insert("resultType".into(), json!("complete"));
            let meta = result
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(SERVER_INFO_META.into(), server_info());
            }
            if method == "tools/list" {
                result.insert("cacheScope".into(), json!("public"));
                result.insert("ttlMs".into(), json!(0));
            }
        }
        answer
    }

    /// The `server/discover` result.
    fn discover(&self) -> Value {
        let mut versions = vec![PER_REQUEST_VERSION];
        if self.config.revisions == Revisions::Both {
            versions.extend(SUPPORTED_VERSIONS);
        }
        json!({
            "supportedVersions": versions,
            "capabilities": {"tools": {"listChanged": false}},
            "instructions": INSTRUCTIONS,
            "resultType": "complete",
            "cacheScope": "public",
            "ttlMs": 0,
            "_meta": {SERVER_INFO_META: server_info()}
        })
    }

    fn initialize(&self, params: &Map<String, Value>) -> Value {
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let version = match &self.config.protocol_version {
            Some(forced) => forced.clone(),
            None if SUPPORTED_VERSIONS.contains(&requested) => requested.to_string(),
            None => SUPPORTED_VERSIONS[0].to_string(),
        };
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": server_info(),
            "instructions": INSTRUCTIONS
        })
    }

    fn list_tools(&self, params: &Map<String, Value>) -> Result<Value, String> {
        let tools = &self.config.tools;
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(cursor)) => cursor
                .strip_prefix("offset-")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n <= tools.len())
                .ok_or_else(|| format!("invalid cursor {cursor:?}"))?,
            Some(_) => return Err("`cursor` must be a string".into()),
        };
        let size = if self.config.page_size == 0 {
            tools.len()
        } else {
            self.config.page_size
        };
        let end = start.saturating_add(size).min(tools.len());
        let mut result = json!({"tools": tools[start..end]});
        if end < tools.len() {
            result["nextCursor"] = json!(format!("offset-{end}"));
        }
        Ok(result)
    }

    fn call_tool(&self, params: &Map<String, Value>) -> Result<Value, String> {
        let Some(Value::String(name)) = params.get("name") else {
            return Err("`name` must be a string".into());
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments.clone(),
            Some(_) => return Err("`arguments` must be an object".into()),
        };
        if let Some(path) = &self.config.call_log {
            let line = format!("{}\n", json!({"name": name, "arguments": arguments}));
            let logged = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut file| std::io::Write::write_all(&mut file, line.as_bytes()));
            if let Err(e) = logged {
                return Err(format!("cannot write the call log: {e}"));
            }
        }
        if let Some((_, millis)) = self.config.slow.iter().find(|(tool, _)| tool == name) {
            std::thread::sleep(std::time::Duration::from_millis(*millis));
        }
        let mut checkout = self.checkout.lock().unwrap_or_else(PoisonError::into_inner);
        checkout
            .call(name, &arguments)
            .ok_or_else(|| format!("unknown tool: {name}"))
    }
}

const INSTRUCTIONS: &str = "Checkout workflow: reserve_inventory, charge_payment, create_shipment. \
                            Each state-changing tool declares how to undo it.";

fn server_info() -> Value {
    json!({
        "name": "mcp-recovery-demo-server",
        "title": "Checkout demo with recovery metadata",
        "version": env!("CARGO_PKG_VERSION")
    })
}

fn success(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(page_size: usize) -> Server {
        Server::new(Config {
            page_size,
            revisions: Revisions::Both,
            ..Config::default()
        })
    }

    #[test]
    fn negotiates_the_version() {
        let s = server(0);
        let ask = |v: &str| {
            let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": {"protocolVersion": v, "capabilities": {}}});
            s.handle(&init).unwrap()["result"]["protocolVersion"].clone()
        };
        assert_eq!(ask("2025-06-18"), "2025-06-18");
        assert_eq!(ask("1999-01-01"), SUPPORTED_VERSIONS[0]);
    }

    fn per_request(s: &Server, method: &str, version: &str) -> Value {
        s.handle(
            &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": {"_meta": {
            VERSION_META: version, CAPABILITIES_META: {}}}}),
        )
        .unwrap()
    }

    #[test]
    fn speaks_2026_07_28_per_request() {
        let s = server(0);
        let found = per_request(&s, "server/discover", PER_REQUEST_VERSION);
        assert_eq!(found["result"]["supportedVersions"][0], PER_REQUEST_VERSION);
        assert_eq!(found["result"]["resultType"], "complete");
        let listed = per_request(&s, "tools/list", PER_REQUEST_VERSION);
        assert_eq!(listed["result"]["resultType"], "complete");
        assert_eq!(listed["result"]["cacheScope"], "public");
        assert_eq!(listed["result"]["ttlMs"], 0);
        assert_eq!(
            listed["result"]["_meta"][SERVER_INFO_META]["name"],
            "mcp-recovery-demo-server"
        );
        let old = per_request(&s, "tools/list", "2025-11-25");
        assert_eq!(old["error"]["code"], -32022);
        assert_eq!(old["error"]["data"]["requested"], "2025-11-25");
        assert_eq!(
            per_request(&s, "initialize", PER_REQUEST_VERSION)["error"]["code"],
            -32601
        );
        assert_eq!(
            per_request(&s, "ping", PER_REQUEST_VERSION)["error"]["code"],
            -32601
        );
        let no_capabilities = s
            .handle(&json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list",
                "params": {"_meta": {VERSION_META: PER_REQUEST_VERSION}}}))
            .unwrap();
        assert_eq!(no_capabilities["error"]["code"], -32602);
        // Without a version, the same server is an older one.
        let plain = s
            .handle(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
            .unwrap();
        assert!(plain["result"].get("resultType").is_none(), "{plain}");
    }

    #[test]
    fn one_revision_only() {
        let only_new = Server::new(Config {
            revisions: Revisions::Only2026,
            ..Config::default()
        });
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-11-25", "capabilities": {}}});
        assert_eq!(only_new.handle(&init).unwrap()["error"]["code"], -32602);
        assert_eq!(
            per_request(&only_new, "server/discover", PER_REQUEST_VERSION)["result"]["supportedVersions"],
            json!([PER_REQUEST_VERSION])
        );
        let only_old = Server::new(Config {
            revisions: Revisions::UpTo2025,
            ..Config::default()
        });
        assert_eq!(
            per_request(&only_old, "server/discover", PER_REQUEST_VERSION)["error"]["code"],
            -32601
        );
        let listed = per_request(&only_old, "tools/list", PER_REQUEST_VERSION);
        assert!(listed["result"].get("resultType").is_none(), "{listed}");
        assert_eq!("both".parse::<Revisions>(), Ok(Revisions::Both));
        assert!("2024".parse::<Revisions>().is_err());
    }

    #[test]
    fn paginates_and_rejects_bad_cursors() {
        let s = server(3);
        let list = |params: Value| {
            s.handle(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}))
                .unwrap()
        };
        let mut cursor = Value::Null;
        let mut names = Vec::new();
        loop {
            let page = list(json!({"cursor": cursor}));
            for tool in page["result"]["tools"].as_array().unwrap() {
                names.push(tool["name"].as_str().unwrap().to_string());
            }
            cursor = page["result"]
                .get("nextCursor")
                .cloned()
                .unwrap_or(Value::Null);
            if cursor.is_null() {
                break;
            }
        }
        assert_eq!(names.len(), Config::default().tools.len());
        assert_eq!(
            list(json!({"cursor": "offset-99"}))["error"]["code"],
            -32602
        );
        assert_eq!(list(json!({"cursor": 3}))["error"]["code"], -32602);
    }

    #[test]
    fn protocol_errors() {
        let s = server(0);
        assert_eq!(s.handle_line("{oops").unwrap()["error"]["code"], -32700);
        assert_eq!(s.handle(&json!([1])).unwrap()["error"]["code"], -32600);
        assert!(
            s.handle(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .is_none()
        );
        assert!(
            s.handle(&json!({"jsonrpc": "2.0", "id": 5, "result": {}}))
                .is_none()
        );
        let unknown = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"});
        assert_eq!(s.handle(&unknown).unwrap()["error"]["code"], -32601);
        let call =
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nope"}});
        assert_eq!(s.handle(&call).unwrap()["error"]["code"], -32602);
    }
}
