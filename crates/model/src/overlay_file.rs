//! The overlay file: its text formats and the typed document its JSON Schema is generated from.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::recovery::{Compensate, Recovery};

/// The `annotations` members an overlay may set.
pub const OVERLAY_ANNOTATIONS: &[&str] = &[
    "title",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
    "recovery",
];

/// The member of an overlay's tool entry declaring how its result is read from text.
pub const RESULT_SECTION: &str = "result";

/// The text format of an overlay file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayFormat {
    /// JSON.
    Json,
    /// TOML.
    Toml,
}

impl OverlayFormat {
    /// TOML for a name ending in `.toml` (any case), JSON otherwise.
    pub fn from_file_name(name: &str) -> Self {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".toml") {
            Self::Toml
        } else {
            Self::Json
        }
    }
}

/// The overlay document, for the generated JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "Overlay",
    description = "Recovery metadata and hints declared for the tools of a server that does not declare them itself. The server's own declarations win."
)]
pub struct OverlayDocument {
    /// URI of this schema, for editors.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The server this overlay is for, as its `initialize` result names it (`serverInfo.name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Tool name → the fields to add to that tool.
    pub tools: BTreeMap<String, OverlayTool>,
}

/// The fields an overlay adds to one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayTool {
    /// Hints, title and the SEP-3172 carrier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<OverlayAnnotations>,
    /// The mcp-compensate carrier.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<OverlayMeta>,
    /// The tool's result holds its JSON value in text: where, and the JSON Schema of that value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<OverlayResult>,
    /// A read to run before each call, and the compensation to make depending on what it found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<OverlayBefore>,
}

/// A before-image: the read run before each call, and the undo for each outcome of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayBefore {
    /// The tool to call before the call.
    pub read: String,
    /// Its arguments; bindings read only `$request.body`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// What to do when the read succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<OverlayOutcome>,
    /// What to do when the read returned `isError: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<OverlayOutcome>,
    /// Read again right after the call, and undo only while the read still returns that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchanged: Option<bool>,
    /// A regular expression: a failed read counts as `missing` only when a text item of its
    /// result matches it; any other failure leaves the undo unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
}

/// What a before-image declares for one outcome of its read: the undo, or that the call then
/// changes nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OverlayOutcome {
    /// The call changes nothing with this outcome: there is nothing to undo.
    Nothing(OverlayNothing),
    /// The compensation to make.
    Undo(OverlayUndo),
}

/// `"nothing"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum OverlayNothing {
    /// The call changes nothing.
    #[serde(rename = "nothing")]
    Nothing,
}

/// One outcome-conditioned compensation of a before-image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OverlayUndo {
    /// The compensating tool.
    pub operation_id: String,
    /// Its parameters: bindings, `$before.text` and `$before.body#/…` included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Map<String, Value>>,
    /// Further calls made after this one, in order, when one call cannot undo the tool; a
    /// failed call stops the undo there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then: Option<Vec<OverlayUndoPart>>,
}

/// A further call of a before-image's undo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OverlayUndoPart {
    /// The compensating tool.
    pub operation_id: String,
    /// Its parameters: bindings, `$before.text` and `$before.body#/…` included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Map<String, Value>>,
}

/// How an overlay reads a tool's result from text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayResult {
    /// `text`: the JSON text of the result's only text item; `fastmcp-result`: the JSON text of
    /// the string `structuredContent.result`.
    pub from: OverlayResultSource,
    /// A regular expression with named groups (`(?<branch>\S+)`): the text is matched with it
    /// instead of parsed as JSON, and the value read is an object with the text of each named
    /// group of the first match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// With a pattern, which matches are read: `first` (the default), or `all`, when the value
    /// read is an array with one such object per match (empty when nothing matches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<OverlayMatches>,
    /// The JSON Schema the value read must match; a value that does not is never used.
    pub schema: Value,
}

/// Which matches of a reader's pattern are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OverlayMatches {
    /// The first match: the value read is one object.
    First,
    /// Every match: the value read is an array of objects.
    All,
}

/// Where the JSON text of a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OverlayResultSource {
    /// The result's only `text` content item.
    Text,
    /// The string `structuredContent.result`, as FastMCP wraps a returned string.
    FastmcpResult,
}

/// The `annotations` members an overlay may set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OverlayAnnotations {
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// SEP-3172: how to compensate a completed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
}

/// The `_meta` members an overlay may set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayMeta {
    /// The mcp-compensate carrier.
    #[serde(
        rename = "dev.chronomcp/compensate",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub compensate: Option<Compensate>,
}
