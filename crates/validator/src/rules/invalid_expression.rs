use mcp_recovery_model::{BindingError, Carrier};
use serde_json::Value;

use crate::codes::{Rule, declare_rule};
use crate::context::{Context, Site};
use crate::finding::{Finding, Focus};

declare_rule! {
    /// ## What it does
    /// Reports a binding that does not parse: a SEP-3172 parameter value that starts with `$` but
    /// is not a complete OpenAPI runtime expression, a template whose `{$…}` part is malformed or
    /// never closed, or a compensate-carrier `parameterMapping` value outside the JSONPath subset
    /// (`$.input.<name>…`, `$.output.structuredContent.<name>…`; no indices, wildcards, filters or
    /// `..`), or, in an overlay's carrier, a reference to the before-image (`$before.…`), which
    /// only the undo of an overlay's `before` has. The diagnostic points at the offending
    /// character.
    ///
    /// ## Why is this bad?
    /// An orchestrator cannot evaluate the binding, so the compensation is unavailable exactly
    /// when it is needed.
    ///
    /// ## Example
    /// ```json
    /// {"parameters": {"transactionId": "$response.body#transactionId"}}
    /// ```
    ///
    /// Use instead:
    /// ```json
    /// {"parameters": {"transactionId": "$response.body#/transactionId"}}
    /// ```
    summary: "a binding fails the grammar or the JSONPath subset",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        for binding in &site.compensation.bindings {
            if let Err(error) = &binding.binding {
                out.push(invalid(&site, &binding.parameter, &binding.raw, error));
            }
        }
    }
}

fn invalid(site: &Site<'_, '_>, parameter: &str, raw: &Value, error: &BindingError) -> Finding {
    let help = match site.declared.carrier {
        _ if matches!(error, BindingError::Before(_)) => {
            "write `$before.text`, `$before.blob` or `$before.body#/pointer`"
        }
        _ if matches!(error, BindingError::BeforeOutsideUndo) => {
            "bind from the call (`$request.body#/…`, `$response.body#/…`), or declare the undo under the tool's `before` with the read it needs"
        }
        _ if matches!(error, BindingError::Map { .. }) => {
            "write {\"$map\": \"$response.body#/items\", \"$each\": \"$item#/id\"}; \"$each\" may also be an object of element references and constants"
        }
        Carrier::Sep3172 => {
            "write a runtime expression such as `$response.body#/id` or `$request.body#/id`, or a template such as `order-{$response.body#/id}`"
        }
        Carrier::Compensate => {
            "write a path such as `$.input.id` or `$.output.structuredContent.id` (property names only)"
        }
    };
    let focus = match (raw, error.offset()) {
        (Value::String(_), Some(offset)) => Focus::InString(offset),
        _ => Focus::Value,
    };
    let pointer = match error {
        BindingError::Map { at, .. } => format!("{}{at}", site.binding_pointer(parameter)),
        _ => site.binding_pointer(parameter),
    };
    Finding::new(
        Rule::InvalidExpression,
        pointer,
        format!("the binding of parameter '{parameter}' is invalid: {error}"),
    )
    .tool(site.tool_name())
    .focus(focus)
    .help(help)
}
