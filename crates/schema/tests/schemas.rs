//! The generated documents are valid draft 2020-12 schemas and accept or reject what they should.

// Test helpers outside `#[test]` functions may panic too: a failed check is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{definition, errors, validator};
use mcp_recovery_schema::{
    COMPENSATE_SCHEMA, OVERLAY_SCHEMA, RECOVERY_SCHEMA, SCHEMA_BASE_URI, SEP_DEFS, TOOL_SCHEMA,
    TOOLS_LIST_SCHEMA, schemas,
};
use serde_json::{Value, json};

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Every `$ref` in a document, with the JSON Pointer where it appears.
fn refs(value: &Value, at: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if let ("$ref", Value::String(target)) = (key.as_str(), child) {
                    out.push((at.clone(), target.clone()));
                }
                refs(child, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                refs(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_document_is_a_valid_draft_2020_12_schema() {
    let documents = schemas();
    let names: Vec<_> = documents.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            RECOVERY_SCHEMA,
            COMPENSATE_SCHEMA,
            TOOL_SCHEMA,
            TOOLS_LIST_SCHEMA,
            OVERLAY_SCHEMA,
            SEP_DEFS
        ]
    );
    for (name, schema) in documents {
        assert_eq!(schema["$schema"], DRAFT_2020_12, "{name}");
        assert_eq!(schema["$id"], format!("{SCHEMA_BASE_URI}{name}"), "{name}");
        assert!(schema["title"].is_string(), "{name} has no title");
        if let Err(error) = jsonschema::meta::validate(&schema) {
            panic!("{name} is not a valid draft 2020-12 schema: {error}");
        }
        jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("{name} does not compile: {e}"));
    }
}

#[test]
fn documents_are_self_contained() {
    for (name, schema) in schemas() {
        let mut found = Vec::new();
        refs(&schema, String::new(), &mut found);
        for (at, target) in found {
            let Some(pointer) = target.strip_prefix('#') else {
                panic!("{name}{at}: $ref {target} leaves the document");
            };
            assert!(
                schema.pointer(pointer).is_some(),
                "{name}{at}: $ref {target} dangles"
            );
        }
    }
}

