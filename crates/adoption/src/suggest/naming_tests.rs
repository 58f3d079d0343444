//! The drafting of copies, of edits named for another noun than their read and write, and of
//! parameters given by a field qualified by the tools' noun.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::tests::{by_tool, input, sheet_deleted_by_new_name, tools};
use super::*;

pub(super) fn object(properties: Value, required: Value) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

#[test]
fn copies_are_undone_by_deleting_the_copy() {
    let text = json!({"type": "string"});
    let list = tools(json!([
        {"name": "copy_sheet", "inputSchema": object(
            json!({"path": text, "sheet": text, "new_name": text}),
            json!(["path", "sheet", "new_name"]))},
        {"name": "delete_sheet", "inputSchema": object(
            json!({"path": text, "sheet": text}), json!(["path", "sheet"]))},
        {"name": "duplicate-file", "inputSchema": object(
            json!({"path": text, "newPath": text}), json!(["path", "newPath"]))},
        {"name": "remove-file", "inputSchema": object(json!({"path": text}), json!(["path"]))},
        // Nothing names the copy: the only repository the delete could take is the original.
        {"name": "clone_repo", "inputSchema": object(json!({"repo": text}), json!(["repo"]))},
        {"name": "delete_repo", "inputSchema": object(json!({"repo": text}), json!(["repo"]))},
        // The copy is named by its folder only; the document would come from the original's.
        {"name": "copy_doc", "inputSchema": object(
            json!({"folder": text, "doc": text, "target_folder": text}),
            json!(["folder", "doc", "target_folder"]))},
        {"name": "delete_doc", "inputSchema": object(
            json!({"folder": text, "doc": text}), json!(["folder", "doc"]))}
    ]));
    let found = suggest_with(&list, &[]);
    let by_tool = by_tool(&found);
    let copy = by_tool["copy_sheet"];
    assert_eq!(copy.proposal, sheet_deleted_by_new_name());
    assert_eq!(copy.confidence, Confidence::Medium);
    assert!(copy.reason.contains("'sheet' from 'new_name'"), "{copy:?}");
    assert_eq!(
        by_tool["duplicate-file"].proposal,
        Proposal::Compensable {
            compensator: "remove-file".into(),
            mapping: BTreeMap::from([("path".into(), input("newPath"))]),
            reader: None,
        }
    );
    assert!(!by_tool.contains_key("clone_repo"), "{found:#?}");
    assert!(!by_tool.contains_key("copy_doc"), "{found:#?}");
    let skipped: BTreeMap<&str, &str> = found
        .skipped
        .iter()
        .map(|s| (s.tool.as_str(), s.reason.as_str()))
        .collect();
    assert!(
        skipped["clone_repo"].contains("none of its required fields names the copy"),
        "{skipped:?}"
    );
    assert!(
        skipped["copy_doc"].contains("'doc' must name the copy"),
        "{skipped:?}"
    );
}

#[test]
fn a_copy_never_binds_the_original() {
    let text = json!({"type": "string"});
    // The result names the copy by the parameter's own name, and an argument qualified as new
    // names it too: only the qualified field is taken, never the argument naming the original.
    let list = tools(json!([
        {"name": "copy_sheet", "inputSchema": object(
            json!({"path": text, "sheet": text, "new_name": text}),
            json!(["path", "sheet", "new_name"])),
         "outputSchema": object(json!({"sheet": text}), json!(["sheet"]))},
        {"name": "delete_sheet", "inputSchema": object(
            json!({"path": text, "sheet": text}), json!(["path", "sheet"]))},
        // A copy whose new name is of another type than the parameter: left out, not bound
        // from the original's name.
        {"name": "clone_board", "inputSchema": object(
            json!({"board": text, "new_board": {"type": "integer"}}),
            json!(["board", "new_board"]))},
        {"name": "remove_board", "inputSchema": object(json!({"board": text}), json!(["board"]))},
        // The delete may be told which page by an optional argument the copy also takes: that
        // argument names the original, so the pair is left out.
        {"name": "duplicate_page", "inputSchema": object(
            json!({"book": text, "page": text, "new_title": text}),
            json!(["book", "page", "new_title"]))},
        {"name": "delete_page", "inputSchema": {"type": "object",
            "properties": {"book": text, "page": text}, "required": ["book"]}}
    ]));
    let found = suggest_with(&list, &[]);
    for suggestion in &found.suggestions {
        let Proposal::Compensable { mapping, .. } = &suggestion.proposal else {
            continue;
        };
        for (parameter, binding) in mapping {
            let from = match binding {
                Binding::Input { field } | Binding::Output { field } => field,
                Binding::Map { field, .. } => field,
            };
            assert!(
                !["sheet", "board", "page"].contains(&from.as_str()),
                "{parameter} of {} from the original: {suggestion:?}",
                suggestion.tool
            );
        }
    }
    let copy = found.suggestions.iter().find(|s| s.tool == "copy_sheet");
    assert_eq!(
        copy.map(|s| &s.proposal),
        Some(&sheet_deleted_by_new_name())
    );
    assert!(
        found
            .skipped
            .iter()
            .any(|s| s.tool == "clone_board" && s.reason.contains("'board' must name the copy")),
        "{found:#?}"
    );
    assert!(
        found.skipped.iter().any(|s| s.tool == "duplicate_page"
            && s.reason
                .contains("'page' would come from 'page', which names what")),
        "{found:#?}"
    );
}

