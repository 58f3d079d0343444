//! Compiling a compensator's `inputSchema`, the one way every consumer does it, and the one
//! budget every consumer gives `pattern` evaluation.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{
    PatternCache, PatternOptions, ReferencingError, ValidationError, ValidationOptions, Validator,
};
use serde_json::Value;

use crate::escape_token;

/// Backtracking steps one `pattern` match may take (the backtracking engine counts them).
pub const BACKTRACK_LIMIT: usize = 10_000;

/// Validations against schemas with a `pattern` one [`PatternBudget`] allows: with
/// [`BACKTRACK_LIMIT`], at most ten million backtracking steps, whatever the patterns.
pub const PATTERN_BUDGET: usize = 1_000;

/// One budget for `pattern` evaluation over one file: every schema compiled under it shares one
/// cache of compiled patterns, every match stops after [`BACKTRACK_LIMIT`] steps, and at most
/// [`PATTERN_BUDGET`] validations against schemas with a pattern are made. Past the budget the
/// caller leaves patterns unjudged.
#[derive(Debug, Clone)]
pub struct PatternBudget {
    cache: PatternCache,
    left: usize,
    spent: usize,
}

impl Default for PatternBudget {
    fn default() -> Self {
        Self::new()
    }
}

impl PatternBudget {
    /// A budget of [`PATTERN_BUDGET`] validations.
    pub fn new() -> Self {
        Self::with_validations(PATTERN_BUDGET)
    }

    /// A budget of `validations` validations against schemas with a pattern.
    pub fn with_validations(validations: usize) -> Self {
        Self {
            cache: PatternCache::new(),
            left: validations,
            spent: 0,
        }
    }

    /// Options that compile a schema under this budget: the backtracking engine with the
    /// per-match limit, and the shared pattern cache.
    pub fn options<'i>(&self) -> ValidationOptions<'i> {
        jsonschema::options()
            .with_pattern_options(PatternOptions::fancy_regex().backtrack_limit(BACKTRACK_LIMIT))
            .with_pattern_cache(self.cache.clone())
    }

    /// [`compile_input_schema`] under this budget.
    pub fn compile_input_schema(&self, schema: &Value) -> Result<Validator, String> {
        self.options()
            .build(schema)
            .map_err(|error| why_not_compiled(schema, &error))
    }

    /// Takes one validation against a schema with a pattern: `false` once the budget is spent.
    pub fn take(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        self.spent += 1;
        true
    }

    /// Validations taken so far.
    pub fn spent(&self) -> usize {
        self.spent
    }
}

/// Why a schema naming the dialect `uri` in `$schema` is not compiled.
fn unknown_dialect(uri: &str) -> String {
    format!(
        "`$schema` at /$schema names '{uri}', a dialect the validator does not know \
         (known: draft 4, 6, 7, 2019-09 and 2020-12)"
    )
}

/// Why `schema` cannot be compiled, in words naming the keyword and its JSON Pointer inside the
/// schema.
fn why_not_compiled(schema: &Value, error: &ValidationError<'_>) -> String {
    let ValidationErrorKind::Referencing(reference) = error.kind() else {
        let at = error.schema_path().as_str();
        let at = if at.is_empty() { "the root" } else { at };
        return format!("the keyword at {at} is malformed: {error}");
    };
    let reference_at = |target: &str| {
        first_member(schema, &|key, value| {
            matches!(key, "$ref" | "$dynamicRef")
                && value.as_str().is_some_and(|v| {
                    let v = v.split('#').next().unwrap_or_default();
                    target == v || (!v.is_empty() && target.ends_with(v))
                })
        })
        .or_else(|| {
            first_member(schema, &|key, value| {
                matches!(key, "$ref" | "$dynamicRef")
                    && value.as_str().is_some_and(|v| !v.starts_with('#'))
            })
        })
        .unwrap_or_else(|| "/$ref".to_owned())
    };
    match reference {
        ReferencingError::Unretrievable { uri, .. } => {
            let target = uri.split('#').next().unwrap_or_default();
            if schema
                .get("$schema")
                .and_then(Value::as_str)
                .map(|s| s.trim_end_matches('#'))
                == Some(target.trim_end_matches('#'))
            {
                unknown_dialect(uri)
            } else {
                format!(
                    "`$ref` at {} refers to '{uri}', outside this schema; references are never fetched",
                    reference_at(target)
                )
            }
        }
        ReferencingError::UnknownSpecification { specification } => unknown_dialect(specification),
        ReferencingError::PointerToNowhere { pointer } => format!(
            "`$ref` at {} points to '#{pointer}', which is not in this schema",
            reference_at("")
        ),
        ReferencingError::NoSuchAnchor { anchor } | ReferencingError::InvalidAnchor { anchor } => {
            format!(
                "`$ref` at {} names the anchor '{anchor}', which this schema does not define",
                reference_at("")
            )
        }
        other => format!("a `$ref` of this schema cannot be resolved: {other}"),
    }
}

