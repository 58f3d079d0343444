//! JSON Schemas (draft 2020-12) for MCP tool recovery metadata, generated from the typed model.
//!
//! Every document comes from the `schemars` derive of a [`mcp_recovery_model`] type; this crate
//! only settles the dialect, drops what MCP does not allow (`null` for an absent field,
//! Rust-specific `format`s), and sets each document's `$id`, `title` and key order.
//!
//! ```
//! let schema = mcp_recovery_schema::tool_schema();
//! assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
//! assert!(schema["$defs"]["Recovery"].is_object());
//! ```

pub mod examples;
pub mod spec_repo;
pub mod typescript;

use mcp_recovery_model::{Compensate, OverlayDocument, Recovery, Tool, ToolAnnotations, ToolsList};
use schemars::generate::SchemaSettings;
use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

/// Base URI of the published schema documents; each document's `$id` is this plus its file name.
pub const SCHEMA_BASE_URI: &str = "https://mcp-recovery.github.io/mcp-recovery/schema/";

/// The `$comment` of every document: it is generated, so edits belong in the model.
pub const GENERATED_COMMENT: &str =
    "Generated from the mcp-recovery-model types by `cargo xtask codegen`; do not edit.";

/// File name of the SEP-3172 `recovery` object schema.
pub const RECOVERY_SCHEMA: &str = "recovery.schema.json";
/// File name of the `dev.chronomcp/compensate` object schema.
pub const COMPENSATE_SCHEMA: &str = "compensate.schema.json";
/// File name of the tool schema.
pub const TOOL_SCHEMA: &str = "tool.schema.json";
/// File name of the `tools/list` result schema.
pub const TOOLS_LIST_SCHEMA: &str = "tools-list.schema.json";
/// File name of the overlay schema.
pub const OVERLAY_SCHEMA: &str = "overlay.schema.json";
/// File name of the `$defs` drop-in for the MCP specification's `schema.json`.
pub const SEP_DEFS: &str = "sep-3172.defs.json";

/// The formats JSON Schema 2020-12 defines; any other `format` (such as `uint64`) is dropped,
/// because strict validators such as ajv refuse unknown formats.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Makes the generated schemas say what MCP says: an optional field is absent, never `null`.
#[derive(Debug, Clone, Copy)]
struct McpShape;

impl Transform for McpShape {
    fn transform(&mut self, schema: &mut Schema) {
        transform_subschemas(self, schema);
        let Some(object) = schema.as_object_mut() else {
            return;
        };
        // `Option<T>` becomes `"type": [T, "null"]` or `anyOf: [T, {"type": "null"}]`.
        if let Some(Value::Array(types)) = object.get_mut("type") {
            types.retain(|t| t != "null");
            if let [only] = types.as_slice() {
                let only = only.clone();
                object.insert("type".to_owned(), only);
            }
        }
        if let Some(Value::Array(branches)) = object.get("anyOf") {
            let null = serde_json::json!({"type": "null"});
            if branches.contains(&null) {
                let kept: Vec<Value> = branches.iter().filter(|b| **b != null).cloned().collect();
                object.remove("anyOf");
                if let [Value::Object(single)] = kept.as_slice() {
                    // Inline the branch, keeping the field's own description after it.
                    let mut merged = single.clone();
                    for (key, value) in std::mem::take(object) {
                        merged.entry(key).or_insert(value);
                    }
                    *object = merged;
                } else {
                    object.insert("anyOf".to_owned(), Value::Array(kept));
                }
            }
        }
        let nonstandard = object
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| !STANDARD_FORMATS.contains(&f));
        if nonstandard {
            object.remove("format");
        }
    }
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with_transform(McpShape)
        .into_generator()
}

/// Puts the identifying keywords first and `$defs` last, so the documents read top-down.
fn finish(schema: Map<String, Value>, file: &str, title: Option<&str>) -> Value {
    let mut out = Map::new();
    let head = ["$schema", "$id", "$comment", "title", "description"];
    for key in head {
        let value = match key {
            "$id" => Some(Value::String(format!("{SCHEMA_BASE_URI}{file}"))),
            "$comment" => Some(Value::String(GENERATED_COMMENT.to_owned())),
            "title" => title
                .map(|t| Value::String(t.to_owned()))
                .or_else(|| schema.get(key).cloned()),
            _ => schema.get(key).cloned(),
        };
        if let Some(value) = value {
            out.insert(key.to_owned(), value);
        }
    }
    for (key, value) in &schema {
        if !head.contains(&key.as_str()) && key != "$defs" {
            out.insert(key.clone(), value.clone());
        }
    }
    if let Some(defs) = schema.get("$defs") {
        out.insert("$defs".to_owned(), defs.clone());
    }
    Value::Object(out)
}

