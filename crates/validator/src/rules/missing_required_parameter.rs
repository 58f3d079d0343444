use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use mcp_recovery_schema_reason::object_shape;
use crate::context::{Context, Site};

declare_rule! {
    /// ## What it does
    /// Reports a parameter that the compensating tool's `inputSchema` lists in `required` (also
    /// through `allOf` and local `$ref`s) but the compensating call does not bind.
    ///
    /// ## Why is this bad?
    /// The compensating call would be rejected by the compensator's own input validation, so the
    /// rollback fails.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [
    ///   {"name": "reserve_seat", "annotations": {"recovery": {"strategy": "compensation",
    ///     "compensatingOperation": {"operationId": "release_seat", "parameters": {}}}}},
    ///   {"name": "release_seat", "inputSchema": {"type": "object",
    ///     "properties": {"seatId": {"type": "string"}}, "required": ["seatId"]}}
    /// ]}
    /// ```
    ///
    /// Use instead: bind it, `"parameters": {"seatId": "$request.body#/seatId"}`.
    summary: "a `required` parameter of the compensator is not bound",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        let Some(schema) = site.compensator_input_schema() else {
            continue;
        };
        let shape = object_shape(schema, schema);
        for required in shape.required {
            if !site
                .compensation
                .bindings
                .iter()
                .any(|b| b.parameter == required)
            {
                out.push(missing(&site, required));
            }
        }
    }
}

fn missing(site: &Site<'_, '_>, parameter: &str) -> Finding {
    Finding::new(
        Rule::MissingRequiredParameter,
        site.bindings_pointer(),
        format!(
            "compensating tool '{}' requires parameter '{parameter}', which is not bound",
            site.compensation.tool
        ),
    )
    .tool(site.tool_name())
    .help(format!(
        "bind '{parameter}', for example to a field of `$response.body` or `$request.body`"
    ))
}
