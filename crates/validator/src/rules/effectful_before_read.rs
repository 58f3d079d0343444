use mcp_recovery_model::{
    BEFORE_SECTION, Hint, OVERLAY_META_KEY, Reversibility, Tool, escape_token,
};

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, excerpt};
use crate::context::Context;

declare_rule! {
    /// ## What it does
    /// Reports an overlay's before-image whose `read` names a tool that is not read-only: one
    /// without `readOnlyHint: true`, or whose recovery declaration says it changes state.
    ///
    /// ## Why is this bad?
    /// A proxy runs the read before the call without a journal record or an approval of its
    /// own, so it runs only a tool known to change nothing. Any other read is never run: the
    /// before-image is missing for every call, and the undo it was declared for never happens.
    ///
    /// ## Example
    /// ```toml
    /// # the server lists read_file without annotations
    /// [tools.write_file.before]
    /// read = "read_file"
    /// arguments = { path = "$request.body#/path" }
    /// found = { operationId = "write_file", parameters = { path = "$request.body#/path", content = "$before.text" } }
    /// ```
    ///
    /// Use instead: if the tool changes nothing, say so in the overlay
    /// (`[tools.read_file.annotations] readOnlyHint = true`); else name a tool that only reads.
    summary: "a before-image's read is not a read-only tool",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(image) = tool.typed.as_ref().and_then(Tool::before_image) else {
            continue;
        };
        // A read the list lacks is R101's; one that is not a valid tool is R003's.
        let Some(read) = ctx.tool_named(&image.read).and_then(|r| r.typed.as_ref()) else {
            continue;
        };
        if read_only(read) {
            continue;
        }
        let at = tool.at(&format!(
            "/_meta/{}/{BEFORE_SECTION}/read",
            escape_token(OVERLAY_META_KEY)
        ));
        out.push(
            Finding::new(
                Rule::EffectfulBeforeRead,
                at,
                format!(
                    "the read before the call, '{}', is not read-only, so a proxy never runs it and the undo never happens",
                    excerpt(&image.read, 80)
                ),
            )
            .tool(tool.name)
            .help("if the tool changes nothing, set its readOnlyHint to true (in the overlay); else name a tool that only reads"),
        );
    }
}

/// Whether a proxy classifies `tool` read-only: its recovery declarations agree that it is, or
/// it declares none and is annotated `readOnlyHint: true`.
fn read_only(tool: &Tool) -> bool {
    match tool.declared_recovery().as_slice() {
        [] => tool.hint(Hint::ReadOnly) == Some(true),
        [first, rest @ ..] => {
            first.reversibility == Reversibility::Readonly
                && rest.iter().all(|other| first.agrees_with(other))
        }
    }
}
