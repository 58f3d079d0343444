use mcp_recovery_model::PointerReading;

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use mcp_recovery_schema_reason::Knowledge;
use crate::context::{BodyRead, Context};


declare_rule! {
    /// ## What it does
    /// Resolves the JSON Pointer of each `$response.body#/…` binding against the tool's
    /// `outputSchema`, and of each `$request.body#/…` binding against its `inputSchema`, and
    /// reports a pointer that selects nothing a valid document can contain: a property the schema
    /// does not allow, a step into a string, an index into an object. A compensate-carrier path is
    /// read as name selectors, which select object members only: `items['0']` where `items` is an
    /// array selects nothing, as at run time. `$ref`, `allOf`, `anyOf`,
    /// `oneOf`, `items` and `prefixItems` are followed; what cannot be judged statically (a remote
    /// `$ref`) is never reported. In an overlay's map binding, `$map` is read the same way, and
    /// each element reference (`$item#/name`) against the schema of the array's items.
    ///
    /// ## Why is this bad?
    /// The binding can never be resolved, so the compensation is always unavailable: the tool
    /// claims a rollback it cannot perform. This is usually a typo or a renamed field.
    ///
    /// ## Example
    /// ```json
    /// {"name": "charge_card",
    ///  "outputSchema": {"type": "object", "properties": {"chargeId": {"type": "string"}},
    ///                   "additionalProperties": false},
    ///  "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
    ///    "operationId": "refund_charge", "parameters": {"chargeId": "$response.body#/charge_id"}}}}}
    /// ```
    ///
    /// Use instead: `"chargeId": "$response.body#/chargeId"`.
    summary: "the pointer selects nothing the source schema allows (`outputSchema` for `$response.body`, `inputSchema` for `$request.body`)",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for read in ctx.body_reads() {
        if read
            .resolution()
            .is_some_and(|resolution| resolution.exists == Knowledge::No)
        {
            out.push(unresolvable(&read));
        }
    }
    for read in ctx.item_reads() {
        // A fault before the element reference is the array's own, reported above or by R111.
        if let Some(resolution) = read.resolution()
            && resolution.exists == Knowledge::No
            && resolution
                .fails_at
                .is_some_and(|at| at >= read.first_item_token())
        {
            out.push(
                Finding::new(
                    Rule::UnresolvablePointer,
                    read.binding_pointer(),
                    format!(
                        "{} selects nothing: the {} of '{}' allows no value at '{}' in those elements",
                        read.written(),
                        read.schema_name(),
                        read.site.typed.name,
                        read.item
                    ),
                )
                .tool(read.site.tool_name())
                .help(format!(
                    "point at a property the elements declare in the {}",
                    read.schema_name()
                )),
            );
        }
    }
}

fn unresolvable(read: &BodyRead<'_, '_>) -> Finding {
    let parsed = read.binding.binding.as_ref().ok();
    let focus = parsed.map_or(crate::finding::Focus::Value, |b| {
        crate::context::expression_focus(&read.binding.raw, b, read.expression)
    });
    // A compensate-carrier path never indexes an array, which is worth saying where it matters.
    let names_only = read.site.declared.carrier.reading() == PointerReading::Names
        && read.pointer.array_like_token().is_some();
    Finding::new(
        Rule::UnresolvablePointer,
        read.binding_pointer(),
        format!(
            "`{}` selects nothing: the {} of '{}' allows no value at '{}'{}",
            read.written(),
            read.schema_name(),
            read.site.typed.name,
            read.pointer,
            if names_only {
                " (a name selector selects object members only, never an array item)"
            } else {
                ""
            }
        ),
    )
    .tool(read.site.tool_name())
    .focus(focus)
    .help(format!(
        "point at a property the {} declares",
        read.schema_name()
    ))
}
