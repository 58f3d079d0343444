//! The schema of a forward tool's result: its `outputSchema`, or the one its description
//! documents, with the text reader drafted when the result holds its JSON as text.

use mcp_recovery_model::Tool;
use serde_json::{Value, json};

use super::fields::{object_fields, types};
use super::types::Reader;

/// The first JSON object in a tool's description that is a JSON Schema of an object (it has
/// `"type": "object"` and `properties`): the documented shape of what the tool returns.
pub(crate) fn documented_schema(description: &str) -> Option<Value> {
    description.match_indices('{').find_map(|(at, _)| {
        let mut values =
            serde_json::Deserializer::from_str(&description[at..]).into_iter::<Value>();
        let value = values.next()?.ok()?;
        (value.get("type") == Some(&json!("object"))
            && value.get("properties").is_some_and(Value::is_object))
        .then_some(value)
    })
}

/// Whether an `outputSchema` is FastMCP's wrapper of a plain return value: a single string
/// property `result`.
pub(crate) fn fastmcp_wrapper(schema: &Value) -> bool {
    let (_, properties) = object_fields(Some(schema));
    properties.len() == 1
        && properties
            .get("result")
            .is_some_and(|r| types(r) == ["string"])
}

/// The schema of the forward tool's result and, when the result holds it as text, the reader
/// to draft. Without an `outputSchema` (or with FastMCP's string wrapper) the value's schema
/// must be documented in the description; nothing is guessed.
pub(crate) fn result_schema(tool: &Tool) -> (Option<Value>, Option<Reader>) {
    let documented = || documented_schema(tool.description.as_deref().unwrap_or_default());
    match &tool.output_schema {
        Some(schema) if fastmcp_wrapper(schema) => match documented() {
            Some(schema) => (
                Some(schema.clone()),
                Some(Reader {
                    from: "fastmcp-result",
                    schema,
                }),
            ),
            None => (None, None),
        },
        Some(schema) => (Some(schema.clone()), None),
        None => match documented() {
            Some(schema) => (
                Some(schema.clone()),
                Some(Reader {
                    from: "text",
                    schema,
                }),
            ),
            None => (None, None),
        },
    }
}
