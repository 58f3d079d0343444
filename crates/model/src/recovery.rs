//! The two recovery carriers and the normalized form both map to.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::binding::{Binding, BindingError};
use crate::jsonpath::JsonPath;
use crate::pointer::PointerReading;
use crate::present::present;

/// The only strategy SEP-3172 defines.
pub const COMPENSATION_STRATEGY: &str = "compensation";

/// SEP-3172 `annotations.recovery`.
///
/// Only the `"compensation"` strategy is defined; it requires `compensatingOperation`. Any other
/// strategy is reserved for future revisions (`retry-elsewhere`, `manual-only`, …): such an
/// object is accepted whatever else it holds, kept as written in `extra`, and ignored by
/// orchestrators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    try_from = "Map<String, Value>",
    into = "Map<String, Value>"
)]
pub struct Recovery {
    /// `"compensation"`; other values are reserved and ignored by orchestrators.
    pub strategy: String,
    /// The tool to call, and how its arguments are bound; `Some` exactly for the
    /// `"compensation"` strategy.
    pub compensating_operation: Option<CompensatingOperation>,
    /// Every other member (for an unknown strategy, everything but `strategy`).
    pub extra: Map<String, Value>,
}

impl TryFrom<Map<String, Value>> for Recovery {
    type Error = String;

    fn try_from(mut map: Map<String, Value>) -> Result<Self, String> {
        let strategy = match map.remove("strategy") {
            Some(Value::String(strategy)) => strategy,
            Some(other) => {
                return Err(format!(
                    "strategy must be a string, found {}",
                    crate::json_type::json_type_name(&other)
                ));
            }
            None => return Err("missing field `strategy`".to_owned()),
        };
        let compensating_operation = if strategy == COMPENSATION_STRATEGY {
            let operation = map
                .remove("compensatingOperation")
                .ok_or("missing field `compensatingOperation`")?;
            Some(
                CompensatingOperation::deserialize(operation)
                    .map_err(|e| format!("compensatingOperation: {e}"))?,
            )
        } else {
            None
        };
        Ok(Self {
            strategy,
            compensating_operation,
            extra: map,
        })
    }
}

impl From<Recovery> for Map<String, Value> {
    fn from(recovery: Recovery) -> Self {
        let mut map = Map::new();
        map.insert("strategy".to_owned(), Value::String(recovery.strategy));
        if let Some(operation) = recovery.compensating_operation {
            map.insert(
                "compensatingOperation".to_owned(),
                serde_json::to_value(operation).unwrap_or(Value::Null),
            );
        }
        map.extend(recovery.extra);
        map
    }
}

impl JsonSchema for Recovery {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Recovery".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "title": "Recovery",
            "description": "How to compensate a completed call of this tool (SEP-3172). The strategy `compensation` requires `compensatingOperation`; other strategies are reserved for future revisions, accepted with any other members, and ignored by orchestrators.",
            "type": "object",
            "properties": {
                "strategy": {
                    "type": "string",
                    "description": "`compensation`; other values are reserved and ignored by orchestrators."
                }
            },
            "required": ["strategy"],
            "if": {"properties": {"strategy": {"const": COMPENSATION_STRATEGY}}},
            "then": {
                "properties": {
                    "compensatingOperation": generator.subschema_for::<CompensatingOperation>()
                },
                "required": ["compensatingOperation"]
            },
            "additionalProperties": true
        })
    }
}

/// SEP-3172 `compensatingOperation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompensatingOperation {
    /// Name of a tool of the same server.
    pub operation_id: String,
    /// Argument name → binding (runtime expression, template or constant).
    #[schemars(with = "BTreeMap<String, Binding>")]
    pub parameters: Map<String, Value>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `dev.chronomcp/compensate` entry of a tool's `_meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    title = "Compensate",
    description = "Reversibility of this tool (mcp-compensate, `dev.chronomcp/compensate`)."
)]
pub struct Compensate {
    /// The reversibility class.
    pub reversibility: Reversibility,
    /// The compensating call; present exactly when `reversibility` is `compensable`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub compensation: Option<CompensateCall>,
    /// Systems the tool affects, such as `storage` or `payments`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub side_effect_scope: Option<Vec<String>>,
    /// Free-form notes for humans.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub notes: Option<String>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The compensate carrier's `compensation` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompensateCall {
    /// Name of the compensating tool.
    pub tool_name: String,
    /// Argument name → JSONPath into the original call.
    #[schemars(with = "BTreeMap<String, JsonPath>")]
    pub parameter_mapping: Map<String, Value>,
    /// Time limit of the compensating call, in milliseconds.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_ms: Option<Count>,
    /// Retries of the compensating call after a failure.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_retries: Option<Count>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A non-negative integer as JSON Schema counts them: any JSON number without a fractional part,
/// whatever its spelling (`3`, `3.0`, `3e0`) or size, kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Count(serde_json::Number);

impl Count {
    /// The number as written.
    pub fn number(&self) -> &serde_json::Number {
        &self.0
    }

