use std::collections::BTreeMap;

use mcp_recovery_model::compile_input_schema;

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, excerpt};
use crate::context::{Context, ToolRef};

declare_rule! {
    /// ## What it does
    /// Compiles the `inputSchema` of every tool named as a compensator, exactly as `plan`
    /// compiles it before validating the resolved arguments, and reports a schema that cannot be
    /// compiled: a remote `$ref` (references are never fetched), a `$schema` naming a dialect the
    /// validator does not know, a keyword with a malformed value (`"type": 5`, a `pattern` that is
    /// not a regular expression).
    ///
    /// ## Why is this bad?
    /// A compensating call is issued only after its arguments satisfy the compensator's
    /// `inputSchema`. A schema that cannot be compiled can never be satisfied, so every
    /// compensation through this tool is unavailable at run time: the declaring tools claim a
    /// rollback nobody can perform.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [
    ///   {"name": "create_user", "annotations": {"recovery": {"strategy": "compensation",
    ///     "compensatingOperation": {"operationId": "delete_user",
    ///       "parameters": {"userId": "$response.body#/userId"}}}}},
    ///   {"name": "delete_user", "inputSchema": {"type": "object",
    ///     "properties": {"userId": {"$ref": "https://schemas.example.com/user-id.json"}}}}
    /// ]}
    /// ```
    ///
    /// Use instead: inline the referenced schema, or move it under `$defs` and refer to it as
    /// `#/$defs/…`.
    summary: "the compensator's `inputSchema` cannot be compiled (remote `$ref`, unknown `$schema`, malformed keyword), so its compensations are always unavailable",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    // Compensator (by its pointer, one finding each) → the tools it compensates, in order.
    let mut users: BTreeMap<&str, (&ToolRef<'_>, Vec<&str>)> = BTreeMap::new();
    for site in ctx.sites() {
        let (Some(compensator), Some(_)) = (site.compensator, site.compensator_input_schema())
        else {
            continue;
        };
        let entry = users
            .entry(compensator.pointer.as_str())
            .or_insert_with(|| (compensator, Vec::new()));
        if !entry.1.contains(&site.typed.name.as_str()) {
            entry.1.push(site.typed.name.as_str());
        }
    }
    for (compensator, compensated) in users.into_values() {
        let Some(schema) = compensator.input_schema() else {
            continue;
        };
        if let Err(why) = compile_input_schema(schema) {
            out.push(unusable(compensator, &compensated, &why));
        }
    }
}

fn unusable(compensator: &ToolRef<'_>, compensated: &[&str], why: &str) -> Finding {
    let name = compensator.name.unwrap_or_default();
    let tools = compensated
        .iter()
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(", ");
    Finding::new(
        Rule::UnusableInputSchema,
        compensator.at("/inputSchema"),
        format!(
            "the inputSchema of compensating tool '{name}' cannot be compiled, so compensating {tools} is always unavailable: {}",
            excerpt(why, 200)
        ),
    )
    .tool(compensator.name)
    .help("inline remote references (or move them under `$defs`), drop an unknown `$schema`, and fix malformed keywords")
}
