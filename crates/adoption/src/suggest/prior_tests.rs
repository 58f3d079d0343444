//! Pairs whose inverse would not undo the call exactly, because the forward tool says it may
//! replace what is there or leave what is already there as it is; inverses that undo more than
//! the call; and the reasons of tools declared irreversible beside a tool named like an undo.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::naming_tests::object;
use super::prior::{Prior, in_text};
use super::tests::{by_tool, tools};
use super::*;

fn text() -> Value {
    json!({"type": "string"})
}

/// What the sentences say of a tool acting on `noun`.
fn says(description: &str, noun: &str) -> Option<Prior> {
    let noun: Vec<String> = noun.split('_').map(str::to_owned).collect();
    in_text(description, &noun).map(|(prior, _)| prior)
}

/// The reason a pair was left out for.
fn left_out<'a>(found: &'a Suggestions, tool: &str, compensator: &str) -> &'a str {
    found
        .skipped
        .iter()
        .find(|s| s.tool == tool && s.compensator == compensator)
        .map(|s| s.reason.as_str())
        .unwrap_or_else(|| panic!("{tool} → {compensator} is not left out: {found:#?}"))
}

#[test]
fn replacing_what_is_there() {
    for sentence in [
        "Add sparklines to the cells of `range`. Replaces existing ones there.",
        "Add or replace a chart.",
        "Create a new file or completely overwrite an existing file with new content.",
        "Creates or updates a secret.",
        "Create a table, or change one.",
        "Upserts the record by its key.",
        "Sets the value, superseding the one stored.",
        "If true, drops the target collection if it exists",
        "Clears any existing formatting of the range first.",
    ] {
        assert_eq!(says(sentence, "thing"), Some(Prior::Replaced), "{sentence}");
    }
}

#[test]
fn leaving_what_is_already_there_as_it_is() {
    for (sentence, noun) in [
        (
            "Adds a label. A label the issue already has is left unchanged.",
            "label",
        ),
        (
            "Locking an account that is already locked has no effect.",
            "account",
        ),
        ("Does nothing if the label already exists.", "label"),
        ("Idempotent: a second call changes nothing.", "tag"),
        ("Skips entities that already exist.", "entity"),
        ("Labels the issue already has are not added again.", "label"),
        (
            "Succeeds silently when the directory is already there.",
            "directory",
        ),
        ("A no-op when the tag is present.", "tag"),
        ("Reuses an existing session of the same name.", "session"),
        ("Creates the directory if it does not exist.", "directory"),
        (
            "Creates the directory if it doesn't exist yet.",
            "directory",
        ),
        (
            "Create a new directory or ensure a directory exists.",
            "directory",
        ),
        ("Adds the member to the group if missing.", "member"),
        ("Creates the folder unless it exists.", "folder"),
        // A sentence wrapped over two lines is one sentence.
        (
            "Adds a tag to the item. A tag the item\nalready has is left unchanged.",
            "tag",
        ),
    ] {
        assert_eq!(says(sentence, noun), Some(Prior::Held), "{sentence}");
    }
}

#[test]
fn denials_failures_and_other_things_say_nothing() {
    for (sentence, noun) in [
        // Denied.
        ("Moves the file; never replaces its destination.", "file"),
        ("Does not overwrite existing files.", "file"),
        ("Returns an error rather than overwriting.", "file"),
        ("Not idempotent: every call adds a row.", "row"),
        // The call fails where something is there: undone exactly when it succeeds.
        ("Fails if the sheet already exists.", "sheet"),
        (
            "If the destination exists, the operation will fail.",
            "file",
        ),
        (
            "Creates the label; an error is returned if it already exists.",
            "label",
        ),
        // What is there is another thing than the one made.
        (
            "Add new observations to existing entities in the knowledge graph",
            "observation",
        ),
        (
            "Creates a new collection in a database. If the database doesn't exist, it will be created automatically.",
            "collection",
        ),
        ("Existing labels are kept.", "label"),
        ("Ensure the path is absolute.", "file"),
        // Separate sentences, one per line, each starting with a capital.
        (
            "Works on existing sheets\nNothing is sent over the network",
            "sheet",
        ),
        ("Add an empty worksheet.", "sheet"),
    ] {
        assert_eq!(says(sentence, noun), None, "{sentence}");
    }
}

