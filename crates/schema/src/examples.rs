//! Example tools declaring recovery metadata, in the MCP specification repository's layout
//! (`examples/<TypeName>/<name>.json`, each validated there against `$defs/<TypeName>`).
//!
//! The recovery objects are built from the model's types, the mcp-compensate carrier is derived
//! from the SEP-3172 one by the model's converter, and every tool passes through [`Tool`] before
//! it is written, so an example cannot drift from what the model reads.

use mcp_recovery_model::{
    COMPENSATION_STRATEGY, Carrier, CompensatingOperation, Recovery, Tool, convert_tool,
};
use serde_json::{Map, Value, json};

/// One example file.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// The `$defs` name the example is an instance of (its folder name).
    pub type_name: &'static str,
    /// The file name inside that folder.
    pub file: &'static str,
    /// What it shows, as the title of its `@example` tag.
    pub title: &'static str,
    /// The example.
    pub value: Value,
}

impl Example {
    /// The path relative to a protocol version directory: `examples/<TypeName>/<file>`.
    pub fn path(&self) -> String {
        format!("examples/{}/{}", self.type_name, self.file)
    }
}

/// An example that the model does not read back unchanged (a defect of this module).
#[derive(Debug, thiserror::Error)]
#[error("example {file}: {message}")]
pub struct ExampleError {
    /// The example's file name.
    pub file: &'static str,
    /// What went wrong.
    pub message: String,
}

fn recovery(operation_id: &str, parameters: Value) -> Recovery {
    Recovery {
        strategy: COMPENSATION_STRATEGY.to_owned(),
        compensating_operation: Some(CompensatingOperation {
            operation_id: operation_id.to_owned(),
            parameters: match parameters {
                Value::Object(map) => map,
                _ => Map::new(),
            },
            extra: Map::new(),
        }),
        extra: Map::new(),
    }
}

/// A tool object: `fields` plus `annotations` holding `hints` and `recovery`.
fn tool(fields: Value, hints: Value, recovery: Option<Recovery>) -> Value {
    let mut tool = match fields {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let mut annotations = match hints {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Some(recovery) = recovery {
        annotations.insert(
            "recovery".to_owned(),
            serde_json::to_value(recovery).unwrap_or(Value::Null),
        );
    }
    tool.insert("annotations".to_owned(), Value::Object(annotations));
    Value::Object(tool)
}

/// The same tool with the mcp-compensate carrier added beside SEP-3172, as the model converts it.
fn with_compensate_carrier(tool: Value, file: &'static str) -> Result<Value, ExampleError> {
    let conversion = convert_tool(&tool, Carrier::Compensate);
    let meta = conversion
        .tool
        .get("_meta")
        .cloned()
        .ok_or_else(|| ExampleError {
            file,
            message: format!("the converter produced no _meta: {:?}", conversion.notes),
        })?;
    let mut both = tool;
    if let Value::Object(object) = &mut both {
        object.insert("_meta".to_owned(), meta);
    }
    Ok(both)
}

/// Reads `value` as a [`Tool`] and writes it back: the example is exactly what the model keeps.
fn through_model(
    (file, title, value): (&'static str, &'static str, Value),
) -> Result<Example, ExampleError> {
    let fail = |e: serde_json::Error| ExampleError {
        file,
        message: e.to_string(),
    };
    let tool: Tool = serde_json::from_value(value.clone()).map_err(fail)?;
    let back = serde_json::to_value(tool).map_err(fail)?;
    if back != value {
        return Err(ExampleError {
            file,
            message: "the model does not write it back unchanged".to_owned(),
        });
    }
    Ok(Example {
        type_name: "Tool",
        file,
        title,
        value: back,
    })
}

/// The `Tool` examples: a compensating operation bound from the response and the request, both
/// carriers on one tool, template and constant bindings, and a self-inverse tool.
pub fn tool_examples() -> Result<Vec<Example>, ExampleError> {
    let charge = tool(
        json!({
            "name": "charge_payment",
            "title": "Charge payment",
            "description": "Charges the customer's card for an order.",
            "inputSchema": {
                "type": "object",
                "properties": {"orderId": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["orderId", "amount"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {"transactionId": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["transactionId", "amount"]
            }
        }),
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true}),
        Some(recovery(
            "refund_payment",
            json!({
                "transactionId": "$response.body#/transactionId",
                "orderId": "$request.body#/orderId"
            }),
        )),
    );
    let reserve = tool(
        json!({
            "name": "reserve_inventory",
            "description": "Holds stock for an order until it ships or is released.",
            "inputSchema": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}},
                "required": ["sku", "quantity"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {"reservationId": {"type": "string"}},
                "required": ["reservationId"]
            }
        }),
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}),
        Some(recovery(
            "release_inventory",
            json!({"reservationId": "$response.body#/reservationId"}),
        )),
    );
    let both_file = "with-recovery-in-both-carriers.json";
    let reserve = with_compensate_carrier(reserve, both_file)?;
    let shipment = tool(
        json!({
            "name": "create_shipment",
            "description": "Books a carrier pickup for a paid order.",
            "inputSchema": {
                "type": "object",
                "properties": {"orderId": {"type": "string"}, "address": {"type": "string"}},
                "required": ["orderId", "address"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "shipment": {
                        "type": "object",
                        "properties": {"id": {"type": "string"}, "carrier": {"type": "string"}},
                        "required": ["id", "carrier"]
                    }
                },
                "required": ["shipment"]
            }
        }),
        json!({"readOnlyHint": false, "destructiveHint": false, "openWorldHint": true}),
        Some(recovery(
            "cancel_shipment",
            json!({
                "shipmentId": "$response.body#/shipment/id",
                "reference": "order {$request.body#/orderId} via {$response.body#/shipment/carrier}",
                "reason": "workflow rolled back",
                "notifyCustomer": false,
                "feeRate": 0.5
            }),
        )),
    );
    let move_file = tool(
        json!({
            "name": "move_file",
            "description": "Moves or renames a file; moving it back undoes the move.",
            "inputSchema": {
                "type": "object",
                "properties": {"source": {"type": "string"}, "destination": {"type": "string"}},
                "required": ["source", "destination"]
            }
        }),
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}),
        Some(recovery(
            "move_file",
            json!({
                "source": "$request.body#/destination",
                "destination": "$request.body#/source"
            }),
        )),
    );
    vec![
        (
            "with-recovery-compensating-operation.json",
            "With a compensating operation bound from the response and the request",
            charge,
        ),
        (
            both_file,
            "With recovery declared in both carriers",
            reserve,
        ),
        (
            "with-recovery-template-binding.json",
            "With template and constant bindings",
            shipment,
        ),
        (
            "with-recovery-self-inverse.json",
            "With a tool that is its own compensation",
            move_file,
        ),
    ]
    .into_iter()
    .map(through_model)
    .collect()
}

