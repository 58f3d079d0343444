use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, excerpt};
use crate::context::Context;

declare_rule! {
    /// ## What it does
    /// Reports a tool whose `name` is already used by an earlier tool of the same list.
    ///
    /// ## Why is this bad?
    /// Tools are called and compensated by name. With two tools of one name, a client can reach
    /// only one of them, and a compensating call may run the wrong tool.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [
    ///   {"name": "add_tag", "inputSchema": {"type": "object"}},
    ///   {"name": "add_tag", "inputSchema": {"type": "object"}}
    /// ]}
    /// ```
    ///
    /// Use instead: give each tool its own name (`add_tag`, `add_tags_bulk`).
    summary: "two tools share a name",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(name) = tool.name else { continue };
        if let Some(first) = ctx.list.first(name).filter(|first| *first != tool.index) {
            out.push(duplicate(&tool.at("/name"), name, &ctx.list.tool_pointer(first)));
        }
    }
}

fn duplicate(pointer: &str, name: &str, earlier: &str) -> Finding {
    Finding::new(
        Rule::DuplicateToolName,
        pointer,
        format!(
            "tool name '{}' is already used by the tool at {earlier}",
            excerpt(name, 80)
        ),
    )
    .tool(Some(name))
    .help("tool names must be unique within a server; rename one of the tools")
}
