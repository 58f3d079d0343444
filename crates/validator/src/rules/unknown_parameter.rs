use crate::Severity;
use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus};
use mcp_recovery_schema_reason::{Knowledge, object_shape};
use crate::context::{Context, Site};

declare_rule! {
    /// ## What it does
    /// Reports a bound parameter that the compensating tool's `inputSchema` does not declare
    /// (neither in `properties` nor through `patternProperties`, `allOf` or local `$ref`s).
    /// It is an error when the compensator forbids other properties
    /// (`additionalProperties: false`), else a warning.
    ///
    /// ## Why is this bad?
    /// With `additionalProperties: false` the compensating call is rejected. Otherwise the
    /// argument is silently ignored, which usually means a typo: the parameter the compensator
    /// needs gets no value.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [
    ///   {"name": "open_ticket", "annotations": {"recovery": {"strategy": "compensation",
    ///     "compensatingOperation": {"operationId": "close_ticket",
    ///       "parameters": {"ticket": "$response.body#/ticketId"}}}}},
    ///   {"name": "close_ticket", "inputSchema": {"type": "object",
    ///     "properties": {"ticketId": {"type": "string"}}, "additionalProperties": false}}
    /// ]}
    /// ```
    ///
    /// Use instead: `"parameters": {"ticketId": "$response.body#/ticketId"}`.
    summary: "a bound parameter is not in the compensator's `properties` (error if compensator has `additionalProperties: false`, else warning)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        let Some(schema) = site.compensator_input_schema() else {
            continue;
        };
        let shape = object_shape(schema, schema);
        for binding in &site.compensation.bindings {
            if shape.declares(&binding.parameter) == Knowledge::No {
                out.push(unknown(
                    &site,
                    &binding.parameter,
                    shape.additional_forbidden,
                ));
            }
        }
    }
}

fn unknown(site: &Site<'_, '_>, parameter: &str, forbidden: bool) -> Finding {
    let (severity, consequence) = if forbidden {
        (
            Severity::Error,
            "it forbids other properties, so the compensating call would be rejected",
        )
    } else {
        (Severity::Warning, "the argument would be ignored")
    };
    Finding::new(
        Rule::UnknownParameter,
        site.binding_pointer(parameter),
        format!(
            "parameter '{parameter}' is not declared by the inputSchema of '{}'; {consequence}",
            site.compensation.tool
        ),
    )
    .tool(site.tool_name())
    .focus(Focus::Key)
    .severity(severity)
    .help("bind only parameters the compensating tool declares (check the spelling)")
}