#[test]
fn an_inverse_that_cannot_bring_back_what_was_replaced_is_left_out() {
    let range = object(
        json!({"path": text(), "sheet": text(), "range": text()}),
        json!(["path", "sheet", "range"]),
    );
    let list = tools(json!([
        {"name": "add_sparklines",
         "description": "Add sparklines to the cells of `range`, one per row of\n`source`. Replaces existing ones there.",
         "inputSchema": object(
            json!({"path": text(), "sheet": text(), "range": text(), "source": text()}),
            json!(["path", "sheet", "range", "source"]))},
        {"name": "delete_sparklines", "description": "Remove the sparklines in a range.",
         "inputSchema": range},
        // The same pair, without the sentence: drafted as before.
        {"name": "add_borders", "description": "Add borders to the cells of `range`.",
         "inputSchema": range},
        {"name": "delete_borders", "inputSchema": range}
    ]));
    let found = suggest_with(&list, &[]);
    let by_tool = by_tool(&found);
    assert!(!by_tool.contains_key("add_sparklines"), "{found:#?}");
    let reason = left_out(&found, "add_sparklines", "delete_sparklines");
    assert!(
        reason.contains("'replaces' in its description")
            && reason.contains("'delete_sparklines' cannot bring back what the call replaced"),
        "{reason}"
    );
    assert_eq!(by_tool["add_borders"].compensator(), Some("delete_borders"));
    assert_eq!(by_tool["add_borders"].confidence, Confidence::High);
}

#[test]
fn an_inverse_that_would_undo_what_already_held_is_left_out() {
    let issue_label = object(
        json!({"issue": {"type": "integer"}, "label": text()}),
        json!(["issue", "label"]),
    );
    let account = object(json!({"account": text()}), json!(["account"]));
    let list = tools(json!([
        {"name": "add_label",
         "description": "Adds a label to an issue. A label the issue already has is left unchanged.",
         "inputSchema": issue_label},
        {"name": "remove_label", "description": "Removes a label from an issue.",
         "inputSchema": issue_label},
        {"name": "lock_account",
         "description": "Locks the account. Locking an account that is already locked has no effect.",
         "inputSchema": account},
        {"name": "unlock_account", "description": "Unlocks the account. Idempotent.",
         "inputSchema": account}
    ]));
    let found = suggest_with(&list, &[]);
    assert!(found.suggestions.is_empty(), "{found:#?}");
    let reason = left_out(&found, "add_label", "remove_label");
    assert!(
        reason.contains("'unchanged' in its description")
            && reason.contains("would then undo what held before the call"),
        "{reason}"
    );
    let lock = left_out(&found, "lock_account", "unlock_account");
    assert!(lock.contains("'no effect' in its description"), "{lock}");
    let unlock = left_out(&found, "unlock_account", "lock_account");
    assert!(
        unlock.contains("'idempotent' in its description"),
        "{unlock}"
    );
}

#[test]
fn parameters_that_replace_what_is_there() {
    let chart = json!({"path": text(), "sheet": text(), "name": text()});
    let place = |extra: (&str, Value)| {
        let mut properties = json!({"path": text(), "name": text()});
        properties[extra.0] = extra.1;
        object(properties, json!(["path", "name"]))
    };
    let named = object(
        json!({"path": text(), "name": text()}),
        json!(["path", "name"]),
    );
    let list = tools(json!([
        {"name": "create_chart", "description": "Add a chart. Returns its name and cells.",
         "inputSchema": object(
            json!({"path": text(), "sheet": text(), "chart_type": text(),
                "replace": {"type": "string", "description": "Name of a chart to replace in place."}}),
            json!(["path", "sheet", "chart_type"]))},
        {"name": "delete_chart", "inputSchema": object(chart, json!(["path", "sheet", "name"]))},
        {"name": "create_report", "inputSchema": place(("overwrite", json!({"type": "boolean"})))},
        {"name": "delete_report", "inputSchema": named},
        {"name": "create_folder", "inputSchema": place(("exist_ok", json!({"type": "boolean"})))},
        {"name": "delete_folder", "inputSchema": named},
        {"name": "create_table", "inputSchema": place(
            ("if_exists", json!({"type": "string", "enum": ["fail", "replace", "append"]})))},
        {"name": "drop_table", "inputSchema": named},
        {"name": "rename-collection", "inputSchema": object(
            json!({"database": text(), "collection": text(), "newName": text(),
                "dropTarget": {"type": "boolean", "default": false,
                    "description": "If true, drops the target collection if it exists"}}),
            json!(["database", "collection", "newName"]))}
    ]));
    let found = suggest_with(&list, &[]);
    assert!(found.suggestions.is_empty(), "{found:#?}");
    for (tool, compensator, said) in [
        ("create_chart", "delete_chart", "(its parameter 'replace')"),
        (
            "create_report",
            "delete_report",
            "(its parameter 'overwrite')",
        ),
        (
            "create_folder",
            "delete_folder",
            "(its parameter 'exist_ok')",
        ),
        (
            "create_table",
            "drop_table",
            "('replace' among the values of its parameter 'if_exists')",
        ),
        (
            "rename-collection",
            "rename-collection",
            "('drops' in the description of its parameter 'dropTarget')",
        ),
    ] {
        let reason = left_out(&found, tool, compensator);
        assert!(reason.contains(said), "{reason}");
    }
}

