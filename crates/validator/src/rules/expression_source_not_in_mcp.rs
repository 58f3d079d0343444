use mcp_recovery_model::{RuntimeExpression, Source};

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus};
use crate::context::{Context, Site};

declare_rule! {
    /// ## What it does
    /// Reports a runtime expression that reads `$url`, `$method`, `$statusCode`, or a `header.`,
    /// `query.` or `path.` source of the request or response.
    ///
    /// ## Why is this bad?
    /// These sources come from HTTP and have no meaning for an MCP tool call, whose only inputs
    /// are its `arguments` (`$request.body`) and whose only structured output is its
    /// `structuredContent` (`$response.body`). The binding can never be resolved.
    ///
    /// ## Example
    /// ```json
    /// {"parameters": {"orderId": "$response.header.Location"}}
    /// ```
    ///
    /// Use instead: return the value in `structuredContent` and bind
    /// `"orderId": "$response.body#/orderId"`.
    summary: "`$url`, `$method`, `$statusCode`, header/query/path source",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for site in ctx.sites() {
        for binding in &site.compensation.bindings {
            let Ok(parsed) = &binding.binding else {
                continue;
            };
            for expression in parsed.expressions() {
                if expression.body_target().is_none() {
                    let focus = crate::context::expression_focus(&binding.raw, parsed, expression);
                    out.push(not_in_mcp(&site, &binding.parameter, expression, focus));
                }
            }
        }
    }
}

fn source_name(expression: &RuntimeExpression) -> &'static str {
    match expression {
        RuntimeExpression::Url => "the request URL",
        RuntimeExpression::Method => "the HTTP method",
        RuntimeExpression::StatusCode => "the HTTP status code",
        RuntimeExpression::Request(source) | RuntimeExpression::Response(source) => match source {
            Source::Header(_) => "an HTTP header",
            Source::Query(_) => "a query parameter",
            Source::Path(_) => "a path parameter",
            Source::Body(_) => "the body",
        },
    }
}

fn not_in_mcp(
    site: &Site<'_, '_>,
    parameter: &str,
    expression: &RuntimeExpression,
    focus: Focus,
) -> Finding {
    Finding::new(
        Rule::ExpressionSourceNotInMcp,
        site.binding_pointer(parameter),
        format!(
            "parameter '{parameter}' reads `{expression}`, {}, which an MCP tool call does not have",
            source_name(expression)
        ),
    )
    .tool(site.tool_name())
    .focus(focus)
    .help("read the call's arguments with `$request.body#/…` or its structuredContent with `$response.body#/…`")
}
