use mcp_recovery_model::LocateError;
use serde_json::{Map, Value};

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, excerpt, show};

declare_rule! {
    /// ## What it does
    /// Reports a JSON document that is none of the accepted shapes of a tool list: a JSON-RPC
    /// response whose `result.tools` is an array, an object `{"tools": [...]}`, or a bare array of
    /// tools. A JSON-RPC error response is reported with its error message.
    ///
    /// ## Why is this bad?
    /// The linter checks the tools a server lists. A document without a tools array has nothing to
    /// check, which usually means the wrong file or the wrong request was captured.
    ///
    /// ## Example
    /// ```json
    /// {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    /// ```
    ///
    /// Use instead:
    /// ```json
    /// {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    /// ```
    summary: "top level is none of: JSON-RPC response with `result.tools`, `{ \"tools\": [...] }`, `[tool, ...]`; a JSON-RPC error response says so",
}

const HELP: &str =
    "provide a `tools/list` JSON-RPC response, an object `{\"tools\": [...]}` or an array of tools";

/// The finding for a document the locator rejects.
pub(crate) fn finding(error: &LocateError) -> Finding {
    let pointer = error.pointer();
    match error {
        LocateError::JsonRpcError { error } => json_rpc_error(error),
        LocateError::ToolsNotAnArray { found, .. } => Finding::new(
            Rule::NotAToolsList,
            pointer,
            format!("`tools` must be an array of tools, found {found}"),
        )
        .help(HELP),
        LocateError::ResultWithoutTools { result } => {
            let found = match result {
                Value::Object(map) => describe_keys(map),
                other => mcp_recovery_model::json_type_name(other).to_owned(),
            };
            Finding::new(
                Rule::NotAToolsList,
                pointer,
                format!("the JSON-RPC result has no `tools` array (found {found}); is it the response to another method?"),
            )
            .help(HELP)
        }
        LocateError::UnknownObject { keys, more } => {
            let found = if keys.is_empty() {
                "an empty object".to_owned()
            } else {
                let keys: Vec<String> = keys
                    .iter()
                    .map(|k| format!("`{}`", excerpt(k, 40)))
                    .collect();
                format!(
                    "members {}{}",
                    keys.join(", "),
                    if *more { ", …" } else { "" }
                )
            };
            Finding::new(
                Rule::NotAToolsList,
                pointer,
                format!(
                    "the object has no `tools` array and is not a JSON-RPC response (found {found})"
                ),
            )
            .help(HELP)
        }
        LocateError::NotAContainer { found } => Finding::new(
            Rule::NotAToolsList,
            pointer,
            format!("the document is a JSON {found}, not a tools list"),
        )
        .help(HELP),
    }
}

/// A JSON-RPC error response.
fn json_rpc_error(error: &Value) -> Finding {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| show(error), |m| format!("'{}'", excerpt(m, 200)));
    let code = error
        .get("code")
        .map_or_else(String::new, |c| format!(" (code {})", show(c)));
    Finding::new(
        Rule::NotAToolsList,
        "/error",
        format!("the document is a JSON-RPC error response, not a tools list: {message}{code}"),
    )
    .help("the server answered `tools/list` with an error; capture a successful response")
}

fn describe_keys(map: &Map<String, Value>) -> String {
    if map.is_empty() {
        return "an empty object".to_owned();
    }
    let keys: Vec<String> = map
        .keys()
        .take(5)
        .map(|k| format!("`{}`", excerpt(k, 40)))
        .collect();
    let more = if map.len() > 5 { ", …" } else { "" };
    format!("members {}{more}", keys.join(", "))
}
