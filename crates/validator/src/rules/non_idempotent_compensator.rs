use mcp_recovery_model::Hint;

use crate::Severity;
use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, Site};

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
    ///
    /// The finding is an info, and a warning when the declaration itself asks for retries
    /// (`maxRetries` greater than 0): re-issuing a non-idempotent call is then planned, not only
    /// possible. A tool whose two carriers name the same compensator gets one finding.
    summary: "compensator lacks `idempotentHint: true`; a retried compensation may apply twice (A1); a warning when `maxRetries > 0`",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let sites: Vec<Site<'_, '_>> = ctx
        .sites()
        .filter(|site| {
            site.compensator_tool()
                .is_some_and(|c| c.hint(Hint::Idempotent) != Some(true))
        })
        .collect();
    for (i, site) in sites.iter().enumerate() {
        // Both carriers of one tool naming the same compensator are one finding, at the first.
        let same = |other: &Site<'_, '_>| {
            std::ptr::eq(other.tool, site.tool) && other.compensation.tool == site.compensation.tool
        };
        if sites[..i].iter().any(same) {
            continue;
        }
        let retried = sites[i..]
            .iter()
            .filter(|other| same(other))
            .any(|other| {
                other
                    .compensation
                    .max_retries
                    .as_ref()
                    .is_some_and(|n| n.saturating_u64() > 0)
            });
        out.push(not_idempotent(site, retried));
    }
}

fn not_idempotent(site: &Site<'_, '_>, retried: bool) -> Finding {
    let finding = Finding::new(
        Rule::NonIdempotentCompensator,
        site.target_pointer(),
        format!(
            "compensating tool '{}' does not declare idempotentHint: true; a retried compensation may apply twice{}",
            site.compensation.tool,
            if retried {
                ", and the declaration asks for retries (maxRetries > 0)"
            } else {
                ""
            }
        ),
    )
    .tool(site.tool_name())
    .help("make the compensator idempotent and set its `annotations.idempotentHint` to true");
    if retried {
        finding.severity(Severity::Warning)
    } else {
        finding
    }
}
