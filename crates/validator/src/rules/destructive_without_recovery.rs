use mcp_recovery_model::{Hint, Reversibility};

use crate::codes::{OFF, Rule, declare_rule};
use crate::finding::Finding;
use crate::rules::{Context, ToolRef};

declare_rule! {
    /// ## What it does
    /// Advisory (off unless selected). Reports a tool annotated `destructiveHint: true`, not
    /// read-only, that declares no compensating call and is not declared `irreversible`.
    ///
    /// ## Why is this bad?
    /// Destructive effects are the ones a failed workflow most needs to undo. Saying nothing
    /// leaves every orchestrator to guess.
    ///
    /// ## Example
    /// ```json
    /// {"name": "drop_table", "annotations": {"destructiveHint": true}}
    /// ```
    ///
    /// Use instead: declare a compensating call (restore from a snapshot), or declare the tool
    /// `irreversible` so orchestrators ask before calling it.
    code: "R202",
    name: "destructive-without-recovery",
    default: OFF,
    summary: "`destructiveHint: true`, not read-only, no recovery, not declared irreversible",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(typed) = &tool.typed else { continue };
        let covered = tool
            .declared
            .iter()
            .any(|d| d.compensation.is_some() || d.reversibility == Reversibility::Irreversible);
        if typed.hint(Hint::Destructive) == Some(true)
            && typed.hint(Hint::ReadOnly) != Some(true)
            && !covered
        {
            out.push(destructive(tool, &typed.name));
        }
    }
}

fn destructive(tool: &ToolRef<'_>, name: &str) -> Finding {
    Finding::new(
        Rule::DestructiveWithoutRecovery,
        tool.at("/annotations/destructiveHint"),
        format!("'{name}' is destructive but declares neither a compensating call nor that it is irreversible"),
    )
    .tool(tool.name)
    .help("declare a compensating call, or declare the tool irreversible")
}
