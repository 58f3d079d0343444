//! Stage 3: each tool against the generated tool schema (R003).

use std::cmp::Reverse;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, ValidationError, Validator};
use mcp_recovery_model::json_type_name;
use serde_json::Value;

use crate::finding::{excerpt, show};
use crate::rules::schema_violation;

/// The compiled tool schema.
pub(crate) struct SchemaStage {
    validator: Result<Validator, String>,
}

impl std::fmt::Debug for SchemaStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaStage")
            .field("compiled", &self.validator.is_ok())
            .finish()
    }
}

/// One violation: instance path relative to the tool, and the words.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Violation {
    pub path: String,
    pub message: String,
}

impl SchemaStage {
    /// Compiles the tool schema; remote references are never fetched (no retriever is built in).
    pub(crate) fn new() -> Self {
        let schema = mcp_recovery_schema::tool_schema();
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .build(&schema)
            .map_err(|e| excerpt(&e.to_string(), 200));
        Self { validator }
    }

    /// Why the schema could not be compiled, if it could not.
    pub(crate) fn unavailable(&self) -> Option<&str> {
        self.validator.as_ref().err().map(String::as_str)
    }

    /// The violations of one tool, one per problem, ordered by path.
    pub(crate) fn check(&self, tool: &Value) -> Vec<Violation> {
        let Ok(validator) = &self.validator else {
            return Vec::new();
        };
        if validator.is_valid(tool) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for error in validator.iter_errors(tool) {
            collect(&error, &mut out);
        }
        out.sort();
        out.dedup();
        out
    }
}

fn depth(error: &ValidationError<'_>) -> usize {
    error.instance_path().iter().count()
}

/// True for an alternative that fails only because the value is of another kind altogether: it
/// says nothing about what is wrong inside the value.
fn wrong_kind_only(branch: &[ValidationError<'static>], own_depth: usize) -> bool {
    branch.iter().all(|e| {
        depth(e) == own_depth
            && matches!(
                e.kind(),
                ValidationErrorKind::Type { .. } | ValidationErrorKind::Not { .. }
            )
    })
}

fn collect(error: &ValidationError<'_>, out: &mut Vec<Violation>) {
    let path = error.instance_path().as_str().to_owned();
    let instance = error.instance();
    let message = match error.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            match alternatives(context, depth(error), instance) {
                Some(message) => message,
                None => return collect_best(context, depth(error), out),
            }
        }
        ValidationErrorKind::Required { property } => schema_violation::missing(property),
        ValidationErrorKind::Type { kind } => {
            schema_violation::wrong_type(&type_names(kind), json_type_name(instance))
        }
        ValidationErrorKind::Enum { options } => match options.as_ref() {
            Value::Array(options) if options.len() == 1 => {
                format!("expected {}, found {}", show(&options[0]), show(instance))
            }
            Value::Array(options) => format!(
                "expected one of {}, found {}",
                options.iter().map(show).collect::<Vec<_>>().join(", "),
                show(instance)
            ),
            other => format!("expected one of {}, found {}", show(other), show(instance)),
        },
        ValidationErrorKind::Constant { expected_value } => {
            format!(
                "expected {}, found {}",
                show(expected_value),
                show(instance)
            )
        }
        ValidationErrorKind::Pattern { .. } => {
            format!("{} does not have the required format", show(instance))
        }
        ValidationErrorKind::FalseSchema => format!("{} is not allowed here", show(instance)),
        _ => excerpt(&error.to_string(), 200),
    };
    out.push(Violation { path, message });
}

/// Recurses into the alternative the value was evidently meant to be.
fn collect_best(context: &[Vec<ValidationError<'static>>], own: usize, out: &mut Vec<Violation>) {
    let best = context
        .iter()
        .filter(|branch| !branch.is_empty() && !wrong_kind_only(branch, own))
        .max_by_key(|branch| {
            let deepest = branch.iter().map(depth).max().unwrap_or(0);
            (deepest, Reverse(branch.len()))
        });
    if let Some(branch) = best {
        for inner in branch {
            collect(inner, out);
        }
    }
}

/// One message for a value that fits none of several alternatives at its own level (a value
/// outside a set of constants, or of the wrong type altogether); `None` when one alternative is
/// evidently meant and its own errors say more.
fn alternatives(
    context: &[Vec<ValidationError<'static>>],
    own: usize,
    instance: &Value,
) -> Option<String> {
    let meant: Vec<&Vec<ValidationError<'static>>> = context
        .iter()
        .filter(|branch| !branch.is_empty() && !wrong_kind_only(branch, own))
        .collect();
    let shallow = context.iter().flatten().all(|e| {
        depth(e) == own
            && matches!(
                e.kind(),
                ValidationErrorKind::Type { .. }
                    | ValidationErrorKind::Not { .. }
                    | ValidationErrorKind::Constant { .. }
                    | ValidationErrorKind::Enum { .. }
            )
    });
    if meant.len() == 1 || (!meant.is_empty() && !shallow) {
        return None;
    }
    let mut values = Vec::new();
    let mut types = Vec::new();
    for e in context.iter().flatten() {
        match e.kind() {
            ValidationErrorKind::Constant { expected_value } => values.push(show(expected_value)),
            ValidationErrorKind::Enum { options } => match options.as_ref() {
                Value::Array(options) => values.extend(options.iter().map(show)),
                other => values.push(show(other)),
            },
            ValidationErrorKind::Type { kind } => types.extend(type_names(kind)),
            _ => {}
        }
    }
    values.dedup();
    types.dedup();
    Some(if !values.is_empty() {
        format!(
            "expected one of {}, found {}",
            values.join(", "),
            show(instance)
        )
    } else if !types.is_empty() {
        schema_violation::wrong_type(&types, json_type_name(instance))
    } else {
        schema_violation::no_alternative(&show(instance))
    })
}

fn type_names(kind: &TypeKind) -> Vec<String> {
    match kind {
        TypeKind::Single(t) => vec![t.to_string()],
        TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_tool_schema_compiles() {
        assert_eq!(SchemaStage::new().unavailable(), None);
    }

    #[test]
    fn one_violation_per_problem() {
        let stage = SchemaStage::new();
        let v = stage.check(&json!({
            "name": "t",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": "yes", "recovery": {"compensatingOperation": {"operationId": "u", "parameters": {}}}}
        }));
        let paths: Vec<&str> = v.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(
            paths,
            ["/annotations/readOnlyHint", "/annotations/recovery"],
            "{v:?}"
        );
        assert!(v[1].message.contains("`strategy`"), "{v:?}");
    }
}
