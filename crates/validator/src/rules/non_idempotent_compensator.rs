use mcp_recovery_model::Hint;

use crate::codes::{INFO, Rule, declare_rule};
use crate::finding::Finding;
use crate::rules::{Context, Site};

declare_rule! {
    /// ## What it does
    /// Notes a compensating tool that does not declare `idempotentHint: true`.
    ///
    /// ## Why is this bad?
    /// Rollbacks run when things already go wrong, and a compensating call whose response is lost
    /// is retried. If the compensator is not idempotent, a retry may apply the compensation twice
    /// (refund twice, delete a re-created record). This is the duplicate-effect anomaly (A1) of
    /// the effect-history model; an idempotent compensator rules it out.
    ///
    /// ## Example
    /// ```json
    /// {"name": "refund_payment", "annotations": {"readOnlyHint": false}}
    /// ```
    ///
    /// Use instead: make the compensator idempotent (for example keyed by the original
    /// transaction id) and declare `idempotentHint: true`.
    code: "R114",
    name: "non-idempotent-compensator",
    default: INFO,
    summary: "compensator lacks `idempotentHint: true`; a retried compensation may apply twice (A1)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        if site
            .compensator_tool()
            .is_some_and(|c| c.hint(Hint::Idempotent) != Some(true))
        {
            out.push(not_idempotent(&site));
        }
    }
}

fn not_idempotent(site: &Site<'_, '_>) -> Finding {
    Finding::new(
        Rule::NonIdempotentCompensator,
        site.target_pointer(),
        format!(
            "compensating tool '{}' does not declare idempotentHint: true; a retried compensation may apply twice",
            site.compensation.tool
        ),
    )
    .tool(site.tool_name())
    .help("make the compensator idempotent and set its `annotations.idempotentHint` to true")
}
