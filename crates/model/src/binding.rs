//! Parameter bindings of a compensating call.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value};

use crate::expression::{ExpressionError, RuntimeExpression, expression_pattern};
use crate::json_type::json_type_name;
use crate::jsonpath::{JsonPath, JsonPathError};
use crate::pointer::JsonPointer;

/// How one parameter of a compensating call gets its value.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    /// A string starting with `$`: the value the expression selects, of any JSON type.
    Expression(RuntimeExpression),
    /// A string with embedded `{$…}` expressions: the result is always a string.
    Template(Template),
    /// Any other JSON value, passed as is.
    Constant(Value),
    /// Overlays only: an array built from every element of an array the original call holds
    /// (`{"$map": "$response.body#/entities", "$each": "$item#/name"}`).
    Map(MapBinding),
    /// Overlays only: the before-image, what a read run before the original call returned
    /// (`$before.text`, `$before.body#/pointer`).
    Before(BeforeRef),
}

/// What a `$before` binding selects in the result of the read run before the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeforeRef {
    /// `$before.text`: the text of the read result's only `text` content item.
    Text,
    /// `$before.blob`: the base64 `blob` of the read result's only embedded `resource` item (a
    /// whole file or workbook, as a server exports it).
    Blob,
    /// `$before.body#/pointer`: a value in the read result's `structuredContent`.
    Body(JsonPointer),
}

impl BeforeRef {
    /// Parses `$before.text`, `$before.blob`, `$before.body` or `$before.body#/pointer`.
    pub fn parse(text: &str) -> Result<Self, BindingError> {
        let invalid = BindingError::Before;
        match text.strip_prefix("$before.") {
            Some("text") => Ok(Self::Text),
            Some("blob") => Ok(Self::Blob),
            Some("body") => Ok(Self::Body(JsonPointer::root())),
            Some(rest) if rest.starts_with("body#") => JsonPointer::parse(&rest[5..])
                .map(Self::Body)
                .map_err(|e| invalid(format!("{text:?}: invalid JSON Pointer: {e}"))),
            _ => Err(invalid(format!(
                "{text:?} is not a before-image reference (\"$before.text\", \"$before.blob\" or \"$before.body#/pointer\")"
            ))),
        }
    }
}

impl fmt::Display for BeforeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text => f.write_str("$before.text"),
            Self::Blob => f.write_str("$before.blob"),
            Self::Body(pointer) => write!(f, "$before.body#{pointer}"),
        }
    }
}

/// The member of a map binding naming the array it reads.
pub const MAP_KEY: &str = "$map";
/// The member of a map binding saying what each element becomes.
pub const EACH_KEY: &str = "$each";

/// An overlay binding whose value is an array with one entry per element of the array `source`
/// selects, each entry built by `each` from its element.
#[derive(Debug, Clone, PartialEq)]
pub struct MapBinding {
    /// The array read.
    pub source: MapSource,
    /// What each element becomes.
    pub each: Each,
}

/// Where a map binding's array is.
#[derive(Debug, Clone, PartialEq)]
pub enum MapSource {
    /// A runtime expression of the original call: its arguments or its result.
    Call(RuntimeExpression),
    /// `$before.body` or `$before.body#/pointer`: the value the read run before the call
    /// returned (before-image undos only).
    Before(JsonPointer),
}

impl MapSource {
    /// The runtime expression read, unless the array is in the before-image.
    pub fn expression(&self) -> Option<&RuntimeExpression> {
        match self {
            Self::Call(expression) => Some(expression),
            Self::Before(_) => None,
        }
    }
}

impl fmt::Display for MapSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Call(expression) => expression.fmt(f),
            Self::Before(pointer) => BeforeRef::Body(pointer.clone()).fmt(f),
        }
    }
}

/// What one element of a map binding's array becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum Each {
    /// `$item` or `$item#/pointer`: the element, or the value the pointer selects in it.
    Item(JsonPointer),
    /// An object whose members are built from the element, member by member.
    Object(Vec<(String, Each)>),
    /// Any other value (not a string starting with `$`, not an object), the same for every
    /// element.
    Constant(Value),
}

/// The prefix of an element reference inside `$each`.
const ITEM: &str = "$item";

/// A string with embedded runtime expressions, such as `order-{$request.body#/id}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// Literal text and expressions, in order.
    pub parts: Vec<TemplatePart>,
}

/// One piece of a [`Template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplatePart {
    /// Text copied as is.
    Literal(String),
    /// An expression whose value is inserted.
    Expression(RuntimeExpression),
}

