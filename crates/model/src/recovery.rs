//! The two recovery carriers and the normalized form both map to.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::binding::{Binding, BindingError};
use crate::jsonpath::JsonPath;

/// The only strategy SEP-3172 defines.
pub const COMPENSATION_STRATEGY: &str = "compensation";

/// SEP-3172 `annotations.recovery`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    title = "Recovery",
    description = "How to compensate a completed call of this tool (SEP-3172)."
)]
pub struct Recovery {
    /// `"compensation"`; other values are reserved and ignored by orchestrators.
    pub strategy: String,
    /// The tool to call, and how its arguments are bound.
    pub compensating_operation: CompensatingOperation,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensation: Option<CompensateCall>,
    /// Systems the tool affects, such as `storage` or `payments`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effect_scope: Option<Vec<String>>,
    /// Free-form notes for humans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Retries of the compensating call after a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// Fields this model does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
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
    /// Time limit in milliseconds (compensate carrier only).
    pub timeout_ms: Option<u64>,
    /// Retry budget (compensate carrier only).
    pub max_retries: Option<u32>,
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
        if self.strategy != COMPENSATION_STRATEGY {
            return None;
        }
        let op = &self.compensating_operation;
        Some(DeclaredRecovery {
            carrier: Carrier::Sep3172,
            reversibility: Reversibility::Compensable,
            compensation: Some(Compensation {
                tool: op.operation_id.clone(),
                bindings: parse_bindings(&op.parameters, Binding::parse_sep),
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
                timeout_ms: c.timeout_ms,
                max_retries: c.max_retries,
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

impl crate::tool::Tool {
    /// Every recovery declaration of the tool, normalized, SEP-3172 first.
    ///
    /// A SEP-3172 declaration with an unknown strategy is left out: orchestrators ignore it.
    pub fn declared_recovery(&self) -> Vec<DeclaredRecovery> {
        self.sep_recovery()
            .and_then(Recovery::normalize)
            .into_iter()
            .chain(self.compensate().map(Compensate::normalize))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::tool::Tool;
    use serde_json::json;

    fn tool(value: serde_json::Value) -> Tool {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn both_carriers_normalize_to_the_same_declaration() {
        let t = tool(json!({
            "name": "charge_payment",
            "inputSchema": {"type": "object"},
            "annotations": {"recovery": {
                "strategy": "compensation",
                "compensatingOperation": {
                    "operationId": "refund_payment",
                    "parameters": {"transactionId": "$response.body#/transactionId"}
                }
            }},
            "_meta": {"dev.chronomcp/compensate": {
                "reversibility": "compensable",
                "compensation": {
                    "toolName": "refund_payment",
                    "parameterMapping": {"transactionId": "$.output.structuredContent.transactionId"},
                    "maxRetries": 3
                }
            }}
        }));
        let declared = t.declared_recovery();
        assert_eq!(declared.len(), 2);
        assert!(declared[0].agrees_with(&declared[1]));
    }

    #[test]
    fn different_bindings_disagree() {
        let t = tool(json!({
            "name": "t",
            "inputSchema": {"type": "object"},
            "annotations": {"recovery": {
                "strategy": "compensation",
                "compensatingOperation": {"operationId": "u", "parameters": {"id": "$response.body#/id"}}
            }},
            "_meta": {"dev.chronomcp/compensate": {
                "reversibility": "compensable",
                "compensation": {"toolName": "u", "parameterMapping": {"id": "$.input.id"}}
            }}
        }));
        let declared = t.declared_recovery();
        assert!(!declared[0].agrees_with(&declared[1]));
    }

    #[test]
    fn whole_body_spellings_agree() {
        let t = tool(json!({
            "name": "t",
            "inputSchema": {"type": "object"},
            "annotations": {"recovery": {
                "strategy": "compensation",
                "compensatingOperation": {"operationId": "u", "parameters": {"all": "$response.body"}}
            }},
            "_meta": {"dev.chronomcp/compensate": {
                "reversibility": "compensable",
                "compensation": {"toolName": "u", "parameterMapping": {"all": "$.output.structuredContent"}}
            }}
        }));
        let declared = t.declared_recovery();
        assert!(declared[0].agrees_with(&declared[1]));
    }

    #[test]
    fn unknown_strategy_is_ignored() {
        let t = tool(json!({
            "name": "t",
            "inputSchema": {"type": "object"},
            "annotations": {"recovery": {
                "strategy": "manual-only",
                "compensatingOperation": {"operationId": "u", "parameters": {}}
            }}
        }));
        assert!(t.declared_recovery().is_empty());
    }
}
