use std::cell::RefCell;
use std::collections::HashMap;

use jsonschema::{Draft, Validator};
use mcp_recovery_model::{
    Binding, BodySide, JsonPointer, ParameterBinding, PatternBudget, RuntimeExpression,
    TemplatePart, any_member, gave_up, has_pattern,
};
use serde_json::Value;

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus, excerpt, show};
use mcp_recovery_schema_reason::{
    Knowledge, Resolution, TypeSet, object_shape, resolve, resolve_as, subschemas_at,
};
use crate::context::{Context, Site};

declare_rule! {
    /// ## What it does
    /// Compares, for each bound parameter, the JSON types the binding can produce with the types
    /// the compensator's `inputSchema` accepts for that parameter, and reports bindings whose
    /// types cannot meet. A body expression produces what its source schema allows at the
    /// pointer (for arrays, item types are compared too); a template always produces a string,
    /// and each expression embedded in it must be able to yield a string, a number or a boolean
    /// (an object, an array or `null` cannot be inserted); a constant is validated against the
    /// parameter's schema. `integer` counts as a `number`. An overlay's map binding yields an
    /// array: its parameter must accept one, its `$map` must be able to select one, and each
    /// element reference is compared with what the compensator accepts where its value lands
    /// (a member the compensator's items cannot hold is reported too). In a server's own
    /// declaration a `{"$map": …}` object is a constant and is validated as one.
    ///
    /// ## Why is this bad?
    /// The resolved arguments are validated against the compensator's `inputSchema` before the
    /// call; a value of the wrong type makes the compensation unavailable at run time.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [
    ///   {"name": "book_room", "outputSchema": {"type": "object",
    ///      "properties": {"bookingId": {"type": "integer"}}, "required": ["bookingId"]},
    ///    "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
    ///      "operationId": "cancel_booking", "parameters": {"bookingId": "$response.body#/bookingId"}}}}},
    ///   {"name": "cancel_booking", "inputSchema": {"type": "object",
    ///      "properties": {"bookingId": {"type": "string"}}, "required": ["bookingId"]}}
    /// ]}
    /// ```
    ///
    /// Use instead: make both sides agree on the type (here, `string` or `integer` in both).
    summary: "the JSON types the source can hold do not intersect the types the parameter accepts (arrays compare item types; constants are validated; an expression embedded in a template must yield a string, number or boolean)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let mut constants = Constants {
        validators: HashMap::new(),
        patterns: &ctx.list.patterns,
    };
    for site in ctx.sites() {
        let Some(compensator_schema) = site.compensator_input_schema() else {
            continue;
        };
        let shape = object_shape(compensator_schema, compensator_schema);
        for binding in &site.compensation.bindings {
            let Ok(parsed) = &binding.binding else {
                continue;
            };
            let parameter = JsonPointer::from_tokens([binding.parameter.as_str()]);
            let accepts = resolve(compensator_schema, &parameter);
            if accepts.exists == Knowledge::No {
                // A parameter the compensator does not declare is R110's; one it declares with
                // a schema no value satisfies (`false`, types that do not meet) takes nothing.
                if shape.declares(&binding.parameter) != Knowledge::No {
                    let what = "its schema in the inputSchema accepts no value, so no binding \
                                can satisfy it";
                    out.push(mismatch(&site, binding, what, Focus::Value));
                }
                continue;
            }
            match parsed {
                Binding::Expression(expression) => {
                    let Some(source) = source_of(&site, expression) else {
                        continue;
                    };
                    if let Some(problem) = compare(&source, &accepts) {
                        let written = match &binding.raw {
                            Value::String(text) => excerpt(text, 120),
                            _ => expression.to_string(),
                        };
                        let what = format!("`{written}` yields {problem}");
                        out.push(mismatch(&site, binding, &what, Focus::Value));
                    }
                }
                Binding::Template(template) => {
                    if let Some(accepted) = accepts.types
                        && !accepted.intersects(TypeSet::STRING)
                    {
                        let what =
                            format!("the template yields a string, but it accepts {accepted}");
                        out.push(mismatch(&site, binding, &what, Focus::Value));
                    }
                    for expression in template.parts.iter().filter_map(|part| match part {
                        TemplatePart::Expression(expression) => Some(expression),
                        TemplatePart::Literal(_) => None,
                    }) {
                        if let Some(source) = source_of(&site, expression)
                            && let Some(found) = source.types
                            && !found.intersects(TypeSet::INSERTABLE)
                        {
                            let what = format!(
                                "`{{{expression}}}` yields {found}, but a template inserts only strings, numbers and booleans"
                            );
                            let focus = crate::context::expression_focus(&binding.raw, parsed, expression);
                            out.push(mismatch(&site, binding, &what, focus));
                        }
                    }
                }
                // What a read returns before the call is not described by any schema here.
                Binding::Before(_) => {}
                Binding::Map(map) => {
                    if let Some(accepted) = accepts.types
                        && !accepted.intersects(TypeSet::ARRAY)
                    {
                        let what =
                            format!("the map binding yields an array, but it accepts {accepted}");
                        out.push(mismatch(&site, binding, &what, Focus::Value));
                    }
                    if let Some(expression) = map.source.expression()
                        && let Some(source) = source_of(&site, expression)
                        && let Some(found) = source.types
                        && !found.intersects(TypeSet::ARRAY)
                    {
                        let what = format!(
                            "`$map` reads `{}`, which holds {found}, never an array",
                            map.source
                        );
                        out.push(mismatch(&site, binding, &what, Focus::Value));
                    }
                }
                Binding::Constant(value) => {
                    if let Some(problem) =
                        constants.problem(compensator_schema, &parameter, &accepts, value)
                    {
                        out.push(mismatch(&site, binding, &problem, Focus::Value));
                    }
                }
            }
        }
    }
    check_items(ctx, out);
}

