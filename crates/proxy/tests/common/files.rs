//! A scripted file server for the before-image tests: text files by path.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// The tools it lists.
pub const TOOLS: &str = include_str!("../../../../fixtures/overlays/files.tools.json");

/// The client's handshake, as lines.
pub const HANDSHAKE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

/// Path to text.
pub type Files = BTreeMap<String, String>;

pub fn text(text: &str, error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": error})
}

/// The file server: reads fail for a missing file, moves refuse an existing destination, and
/// writing to `fail.txt` fails; when `person` is set, someone changes `a.txt` just before that
/// failure.
pub fn file_server(
    files: Arc<Mutex<Files>>,
    person: bool,
) -> impl FnMut(&str) -> Vec<String> + Send {
    move |line: &str| {
        let message: Value = mcp_recovery_model::json::from_str(line).unwrap();
        let Some(id) = message.get("id") else {
            return Vec::new();
        };
        let params = &message["params"];
        let arg = |key: &str| {
            params["arguments"][key]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        let mut files = files.lock().unwrap();
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "files", "version": "1"}}),
            "tools/list" => serde_json::from_str(TOOLS).unwrap(),
            "tools/call" => match params["name"].as_str().unwrap() {
                "read_file" => match files.get(&arg("path")) {
                    Some(content) => text(content, false),
                    None => text("ENOENT: no such file", true),
                },
                "write_file" if arg("path") == "fail.txt" => {
                    if person {
                        files.insert("a.txt".into(), "v3 by a person".into());
                    }
                    text("disk full", true)
                }
                "write_file" => {
                    files.insert(arg("path"), arg("content"));
                    text("written", false)
                }
                "move_file" => {
                    if files.contains_key(&arg("destination")) {
                        text("destination exists", true)
                    } else if let Some(content) = files.remove(&arg("source")) {
                        files.insert(arg("destination"), content);
                        text("moved", false)
                    } else {
                        text("ENOENT", true)
                    }
                }
                other => panic!("unexpected tool {other}"),
            },
            _ => json!({}),
        };
        vec![json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()]
    }
}
