//! The MCP protocol, by hand with `serde_json`: lifecycle, `ping`, paginated `tools/list` and
//! `tools/call`. Transport-free: [`Server::handle`] takes one message and returns the answer.

use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value, json};

use crate::checkout::Checkout;

/// Protocol versions the server speaks, newest first.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

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
        Some(match method {
            "initialize" => success(id, self.initialize(&params)),
            "ping" => success(id, json!({})),
            "tools/list" => match self.list_tools(&params) {
                Ok(result) => success(id, result),
                Err(message) => error(id, -32602, &message),
            },
            "tools/call" => match self.call_tool(&params) {
                Ok(result) => success(id, result),
                Err(message) => error(id, -32602, &message),
            },
            other => error(id, -32601, &format!("method not found: {other}")),
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
            "serverInfo": {
                "name": "mcp-recovery-demo-server",
                "title": "Checkout demo with recovery metadata",
                "version": env!("CARGO_PKG_VERSION")
            },
            "instructions": "Checkout workflow: reserve_inventory, charge_payment, create_shipment. \
                             Each state-changing tool declares how to undo it."
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
