//! What an approver is shown for a call: the call, its class, and the compensation that would
//! undo it, resolved from the arguments as far as they go.

use std::io::Write;

use mcp_recovery_model::json::with;
use mcp_recovery_plan::{Planner, Status, TracedCall};
use serde_json::{Map, Value, json};

use crate::classify::Classification;
use crate::wire::members;

use super::state::Session;

impl<W: Write> Session<W> {
    /// What an `ask` shows: the call, its class, and the compensation that would undo it,
    /// resolved from the arguments as far as possible before the call runs.
    pub(super) fn impact(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        classification: Classification,
        rule: &str,
    ) -> Value {
        let tools = self.tools.as_deref().unwrap_or_default();
        let tool = tools.iter().find(|t| t.name == name);
        let declared = tool.and_then(|t| t.declared_recovery().into_iter().next());
        let compensation = declared.and_then(|d| d.compensation).map(|c| {
            // Resolving against an empty result shows what the arguments alone determine.
            let probe = TracedCall::new(
                name,
                arguments.clone(),
                Some(members(json!({"content": [], "structuredContent": {}}))),
            );
            let step = Planner::new(tools).resolve_step(&probe);
            let bindings: Map<String, Value> = c
                .bindings
                .iter()
                .map(|b| (b.parameter.clone(), b.raw.clone()))
                .collect();
            match step.call {
                Some(planned) if step.status == Status::Compensate => with(
                    json!({"tool": planned.name}),
                    [
                        ("arguments", Value::Object(planned.arguments)),
                        ("resolved", Value::Bool(true)),
                    ],
                ),
                _ => with(
                    json!({"tool": c.tool}),
                    [
                        ("parameters", Value::Object(bindings)),
                        ("resolved", Value::Bool(false)),
                        (
                            "note",
                            "some parameters come from the result, known after the call".into(),
                        ),
                    ],
                ),
            }
        });
        let mut impact = json!({
            "type": "call",
            "session": self.scope(),
            "tool": name,
            "arguments": {},
            "class": classification.class.as_str(),
            "classSource": classification.source.as_str(),
            "rule": rule,
        });
        // Set in its place after the fact: `json!` would respell the numbers of the arguments.
        impact["arguments"] = Value::Object(arguments.clone());
        impact["compensation"] = compensation.unwrap_or(Value::Null);
        impact
    }
}