/// Each element reference of a map binding against what the compensator accepts where its
/// value lands: a member the elements cannot have, or types that cannot meet.
fn check_items(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for read in ctx.item_reads() {
        let Some(compensator_schema) = read.site.compensator_input_schema() else {
            continue;
        };
        let parameter = JsonPointer::from_tokens([read.binding.parameter.as_str()]);
        if resolve(compensator_schema, &parameter).exists == Knowledge::No {
            continue;
        }
        let target = read.target();
        let accepts = resolve(compensator_schema, &target);
        let what = if accepts.exists == Knowledge::No {
            Some(format!(
                "the elements it accepts can hold no value at '{}', where {} lands",
                JsonPointer::from_tokens(target.tokens().iter().skip(2)),
                read.written()
            ))
        } else {
            read.resolution()
                .filter(|source| source.exists != Knowledge::No)
                .and_then(|source| compare(&source, &accepts))
                .map(|problem| format!("{} yields {problem}", read.written()))
        };
        if let Some(what) = what {
            out.push(mismatch_at(
                &read.site,
                read.binding,
                read.binding_pointer(),
                &what,
                Focus::Value,
            ));
        }
    }
}

/// What the source schema of a body expression allows at its pointer, read as the site's
/// carrier reads it; `None` when it reads no body, there is no schema, or nothing can be there
/// (R106 reports that).
fn source_of(site: &Site<'_, '_>, expression: &RuntimeExpression) -> Option<Resolution> {
    let (side, pointer) = expression.body_target()?;
    let schema = match side {
        BodySide::Request => site.tool.input_schema(),
        BodySide::Response => site.tool.output_schema(),
    }?;
    let source = resolve_as(schema, &pointer, site.declared.carrier.reading());
    (source.exists != Knowledge::No).then_some(source)
}

