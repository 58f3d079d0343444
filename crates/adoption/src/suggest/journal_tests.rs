//! Bindings learned from a journal when the forward call's result holds its JSON as text.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::tests::{by_tool, tools};
use super::*;

/// `create_issue`, whose result is text, and `delete_issue`, taking the key the text holds.
fn issue_tools(output_schema: Option<Value>) -> Vec<mcp_recovery_model::Tool> {
    let mut create = json!({"name": "create_issue", "inputSchema": {"type": "object",
        "properties": {"summary": {"type": "string"}}, "required": ["summary"]}});
    if let Some(schema) = output_schema {
        create["outputSchema"] = schema;
    }
    tools(
        json!([create, {"name": "delete_issue", "inputSchema": {"type": "object",
        "properties": {"issue_key": {"type": "string"}}, "required": ["issue_key"]}}]),
    )
}

fn call(session: &str, name: &str, arguments: Value, result: Value) -> Recorded {
    Recorded {
        session: session.to_owned(),
        name: name.to_owned(),
        arguments,
        result: Some(result),
        redacted: false,
    }
}

/// Two sessions that each create an issue and delete it, the result made by `result` from the
/// JSON the server returned.
fn journal(result: impl Fn(&Value) -> Value) -> Vec<Recorded> {
    let mut calls = Vec::new();
    for (session, key) in [("a", "PROJ-1"), ("b", "PROJ-2")] {
        let created = json!({"message": "Issue created", "issue": {"key": key, "id": 10001}});
        let summary = json!({"summary": "s"});
        calls.push(call(session, "create_issue", summary, result(&created)));
        let done = json!({"content": [{"type": "text", "text": "{\"deleted\": true}"}]});
        calls.push(call(
            session,
            "delete_issue",
            json!({"issue_key": key}),
            done,
        ));
    }
    calls
}

fn text(value: &Value) -> Value {
    json!([{"type": "text", "text": value.to_string()}])
}

/// The schema the drafted reader gives the value read: it requires `issue.key`, a string.
fn key_schema() -> Value {
    json!({"type": "object", "required": ["issue"], "properties": {"issue": {"type": "object",
        "required": ["key"], "properties": {"key": {"type": "string"}}}}})
}

#[test]
fn a_fastmcp_result_string_teaches_a_nested_binding_and_its_reader() {
    let wrapper = json!({"type": "object", "properties": {"result": {"type": "string"}},
        "required": ["result"], "x-fastmcp-wrap-result": true});
    let list = issue_tools(Some(wrapper));
    assert!(suggest_with(&list, &[]).suggestions.is_empty());
    let calls = journal(
        |created| json!({"content": text(created), "structuredContent": {"result": created.to_string()}}),
    );
    let found = suggest_with(&list, &calls);
    let draft = by_tool(&found)["create_issue"];
    assert_eq!(
        draft.proposal,
        Proposal::Compensable {
            compensator: "delete_issue".into(),
            mapping: BTreeMap::from([(
                "issue_key".into(),
                Binding::Output {
                    field: "issue/key".into()
                }
            )]),
            reader: Some(Reader {
                from: "fastmcp-result",
                schema: key_schema(),
            }),
        },
        "{found:#?}"
    );
    assert_eq!(draft.confidence, Confidence::Medium);
    assert!(
        draft.reason.contains(
            "'issue_key' ← $response.body#/issue/key seen in 2 of 2 session(s), read from the \
             JSON in FastMCP's result string"
        ),
        "{}",
        draft.reason
    );
    let entry = draft.entry();
    assert_eq!(
        entry["annotations"]["recovery"]["compensatingOperation"]["parameters"]["issue_key"],
        "$response.body#/issue/key"
    );
    assert_eq!(entry["result"]["from"], "fastmcp-result");
}

#[test]
fn the_json_of_a_text_item_teaches_a_binding_and_a_text_reader() {
    let list = issue_tools(None);
    let calls = journal(|created| json!({"content": text(created)}));
    let found = suggest_with(&list, &calls);
    let Proposal::Compensable {
        mapping, reader, ..
    } = &by_tool(&found)["create_issue"].proposal
    else {
        panic!("{found:#?}");
    };
    assert_eq!(
        mapping["issue_key"].path().as_deref(),
        Some("$.output.structuredContent.issue.key")
    );
    assert_eq!(
        reader.as_ref().map(|r| (r.from, &r.schema)),
        Some(("text", &key_schema()))
    );
}

#[test]
fn text_that_is_no_json_object_or_that_disagrees_teaches_nothing() {
    let list = issue_tools(None);
    // Prose, two text items, or a key the delete did not take: nothing is drafted.
    let prose = journal(|created| {
        json!({"content": [{"type": "text",
        "text": format!("Created {}", created["issue"]["key"])}]})
    });
    let two = journal(|created| {
        json!({"content": [{"type": "text", "text": created.to_string()},
            {"type": "text", "text": "{}"}]})
    });
    let mut other = journal(|created| json!({"content": text(created)}));
    other[3].arguments = json!({"issue_key": "PROJ-1"});
    for calls in [prose, two, other] {
        let found = suggest_with(&list, &calls);
        assert!(found.suggestions.is_empty(), "{found:#?}");
    }
}

#[test]
fn a_binding_from_the_arguments_drafts_no_reader() {
    let list = tools(json!([
        {"name": "create_issue", "inputSchema": {"type": "object",
            "properties": {"summary": {"type": "string"}}, "required": ["summary"]}},
        {"name": "delete_issue", "inputSchema": {"type": "object",
            "properties": {"title": {"type": "string"}}, "required": ["title"]}}
    ]));
    let mut calls = Vec::new();
    for session in ["a", "b"] {
        let created = json!({"content": text(&json!({"ok": true}))});
        calls.push(call(
            session,
            "create_issue",
            json!({"summary": session}),
            created,
        ));
        let done = json!({"content": []});
        calls.push(call(
            session,
            "delete_issue",
            json!({"title": session}),
            done,
        ));
    }
    let found = suggest_with(&list, &calls);
    let draft = by_tool(&found)["create_issue"];
    let Proposal::Compensable {
        mapping, reader, ..
    } = &draft.proposal
    else {
        panic!("{found:#?}");
    };
    assert_eq!(
        mapping["title"],
        Binding::Input {
            field: "summary".into()
        }
    );
    assert_eq!(reader, &None);
    assert!(!draft.reason.contains("read from"), "{}", draft.reason);
}
