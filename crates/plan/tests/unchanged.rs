//! A before-image undo whose overlay declares `unchanged`: the step carries the read to make
//! before its first call and the after-image it must still return, or is unavailable when no
//! after-image can be compared.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_plan::{Check, Plan, Status, build_plan, load_tools, parse_trace};
use serde_json::{Value, json};

const OVERLAY: &str = r#"
server = "files"

[tools.write_file.before]
read = "read_file"
arguments = { path = "$request.body#/path" }
unchanged = true

[tools.write_file.before.found]
operationId = "write_file"
parameters = { path = "$request.body#/path", content = "$before.text" }
"#;

fn text(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn plan(overlay: &str, lines: &[Value]) -> Plan {
    let string = json!({"type": "string"});
    let mut list = json!({"tools": [
        {"name": "read_file", "inputSchema": {"type": "object", "properties": {"path": string}},
         "annotations": {"readOnlyHint": true}},
        {"name": "write_file", "inputSchema": {"type": "object",
         "properties": {"path": string, "content": string}}},
    ]});
    Overlay::parse(overlay, OverlayFormat::Toml)
        .unwrap()
        .apply(&mut list);
    let tools = load_tools(&list).unwrap();
    let trace: String = lines.iter().map(|line| format!("{line}\n")).collect();
    build_plan(&tools, &parse_trace(&trace).unwrap())
}

fn write(content: &str, old: &str, after: Option<Value>) -> Value {
    let mut line = json!({"name": "write_file", "arguments": {"path": "a.txt", "content": content},
        "result": text("written"),
        "before": {"name": "read_file", "arguments": {"path": "a.txt"}, "result": text(old)}});
    if let Some(after) = after {
        line["after"] = after;
    }
    line
}

fn after(result: Value) -> Value {
    json!({"name": "read_file", "arguments": {"path": "a.txt"}, "result": result})
}

#[test]
fn the_step_carries_the_read_and_the_after_image() {
    let mut image = text("v2");
    image["_meta"] = json!({"read-at": "noon"});
    image["structuredContent"] = Value::Null;
    let plan = plan(OVERLAY, &[write("v2", "v1", Some(after(image)))]);
    let step = &plan.steps[0];
    assert_eq!(step.status, Status::Compensate, "{plan:?}");
    assert_eq!(
        step.call.as_ref().unwrap().arguments,
        *json!({"path": "a.txt", "content": "v1"})
            .as_object()
            .unwrap()
    );
    // `_meta` and a null `structuredContent` are not compared.
    let check = step.check.as_ref().unwrap();
    assert_eq!(check.name, "read_file");
    assert_eq!(
        check.arguments,
        *json!({"path": "a.txt"}).as_object().unwrap()
    );
    assert_eq!(Value::Object(check.expected.clone()), text("v2"));
    assert!(
        step.reason
            .ends_with("(the read before the call: found); made only while 'read_file' returns what it did after the call"),
        "{}",
        step.reason
    );
    let json = serde_json::to_value(step).unwrap();
    assert_eq!(
        json["check"],
        json!({"name": "read_file", "arguments": {"path": "a.txt"},
               "expected": {"content": [{"type": "text", "text": "v2"}]}})
    );
    // What the read returns now is compared on content, structuredContent and isError only.
    let mut now = text("v2");
    now["_meta"] = json!({"other": 1});
    assert!(check.unchanged(&now));
    assert!(!check.unchanged(&text("v3 by a person")));
    let mut failed = text("v2");
    failed["isError"] = json!(true);
    assert!(!check.unchanged(&failed));
    let mut structured = text("v2");
    structured["structuredContent"] = json!({"content": "v2"});
    assert!(!check.unchanged(&structured));
    assert!(!check.unchanged(&Value::Null));
}

#[test]
fn without_an_after_image_to_compare_the_step_is_unavailable() {
    let cases = [
        (None, "and no after-image was recorded for this call"),
        (
            Some(
                json!({"name": "read_file", "arguments": {"path": "a.txt"}, "result": null,
                        "reason": "no answer within 30000 ms"}),
            ),
            "the read 'read_file' run after the call got no result (no answer within 30000 ms)",
        ),
    ];
    for (image, why) in cases {
        let plan = plan(OVERLAY, &[write("v2", "v1", image)]);
        let step = &plan.steps[0];
        assert_eq!(step.status, Status::Unavailable, "{plan:?}");
        assert!(step.call.is_none() && step.check.is_none());
        assert!(step.reason.contains(why), "{}", step.reason);
    }
    // A secret lost from the after-image makes it useless to compare.
    let mut line = write(
        "v2",
        "v1",
        Some(after(
            json!({"content": [{"type": "text", "text": "key ***"}]}),
        )),
    );
    line["redacted"] = json!(true);
    let plan = plan(OVERLAY, &[line]);
    assert_eq!(plan.steps[0].status, Status::Unavailable, "{plan:?}");
    assert!(plan.steps[0].reason.contains("holds `***`"), "{plan:?}");
}

/// Without `unchanged`, an after-image in the trace changes nothing: no check, the same reason.
#[test]
fn without_unchanged_no_check_is_made() {
    let overlay = OVERLAY.replace("unchanged = true\n", "");
    let with = plan(&overlay, &[write("v2", "v1", Some(after(text("v2"))))]);
    let without = plan(&overlay, &[write("v2", "v1", None)]);
    assert_eq!(with, without);
    assert_eq!(with.steps[0].status, Status::Compensate);
    assert!(with.steps[0].check.is_none());
    assert!(!serde_json::to_string(&with).unwrap().contains("check"));
}

/// Two writes to one file: each step expects what its own call left, so undoing the later one
/// first restores what the earlier one expects.
#[test]
fn a_chain_of_writes_checks_each_write_against_its_own_after_image() {
    let plan = plan(
        OVERLAY,
        &[
            write("v2", "v1", Some(after(text("v2")))),
            write("v3", "v2", Some(after(text("v3")))),
        ],
    );
    let checks: Vec<(&Check, &Value)> = plan
        .steps
        .iter()
        .map(|s| {
            (
                s.check.as_ref().unwrap(),
                &s.call.as_ref().unwrap().arguments["content"],
            )
        })
        .collect();
    assert!(checks[0].0.unchanged(&text("v3")) && checks[0].1 == "v2");
    assert!(checks[1].0.unchanged(&text(checks[0].1.as_str().unwrap())));
    assert_eq!(checks[1].1, "v1");
}
