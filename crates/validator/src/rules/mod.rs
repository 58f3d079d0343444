//! The rules of the catalog, one per file. Each file declares its `RULE` (code, name, docs) and,
//! for semantic rules, a `check` over the [`Context`]; message wording lives in the file's
//! constructors.

use std::collections::HashMap;

use mcp_recovery_model::{
    Binding, BodySide, Compensation, DeclaredRecovery, JsonPointer, ParameterBinding,
    RuntimeExpression, Tool, escape_token,
};
use serde::Deserialize;

use crate::resolve::{Resolution, resolve_as};
use serde_json::Value;

use crate::codes::Rule;
use crate::finding::{Finding, Focus};

pub(crate) mod carrier_conflict;
pub(crate) mod dangling_operation_id;
pub(crate) mod destructive_hint_omitted;
pub(crate) mod destructive_without_recovery;
pub(crate) mod duplicate_key;
pub(crate) mod duplicate_tool_name;
pub(crate) mod expression_source_not_in_mcp;
pub(crate) mod hint_contradiction;
pub(crate) mod hint_disagreement;
pub(crate) mod identity_compensation;
pub(crate) mod invalid_expression;
pub(crate) mod invalid_json;
pub(crate) mod invalid_meta_key;
pub(crate) mod missing_required_parameter;
pub(crate) mod missing_title;
pub(crate) mod non_idempotent_compensator;
pub(crate) mod not_a_tools_list;
pub(crate) mod optional_source;
pub(crate) mod overlay_conflict;
pub(crate) mod overlay_unknown_tool;
pub(crate) mod read_only_compensator;
pub(crate) mod read_only_hint_omitted;
pub(crate) mod recovery_on_read_only_tool;
pub(crate) mod reversibility_contradiction;
pub(crate) mod schema_violation;
pub(crate) mod tool_name_format;
pub(crate) mod type_mismatch;
pub(crate) mod undeclared_reversibility;
pub(crate) mod unknown_parameter;
pub(crate) mod unknown_strategy;
pub(crate) mod unresolvable_pointer;
pub(crate) mod unusable_input_schema;
pub(crate) mod unverifiable_binding;

/// A semantic check.
pub(crate) type Check = fn(&Context<'_>, &mut Vec<Finding>);

/// The semantic rules and their checks (R001–R003 are stages of the pipeline).
pub(crate) const CHECKS: &[(Rule, Check)] = &[
    (Rule::DuplicateToolName, duplicate_tool_name::check),
    (Rule::ToolNameFormat, tool_name_format::check),
    (Rule::InvalidMetaKey, invalid_meta_key::check),
    (Rule::DanglingOperationId, dangling_operation_id::check),
    (Rule::IdentityCompensation, identity_compensation::check),
    (Rule::UnknownStrategy, unknown_strategy::check),
    (Rule::InvalidExpression, invalid_expression::check),
    (
        Rule::ExpressionSourceNotInMcp,
        expression_source_not_in_mcp::check,
    ),
    (Rule::UnresolvablePointer, unresolvable_pointer::check),
    (Rule::UnverifiableBinding, unverifiable_binding::check),
    (Rule::OptionalSource, optional_source::check),
    (
        Rule::MissingRequiredParameter,
        missing_required_parameter::check,
    ),
    (Rule::UnknownParameter, unknown_parameter::check),
    (Rule::TypeMismatch, type_mismatch::check),
    (
        Rule::RecoveryOnReadOnlyTool,
        recovery_on_read_only_tool::check,
    ),
    (Rule::ReadOnlyCompensator, read_only_compensator::check),
    (
        Rule::NonIdempotentCompensator,
        non_idempotent_compensator::check,
    ),
    (Rule::CarrierConflict, carrier_conflict::check),
    (
        Rule::ReversibilityContradiction,
        reversibility_contradiction::check,
    ),
    (Rule::HintContradiction, hint_contradiction::check),
    (Rule::UnusableInputSchema, unusable_input_schema::check),
    (
        Rule::UndeclaredReversibility,
        undeclared_reversibility::check,
    ),
    (
        Rule::DestructiveWithoutRecovery,
        destructive_without_recovery::check,
    ),
    (Rule::MissingTitle, missing_title::check),
    (Rule::ReadOnlyHintOmitted, read_only_hint_omitted::check),
    (
        Rule::DestructiveHintOmitted,
        destructive_hint_omitted::check,
    ),
    (Rule::HintDisagreement, hint_disagreement::check),
];

/// Pointer of a tool's `annotations`, or of its name when it has none (the place to add them).
pub(crate) fn annotations_pointer(tool: &ToolRef<'_>) -> String {
    if tool.raw.get("annotations").is_some() {
        tool.at("/annotations")
    } else {
        tool.at("/name")
    }
}

/// One entry of the tools array.
#[derive(Debug)]
pub(crate) struct ToolRef<'a> {
    /// Pointer of the tool in the document (`/result/tools/3`).
    pub pointer: String,
    /// The tool as written.
    pub raw: &'a Value,
    /// Its `name`, when that is a string.
    pub name: Option<&'a str>,
    /// The typed tool; `None` when the tool does not deserialize (R003 says why).
    pub typed: Option<Tool>,
    /// Its recovery declarations, normalized, SEP-3172 first.
    pub declared: Vec<DeclaredRecovery>,
}