#[test]
fn edits_named_for_another_noun_take_the_before_image_of_their_place() {
    let text = json!({"type": "string"});
    let read = |name: &str, place: &str| {
        json!({"name": name, "annotations": {"readOnlyHint": true},
            "inputSchema": object(json!({place: text}), json!([place]))})
    };
    let write = |name: &str, place: &str| {
        json!({"name": name, "inputSchema": object(
            json!({place: text, "content": text}), json!([place, "content"]))})
    };
    let edit = json!({"name": "edit_block", "inputSchema": object(
        json!({"file_path": text, "old_string": text, "new_string": text}),
        json!(["file_path"]))});
    let list = tools(json!([
        read("read_file", "path"),
        write("write_file", "path"),
        edit,
        // A write named for another noun writes another kind of thing: no before-image.
        {"name": "write_pdf", "inputSchema": object(
            json!({"path": text, "content": text}), json!(["path", "content"]))},
        // A place the edit does not say is a file is not the file's.
        {"name": "edit_note", "inputSchema": object(
            json!({"path": text, "text": text}), json!(["path", "text"]))}
    ]));
    let found = suggest_with(&list, &[]);
    let by_tool = by_tool(&found);
    let edit = by_tool["edit_block"];
    assert_eq!(
        edit.proposal,
        Proposal::Before {
            read: "read_file".into(),
            arguments: BTreeMap::from([("path".into(), "file_path".into())]),
            write: "write_file".into(),
            content: "content".into(),
        }
    );
    assert_eq!(edit.confidence, Confidence::Medium);
    assert!(edit.reason.contains("'path' from 'file_path'"), "{edit:?}");
    assert_eq!(
        edit.entry(),
        json!({"before": {"read": "read_file", "arguments": {"path": "$request.body#/file_path"},
            "found": {"operationId": "write_file",
                "parameters": {"path": "$request.body#/file_path", "content": "$before.text"}}}})
    );
    assert!(!by_tool.contains_key("write_pdf"), "{found:#?}");
    assert!(!by_tool.contains_key("edit_note"), "{found:#?}");

    // Two reads and writes whose place the edit names: nothing says which.
    let edit = json!({"name": "edit_block", "inputSchema": object(
        json!({"file_path": text, "doc_path": text}), json!(["file_path", "doc_path"]))});
    let list = tools(json!([
        read("read_file", "path"),
        write("write_file", "path"),
        read("read_doc", "path"),
        write("write_doc", "path"),
        edit
    ]));
    let found = suggest_with(&list, &[]);
    assert!(
        found.suggestions.iter().all(|s| s.tool != "edit_block"),
        "{found:#?}"
    );

    // A read its server does not annotate read-only is never run before the call.
    let list = tools(json!([
        {"name": "read_file", "inputSchema": object(json!({"path": text}), json!(["path"]))},
        write("write_file", "path"),
        {"name": "edit_block", "inputSchema": object(
            json!({"file_path": text}), json!(["file_path"]))}
    ]));
    let found = suggest_with(&list, &[]);
    assert!(
        found.suggestions.iter().all(|s| s.tool != "edit_block"),
        "{found:#?}"
    );
}

