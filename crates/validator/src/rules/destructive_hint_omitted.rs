use mcp_recovery_model::Hint;

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, ToolRef, annotations_pointer};

declare_rule! {
    /// ## What it does
    /// Reports a tool whose author annotated it (it sets at least one of the four hints) but
    /// left `annotations.destructiveHint` unset, on a tool that may change state (it is not
    /// annotated `readOnlyHint: true`). A tool with no hint at all is left to R302 and R202 of
    /// the `strict` set.
    ///
    /// ## Why is this bad?
    /// MCP's default for `destructiveHint` is `true`. An author who annotated the tool decided
    /// something about it and most likely did not mean the most alarming default: a tool that
    /// only adds (create a record, send a message) is treated as one that deletes or overwrites,
    /// clients warn about it as loudly as about `drop_table`, and people learn to approve every
    /// warning. A tool that does destroy should say so explicitly.
    ///
    /// ## Example
    /// ```json
    /// {"name": "create_issue", "inputSchema": {"type": "object"},
    ///  "annotations": {"readOnlyHint": false, "openWorldHint": true}}
    /// ```
    ///
    /// Use instead: `"destructiveHint": false` for a tool whose effects are additive,
    /// `"destructiveHint": true` for one that deletes or overwrites, and `"readOnlyHint": true`
    /// for one that changes nothing.
    summary: "an annotated tool that may change state leaves `annotations.destructiveHint` unset (MCP's default: destructive)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        let annotated = Hint::ALL.iter().any(|h| typed.hint(*h).is_some());
        if annotated
            && typed.hint(Hint::ReadOnly) != Some(true)
            && typed.hint(Hint::Destructive).is_none()
        {
            out.push(omitted(tool, &typed.name));
        }
    }
}

fn omitted(tool: &ToolRef<'_>, name: &str) -> Finding {
    Finding::new(
        Rule::DestructiveHintOmitted,
        annotations_pointer(tool),
        format!(
            "'{name}' may change state and leaves destructiveHint unset, so clients must assume it is destructive"
        ),
    )
    .tool(tool.name)
    .help("set `annotations.destructiveHint` to false if the tool's effects are additive, true if it deletes or overwrites (or `annotations.readOnlyHint` to true if it changes nothing)")
}
