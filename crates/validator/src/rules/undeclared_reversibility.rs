use mcp_recovery_model::Hint;

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, ToolRef};

declare_rule! {
    /// ## What it does
    /// In the `strict` set. Reports a tool that may change state (it is not annotated
    /// `readOnlyHint: true`) and declares neither a recovery (either carrier, or an overlay's
    /// undo from a before-image) nor its reversibility class.
    ///
    /// ## Why is this bad?
    /// An orchestrator cannot tell whether a completed call of this tool can be undone. After a
    /// failure it must either leave the effect in place silently or stop and ask a human.
    ///
    /// ## Example
    /// ```json
    /// {"name": "post_message", "inputSchema": {"type": "object"}}
    /// ```
    ///
    /// Use instead: declare a compensating call, or
    /// `"_meta": {"dev.chronomcp/compensate": {"reversibility": "irreversible"}}`.
    summary: "a tool that may change state declares neither recovery nor irreversibility",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        // A SEP-3172 declaration of an unknown strategy counts as absent (spec section 7).
        if typed.hint(Hint::ReadOnly) != Some(true)
            && tool.declared.is_empty()
            && typed.before_image().is_none()
        {
            out.push(undeclared(tool, &typed.name));
        }
    }
}

fn undeclared(tool: &ToolRef<'_>, name: &str) -> Finding {
    Finding::new(
        Rule::UndeclaredReversibility,
        tool.pointer.clone(),
        format!(
            "'{name}' may change state but declares neither a recovery nor that it is irreversible"
        ),
    )
    .tool(tool.name)
    .help("set `_meta[\"dev.chronomcp/compensate\"].reversibility` (\"compensable\" with a `compensation`, or \"irreversible\"), declare `annotations.recovery`, or set `annotations.readOnlyHint` to true")
}
