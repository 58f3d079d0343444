//! The drafting, on small tool lists and journals.

use std::collections::BTreeMap;

use mcp_recovery_model::Tool;
use serde_json::{Value, json};

use super::*;

pub(super) fn tools(value: Value) -> Vec<Tool> {
    serde_json::from_value(value).unwrap()
}

fn suggest(tools: &[Tool]) -> Suggestions {
    suggest_with(tools, &[])
}

fn output(field: &str) -> Binding {
    Binding::Output {
        field: field.to_owned(),
    }
}

pub(super) fn input(field: &str) -> Binding {
    Binding::Input {
        field: field.to_owned(),
    }
}

pub(super) fn by_tool(found: &Suggestions) -> BTreeMap<&str, &Suggestion> {
    found
        .suggestions
        .iter()
        .map(|s| (s.tool.as_str(), s))
        .collect()
}

/// `delete_sheet` of the sheet in `path` named `new_name`.
pub(super) fn sheet_deleted_by_new_name() -> Proposal {
    Proposal::Compensable {
        compensator: "delete_sheet".into(),
        mapping: BTreeMap::from([
            ("path".into(), input("path")),
            ("sheet".into(), input("new_name")),
        ]),
        reader: None,
    }
}

#[test]
fn words_in_every_case() {
    assert_eq!(words("create_entities"), ["create", "entities"]);
    assert_eq!(words("createEntities"), ["create", "entities"]);
    assert_eq!(words("create-entities"), ["create", "entities"]);
    assert_eq!(words("HTTPGet.v2"), ["httpget", "v2"]);
    assert_eq!(words("addLabel2Issue"), ["add", "label2", "issue"]);
}

#[test]
fn pairs_bind_from_output_then_arguments() {
    let list = tools(json!([
        {"name": "createTicket", "inputSchema": {"type": "object",
            "properties": {"title": {"type": "string"}}, "required": ["title"]},
         "outputSchema": {"type": "object", "properties": {"ticketId": {"type": "string"}},
            "required": ["ticketId"]}},
        {"name": "deleteTicket", "inputSchema": {"type": "object",
            "properties": {"ticketId": {"type": "string"}}, "required": ["ticketId"]}},
        {"name": "add-label", "inputSchema": {"type": "object",
            "properties": {"issue": {"type": "integer"}, "label": {"type": "string"}},
            "required": ["issue", "label"]}},
        {"name": "remove-label", "inputSchema": {"type": "object",
            "properties": {"issue": {"type": "number"}, "label": {"type": "string"}},
            "required": ["issue", "label"]}},
        {"name": "lock_issue", "inputSchema": {"type": "object",
            "properties": {"issue": {"type": "string"}}, "required": ["issue"]}},
        {"name": "unlock_issue", "inputSchema": {"type": "object",
            "properties": {"issue": {"type": "string"}}, "required": ["issue"]}},
        {"name": "list_tickets", "inputSchema": {"type": "object"}},
        {"name": "send_email", "inputSchema": {"type": "object"}},
        {"name": "send_digest", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true}}
    ]));
    let found = suggest(&list);
    let by_tool: BTreeMap<&str, &Suggestion> = found
        .suggestions
        .iter()
        .map(|s| (s.tool.as_str(), s))
        .collect();
    assert_eq!(
        by_tool["createTicket"].proposal,
        Proposal::Compensable {
            compensator: "deleteTicket".into(),
            mapping: BTreeMap::from([("ticketId".into(), output("ticketId"))]),
            reader: None,
        }
    );
    assert!(matches!(&by_tool["add-label"].proposal,
        Proposal::Compensable { compensator, mapping, .. } if compensator == "remove-label"
            && mapping["issue"] == input("issue")));
    // A state toggle undoes itself both ways; a delete is not undone by a create.
    assert!(by_tool.contains_key("lock_issue"));
    assert!(by_tool.contains_key("unlock_issue"));
    assert!(!by_tool.contains_key("deleteTicket"));
    assert!(!by_tool.contains_key("remove-label"));
    assert_eq!(by_tool["send_email"].proposal, Proposal::Irreversible);
    assert!(!by_tool.contains_key("list_tickets"));
    assert!(!by_tool.contains_key("send_digest"));
    assert_eq!(found.suggestions.len(), 5, "{:#?}", found.suggestions);
}

