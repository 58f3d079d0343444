use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus, excerpt};
use crate::context::Context;

declare_rule! {
    /// ## What it does
    /// Reports a tool name that is empty, longer than 128 characters, or contains a character
    /// other than ASCII letters, digits, `_`, `-` and `.`, as the MCP specification recommends.
    ///
    /// ## Why is this bad?
    /// Clients and model providers restrict the names they accept; a name outside the recommended
    /// set may be rejected, rewritten, or ambiguous when it appears in a compensating call.
    ///
    /// ## Example
    /// ```json
    /// {"name": "send email", "inputSchema": {"type": "object"}}
    /// ```
    ///
    /// Use instead:
    /// ```json
    /// {"name": "send_email", "inputSchema": {"type": "object"}}
    /// ```
    summary: "name outside 1–128 chars of `A-Z a-z 0-9 _ - .` (spec SHOULD)",
}

const MAX_CHARS: usize = 128;
const HELP: &str = "use 1 to 128 characters among A-Z, a-z, 0-9, '_', '-' and '.'";

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(name) = tool.name else { continue };
        let pointer = || tool.at("/name");
        if name.is_empty() {
            out.push(empty(pointer()));
        } else if let Some((offset, c)) = name.char_indices().find(|(_, c)| !allowed(*c)) {
            out.push(bad_character(pointer(), name, offset, c));
        } else if name.chars().count() > MAX_CHARS {
            out.push(too_long(pointer(), name));
        }
    }
}

fn empty(pointer: String) -> Finding {
    Finding::new(Rule::ToolNameFormat, pointer, "the tool name is empty")
        .tool(Some(""))
        .help(HELP)
}

fn bad_character(pointer: String, name: &str, offset: usize, c: char) -> Finding {
    Finding::new(
        Rule::ToolNameFormat,
        pointer,
        format!(
            "tool name '{}' contains {c:?}, outside the characters MCP recommends",
            excerpt(name, 80)
        ),
    )
    .tool(Some(name))
    .focus(Focus::InString(offset))
    .help(HELP)
}

fn too_long(pointer: String, name: &str) -> Finding {
    Finding::new(
        Rule::ToolNameFormat,
        pointer,
        format!(
            "tool name '{}' is {} characters long; MCP recommends at most {MAX_CHARS}",
            excerpt(name, 40),
            name.chars().count()
        ),
    )
    .tool(Some(name))
    .help(HELP)
}
