use mcp_recovery_model::{Carrier, Reversibility};

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, ToolRef};

declare_rule! {
    /// ## What it does
    /// Reports a compensate-carrier declaration whose `reversibility` contradicts its
    /// `compensation`: `compensable` without a `compensation`, or `readonly`/`irreversible` with
    /// one.
    ///
    /// ## Why is this bad?
    /// An orchestrator cannot tell which half is true: a `compensable` tool without a compensating
    /// call cannot be rolled back, and a compensating call on an `irreversible` tool is either
    /// never used or the class is wrong.
    ///
    /// ## Example
    /// ```json
    /// {"_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable"}}}
    /// ```
    ///
    /// Use instead:
    /// ```json
    /// {"_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable", "compensation": {
    ///   "toolName": "delete_record", "parameterMapping": {"id": "$.output.structuredContent.id"}}}}}
    /// ```
    summary: "`compensable` without `compensation`, or `readonly`/`irreversible` with one",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(compensate) = tool.typed.as_ref().and_then(|t| t.compensate()) else {
            continue;
        };
        match (compensate.reversibility, &compensate.compensation) {
            (Reversibility::Compensable, None) => out.push(compensable_without_call(tool)),
            (Reversibility::Readonly, Some(_)) => out.push(call_on(tool, "readonly")),
            (Reversibility::Irreversible, Some(_)) => out.push(call_on(tool, "irreversible")),
            _ => {}
        }
    }
}

fn compensable_without_call(tool: &ToolRef<'_>) -> Finding {
    Finding::new(
        Rule::ReversibilityContradiction,
        tool.at(&format!("{}/reversibility", Carrier::Compensate.pointer())),
        "reversibility is 'compensable' but no compensation is declared",
    )
    .tool(tool.name)
    .help("add a `compensation` with `toolName` and `parameterMapping`, or declare the tool 'irreversible'")
}

fn call_on(tool: &ToolRef<'_>, class: &str) -> Finding {
    Finding::new(
        Rule::ReversibilityContradiction,
        tool.at(&format!("{}/compensation", Carrier::Compensate.pointer())),
        format!("reversibility is '{class}' yet a compensation is declared"),
    )
    .tool(tool.name)
    .help("declare reversibility 'compensable', or remove the compensation")
}