#[test]
fn uncertain_pairs_are_left_out() {
    let list = tools(json!([
        {"name": "create_entities", "inputSchema": {"type": "object",
            "properties": {"entities": {"type": "array", "items": {"type": "object"}}},
            "required": ["entities"]}},
        {"name": "delete_entities", "inputSchema": {"type": "object",
            "properties": {"entityNames": {"type": "array", "items": {"type": "string"}}},
            "required": ["entityNames"]}},
        {"name": "create_user", "inputSchema": {"type": "object",
            "properties": {"id": {"type": "string"}}}},
        {"name": "delete_user", "inputSchema": {"type": "object",
            "properties": {"id": {"type": "integer"}}, "required": ["id"]}}
    ]));
    let found = suggest(&list);
    assert!(found.suggestions.is_empty(), "{:#?}", found.suggestions);
    assert_eq!(found.skipped.len(), 2);
}

#[test]
fn compensators_that_could_act_more_broadly_are_left_out() {
    let list = tools(json!([
        {"name": "add-rules", "inputSchema": {"type": "object",
            "properties": {"ID": {"type": "string"}, "Rules": {"type": "array"}},
            "required": ["ID"]}},
        {"name": "remove-rules", "inputSchema": {"type": "object",
            "properties": {"ID": {"type": "string"}, "Rules": {"type": "array"}},
            "required": ["ID"]}},
        {"name": "insert-many", "inputSchema": {"type": "object",
            "properties": {"collection": {"type": "string"}, "documents": {"type": "array"}},
            "required": ["collection", "documents"]}},
        {"name": "delete-many", "inputSchema": {"type": "object",
            "properties": {"collection": {"type": "string"}, "filter": {"type": "object"}},
            "required": ["collection"]}},
        {"name": "create_project", "inputSchema": {"type": "object",
            "properties": {"params": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "required": ["params"]}},
        {"name": "delete_project", "inputSchema": {"type": "object",
            "properties": {"params": {"type": "object", "properties": {"projectId": {"type": "string"}},
                "required": ["projectId"]}},
            "required": ["params"]}},
        {"name": "API-post-search", "inputSchema": {"type": "object"}},
        {"name": "start_trace", "inputSchema": {"type": "object",
            "properties": {"session": {"type": "string"}}, "required": ["session"]}},
        {"name": "stop_trace", "inputSchema": {"type": "object",
            "properties": {"session": {"type": "string"}}, "required": ["session"]}}
    ]));
    let found = suggest(&list);
    let tools: Vec<&str> = found.suggestions.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["start_trace"], "{:#?}", found);
    assert_eq!(found.skipped.len(), 3, "{:#?}", found.skipped);
}

#[test]
fn moves_swap_their_places() {
    let list = tools(json!([
        {"name": "move_file", "inputSchema": {"type": "object",
            "properties": {"source": {"type": "string"}, "destination": {"type": "string"}},
            "required": ["source", "destination"]}}
    ]));
    let found = suggest(&list);
    assert_eq!(
        found.suggestions[0].proposal,
        Proposal::Compensable {
            compensator: "move_file".into(),
            mapping: BTreeMap::from([
                ("destination".into(), input("source")),
                ("source".into(), input("destination")),
            ]),
            reader: None,
        }
    );
}

#[test]
fn toggles_without_parameters_undo_themselves() {
    let list = tools(json!([
        {"name": "toggle-simulated-logging", "description": "Toggles simulated logging on or off.",
         "inputSchema": {"type": "object", "properties": {}}},
        // With a parameter it may be a setter (`enabled`), which a second call repeats.
        {"name": "toggle_dark_mode", "inputSchema": {"type": "object",
            "properties": {"enabled": {"type": "boolean"}}, "required": ["enabled"]}},
        {"name": "toggle_panel", "inputSchema": {"type": "object",
            "properties": {"panel": {"type": "string"}}, "required": ["panel"]}}
    ]));
    let found = suggest(&list);
    assert_eq!(found.suggestions.len(), 1, "{:#?}", found.suggestions);
    assert_eq!(found.suggestions[0].tool, "toggle-simulated-logging");
    assert_eq!(
        found.suggestions[0].proposal,
        Proposal::Compensable {
            compensator: "toggle-simulated-logging".into(),
            mapping: BTreeMap::new(),
            reader: None,
        }
    );
}

