//! MCP `Tool` objects, accepting the union of protocol revisions 2025-11-25 and 2026-07-28.
//!
//! Every struct keeps the fields it does not know in `extra`, so deserializing and serializing
//! again loses nothing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::recovery::{Compensate, Recovery};

/// The `_meta` key of the mcp-compensate carrier.
pub const COMPENSATE_META_KEY: &str = "dev.chronomcp/compensate";

/// A tool as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    title = "Tool",
    description = "An MCP tool definition, with recovery metadata in either carrier."
)]
pub struct Tool {
    /// Programmatic name, unique within the server.
    pub name: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; its root `type` is `"object"`.
    #[schemars(with = "InputSchema")]
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<OutputSchema>")]
    pub output_schema: Option<Value>,
    /// Behavior hints and SEP-3172 recovery metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Metadata; may hold the `dev.chronomcp/compensate` carrier.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ToolMeta>,
    /// Icons a client may display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Execution properties (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The shape MCP requires of `inputSchema` (schema generation only).
#[derive(JsonSchema)]
#[allow(dead_code)]
#[schemars(extend("additionalProperties" = true))]
struct InputSchema {
    #[serde(rename = "$schema")]
    schema: Option<String>,
    #[serde(rename = "type")]
    kind: ObjectType,
    properties: Option<Map<String, Value>>,
    required: Option<Vec<String>>,
}

/// The shape MCP requires of `outputSchema` (schema generation only).
#[derive(JsonSchema)]
#[allow(dead_code)]
#[schemars(extend("additionalProperties" = true))]
struct OutputSchema {
    #[serde(rename = "$schema")]
    schema: Option<String>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
#[serde(rename_all = "lowercase")]
enum ObjectType {
    Object,
}

/// Hints about a tool's behavior, plus the SEP-3172 `recovery` field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// SEP-3172: how to compensate a completed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool's `_meta` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolMeta {
    /// The mcp-compensate carrier.
    #[serde(
        rename = "dev.chronomcp/compensate",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub compensate: Option<Compensate>,
    /// Every other `_meta` entry.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An icon a client may display.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// URI of the image.
    pub src: String,
    /// MIME type override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `48x48` or `any`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `light` or `dark`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The background an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// A light background.
    Light,
    /// A dark background.
    Dark,
}

/// Execution properties of a tool (protocol 2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Whether the tool supports task-augmented execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Task support of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// No task-augmented execution (the default).
    Forbidden,
    /// Task-augmented execution is possible.
    Optional,
    /// Task-augmented execution is required.
    Required,
}

/// The result of `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "ListToolsResult")]
pub struct ToolsList {
    /// The tools of this page.
    pub tools: Vec<Tool>,
    /// Cursor of the next page, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Fields this model does not know (`_meta`, `ttlMs`, `cacheScope`, `resultType`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Tool {
    /// The SEP-3172 carrier, if declared.
    pub fn sep_recovery(&self) -> Option<&Recovery> {
        self.annotations.as_ref()?.recovery.as_ref()
    }

    /// The mcp-compensate carrier, if declared.
    pub fn compensate(&self) -> Option<&Compensate> {
        self.meta.as_ref()?.compensate.as_ref()
    }

    /// A hint's value, `None` when omitted.
    pub fn hint(&self, hint: Hint) -> Option<bool> {
        let a = self.annotations.as_ref()?;
        match hint {
            Hint::ReadOnly => a.read_only_hint,
            Hint::Destructive => a.destructive_hint,
            Hint::Idempotent => a.idempotent_hint,
            Hint::OpenWorld => a.open_world_hint,
        }
    }
}

/// The four boolean hints of `ToolAnnotations`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Hint {
    /// `readOnlyHint`
    ReadOnly,
    /// `destructiveHint`
    Destructive,
    /// `idempotentHint`
    Idempotent,
    /// `openWorldHint`
    OpenWorld,
}

impl Hint {
    /// All four, in the order MCP lists them.
    pub const ALL: [Hint; 4] = [
        Self::ReadOnly,
        Self::Destructive,
        Self::Idempotent,
        Self::OpenWorld,
    ];

    /// The JSON key.
    pub fn key(self) -> &'static str {
        match self {
            Self::ReadOnly => "readOnlyHint",
            Self::Destructive => "destructiveHint",
            Self::Idempotent => "idempotentHint",
            Self::OpenWorld => "openWorldHint",
        }
    }
}