/// Why source values can never be accepted, if they cannot.
fn compare(source: &Resolution, accepts: &Resolution) -> Option<String> {
    let (Some(from), Some(to)) = (source.types, accepts.types) else {
        return None;
    };
    if !from.intersects(to) {
        return Some(format!("{from}, but it accepts {to}"));
    }
    // When only arrays can meet, their items must be able to meet too.
    if (from & to) == TypeSet::ARRAY
        && let (Some(items_from), Some(items_to)) = (source.item_types, accepts.item_types)
        && !items_from.intersects(items_to)
    {
        return Some(format!(
            "arrays of {items_from}, but it accepts arrays of {items_to}"
        ));
    }
    None
}

/// Constant validation over one document: each subschema compiled once (by address, the
/// document outlives the check), and one pattern budget ([`PatternBudget`]) for the file. Past
/// the budget, constants are still type-checked, and their patterns are left unjudged.
struct Constants<'l> {
    /// By the address of the subschema: the document is neither moved nor changed while the
    /// rules run, so an address names one subschema for the whole check.
    validators: HashMap<*const Value, Option<(Validator, bool)>>,
    patterns: &'l RefCell<PatternBudget>,
}

/// The compiled `schema` and whether it has a `pattern`; `None` when it cannot be compiled on
/// its own (it refers elsewhere; its types were checked).
fn compiled<'v>(
    validators: &'v mut HashMap<*const Value, Option<(Validator, bool)>>,
    patterns: &PatternBudget,
    schema: &Value,
    draft: Draft,
) -> Option<&'v (Validator, bool)> {
    validators
        .entry(std::ptr::from_ref(schema))
        .or_insert_with(|| {
            if any_member(schema, |key, _| key == "$ref" || key == "$dynamicRef") {
                return None;
            }
            let validator = patterns.options().with_draft(draft).build(schema).ok()?;
            Some((validator, has_pattern(schema)))
        })
        .as_ref()
}

/// Whether a number anywhere inside `value` is too large for a 64-bit float (`1e400`).
fn holds_number_beyond_floats(value: &Value) -> bool {
    match value {
        Value::Number(n) => !n.as_f64().is_some_and(f64::is_finite),
        Value::Array(items) => items.iter().any(holds_number_beyond_floats),
        Value::Object(members) => members.values().any(holds_number_beyond_floats),
        _ => false,
    }
}

impl Constants<'_> {
    fn problem(
        &mut self,
        root: &Value,
        parameter: &JsonPointer,
        accepts: &Resolution,
        value: &Value,
    ) -> Option<String> {
        let found = TypeSet::of_value(value);
        if let Some(accepted) = accepts.types
            && !found.intersects(accepted)
        {
            let map_note = if value.get(mcp_recovery_model::MAP_KEY).is_some() {
                " (a map binding is read only where an overlay declares the recovery; here it is a constant)"
            } else {
                ""
            };
            return Some(format!(
                "the constant {} is {found}, but it accepts {accepted}{map_note}",
                show(value)
            ));
        }
        // A schema validator compares numbers as floats: one beyond their range is judged by its
        // type alone.
        if holds_number_beyond_floats(value) {
            return None;
        }
        let draft = draft_of(root);
        for schema in subschemas_at(root, parameter)? {
            let Some((validator, has_pattern)) =
                compiled(&mut self.validators, &self.patterns.borrow(), schema, draft)
            else {
                continue;
            };
            if *has_pattern && !self.patterns.borrow_mut().take() {
                continue;
            }
            // A pattern the engine gave up on says nothing about the value.
            let error = validator.iter_errors(value).find(|e| !gave_up(e));
            if let Some(error) = error.map(|e| excerpt(&e.to_string(), 120)) {
                return Some(format!(
                    "the constant {} does not fit its schema: {error}",
                    show(value),
                ));
            }
        }
        None
    }
}

fn draft_of(root: &Value) -> Draft {
    let declared = root
        .get("$schema")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if declared.contains("draft-04") {
        Draft::Draft4
    } else if declared.contains("draft-06") {
        Draft::Draft6
    } else if declared.contains("draft-07") {
        Draft::Draft7
    } else if declared.contains("2019-09") {
        Draft::Draft201909
    } else {
        Draft::Draft202012
    }
}

