use mcp_recovery_model::COMPENSATION_STRATEGY;

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, excerpt};
use crate::context::Context;

declare_rule! {
    /// ## What it does
    /// Reports a SEP-3172 `recovery` whose `strategy` is not `"compensation"`, the only strategy
    /// the proposal defines.
    ///
    /// ## Why is this bad?
    /// Orchestrators ignore a recovery declaration with a strategy they do not know, so the tool
    /// is treated as if it declared no recovery at all.
    ///
    /// ## Example
    /// ```json
    /// {"annotations": {"recovery": {"strategy": "undo", "compensatingOperation": {
    ///   "operationId": "delete_label", "parameters": {"labelId": "$response.body#/id"}}}}}
    /// ```
    ///
    /// Use instead: `"strategy": "compensation"`.
    summary: "`strategy` is not `\"compensation\"` (orchestrators ignore it)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        let Some(recovery) = typed.sep_recovery() else {
            continue;
        };
        if recovery.strategy != COMPENSATION_STRATEGY {
            out.push(
                Finding::new(
                    Rule::UnknownStrategy,
                    tool.at("/annotations/recovery/strategy"),
                    format!(
                        "recovery strategy '{}' is not \"{COMPENSATION_STRATEGY}\"; orchestrators ignore this declaration",
                        excerpt(&recovery.strategy, 60)
                    ),
                )
                .tool(tool.name)
                .help("use \"strategy\": \"compensation\""),
            );
        }
    }
}
