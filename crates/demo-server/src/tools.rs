//! The tool declarations: the exact `tools/list` the server puts on the wire.

use serde_json::{Value, json};

/// The `_meta` key of the mcp-compensate carrier.
const COMPENSATE: &str = "dev.chronomcp/compensate";

/// The complete `tools/list` result the server declares: `{"tools": [...]}`.
///
/// Recovery is declared in both carriers: the compensate carrier alone on `reserve_inventory`,
/// SEP-3172 `annotations.recovery` alone on `charge_payment`, and both (agreeing) on
/// `create_shipment`. Compensators are idempotent and declare themselves irreversible;
/// `get_state` is read-only.
pub fn tools() -> Value {
    json!({"tools": [
        reserve_inventory(),
        release_inventory(),
        charge_payment(),
        refund_payment(),
        create_shipment(),
        cancel_shipment(),
        get_state(),
    ]})
}

fn string(description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "description": description})
}

fn annotations(title: &str, destructive: bool, idempotent: bool) -> Value {
    json!({
        "title": title,
        "readOnlyHint": false,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": false,
    })
}

fn irreversible(notes: &str, scope: &str) -> Value {
    json!({COMPENSATE: {"reversibility": "irreversible", "sideEffectScope": [scope], "notes": notes}})
}

fn reserve_inventory() -> Value {
    json!({
        "name": "reserve_inventory",
        "title": "Reserve inventory",
        "description": "Hold units of a product for an order. Undone by release_inventory.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "sku": string("Stock-keeping unit, for example sku-widget."),
                "quantity": {"type": "integer", "minimum": 1, "description": "Units to hold."}
            },
            "required": ["sku", "quantity"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "reservationId": {"type": "string"},
                "sku": {"type": "string"},
                "quantity": {"type": "integer"}
            },
            "required": ["reservationId", "sku", "quantity"],
            "additionalProperties": false
        },
        "annotations": annotations("Reserve inventory", false, false),
        "_meta": {COMPENSATE: {
            "reversibility": "compensable",
            "compensation": {
                "toolName": "release_inventory",
                "parameterMapping": {"reservationId": "$.output.structuredContent.reservationId"},
                "timeoutMs": 5000,
                "maxRetries": 3
            },
            "sideEffectScope": ["inventory"]
        }}
    })
}

fn release_inventory() -> Value {
    json!({
        "name": "release_inventory",
        "title": "Release inventory",
        "description": "Return the units of a reservation to stock. Releasing twice has no further effect.",
        "inputSchema": {
            "type": "object",
            "properties": {"reservationId": string("Identifier returned by reserve_inventory.")},
            "required": ["reservationId"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "reservationId": {"type": "string"},
                "sku": {"type": "string"},
                "quantity": {"type": "integer"},
                "status": {"const": "released"}
            },
            "required": ["reservationId", "sku", "quantity", "status"],
            "additionalProperties": false
        },
        "annotations": annotations("Release inventory", false, true),
        "_meta": irreversible("Compensator of reserve_inventory; nothing undoes a release.", "inventory")
    })
}

fn charge_payment() -> Value {
    json!({
        "name": "charge_payment",
        "title": "Charge payment",
        "description": "Capture a payment from a customer. Undone by refund_payment.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "customerId": string("The paying customer."),
                "amount": {"type": "number", "exclusiveMinimum": 0, "description": "Amount in major units."},
                "currency": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code."}
            },
            "required": ["customerId", "amount", "currency"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "transactionId": {"type": "string"},
                "amount": {"type": "number"},
                "currency": {"type": "string"}
            },
            "required": ["transactionId", "amount", "currency"],
            "additionalProperties": false
        },
        "annotations": {
            "title": "Charge payment",
            "readOnlyHint": false,
            "destructiveHint": false,
            "idempotentHint": false,
            "openWorldHint": false,
            "recovery": {
                "strategy": "compensation",
                "compensatingOperation": {
                    "operationId": "refund_payment",
                    "parameters": {
                        "transactionId": "$response.body#/transactionId",
                        "amount": "$response.body#/amount"
                    }
                }
            }
        }
    })
}

