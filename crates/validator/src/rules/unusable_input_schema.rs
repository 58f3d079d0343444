use mcp_recovery_model::compile_input_schema;

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, excerpt};
use crate::context::{CompensatorUse, Context, List};

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

/// Notes every compensator the tools at hand name; what is wrong is reported by [`finish`],
/// once per compensator, when the whole list has been read.
pub(crate) fn check(ctx: &Context<'_>, _: &mut Vec<Finding>) {
    let mut uses = ctx.list.compensators.borrow_mut();
    for site in ctx.sites() {
        let (Some(compensator), Some(schema)) = (site.compensator, site.compensator_input_schema())
        else {
            continue;
        };
        let entry = uses.entry(compensator.index).or_insert_with(|| CompensatorUse {
            name: compensator.name.map(str::to_owned),
            pointer: compensator.at("/inputSchema"),
            why: compile_input_schema(schema).err(),
            compensated: Vec::new(),
        });
        if !entry.compensated.contains(&site.typed.name) {
            entry.compensated.push(site.typed.name.clone());
        }
    }
}

/// One finding per compensator whose `inputSchema` cannot be compiled.
pub(crate) fn finish(list: &List<'_>, out: &mut Vec<Finding>) {
    for usage in std::mem::take(&mut *list.compensators.borrow_mut()).into_values() {
        if let Some(why) = &usage.why {
            out.push(unusable(&usage, why));
        }
    }
}

fn unusable(usage: &CompensatorUse, why: &str) -> Finding {
    let name = usage.name.as_deref().unwrap_or_default();
    let tools = usage
        .compensated
        .iter()
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(", ");
    Finding::new(
        Rule::UnusableInputSchema,
        usage.pointer.clone(),
        format!(
            "the inputSchema of compensating tool '{name}' cannot be compiled, so compensating {tools} is always unavailable: {}",
            excerpt(why, 200)
        ),
    )
    .tool(usage.name.as_deref())
    .help("inline remote references (or move them under `$defs`), drop an unknown `$schema`, and fix malformed keywords")
}