#[test]
fn what_was_replaced_is_brought_back_from_a_before_image() {
    let key = object(json!({"key": text()}), json!(["key"]));
    let list = tools(json!([
        {"name": "set_config", "description": "Sets a value, replacing the one stored.",
         "inputSchema": object(json!({"key": text(), "value": text()}), json!(["key", "value"]))},
        {"name": "unset_config", "inputSchema": key},
        {"name": "read_config", "inputSchema": key, "annotations": {"readOnlyHint": true}},
        {"name": "write_config", "inputSchema": object(
            json!({"key": text(), "content": text()}), json!(["key", "content"]))},
        // What an irreversible verb sends out is not brought back by writing it again.
        {"name": "publish_config", "description": "Publishes the value, replacing the one published.",
         "inputSchema": key}
    ]));
    let found = suggest_with(&list, &[]);
    let by_tool = by_tool(&found);
    let set = by_tool["set_config"];
    assert_eq!(
        set.proposal,
        Proposal::Before {
            read: "read_config".into(),
            arguments: BTreeMap::from([("key".into(), "key".into())]),
            write: "write_config".into(),
            content: "content".into(),
        }
    );
    assert!(
        set.reason
            .starts_with("the call may replace what is there, which no inverse brings back"),
        "{set:?}"
    );
    assert!(
        by_tool["write_config"]
            .reason
            .starts_with("no inverse is listed")
    );
    assert_eq!(by_tool["publish_config"].proposal, Proposal::Irreversible);
}

#[test]
fn an_inverse_that_undoes_more_than_the_call_is_left_out() {
    let list = tools(json!([
        {"name": "git_add", "inputSchema": object(
            json!({"repo_path": text(), "files": {"type": "array", "items": text()}}),
            json!(["repo_path", "files"]))},
        {"name": "git_reset", "inputSchema": object(json!({"repo_path": text()}), json!(["repo_path"]))}
    ]));
    let found = suggest_with(&list, &[]);
    assert!(found.suggestions.is_empty(), "{found:#?}");
    let reason = left_out(&found, "git_add", "git_reset");
    assert!(
        reason.contains("more than the call did") && reason.contains("not undo the call exactly"),
        "{reason}"
    );
}

#[test]
fn irreversible_reasons_name_the_tools_that_do_not_take_the_call_back() {
    let message = object(
        json!({"channel": text(), "text": text()}),
        json!(["channel", "text"]),
    );
    let alone = tools(json!([
        {"name": "send_message", "inputSchema": message}
    ]));
    let found = suggest_with(&alone, &[]);
    assert_eq!(
        found.suggestions[0].reason,
        "'send' cannot be taken back once done, and no inverse tool is listed"
    );
    let list = tools(json!([
        {"name": "send_message", "inputSchema": message},
        {"name": "delete_message", "inputSchema": object(json!({"ts": text()}), json!(["ts"]))},
        {"name": "get_message", "inputSchema": object(json!({"ts": text()}), json!(["ts"]))},
        {"name": "purge_file", "inputSchema": object(json!({"path": text()}), json!(["path"]))},
        {"name": "restore_file", "inputSchema": object(json!({"path": text()}), json!(["path"]))},
        {"name": "undelete_file", "inputSchema": object(json!({"path": text()}), json!(["path"]))}
    ]));
    let found = suggest_with(&list, &[]);
    let by_tool = by_tool(&found);
    assert_eq!(by_tool["send_message"].proposal, Proposal::Irreversible);
    assert_eq!(
        by_tool["send_message"].reason,
        "'send' cannot be taken back once done: 'delete_message' is listed but does not undo a 'send', as what the call sent has already left the system"
    );
    assert_eq!(
        by_tool["purge_file"].reason,
        "'purge' cannot be taken back once done: 'restore_file' and 'undelete_file' are listed but do not undo a 'purge', as what the call destroyed is gone for good"
    );
    assert!(by_tool["purge_file"].compensator().is_none());
}
