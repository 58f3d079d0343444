//! Where the tools are in a `tools/list` document.
//!
//! Every command reads the same three shapes, decided here once:
//!
//! 1. an object with a `result` member (a JSON-RPC response; the `jsonrpc` and `id` members are
//!    not required, since captures often drop them): the tools are `result.tools`;
//! 2. otherwise an object with an `error` member: a JSON-RPC error response, never a tool list;
//! 3. otherwise an object with a `tools` member (a `ListToolsResult`), or a bare array of tools.

use serde_json::{Map, Value};

use crate::json_type::json_type_name;

/// The `_meta` key under which a 2026-07-28 result names the server that produced it.
pub const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The name a server gives itself in one of its results: `serverInfo.name` of an `initialize`
/// result (up to 2025-11-25), else `_meta["io.modelcontextprotocol/serverInfo"].name`, which a
/// 2026-07-28 server puts in every result (`server/discover`, `tools/list`, …). `None` when the
/// result names no server or the name is not a string.
pub fn server_name(result: &Value) -> Option<&str> {
    result
        .pointer("/serverInfo/name")
        .or_else(|| result.get("_meta")?.get(SERVER_INFO_META_KEY)?.get("name"))
        .and_then(Value::as_str)
}

/// Which of the accepted shapes a document has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentShape {
    /// `{"result": {"tools": [...]}, …}`.
    JsonRpcResponse,
    /// `{"tools": [...], …}`.
    ListResult,
    /// `[tool, …]`.
    Array,
}

impl DocumentShape {
    /// The JSON Pointer of the tools array in a document of this shape.
    pub fn tools_pointer(self) -> &'static str {
        match self {
            Self::JsonRpcResponse => "/result/tools",
            Self::ListResult => "/tools",
            Self::Array => "",
        }
    }
}

/// The tools array of an accepted document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolsLocation<'a> {
    /// The document's shape.
    pub shape: DocumentShape,
    /// The tool values, not yet checked.
    pub tools: &'a [Value],
}

impl ToolsLocation<'_> {
    /// The JSON Pointer of the tools array in the document.
    pub fn pointer(&self) -> &'static str {
        self.shape.tools_pointer()
    }

    /// The JSON Pointer of the tool at `index`.
    pub fn tool_pointer(&self, index: usize) -> String {
        format!("{}/{index}", self.pointer())
    }
}

/// Why a document is not a `tools/list` document.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LocateError {
    /// A JSON-RPC error response (its `error` member is kept).
    #[error("the document is a JSON-RPC error response, not a tools list{}", error_summary(.error))]
    JsonRpcError {
        /// The `error` member as written.
        error: Value,
    },
    /// `tools` (at `pointer`) is not an array.
    #[error("`tools` must be an array of tools, found {found}")]
    ToolsNotAnArray {
        /// `/result/tools` or `/tools`.
        pointer: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// A JSON-RPC `result` without `tools`.
    #[error("the JSON-RPC result has no `tools` array (found {})", describe(.result))]
    ResultWithoutTools {
        /// The `result` member as written (kept only when it is small; see [`locate_tools`]).
        result: Value,
    },
    /// An object with none of `result`, `error` or `tools`.
    #[error("the object has no `tools` array and is not a JSON-RPC response (found {})", describe_keys(.keys, *.more))]
    UnknownObject {
        /// Its first five member names.
        keys: Vec<String>,
        /// True when it has more members.
        more: bool,
    },
    /// A scalar at the top level.
    #[error("the document is a JSON {found}, not a tools list")]
    NotAContainer {
        /// The JSON type found.
        found: &'static str,
    },
}

impl LocateError {
    /// The JSON Pointer of the fault in the document.
    pub fn pointer(&self) -> &'static str {
        match self {
            Self::JsonRpcError { .. } => "/error",
            Self::ToolsNotAnArray { pointer, .. } => pointer,
            Self::ResultWithoutTools { .. } => "/result",
            Self::UnknownObject { .. } | Self::NotAContainer { .. } => "",
        }
    }
}

fn error_summary(error: &Value) -> String {
    match error.get("message").and_then(Value::as_str) {
        Some(message) => format!(": {message:?}"),
        None => String::new(),
    }
}

fn describe(result: &Value) -> String {
    match result {
        Value::Object(map) => {
            let (keys, more) = first_keys(map);
            describe_keys(&keys, more)
        }
        other => json_type_name(other).to_owned(),
    }
}

fn first_keys(map: &Map<String, Value>) -> (Vec<String>, bool) {
    (map.keys().take(5).cloned().collect(), map.len() > 5)
}

fn describe_keys(keys: &[String], more: bool) -> String {
    if keys.is_empty() {
        return "an empty object".to_owned();
    }
    let listed: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
    format!(
        "members {}{}",
        listed.join(", "),
        if more { ", …" } else { "" }
    )
}

