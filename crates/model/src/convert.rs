//! Moving recovery metadata from one carrier to the other.
//!
//! The conversion works on the raw JSON, so every field it does not touch — unknown fields, other
//! annotations, other `_meta` entries, member order — comes out as it went in.
//!
//! # Rules
//!
//! * **Move.** When the source declaration is fully expressible in the target carrier, the target
//!   is written and the source carrier removed (an `annotations` or `_meta` object left empty by
//!   the removal is removed too). The document then says the same thing once.
//! * **Nothing is dropped silently.** When the core of a declaration (strategy, reversibility,
//!   a binding) cannot be expressed, nothing is written and the source stays as it is; a note
//!   of kind [`NoteKind::NotConverted`] names the tool and the JSON Pointer of the culprit.
//!   Writing the expressible part would create a partial compensation.
//! * **Extras stay with their carrier.** When the core converts but some fields have no
//!   counterpart (`timeoutMs`, `maxRetries`, `sideEffectScope`, `notes`, unknown fields), the
//!   target is written *and* the source is kept beside it (both carriers then agree), with a
//!   [`NoteKind::KeptInSource`] note per such field.
//! * **An existing target is never overwritten.** If it agrees with the source, the source is
//!   removed (when nothing would be lost); if it disagrees, nothing changes and a note says so.
//!
//! Bindings are written in canonical form: `$.input.a.b` (brackets only for names that need them)
//! and `$request.body#/a/b`; the whole structured result is `$.output.structuredContent` and
//! `$response.body`.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::binding::Binding;
use crate::document::{LocateError, locate_tools, locate_tools_mut};
use crate::expression::{BodySide, RuntimeExpression, Source};
use crate::jsonpath::JsonPath;
use crate::pointer::escape_token;
use crate::recovery::{
    COMPENSATION_STRATEGY, Carrier, Compensate, DeclaredRecovery, Recovery, Reversibility,
};
use crate::tool::COMPENSATE_META_KEY;

/// One converted tool and what could not be carried over.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    /// The tool after conversion.
    pub tool: Value,
    /// What was not converted or not carried over, in document order.
    pub notes: Vec<ConversionNote>,
}

/// One converted `tools/list` document.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentConversion {
    /// The document after conversion, in its original shape.
    pub document: Value,
    /// Notes of every tool; pointers are into the document.
    pub notes: Vec<ConversionNote>,
}

/// What happened to a piece of metadata that has no counterpart in the target carrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoteKind {
    /// The declaration was not converted; the tool is unchanged.
    NotConverted,
    /// The declaration was converted, but this field has no counterpart, so the source carrier is
    /// kept beside the new one.
    KeptInSource,
}

/// Something the conversion could not express.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConversionNote {
    /// The tool's `name`, when it has one.
    pub tool: Option<String>,
    /// RFC 6901 pointer to the field, into the converted input.
    pub pointer: String,
    /// Whether the tool was converted at all.
    pub kind: NoteKind,
    /// What has no counterpart, and why.
    pub message: String,
}

impl std::fmt::Display for ConversionNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tool = self.tool.as_deref().unwrap_or("<unnamed tool>");
        write!(f, "{tool}: {}: {}", self.pointer, self.message)
    }
}

/// The carrier's command-line name was not `sep3172` or `compensate`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown carrier '{0}' (expected 'sep3172' or 'compensate')")]
pub struct UnknownCarrier(pub String);

impl Carrier {
    /// The command-line name: `sep3172` or `compensate`.
    pub fn cli_name(self) -> &'static str {
        match self {
            Self::Sep3172 => "sep3172",
            Self::Compensate => "compensate",
        }
    }
}

impl std::str::FromStr for Carrier {
    type Err = UnknownCarrier;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "sep3172" => Ok(Self::Sep3172),
            "compensate" => Ok(Self::Compensate),
            other => Err(UnknownCarrier(other.to_owned())),
        }
    }
}

/// Converts every tool of a `tools/list` document (JSON-RPC response, `{"tools": [...]}` or a
/// bare array), keeping the document's shape and everything else in it.
pub fn convert_document(document: &Value, to: Carrier) -> Result<DocumentConversion, LocateError> {
    let base = locate_tools(document)?.pointer();
    let mut converted = document.clone();
    let tools = locate_tools_mut(&mut converted)?;
    let mut notes = Vec::new();
    for (index, tool) in tools.iter_mut().enumerate() {
        let conversion = convert_tool(tool, to);
        *tool = conversion.tool;
        notes.extend(conversion.notes.into_iter().map(|mut note| {
            note.pointer = format!("{base}/{index}{}", note.pointer);
            note
        }));
    }
    Ok(DocumentConversion {
        document: converted,
        notes,
    })
}

