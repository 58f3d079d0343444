use mcp_recovery_model::{Hint, Reversibility};

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, ToolRef};

declare_rule! {
    /// ## What it does
    /// In the `strict` set. Reports a destructive tool that declares no compensating call (nor
    /// an overlay's undo from a before-image) and is not declared `irreversible`. A tool is
    /// destructive when it is not annotated `readOnlyHint: true` and its `destructiveHint` is
    /// `true` or unset: MCP's default for an unset `destructiveHint` is `true`.
    ///
    /// ## Why is this bad?
    /// Destructive effects are the ones a failed workflow most needs to undo. Saying nothing
    /// leaves every orchestrator to guess.
    ///
    /// ## Example
    /// ```json
    /// {"name": "drop_table", "annotations": {"destructiveHint": true}}
    /// {"name": "drop_index", "annotations": {"readOnlyHint": false}}
    /// ```
    ///
    /// Use instead: declare a compensating call (restore from a snapshot), or declare the tool
    /// `irreversible` so orchestrators ask before calling it.
    summary: "`destructiveHint` true or unset (MCP's default), not read-only, no recovery, not declared irreversible",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        let covered = tool
            .declared
            .iter()
            .any(|d| d.compensation.is_some() || d.reversibility == Reversibility::Irreversible)
            || typed.before_image().is_some();
        let destructive = typed.hint(Hint::Destructive);
        if destructive != Some(false) && typed.hint(Hint::ReadOnly) != Some(true) && !covered {
            out.push(destructive_tool(tool, &typed.name, destructive.is_none()));
        }
    }
}

fn destructive_tool(tool: &ToolRef<'_>, name: &str, by_default: bool) -> Finding {
    let (pointer, how) = if by_default {
        (
            crate::context::annotations_pointer(tool),
            " (destructiveHint is unset, which means true)",
        )
    } else {
        (tool.at("/annotations/destructiveHint"), "")
    };
    Finding::new(
        Rule::DestructiveWithoutRecovery,
        pointer,
        format!("'{name}' is destructive{how} but declares neither a compensating call nor that it is irreversible"),
    )
    .tool(tool.name)
    .help("declare `annotations.recovery` (or `_meta[\"dev.chronomcp/compensate\"].compensation`), set `_meta[\"dev.chronomcp/compensate\"].reversibility` to \"irreversible\", or set `annotations.destructiveHint` to false if the tool only adds")
}