#[test]
fn parameters_pair_by_what_they_name() {
    let list = tools(json!([
        {"name": "create_sheet", "inputSchema": {"type": "object",
            "properties": {"path": {"type": "string"}, "new_name": {"type": "string"},
                "position": {"type": "integer"}},
            "required": ["path", "new_name"]}},
        {"name": "delete_sheet", "inputSchema": {"type": "object",
            "properties": {"path": {"type": "string"}, "sheet": {"type": "string"}},
            "required": ["path", "sheet"]}},
        // Two arguments name a board: nothing says which one the compensator takes.
        {"name": "create_board", "inputSchema": {"type": "object",
            "properties": {"board_name": {"type": "string"}, "new_name": {"type": "string"}},
            "required": ["board_name", "new_name"]}},
        {"name": "delete_board", "inputSchema": {"type": "object",
            "properties": {"board": {"type": "string"}}, "required": ["board"]}},
        // An id is not a name, whether the name or the description says it.
        {"name": "create_team", "inputSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}, "required": ["name"]}},
        {"name": "create_site", "inputSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}, "required": ["name"]}},
        {"name": "delete_site", "inputSchema": {"type": "object",
            "properties": {"site": {"type": "string", "description": "The ID of the site."}},
            "required": ["site"]}},
        {"name": "delete_team", "inputSchema": {"type": "object",
            "properties": {"team_id": {"type": "string"}}, "required": ["team_id"]}}
    ]));
    let found = suggest(&list);
    let by_tool = by_tool(&found);
    let sheet = by_tool["create_sheet"];
    assert_eq!(sheet.proposal, sheet_deleted_by_new_name());
    assert_eq!(sheet.confidence, Confidence::Medium);
    assert!(
        sheet.reason.contains("'sheet' from 'new_name'"),
        "{sheet:?}"
    );
    assert_eq!(by_tool.len(), 1, "{found:#?}");
    let reasons: Vec<&str> = found.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert!(
        reasons[0].contains("'board_name' or 'new_name'"),
        "{reasons:?}"
    );
    assert!(reasons[1].contains("gives 'team_id'"), "{reasons:?}");
    assert!(reasons[2].contains("gives 'site'"), "{reasons:?}");
}

#[test]
fn renames_swap_the_old_and_new_names() {
    let name = json!({"type": "string"});
    let list = tools(json!([
        {"name": "rename_sheet", "inputSchema": {"type": "object",
            "properties": {"path": name, "sheet": name, "new_name": name},
            "required": ["path", "sheet", "new_name"]}},
        // Two parameters could be the old name: nothing is swapped.
        {"name": "rename_tab", "inputSchema": {"type": "object",
            "properties": {"tab": name, "tab_name": name, "new_name": name},
            "required": ["tab", "tab_name", "new_name"]}}
    ]));
    let found = suggest(&list);
    assert_eq!(found.suggestions.len(), 1, "{found:#?}");
    assert_eq!(
        found.suggestions[0].proposal,
        Proposal::Compensable {
            compensator: "rename_sheet".into(),
            mapping: BTreeMap::from([
                ("path".into(), input("path")),
                ("sheet".into(), input("new_name")),
                ("new_name".into(), input("sheet")),
            ]),
            reader: None,
        }
    );
}

#[test]
fn new_inverse_verbs() {
    let session = json!({"type": "object",
        "properties": {"session_id": {"type": "string"}}, "required": ["session_id"]});
    let with_output = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}, "outputSchema": session});
    let taking = |name: &str| json!({"name": name, "inputSchema": session});
    let list = tools(json!([
        with_output("new_page"), taking("close_page"),
        with_output("start_codegen_session"), taking("end_codegen_session"),
        with_output("start_process"), taking("kill_process"),
        with_output("create-collection"), taking("drop-collection"),
        with_output("connect"), taking("disconnect"),
        {"name": "git_add", "inputSchema": {"type": "object",
            "properties": {"repo_path": {"type": "string"}, "files": {"type": "array"}},
            "required": ["repo_path", "files"]}},
        {"name": "git_reset", "inputSchema": {"type": "object",
            "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"]}}
    ]));
    let found = suggest(&list);
    let by_tool = by_tool(&found);
    for (forward, inverse) in [
        ("new_page", "close_page"),
        ("start_codegen_session", "end_codegen_session"),
        ("start_process", "kill_process"),
        ("create-collection", "drop-collection"),
        ("connect", "disconnect"),
    ] {
        assert_eq!(by_tool[forward].compensator(), Some(inverse), "{found:#?}");
    }
    // Undone in one direction only; a reset undoes more than the add, so it is no exact undo.
    assert_eq!(by_tool.len(), 5, "{found:#?}");
    let [reset] = found.skipped.as_slice() else {
        panic!("{found:#?}");
    };
    assert_eq!(
        (&*reset.tool, &*reset.compensator),
        ("git_add", "git_reset")
    );
    assert!(reset.reason.contains("more than the call did"), "{reset:?}");
}

