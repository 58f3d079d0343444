use jsonschema::Draft;
use mcp_recovery_model::{Binding, JsonPointer, ParameterBinding};
use serde_json::Value;

use crate::codes::{ERROR, Rule, declare_rule};
use crate::finding::{Finding, Focus, excerpt, show};
use crate::resolve::{Knowledge, Resolution, TypeSet, resolve, subschemas_at};
use crate::rules::{Context, Site};

declare_rule! {
    /// ## What it does
    /// Compares, for each bound parameter, the JSON types the binding can produce with the types
    /// the compensator's `inputSchema` accepts for that parameter, and reports bindings whose
    /// types cannot meet. A body expression produces what its source schema allows at the
    /// pointer (for arrays, item types are compared too); a template always produces a string;
    /// a constant is validated against the parameter's schema. `integer` counts as a `number`.
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
    code: "R111",
    name: "type-mismatch",
    default: ERROR,
    summary: "the JSON types the source can hold do not intersect the types the parameter accepts (arrays compare item types; constants are validated)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        let Some(compensator_schema) = site.compensator_input_schema() else {
            continue;
        };
        for binding in &site.compensation.bindings {
            let Ok(parsed) = &binding.binding else {
                continue;
            };
            let parameter = JsonPointer::from_tokens([binding.parameter.as_str()]);
            let accepts = resolve(compensator_schema, &parameter);
            if accepts.exists == Knowledge::No {
                continue;
            }
            match parsed {
                Binding::Expression(expression) => {
                    let Some((side, pointer)) = expression.body_target() else {
                        continue;
                    };
                    let schema = match side {
                        mcp_recovery_model::BodySide::Request => site.tool.input_schema(),
                        mcp_recovery_model::BodySide::Response => site.tool.output_schema(),
                    };
                    let Some(schema) = schema else { continue };
                    let source = resolve(schema, &pointer);
                    if source.exists == Knowledge::No {
                        continue;
                    }
                    if let Some(problem) = compare(&source, &accepts) {
                        let written = match &binding.raw {
                            Value::String(text) => excerpt(text, 120),
                            _ => expression.to_string(),
                        };
                        let what = format!("`{written}` yields {problem}");
                        out.push(mismatch(&site, binding, &what, Focus::Value));
                    }
                }
                Binding::Template(_) => {
                    if let Some(accepted) = accepts.types
                        && !accepted.intersects(TypeSet::STRING)
                    {
                        let what =
                            format!("the template yields a string, but it accepts {accepted}");
                        out.push(mismatch(&site, binding, &what, Focus::Value));
                    }
                }
                Binding::Constant(value) => {
                    if let Some(problem) =
                        constant_problem(compensator_schema, &parameter, &accepts, value)
                    {
                        out.push(mismatch(&site, binding, &problem, Focus::Value));
                    }
                }
            }
        }
    }
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

fn constant_problem(
    root: &Value,
    parameter: &JsonPointer,
    accepts: &Resolution,
    value: &Value,
) -> Option<String> {
    let found = TypeSet::of_value(value);
    if let Some(accepted) = accepts.types
        && !found.intersects(accepted)
    {
        return Some(format!(
            "the constant {} is {found}, but it accepts {accepted}",
            show(value)
        ));
    }
    let draft = draft_of(root);
    for schema in subschemas_at(root, parameter)? {
        // A subschema that refers elsewhere cannot be compiled on its own; its types were checked.
        if mentions_ref(schema) {
            continue;
        }
        let Ok(validator) = jsonschema::options().with_draft(draft).build(schema) else {
            continue;
        };
        if let Some(error) = validator.iter_errors(value).next() {
            return Some(format!(
                "the constant {} does not fit its schema: {}",
                show(value),
                excerpt(&error.to_string(), 120)
            ));
        }
    }
    None
}

fn mentions_ref(schema: &Value) -> bool {
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if map.contains_key("$ref") || map.contains_key("$dynamicRef") {
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
    Finding::new(
        Rule::TypeMismatch,
        site.binding_pointer(&binding.parameter),
        format!(
            "parameter '{}' of '{}': {what}",
            binding.parameter, site.compensation.tool
        ),
    )
    .tool(site.tool_name())
    .focus(focus)
    .help("bind a value of a type the compensating tool accepts, or align the two schemas")
}
