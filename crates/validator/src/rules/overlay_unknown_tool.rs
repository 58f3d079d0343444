use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus, excerpt};

declare_rule! {
    /// ## What it does
    /// Reports an overlay entry for a tool the server does not list. The finding points into the
    /// overlay file.
    ///
    /// ## Why is this bad?
    /// An overlay declares recovery for someone else's server. An entry that matches no tool is
    /// a misspelt name or an overlay written for another version of the server: the declaration
    /// it carries is silently unused, and the rollback it promises never happens.
    ///
    /// ## Example
    /// ```toml
    /// [tools.create_entity._meta."dev.chronomcp/compensate"]   # the server lists create_entities
    /// reversibility = "irreversible"
    /// ```
    ///
    /// Use instead: the tool's exact name as `tools/list` gives it (`mcp-recovery fetch` prints
    /// the list), or remove the entry.
    summary: "an overlay declares a tool the server does not list",
}

pub(crate) fn unknown_tool(pointer: &str, tool: &str, known: &[&str]) -> Finding {
    let near = known
        .iter()
        .filter(|name| crate::rules::overlay_conflict::similar(name, tool))
        .map(|name| format!("'{}'", excerpt(name, 80)))
        .collect::<Vec<_>>();
    let help = if near.is_empty() {
        "use a tool name the server lists (`mcp-recovery fetch` prints them), or remove the entry"
            .to_owned()
    } else {
        format!("did you mean {}?", near.join(" or "))
    };
    Finding::new(
        Rule::OverlayUnknownTool,
        pointer,
        format!(
            "the overlay declares '{}', which the server does not list",
            excerpt(tool, 80)
        ),
    )
    .tool(Some(tool))
    .focus(Focus::Key)
    .help(help)
}
