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

use std::collections::HashMap;
use std::ops::Range;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::before::{BEFORE_SECTION, BeforeImage};
use crate::overlay_file::{OVERLAY_ANNOTATIONS, OverlayFormat, RESULT_SECTION};
use crate::pointer::escape_token;
use crate::reader::ResultReader;
use crate::recovery::{Compensate, Recovery};
use crate::tool::{COMPENSATE_META_KEY, OVERLAY_META_KEY};

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
    crate::json_type::json_type_name(value)
}

impl Overlay {
    /// Parses and checks the overlay's structure. The carriers' contents are not checked here:
    /// the validator checks them once merged, as it checks a server's own declarations.
    pub fn parse(text: &str, format: OverlayFormat) -> Result<Self, OverlayError> {
        let (document, spans) = match format {
            OverlayFormat::Json => {
                let (value, repeated) =
                    crate::json::from_str_noting_repeats(text).map_err(|e| {
                        invalid(
                            "",
                            format!(
                                "not valid JSON (line {}, column {}): {e}",
                                e.line(),
                                e.column()
                            ),
                        )
                    })?;
                // A reader sees the first of two members of one name, a JSON parser takes the
                // last: which the overlay means is not known.
                if repeated {
                    return Err(invalid(
                        "",
                        "some object writes a member name twice: which of the values is meant is \
                         not known"
                            .to_owned(),
                    ));
                }
                (value, None)
            }
            OverlayFormat::Toml => {
                let invalid_toml = |e: toml::de::Error| OverlayError {
                    message: format!("not valid TOML: {}", e.message().trim_end()),
                    pointer: String::new(),
                    span: e.span(),
                };
                let spans = toml_spans(text);
                let typed: toml::Value = toml::from_str(text).map_err(invalid_toml)?;
                if let Some((pointer, what)) = no_json_value(&typed, "") {
                    return Err(OverlayError {
                        message: format!(
                            "{what} has no JSON value, and an overlay's values are JSON values"
                        ),
                        span: nearest_span(&spans, &pointer),
                        pointer,
                    });
                }
                let value: Value = toml::from_str(text).map_err(invalid_toml)?;
                (value, Some(spans))
            }
        };
        let mut overlay = Self::from_value(&document, format).map_err(|mut error| {
            if let Some(spans) = &spans {
                error.span = nearest_span(spans, &error.pointer);
            }
            error
        })?;
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

/// The place of `pointer` in the text, or of its nearest ancestor that is there (a member that
/// is missing is reported at the object that lacks it): its key when it has one.
/// The first TOML value under `value` that JSON cannot hold (a date or time, an infinite float
/// or `nan`), by its pointer (`at` is `value`'s).
fn no_json_value(value: &toml::Value, at: &str) -> Option<(String, String)> {
    match value {
        toml::Value::Float(f) if !f.is_finite() => Some((at.to_owned(), format!("the float {f}"))),
        toml::Value::Datetime(d) => Some((at.to_owned(), format!("the date-time {d}"))),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| no_json_value(item, &format!("{at}/{i}"))),
        toml::Value::Table(table) => table
            .iter()
            .find_map(|(k, item)| no_json_value(item, &format!("{at}/{}", escape_token(k)))),
        _ => None,
    }
}

fn nearest_span(spans: &HashMap<String, OverlaySpan>, pointer: &str) -> Option<Range<usize>> {
    let mut at = pointer;
    loop {
        if let Some(span) = spans.get(at) {
            return Some(span.key.clone().unwrap_or_else(|| span.value.clone()));
        }
        at = &at[..at.rfind('/')?];
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
mod tests;
