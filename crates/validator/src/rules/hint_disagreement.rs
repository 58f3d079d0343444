use mcp_recovery_model::{Carrier, Hint, Reversibility};

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, ToolRef};

declare_rule! {
    /// ## What it does
    /// Reports hints that contradict each other or the tool's recovery declaration:
    ///
    /// * `readOnlyHint: true` together with `destructiveHint: true`;
    /// * mcp-compensate `reversibility: "readonly"` together with `destructiveHint: true`;
    /// * `reversibility: "readonly"` on a tool that leaves `readOnlyHint` unset, whose MCP
    ///   default (`false`) says the opposite. (An explicit `readOnlyHint: false` is R118.)
    ///
    /// ## Why is this bad?
    /// Clients read the hints to decide what to confirm; orchestrators read the recovery
    /// declaration to decide what to undo. When they disagree, at least one is wrong, and which
    /// one a consumer believes depends on which field it reads.
    ///
    /// ## Example
    /// ```json
    /// {"name": "purge_cache", "annotations": {"readOnlyHint": true, "destructiveHint": true}}
    /// ```
    ///
    /// Use instead: one story. A tool that deletes is not read-only (`readOnlyHint: false`); a
    /// tool that changes nothing sets `readOnlyHint: true` and no `destructiveHint`.
    summary: "hints contradict each other or the recovery declaration (defaults included)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        let read_only = typed.hint(Hint::ReadOnly);
        let destructive = typed.hint(Hint::Destructive);
        if read_only == Some(true) && destructive == Some(true) {
            out.push(disagreement(
                tool,
                tool.at("/annotations/destructiveHint"),
                format!("'{}' is annotated both readOnlyHint: true and destructiveHint: true", typed.name),
                "set `annotations.readOnlyHint` to false if the tool deletes or overwrites, else remove `annotations.destructiveHint`",
            ));
        }
        let readonly_class = typed
            .compensate()
            .is_some_and(|c| c.reversibility == Reversibility::Readonly);
        if !readonly_class {
            continue;
        }
        let class_pointer = tool.at(&format!("{}/reversibility", Carrier::Compensate.pointer()));
        if destructive == Some(true) {
            out.push(disagreement(
                tool,
                class_pointer.clone(),
                format!("'{}' declares reversibility 'readonly' but is annotated destructiveHint: true", typed.name),
                "set `_meta[\"dev.chronomcp/compensate\"].reversibility` to \"compensable\" or \"irreversible\", or remove `annotations.destructiveHint`",
            ));
        }
        if read_only.is_none() {
            out.push(disagreement(
                tool,
                class_pointer,
                format!("'{}' declares reversibility 'readonly' but leaves readOnlyHint unset, which means false", typed.name),
                "set `annotations.readOnlyHint` to true",
            ));
        }
    }
}

fn disagreement(tool: &ToolRef<'_>, pointer: String, message: String, help: &str) -> Finding {
    Finding::new(Rule::HintDisagreement, pointer, message)
        .tool(tool.name)
        .help(help)
}