#[test]
fn a_field_qualified_by_the_noun_names_what_the_plain_parameter_does() {
    let text = json!({"type": "string"});
    let kinds = |values: Value| json!({"type": "string", "enum": values});
    let list = tools(json!([
        {"name": "create-index", "inputSchema": object(
            json!({"connectionId": text, "collection": text, "keys": {"type": "object"}}),
            json!(["connectionId", "collection", "keys"])),
         "outputSchema": object(
            json!({"collection": text, "indexName": text,
                "indexType": kinds(json!(["classic", "vectorSearch", "search"]))}),
            json!(["collection", "indexName", "indexType"]))},
        {"name": "drop-index", "inputSchema": object(
            json!({"connectionId": text, "collection": text, "indexName": text,
                "type": kinds(json!(["classic", "search"]))}),
            json!(["connectionId", "collection", "indexName", "type"]))},
        // A field qualified by another noun names another thing's type.
        {"name": "create-view", "inputSchema": object(json!({"view": text}), json!(["view"])),
         "outputSchema": object(
            json!({"view": text, "collectionType": text}), json!(["view", "collectionType"]))},
        {"name": "drop-view", "inputSchema": object(
            json!({"view": text, "type": text}), json!(["view", "type"]))}
    ]));
    let found = suggest_with(&list, &[]);
    let index = found
        .suggestions
        .iter()
        .find(|s| s.tool == "create-index")
        .unwrap();
    let Proposal::Compensable { mapping, .. } = &index.proposal else {
        panic!("{index:?}");
    };
    assert_eq!(
        mapping["type"],
        Binding::Output {
            field: "indexType".into()
        }
    );
    assert_eq!(mapping["connectionId"], input("connectionId"));
    assert_eq!(index.confidence, Confidence::Medium);
    assert!(
        index.reason.contains(
            "a value of 'indexType' outside the enum of 'type' (\"vectorSearch\") makes the compensation unavailable at run time"
        ),
        "{index:?}"
    );
    assert!(
        found.suggestions.iter().all(|s| s.tool != "create-view"),
        "{found:#?}"
    );
}

#[test]
fn orders_deployments_allocations_and_shares_pair_with_their_inverses() {
    let text = json!({"type": "string"});
    let id = |name: &str| object(json!({name: text}), json!([name]));
    let list = tools(json!([
        {"name": "place_order", "inputSchema": object(json!({"sku": text}), json!(["sku"])),
         "outputSchema": id("order_id")},
        {"name": "cancel_order", "inputSchema": id("order_id")},
        {"name": "deploy_app", "inputSchema": id("app")},
        {"name": "undeploy_app", "inputSchema": id("app")},
        {"name": "allocate_address", "inputSchema": object(json!({}), json!([])),
         "outputSchema": id("allocation_id")},
        {"name": "release_address", "inputSchema": id("allocation_id")},
        {"name": "share_file", "inputSchema": object(
            json!({"file": text, "user": text}), json!(["file", "user"]))},
        {"name": "unshare_file", "inputSchema": object(
            json!({"file": text, "user": text}), json!(["file", "user"]))},
        {"name": "create_cluster", "inputSchema": id("name")},
        {"name": "destroy_cluster", "inputSchema": id("name")}
    ]));
    let found = suggest_with(&list, &[]);
    let drafted: BTreeMap<&str, Option<&str>> = found
        .suggestions
        .iter()
        .map(|s| (s.tool.as_str(), s.compensator()))
        .collect();
    assert_eq!(
        drafted,
        BTreeMap::from([
            ("allocate_address", Some("release_address")),
            ("create_cluster", Some("destroy_cluster")),
            ("deploy_app", Some("undeploy_app")),
            ("destroy_cluster", None),
            ("place_order", Some("cancel_order")),
            ("share_file", Some("unshare_file")),
            // Any `un` verb is undone by the verb it negates (at medium confidence).
            ("undeploy_app", Some("deploy_app")),
            ("unshare_file", Some("share_file")),
        ]),
        "{found:#?}"
    );
}

#[test]
fn of_inverses_that_differ_only_in_separators_the_one_spelled_alike_is_meant() {
    let id = object(json!({"id": {"type": "string"}}), json!(["id"]));
    let tool = |name: &str| json!({"name": name, "inputSchema": id, "outputSchema": id});
    let list = tools(json!([
        tool("create_user_group"),
        tool("delete_user-group"),
        tool("delete_user_group"),
        tool("create_a.b"),
        tool("delete_a-b"),
        tool("delete_a:b")
    ]));
    let found = suggest_with(&list, &[]);
    let by_tool = by_tool(&found);
    assert_eq!(
        by_tool["create_user_group"].compensator(),
        Some("delete_user_group"),
        "{found:#?}"
    );
    // Neither is spelled as the forward tool: nothing says which.
    assert!(!by_tool.contains_key("create_a.b"), "{found:#?}");
    assert!(
        found
            .skipped
            .iter()
            .any(|s| s.tool == "create_a.b" && s.reason.contains("nothing says which")),
        "{found:#?}"
    );
}
