//! Map bindings in overlays (`{"$map": …, "$each": …}`): checked by `lint`, evaluated by
//! `plan`, and read as constants where a server declares them itself.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{codes, lint_json, plan_json, planned_calls, root};
use serde_json::{Value, json};

const TOOLS: &str = "fixtures/overlays/graph.tools.json";
const OVERLAY: &str = "fixtures/overlays/graph.overlay.toml";
const BAD_OVERLAY: &str = "fixtures/overlays/graph.bad-overlay.toml";
const TRACE: &str = "fixtures/overlays/graph.trace.jsonl";

#[test]
fn a_good_map_overlay_lints_clean_and_plans_arrays() {
    let (status, report) = lint_json(&root(), &["--overlay", OVERLAY, TOOLS]);
    assert_eq!(status, 0, "{report:#}");
    assert!(codes(&report).is_empty(), "{report:#}");

    let plan = plan_json(TOOLS, Some(OVERLAY), TRACE);
    let calls = planned_calls(&plan);
    assert_eq!(
        calls,
        [
            &json!({"name": "remove_facts", "arguments": {"removals": [
                {"label": "ada", "facts": ["likes tea"]},
                {"label": "bob", "facts": []}
            ]}}),
            &json!({"name": "remove_nodes", "arguments": {"labels": ["ada", "bob"]}}),
        ],
        "{plan:#}"
    );
}

#[test]
fn faults_in_map_bindings_point_at_the_member_at_fault() {
    let (status, report) = lint_json(&root(), &["--overlay", BAD_OVERLAY, TOOLS]);
    assert_eq!(status, 1, "{report:#}");
    let base = "/tools/{}/annotations/recovery/compensatingOperation/parameters";
    let at = |tool: &str, rest: &str| format!("{}{rest}", base.replace("{}", tool));
    let mut found: Vec<(String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert_eq!(d["file"], BAD_OVERLAY, "{d:#}");
            (
                d["code"].as_str().unwrap().to_owned(),
                d["pointer"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    found.sort();
    let mut expected = vec![
        // `lable`: the items allow other members, so it may be absent rather than impossible.
        ("R108".to_owned(), at("add_nodes", "/labels/$each")),
        ("R108".to_owned(), at("add_facts", "/removals/$each/facts")),
        // A string where the compensator's items take an array.
        ("R111".to_owned(), at("add_facts", "/removals/$each/facts")),
        // A member the compensator's items cannot hold.
        ("R111".to_owned(), at("add_facts", "/removals/$each/extra")),
        (
            "R114".to_owned(),
            at("remove_nodes", "").replace("/parameters", "/operationId"),
        ),
        ("R110".to_owned(), at("remove_nodes", "/oops")),
        // `$item/label`: an element reference is `$item` or `$item#` and a pointer.
        ("R104".to_owned(), at("remove_nodes", "/oops/$each")),
    ];
    expected.sort();
    assert_eq!(found, expected, "{report:#}");
}

/// Each way a map binding is malformed is R104 at the member at fault, and `plan` refuses the
/// step rather than guessing.
#[test]
fn malformed_map_bindings_are_errors_at_their_member() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (r#"{"$map": "$response.body#/nodes"}"#, ""),
        (r#"{"$map": 3, "$each": "$item"}"#, "/$map"),
        (r#"{"$map": "$response.bdy", "$each": "$item"}"#, "/$map"),
        (
            r#"{"$map": "$response.body#/nodes", "$each": "$item", "$else": 1}"#,
            "/$else",
        ),
        (
            r#"{"$map": "$response.body#/nodes", "$each": "$it#/label"}"#,
            "/$each",
        ),
        (
            r#"{"$map": "$response.body#/nodes", "$each": "$item#label"}"#,
            "/$each",
        ),
        (
            r#"{"$map": "$response.body#/nodes", "$each": "$item#/a~2"}"#,
            "/$each",
        ),
        (
            r#"{"$map": "$response.body#/nodes", "$each": {"a": {"b": "x-{$item}"}}}"#,
            "/$each/a/b",
        ),
    ];
    for (binding, rest) in cases {
        let overlay = format!(
            r#"{{"tools": {{"add_nodes": {{"annotations": {{"recovery": {{"strategy": "compensation",
                "compensatingOperation": {{"operationId": "remove_nodes", "parameters": {{"labels": {binding}}}}}}}}}}}}}}}"#
        );
        let path = dir.path().join("o.json");
        fs::write(&path, overlay).unwrap();
        let (status, report) = lint_json(&root(), &["--overlay", path.to_str().unwrap(), TOOLS]);
        assert_eq!(status, 1, "{binding}: {report:#}");
        let r104: Vec<&str> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == "R104")
            .map(|d| d["pointer"].as_str().unwrap())
            .collect();
        assert_eq!(
            r104,
            [format!(
                "/tools/add_nodes/annotations/recovery/compensatingOperation/parameters/labels{rest}"
            )],
            "{binding}: {report:#}"
        );
        let plan = plan_json(TOOLS, Some(path.to_str().unwrap()), TRACE);
        let step = &plan["steps"][1];
        assert_eq!(step["tool"], "add_nodes");
        assert_eq!(step["status"], "unavailable", "{binding}: {plan:#}");
    }
}