fn refund_payment() -> Value {
    json!({
        "name": "refund_payment",
        "title": "Refund payment",
        "description": "Refund a captured payment in full. Refunding twice has no further effect.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "transactionId": string("Identifier returned by charge_payment."),
                "amount": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "When given, must equal the captured amount (no partial refunds)."
                }
            },
            "required": ["transactionId"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "transactionId": {"type": "string"},
                "amount": {"type": "number"},
                "currency": {"type": "string"},
                "status": {"const": "refunded"}
            },
            "required": ["transactionId", "amount", "currency", "status"],
            "additionalProperties": false
        },
        "annotations": annotations("Refund payment", true, true),
        "_meta": irreversible("Compensator of charge_payment; a refund is final.", "payments")
    })
}

fn create_shipment() -> Value {
    json!({
        "name": "create_shipment",
        "title": "Create shipment",
        "description": "Book a shipment for reserved goods. Set simulateFailure to make the carrier reject it.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "reservationId": string("Identifier returned by reserve_inventory."),
                "address": string("Delivery address."),
                "simulateFailure": {
                    "type": "boolean",
                    "default": false,
                    "description": "When true the call fails with isError and changes nothing."
                }
            },
            "required": ["reservationId", "address"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "shipmentId": {"type": "string"},
                "reservationId": {"type": "string"},
                "address": {"type": "string"}
            },
            "required": ["shipmentId", "reservationId", "address"],
            "additionalProperties": false
        },
        "annotations": {
            "title": "Create shipment",
            "readOnlyHint": false,
            "destructiveHint": false,
            "idempotentHint": false,
            "openWorldHint": false,
            "recovery": {
                "strategy": "compensation",
                "compensatingOperation": {
                    "operationId": "cancel_shipment",
                    "parameters": {"shipmentId": "$response.body#/shipmentId"}
                }
            }
        },
        "_meta": {COMPENSATE: {
            "reversibility": "compensable",
            "compensation": {
                "toolName": "cancel_shipment",
                "parameterMapping": {"shipmentId": "$.output.structuredContent.shipmentId"}
            },
            "sideEffectScope": ["shipping"]
        }}
    })
}

fn cancel_shipment() -> Value {
    json!({
        "name": "cancel_shipment",
        "title": "Cancel shipment",
        "description": "Cancel a booked shipment. Cancelling twice has no further effect.",
        "inputSchema": {
            "type": "object",
            "properties": {"shipmentId": string("Identifier returned by create_shipment.")},
            "required": ["shipmentId"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "shipmentId": {"type": "string"},
                "status": {"const": "cancelled"}
            },
            "required": ["shipmentId", "status"],
            "additionalProperties": false
        },
        "annotations": annotations("Cancel shipment", true, true),
        "_meta": irreversible("Compensator of create_shipment; a cancelled booking stays cancelled.", "shipping")
    })
}

fn get_state() -> Value {
    let records = |properties: Value, required: Value| {
        json!({
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false
            }
        })
    };
    json!({
        "name": "get_state",
        "title": "Get state",
        "description": "Show stock levels and every open reservation, charge and shipment.",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
        "outputSchema": {
            "type": "object",
            "properties": {
                "inventory": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
                "reservations": records(
                    json!({"sku": {"type": "string"}, "quantity": {"type": "integer"}}),
                    json!(["sku", "quantity"])
                ),
                "charges": records(
                    json!({
                        "customerId": {"type": "string"},
                        "amount": {"type": "number"},
                        "currency": {"type": "string"}
                    }),
                    json!(["customerId", "amount", "currency"])
                ),
                "shipments": records(
                    json!({"reservationId": {"type": "string"}, "address": {"type": "string"}}),
                    json!(["reservationId", "address"])
                )
            },
            "required": ["inventory", "reservations", "charges", "shipments"],
            "additionalProperties": false
        },
        "annotations": {
            "title": "Get state",
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": false
        },
        "_meta": {COMPENSATE: {"reversibility": "readonly"}}
    })
}