/// A binding that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BindingError {
    /// A runtime expression (alone or embedded in a template) is malformed.
    #[error("invalid runtime expression: {0}")]
    Expression(#[from] ExpressionError),
    /// A template opens `{$` without a closing `}`.
    #[error("template expression opened at byte {offset} is never closed with '}}'")]
    UnclosedTemplate {
        /// Byte offset of the `{`.
        offset: usize,
    },
    /// A compensate-carrier path is outside the JSONPath subset.
    #[error("invalid JSONPath: {0}")]
    JsonPath(#[from] JsonPathError),
    /// A compensate-carrier mapping value is not a string.
    #[error("a parameterMapping value must be a JSONPath string, found {found}")]
    NotAPath {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// A `$before` reference (overlays only) is malformed.
    #[error("{0}")]
    Before(String),
    /// A binding of a carrier's compensation reads the before-image, which only the undo of an
    /// overlay's `before` has.
    #[error(
        "it reads the before-image, which only the undo of an overlay's `before` (its `found` or `missing`) has"
    )]
    BeforeOutsideUndo,
    /// A map binding (overlays only) is malformed at `at`, a JSON Pointer inside the binding.
    #[error("{}{message}", if at.is_empty() { String::new() } else { format!("at {at} of the map binding: ") })]
    Map {
        /// Where inside the binding (`/$each/entityName`); empty for the binding itself.
        at: String,
        /// What is wrong.
        message: String,
    },
}

impl BindingError {
    /// Byte offset of the fault inside the binding string, when there is one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Self::Expression(e) => Some(e.offset),
            Self::UnclosedTemplate { offset } => Some(*offset),
            Self::JsonPath(e) => Some(e.offset),
            Self::NotAPath { .. }
            | Self::Map { .. }
            | Self::Before(_)
            | Self::BeforeOutsideUndo => None,
        }
    }
}

impl Binding {
    /// Classifies and parses a SEP-3172 parameter value.
    pub fn parse_sep(value: &Value) -> Result<Self, BindingError> {
        let Value::String(text) = value else {
            return Ok(Self::Constant(value.clone()));
        };
        if text.starts_with('$') {
            return Ok(Self::Expression(RuntimeExpression::parse(text)?));
        }
        if !text.contains("{$") {
            return Ok(Self::Constant(value.clone()));
        }
        Ok(Self::Template(Template::parse(text)?))
    }

    /// Classifies and parses a parameter value of a SEP-3172 declaration made by an overlay:
    /// the forms of [`Binding::parse_sep`], and a map binding, an object whose members are
    /// exactly `$map` and `$each` (in a server's own declaration such an object is a constant).
    /// A reference to the before-image is an error: only a before-image's undo has one.
    pub fn parse_overlay(value: &Value) -> Result<Self, BindingError> {
        let binding = Self::parse_undo(value)?;
        if binding.reads_before() {
            return Err(BindingError::BeforeOutsideUndo);
        }
        Ok(binding)
    }

    /// Classifies and parses a parameter value of a before-image's undo: the forms of
    /// [`Binding::parse_overlay`] and the references to the before-image (`$before.text`,
    /// `$before.blob`, `$before.body#/pointer`, and a map binding over `$before.body`).
    pub fn parse_undo(value: &Value) -> Result<Self, BindingError> {
        match value {
            Value::Object(map) if map.contains_key(MAP_KEY) => {
                Ok(Self::Map(MapBinding::parse(map)?))
            }
            Value::String(text) if text.starts_with("$before") => {
                Ok(Self::Before(BeforeRef::parse(text)?))
            }
            _ => Self::parse_sep(value),
        }
    }

    /// Whether the binding reads the before-image.
    pub fn reads_before(&self) -> bool {
        matches!(
            self,
            Self::Before(_)
                | Self::Map(MapBinding {
                    source: MapSource::Before(_),
                    ..
                })
        )
    }

    /// Parses a compensate-carrier `parameterMapping` value (a JSONPath of the subset).
    pub fn parse_compensate(value: &Value) -> Result<Self, BindingError> {
        match value {
            Value::String(text) => Ok(Self::Expression(JsonPath::parse(text)?.to_expression())),
            other => Err(BindingError::NotAPath {
                found: json_type_name(other),
            }),
        }
    }

    /// The expressions this binding reads.
    pub fn expressions(&self) -> Vec<&RuntimeExpression> {
        match self {
            Self::Expression(e) => vec![e],
            Self::Template(t) => t
                .parts
                .iter()
                .filter_map(|p| match p {
                    TemplatePart::Expression(e) => Some(e),
                    TemplatePart::Literal(_) => None,
                })
                .collect(),
            Self::Constant(_) | Self::Before(_) => Vec::new(),
            Self::Map(map) => map.source.expression().into_iter().collect(),
        }
    }

