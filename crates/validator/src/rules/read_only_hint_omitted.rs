use mcp_recovery_model::Hint;

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, ToolRef, annotations_pointer};

declare_rule! {
    /// ## What it does
    /// In the `strict` set. Reports a tool that leaves `annotations.readOnlyHint` unset.
    ///
    /// ## Why is this bad?
    /// MCP's default for `readOnlyHint` is `false`: a client must treat the tool as one that
    /// changes its environment, ask before calling it, and an orchestrator must plan to undo it.
    /// A tool that only reads pays for that with needless confirmations; a tool that writes
    /// should say so on purpose rather than by omission, so that a reader of `tools/list` can
    /// tell a decision from a default.
    ///
    /// ## Example
    /// ```json
    /// {"name": "read_graph", "inputSchema": {"type": "object"}}
    /// ```
    ///
    /// Use instead: `"annotations": {"readOnlyHint": true}` for a tool that changes nothing,
    /// `"readOnlyHint": false` for one that does.
    summary: "`annotations.readOnlyHint` is unset (MCP's default: the tool changes state)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        if typed.hint(Hint::ReadOnly).is_none() {
            out.push(omitted(tool, &typed.name));
        }
    }
}

fn omitted(tool: &ToolRef<'_>, name: &str) -> Finding {
    Finding::new(
        Rule::ReadOnlyHintOmitted,
        annotations_pointer(tool),
        format!("'{name}' leaves readOnlyHint unset, so clients must assume it changes state"),
    )
    .tool(tool.name)
    .help(
        "set `annotations.readOnlyHint` to true if the tool only reads, false if it changes state",
    )
}
