//! The drafting of bindings from the names a tool's description says its result returns.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::naming_tests::object;
use super::returned::returned_names;
use super::tests::{by_tool, input, tools};
use super::*;

/// A forward tool `name` taking a path, a sheet and an optional name, described as given.
fn adding(name: &str, description: &str) -> Value {
    let text = json!({"type": "string"});
    json!({"name": name, "description": description, "inputSchema": object(
        json!({"path": text, "sheet": text, "name": text}), json!(["path", "sheet"]))})
}

/// A compensator `name` taking a path, a sheet and the name of what it removes.
fn removing(name: &str, taken: Value) -> Value {
    let text = json!({"type": "string"});
    json!({"name": name, "inputSchema": object(
        json!({"path": text, "sheet": text, "name": taken}), json!(["path", "sheet", "name"]))})
}

#[test]
fn names_are_those_of_a_sentence_that_starts_with_returns() {
    assert_eq!(
        returned_names("Add or replace a chart. Returns its name and cells.\n\n`source` is …"),
        ["name", "cells"]
    );
    assert_eq!(
        returned_names("Returns the id, url and title."),
        ["id", "url", "title"]
    );
    // Several words name no field; a sentence that does not start with it names nothing.
    assert!(returned_names("Returns the name of the original sheet.").is_empty());
    assert!(returned_names("Copies a sheet; it returns its name.").is_empty());
    assert!(returned_names("Returns an error when the name is taken.").is_empty());
    assert!(returned_names("Place an image at a cell.").is_empty());
}

#[test]
fn a_returned_name_is_read_from_the_result_text() {
    let list = tools(json!([
        adding("create_chart", "Add a chart. Returns its name and cells."),
        removing("delete_chart", json!({"type": "string"})),
    ]));
    let found = suggest_with(&list, &[]);
    let chart = by_tool(&found)["create_chart"];
    let schema = json!({"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}}});
    assert_eq!(
        chart.proposal,
        Proposal::Compensable {
            compensator: "delete_chart".into(),
            mapping: BTreeMap::from([
                ("path".into(), input("path")),
                ("sheet".into(), input("sheet")),
                (
                    "name".into(),
                    Binding::Output {
                        field: "name".into()
                    }
                ),
            ]),
            reader: Some(Reader {
                from: "text",
                schema: schema.clone(),
            }),
        }
    );
    assert_eq!(chart.confidence, Confidence::Medium);
    assert!(
        chart.reason.contains("'name' read from the JSON text"),
        "{}",
        chart.reason
    );
    let entry = chart.entry();
    assert_eq!(entry["result"], json!({"from": "text", "schema": schema}));
    assert_eq!(
        entry["annotations"]["recovery"]["compensatingOperation"]["parameters"]["name"],
        "$response.body#/name"
    );
}

#[test]
fn a_fastmcp_string_result_is_read_as_such() {
    let mut forward = adding(
        "insert_image",
        "Place an image. Returns its name and cells.",
    );
    forward["outputSchema"] = object(json!({"result": {"type": "string"}}), json!(["result"]));
    let list = tools(json!([
        forward,
        removing("delete_image", json!({"type": "string"}))
    ]));
    let found = suggest_with(&list, &[]);
    match &by_tool(&found)["insert_image"].proposal {
        Proposal::Compensable { reader, .. } => {
            assert_eq!(reader.as_ref().map(|r| r.from), Some("fastmcp-result"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn nothing_is_read_that_the_description_does_not_name() {
    let text = json!({"type": "string"});
    // Its result has a schema of its own, which lacks the name: no reader is guessed.
    let mut note = adding("create_note", "Add a note. Returns its name.");
    note["outputSchema"] = object(json!({"cell": text}), json!(["cell"]));
    let list = tools(json!([
        // It says nothing of what it returns.
        adding("add_slicer", "Add a slicer that filters a PivotTable."),
        removing("delete_slicer", text.clone()),
        // It returns the name of another thing than the one it makes.
        adding(
            "create_table",
            "Add a table. Returns the name of the source sheet."
        ),
        removing("delete_table", text.clone()),
        note,
        removing("delete_note", text.clone()),
        // The compensator takes a list of names, which no text read of one gives.
        adding("create_rule", "Add a rule. Returns its name."),
        removing("delete_rule", json!({"type": "array", "items": text})),
        // A copy is undone only by what names the copy; "its" may be the original's.
        {"name": "copy_card", "description": "Copy a card to a board. Returns its label.",
         "inputSchema": object(json!({"board": text, "target_board": text}),
            json!(["board", "target_board"]))},
        {"name": "delete_card", "inputSchema": object(json!({"board": text, "label": text}),
            json!(["board", "label"]))},
    ]));
    let found = suggest_with(&list, &[]);
    let drafted = by_tool(&found);
    for tool in [
        "add_slicer",
        "create_table",
        "create_note",
        "create_rule",
        "copy_card",
    ] {
        assert!(
            !matches!(
                drafted.get(tool).map(|s| &s.proposal),
                Some(Proposal::Compensable { .. })
            ),
            "{tool}: {found:#?}"
        );
    }
}