/// What the arrays hold decides: a missing member in one element, or a source that is not an
/// array, makes the step unavailable with the reason, never a partial call.
#[test]
fn a_map_binding_that_cannot_be_built_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            json!({"nodes": [{"label": "ada", "kind": "k", "facts": []}, {"kind": "k", "facts": []}]}),
            "`$item#/label` selects nothing in element 1 of `$response.body#/nodes`",
        ),
        (
            json!({"nodes": {"label": "ada"}}),
            "`$response.body#/nodes` selected object, but a map binding reads an array",
        ),
    ];
    for (result, reason) in cases {
        let trace = dir.path().join("t.jsonl");
        let call = json!({"name": "add_nodes", "arguments": {"nodes": []},
            "result": {"content": [], "structuredContent": result}});
        fs::write(&trace, format!("{call}\n")).unwrap();
        let plan = plan_json(TOOLS, Some(OVERLAY), trace.to_str().unwrap());
        let step = &plan["steps"][0];
        assert_eq!(step["status"], "unavailable", "{plan:#}");
        assert!(
            step["reason"].as_str().unwrap().contains(reason),
            "{plan:#}"
        );
    }
    // An empty array is an empty array.
    let trace = dir.path().join("t.jsonl");
    let call = json!({"name": "add_nodes", "arguments": {"nodes": []},
        "result": {"content": [], "structuredContent": {"nodes": []}}});
    fs::write(&trace, format!("{call}\n")).unwrap();
    let plan = plan_json(TOOLS, Some(OVERLAY), trace.to_str().unwrap());
    assert_eq!(
        plan["steps"][0]["call"]["arguments"],
        json!({"labels": []}),
        "{plan:#}"
    );
}

/// A server cannot declare a map binding itself: in its own SEP-3172 declaration the object is a
/// constant, which `lint` judges as one (saying why) and `plan` validates as one.
#[test]
fn a_servers_own_map_object_is_a_constant() {
    let dir = tempfile::tempdir().unwrap();
    let mut tools: Value =
        serde_json::from_str(&fs::read_to_string(root().join(TOOLS)).unwrap()).unwrap();
    tools["tools"][0]["annotations"] = json!({"recovery": {"strategy": "compensation",
        "compensatingOperation": {"operationId": "remove_nodes", "parameters": {
            "labels": {"$map": "$response.body#/nodes", "$each": "$item#/label"}}}}});
    let path = dir.path().join("own.json");
    fs::write(&path, tools.to_string()).unwrap();
    let (status, report) = lint_json(&root(), &[path.to_str().unwrap()]);
    assert_eq!(status, 1, "{report:#}");
    let r111 = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "R111")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert!(
        r111["message"]
            .as_str()
            .unwrap()
            .contains("a map binding is read only where an overlay declares the recovery"),
        "{r111:#}"
    );
    let plan = plan_json(path.to_str().unwrap(), None, TRACE);
    assert_eq!(plan["steps"][1]["status"], "unavailable", "{plan:#}");
}