fn mismatch(site: &Site<'_, '_>, binding: &ParameterBinding, what: &str, focus: Focus) -> Finding {
    mismatch_at(site, binding, site.binding_pointer(&binding.parameter), what, focus)
}

fn mismatch_at(
    site: &Site<'_, '_>,
    binding: &ParameterBinding,
    pointer: String,
    what: &str,
    focus: Focus,
) -> Finding {
    Finding::new(
        Rule::TypeMismatch,
        pointer,
        format!(
            "parameter '{}' of '{}': {what}",
            binding.parameter, site.compensation.tool
        ),
    )
    .tool(site.tool_name())
    .focus(focus)
    .help("bind a value of a type the compensating tool accepts, or align the two schemas")
}

#[cfg(test)]
mod tests {
    use crate::{LintOptions, Linter};
    use serde_json::json;

    /// `n` tools each compensated by `undo` with the constant `value` for a parameter whose
    /// schema has `pattern`.
    fn document(n: usize, pattern: &str, value: &str) -> Vec<u8> {
        let mut tools: Vec<_> = (0..n)
            .map(|i| {
                json!({
                    "name": format!("t{i}"),
                    "inputSchema": {"type": "object"},
                    "annotations": {"recovery": {"strategy": "compensation",
                        "compensatingOperation": {"operationId": "undo", "parameters": {"p": value}}}}
                })
            })
            .collect();
        tools.push(json!({
            "name": "undo",
            "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "pattern": pattern}}},
            "annotations": {"idempotentHint": true}
        }));
        serde_json::to_vec(&json!({ "tools": tools })).unwrap_or_default()
    }

    fn r111(source: &[u8]) -> usize {
        let linter = Linter::new(LintOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let report = linter.lint_source(source);
        report
            .diagnostics
            .iter()
            .filter(|d| d.code == "R111")
            .count()
    }

    #[test]
    fn constants_are_validated_against_patterns() {
        assert_eq!(r111(&document(3, "^[0-9]+$", "12x")), 3);
        assert_eq!(r111(&document(3, "^[0-9]+$", "123")), 0);
        // Look-around needs the backtracking engine: still judged.
        assert_eq!(r111(&document(1, "^(?=x)[a-z]+$", "abc")), 1);
    }

    /// A number's type is what its text says, also beyond the range of a float.
    #[test]
    fn constants_beyond_floats_are_typed_by_their_text() {
        let document = |value: &str, accepted: &str| {
            format!(
                r#"{{"tools": [{{"name": "t", "inputSchema": {{"type": "object"}},
                  "annotations": {{"recovery": {{"strategy": "compensation",
                    "compensatingOperation": {{"operationId": "undo", "parameters": {{"n": {value}}}}}}}}}}},
                  {{"name": "undo", "annotations": {{"idempotentHint": true}},
                   "inputSchema": {{"type": "object", "properties": {{"n": {{"type": "{accepted}"}}}}}}}}]}}"#
            )
        };
        assert_eq!(r111(document("1e400", "integer").as_bytes()), 0);
        assert_eq!(r111(document("-2E+400", "integer").as_bytes()), 0);
        assert_eq!(r111(document("1e400", "number").as_bytes()), 0);
        assert_eq!(r111(document("1.5e-400", "integer").as_bytes()), 1);
        assert_eq!(r111(document("[1e400]", "integer").as_bytes()), 1);
        assert_eq!(r111(document("1e400", "string").as_bytes()), 1);
    }

    /// A pattern that backtracks without end is cut off by the per-match limit, and reported as
    /// nothing rather than as a mismatch; past the per-file budget patterns are not evaluated.
    #[test]
    fn catastrophic_patterns_are_bounded_and_never_reported() {
        let value = "a".repeat(40);
        assert_eq!(r111(&document(3, r"^(a|a)*\1c$", &value)), 0);
        let many = mcp_recovery_model::PATTERN_BUDGET + 5;
        assert_eq!(
            r111(&document(many, "^[0-9]+$", "12x")),
            mcp_recovery_model::PATTERN_BUDGET
        );
    }
}
