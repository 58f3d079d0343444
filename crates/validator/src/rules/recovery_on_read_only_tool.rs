use mcp_recovery_model::{Hint, Reversibility};

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, Site};

declare_rule! {
    /// ## What it does
    /// Reports a compensating call declared on a tool whose annotations say `readOnlyHint: true`.
    ///
    /// ## Why is this bad?
    /// A read-only tool changes nothing, so there is nothing to compensate. One of the two
    /// declarations is wrong: either the tool does change state (and the hint misleads clients
    /// that skip confirmation for read-only tools), or the rollback would run a needless call.
    ///
    /// ## Example
    /// ```json
    /// {"name": "get_order", "annotations": {"readOnlyHint": true, "recovery": {
    ///   "strategy": "compensation", "compensatingOperation": {
    ///     "operationId": "cancel_order", "parameters": {"orderId": "$request.body#/orderId"}}}}}
    /// ```
    ///
    /// Use instead: drop the recovery, or set `readOnlyHint: false` if the tool changes state.
    summary: "`readOnlyHint: true` yet recovery is declared",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        if site.typed.hint(Hint::ReadOnly) == Some(true)
            && site.declared.reversibility == Reversibility::Compensable
        {
            out.push(read_only(&site));
        }
    }
}

fn read_only(site: &Site<'_, '_>) -> Finding {
    Finding::new(
        Rule::RecoveryOnReadOnlyTool,
        site.carrier_pointer(),
        format!(
            "'{}' is annotated readOnlyHint: true yet declares a compensating call to '{}'",
            site.typed.name, site.compensation.tool
        ),
    )
    .tool(site.tool_name())
    .help("remove the recovery declaration, or set readOnlyHint to false if the tool changes state")
}