/// Converts one tool's recovery metadata to the `to` carrier (see the module docs for the rules).
pub fn convert_tool(tool: &Value, to: Carrier) -> Conversion {
    let mut converter = Converter {
        name: tool.get("name").and_then(Value::as_str).map(str::to_owned),
        notes: Vec::new(),
    };
    let converted = match tool {
        Value::Object(object) => {
            let mut object = object.clone();
            if converter.convert(&mut object, to) {
                Value::Object(object)
            } else {
                tool.clone()
            }
        }
        other => other.clone(),
    };
    Conversion {
        tool: converted,
        notes: converter.notes,
    }
}

/// The target declaration, built from a source that converts.
struct Translated {
    /// The value to store in the target carrier.
    value: Value,
    /// The source in normalized form, to compare with an existing target.
    declared: DeclaredRecovery,
    /// True when the target says everything the source said.
    lossless: bool,
}

struct Converter {
    name: Option<String>,
    notes: Vec<ConversionNote>,
}

impl Carrier {
    /// The other carrier: where a conversion to `self` reads from.
    fn other(self) -> Self {
        match self {
            Self::Sep3172 => Self::Compensate,
            Self::Compensate => Self::Sep3172,
        }
    }

    /// The tool member holding the carrier, and the carrier's key inside that member.
    fn location(self) -> (&'static str, &'static str) {
        match self {
            Self::Sep3172 => ("annotations", "recovery"),
            Self::Compensate => ("_meta", COMPENSATE_META_KEY),
        }
    }

    /// How notes name the carrier's place in a tool.
    fn label(self) -> String {
        match self {
            Self::Sep3172 => "annotations.recovery".to_owned(),
            Self::Compensate => format!("_meta[\"{COMPENSATE_META_KEY}\"]"),
        }
    }

    /// How notes name the carrier's format.
    fn format_name(self) -> &'static str {
        match self {
            Self::Sep3172 => "SEP-3172",
            Self::Compensate => "mcp-compensate",
        }
    }

    /// The raw declaration this carrier holds in `tool`, if any.
    fn read(self, tool: &Map<String, Value>) -> Option<&Value> {
        let (member, key) = self.location();
        tool.get(member).and_then(|m| m.get(key))
    }

    /// A declaration already in this carrier, normalized; `None` when it does not parse.
    fn declared(self, raw: &Value) -> Option<DeclaredRecovery> {
        match self {
            Self::Sep3172 => serde_json::from_value::<Recovery>(raw.clone())
                .ok()
                .and_then(|r| r.normalize()),
            Self::Compensate => serde_json::from_value::<Compensate>(raw.clone())
                .ok()
                .map(|c| c.normalize()),
        }
    }
}

impl Converter {
    fn note(&mut self, pointer: String, kind: NoteKind, message: impl Into<String>) {
        self.notes.push(ConversionNote {
            tool: self.name.clone(),
            pointer,
            kind,
            message: message.into(),
        });
    }

    /// Moves the declaration from the other carrier to `to`. Returns false when the tool stays as
    /// it was.
    fn convert(&mut self, tool: &mut Map<String, Value>, to: Carrier) -> bool {
        let from = to.other();
        let Some(raw) = from.read(tool) else {
            return false;
        };
        let translated = match to {
            Carrier::Compensate => self.translate_sep(raw),
            Carrier::Sep3172 => self.translate_compensate(raw),
        };
        let Some(translated) = translated else {
            return false;
        };
        let (member, key) = to.location();
        if let Some(existing) = to.read(tool) {
            let agree = to
                .declared(existing)
                .is_some_and(|d| d.agrees_with(&translated.declared));
            if !agree {
                self.note(
                    from.pointer().to_owned(),
                    NoteKind::NotConverted,
                    format!(
                        "{} already says something else (carrier conflict, R116); nothing converted",
                        to.label()
                    ),
                );
                return false;
            }
        } else {
            let container = tool
                .entry(member)
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(container) = container else {
                self.note(
                    format!("/{member}"),
                    NoteKind::NotConverted,
                    format!("{member} is not an object; nothing converted"),
                );
                return false;
            };
            container.insert(key.to_owned(), translated.value);
        }
        if translated.lossless {
            let (member, key) = from.location();
            remove_member(tool, member, key);
        }
        true
    }

