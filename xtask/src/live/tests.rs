//! Tests of the live check: the comparison, and commands under a time limit.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::compare::{compare, tools_of};
use super::process::run;

#[test]
fn same_names_and_annotations_compare_equal() {
    let captured = [
        json!({"name": "lookup", "annotations": {"readOnlyHint": true}}),
        json!({"name": "store"}),
    ];
    // Other fields may differ: only names and annotations are compared.
    let live = [
        json!({"name": "lookup", "description": "x", "annotations": {"readOnlyHint": true}}),
        json!({"name": "store", "inputSchema": {"type": "object"}}),
    ];
    assert!(compare(&captured, &live).is_empty());
}

#[test]
fn every_difference_names_the_tool_and_key() {
    let captured = [
        json!({"name": "lookup", "annotations": {"readOnlyHint": true, "openWorldHint": false}}),
        json!({"name": "store", "annotations": {"destructiveHint": false}}),
        json!({"name": "gone"}),
    ];
    let live = [
        json!({"name": "lookup", "annotations": {"readOnlyHint": false, "idempotentHint": true}}),
        json!({"name": "store"}),
        json!({"name": "new"}),
    ];
    assert_eq!(
        compare(&captured, &live),
        [
            "tool gone: in the capture, not sent live",
            "tool new: sent live, not in the capture",
            "tool lookup: annotations.idempotentHint: capture absent, live true",
            "tool lookup: annotations.openWorldHint: capture false, live absent",
            "tool lookup: annotations.readOnlyHint: capture true, live false",
            "tool store: annotations: capture {\"destructiveHint\":false}, live absent",
        ]
    );
}

#[test]
fn reordered_tools_are_reported() {
    let captured = [json!({"name": "a"}), json!({"name": "b"})];
    let live = [json!({"name": "b"}), json!({"name": "a"})];
    assert_eq!(
        compare(&captured, &live),
        [r#"tool order differs: capture ["a", "b"], live ["b", "a"]"#]
    );
}

#[test]
fn tools_are_found_in_responses_results_and_arrays() {
    let tool = json!({"name": "t"});
    for document in [
        json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [tool]}}),
        json!({"tools": [tool]}),
        json!([tool]),
    ] {
        assert_eq!(tools_of(&document), Some(&[tool.clone()][..]));
    }
    assert_eq!(tools_of(&json!({"result": {}})), None);
}

#[test]
fn a_command_past_its_limit_is_killed_and_reported() {
    let mut command = Command::new("sleep");
    command.arg("30");
    let started = Instant::now();
    let error = run(command, Duration::from_millis(200), "step `nap`")
        .err()
        .unwrap_or_default();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        error.starts_with("step `nap`: timed out after 0 s"),
        "{error}"
    );
}

#[test]
fn a_failing_command_shows_its_output_tail() {
    let mut command = Command::new("sh");
    command.args(["-c", "echo partial; echo broken >&2; exit 3"]);
    let output = run(command, Duration::from_secs(10), "step `x`")
        .ok()
        .map(|output| output.failure("step `x`"));
    assert_eq!(
        output.as_deref(),
        Some(
            "step `x`: exited with exit status: 3\n  last stderr lines:\n    | broken\n  last stdout lines:\n    | partial"
        )
    );
}