    /// The value, saturating at `u64::MAX` (a budget that large is unbounded in practice).
    pub fn saturating_u64(&self) -> u64 {
        self.0
            .as_u64()
            .or_else(|| self.0.as_f64().filter(|f| f.is_finite()).map(|f| f as u64))
            .unwrap_or(u64::MAX)
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let number = deserializer.deserialize_any(AsWritten)?;
        let text = number.to_string();
        if !crate::json_type::number_is_integer(&text) {
            return Err(serde::de::Error::custom(format!(
                "expected a whole number, found {text}"
            )));
        }
        if text.starts_with('-') && !crate::json_type::number_is_zero(&text) {
            return Err(serde::de::Error::custom(format!(
                "expected a non-negative number, found {text}"
            )));
        }
        Ok(Self(number))
    }
}

/// A JSON number with its text as written: `serde_json::Number`'s own reading parses the text
/// again and may respell it (`5e3` as `5e+3`).
struct AsWritten;

/// The member serde_json wraps a number's text in when it keeps the text.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

impl<'de> serde::de::Visitor<'de> for AsWritten {
    type Value = serde_json::Number;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON number")
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Self::Value, E> {
        Ok(n.into())
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Self::Value, E> {
        Ok(n.into())
    }

    fn visit_u128<E: serde::de::Error>(self, n: u128) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_string_unchecked(n.to_string()))
    }

    fn visit_i128<E: serde::de::Error>(self, n: i128) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_string_unchecked(n.to_string()))
    }

    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Self::Value, E> {
        serde_json::Number::from_f64(n).ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        match map.next_key::<String>()? {
            Some(key) if key == NUMBER_TOKEN => {
                let text: String = map.next_value()?;
                // Checked as the parser would, kept as written.
                text.parse::<serde_json::Number>()
                    .map_err(A::Error::custom)?;
                Ok(serde_json::Number::from_string_unchecked(text))
            }
            _ => Err(A::Error::custom("expected a number, found an object")),
        }
    }
}

impl JsonSchema for Count {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NonNegativeInteger".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "minimum": 0})
    }
}

/// What a completed call leaves behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Reversibility {
    /// Changes nothing; nothing to undo.
    Readonly,
    /// Undone by a compensating call.
    Compensable,
    /// Cannot be undone.
    Irreversible,
}

/// Where a recovery declaration came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Carrier {
    /// `annotations.recovery`
    Sep3172,
    /// `_meta["dev.chronomcp/compensate"]`
    Compensate,
}

impl Carrier {
    /// The JSON Pointer of the carrier inside a tool object.
    pub fn pointer(self) -> &'static str {
        match self {
            Self::Sep3172 => "/annotations/recovery",
            Self::Compensate => "/_meta/dev.chronomcp~1compensate",
        }
    }

    /// The JSON Pointer, relative to the carrier, of the object mapping parameters to bindings.
    pub fn bindings_pointer(self) -> &'static str {
        match self {
            Self::Sep3172 => "/compensatingOperation/parameters",
            Self::Compensate => "/compensation/parameterMapping",
        }
    }

    /// The JSON Pointer, relative to the carrier, of the compensating tool's name.
    pub fn target_pointer(self) -> &'static str {
        match self {
            Self::Sep3172 => "/compensatingOperation/operationId",
            Self::Compensate => "/compensation/toolName",
        }
    }

    /// How the body pointers of this carrier's bindings select values.
    pub fn reading(self) -> PointerReading {
        match self {
            Self::Sep3172 => PointerReading::Pointer,
            Self::Compensate => PointerReading::Names,
        }
    }
}