    /// Parses the raw declaration of `from`, noting why when it is malformed.
    fn parse<T: serde::de::DeserializeOwned>(
        &mut self,
        raw: &Value,
        from: Carrier,
        what: &str,
    ) -> Option<T> {
        match serde_json::from_value(raw.clone()) {
            Ok(parsed) => Some(parsed),
            Err(e) => {
                self.note(
                    from.pointer().to_owned(),
                    NoteKind::NotConverted,
                    format!("malformed {what} object: {e}"),
                );
                None
            }
        }
    }

    /// Converts each binding of `from` with `convert`, noting every one that does not convert;
    /// `None` when any did not, since a partial compensation must not be written.
    fn convert_bindings(
        &mut self,
        from: Carrier,
        bindings: &Map<String, Value>,
        convert: impl Fn(&Value) -> Result<Value, String>,
    ) -> Option<Map<String, Value>> {
        let base = format!("{}{}", from.pointer(), from.bindings_pointer());
        let mut converted = Map::new();
        let mut complete = true;
        for (parameter, raw) in bindings {
            match convert(raw) {
                Ok(value) => {
                    converted.insert(parameter.clone(), value);
                }
                Err(why) => {
                    complete = false;
                    self.note(
                        format!("{base}/{}", escape_token(parameter)),
                        NoteKind::NotConverted,
                        why,
                    );
                }
            }
        }
        complete.then_some(converted)
    }

    /// Notes every `(parent pointer, key)` field of `from` that has no counterpart in the other
    /// carrier; returns true when there is none, i.e. the conversion is lossless.
    fn note_kept_fields(&mut self, from: Carrier, fields: &[(&str, &str)]) -> bool {
        let to = from.other();
        for (parent, key) in fields {
            self.note(
                format!("{parent}/{}", escape_token(key)),
                NoteKind::KeptInSource,
                format!(
                    "'{key}' has no {} counterpart; {} is kept",
                    to.format_name(),
                    from.label()
                ),
            );
        }
        fields.is_empty()
    }

    fn translate_sep(&mut self, raw: &Value) -> Option<Translated> {
        let from = Carrier::Sep3172;
        let base = from.pointer();
        let recovery: Recovery = self.parse(raw, from, "recovery")?;
        if recovery.strategy != COMPENSATION_STRATEGY {
            self.note(
                format!("{base}/strategy"),
                NoteKind::NotConverted,
                format!(
                    "strategy '{}' has no mcp-compensate counterpart (only 'compensation' has)",
                    recovery.strategy
                ),
            );
            return None;
        }
        let declared = recovery.normalize()?;
        let operation = recovery.compensating_operation.as_ref()?;
        let mapping = self.convert_bindings(from, &operation.parameters, |raw| {
            sep_binding_as_path(raw).map(Value::String)
        })?;
        let operation_base = format!("{base}/compensatingOperation");
        let mut fields: Vec<(&str, &str)> = Vec::new();
        fields.extend(recovery.extra.keys().map(|k| (base, k.as_str())));
        fields.extend(
            operation
                .extra
                .keys()
                .map(|k| (operation_base.as_str(), k.as_str())),
        );
        let lossless = self.note_kept_fields(from, &fields);
        let mut compensation = Map::new();
        compensation.insert(
            "toolName".to_owned(),
            Value::String(operation.operation_id.clone()),
        );
        compensation.insert("parameterMapping".to_owned(), Value::Object(mapping));
        let mut value = Map::new();
        value.insert(
            "reversibility".to_owned(),
            Value::String("compensable".to_owned()),
        );
        value.insert("compensation".to_owned(), Value::Object(compensation));
        Some(Translated {
            value: Value::Object(value),
            declared,
            lossless,
        })
    }

