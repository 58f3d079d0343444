//! Stage 3: each tool against the generated tool schema (R003).

use std::cmp::Reverse;
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::Location;
use jsonschema::{Draft, Keyword, ValidationError, Validator};
use mcp_recovery_model::json_type_name;
use serde_json::{Map, Value};

use crate::finding::{excerpt, show};
use crate::rules::schema_violation;

mod plain;

/// The tool schema as `mcp_recovery_schema::tool_schema` generates it, kept as text: reading it
/// costs a fraction of generating it, which every run would pay before its first tool. A test
/// keeps the two equal.
const TOOL_SCHEMA: &str = include_str!("schema_stage/tool.schema.json");

/// The tool schema, compiled when a tool first needs it: a tool the schema surely accepts
/// (`plain`) is passed without it.
pub(crate) struct SchemaStage {
    schema: Value,
    plain: plain::Plain,
    validator: OnceLock<Result<Validator, String>>,
}

impl std::fmt::Debug for SchemaStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaStage")
            .field("compiled", &self.validator.get().map(Result::is_ok))
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
    /// The tool schema, not compiled yet.
    pub(crate) fn new() -> Self {
        // The text is the generated schema (tested); should it ever not parse, the schema is
        // generated as before.
        let schema = serde_json::from_str(TOOL_SCHEMA)
            .unwrap_or_else(|_| mcp_recovery_schema::tool_schema());
        Self {
            plain: plain::Plain::new(&schema),
            schema,
            validator: OnceLock::new(),
        }
    }

    /// The compiled schema; remote references are never fetched (no retriever is built in).
    fn compiled(&self) -> &Result<Validator, String> {
        self.validator.get_or_init(|| {
            jsonschema::options()
                .with_draft(Draft::Draft202012)
                .with_keyword("pattern", lazy_pattern)
                .build(&self.schema)
                .map_err(|e| excerpt(&e.to_string(), 200))
        })
    }

    /// The violations of one tool, one per problem, ordered by path; `Err` with the reason when
    /// the tool needs the compiled schema and it cannot be compiled.
    pub(crate) fn check(&self, tool: &Value) -> Result<Vec<Violation>, &str> {
        if self.plain.surely_valid(tool) {
            return Ok(Vec::new());
        }
        let validator = self.compiled().as_ref().map_err(String::as_str)?;
        if validator.is_valid(tool) {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for error in validator.iter_errors(tool) {
            collect(&error, &mut out);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

/// `pattern` with its regular expression compiled on the first string it checks. The tool
/// schema's patterns (runtime expressions, JSONPath) are long: compiling them eagerly was most of
/// the cost of building the schema stage, and most documents hold no value they apply to. The
/// pattern is translated from ECMA-262 syntax as jsonschema translates it, and checked when the
/// schema is compiled.
struct LazyPattern {
    translated: String,
    regex: OnceLock<Option<regex::Regex>>,
}

impl LazyPattern {
    fn matches(&self, text: &str) -> bool {
        self.regex
            .get_or_init(|| regex::Regex::new(&self.translated).ok())
            .as_ref()
            // A pattern the engine cannot build matches nothing: the value is reported, never
            // passed unchecked.
            .is_some_and(|regex| regex.is_match(text))
    }
}

impl<'i> Keyword<'i> for LazyPattern {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if Keyword::is_valid(self, instance) {
            Ok(())
        } else {
            Err(ValidationError::custom("does not match the pattern"))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        instance.as_str().is_none_or(|text| self.matches(text))
    }
}

fn lazy_pattern<'a>(
    _: &'a Map<String, Value>,
    value: &'a Value,
    _: Location,
) -> Result<Box<dyn for<'i> Keyword<'i>>, ValidationError<'a>> {
    let translated = value
        .as_str()
        .filter(|pattern| jsonschema_regex::is_valid_ecma_regex(pattern))
        .and_then(|pattern| jsonschema_regex::to_rust_regex(pattern).ok())
        .ok_or_else(|| {
            ValidationError::custom(format!("{} is not a regular expression", show(value)))
        })?;
    Ok(Box::new(LazyPattern {
        translated: translated.into_owned(),
        regex: OnceLock::new(),
    }))
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
        ValidationErrorKind::Custom { keyword, .. } if keyword == "pattern" => {
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

    /// The stored text is the generated schema; `cargo xtask codegen` writes it when the
    /// model's types change.
    #[test]
    fn the_stored_tool_schema_is_the_generated_one() {
        // Compared as written, so the order of members is the generated one too.
        let stored = serde_json::to_string(&serde_json::from_str::<Value>(TOOL_SCHEMA).unwrap());
        assert!(
            stored.unwrap() == serde_json::to_string(&mcp_recovery_schema::tool_schema()).unwrap(),
            "src/schema_stage/tool.schema.json is not the generated tool schema"
        );
    }

    #[test]
    fn the_tool_schema_compiles() {
        assert!(SchemaStage::new().compiled().is_ok());
    }

    /// Every pattern of the tool schema builds, so none is found broken on first use.
    #[test]
    fn every_pattern_of_the_tool_schema_compiles() {
        fn patterns<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
            match value {
                Value::Object(map) => {
                    for (key, value) in map {
                        match (key.as_str(), value) {
                            ("pattern", Value::String(pattern)) => out.push(pattern),
                            _ => patterns(value, out),
                        }
                    }
                }
                Value::Array(items) => items.iter().for_each(|item| patterns(item, out)),
                _ => {}
            }
        }
        let schema = mcp_recovery_schema::tool_schema();
        let mut found = Vec::new();
        patterns(&schema, &mut found);
        assert!(found.len() >= 3, "{found:?}");
        for pattern in found {
            let translated = jsonschema_regex::to_rust_regex(pattern).unwrap();
            assert!(regex::Regex::new(&translated).is_ok(), "{pattern}");
        }
    }

    #[test]
    fn a_pattern_is_checked_on_first_use() {
        let stage = SchemaStage::new();
        let tool = |expression: &str| {
            json!({
                "name": "t",
                "inputSchema": {"type": "object"},
                "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
                    "operationId": "u", "parameters": {"id": expression}}}}
            })
        };
        assert_eq!(stage.check(&tool("$response.body#/id")), Ok(vec![]));
        let v = stage.check(&tool("$response.bogus")).unwrap();
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].path.ends_with("/parameters/id"), "{v:?}");
        assert_eq!(
            v[0].message,
            "\"$response.bogus\" does not have the required format"
        );
    }

    #[test]
    fn one_violation_per_problem() {
        let stage = SchemaStage::new();
        let v = stage.check(&json!({
            "name": "t",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": "yes", "recovery": {"compensatingOperation": {"operationId": "u", "parameters": {}}}}
        }))
        .unwrap();
        let paths: Vec<&str> = v.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(
            paths,
            ["/annotations/readOnlyHint", "/annotations/recovery"],
            "{v:?}"
        );
        assert!(v[1].message.contains("`strategy`"), "{v:?}");
    }
}