impl<'a> ToolRef<'a> {
    /// Reads one tool; the typed error is returned for the schema stage to report.
    ///
    /// The typed tool is read from a shallow copy holding only `name`, `annotations` and `_meta`:
    /// a deep copy of every schema dominated the cost of linting. The rules read schemas from the
    /// raw tool ([`ToolRef::input_schema`], [`ToolRef::output_schema`]); the fields left out are
    /// checked by the schema stage.
    pub(crate) fn read(pointer: String, raw: &'a Value) -> (Self, Option<serde_json::Error>) {
        let name = raw.get("name").and_then(Value::as_str);
        let shallow = match raw {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter_map(|(key, value)| match key.as_str() {
                        "name" | "annotations" | "_meta" => Some((key.clone(), value.clone())),
                        // The schema stage checks the real one.
                        "inputSchema" => Some((key.clone(), serde_json::json!({"type": "object"}))),
                        _ => None,
                    })
                    .collect(),
            ),
            other => other.clone(),
        };
        let (typed, error) = match Tool::deserialize(&shallow) {
            Ok(tool) => (Some(tool), None),
            Err(error) => (None, Some(error)),
        };
        let declared = typed
            .as_ref()
            .map(Tool::declared_recovery)
            .unwrap_or_default();
        let tool = Self {
            pointer,
            raw,
            name,
            typed,
            declared,
        };
        (tool, error)
    }

    /// The tool's `inputSchema` as written.
    pub(crate) fn input_schema(&self) -> Option<&'a Value> {
        self.raw.get("inputSchema")
    }

    /// The tool's `outputSchema` as written.
    pub(crate) fn output_schema(&self) -> Option<&'a Value> {
        self.raw.get("outputSchema")
    }

    /// Pointer of a place inside this tool, given relative to it.
    pub(crate) fn at(&self, relative: &str) -> String {
        format!("{}{relative}", self.pointer)
    }
}

/// What the semantic rules see: every tool, and a name index.
#[derive(Debug)]
pub(crate) struct Context<'a> {
    pub tools: Vec<ToolRef<'a>>,
    names: HashMap<&'a str, usize>,
}

impl<'a> Context<'a> {
    pub(crate) fn new(tools: Vec<ToolRef<'a>>) -> Self {
        let mut names = HashMap::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            if let Some(name) = tool.name {
                names.entry(name).or_insert(i);
            }
        }
        Self { tools, names }
    }

    /// The first tool with this name.
    pub(crate) fn tool_named(&self, name: &str) -> Option<&ToolRef<'a>> {
        self.names.get(name).map(|i| &self.tools[*i])
    }

    /// Every declared compensating call, with the tools on both ends.
    pub(crate) fn sites(&self) -> impl Iterator<Item = Site<'_, 'a>> {
        self.tools.iter().flat_map(move |tool| {
            tool.typed.iter().flat_map(move |typed| {
                tool.declared.iter().filter_map(move |declared| {
                    let compensation = declared.compensation.as_ref()?;
                    Some(Site {
                        tool,
                        typed,
                        declared,
                        compensation,
                        compensator: self.tool_named(&compensation.tool),
                    })
                })
            })
        })
    }

    /// Every body expression of every well-formed binding, with the schema it reads.
    pub(crate) fn body_reads(&self) -> impl Iterator<Item = BodyRead<'_, 'a>> {
        self.sites().flat_map(|site| {
            site.compensation.bindings.iter().flat_map(move |binding| {
                let expressions = match &binding.binding {
                    Ok(parsed) => parsed.expressions(),
                    Err(_) => Vec::new(),
                };
                expressions.into_iter().filter_map(move |expression| {
                    let (side, pointer) = expression.body_target()?;
                    let schema = match side {
                        BodySide::Request => site.tool.input_schema(),
                        BodySide::Response => site.tool.output_schema(),
                    };
                    Some(BodyRead {
                        site,
                        binding,
                        expression,
                        side,
                        pointer,
                        schema,
                    })
                })
            })
        })
    }
}