#[test]
fn arrays_of_created_things_map_to_arrays_of_names() {
    let list = tools(json!([
        {"name": "create_entities", "inputSchema": {"type": "object",
            "properties": {"entities": {"type": "array", "items": {"type": "object"}}},
            "required": ["entities"]},
         "outputSchema": {"type": "object", "required": ["entities"], "properties": {
            "entities": {"type": "array", "items": {"type": "object",
                "required": ["name", "entityType"],
                "properties": {"name": {"type": "string"}, "entityType": {"type": "string"}}}}}}},
        {"name": "delete_entities", "inputSchema": {"type": "object",
            "properties": {"entityNames": {"type": "array", "items": {"type": "string"}}},
            "required": ["entityNames"]}},
        {"name": "add_observations", "inputSchema": {"type": "object",
            "properties": {"observations": {"type": "array"}}, "required": ["observations"]},
         "outputSchema": {"type": "object", "required": ["results"], "properties": {
            "results": {"type": "array", "items": {"type": "object",
                "required": ["entityName", "addedObservations"],
                "properties": {"entityName": {"type": "string"},
                    "addedObservations": {"type": "array", "items": {"type": "string"}}}}}}}},
        {"name": "delete_observations", "inputSchema": {"type": "object",
            "properties": {"deletions": {"type": "array", "items": {"type": "object",
                "required": ["entityName", "observations"],
                "properties": {"entityName": {"type": "string"},
                    "observations": {"type": "array", "items": {"type": "string"}}}}}},
            "required": ["deletions"]}}
    ]));
    let found = suggest(&list);
    let by_tool = by_tool(&found);
    let Proposal::Compensable { mapping, .. } = &by_tool["create_entities"].proposal else {
        panic!("{found:#?}");
    };
    assert_eq!(
        mapping["entityNames"],
        Binding::Map {
            field: "entities".into(),
            each: json!("$item#/name")
        }
    );
    let Proposal::Compensable { mapping, .. } = &by_tool["add_observations"].proposal else {
        panic!("{found:#?}");
    };
    assert_eq!(
        mapping["deletions"],
        Binding::Map {
            field: "results".into(),
            each: json!({"entityName": "$item#/entityName",
                "observations": "$item#/addedObservations"})
        }
    );
    // The SEP-3172 carrier of the overlay holds map bindings, with the notes.
    let entry = by_tool["create_entities"].entry();
    let recovery = &entry["annotations"]["recovery"];
    assert_eq!(
        recovery["compensatingOperation"]["parameters"]["entityNames"],
        json!({"$map": "$response.body#/entities", "$each": "$item#/name"})
    );
    assert!(
        recovery["notes"]
            .as_str()
            .unwrap()
            .contains("each of 'entities'")
    );
}

#[test]
fn text_results_are_read_only_with_a_documented_schema() {
    let taking_id = json!({"type": "object",
        "properties": {"noteId": {"type": "string"}}, "required": ["noteId"]});
    let list = tools(json!([
        {"name": "create_note", "inputSchema": {"type": "object"},
         "description": "Creates a note. Returns JSON text matching {\"type\": \"object\", \"required\": [\"noteId\"], \"properties\": {\"noteId\": {\"type\": \"string\"}}}."},
        {"name": "delete_note", "inputSchema": taking_id},
        {"name": "create_memo", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}},
            "required": ["result"]},
         "description": "Result schema: {\"type\": \"object\", \"required\": [\"noteId\"], \"properties\": {\"noteId\": {\"type\": \"string\"}}}"},
        {"name": "delete_memo", "inputSchema": taking_id},
        // Its description shows an example value, not a schema: nothing is guessed.
        {"name": "create_page", "inputSchema": {"type": "object"},
         "description": "Returns {\"noteId\": \"n-1\"}."},
        {"name": "delete_page", "inputSchema": taking_id}
    ]));
    let found = suggest(&list);
    let by_tool = by_tool(&found);
    let reader = |tool: &str| match &by_tool[tool].proposal {
        Proposal::Compensable { reader, .. } => reader.clone().map(|r| r.from),
        _ => None,
    };
    assert_eq!(reader("create_note"), Some("text"));
    assert_eq!(reader("create_memo"), Some("fastmcp-result"));
    assert!(!by_tool.contains_key("create_page"), "{found:#?}");
    let entry = by_tool["create_note"].entry();
    assert_eq!(entry["result"]["schema"]["required"], json!(["noteId"]));
    assert_eq!(
        entry["annotations"]["recovery"]["compensatingOperation"]["parameters"]["noteId"],
        "$response.body#/noteId"
    );
}

