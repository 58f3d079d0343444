use mcp_recovery_model::{Binding, BodySide, TemplatePart};

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, Site};

declare_rule! {
    /// ## What it does
    /// Reports a tool that names itself as its compensating tool and binds every parameter to the
    /// same parameter of the original call (`"path": "$request.body#/path"`, or `$.input.path`).
    ///
    /// A self-inverse tool with other bindings is fine: `move_file` undoes itself with
    /// `source` bound to `$request.body#/destination` and `destination` to
    /// `$request.body#/source`. A self-compensation without parameters (a toggle) is left alone.
    ///
    /// ## Why is this bad?
    /// The "compensation" repeats the original call with the original arguments. It undoes
    /// nothing, and for a non-idempotent tool it applies the effect a second time.
    ///
    /// ## Example
    /// ```json
    /// {"name": "move_file", "inputSchema": {"type": "object", "properties": {
    ///    "source": {"type": "string"}, "destination": {"type": "string"}}},
    ///  "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
    ///    "operationId": "move_file", "parameters": {
    ///      "source": "$request.body#/source", "destination": "$request.body#/destination"}}}}}
    /// ```
    ///
    /// Use instead: swap the bindings, `"source": "$request.body#/destination"` and
    /// `"destination": "$request.body#/source"`.
    summary: "compensator is the tool itself with every parameter bound to the same `$request.body` parameter (it would repeat the call). A self-inverse with other bindings is fine",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        let compensation = site.compensation;
        if compensation.tool != site.typed.name || compensation.bindings.is_empty() {
            continue;
        }
        let unchanged = compensation.bindings.iter().all(|b| {
            // A template that is one embedded expression and nothing else passes the same value
            // (as text), so it repeats the call just as the bare expression does.
            let expression = match &b.binding {
                Ok(Binding::Expression(e)) => Some(e),
                Ok(Binding::Template(t)) => match t.parts.as_slice() {
                    [TemplatePart::Expression(e)] => Some(e),
                    _ => None,
                },
                _ => None,
            };
            expression.is_some_and(|e| {
                e.body_target().is_some_and(|(side, pointer)| {
                    side == BodySide::Request && pointer.tokens() == [b.parameter.as_str()]
                })
            })
        });
        if unchanged {
            out.push(identity(&site));
        }
    }
}

fn identity(site: &Site<'_, '_>) -> Finding {
    Finding::new(
        Rule::IdentityCompensation,
        site.bindings_pointer(),
        format!(
            "tool '{}' compensates itself with every argument unchanged; the compensation would repeat the call",
            site.typed.name
        ),
    )
    .tool(site.tool_name())
    .help("bind the parameters so the call undoes the original (for a move, swap source and destination), or declare the tool irreversible")
}