/// The JSON Pointer of the first member (depth first, in document order) for which `test`
/// holds.
fn first_member(schema: &Value, test: &dyn Fn(&str, &Value) -> bool) -> Option<String> {
    let mut stack = vec![(String::new(), schema)];
    while let Some((at, node)) = stack.pop() {
        match node {
            Value::Object(map) => {
                for (key, value) in map {
                    if test(key, value) {
                        return Some(format!("{at}/{}", escape_token(key)));
                    }
                }
                let children = map
                    .iter()
                    .map(|(key, value)| (format!("{at}/{}", escape_token(key)), value));
                stack.extend(children.rev());
            }
            Value::Array(items) => {
                let children = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (format!("{at}/{i}"), v));
                stack.extend(children.rev());
            }
            _ => {}
        }
    }
    None
}

/// Whether `error` only says the engine gave up on a pattern, which says nothing about the
/// value.
pub fn gave_up(error: &ValidationError<'_>) -> bool {
    matches!(
        error.kind(),
        ValidationErrorKind::BacktrackLimitExceeded { .. }
            | ValidationErrorKind::RegexEngineFailure { .. }
    )
}

/// Whether any object inside `schema` (itself included) has a member for which `test` holds.
pub fn any_member(schema: &Value, test: impl Fn(&str, &Value) -> bool) -> bool {
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if map.iter().any(|(key, value)| test(key, value)) {
                    return true;
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

/// Whether `schema` has a `pattern` keyword anywhere (a `pattern` member that is a string).
pub fn has_pattern(schema: &Value) -> bool {
    any_member(schema, |key, value| key == "pattern" && value.is_string())
}

/// `schema` without its `pattern` keywords, for validating once a [`PatternBudget`] is spent:
/// every other constraint still holds. Values that are data rather than schemas (`const`,
/// `enum`, `default`, `examples`) are kept as written.
pub fn without_patterns(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, value)| !(key.as_str() == "pattern" && value.is_string()))
                .map(|(key, value)| {
                    let value = match key.as_str() {
                        "const" | "enum" | "default" | "examples" => value.clone(),
                        _ => without_patterns(value),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_patterns).collect()),
        other => other.clone(),
    }
}

/// A validator for an `inputSchema`: the draft comes from `$schema` (2020-12 when absent);
/// remote references are never fetched, so a schema that needs one cannot be used, and neither can
/// a schema naming a `$schema` dialect the validator does not know. The linter reports exactly
/// what this refuses, so a plan never meets an unusable schema lint could have flagged. Each
/// `pattern` match stops after [`BACKTRACK_LIMIT`] steps.
pub fn compile_input_schema(schema: &Value) -> Result<Validator, String> {
    PatternBudget::with_validations(0).compile_input_schema(schema)
}
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unusable_schemas_say_why() {
        assert!(compile_input_schema(&json!({"type": "object"})).is_ok());
        assert!(
            compile_input_schema(
                &json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"})
            )
            .is_ok()
        );
        for schema in [
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.invalid/a.json"}}}),
            json!({"$schema": "https://example.invalid/dialect", "type": "object"}),
            json!({"type": "object", "properties": {"a": {"type": 5}}}),
        ] {
            let error = compile_input_schema(&schema).err();
            assert!(error.is_some(), "{schema}");
        }
    }

    #[test]
    fn unusable_schemas_are_explained_in_our_words_with_the_pointer() {
        for (schema, says) in [
            (
                json!({"type": "object", "properties": {"a/b": {"$ref": "https://example.invalid/a.json"}}}),
                "`$ref` at /properties/a~1b/$ref refers to 'https://example.invalid/a.json'",
            ),
            (
                json!({"allOf": [{"$ref": "other.json#/x"}]}),
                "`$ref` at /allOf/0/$ref refers to",
            ),
            (
                json!({"$schema": "https://example.invalid/dialect", "type": "object"}),
                "`$schema` at /$schema names 'https://example.invalid/dialect'",
            ),
            (
                json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
                "`$ref` at /properties/a/$ref points to",
            ),
        ] {
            let why = compile_input_schema(&schema).err().unwrap_or_default();
            assert!(why.contains(says), "{schema}: {why}");
            assert!(!why.contains("feature"), "{why}");
        }
    }

    #[test]
    fn patterns_are_found_and_removed_where_they_are_keywords() {
        let schema = json!({"type": "object", "properties": {
            "pattern": {"type": "string", "pattern": "^a+$"},
            "b": {"const": {"pattern": "kept"}, "enum": [{"pattern": "kept"}]}
        }});
        assert!(has_pattern(&schema));
        let stripped = without_patterns(&schema);
        assert!(!has_pattern(&stripped["properties"]["pattern"]));
        assert_eq!(stripped["properties"]["pattern"], json!({"type": "string"}));
        assert_eq!(stripped["properties"]["b"], schema["properties"]["b"]);
        assert!(!has_pattern(&json!({"type": "object", "pattern": 5})));
    }

    #[test]
    fn a_budget_is_spent_once_and_matches_are_cut_off() {
        let mut budget = PatternBudget::with_validations(2);
        assert!(budget.take() && budget.take());
        assert!(!budget.take());
        assert_eq!(budget.spent(), 2);
        // A catastrophic pattern stops at the per-match limit and says so.
        let validator = PatternBudget::new()
            .compile_input_schema(&json!({"type": "string", "pattern": r"^(a|a)*\1c$"}))
            .unwrap();
        let value = json!("a".repeat(40));
        let errors: Vec<_> = validator.iter_errors(&value).collect();
        assert!(
            !errors.is_empty() && errors.iter().all(gave_up),
            "{errors:?}"
        );
    }
}