/// Finds the tools array of a document (see the module docs for the accepted shapes).
pub fn locate_tools(document: &Value) -> Result<ToolsLocation<'_>, LocateError> {
    let (shape, tools) = match document {
        Value::Array(tools) => (DocumentShape::Array, tools),
        Value::Object(map) => {
            let (shape, holder) = if let Some(result) = map.get("result") {
                (DocumentShape::JsonRpcResponse, result)
            } else if let Some(error) = map.get("error") {
                return Err(LocateError::JsonRpcError {
                    error: error.clone(),
                });
            } else {
                (DocumentShape::ListResult, document)
            };
            match holder.get("tools") {
                Some(Value::Array(tools)) => (shape, tools),
                Some(other) => {
                    return Err(LocateError::ToolsNotAnArray {
                        pointer: shape.tools_pointer(),
                        found: json_type_name(other),
                    });
                }
                None if shape == DocumentShape::JsonRpcResponse => {
                    // Only the member names are needed to describe it.
                    let result = match holder {
                        Value::Object(result) => Value::Object(
                            result
                                .keys()
                                .take(6)
                                .map(|k| (k.clone(), Value::Null))
                                .collect(),
                        ),
                        other => other.clone(),
                    };
                    return Err(LocateError::ResultWithoutTools { result });
                }
                None => {
                    let (keys, more) = first_keys(map);
                    return Err(LocateError::UnknownObject { keys, more });
                }
            }
        }
        other => {
            return Err(LocateError::NotAContainer {
                found: json_type_name(other),
            });
        }
    };
    Ok(ToolsLocation { shape, tools })
}

/// The tools array of a document, mutable (same shapes as [`locate_tools`]).
pub(crate) fn locate_tools_mut(document: &mut Value) -> Result<&mut Vec<Value>, LocateError> {
    let pointer = locate_tools(document)?.pointer();
    match document.pointer_mut(pointer) {
        Some(Value::Array(tools)) => Ok(tools),
        // `locate_tools` has just found an array there.
        _ => Err(LocateError::NotAContainer { found: "array" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_in_every_revision() {
        use serde_json::json;
        let cases = [
            (
                json!({"serverInfo": {"name": "old", "version": "1"}}),
                Some("old"),
            ),
            (
                json!({"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "new", "version": "2"}}}),
                Some("new"),
            ),
            (
                json!({"serverInfo": {"name": "both"}, "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "other"}}}),
                Some("both"),
            ),
            (json!({"serverInfo": {"name": 3}}), None),
            (
                json!({"_meta": {"io.modelcontextprotocol/serverInfo": "new"}}),
                None,
            ),
            (json!({"tools": []}), None),
        ];
        for (result, name) in cases {
            assert_eq!(server_name(&result), name, "{result}");
        }
    }
    use serde_json::json;

    #[test]
    fn the_three_shapes_and_their_pointers() {
        let tool = json!({"name": "a", "inputSchema": {"type": "object"}});
        let cases = [
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}),
                "/result/tools",
            ),
            // Captures often drop `jsonrpc`; the `result` member decides.
            (
                json!({"id": 1, "result": {"tools": [tool]}}),
                "/result/tools",
            ),
            (json!({"tools": [tool], "nextCursor": "c"}), "/tools"),
            (json!([tool]), ""),
        ];
        for (document, pointer) in cases {
            let found = locate_tools(&document).unwrap();
            assert_eq!(found.pointer(), pointer, "{document}");
            assert_eq!(found.tools.len(), 1);
            assert_eq!(found.tool_pointer(0), format!("{pointer}/0"));
            let mut copy = document.clone();
            assert_eq!(locate_tools_mut(&mut copy).unwrap().len(), 1);
        }
    }

    #[test]
    fn other_documents_say_why() {
        let cases = [
            (
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "nope"}}),
                "/error",
                "JSON-RPC error response, not a tools list: \"nope\"",
            ),
            (json!({"error": "x"}), "/error", "JSON-RPC error"),
            (
                json!({"result": {"tools": {}}}),
                "/result/tools",
                "found object",
            ),
            (json!({"tools": "x"}), "/tools", "found string"),
            (
                json!({"result": {"resources": []}}),
                "/result",
                "\"resources\"",
            ),
            (json!({"result": 3}), "/result", "found integer"),
            (json!({"name": "a"}), "", "members \"name\""),
            (json!({}), "", "an empty object"),
            (json!("tools"), "", "JSON string"),
        ];
        for (document, pointer, needle) in cases {
            let error = locate_tools(&document).unwrap_err();
            assert_eq!(error.pointer(), pointer, "{document}");
            assert!(error.to_string().contains(needle), "{document}: {error}");
        }
    }
}
