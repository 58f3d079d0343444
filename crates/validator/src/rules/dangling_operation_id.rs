use mcp_recovery_model::{BEFORE_SECTION, OVERLAY_META_KEY, escape_token};

use crate::codes::{Rule, declare_rule};
use crate::context::{Context, Site};
use crate::finding::{Finding, excerpt};

declare_rule! {
    /// ## What it does
    /// Reports a compensating call whose tool (`compensatingOperation.operationId`, or
    /// `compensation.toolName` of the compensate carrier) is not in the tool list; also a tool an
    /// overlay's before-image names (its `read`, the `operationId` of `found` or `missing` and
    /// of each further call in their `then`).
    ///
    /// ## Why is this bad?
    /// When a workflow fails, the orchestrator calls the compensating tool. If the server does not
    /// list it, the rollback fails at the worst moment and the effect of the original call stays.
    ///
    /// ## Example
    /// ```json
    /// {"name": "create_invoice", "inputSchema": {"type": "object"},
    ///  "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
    ///    "operationId": "void_invoce", "parameters": {"invoiceId": "$response.body#/id"}}}}}
    /// ```
    ///
    /// Use instead: name a tool the same server lists (`void_invoice`).
    summary: "the compensating tool is not in the list",
}

/// Suggestions are only searched in lists of reasonable size.
const SUGGEST_LIMIT: usize = 2_000;

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        if site.compensator.is_none() {
            let suggestion = (ctx.list.len() <= SUGGEST_LIMIT)
                .then(|| closest(ctx, &site.compensation.tool))
                .flatten();
            out.push(dangling(&site, suggestion));
        }
    }
    before_images(ctx, out);
}

/// The tools an overlay's before-image names (its read, and the undo for each outcome) must be
/// in the list too.
fn before_images(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(image) = tool.typed.as_ref().and_then(|t| t.before_image()) else {
            continue;
        };
        let base = tool.at(&format!(
            "/_meta/{}/{BEFORE_SECTION}",
            escape_token(OVERLAY_META_KEY)
        ));
        let mut named = vec![(
            "/read".to_owned(),
            "the read before the call",
            image.read.clone(),
        )];
        for (outcome, role, undo) in [
            ("found", "the undo when the target was found", &image.found),
            (
                "missing",
                "the undo when the target was missing",
                &image.missing,
            ),
        ] {
            let undo = undo.as_ref().and_then(mcp_recovery_model::Outcome::undo);
            for (part, undo) in undo.iter().flat_map(|u| u.parts()) {
                named.push((
                    format!("/{outcome}{part}/operationId"),
                    role,
                    undo.operation_id.clone(),
                ));
            }
        }
        for (at, role, name) in &named {
            if ctx.tool_named(name).is_some() {
                continue;
            }
            let help = match (ctx.list.len() <= SUGGEST_LIMIT)
                .then(|| closest(ctx, name))
                .flatten()
            {
                Some(close) => format!("did you mean '{close}'?"),
                None => "name a tool of this server".to_owned(),
            };
            out.push(
                Finding::new(
                    Rule::DanglingOperationId,
                    format!("{base}{at}"),
                    format!("{role}, '{}', is not in the tool list", excerpt(name, 80)),
                )
                .tool(tool.name)
                .help(help),
            );
        }
    }
}

fn closest<'a>(ctx: &'a Context<'_>, missing: &str) -> Option<&'a str> {
    let limit = (missing.chars().count() / 3).clamp(1, 3);
    ctx.list
        .names()
        .map(|name| (edit_distance(missing, name), name))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, name)| name)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

fn dangling(site: &Site<'_, '_>, suggestion: Option<&str>) -> Finding {
    let help = match suggestion {
        Some(name) => format!("did you mean '{name}'?"),
        None => "name a tool of this server, or add the compensating tool to the list".to_owned(),
    };
    Finding::new(
        Rule::DanglingOperationId,
        site.target_pointer(),
        format!(
            "compensating tool '{}' is not in the tool list",
            excerpt(&site.compensation.tool, 80)
        ),
    )
    .tool(site.tool_name())
    .help(help)
}

#[cfg(test)]
mod tests {
    #[test]
    fn edit_distance() {
        assert_eq!(super::edit_distance("void_invoce", "void_invoice"), 1);
        assert_eq!(super::edit_distance("", "ab"), 2);
        assert_eq!(super::edit_distance("kitten", "sitting"), 3);
    }
}
