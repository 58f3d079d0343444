//! Results read from text: an overlay declares per tool that its result's JSON is in its text
//! content or in FastMCP's `structuredContent.result` string, with the schema of that value.
//! Only a declared reader parses text, and a value that does not match is never used.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{assert_overlay_refused, codes, lint_json, plan_json, planned_calls, root};
use serde_json::{Value, json};

const TOOLS: &str = "fixtures/overlays/graph.tools.json";
const OVERLAY: &str = "fixtures/overlays/graph.overlay.toml";
const TEXT_OVERLAY: &str = "fixtures/overlays/graph-text.overlay.toml";
const TEXT_TRACE: &str = "fixtures/overlays/graph-text.trace.jsonl";

fn statuses(plan: &Value) -> Vec<(String, String)> {
    plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["status"].as_str().unwrap().to_owned(),
                s["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn declared_readers_serve_text_results_and_nothing_else_parses_text() {
    let (status, report) = lint_json(&root(), &["--overlay", TEXT_OVERLAY, TOOLS]);
    assert_eq!(status, 0, "{report:#}");
    let with = plan_json(TOOLS, Some(TEXT_OVERLAY), TEXT_TRACE);
    let calls = planned_calls(&with);
    assert_eq!(
        calls,
        [
            &json!({"name": "remove_facts", "arguments": {"removals": [{"label": "ada", "facts": ["t"]}]}}),
            &json!({"name": "remove_nodes", "arguments": {"labels": ["ada"]}}),
        ],
        "{with:#}"
    );
    // The same bindings without a reader: the text is never parsed.
    let without = statuses(&plan_json(TOOLS, Some(OVERLAY), TEXT_TRACE));
    assert!(
        without.iter().all(|(status, _)| status == "unavailable"),
        "{without:?}"
    );
    assert!(
        without[1].1.contains("text content is never parsed"),
        "{without:?}"
    );
}

/// A result whose text is not the JSON the schema describes is a skip with the reason.
#[test]
fn text_that_does_not_match_is_never_used() {
    let dir = tempfile::tempdir().unwrap();
    let text_result = |text: &str| {
        json!({"name": "add_nodes", "arguments": {"nodes": []},
               "result": {"content": [{"type": "text", "text": text}]}})
    };
    let fastmcp_result = |value: Value| {
        json!({"name": "add_facts", "arguments": {"additions": []},
               "result": {"content": [], "structuredContent": value}})
    };
    let cases = [
        (
            text_result("Created 1 node"),
            "the text content is not JSON (line 1",
        ),
        (
            text_result(r#"{"nodes": [{"label": 7}]}"#),
            "does not match the schema the overlay declares: at /nodes/0/label",
        ),
        (
            json!({"name": "add_nodes", "arguments": {}, "result": {"content": [
                {"type": "text", "text": "{}"}, {"type": "text", "text": "{}"}]}}),
            "the result has 2 text items",
        ),
        (
            fastmcp_result(json!({"added": []})),
            "the result has no structuredContent.result to read",
        ),
        (
            fastmcp_result(json!({"result": {"added": []}})),
            "structuredContent.result is object, not a string of JSON",
        ),
    ];
    for (call, reason) in cases {
        let trace = dir.path().join("t.jsonl");
        fs::write(&trace, format!("{call}\n")).unwrap();
        let steps = statuses(&plan_json(
            TOOLS,
            Some(TEXT_OVERLAY),
            trace.to_str().unwrap(),
        ));
        assert_eq!(steps[0].0, "unavailable", "{call}: {steps:?}");
        assert!(steps[0].1.contains(reason), "{call}: {steps:?}");
        assert!(
            steps[0]
                .1
                .contains("reads the result's text as the overlay declares"),
            "{steps:?}"
        );
    }
}

/// Bindings into a declared reader's value are checked against its schema, and a malformed
/// reader is refused naming the file, line and pointer.
#[test]
fn lint_reads_bindings_against_the_readers_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.toml");
    let strict = "[tools.add_nodes.annotations.recovery]\nstrategy = \"compensation\"\n\
        compensatingOperation.operationId = \"remove_nodes\"\n\
        compensatingOperation.parameters.labels = { \"$map\" = \"$response.body#/created\", \"$each\" = \"$item\" }\n\
        [tools.add_nodes.result]\nfrom = \"text\"\n\
        schema = { type = \"object\", additionalProperties = false, properties.nodes = { type = \"array\" } }\n";
    fs::write(&path, strict).unwrap();
    let (status, report) = lint_json(&root(), &["--overlay", path.to_str().unwrap(), TOOLS]);
    assert_eq!(status, 1, "{report:#}");
    assert_eq!(codes(&report), ["R106"], "{report:#}");
    assert!(
        report["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("the result schema the overlay declares of 'add_nodes' allows no value at '/created'"),
        "{report:#}"
    );
    for (declaration, pointer) in [
        (
            "from = \"html\"\nschema = {}",
            "/tools/add_nodes/result/from",
        ),
        ("from = \"text\"", "/tools/add_nodes/result"),
        (
            "from = \"text\"\nschema = { type = 3 }",
            "/tools/add_nodes/result/schema",
        ),
    ] {
        let text = format!("[tools.add_nodes.result]\n{declaration}\n");
        assert_overlay_refused(&path, &text, TOOLS, pointer);
    }
}
