use mcp_recovery_model::{Carrier, Hint, Reversibility};

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, ToolRef};

declare_rule! {
    /// ## What it does
    /// Compares the compensate carrier's `reversibility` with the tool's `readOnlyHint`, and
    /// reports `readonly` on a tool annotated `readOnlyHint: false`, or `irreversible` on a tool
    /// annotated `readOnlyHint: true`. (A compensating call on a read-only tool is R112.)
    ///
    /// ## Why is this bad?
    /// Clients use `readOnlyHint` to decide which calls need confirmation; orchestrators use
    /// `reversibility` to decide what to roll back. When they disagree, one of them is wrong, and
    /// either a state change goes unconfirmed or a harmless call is treated as dangerous.
    ///
    /// ## Example
    /// ```json
    /// {"annotations": {"readOnlyHint": false},
    ///  "_meta": {"dev.chronomcp/compensate": {"reversibility": "readonly"}}}
    /// ```
    ///
    /// Use instead: `readOnlyHint: true` if the tool changes nothing, else a reversibility of
    /// `compensable` or `irreversible`.
    summary: "compensate `reversibility: readonly` vs `readOnlyHint: false`, or the reverse",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        let Some(compensate) = typed.compensate() else {
            continue;
        };
        match (compensate.reversibility, typed.hint(Hint::ReadOnly)) {
            (Reversibility::Readonly, Some(false)) => out.push(contradiction(
                tool,
                "reversibility is 'readonly' but the tool is annotated readOnlyHint: false",
            )),
            (Reversibility::Irreversible, Some(true)) => out.push(contradiction(
                tool,
                "reversibility is 'irreversible' but the tool is annotated readOnlyHint: true",
            )),
            _ => {}
        }
    }
}

fn contradiction(tool: &ToolRef<'_>, message: &str) -> Finding {
    Finding::new(
        Rule::HintContradiction,
        tool.at(&format!("{}/reversibility", Carrier::Compensate.pointer())),
        message,
    )
    .tool(tool.name)
    .help("set `annotations.readOnlyHint` and `_meta[\"dev.chronomcp/compensate\"].reversibility` to agree: true with \"readonly\", false with \"compensable\" or \"irreversible\"")
}
