use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus};
use mcp_recovery_schema_reason::Knowledge;
use crate::context::{BodyRead, Context};

declare_rule! {
    /// ## What it does
    /// Reports a body binding whose pointer passes through a property that the source schema does
    /// not list in `required` (`outputSchema` for `$response.body`, `inputSchema` for
    /// `$request.body`), or an element reference of an overlay's map binding passing through a
    /// member the array's items do not require.
    ///
    /// ## Why is this bad?
    /// A valid call may lack that property. When it does, the binding cannot be resolved, and the
    /// whole compensation is unavailable: an orchestrator never sends a partial compensating call.
    ///
    /// ## Example
    /// ```json
    /// {"outputSchema": {"type": "object", "properties": {"ticketId": {"type": "string"}}},
    ///  "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
    ///    "operationId": "close_ticket", "parameters": {"ticketId": "$response.body#/ticketId"}}}}}
    /// ```
    ///
    /// Use instead: add `"required": ["ticketId"]` to the `outputSchema`.
    summary: "the pointer passes through a property that is not `required` (may be absent ⇒ compensation unavailable at run time)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for read in ctx.body_reads() {
        let Some(resolution) = read.resolution() else {
            continue;
        };
        if resolution.exists == Knowledge::No {
            continue;
        }
        if let Some(token) = resolution
            .optional_at
            .and_then(|i| read.pointer.tokens().get(i))
        {
            out.push(optional(&read, token));
        }
    }
    for read in ctx.item_reads() {
        let Some(resolution) = read.resolution() else {
            continue;
        };
        if resolution.exists == Knowledge::No {
            continue;
        }
        let first = read.first_item_token();
        if let Some(token) = resolution
            .optional_at
            .filter(|at| *at >= first)
            .and_then(|at| read.item.tokens().get(at - first))
        {
            out.push(
                Finding::new(
                    Rule::OptionalSource,
                    read.binding_pointer(),
                    format!(
                        "{} passes through '{token}', which the elements in the {} of '{}' do not require; when one lacks it the compensation is unavailable",
                        read.written(),
                        read.schema_name(),
                        read.site.typed.name
                    ),
                )
                .tool(read.site.tool_name())
                .help(format!(
                    "list '{token}' in `required` of the elements in the {}",
                    read.schema_name()
                )),
            );
        }
    }
}

fn optional(read: &BodyRead<'_, '_>, token: &str) -> Finding {
    let focus = read.binding.binding.as_ref().map_or(Focus::Value, |b| {
        crate::context::expression_focus(&read.binding.raw, b, read.expression)
    });
    Finding::new(
        Rule::OptionalSource,
        read.binding_pointer(),
        format!(
            "`{}` passes through '{token}', which the {} of '{}' does not require; when it is absent the compensation is unavailable",
            read.written(),
            read.schema_name(),
            read.site.typed.name
        ),
    )
    .tool(read.site.tool_name())
    .focus(focus)
    .help(format!("list '{token}' in `required` of the {}", read.schema_name()))
}
