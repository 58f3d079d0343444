//! Both carriers of one tool normalize to declarations that can be compared.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used)]

use mcp_recovery_model::Tool;
use serde_json::json;

fn tool(value: serde_json::Value) -> Tool {
    serde_json::from_value(value).unwrap()
}

#[test]
fn both_carriers_normalize_to_the_same_declaration() {
    let t = tool(json!({
        "name": "charge_payment",
        "inputSchema": {"type": "object"},
        "annotations": {"recovery": {
            "strategy": "compensation",
            "compensatingOperation": {
                "operationId": "refund_payment",
                "parameters": {"transactionId": "$response.body#/transactionId"}
            }
        }},
        "_meta": {"dev.chronomcp/compensate": {
            "reversibility": "compensable",
            "compensation": {
                "toolName": "refund_payment",
                "parameterMapping": {"transactionId": "$.output.structuredContent.transactionId"},
                "maxRetries": 3
            }
        }}
    }));
    let declared = t.declared_recovery();
    assert_eq!(declared.len(), 2);
    assert!(declared[0].agrees_with(&declared[1]));
}

#[test]
fn different_bindings_disagree() {
    let t = tool(json!({
        "name": "t",
        "inputSchema": {"type": "object"},
        "annotations": {"recovery": {
            "strategy": "compensation",
            "compensatingOperation": {"operationId": "u", "parameters": {"id": "$response.body#/id"}}
        }},
        "_meta": {"dev.chronomcp/compensate": {
            "reversibility": "compensable",
            "compensation": {"toolName": "u", "parameterMapping": {"id": "$.input.id"}}
        }}
    }));
    let declared = t.declared_recovery();
    assert!(!declared[0].agrees_with(&declared[1]));
}

#[test]
fn whole_body_spellings_agree() {
    let t = tool(json!({
        "name": "t",
        "inputSchema": {"type": "object"},
        "annotations": {"recovery": {
            "strategy": "compensation",
            "compensatingOperation": {"operationId": "u", "parameters": {"all": "$response.body"}}
        }},
        "_meta": {"dev.chronomcp/compensate": {
            "reversibility": "compensable",
            "compensation": {"toolName": "u", "parameterMapping": {"all": "$.output.structuredContent"}}
        }}
    }));
    let declared = t.declared_recovery();
    assert!(declared[0].agrees_with(&declared[1]));
}

#[test]
fn unknown_strategy_is_ignored() {
    let t = tool(json!({
        "name": "t",
        "inputSchema": {"type": "object"},
        "annotations": {"recovery": {
            "strategy": "manual-only",
            "compensatingOperation": {"operationId": "u", "parameters": {}}
        }}
    }));
    assert!(t.declared_recovery().is_empty());
}
