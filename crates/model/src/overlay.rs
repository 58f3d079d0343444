//! Overlays: recovery metadata and hints declared by a user for a server they do not own.
//!
//! An overlay names tools of one server and gives, per tool, the fields the server would have
//! declared itself: `annotations.recovery`, the hints, and `_meta["dev.chronomcp/compensate"]`.
//! [`Overlay::apply`] merges it into a `tools/list` document before anything else reads the list,
//! so the validator, the planner, the converter and a proxy all see one view. Where the server
//! declares a field itself, the server's value is kept and a difference is reported as an
//! [`OverlayIssue::Conflict`]; a tool the server does not list is an
//! [`OverlayIssue::UnknownTool`]. Every merged field keeps its [`Origin`], so a finding about it
//! can point back into the overlay file.
//!
//! ```
//! use mcp_recovery_model::{Overlay, OverlayFormat};
//!
//! let overlay = Overlay::parse(r#"
//! server = "memory"
//! [tools.create_entities._meta."dev.chronomcp/compensate"]
//! reversibility = "irreversible"
//! "#, OverlayFormat::Toml).unwrap();
//! let mut list = serde_json::json!({"tools": [{"name": "create_entities", "inputSchema": {"type": "object"}}]});
//! let applied = overlay.apply(&mut list);
//! assert!(applied.issues.is_empty());
//! assert_eq!(list["tools"][0]["_meta"]["dev.chronomcp/compensate"]["reversibility"], "irreversible");
//! assert_eq!(applied.origins[0].overlay_pointer, "/tools/create_entities/_meta/dev.chronomcp~1compensate");
//! ```

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::before::{BEFORE_SECTION, BeforeImage};
use crate::pointer::escape_token;
use crate::reader::ResultReader;
use crate::recovery::{Compensate, Recovery};
use crate::tool::{COMPENSATE_META_KEY, OVERLAY_META_KEY};

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
    /// The compensation when the read succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<OverlayUndo>,
    /// The compensation when the read returned `isError: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<OverlayUndo>,
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
}

/// How an overlay reads a tool's result from text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayResult {
    /// `text`: the JSON text of the result's only text item; `fastmcp-result`: the JSON text of
    /// the string `structuredContent.result`.
    pub from: OverlayResultSource,
    /// The JSON Schema the value read must match; a value that does not is never used.
    pub schema: Value,
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

/// Where one value of a TOML overlay sits in its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlaySpan {
    /// The key, when the value is a table member.
    pub key: Option<Range<usize>>,
    /// The value.
    pub value: Range<usize>,
}

/// An overlay that cannot be used: what is wrong, at which pointer, and where in the text when
/// that is known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if pointer.is_empty() { String::new() } else { format!("at {pointer}: ") })]
pub struct OverlayError {
    /// What is wrong.
    pub message: String,
    /// RFC 6901 pointer into the overlay (empty for the whole document).
    pub pointer: String,
    /// Byte range in the text, when known.
    pub span: Option<Range<usize>>,
}

/// A parsed overlay.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlay {
    format: OverlayFormat,
    server: Option<String>,
    /// Tool name → its entry, in file order.
    tools: Vec<(String, Map<String, Value>)>,
    /// TOML only: the place of every value by pointer.
    spans: Option<HashMap<String, OverlaySpan>>,
}

/// One field of a tool that came from the overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// Pointer of the tool in the document the overlay was applied to (`/result/tools/3`).
    pub tool_pointer: String,
    /// The field, relative to the tool (`/annotations/recovery`).
    pub field: String,
    /// Pointer of the field's value in the overlay.
    pub overlay_pointer: String,
}

/// Something an overlay says that was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverlayIssue {
    /// The overlay names a tool the server does not list.
    UnknownTool {
        /// The tool name.
        tool: String,
        /// Pointer of the tool's entry in the overlay.
        overlay_pointer: String,
    },
    /// The server declares the field itself, differently; the server's value is kept.
    Conflict {
        /// The tool name.
        tool: String,
        /// The field, relative to the tool.
        field: String,
        /// Pointer of the field in the overlay.
        overlay_pointer: String,
        /// Pointer of the field in the document.
        document_pointer: String,
    },
}

/// The outcome of [`Overlay::apply`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Every field added to the document.
    pub origins: Vec<Origin>,
    /// What was not applied.
    pub issues: Vec<OverlayIssue>,
}

