use mcp_recovery_model::{Carrier, DeclaredRecovery};

use crate::codes::{Rule, declare_rule};
use crate::finding::Finding;
use crate::context::{Context, ToolRef};

declare_rule! {
    /// ## What it does
    /// Compares the two recovery carriers of a tool that declares both, after normalization
    /// (`$.input.a` ≡ `$request.body#/a`, `$.output.structuredContent.a` ≡ `$response.body#/a`),
    /// and reports them when they disagree: another compensating tool, another set of bound
    /// parameters, another binding, or a reversibility other than `compensable`. Timeouts, retries
    /// and scopes have no SEP-3172 counterpart and are not compared.
    ///
    /// ## Why is this bad?
    /// Orchestrators read one carrier or the other. When they disagree, the rollback depends on
    /// which orchestrator runs it.
    ///
    /// ## Example
    /// ```json
    /// {"annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
    ///    "operationId": "cancel_booking", "parameters": {"bookingId": "$response.body#/id"}}}},
    ///  "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable", "compensation": {
    ///    "toolName": "cancel_booking", "parameterMapping": {"bookingId": "$.input.id"}}}}}
    /// ```
    ///
    /// Use instead: `"bookingId": "$.output.structuredContent.id"` in the compensate carrier.
    summary: "both carriers present and they disagree",
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let sep = tool.declared.iter().find(|d| d.carrier == Carrier::Sep3172);
        let compensate = tool
            .declared
            .iter()
            .find(|d| d.carrier == Carrier::Compensate);
        if let (Some(sep), Some(compensate)) = (sep, compensate)
            && !sep.agrees_with(compensate)
        {
            out.push(conflict(tool, &difference(sep, compensate)));
        }
    }
}

/// The first difference, in words.
fn difference(sep: &DeclaredRecovery, compensate: &DeclaredRecovery) -> String {
    let (Some(a), Some(b)) = (&sep.compensation, &compensate.compensation) else {
        return format!(
            "SEP-3172 declares a compensating call, the compensate carrier declares reversibility '{}' without one",
            reversibility_name(compensate)
        );
    };
    if a.tool != b.tool {
        return format!(
            "SEP-3172 compensates with '{}', the compensate carrier with '{}'",
            a.tool, b.tool
        );
    }
    let (map_a, map_b) = (a.binding_map(), b.binding_map());
    for (parameter, binding) in &map_a {
        match map_b.get(parameter) {
            None => {
                return format!("parameter '{parameter}' is bound only by SEP-3172");
            }
            Some(other) if other != binding => {
                return format!(
                    "parameter '{parameter}' is bound to {} by SEP-3172 and to {} by the compensate carrier",
                    show(binding),
                    show(other)
                );
            }
            Some(_) => {}
        }
    }
    match map_b.keys().find(|p| !map_a.contains_key(*p)) {
        Some(parameter) => {
            format!("parameter '{parameter}' is bound only by the compensate carrier")
        }
        None => format!(
            "reversibility '{}' differs from SEP-3172's compensation",
            reversibility_name(compensate)
        ),
    }
}

fn show(
    binding: &Result<&mcp_recovery_model::Binding, &mcp_recovery_model::BindingError>,
) -> String {
    match binding {
        Ok(b) => match b.to_value() {
            serde_json::Value::String(text) => format!("`{text}`"),
            other => format!("`{other}`"),
        },
        Err(e) => format!("an invalid binding ({e})"),
    }
}

fn reversibility_name(declared: &DeclaredRecovery) -> &'static str {
    match declared.reversibility {
        mcp_recovery_model::Reversibility::Readonly => "readonly",
        mcp_recovery_model::Reversibility::Compensable => "compensable",
        mcp_recovery_model::Reversibility::Irreversible => "irreversible",
    }
}

fn conflict(tool: &ToolRef<'_>, difference: &str) -> Finding {
    Finding::new(
        Rule::CarrierConflict,
        tool.at(Carrier::Compensate.pointer()),
        format!("the two recovery carriers disagree: {difference}"),
    )
    .tool(tool.name)
    .help("make annotations.recovery and _meta[\"dev.chronomcp/compensate\"] declare the same call, or keep only one")
}
