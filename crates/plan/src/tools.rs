//! Reading the tool list a plan is built against.

use mcp_recovery_model::{LocateError, Tool, locate_tools};
use serde_json::Value;

/// A document that does not yield a tool list at all (its shape is wrong; a malformed tool is
/// never this, see [`ToolList::unusable`]).
pub type LoadError = LocateError;

/// A tool the typed model cannot read; steps that need it are `unavailable` with this reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusableTool {
    /// JSON Pointer of the tool in the document (`/result/tools/3`).
    pub pointer: String,
    /// Its `name`, when that is a string.
    pub name: Option<String>,
    /// Why it cannot be read.
    pub message: String,
}

impl std::fmt::Display for UnusableTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.name.as_deref().map_or_else(
            || "<unnamed>".to_owned(),
            |name| name.escape_debug().to_string(),
        );
        write!(
            f,
            "the tool '{name}' at {} is not a valid tool: {}",
            self.pointer,
            self.message.escape_debug()
        )
    }
}

/// The tools of a `tools/list` document: those the model reads, and those it cannot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolList {
    /// Tools that deserialize, in document order.
    pub tools: Vec<Tool>,
    /// Tools that do not, in document order. One bad tool never hides the others.
    pub unusable: Vec<UnusableTool>,
}

impl From<Vec<Tool>> for ToolList {
    fn from(tools: Vec<Tool>) -> Self {
        Self {
            tools,
            unusable: Vec::new(),
        }
    }
}

/// Reads every tool of a `tools/list` document (the shapes of
/// [`mcp_recovery_model::locate_tools`]); a tool that does not deserialize is kept aside with its
/// reason, so a plan can still be built for the others.
pub fn load_tools(document: &Value) -> Result<ToolList, LoadError> {
    let location = locate_tools(document)?;
    let mut list = ToolList::default();
    for (index, raw) in location.tools.iter().enumerate() {
        match Tool::from_json(raw) {
            Ok(tool) => list.tools.push(tool),
            Err(e) => list.unusable.push(UnusableTool {
                pointer: location.tool_pointer(index),
                name: raw.get("name").and_then(Value::as_str).map(str::to_owned),
                message: e.to_string(),
            }),
        }
    }
    Ok(list)
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
            json!({"id": 1, "result": {"tools": [tool.clone()]}}),
            json!({"tools": [tool.clone()], "nextCursor": "x"}),
            json!([tool.clone()]),
        ] {
            let list = load_tools(&document).unwrap();
            assert_eq!(list.tools.len(), 1);
            assert_eq!(list.tools[0].name, "a");
        }
    }

    #[test]
    fn rejects_other_shapes_and_keeps_bad_tools_aside() {
        assert!(load_tools(&json!({"name": "a"})).is_err());
        assert!(load_tools(&json!("tools")).is_err());
        assert!(matches!(
            load_tools(
                &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}})
            ),
            Err(LocateError::JsonRpcError { .. })
        ));
        let list = load_tools(&json!({"tools": [
            {"name": "a"},
            {"name": "b", "inputSchema": {"type": "object"}},
            {"name": "c", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}}
        ]}))
        .unwrap();
        assert_eq!(list.tools.len(), 1);
        assert_eq!(list.tools[0].name, "b");
        let pointers: Vec<&str> = list.unusable.iter().map(|u| u.pointer.as_str()).collect();
        assert_eq!(pointers, ["/tools/0", "/tools/2"]);
        assert_eq!(list.unusable[1].name.as_deref(), Some("c"));
        assert!(list.unusable[1].to_string().contains("'c' at /tools/2"));
    }
}