    /// The same binding with every whole-body expression written with a pointer
    /// (`$response.body` becomes `$response.body#`), so that bindings meaning the same compare equal.
    pub(crate) fn canonical(&self) -> Self {
        let canonical = |e: &RuntimeExpression| match e.body_target() {
            Some((side, pointer)) => RuntimeExpression::body(side, pointer),
            None => e.clone(),
        };
        match self {
            Self::Expression(e) => Self::Expression(canonical(e)),
            Self::Template(t) => Self::Template(Template {
                parts: t
                    .parts
                    .iter()
                    .map(|part| match part {
                        TemplatePart::Expression(e) => TemplatePart::Expression(canonical(e)),
                        TemplatePart::Literal(text) => TemplatePart::Literal(text.clone()),
                    })
                    .collect(),
            }),
            Self::Constant(v) => Self::Constant(v.clone()),
            Self::Map(map) => Self::Map(MapBinding {
                source: match &map.source {
                    MapSource::Call(e) => MapSource::Call(canonical(e)),
                    before @ MapSource::Before(_) => before.clone(),
                },
                each: map.each.clone(),
            }),
            Self::Before(before) => Self::Before(before.clone()),
        }
    }

    /// The SEP-3172 JSON form of this binding.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Expression(e) => Value::String(e.to_string()),
            Self::Template(t) => Value::String(t.to_string()),
            Self::Constant(v) => v.clone(),
            Self::Map(map) => map.to_value(),
            Self::Before(before) => Value::String(before.to_string()),
        }
    }
}

fn map_error(at: &str, message: impl Into<String>) -> BindingError {
    BindingError::Map {
        at: at.to_owned(),
        message: message.into(),
    }
}

impl MapBinding {
    /// Parses the object form `{"$map": EXPRESSION, "$each": ELEMENT}`.
    pub fn parse(map: &Map<String, Value>) -> Result<Self, BindingError> {
        if let Some(other) = map.keys().find(|k| *k != MAP_KEY && *k != EACH_KEY) {
            return Err(map_error(
                &format!("/{}", crate::pointer::escape_token(other)),
                format!("unknown member '{other}' (a map binding has \"$map\" and \"$each\")"),
            ));
        }
        let source = match map.get(MAP_KEY) {
            Some(Value::String(text)) if text.starts_with("$before") => {
                match BeforeRef::parse(text).map_err(|e| map_error("/$map", e.to_string()))? {
                    BeforeRef::Body(pointer) => MapSource::Before(pointer),
                    other => {
                        return Err(map_error(
                            "/$map",
                            format!(
                                "`{other}` is a string, never an array: a map binding reads the before-image as `$before.body#/pointer`"
                            ),
                        ));
                    }
                }
            }
            Some(Value::String(text)) if text.starts_with('$') => MapSource::Call(
                RuntimeExpression::parse(text)
                    .map_err(|e| map_error("/$map", format!("invalid runtime expression: {e}")))?,
            ),
            Some(other) => {
                return Err(map_error(
                    "/$map",
                    format!(
                        "\"$map\" is a runtime expression selecting an array, not {}",
                        describe(other)
                    ),
                ));
            }
            None => return Err(map_error("", "a map binding needs \"$map\"")),
        };
        let Some(each) = map.get(EACH_KEY) else {
            return Err(map_error(
                "",
                "a map binding needs \"$each\" (\"$item\" keeps each element as it is)",
            ));
        };
        Ok(Self {
            source,
            each: Each::parse(each, "/$each", 0)?,
        })
    }

    /// The JSON form.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert(MAP_KEY.to_owned(), Value::String(self.source.to_string()));
        map.insert(EACH_KEY.to_owned(), self.each.to_value());
        Value::Object(map)
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::String(text) => format!("the string {text:?}"),
        other => json_type_name(other).to_owned(),
    }
}

/// How an element reference is written: `$item`, or `$item#` and its pointer.
pub fn item_reference(pointer: &JsonPointer) -> String {
    if pointer.is_root() {
        ITEM.to_owned()
    } else {
        format!("{ITEM}#{pointer}")
    }
}

/// Nesting of `$each` objects past which a map binding is refused.
const MAX_EACH_DEPTH: usize = 32;