impl Applied {
    /// The overlay pointer of a document pointer inside a field that came from the overlay.
    pub fn overlay_pointer_of(&self, document_pointer: &str) -> Option<String> {
        self.origins.iter().find_map(|origin| {
            let rest = document_pointer
                .strip_prefix(origin.tool_pointer.as_str())?
                .strip_prefix(origin.field.as_str())?;
            (rest.is_empty() || rest.starts_with('/'))
                .then(|| format!("{}{rest}", origin.overlay_pointer))
        })
    }
}

fn invalid(pointer: &str, message: impl Into<String>) -> OverlayError {
    OverlayError {
        message: message.into(),
        pointer: pointer.to_owned(),
        span: None,
    }
}

fn json_type(value: &Value) -> &'static str {
    crate::binding::json_type_name(value)
}

impl Overlay {
    /// Parses and checks the overlay's structure. The carriers' contents are not checked here:
    /// the validator checks them once merged, as it checks a server's own declarations.
    pub fn parse(text: &str, format: OverlayFormat) -> Result<Self, OverlayError> {
        let (document, spans) = match format {
            OverlayFormat::Json => {
                let value: Value = crate::json::from_str(text).map_err(|e| {
                    invalid(
                        "",
                        format!(
                            "not valid JSON (line {}, column {}): {e}",
                            e.line(),
                            e.column()
                        ),
                    )
                })?;
                (value, None)
            }
            OverlayFormat::Toml => {
                let value: Value = toml::from_str(text).map_err(|e| OverlayError {
                    message: format!("not valid TOML: {}", e.message().trim_end()),
                    pointer: String::new(),
                    span: e.span(),
                })?;
                (value, Some(toml_spans(text)))
            }
        };
        let mut overlay = Self::from_value(&document, format)?;
        overlay.spans = spans;
        Ok(overlay)
    }

    fn from_value(document: &Value, format: OverlayFormat) -> Result<Self, OverlayError> {
        let Value::Object(top) = document else {
            return Err(invalid(
                "",
                format!("an overlay is an object, not {}", json_type(document)),
            ));
        };
        for key in top.keys() {
            if !matches!(key.as_str(), "$schema" | "server" | "tools") {
                return Err(invalid(
                    &format!("/{}", escape_token(key)),
                    format!("unknown key '{key}' (expected \"server\" or \"tools\")"),
                ));
            }
        }
        let server = match top.get("server") {
            None => None,
            Some(Value::String(name)) => Some(name.clone()),
            Some(other) => {
                return Err(invalid(
                    "/server",
                    format!("'server' is a string, not {}", json_type(other)),
                ));
            }
        };
        let Some(Value::Object(entries)) = top.get("tools") else {
            return Err(invalid(
                "/tools",
                "an overlay needs a 'tools' object mapping tool names to their declarations",
            ));
        };
        let mut tools = Vec::with_capacity(entries.len());
        for (name, entry) in entries {
            let at = format!("/tools/{}", escape_token(name));
            let Value::Object(entry) = entry else {
                return Err(invalid(
                    &at,
                    format!(
                        "the entry of '{name}' is an object, not {}",
                        json_type(entry)
                    ),
                ));
            };
            check_entry(&at, entry)?;
            tools.push((name.clone(), entry.clone()));
        }
        Ok(Self {
            format,
            server,
            tools,
            spans: None,
        })
    }

    /// The text format it was read from.
    pub fn format(&self) -> OverlayFormat {
        self.format
    }

    /// The server it is for, when it says.
    pub fn server(&self) -> Option<&str> {
        self.server.as_deref()
    }