/// A recovery declaration in carrier-neutral form.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredRecovery {
    /// The carrier it was read from.
    pub carrier: Carrier,
    /// The reversibility class (SEP-3172 declarations are always compensable).
    pub reversibility: Reversibility,
    /// The compensating call, when one is declared.
    pub compensation: Option<Compensation>,
    /// Affected systems (compensate carrier only).
    pub side_effect_scope: Vec<String>,
}

/// A compensating call in carrier-neutral form.
#[derive(Debug, Clone, PartialEq)]
pub struct Compensation {
    /// Name of the compensating tool.
    pub tool: String,
    /// Each parameter's binding, in declaration order; a malformed binding is kept as its error.
    pub bindings: Vec<ParameterBinding>,
    /// Time limit in milliseconds (compensate carrier only), as written.
    pub timeout_ms: Option<Count>,
    /// Retry budget (compensate carrier only), as written.
    pub max_retries: Option<Count>,
}

/// One parameter of a compensating call.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterBinding {
    /// The compensator's argument name.
    pub parameter: String,
    /// The binding as declared.
    pub raw: Value,
    /// The parsed binding, or why it does not parse.
    pub binding: Result<Binding, BindingError>,
}

impl Recovery {
    /// The normalized declaration; `None` for a strategy other than `"compensation"`.
    pub fn normalize(&self) -> Option<DeclaredRecovery> {
        self.normalize_with(Binding::parse_sep)
    }

    /// The normalized declaration of a recovery an overlay declared: its parameters may also be
    /// map bindings ([`Binding::parse_overlay`]).
    pub fn normalize_overlay(&self) -> Option<DeclaredRecovery> {
        self.normalize_with(Binding::parse_overlay)
    }

    fn normalize_with(
        &self,
        parse: fn(&Value) -> Result<Binding, BindingError>,
    ) -> Option<DeclaredRecovery> {
        let op = self.compensating_operation.as_ref()?;
        Some(DeclaredRecovery {
            carrier: Carrier::Sep3172,
            reversibility: Reversibility::Compensable,
            compensation: Some(Compensation {
                tool: op.operation_id.clone(),
                bindings: parse_bindings(&op.parameters, parse),
                timeout_ms: None,
                max_retries: None,
            }),
            side_effect_scope: Vec::new(),
        })
    }
}

impl Compensate {
    /// The normalized declaration.
    pub fn normalize(&self) -> DeclaredRecovery {
        DeclaredRecovery {
            carrier: Carrier::Compensate,
            reversibility: self.reversibility,
            compensation: self.compensation.as_ref().map(|c| Compensation {
                tool: c.tool_name.clone(),
                bindings: parse_bindings(&c.parameter_mapping, Binding::parse_compensate),
                timeout_ms: c.timeout_ms.clone(),
                max_retries: c.max_retries.clone(),
            }),
            side_effect_scope: self.side_effect_scope.clone().unwrap_or_default(),
        }
    }
}

fn parse_bindings(
    map: &Map<String, Value>,
    parse: fn(&Value) -> Result<Binding, BindingError>,
) -> Vec<ParameterBinding> {
    map.iter()
        .map(|(parameter, raw)| ParameterBinding {
            parameter: parameter.clone(),
            raw: raw.clone(),
            binding: parse(raw),
        })
        .collect()
}

impl DeclaredRecovery {
    /// True when two declarations mean the same thing: same class, same compensating tool, same
    /// bound parameters with equal bindings. Timeouts, retries and scope have no SEP-3172
    /// counterpart and are not compared.
    pub fn agrees_with(&self, other: &Self) -> bool {
        if self.reversibility != other.reversibility {
            return false;
        }
        match (&self.compensation, &other.compensation) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                a.tool == b.tool && a.canonical_bindings() == b.canonical_bindings()
            }
            _ => false,
        }
    }
}

impl Compensation {
    /// Parameter name → parsed binding, ignoring declaration order.
    pub fn binding_map(&self) -> BTreeMap<&str, Result<&Binding, &BindingError>> {
        self.bindings
            .iter()
            .map(|b| (b.parameter.as_str(), b.binding.as_ref()))
            .collect()
    }

    /// Like [`Self::binding_map`], with each binding in canonical form, for comparisons.
    fn canonical_bindings(&self) -> BTreeMap<&str, Result<Binding, &BindingError>> {
        self.bindings
            .iter()
            .map(|b| {
                (
                    b.parameter.as_str(),
                    b.binding.as_ref().map(Binding::canonical),
                )
            })
            .collect()
    }
}