impl Each {
    fn parse(value: &Value, at: &str, depth: usize) -> Result<Self, BindingError> {
        if depth > MAX_EACH_DEPTH {
            return Err(map_error(
                at,
                format!("objects nest more than {MAX_EACH_DEPTH} levels deep"),
            ));
        }
        match value {
            Value::String(text) if text.starts_with('$') => {
                let rest = text.strip_prefix(ITEM).ok_or_else(|| {
                    map_error(
                        at,
                        format!(
                            "{text:?} is not an element reference (\"$item\" or \"$item#/pointer\")"
                        ),
                    )
                })?;
                let pointer = match rest {
                    "" => JsonPointer::root(),
                    _ => match rest.strip_prefix('#') {
                        Some(pointer) => JsonPointer::parse(pointer).map_err(|e| {
                            map_error(at, format!("{text:?}: invalid JSON Pointer: {e}"))
                        })?,
                        None => {
                            return Err(map_error(
                                at,
                                format!(
                                    "{text:?}: \"$item\" is followed by nothing or by '#' and a JSON Pointer"
                                ),
                            ));
                        }
                    },
                };
                Ok(Self::Item(pointer))
            }
            Value::String(text) if text.contains("{$") => Err(map_error(
                at,
                format!("{text:?}: templates are not read inside \"$each\""),
            )),
            Value::Object(members) => members
                .iter()
                .map(|(name, member)| {
                    let inner = format!("{at}/{}", crate::pointer::escape_token(name));
                    Ok((name.clone(), Self::parse(member, &inner, depth + 1)?))
                })
                .collect::<Result<_, _>>()
                .map(Self::Object),
            other => Ok(Self::Constant(other.clone())),
        }
    }

    /// The JSON form.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Item(pointer) => Value::String(item_reference(pointer)),
            Self::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(name, each)| (name.clone(), each.to_value()))
                    .collect(),
            ),
            Self::Constant(value) => value.clone(),
        }
    }

    /// Every element reference, with the path of members that leads to it in the built value.
    pub fn items(&self) -> Vec<(Vec<&str>, &JsonPointer)> {
        fn walk<'a>(
            each: &'a Each,
            path: &mut Vec<&'a str>,
            out: &mut Vec<(Vec<&'a str>, &'a JsonPointer)>,
        ) {
            match each {
                Each::Item(pointer) => out.push((path.clone(), pointer)),
                Each::Object(members) => {
                    for (name, member) in members {
                        path.push(name);
                        walk(member, path, out);
                        path.pop();
                    }
                }
                Each::Constant(_) => {}
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out
    }

    /// The value built from one element, or the element reference that selects nothing in it.
    pub fn build(&self, element: &Value) -> Result<Value, &JsonPointer> {
        match self {
            Self::Item(pointer) => pointer.evaluate(element).cloned().ok_or(pointer),
            Self::Object(members) => {
                let mut built = Map::new();
                for (name, member) in members {
                    built.insert(name.clone(), member.build(element)?);
                }
                Ok(Value::Object(built))
            }
            Self::Constant(value) => Ok(value.clone()),
        }
    }
}

impl Template {
    /// Parses a string with embedded `{$…}` expressions; each ends at the first `}`.
    pub fn parse(text: &str) -> Result<Self, BindingError> {
        let mut parts = Vec::new();
        let mut rest = 0;
        while let Some(found) = text[rest..].find("{$") {
            let open = rest + found;
            if open > rest {
                parts.push(TemplatePart::Literal(text[rest..open].to_owned()));
            }
            let inner_start = open + 1;
            let Some(len) = text[inner_start..].find('}') else {
                return Err(BindingError::UnclosedTemplate { offset: open });
            };
            let inner = &text[inner_start..inner_start + len];
            let expression = RuntimeExpression::parse(inner).map_err(|mut e| {
                e.offset += inner_start;
                e
            })?;
            parts.push(TemplatePart::Expression(expression));
            rest = inner_start + len + 1;
        }
        if rest < text.len() {
            parts.push(TemplatePart::Literal(text[rest..].to_owned()));
        }
        Ok(Self { parts })
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in &self.parts {
            match part {
                TemplatePart::Literal(text) => f.write_str(text)?,
                TemplatePart::Expression(e) => write!(f, "{{{e}}}")?,
            }
        }
        Ok(())
    }
}

/// The regular expression (anchored) for template strings that do not start with `$`.
///
/// Limit: a literal `{` directly before an embedded expression (`{{$…}`) is accepted here and by
/// the parser alike, but a pattern engine cannot report *which* expression is malformed.
pub fn template_pattern() -> String {
    let expression = expression_pattern(true);
    let unit = |first: &str| format!(r"(?:[^{{{first}]|\{{+(?:[^{{$]|$)|\{{+{expression}\}})");
    format!(r"^(?:{}{}*)?$", unit("$"), unit(""))
}

impl JsonSchema for Binding {
    fn schema_name() -> Cow<'static, str> {
        "RecoveryBinding".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A parameter value: a runtime expression (a string starting with `$`), a template string with embedded `{$…}` expressions, or a constant of any other JSON type.",
            "anyOf": [
                generator.subschema_for::<RuntimeExpression>(),
                { "type": "string", "pattern": template_pattern() },
                { "not": { "type": "string" } }
            ]
        })
    }
}

#[cfg(test)]
mod tests;
