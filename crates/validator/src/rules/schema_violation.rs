use serde_json::Value;

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, excerpt};

declare_rule! {
    /// ## What it does
    /// Checks every tool against the JSON Schema of an MCP tool with both recovery carriers
    /// (`annotations.recovery` of SEP-3172 and `_meta["dev.chronomcp/compensate"]`), and reports
    /// each violation at the offending value: a missing `name` or `inputSchema`, an `inputSchema`
    /// whose `type` is not `"object"`, a hint that is not a boolean, a recovery object without
    /// `compensatingOperation`, an unknown `reversibility`, and so on.
    ///
    /// ## Why is this bad?
    /// Clients and orchestrators deserialize tools with the same schema. A tool that violates it is
    /// rejected or, worse, half-read, and its recovery metadata silently ignored.
    ///
    /// ## Example
    /// ```json
    /// {"name": "archive_note", "inputSchema": {"type": "object"},
    ///  "annotations": {"readOnlyHint": "no"}}
    /// ```
    ///
    /// Use instead:
    /// ```json
    /// {"name": "archive_note", "inputSchema": {"type": "object"},
    ///  "annotations": {"readOnlyHint": false}}
    /// ```
    summary: "a tool violates the generated schema (MCP Tool + both carriers): missing `name`, `inputSchema.type` ≠ \"object\", hint not boolean, malformed recovery object…",
}

const HELP: &str = "see the tool schema (`mcp-recovery schema tool`) for the expected shape";

/// One schema violation, already worded.
pub(crate) fn violation(pointer: String, tool: Option<&str>, message: String) -> Finding {
    Finding::new(Rule::SchemaViolation, pointer, message)
        .tool(tool)
        .help(HELP)
}

/// The typed model rejects a tool the schema accepted.
pub(crate) fn not_a_tool(
    pointer: String,
    tool: Option<&str>,
    error: &serde_json::Error,
) -> Finding {
    Finding::new(
        Rule::SchemaViolation,
        pointer,
        format!(
            "the tool cannot be read: {}",
            excerpt(&error.to_string(), 200)
        ),
    )
    .tool(tool)
    .help(HELP)
}

/// The schema stage could not be set up (a defect of the linter, not of the document).
pub(crate) fn schema_unavailable(pointer: String, reason: &str) -> Finding {
    Finding::new(
        Rule::SchemaViolation,
        pointer,
        format!(
            "the tool schema could not be compiled, so no tool was checked against it: {reason}"
        ),
    )
    .help("this is a defect of mcp-recovery; please report it")
}

/// `missing required property`.
pub(crate) fn missing(property: &Value) -> String {
    match property {
        Value::String(name) => format!("missing required property `{name}`"),
        other => format!("missing required property {other}"),
    }
}

/// A JSON type mismatch.
pub(crate) fn wrong_type(expected: &[String], found: &str) -> String {
    format!("expected {}, found {found}", expected.join(" or "))
}

/// A value that matches none of the alternatives.
pub(crate) fn no_alternative(found: &str) -> String {
    format!("{found} matches none of the allowed forms")
}