fn root<T: JsonSchema>(file: &str, title: Option<&str>) -> Value {
    let schema = generator().into_root_schema_for::<T>();
    match schema.to_value() {
        Value::Object(map) => finish(map, file, title),
        // A derived schema is always an object; keep any other shape unchanged.
        other => other,
    }
}

/// The schema document of any type with the settings of every generated schema (draft
/// 2020-12, `$id` from `file`), for documents defined outside this crate such as the proxy's
/// policy file. `source` names the types it comes from, for its `$comment`.
pub fn schema_document<T: JsonSchema>(file: &str, source: &str) -> Value {
    let mut document = root::<T>(file, None);
    if let Value::Object(map) = &mut document {
        map.insert(
            "$comment".to_owned(),
            Value::String(format!(
                "Generated from {source} by `cargo xtask codegen`; do not edit."
            )),
        );
    }
    document
}

/// The schema of one SEP-3172 `recovery` object (the value of `annotations.recovery`).
pub fn recovery_schema() -> Value {
    root::<Recovery>(RECOVERY_SCHEMA, None)
}

/// The schema of one `dev.chronomcp/compensate` object (the value of that `_meta` entry).
pub fn compensate_schema() -> Value {
    root::<Compensate>(COMPENSATE_SCHEMA, None)
}

/// The schema of one MCP tool with either or both recovery carriers, self-contained with `$defs`.
pub fn tool_schema() -> Value {
    root::<Tool>(TOOL_SCHEMA, None)
}

/// The schema of a `tools/list` result.
pub fn tools_list_schema() -> Value {
    root::<ToolsList>(TOOLS_LIST_SCHEMA, None)
}

/// The schema of an overlay file (JSON, or TOML read as JSON): recovery and hints declared for
/// someone else's server.
pub fn overlay_schema() -> Value {
    root::<OverlayDocument>(OVERLAY_SCHEMA, None)
}

/// The `$defs` drop-in for the MCP specification's `schema.json`: `ToolAnnotations` extended
/// with `recovery`, and every definition it references (`Recovery`, `CompensatingOperation`,
/// `RecoveryBinding`, `RuntimeExpression`). The references are `#/$defs/…`, so the definitions
/// work both inside this document and merged into MCP's own `$defs`.
pub fn sep_defs() -> Value {
    let mut generator = generator();
    // Registers ToolAnnotations and everything it references as definitions.
    let _reference = generator.subschema_for::<ToolAnnotations>();
    let defs = generator.take_definitions(true);
    let mut document = Map::new();
    if let Some(meta) = &generator.settings().meta_schema {
        document.insert("$schema".to_owned(), Value::String(meta.to_string()));
    }
    document.insert(
        "description".to_owned(),
        Value::String(
            "SEP-3172 definitions for the MCP schema: merge these `$defs` into schema.json's `$defs`; `ToolAnnotations` replaces the existing definition."
                .to_owned(),
        ),
    );
    document.insert("$defs".to_owned(), Value::Object(defs));
    finish(
        document,
        SEP_DEFS,
        Some("SEP-3172 tool recovery definitions"),
    )
}

/// Every generated schema document, by file name.
pub fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        (RECOVERY_SCHEMA, recovery_schema()),
        (COMPENSATE_SCHEMA, compensate_schema()),
        (TOOL_SCHEMA, tool_schema()),
        (TOOLS_LIST_SCHEMA, tools_list_schema()),
        (OVERLAY_SCHEMA, overlay_schema()),
        (SEP_DEFS, sep_defs()),
    ]
}

/// One generated document by file name (`tool.schema.json`) or stem (`tool`).
pub fn schema(name: &str) -> Option<Value> {
    schemas().into_iter().find_map(|(file, value)| {
        let stem = file.split('.').next().unwrap_or(file);
        (file == name || stem == name).then_some(value)
    })
}
