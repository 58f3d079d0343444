use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, ToolRef};

declare_rule! {
    /// ## What it does
    /// In the `strict` set. Reports a tool with neither a `title` nor an `annotations.title`.
    ///
    /// ## Why is this bad?
    /// Clients show the title when they ask a person to confirm a call, and MCP directories ask
    /// for one. Without it the person sees the programmatic name (`wr_cfg_v2`), which says
    /// little about what is about to happen.
    ///
    /// ## Example
    /// ```json
    /// {"name": "delete_entities", "inputSchema": {"type": "object"}}
    /// ```
    ///
    /// Use instead: set the tool's `title` (protocol 2025-06-18 and later), or
    /// `annotations.title` for older clients:
    /// ```json
    /// {"name": "delete_entities", "title": "Delete entities", "inputSchema": {"type": "object"}}
    /// ```
    summary: "a tool has neither `title` nor `annotations.title`",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        let has_title = |value: Option<&serde_json::Value>| {
            value
                .and_then(serde_json::Value::as_str)
                .is_some_and(|t| !t.trim().is_empty())
        };
        let annotated = typed.annotations.as_ref().and_then(|a| a.title.as_deref());
        if !has_title(tool.raw.get("title")) && annotated.is_none_or(|t| t.trim().is_empty()) {
            out.push(missing(tool, &typed.name));
        }
    }
}

fn missing(tool: &ToolRef<'_>, name: &str) -> Finding {
    Finding::new(
        Rule::MissingTitle,
        tool.at("/name"),
        format!("'{name}' has no title; clients show its programmatic name instead"),
    )
    .tool(tool.name)
    .help("set the tool's `title` (or `annotations.title`) to a short human-readable name")
}
