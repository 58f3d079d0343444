use mcp_recovery_model::Hint;

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, Site};

declare_rule! {
    /// ## What it does
    /// Reports a compensating tool that is annotated `readOnlyHint: true`.
    ///
    /// ## Why is this bad?
    /// A compensating call must change state to undo the original effect. A tool that declares it
    /// changes nothing cannot undo anything: either the compensator is the wrong tool (a `get_…`
    /// instead of a `delete_…`), or its hint is wrong.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [
    ///   {"name": "create_draft", "annotations": {"recovery": {"strategy": "compensation",
    ///     "compensatingOperation": {"operationId": "get_draft",
    ///       "parameters": {"draftId": "$response.body#/draftId"}}}}},
    ///   {"name": "get_draft", "annotations": {"readOnlyHint": true}}
    /// ]}
    /// ```
    ///
    /// Use instead: compensate with `delete_draft`.
    summary: "the compensating tool declares `readOnlyHint: true`",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        if site
            .compensator_tool()
            .is_some_and(|c| c.hint(Hint::ReadOnly) == Some(true))
        {
            out.push(read_only_compensator(&site));
        }
    }
}

fn read_only_compensator(site: &Site<'_, '_>) -> Finding {
    Finding::new(
        Rule::ReadOnlyCompensator,
        site.target_pointer(),
        format!(
            "compensating tool '{}' is annotated readOnlyHint: true, so it cannot undo '{}'",
            site.compensation.tool, site.typed.name
        ),
    )
    .tool(site.tool_name())
    .help("name a tool that reverses the effect, or correct the compensator's readOnlyHint")
}