#[test]
fn writes_are_undone_from_a_before_image() {
    let place = json!({"type": "string"});
    let list = tools(json!([
        {"name": "read_file", "annotations": {"readOnlyHint": true},
         "inputSchema": {"type": "object", "properties": {"path": place},
            "required": ["path"]}},
        {"name": "write_file", "inputSchema": {"type": "object",
            "properties": {"path": place, "content": {"type": "string"}},
            "required": ["path", "content"]}},
        {"name": "edit_file", "inputSchema": {"type": "object",
            "properties": {"path": place, "edits": {"type": "array"}},
            "required": ["path", "edits"]}},
        // A record's value is no text the write takes back.
        {"name": "read_record", "annotations": {"readOnlyHint": true},
         "inputSchema": {"type": "object", "properties": {"key": place},
            "required": ["key"]}},
        {"name": "write_record", "inputSchema": {"type": "object",
            "properties": {"key": place, "value": {"type": "object"}},
            "required": ["key", "value"]}},
        // A read that its server does not annotate read-only is never run by a proxy.
        {"name": "read_note", "inputSchema": {"type": "object", "properties": {"id": place},
            "required": ["id"]}},
        {"name": "write_note", "inputSchema": {"type": "object",
            "properties": {"id": place, "text": {"type": "string"}},
            "required": ["id", "text"]}}
    ]));
    let found = suggest(&list);
    let by_tool = by_tool(&found);
    assert!(!by_tool.contains_key("write_note"), "{found:#?}");
    let write = by_tool["write_file"];
    assert_eq!(
        write.proposal,
        Proposal::Before {
            read: "read_file".into(),
            arguments: BTreeMap::from([("path".into(), "path".into())]),
            write: "write_file".into(),
            content: "content".into(),
        }
    );
    assert_eq!(write.confidence, Confidence::Medium);
    assert_eq!(by_tool["edit_file"].compensator(), Some("write_file"));
    assert!(!by_tool.contains_key("write_record"), "{found:#?}");
    assert!(!by_tool.contains_key("read_file"));
    assert_eq!(
        write.entry(),
        json!({"before": {"read": "read_file", "arguments": {"path": "$request.body#/path"},
            "found": {"operationId": "write_file",
                "parameters": {"path": "$request.body#/path", "content": "$before.text"}}}})
    );
}

/// A read that pages by default (`length` 1000) returns no whole text to write back, whatever its
/// call leaves out; one whose option has no default (`head`) reads everything unless asked not to.
#[test]
fn reads_that_page_by_default_give_no_before_image() {
    let place = json!({"type": "string"});
    let list = |option: Value| {
        tools(json!([
            {"name": "read_file", "annotations": {"readOnlyHint": true},
             "inputSchema": {"type": "object", "properties": {"path": place, "limit": option},
                "required": ["path"]}},
            {"name": "write_file", "inputSchema": {"type": "object",
                "properties": {"path": place, "content": {"type": "string"}},
                "required": ["path", "content"]}}
        ]))
    };
    let paged = suggest(&list(json!({"type": "number", "default": 1000})));
    assert!(!by_tool(&paged).contains_key("write_file"), "{paged:#?}");
    let whole = suggest(&list(json!({"type": "number"})));
    assert_eq!(
        by_tool(&whole)["write_file"].compensator(),
        Some("write_file"),
        "{whole:#?}"
    );
}

fn recorded(session: &str, name: &str, arguments: Value, structured: Value) -> Recorded {
    Recorded {
        session: session.to_owned(),
        name: name.to_owned(),
        arguments,
        result: Some(json!({"content": [], "structuredContent": structured})),
        redacted: false,
    }
}