    /// The tool names it declares, in file order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|(name, _)| name.as_str())
    }

    /// TOML overlays: the place of each value by pointer (JSON overlays are located by the
    /// caller's JSON scanner).
    pub fn spans(&self) -> Option<&HashMap<String, OverlaySpan>> {
        self.spans.as_ref()
    }

    /// Merges the overlay into a `tools/list` document (a JSON-RPC response, `{"tools": [...]}`
    /// or a bare array). A document of another shape is left alone and every overlay tool is
    /// reported unknown.
    pub fn apply(&self, document: &mut Value) -> Applied {
        let pointer = crate::document::locate_tools(document).map(|l| l.pointer());
        match (pointer, crate::document::locate_tools_mut(document)) {
            (Ok(pointer), Ok(tools)) => self.apply_to(tools, pointer),
            _ => self.apply_to(&mut [], ""),
        }
    }

    /// Merges the overlay into the tools array found at `array_pointer` of a document.
    pub fn apply_to(&self, tools: &mut [Value], array_pointer: &str) -> Applied {
        let mut applied = Applied::default();
        for (name, entry) in &self.tools {
            let entry_pointer = format!("/tools/{}", escape_token(name));
            let found = tools
                .iter()
                .position(|t| t.get("name").and_then(Value::as_str) == Some(name));
            let Some(index) = found else {
                applied.issues.push(OverlayIssue::UnknownTool {
                    tool: name.clone(),
                    overlay_pointer: entry_pointer,
                });
                continue;
            };
            let tool_pointer = format!("{array_pointer}/{index}");
            let Some(Value::Object(tool)) = tools.get_mut(index) else {
                continue;
            };
            for (section, members) in entry {
                if section == RESULT_SECTION || section == BEFORE_SECTION {
                    let field = format!("/_meta/{}/{section}", escape_token(OVERLAY_META_KEY));
                    let overlay_pointer = format!("{entry_pointer}/{section}");
                    let Some(record) = overlay_record(tool) else {
                        continue;
                    };
                    match record.get(section) {
                        Some(earlier) if earlier != members => {
                            applied.issues.push(OverlayIssue::Conflict {
                                tool: name.clone(),
                                document_pointer: format!("{tool_pointer}{field}"),
                                field,
                                overlay_pointer,
                            });
                        }
                        Some(_) => {}
                        None => {
                            record.insert(section.clone(), members.clone());
                            applied.origins.push(Origin {
                                tool_pointer: tool_pointer.clone(),
                                field,
                                overlay_pointer,
                            });
                        }
                    }
                    continue;
                }
                let Value::Object(members) = members else {
                    continue;
                };
                for (key, value) in members {
                    let field = format!("/{}/{}", escape_token(section), escape_token(key));
                    let overlay_pointer = format!("{entry_pointer}{field}");
                    let holder = tool
                        .entry(section.clone())
                        .or_insert_with(|| Value::Object(Map::new()));
                    let Value::Object(holder) = holder else {
                        // The server's own section is malformed; the validator reports it.
                        applied.issues.push(OverlayIssue::Conflict {
                            tool: name.clone(),
                            field,
                            overlay_pointer,
                            document_pointer: format!("{tool_pointer}/{}", escape_token(section)),
                        });
                        continue;
                    };
                    match holder.get(key) {
                        Some(own) => {
                            if !same_declaration(key, own, value) {
                                applied.issues.push(OverlayIssue::Conflict {
                                    tool: name.clone(),
                                    document_pointer: format!("{tool_pointer}{field}"),
                                    field,
                                    overlay_pointer,
                                });
                            }
                        }
                        None => {
                            holder.insert(key.clone(), value.clone());
                            if section == "annotations" && key == "recovery" {
                                mark_overlay_recovery(tool);
                            }
                            applied.origins.push(Origin {
                                tool_pointer: tool_pointer.clone(),
                                field,
                                overlay_pointer,
                            });
                        }
                    }
                }
            }
        }
        applied
    }
}

/// Records in the tool's `_meta` that its `annotations.recovery` came from an overlay, so that
/// its bindings are read with the overlay's language wherever the merged list is read.
fn mark_overlay_recovery(tool: &mut Map<String, Value>) {
    if let Some(record) = overlay_record(tool) {
        record.insert("recovery".to_owned(), Value::String("overlay".to_owned()));
    }
}

/// The tool's `_meta[OVERLAY_META_KEY]` object, made when missing; `None` when the server's own
/// `_meta` is not an object (the validator reports it, and the tool is not read at all then).
fn overlay_record(tool: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    let Value::Object(meta) = tool
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()))
    else {
        return None;
    };
    let record = meta
        .entry(OVERLAY_META_KEY)
        .or_insert_with(|| Value::Object(Map::new()));
    if !record.is_object() {
        *record = Value::Object(Map::new());
    }
    record.as_object_mut()
}

