//! MCP `Tool` objects, accepting the union of protocol revisions 2025-11-25 and 2026-07-28.
//!
//! Every struct keeps the fields it does not know in `extra`, so deserializing and serializing
//! again loses nothing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::present::present;
use crate::recovery::{Compensate, DeclaredRecovery, Recovery};

/// The `_meta` key of the mcp-compensate carrier.
pub const COMPENSATE_META_KEY: &str = "dev.chronomcp/compensate";

/// The `_meta` key under which an applied overlay records what it declared that a server's own
/// tool cannot say: `{"recovery": "overlay"}` when the tool's `annotations.recovery` came from
/// an overlay (its bindings are then read with the overlay's language).
pub const OVERLAY_META_KEY: &str = "dev.mcp-recovery/overlay";

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
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub title: Option<String>,
    /// Human-readable description.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// JSON Schema of the arguments; its root `type` is `"object"`.
    #[serde(deserialize_with = "input_schema")]
    #[schemars(with = "InputSchema")]
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`.
    #[serde(
        default,
        deserialize_with = "output_schema",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<OutputSchema>")]
    pub output_schema: Option<Value>,
    /// Behavior hints and SEP-3172 recovery metadata.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub annotations: Option<ToolAnnotations>,
    /// Metadata; may hold the `dev.chronomcp/compensate` carrier.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub meta: Option<ToolMeta>,
    /// Icons a client may display.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub icons: Option<Vec<Icon>>,
    /// Execution properties (2025-11-25).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
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
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (default true).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect (default false).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities (default true).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub open_world_hint: Option<bool>,
    /// SEP-3172: how to compensate a completed call.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
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
        deserialize_with = "present",
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
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub mime_type: Option<String>,
    /// Sizes such as `48x48` or `any`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub sizes: Option<Vec<String>>,
    /// `light` or `dark`; a value a newer revision adds is kept as written.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<IconThemeName>")]
    pub theme: Option<String>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An icon theme as the schema describes it: any string, `light` and `dark` being known.
#[derive(JsonSchema)]
#[allow(dead_code)]
#[schemars(
    description = "`light` or `dark`; other values, from newer protocol revisions, are allowed and mean nothing to this toolkit."
)]
struct IconThemeName(String);

/// A task-support value as the schema describes it.
#[derive(JsonSchema)]
#[allow(dead_code)]
#[schemars(
    description = "`forbidden` (the default), `optional` or `required`; other values, from newer protocol revisions, are allowed and mean nothing to this toolkit."
)]
struct TaskSupportName(String);

/// The background an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Whether the tool supports task-augmented execution; a value a newer revision adds is kept.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<TaskSupportName>")]
    pub task_support: Option<String>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Task support of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<String>,
    /// Fields this model does not know (`_meta`, `ttlMs`, `cacheScope`, `resultType`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl IconTheme {
    /// The theme a value names, `None` for a value this toolkit does not know.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "light" => Some(Self::Light),
            "dark" => Some(Self::Dark),
            _ => None,
        }
    }
}

impl Icon {
    /// The theme, when it is one this toolkit knows.
    pub fn known_theme(&self) -> Option<IconTheme> {
        self.theme.as_deref().and_then(IconTheme::parse)
    }
}

impl TaskSupport {
    /// The value a string names, `None` for a value this toolkit does not know.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "forbidden" => Some(Self::Forbidden),
            "optional" => Some(Self::Optional),
            "required" => Some(Self::Required),
            _ => None,
        }
    }
}

impl ToolExecution {
    /// The task support, when it is a value this toolkit knows.
    pub fn known_task_support(&self) -> Option<TaskSupport> {
        self.task_support.as_deref().and_then(TaskSupport::parse)
    }
}

/// Checks the shape MCP requires of a schema member: an object whose `$schema` (when present) is a
/// string, with `type: "object"` when `object_root` is set, and `properties`/`required` of the
/// right types.
fn schema_shape<E: serde::de::Error>(
    value: &Value,
    what: &str,
    object_root: bool,
) -> Result<(), E> {
    let Value::Object(map) = value else {
        return Err(E::custom(format!(
            "{what} must be an object, found {}",
            crate::json_type::json_type_name(value)
        )));
    };
    if let Some(dialect) = map.get("$schema")
        && !dialect.is_string()
    {
        return Err(E::custom(format!("{what}.$schema must be a string")));
    }
    if object_root {
        if map.get("type").and_then(Value::as_str) != Some("object") {
            return Err(E::custom(format!("{what}.type must be \"object\"")));
        }
        if let Some(properties) = map.get("properties")
            && !properties.is_object()
        {
            return Err(E::custom(format!("{what}.properties must be an object")));
        }
        if let Some(required) = map.get("required") {
            let strings = required
                .as_array()
                .is_some_and(|names| names.iter().all(Value::is_string));
            if !strings {
                return Err(E::custom(format!(
                    "{what}.required must be an array of strings"
                )));
            }
        }
    }
    Ok(())
}

fn input_schema<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    let value = Value::deserialize(deserializer)?;
    schema_shape(&value, "inputSchema", true)?;
    Ok(value)
}

fn output_schema<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    schema_shape(&value, "outputSchema", false)?;
    Ok(Some(value))
}

impl Tool {
    /// Reads a tool from its JSON. Deserializing a typed view through serde re-reads each number
    /// and respells it (`1E2` becomes `1e+2`, `-0` becomes `0`), so the SEP-3172 parameters,
    /// whose constants reach a compensating call, are taken from `raw` as written.
    ///
    /// # Errors
    ///
    /// When `raw` is not a tool this model can read.
    pub fn from_json(raw: &Value) -> Result<Self, serde_json::Error> {
        let mut tool = Self::deserialize(raw)?;
        if let Some(operation) = tool
            .annotations
            .as_mut()
            .and_then(|a| a.recovery.as_mut())
            .and_then(|r| r.compensating_operation.as_mut())
            && let Some(Value::Object(parameters)) =
                raw.pointer("/annotations/recovery/compensatingOperation/parameters")
        {
            operation.parameters = parameters.clone();
        }
        Ok(tool)
    }

    /// The SEP-3172 carrier, if declared.
    pub fn sep_recovery(&self) -> Option<&Recovery> {
        self.annotations.as_ref()?.recovery.as_ref()
    }

    /// Whether its `annotations.recovery` came from an overlay ([`OVERLAY_META_KEY`]).
    pub fn overlay_recovery(&self) -> bool {
        self.overlay_meta()
            .and_then(|m| m.get("recovery"))
            .and_then(Value::as_str)
            == Some("overlay")
    }

    /// What an applied overlay recorded for this tool ([`OVERLAY_META_KEY`]).
    pub fn overlay_meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()?.extra.get(OVERLAY_META_KEY)?.as_object()
    }

    /// The mcp-compensate carrier, if declared.
    pub fn compensate(&self) -> Option<&Compensate> {
        self.meta.as_ref()?.compensate.as_ref()
    }

    /// Every recovery declaration of the tool, normalized, SEP-3172 first.
    ///
    /// A SEP-3172 declaration with an unknown strategy is left out: orchestrators ignore it.
    ///
    /// A SEP-3172 declaration an overlay supplied (the tool's `_meta` says so under
    /// [`OVERLAY_META_KEY`]) is read with the overlay's bindings. When the two carriers agree,
    /// the first carries the compensate carrier's `timeoutMs` and `maxRetries` too, which
    /// SEP-3172 has no place for: the declaration means both.
    pub fn declared_recovery(&self) -> Vec<DeclaredRecovery> {
        let from_overlay = self.overlay_recovery();
        let sep = self.sep_recovery().and_then(|r| {
            if from_overlay {
                r.normalize_overlay()
            } else {
                r.normalize()
            }
        });
        let compensate = self.compensate().map(Compensate::normalize);
        match (sep, compensate) {
            (Some(mut sep), Some(compensate)) => {
                if sep.agrees_with(&compensate)
                    && let (Some(call), Some(limits)) =
                        (sep.compensation.as_mut(), compensate.compensation.as_ref())
                {
                    call.timeout_ms.clone_from(&limits.timeout_ms);
                    call.max_retries.clone_from(&limits.max_retries);
                }
                vec![sep, compensate]
            }
            (sep, compensate) => sep.into_iter().chain(compensate).collect(),
        }
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