#[test]
fn a_journal_confirms_teaches_and_contradicts() {
    let list = tools(json!([
        {"name": "reserve_stock", "inputSchema": {"type": "object",
            "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
         "outputSchema": {"type": "object", "required": ["reservationId"],
            "properties": {"reservationId": {"type": "string"}}}},
        {"name": "release_stock", "inputSchema": {"type": "object",
            "properties": {"reservationId": {"type": "string"}},
            "required": ["reservationId"]}},
        {"name": "start_job", "inputSchema": {"type": "object",
            "properties": {"spec": {"type": "string"}}, "required": ["spec"]}},
        {"name": "stop_job", "inputSchema": {"type": "object",
            "properties": {"handle": {"type": "string"}}, "required": ["handle"]}}
    ]));
    let mut calls = Vec::new();
    for session in ["a", "b", "c"] {
        let id = format!("r-{session}");
        calls.push(recorded(
            session,
            "reserve_stock",
            json!({"sku": "w"}),
            json!({"reservationId": id}),
        ));
        calls.push(recorded(
            session,
            "release_stock",
            json!({"reservationId": id}),
            json!({}),
        ));
        calls.push(recorded(
            session,
            "start_job",
            json!({"spec": "x"}),
            json!({"jobId": format!("j-{session}")}),
        ));
        calls.push(recorded(
            session,
            "stop_job",
            json!({"handle": format!("j-{session}")}),
            json!({}),
        ));
    }
    // A session without the pair counts for nothing.
    calls.push(recorded(
        "d",
        "start_job",
        json!({"spec": "x"}),
        json!({"jobId": "j"}),
    ));
    let without = suggest(&list);
    assert!(!by_tool(&without).contains_key("start_job"));
    let found = suggest_with(&list, &calls);
    let by_tool_found = by_tool(&found);
    assert!(
        by_tool_found["reserve_stock"]
            .reason
            .contains("seen in 3 of 3 session(s)"),
        "{found:#?}"
    );
    let job = by_tool_found["start_job"];
    assert_eq!(
        job.proposal,
        Proposal::Compensable {
            compensator: "stop_job".into(),
            mapping: BTreeMap::from([("handle".into(), output("jobId"))]),
            reader: None,
        }
    );
    assert!(job.reason.contains("seen in 3 of 3 session(s)"), "{job:?}");
    assert_eq!(job.confidence, Confidence::Medium);
    // One call releasing another reservation than the one just made: not drafted.
    calls.push(recorded(
        "e",
        "reserve_stock",
        json!({"sku": "w"}),
        json!({"reservationId": "r-e"}),
    ));
    calls.push(recorded(
        "e",
        "release_stock",
        json!({"reservationId": "r-a"}),
        json!({}),
    ));
    calls.push(recorded(
        "e",
        "start_job",
        json!({"spec": "x"}),
        json!({"jobId": "j-e"}),
    ));
    calls.push(recorded(
        "e",
        "stop_job",
        json!({"handle": "j-a"}),
        json!({}),
    ));
    let contradicted = suggest_with(&list, &calls);
    assert!(contradicted.suggestions.is_empty(), "{contradicted:#?}");
    assert!(
        contradicted.skipped[0].reason.contains("the journal shows"),
        "{contradicted:#?}"
    );
}

#[test]
fn values_the_journal_redacted_are_no_evidence() {
    let list = tools(json!([
        {"name": "start_job", "inputSchema": {"type": "object",
            "properties": {"spec": {"type": "string"}}, "required": ["spec"]}},
        {"name": "stop_job", "inputSchema": {"type": "object",
            "properties": {"handle": {"type": "string"}}, "required": ["handle"]}}
    ]));
    let pair = |session: &str, job: &str, handle: &str, redacted: bool| {
        let mut start = recorded(
            session,
            "start_job",
            json!({"spec": "x"}),
            json!({"jobId": job}),
        );
        let mut stop = recorded(session, "stop_job", json!({"handle": handle}), json!({}));
        start.redacted = redacted;
        stop.redacted = redacted;
        [start, stop]
    };
    // Equal only because both lost a secret: it teaches nothing.
    let masked: Vec<Recorded> = pair("a", "***", "***", true).into();
    let found = suggest_with(&list, &masked);
    assert!(!by_tool(&found).contains_key("start_job"), "{found:#?}");
    // Two sessions agree; a third whose values differ only where a secret was masked neither
    // agrees nor contradicts; an unmarked `***` is a value like any other and contradicts.
    let mut calls: Vec<Recorded> = ["b", "c"]
        .into_iter()
        .flat_map(|s| pair(s, &format!("j-{s}"), &format!("j-{s}"), false))
        .collect();
    calls.extend(pair("d", "j-***", "***", true));
    let found = suggest_with(&list, &calls);
    let job = by_tool(&found)["start_job"];
    assert!(job.reason.contains("seen in 2 of 3 session(s)"), "{job:?}");
    calls.extend(pair("e", "j-e", "***", false));
    let contradicted = suggest_with(&list, &calls);
    assert!(
        !by_tool(&contradicted).contains_key("start_job"),
        "{contradicted:#?}"
    );
}
