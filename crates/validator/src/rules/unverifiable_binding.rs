use mcp_recovery_model::BodySide;

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus};
use crate::context::{BodyRead, Context};

declare_rule! {
    /// ## What it does
    /// Reports a `$response.body` binding (or `$.output.structuredContent…` path) on a tool that
    /// declares no `outputSchema`.
    ///
    /// ## Why is this bad?
    /// Without an `outputSchema` nothing promises that the result carries `structuredContent`,
    /// let alone the field the binding reads; neither the linter nor an orchestrator can check the
    /// binding before a rollback needs it.
    ///
    /// ## Example
    /// ```json
    /// {"name": "create_label", "inputSchema": {"type": "object"},
    ///  "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
    ///    "operationId": "delete_label", "parameters": {"labelId": "$response.body#/id"}}}}}
    /// ```
    ///
    /// Use instead: declare an `outputSchema` with a required `id`, and return it in
    /// `structuredContent`.
    summary: "`$response.body` binding on a tool without `outputSchema`",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for read in ctx.body_reads() {
        if read.side == BodySide::Response && read.schema.is_none() {
            out.push(unverifiable(&read));
        }
    }
}

fn unverifiable(read: &BodyRead<'_, '_>) -> Finding {
    let focus = read.binding.binding.as_ref().map_or(Focus::Value, |b| {
        crate::context::expression_focus(&read.binding.raw, b, read.expression)
    });
    Finding::new(
        Rule::UnverifiableBinding,
        read.binding_pointer(),
        format!(
            "'{}' declares no outputSchema, so `{}` cannot be checked",
            read.site.typed.name,
            read.written()
        ),
    )
    .tool(read.site.tool_name())
    .focus(focus)
    .help("declare an outputSchema that requires the field, and return it in structuredContent")
}
