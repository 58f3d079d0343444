use mcp_recovery_model::Hint;

use crate::codes::{OFF, Rule, declare_rule};
use crate::finding::Finding;
use crate::rules::{Context, ToolRef, annotations_pointer};

declare_rule! {
    /// ## What it does
    /// In the `strict` set. Reports a tool that may change state (it is not annotated
    /// `readOnlyHint: true`) and leaves `annotations.destructiveHint` unset.
    ///
    /// ## Why is this bad?
    /// MCP's default for `destructiveHint` is `true`. A tool that only adds (create a record,
    /// send a message) and says nothing is treated as one that deletes or overwrites: clients
    /// warn about it as loudly as about `drop_table`, and people learn to approve every warning.
    /// A tool that does destroy should say so explicitly.
    ///
    /// ## Example
    /// ```json
    /// {"name": "create_entities", "inputSchema": {"type": "object"},
    ///  "annotations": {"readOnlyHint": false}}
    /// ```
    ///
    /// Use instead: `"destructiveHint": false` for a tool whose effects are additive,
    /// `"destructiveHint": true` for one that deletes or overwrites.
    code: "R303",
    name: "destructive-hint-omitted",
    default: OFF,
    summary: "a tool that may change state leaves `annotations.destructiveHint` unset (MCP's default: destructive)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        if typed.hint(Hint::ReadOnly) != Some(true) && typed.hint(Hint::Destructive).is_none() {
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
    .help("set `annotations.destructiveHint` to false if the tool's effects are additive, true if it deletes or overwrites")
}
