//! An undo from a before-image made only while the target is as the call left it (`unchanged`):
//! the proxy reads it again once a call succeeded and journals that after-image with the
//! outcome; its rollback writes the before-image back only when the read still returns it.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use common::files::{Files, HANDSHAKE, TOOLS, file_server};
use common::{Journaled, request, rollback_settings, run_journaled};
use mcp_recovery_model::{Overlay, OverlayFormat};
use serde_json::{Map, Value, json};

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

/// Writes `a.txt` with each text, then fails; returns the session and the files after it.
fn session(overlay: &str, contents: &[&str], person: bool) -> (Journaled, Files) {
    let files = Arc::new(Mutex::new(Files::from([(
        "a.txt".to_owned(),
        "v1".to_owned(),
    )])));
    let mut client = HANDSHAKE.to_owned();
    for (i, content) in contents.iter().enumerate() {
        let id = u32::try_from(i).unwrap() + 1;
        client.push_str(&request(
            id,
            "write_file",
            json!({"path": "a.txt", "content": content}),
        ));
    }
    client.push_str(&request(
        99,
        "write_file",
        json!({"path": "fail.txt", "content": "x"}),
    ));
    let dir = tempfile::tempdir().unwrap();
    let run = run_journaled(
        dir.path(),
        rollback_settings("o.toml", overlay),
        client.into_bytes(),
        file_server(Arc::clone(&files), person),
    );
    let files = files.lock().unwrap().clone();
    (run, files)
}

/// The tools the server was called with, in order.
fn called(run: &Journaled) -> Vec<String> {
    run.received
        .iter()
        .filter_map(|line| {
            let message: Value = serde_json::from_str(line).ok()?;
            Some(message["params"]["name"].as_str()?.to_owned())
        })
        .collect()
}

fn of_kind<'a>(run: &'a Journaled, kind: &str) -> Vec<&'a Map<String, Value>> {
    run.records.iter().filter(|r| r["kind"] == kind).collect()
}

#[test]
fn a_chain_of_writes_is_read_after_each_and_rolled_back_fully() {
    let (run, files) = session(OVERLAY, &["v2", "v3"], false);
    assert_eq!(files["a.txt"], "v1");
    // Each write is read before and after; the failed one is read before only; the rollback
    // reads before each undo.
    let write = ["read_file", "write_file", "read_file"];
    let failed = ["read_file", "write_file"];
    let undo = ["read_file", "write_file"];
    assert_eq!(
        called(&run),
        [&write[..], &write, &failed, &undo, &undo].concat()
    );
    let outcomes = of_kind(&run, "call.outcome");
    let afters: Vec<&Value> = outcomes
        .iter()
        .map(|r| r.get("after").unwrap_or(&Value::Null))
        .collect();
    assert_eq!(afters[0]["name"], "read_file");
    assert_eq!(afters[0]["arguments"], json!({"path": "a.txt"}));
    assert_eq!(afters[0]["result"]["content"][0]["text"], "v2");
    assert_eq!(afters[1]["result"]["content"][0]["text"], "v3");
    // A failed call has no after-image.
    assert_eq!(afters[2], &Value::Null);
    let undone: Vec<&Value> = of_kind(&run, "compensation.intent")
        .iter()
        .map(|r| &r["arguments"]["content"])
        .collect();
    assert_eq!(undone, [&json!("v2"), &json!("v1")]);
    assert!(of_kind(&run, "compensation.skip").is_empty());

    // The journal alone plans the same checks (as `rollback` and `plan --trace` read it).
    let text: String = run
        .records
        .iter()
        .map(|r| format!("{}\n", Value::Object(r.clone())))
        .collect();
    let mut listed: Value = serde_json::from_str(TOOLS).unwrap();
    Overlay::parse(OVERLAY, OverlayFormat::Toml)
        .unwrap()
        .apply(&mut listed);
    let list = mcp_recovery_plan::load_tools(&listed).unwrap();
    let calls = mcp_recovery_plan::parse_session_trace(&text, "s1").unwrap();
    let plan = mcp_recovery_plan::build_plan(&list, &calls);
    let expected: Vec<Value> = plan
        .steps
        .iter()
        .filter_map(|s| Some(s.check.as_ref()?.expected["content"][0]["text"].clone()))
        .collect();
    assert_eq!(expected, [json!("v3"), json!("v2")], "{plan:?}");
}

#[test]
fn a_file_changed_since_the_call_keeps_the_change() {
    let (run, files) = session(OVERLAY, &["v2"], true);
    assert_eq!(files["a.txt"], "v3 by a person");
    assert!(of_kind(&run, "compensation.intent").is_empty());
    let skips = of_kind(&run, "compensation.skip");
    assert_eq!(skips.len(), 1);
    assert_eq!(skips[0]["status"], "changed");
    assert!(
        skips[0]["reason"]
            .as_str()
            .unwrap()
            .contains("has changed since the call"),
        "{skips:?}"
    );
    let end = of_kind(&run, "rollback.end");
    assert_eq!(end[0]["skipped"], 1);
    // The client is told the write was not undone.
    let told = run.client.iter().find(|l| l.contains("disk full")).unwrap();
    assert!(told.contains("has changed since the call"), "{told}");
}

/// Without `unchanged`, nothing is read after a call and the outcome has no `after`.
#[test]
fn without_unchanged_nothing_is_read_after_the_call() {
    let overlay = OVERLAY.replace("unchanged = true\n", "");
    let (run, files) = session(&overlay, &["v2"], true);
    // The old behaviour: the before-image is written back whatever happened since.
    assert_eq!(files["a.txt"], "v1");
    assert_eq!(
        called(&run),
        [
            "read_file",
            "write_file",
            "read_file",
            "write_file",
            "write_file"
        ]
    );
    assert!(
        of_kind(&run, "call.outcome")
            .iter()
            .all(|r| !r.contains_key("after"))
    );
}
