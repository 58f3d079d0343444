//! Reading the tool list a plan is built against.

use mcp_recovery_model::Tool;
use serde::Deserialize;
use serde_json::Value;

/// A document that does not yield a tool list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The document is a JSON-RPC error response.
    #[error("the document is a JSON-RPC error response: {message}")]
    JsonRpcError {
        /// The error's `message` (or the whole error object when it has none).
        message: String,
    },
    /// None of the accepted shapes.
    #[error(
        "not a tools/list document: expected a JSON-RPC response with result.tools, an object with \"tools\", or an array of tools"
    )]
    NotAToolsList,
    /// One tool does not deserialize.
    #[error("tool {index} ({name}) is not a valid tool: {message}")]
    InvalidTool {
        /// 0-based position in the list.
        index: usize,
        /// Its `name`, or `<unnamed>`.
        name: String,
        /// The deserializer's message.
        message: String,
    },
}

/// The tool array of a `tools/list` document, in any of the three accepted shapes: a JSON-RPC
/// response (`{"jsonrpc": "2.0", "id": …, "result": {"tools": [...]}}`), a result object
/// (`{"tools": [...]}`) or a bare array.
pub fn tools_array(document: &Value) -> Result<&Vec<Value>, LoadError> {
    match document {
        Value::Array(tools) => Ok(tools),
        Value::Object(object) => {
            if let Some(error) = object.get("error")
                && object.contains_key("jsonrpc")
            {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| error.to_string(), str::to_owned);
                return Err(LoadError::JsonRpcError { message });
            }
            let holder = match object.get("result") {
                Some(result) if object.contains_key("jsonrpc") => result,
                _ => document,
            };
            match holder.get("tools") {
                Some(Value::Array(tools)) => Ok(tools),
                _ => Err(LoadError::NotAToolsList),
            }
        }
        _ => Err(LoadError::NotAToolsList),
    }
}

/// Deserializes every tool of a `tools/list` document (see [`tools_array`] for the shapes).
pub fn load_tools(document: &Value) -> Result<Vec<Tool>, LoadError> {
    tools_array(document)?
        .iter()
        .enumerate()
        .map(|(index, raw)| {
            Tool::deserialize(raw).map_err(|e| LoadError::InvalidTool {
                index,
                name: raw
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("<unnamed>")
                    .to_owned(),
                message: e.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_the_three_shapes() {
        let tool = json!({"name": "a", "inputSchema": {"type": "object"}});
        for document in [
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool.clone()]}}),
            json!({"tools": [tool.clone()], "nextCursor": "x"}),
            json!([tool.clone()]),
        ] {
            let tools = load_tools(&document).unwrap();
            assert_eq!(tools.len(), 1);
            assert_eq!(tools[0].name, "a");
        }
    }

    #[test]
    fn rejects_other_shapes_and_bad_tools() {
        assert_eq!(
            load_tools(&json!({"name": "a"})),
            Err(LoadError::NotAToolsList)
        );
        assert_eq!(load_tools(&json!("tools")), Err(LoadError::NotAToolsList));
        assert_eq!(
            load_tools(
                &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}})
            ),
            Err(LoadError::JsonRpcError {
                message: "nope".into()
            })
        );
        let error = load_tools(&json!([{"name": "a"}])).unwrap_err();
        assert!(
            matches!(&error, LoadError::InvalidTool { index: 0, name, .. } if name == "a"),
            "{error}"
        );
    }
}