/// One compensating call declared by one carrier of one tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Site<'c, 'a> {
    pub tool: &'c ToolRef<'a>,
    pub typed: &'c Tool,
    pub declared: &'c DeclaredRecovery,
    pub compensation: &'c Compensation,
    /// The tool named as compensator, when it is in the list.
    pub compensator: Option<&'c ToolRef<'a>>,
}

impl Site<'_, '_> {
    /// Pointer of the carrier object.
    pub(crate) fn carrier_pointer(&self) -> String {
        self.tool.at(self.declared.carrier.pointer())
    }

    /// Pointer of the compensating tool's name.
    pub(crate) fn target_pointer(&self) -> String {
        format!(
            "{}{}",
            self.carrier_pointer(),
            self.declared.carrier.target_pointer()
        )
    }

    /// Pointer of the parameter → binding object.
    pub(crate) fn bindings_pointer(&self) -> String {
        format!(
            "{}{}",
            self.carrier_pointer(),
            self.declared.carrier.bindings_pointer()
        )
    }

    /// Pointer of one parameter's binding.
    pub(crate) fn binding_pointer(&self, parameter: &str) -> String {
        format!("{}/{}", self.bindings_pointer(), escape_token(parameter))
    }

    /// The name of the tool declaring the compensation.
    pub(crate) fn tool_name(&self) -> Option<&str> {
        Some(self.typed.name.as_str())
    }

    /// The typed compensator, when it is in the list and well formed.
    pub(crate) fn compensator_tool(&self) -> Option<&Tool> {
        self.compensator?.typed.as_ref()
    }

    /// The `inputSchema` of the compensator, when it is in the list and well formed.
    pub(crate) fn compensator_input_schema(&self) -> Option<&Value> {
        self.compensator_tool()?;
        self.compensator?.input_schema()
    }
}

/// One body expression read by a binding.
#[derive(Debug, Clone)]
pub(crate) struct BodyRead<'c, 'a> {
    pub site: Site<'c, 'a>,
    pub binding: &'c ParameterBinding,
    pub expression: &'c RuntimeExpression,
    pub side: BodySide,
    pub pointer: JsonPointer,
    /// `inputSchema` for `$request.body`, `outputSchema` (if any) for `$response.body`.
    pub schema: Option<&'c Value>,
}

impl BodyRead<'_, '_> {
    /// Pointer of the binding in the document.
    pub(crate) fn binding_pointer(&self) -> String {
        self.site.binding_pointer(&self.binding.parameter)
    }

    /// The expression as the author wrote it (a JSONPath stays a JSONPath), for messages.
    pub(crate) fn written(&self) -> String {
        match (&self.binding.binding, &self.binding.raw) {
            (Ok(Binding::Expression(_)), Value::String(text)) => crate::finding::excerpt(text, 120),
            _ => self.expression.to_string(),
        }
    }

    /// What the source schema allows at the pointer, read as the binding's carrier reads it;
    /// `None` when there is no schema to read.
    pub(crate) fn resolution(&self) -> Option<Resolution> {
        let reading = self.site.declared.carrier.reading();
        Some(resolve_as(self.schema?, &self.pointer, reading))
    }

    /// `inputSchema` or `outputSchema`, for messages.
    pub(crate) fn schema_name(&self) -> &'static str {
        match self.side {
            BodySide::Request => "inputSchema",
            BodySide::Response => "outputSchema",
        }
    }
}

/// Where an expression sits inside its binding: the `{$…}` of a template, else the whole value.
pub(crate) fn expression_focus(
    raw: &Value,
    binding: &Binding,
    expression: &RuntimeExpression,
) -> Focus {
    match (binding, raw) {
        (Binding::Template(_), Value::String(text)) => text
            .find(&format!("{{{expression}}}"))
            .map_or(Focus::Value, |at| Focus::InString(at + 1)),
        _ => Focus::Value,
    }
}