#[test]
fn no_field_admits_null_and_no_rust_formats_remain() {
    for (name, schema) in schemas() {
        let text = schema.to_string();
        assert!(!text.contains(r#""null""#), "{name} admits null somewhere");
        for format in ["uint", "int32", "int64", "double", "float"] {
            assert!(
                !text.contains(&format!(r#""format":"{format}"#)),
                "{name}: format {format}"
            );
        }
    }
}

#[test]
fn drop_in_names_follow_the_mcp_schema() {
    let defs = mcp_recovery_schema::sep_defs();
    let names: Vec<_> = defs["$defs"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        names,
        [
            "ToolAnnotations",
            "Recovery",
            "CompensatingOperation",
            "RecoveryBinding",
            "RuntimeExpression"
        ]
    );
    let hints = &defs["$defs"]["ToolAnnotations"]["properties"];
    for key in [
        "title",
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ] {
        assert!(hints[key].is_object(), "ToolAnnotations lost {key}");
    }
    assert_eq!(hints["recovery"]["$ref"], "#/$defs/Recovery");
}

fn good_recovery() -> Value {
    json!({
        "strategy": "compensation",
        "compensatingOperation": {
            "operationId": "refund_payment",
            "parameters": {
                "transactionId": "$response.body#/transactionId",
                "note": "refund for {$request.body#/orderId}",
                "reason": "rollback",
                "full": true,
                "cents": 1999,
                "tags": ["a"],
                "extra": {"k": null},
                "nothing": null
            }
        }
    })
}

fn tool_with(recovery: Value) -> Value {
    json!({
        "name": "charge_payment",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": false, "recovery": recovery}
    })
}

/// The recovery object, the tool carrying it, and the drop-in `ToolAnnotations` all agree.
fn check_recovery(recovery: &Value, valid: bool, why: &str) {
    let annotations = json!({"recovery": recovery});
    let outcomes = [
        (
            "recovery.schema.json",
            validator(RECOVERY_SCHEMA).is_valid(recovery),
        ),
        (
            "tool.schema.json",
            validator(TOOL_SCHEMA).is_valid(&tool_with(recovery.clone())),
        ),
        (
            "sep-3172.defs.json#ToolAnnotations",
            definition(SEP_DEFS, "ToolAnnotations").is_valid(&annotations),
        ),
    ];
    for (schema, outcome) in outcomes {
        assert_eq!(outcome, valid, "{schema} on {why}: {recovery}");
    }
}

#[test]
fn good_recoveries_are_accepted() {
    check_recovery(&good_recovery(), true, "every binding form");
    let mut other_strategy = good_recovery();
    other_strategy["strategy"] = json!("manual-only");
    check_recovery(
        &other_strategy,
        true,
        "a reserved strategy (ignored, not invalid)",
    );
    let mut empty = good_recovery();
    empty["compensatingOperation"]["parameters"] = json!({});
    check_recovery(&empty, true, "no parameters");
    let mut unknown = good_recovery();
    unknown["x-vendor"] = json!({"kept": true});
    check_recovery(&unknown, true, "an unknown field");
}

#[test]
fn malformed_recoveries_are_rejected() {
    let mut cases: Vec<(&str, Value)> = Vec::new();
    let mut set = |why, pointer: &str, value: Option<Value>| {
        let mut recovery = good_recovery();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let object = recovery
            .pointer_mut(parent)
            .unwrap()
            .as_object_mut()
            .unwrap();
        match value {
            Some(value) => object.insert(key.to_owned(), value),
            None => object.remove(key),
        };
        cases.push((why, recovery));
    };
    set("a numeric strategy", "/strategy", Some(json!(1)));
    set("a missing strategy", "/strategy", None);
    set(
        "a missing operationId",
        "/compensatingOperation/operationId",
        None,
    );
    set(
        "a numeric operationId",
        "/compensatingOperation/operationId",
        Some(json!(7)),
    );
    set(
        "a null operationId",
        "/compensatingOperation/operationId",
        Some(json!(null)),
    );
    set(
        "missing parameters",
        "/compensatingOperation/parameters",
        None,
    );
    set(
        "parameters as a string",
        "/compensatingOperation/parameters",
        Some(json!("$response.body")),
    );
    set(
        "a missing compensatingOperation",
        "/compensatingOperation",
        None,
    );
    for bad in [
        "$response.body#transactionId",
        "$response.bdy#/id",
        "$response.body#/a~2",
        "$request.header.",
        "$request.header.a b",
        "$statusCode ",
        "$",
        "$request.query.caf\u{e9}",
        "id-{$response.body#transactionId}",
        "id-{$response.body#/x",
        "{$url}{$nope}",
    ] {
        set(
            "a malformed expression",
            "/compensatingOperation/parameters/transactionId",
            Some(json!(bad)),
        );
    }
    for (why, recovery) in cases {
        check_recovery(&recovery, false, why);
    }
}

#[test]
fn tool_schema_checks_the_mcp_shape() {
    let tool = validator(TOOL_SCHEMA);
    let good = json!({
        "name": "get_time",
        "title": "Get time",
        "inputSchema": {"type": "object", "properties": {"tz": {"type": "string"}}},
        "outputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        "annotations": {"readOnlyHint": true},
        "icons": [{"src": "https://example.com/i.png", "sizes": ["48x48"], "theme": "dark"}],
        "execution": {"taskSupport": "optional"},
        "_meta": {"example.com/other": 1}
    });
    assert!(tool.is_valid(&good), "{:?}", errors(&tool, &good));
    let bad = [
        json!({"inputSchema": {"type": "object"}}),
        json!({"name": "t"}),
        json!({"name": "t", "inputSchema": {"type": "array"}}),
        json!({"name": "t", "inputSchema": {"type": "object"}, "title": null}),
        json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}}),
        json!({"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": 3}}),
        json!({"name": "t", "inputSchema": {"type": "object"}, "icons": [{"sizes": []}]}),
    ];
    for instance in bad {
        assert!(!tool.is_valid(&instance), "accepted {instance}");
    }
    // Values a newer revision or an extension may add outside the recovery metadata.
    let forward = [
        json!({"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "always"}}),
        json!({"name": "t", "inputSchema": {"type": "object"}, "icons": [{"src": "i.png", "theme": "high-contrast"}]}),
        json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"x-risk": "low"}}),
        json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"recovery": {"strategy": "manual-only"}}}),
        json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"recovery": {"strategy": "retry-elsewhere", "compensatingOperation": 5}}}),
    ];
    for instance in forward {
        assert!(tool.is_valid(&instance), "{:?}", errors(&tool, &instance));
        let typed: Result<mcp_recovery_model::Tool, _> = serde_json::from_value(instance.clone());
        assert!(typed.is_ok(), "{instance}: {typed:?}");
    }
}