/// The compensating tools the examples name, so that the examples and these together form a
/// `tools/list` that lints clean.
pub fn compensating_tools() -> Vec<Value> {
    let hints = json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": true});
    let compensator = |name: &str, description: &str, properties: Value, required: Value| {
        tool(
            json!({
                "name": name,
                "description": description,
                "inputSchema": {"type": "object", "properties": properties, "required": required}
            }),
            hints.clone(),
            None,
        )
    };
    vec![
        compensator(
            "refund_payment",
            "Refunds a charge in full.",
            json!({"transactionId": {"type": "string"}, "orderId": {"type": "string"}}),
            json!(["transactionId"]),
        ),
        compensator(
            "release_inventory",
            "Releases a stock reservation.",
            json!({"reservationId": {"type": "string"}}),
            json!(["reservationId"]),
        ),
        compensator(
            "cancel_shipment",
            "Cancels a booked pickup.",
            json!({
                "shipmentId": {"type": "string"},
                "reference": {"type": "string"},
                "reason": {"type": "string"},
                "notifyCustomer": {"type": "boolean"},
                "feeRate": {"type": "number"}
            }),
            json!(["shipmentId"]),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_cover_both_carriers_and_every_binding_kind() {
        let examples = tool_examples().unwrap_or_else(|e| panic!("{e}"));
        let tools: Vec<Tool> = examples
            .iter()
            .map(|e| serde_json::from_value(e.value.clone()).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        assert!(tools.iter().all(|t| t.sep_recovery().is_some()));
        assert!(tools.iter().any(|t| t.compensate().is_some()));
        let bindings: Vec<mcp_recovery_model::Binding> = tools
            .iter()
            .flat_map(|t| t.declared_recovery())
            .flat_map(|d| d.compensation.map(|c| c.bindings).unwrap_or_default())
            .map(|b| b.binding.unwrap_or_else(|e| panic!("{e}")))
            .collect();
        use mcp_recovery_model::Binding::{Constant, Expression, Template};
        assert!(bindings.iter().any(|b| matches!(b, Expression(_))));
        assert!(bindings.iter().any(|b| matches!(b, Template(_))));
        assert!(
            bindings
                .iter()
                .any(|b| matches!(b, Constant(Value::Number(_))))
        );
        for tool in &tools {
            let declared = tool.declared_recovery();
            if let [first, rest @ ..] = declared.as_slice() {
                assert!(rest.iter().all(|d| d.agrees_with(first)), "{}", tool.name);
            }
        }
    }
}