/// Checks one tool entry: only the fields a server could declare, each section an object.
fn check_entry(at: &str, entry: &Map<String, Value>) -> Result<(), OverlayError> {
    for (section, members) in entry {
        let allowed: &[&str] = match section.as_str() {
            "annotations" => OVERLAY_ANNOTATIONS,
            "_meta" => &[COMPENSATE_META_KEY],
            RESULT_SECTION => {
                if let Err((pointer, message)) = ResultReader::from_declaration(members) {
                    return Err(invalid(&format!("{at}/{RESULT_SECTION}{pointer}"), message));
                }
                continue;
            }
            BEFORE_SECTION => {
                if let Err((pointer, message)) = BeforeImage::from_declaration(members) {
                    return Err(invalid(&format!("{at}/{BEFORE_SECTION}{pointer}"), message));
                }
                continue;
            }
            other => {
                return Err(invalid(
                    &format!("{at}/{}", escape_token(other)),
                    format!(
                        "unknown key '{other}' (an overlay sets \"annotations\", \"_meta\", \"result\" and \"before\")"
                    ),
                ));
            }
        };
        let section_at = format!("{at}/{}", escape_token(section));
        let Value::Object(members) = members else {
            return Err(invalid(
                &section_at,
                format!("'{section}' is an object, not {}", json_type(members)),
            ));
        };
        for key in members.keys() {
            if !allowed.contains(&key.as_str()) {
                let expected: Vec<String> = allowed.iter().map(|k| format!("\"{k}\"")).collect();
                return Err(invalid(
                    &format!("{section_at}/{}", escape_token(key)),
                    format!(
                        "an overlay cannot set {section}.{key} (it sets {})",
                        expected.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Whether the server's value and the overlay's say the same thing: carriers are compared after
/// normalization (so spelling differences do not count), everything else as JSON.
fn same_declaration(key: &str, own: &Value, overlay: &Value) -> bool {
    if own == overlay {
        return true;
    }
    let normalized = |value: &Value| match key {
        "recovery" => Recovery::deserialize(value)
            .ok()
            .and_then(|r| r.normalize()),
        COMPENSATE_META_KEY => Compensate::deserialize(value).ok().map(|c| c.normalize()),
        _ => None,
    };
    match (normalized(own), normalized(overlay)) {
        (Some(a), Some(b)) => a.agrees_with(&b),
        _ => false,
    }
}

/// The place of every value of a TOML document, by JSON Pointer.
fn toml_spans(text: &str) -> HashMap<String, OverlaySpan> {
    use toml::de::{DeTable, DeValue};
    fn walk(
        value: &toml::Spanned<DeValue<'_>>,
        key: Option<Range<usize>>,
        pointer: String,
        out: &mut HashMap<String, OverlaySpan>,
    ) {
        match value.get_ref() {
            DeValue::Table(table) => {
                for (k, v) in table {
                    let child = format!("{pointer}/{}", escape_token(k.get_ref()));
                    walk(v, Some(k.span()), child, out);
                }
            }
            DeValue::Array(array) => {
                for (i, v) in array.iter().enumerate() {
                    walk(v, None, format!("{pointer}/{i}"), out);
                }
            }
            _ => {}
        }
        // A table opened by a header spans nothing useful; its key does.
        let span = value.span();
        let value_range = if span.is_empty() {
            key.clone().unwrap_or(span)
        } else {
            span
        };
        out.insert(
            pointer,
            OverlaySpan {
                key,
                value: value_range,
            },
        );
    }
    let mut out = HashMap::new();
    if let Ok(root) = DeTable::parse(text) {
        let span = root.span();
        let root = toml::Spanned::new(span, DeValue::Table(root.into_inner()));
        walk(&root, None, String::new(), &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list() -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "create", "inputSchema": {"type": "object"}},
            {"name": "delete", "inputSchema": {"type": "object"},
             "annotations": {"destructiveHint": true}}
        ]}})
    }

    #[test]
    fn json_and_toml_read_alike() {
        let json = Overlay::parse(
            r#"{"server": "s", "tools": {"create": {"annotations": {"idempotentHint": false}}}}"#,
            OverlayFormat::Json,
        )
        .unwrap();
        let toml = Overlay::parse(
            "server = \"s\"\n[tools.create.annotations]\nidempotentHint = false\n",
            OverlayFormat::Toml,
        )
        .unwrap();
        assert_eq!(json.server(), Some("s"));
        assert_eq!(json.tools, toml.tools);
        assert!(json.spans().is_none());
        let spans = toml.spans().unwrap();
        let at = &spans["/tools/create/annotations/idempotentHint"];
        assert_eq!(
            &"server = \"s\"\n[tools.create.annotations]\nidempotentHint = false\n"
                [at.value.clone()],
            "false"
        );
    }

    #[test]
    fn applies_and_reports() {
        let overlay = Overlay::parse(
            r#"{"tools": {
                "create": {"annotations": {"idempotentHint": false}},
                "delete": {"annotations": {"destructiveHint": false, "idempotentHint": true}},
                "missing": {"annotations": {"readOnlyHint": true}}
            }}"#,
            OverlayFormat::Json,
        )
        .unwrap();
        let mut document = list();
        let applied = overlay.apply(&mut document);
        assert_eq!(
            document["result"]["tools"][0]["annotations"]["idempotentHint"],
            false
        );
        assert_eq!(
            document["result"]["tools"][1]["annotations"]["destructiveHint"],
            true
        );
        assert_eq!(
            document["result"]["tools"][1]["annotations"]["idempotentHint"],
            true
        );
        assert_eq!(applied.origins.len(), 2);
        assert_eq!(
            applied.issues,
            vec![
                OverlayIssue::Conflict {
                    tool: "delete".into(),
                    field: "/annotations/destructiveHint".into(),
                    overlay_pointer: "/tools/delete/annotations/destructiveHint".into(),
                    document_pointer: "/result/tools/1/annotations/destructiveHint".into(),
                },
                OverlayIssue::UnknownTool {
                    tool: "missing".into(),
                    overlay_pointer: "/tools/missing".into()
                },
            ]
        );
        assert_eq!(
            applied
                .overlay_pointer_of("/result/tools/1/annotations/idempotentHint")
                .as_deref(),
            Some("/tools/delete/annotations/idempotentHint")
        );
        assert_eq!(
            applied.overlay_pointer_of("/result/tools/1/annotations/idempotentHintX"),
            None
        );
        assert_eq!(
            applied.overlay_pointer_of("/result/tools/1/annotations"),
            None
        );
    }

    #[test]
    fn equal_carriers_in_other_spellings_do_not_conflict() {
        let mut document = json!([{"name": "t", "inputSchema": {"type": "object"},
            "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
                "compensation": {"toolName": "u", "parameterMapping": {"id": "$.output.structuredContent.id"}}}}}]);
        let overlay = Overlay::parse(
            r#"{"tools": {"t": {"_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
                "compensation": {"toolName": "u", "parameterMapping": {"id": "$['output'].structuredContent.id"},
                "maxRetries": 2}}}}}}"#,
            OverlayFormat::Json,
        )
        .unwrap();
        let applied = overlay.apply(&mut document);
        assert!(applied.issues.is_empty(), "{:?}", applied.issues);
        assert!(applied.origins.is_empty());
    }

    #[test]
    fn structural_errors_name_the_pointer() {
        let cases = [
            (r#"[]"#, ""),
            (r#"{"tool": {}}"#, "/tool"),
            (r#"{"server": 1, "tools": {}}"#, "/server"),
            (r#"{"server": "x"}"#, "/tools"),
            (r#"{"tools": {"a/b": 3}}"#, "/tools/a~1b"),
            (
                r#"{"tools": {"a": {"inputSchema": {}}}}"#,
                "/tools/a/inputSchema",
            ),
            (
                r#"{"tools": {"a": {"annotations": []}}}"#,
                "/tools/a/annotations",
            ),
            (
                r#"{"tools": {"a": {"annotations": {"readonlyHint": true}}}}"#,
                "/tools/a/annotations/readonlyHint",
            ),
            (
                r#"{"tools": {"a": {"_meta": {"x": 1}}}}"#,
                "/tools/a/_meta/x",
            ),
        ];
        for (text, pointer) in cases {
            let error = Overlay::parse(text, OverlayFormat::Json).unwrap_err();
            assert_eq!(error.pointer, pointer, "{text}: {error}");
        }
        let error = Overlay::parse("tools = [", OverlayFormat::Toml).unwrap_err();
        assert!(error.span.is_some(), "{error}");
        let error = Overlay::parse("{", OverlayFormat::Json).unwrap_err();
        assert!(error.message.contains("line 1"), "{error}");
    }

    #[test]
    fn format_from_name() {
        assert_eq!(
            OverlayFormat::from_file_name("a/MEM.TOML"),
            OverlayFormat::Toml
        );
        assert_eq!(OverlayFormat::from_file_name("a.json"), OverlayFormat::Json);
        assert_eq!(OverlayFormat::from_file_name("-"), OverlayFormat::Json);
    }

    #[test]
    fn other_shapes_report_every_tool_unknown() {
        let overlay = Overlay::parse(r#"{"tools": {"a": {}}}"#, OverlayFormat::Json).unwrap();
        let mut document = json!({"prompts": []});
        let applied = overlay.apply(&mut document);
        assert_eq!(applied.issues.len(), 1);
    }
}