fn good_compensate() -> Value {
    json!({
        "reversibility": "compensable",
        "compensation": {
            "toolName": "delete_record",
            "parameterMapping": {
                "id": "$.output.structuredContent.id",
                "name": "$.input['display name']"
            },
            "timeoutMs": 5000,
            "maxRetries": 2
        },
        "sideEffectScope": ["storage"],
        "notes": "deletes what was created"
    })
}

fn check_compensate(compensate: &Value, valid: bool, why: &str) {
    let tool = json!({
        "name": "create_record",
        "inputSchema": {"type": "object"},
        "_meta": {"dev.chronomcp/compensate": compensate}
    });
    assert_eq!(
        validator(COMPENSATE_SCHEMA).is_valid(compensate),
        valid,
        "compensate: {why}"
    );
    assert_eq!(validator(TOOL_SCHEMA).is_valid(&tool), valid, "tool: {why}");
}

#[test]
fn compensate_carrier_is_checked() {
    check_compensate(&good_compensate(), true, "a full declaration");
    check_compensate(
        &json!({"reversibility": "readonly"}),
        true,
        "a read-only declaration",
    );
    let mut empty = good_compensate();
    empty["compensation"]["parameterMapping"] = json!({});
    check_compensate(&empty, true, "an empty mapping");

    let bad = [
        (
            "no reversibility",
            json!({"compensation": good_compensate()["compensation"]}),
        ),
        ("unknown class", json!({"reversibility": "maybe"})),
        (
            "scope not strings",
            json!({"reversibility": "irreversible", "sideEffectScope": [1]}),
        ),
    ];
    for (why, value) in bad {
        check_compensate(&value, false, why);
    }
    let edit = |why, key: &str, value: Option<Value>| {
        let mut compensate = good_compensate();
        let call = compensate["compensation"].as_object_mut().unwrap();
        match value {
            Some(value) => call.insert(key.to_owned(), value),
            None => call.remove(key),
        };
        check_compensate(&compensate, false, why);
    };
    edit("no toolName", "toolName", None);
    edit("numeric toolName", "toolName", Some(json!(3)));
    edit("negative retries", "maxRetries", Some(json!(-1)));
    edit("timeout as text", "timeoutMs", Some(json!("5s")));
    for path in [
        "$.output.content[0].text",
        "$.input.items[0]",
        "$.input.*",
        "$..id",
        "$.input",
        "$.state.id",
        "input.id",
        "$response.body#/id",
    ] {
        edit(
            "a path outside the subset",
            "parameterMapping",
            Some(json!({"id": path})),
        );
    }
    edit(
        "a non-string path",
        "parameterMapping",
        Some(json!({"id": 5})),
    );
}
