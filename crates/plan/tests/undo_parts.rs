//! An overlay's before-image undo that makes several calls: every call planned in order in one
//! step, or the whole step unavailable naming the call that cannot be made.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_plan::{Plan, Status, build_plan, load_tools, parse_trace};
use serde_json::{Value, json};

const OVERLAY: &str = r#"
server = "graph"

[tools.drop_node.before]
read = "read_node"
arguments.id = "$request.body#/id"

[tools.drop_node.before.found]
operationId = "put_node"
parameters.id = "$request.body#/id"
parameters.label = "$before.body#/label"

[[tools.drop_node.before.found.then]]
operationId = "put_edges"
parameters.edges = { "$map" = "$before.body#/edges", "$each" = "$item#/to" }

[[tools.drop_node.before.found.then]]
operationId = "tag_node"
parameters.id = "$request.body#/id"
parameters.tag = "$before.body#/tag"
"#;

fn tools(listed: &[&str]) -> Value {
    let all = [
        ("drop_node", json!({"id": {"type": "string"}})),
        ("read_node", json!({"id": {"type": "string"}})),
        (
            "put_node",
            json!({"id": {"type": "string"}, "label": {"type": "string"}}),
        ),
        (
            "put_edges",
            // Like servers that refuse an empty list.
            json!({"edges": {"type": "array", "items": {"type": "string"}, "minItems": 1}}),
        ),
        (
            "tag_node",
            json!({"id": {"type": "string"}, "tag": {"type": "string"}}),
        ),
    ];
    let tools: Vec<Value> = all
        .into_iter()
        .filter(|(name, _)| listed.contains(name))
        .map(|(name, properties)| {
            json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
        })
        .collect();
    let mut list = json!({ "tools": tools });
    Overlay::parse(OVERLAY, OverlayFormat::Toml)
        .unwrap()
        .apply(&mut list);
    list
}

const ALL: [&str; 5] = [
    "drop_node",
    "read_node",
    "put_node",
    "put_edges",
    "tag_node",
];

fn plan(listed: &[&str], image: Value) -> Plan {
    let line = json!({"name": "drop_node", "arguments": {"id": "n1"},
        "result": {"content": []},
        "before": {"name": "read_node", "arguments": {"id": "n1"},
                   "result": {"content": [], "structuredContent": image}}});
    let tools = load_tools(&tools(listed)).unwrap();
    build_plan(&tools, &parse_trace(&format!("{line}\n")).unwrap())
}

#[test]
fn every_call_of_the_undo_is_planned_in_order_in_one_step() {
    let planned = plan(
        &ALL,
        json!({"label": "first", "edges": [{"to": "n2"}, {"to": "n3"}], "tag": "red"}),
    );
    let step = &planned.steps[0];
    assert_eq!(step.status, Status::Compensate, "{step:#?}");
    let calls: Vec<(&str, Value)> = planned
        .calls()
        .map(|c| (c.name.as_str(), Value::Object(c.arguments.clone())))
        .collect();
    assert_eq!(
        calls,
        [
            ("put_node", json!({"id": "n1", "label": "first"})),
            ("put_edges", json!({"edges": ["n2", "n3"]})),
            ("tag_node", json!({"id": "n1", "tag": "red"})),
        ]
    );
    let json = serde_json::to_value(step).unwrap();
    assert_eq!(json["call"]["name"], "put_node");
    assert_eq!(json["then"][1]["name"], "tag_node");
    assert!(planned.render_table().contains(
        r#"put_node {"id":"n1","label":"first"}; then put_edges {"edges":["n2","n3"]}; then tag_node"#
    ));
    // A further call whose `$map` finds nothing is not made: nothing to put back is no failure.
    let empty = plan(&ALL, json!({"label": "first", "edges": [], "tag": "red"}));
    let step = &empty.steps[0];
    assert_eq!(step.status, Status::Compensate);
    let names: Vec<&str> = step.calls().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["put_node", "tag_node"]);
    assert!(
        step.reason
            .contains("not 'put_edges': a `$map` found nothing to put back"),
        "{}",
        step.reason
    );
}

#[test]
fn a_call_that_cannot_be_made_makes_the_whole_undo_unavailable() {
    // The image has no tag: the third call cannot be resolved.
    let unresolved = plan(&ALL, json!({"label": "first", "edges": []}));
    // The second call's tool is not listed.
    let unlisted = plan(
        &["drop_node", "read_node", "put_node", "tag_node"],
        json!({"label": "first", "edges": [], "tag": "red"}),
    );
    for (planned, why) in [
        (
            unresolved,
            "call 3 of 3 of the undo ('tag_node'): parameter 'tag'",
        ),
        (
            unlisted,
            "call 2 of 3 of the undo ('put_edges'): the compensating tool 'put_edges' is not in the tool list",
        ),
    ] {
        let step = &planned.steps[0];
        assert_eq!(step.status, Status::Unavailable, "{step:#?}");
        assert!(step.reason.starts_with(why), "{}", step.reason);
        assert!(step.call.is_none() && step.then.is_empty(), "{step:#?}");
        assert_eq!(planned.calls().count(), 0);
    }
}

#[test]
fn a_single_call_step_reads_and_writes_as_before() {
    let text =
        r#"{"tool":"t","status":"compensate","call":{"name":"u","arguments":{}},"reason":"r"}"#;
    let step: mcp_recovery_plan::Step = serde_json::from_str(text).unwrap();
    assert!(step.then.is_empty());
    assert_eq!(serde_json::to_string(&step).unwrap(), text);
}
