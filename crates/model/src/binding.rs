//! Parameter bindings of a compensating call.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use crate::expression::{ExpressionError, RuntimeExpression, expression_pattern};
use crate::jsonpath::{JsonPath, JsonPathError};

/// How one parameter of a compensating call gets its value.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    /// A string starting with `$`: the value the expression selects, of any JSON type.
    Expression(RuntimeExpression),
    /// A string with embedded `{$…}` expressions: the result is always a string.
    Template(Template),
    /// Any other JSON value, passed as is.
    Constant(Value),
}

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
}

impl BindingError {
    /// Byte offset of the fault inside the binding string, when there is one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Self::Expression(e) => Some(e.offset),
            Self::UnclosedTemplate { offset } => Some(*offset),
            Self::JsonPath(e) => Some(e.offset),
            Self::NotAPath { .. } => None,
        }
    }
}

/// The JSON type name of a value, as JSON Schema spells it: a number without a fractional part
/// (`1`, `1.0`, `1e2`) is an `integer`.
pub fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() || number_is_integer(&n.to_string()) => {
            "integer"
        }
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Splits the JSON text of a number into its significant digits and the position of the decimal
/// point among them (which may lie outside them, as in `1e5` or `1e-5`).
fn digits_and_point(text: &str) -> Option<(Vec<u8>, i128)> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], &unsigned[at + 1..]),
        None => (unsigned, "0"),
    };
    let exponent = exponent.strip_prefix('+').unwrap_or(exponent);
    // An exponent too long for i128 is far outside every digit position either way.
    let exponent: i128 = match exponent.parse() {
        Ok(e) => e,
        Err(_) if exponent.starts_with('-') => i128::MIN / 2,
        Err(_) => i128::MAX / 2,
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
    Some((digits, whole.len() as i128 + exponent))
}

/// True when the JSON text of a number has no fractional part (`3`, `3.0`, `3e0`, `1e400`).
pub(crate) fn number_is_integer(text: &str) -> bool {
    digits_and_point(text).is_some_and(|(digits, point)| {
        let first_fractional = point.clamp(0, digits.len() as i128) as usize;
        digits[first_fractional..].iter().all(|&d| d == b'0')
    })
}

/// True when the JSON text of a number is zero (`0`, `-0.0`, `0e5`).
pub(crate) fn number_is_zero(text: &str) -> bool {
    digits_and_point(text).is_some_and(|(digits, _)| digits.iter().all(|&d| d == b'0'))
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
            Self::Constant(_) => Vec::new(),
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
        }
    }

    /// The SEP-3172 JSON form of this binding.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Expression(e) => Value::String(e.to_string()),
            Self::Template(t) => Value::String(t.to_string()),
            Self::Constant(v) => v.clone(),
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
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_values() {
        assert!(matches!(
            Binding::parse_sep(&json!("$response.body#/id")),
            Ok(Binding::Expression(_))
        ));
        assert!(matches!(
            Binding::parse_sep(&json!("order-{$request.body#/id}")),
            Ok(Binding::Template(_))
        ));
        for constant in [
            json!("plain"),
            json!("{not $ an expression}"),
            json!(5),
            json!(null),
        ] {
            assert_eq!(
                Binding::parse_sep(&constant),
                Ok(Binding::Constant(constant.clone()))
            );
        }
    }

    #[test]
    fn template_round_trips_and_reports_offsets() {
        let text = "{$request.body#/a}-x-{$response.body#/b}{";
        let template = Template::parse(text).unwrap();
        assert_eq!(template.parts.len(), 4);
        assert_eq!(template.to_string(), text);
        assert_eq!(
            Template::parse("ab{$response.bdy}").unwrap_err().offset(),
            Some(13)
        );
        assert_eq!(
            Template::parse("ab{$response.body").unwrap_err(),
            BindingError::UnclosedTemplate { offset: 2 }
        );
    }

    #[test]
    fn compensate_values_must_be_paths() {
        assert_eq!(
            Binding::parse_compensate(&json!("$.input.id"))
                .unwrap()
                .to_value(),
            json!("$request.body#/id")
        );
        assert_eq!(
            Binding::parse_compensate(&json!(3)),
            Err(BindingError::NotAPath { found: "integer" })
        );
    }
}