    fn translate_compensate(&mut self, raw: &Value) -> Option<Translated> {
        let from = Carrier::Compensate;
        let base = from.pointer();
        let compensate: Compensate = self.parse(raw, from, "compensate")?;
        let call = match (compensate.reversibility, &compensate.compensation) {
            (Reversibility::Compensable, Some(call)) => call,
            (reversibility, _) => {
                let why = match reversibility {
                    Reversibility::Readonly => {
                        "reversibility 'readonly' has no SEP-3172 counterpart (readOnlyHint: true is the closest MCP annotation)"
                    }
                    Reversibility::Irreversible => {
                        "reversibility 'irreversible' has no SEP-3172 counterpart (SEP-3172 can only declare a compensation)"
                    }
                    Reversibility::Compensable => {
                        "'compensable' without a compensation declares no call to convert"
                    }
                };
                self.note(format!("{base}/reversibility"), NoteKind::NotConverted, why);
                return None;
            }
        };
        let parameters = self.convert_bindings(from, &call.parameter_mapping, |raw| {
            let binding =
                Binding::parse_compensate(raw).map_err(|e| format!("malformed binding: {e}"))?;
            if let Binding::Expression(expression) = &binding {
                array_like(expression, raw)?;
            }
            Ok(canonical_sep(&binding))
        })?;
        let call_base = format!("{base}/compensation");
        let mut fields: Vec<(&str, &str)> = Vec::new();
        if call.timeout_ms.is_some() {
            fields.push((&call_base, "timeoutMs"));
        }
        if call.max_retries.is_some() {
            fields.push((&call_base, "maxRetries"));
        }
        fields.extend(call.extra.keys().map(|k| (call_base.as_str(), k.as_str())));
        if compensate.side_effect_scope.is_some() {
            fields.push((base, "sideEffectScope"));
        }
        if compensate.notes.is_some() {
            fields.push((base, "notes"));
        }
        fields.extend(compensate.extra.keys().map(|k| (base, k.as_str())));
        let lossless = self.note_kept_fields(from, &fields);
        let declared = compensate.normalize();
        let mut operation = Map::new();
        operation.insert(
            "operationId".to_owned(),
            Value::String(call.tool_name.clone()),
        );
        operation.insert("parameters".to_owned(), Value::Object(parameters));
        let mut value = Map::new();
        value.insert(
            "strategy".to_owned(),
            Value::String(COMPENSATION_STRATEGY.to_owned()),
        );
        value.insert("compensatingOperation".to_owned(), Value::Object(operation));
        Some(Translated {
            value: Value::Object(value),
            declared,
            lossless,
        })
    }
}

/// The JSONPath for a SEP-3172 binding, or why there is none.
fn sep_binding_as_path(raw: &Value) -> Result<String, String> {
    let expression = match Binding::parse_sep(raw) {
        Err(e) => return Err(format!("malformed binding: {e}")),
        Ok(Binding::Constant(_)) => {
            return Err(format!(
                "the constant {raw} cannot be written as an mcp-compensate JSONPath"
            ));
        }
        Ok(Binding::Template(_)) => {
            return Err(format!(
                "the template {raw} cannot be written as an mcp-compensate JSONPath"
            ));
        }
        Ok(Binding::Map(_) | Binding::Before(_)) => {
            return Err(format!(
                "the overlay binding {raw} cannot be written as an mcp-compensate JSONPath"
            ));
        }
        Ok(Binding::Expression(expression)) => expression,
    };
    array_like(&expression, raw)?;
    if let Some(path) = JsonPath::from_expression(&expression) {
        return Ok(path.to_string());
    }
    Err(match &expression {
        RuntimeExpression::Request(Source::Body(_)) => format!(
            "`{expression}` (the whole arguments object) cannot be written as an mcp-compensate JSONPath, which needs a name after $.input"
        ),
        _ => format!("`{expression}` has no mcp-compensate counterpart (nor any meaning in MCP)"),
    })
}

/// A body expression with a token that can index an array has no counterpart in the other
/// carrier: a JSON Pointer token `0` selects an array's first item, an mcp-compensate name `'0'`
/// selects only an object member named `0`.
fn array_like(expression: &RuntimeExpression, raw: &Value) -> Result<(), String> {
    match expression.body_target() {
        Some((_, pointer)) => match pointer.array_like_token() {
            Some(token) => Err(format!(
                "{raw}: the token '{token}' would index an array as a JSON Pointer, while an mcp-compensate name selects only object members; the two carriers cannot say the same thing"
            )),
            None => Ok(()),
        },
        None => Ok(()),
    }
}

/// The SEP-3172 spelling of a binding; the whole structured result is `$response.body`.
fn canonical_sep(binding: &Binding) -> Value {
    if let Binding::Expression(expression) = binding
        && let Some((BodySide::Response, pointer)) = expression.body_target()
        && pointer.is_root()
    {
        return Value::String("$response.body".to_owned());
    }
    binding.to_value()
}

/// Removes `tool[container][key]`, and the container when that leaves it empty.
fn remove_member(tool: &mut Map<String, Value>, container: &str, key: &str) {
    let emptied = match tool.get_mut(container) {
        Some(Value::Object(inner)) => {
            inner.shift_remove(key);
            inner.is_empty()
        }
        _ => false,
    };
    if emptied {
        tool.shift_remove(container);
    }
}

#[cfg(test)]
mod tests;
