//! Undo from a before-image through the proxy: before each write the proxy runs the read the
//! overlay declares and journals what it returned; a failed workflow then writes old text back
//! or moves a file it created out of the way, by what the read found.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::files::{Files, HANDSHAKE, TOOLS, file_server};
use common::{request, rollback_settings};
use mcp_recovery_journal::Journal;
use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_proxy::{Policy, ScriptRun, run_scripted};
use serde_json::{Value, json};

const OVERLAY: &str = include_str!("../../../fixtures/overlays/files.overlay.toml");

#[test]
fn a_failed_workflow_puts_files_back_from_their_before_images() {
    let before: Files = BTreeMap::from([
        ("a.txt".to_owned(), "old text".to_owned()),
        ("keep.txt".to_owned(), "untouched".to_owned()),
    ]);
    let files = Arc::new(Mutex::new(before));
    let client = [
        HANDSHAKE.to_owned(),
        request(
            1,
            "write_file",
            json!({"path": "a.txt", "content": "new text"}),
        ),
        request(
            2,
            "write_file",
            json!({"path": "b.txt", "content": "fresh"}),
        ),
        request(3, "write_file", json!({"path": "fail.txt", "content": "x"})),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let journal = Journal::open(&path, 1 << 30).unwrap();
    let ScriptRun { end, output, .. } = run_scripted(
        rollback_settings("files.overlay.toml", OVERLAY),
        Some(Arc::new(Mutex::new(journal))),
        client.into_bytes(),
        Vec::new(),
        file_server(Arc::clone(&files), false),
    );
    end.unwrap();
    // a.txt has its old text again; b.txt, which the workflow created, is out of the way (the
    // server has no delete); keep.txt was never touched.
    let expected: Files = BTreeMap::from([
        ("a.txt".to_owned(), "old text".to_owned()),
        ("b.txt.rolled-back".to_owned(), "fresh".to_owned()),
        ("keep.txt".to_owned(), "untouched".to_owned()),
    ]);
    assert_eq!(*files.lock().unwrap(), expected);
    assert!(String::from_utf8(output).unwrap().contains("disk full"));

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(mcp_recovery_journal::verify(&text).broken.is_none());
    let records = mcp_recovery_journal::read_records(&text).unwrap();
    let befores: Vec<&Value> = records
        .iter()
        .filter(|r| r["kind"] == "call.intent")
        .map(|r| &r["before"])
        .collect();
    assert_eq!(befores[0]["name"], "read_file");
    assert_eq!(befores[0]["arguments"], json!({"path": "a.txt"}));
    assert_eq!(befores[0]["result"]["content"][0]["text"], "old text");
    assert_eq!(befores[1]["result"]["isError"], true);
    let compensations: Vec<(&Value, &Value)> = records
        .iter()
        .filter(|r| r["kind"] == "compensation.intent")
        .map(|r| (&r["name"], &r["arguments"]))
        .collect();
    assert_eq!(
        compensations,
        [
            (
                &json!("move_file"),
                &json!({"source": "b.txt", "destination": "b.txt.rolled-back"})
            ),
            (
                &json!("write_file"),
                &json!({"path": "a.txt", "content": "old text"})
            ),
        ]
    );

    // The journal alone plans the same rollback (as `rollback` and `plan --trace` read it).
    let mut listed: Value = serde_json::from_str(TOOLS).unwrap();
    Overlay::parse(OVERLAY, OverlayFormat::Toml)
        .unwrap()
        .apply(&mut listed);
    let list = mcp_recovery_plan::load_tools(&listed).unwrap();
    let calls = mcp_recovery_plan::parse_session_trace(&text, "s1").unwrap();
    let plan = mcp_recovery_plan::build_plan(&list, &calls);
    let planned: Vec<&str> = plan.calls().map(|c| c.name.as_str()).collect();
    assert_eq!(planned, ["move_file", "write_file"], "{plan:?}");
}

/// The read of a before-image is sent without a journal record or an approval of its own, so
/// the proxy sends only a read-only tool the policy lets run unasked: an overlay naming an
/// effectful tool as its read, or a policy that asks before reads (by class or by name), gets
/// no call to that tool, and the intent records why. The write itself still runs.
#[test]
fn a_before_image_never_runs_a_tool_the_gate_would_stop() {
    let effectful_read = OVERLAY.replace(r#"read = "read_file""#, r#"read = "move_file""#);
    let asked_by_class = Policy {
        file: toml::from_str("[classes]\nread-only = \"ask\"").unwrap(),
        ..rollback_settings("files.overlay.toml", OVERLAY).policy
    };
    let asked_by_name = Policy {
        ask: vec!["read_*".into()],
        ..rollback_settings("files.overlay.toml", OVERLAY).policy
    };
    let cases = [
        (
            effectful_read.as_str(),
            rollback_settings("files.overlay.toml", OVERLAY).policy,
            "'move_file' is",
        ),
        (
            OVERLAY,
            asked_by_class,
            "the policy does not let 'read_file' run",
        ),
        (
            OVERLAY,
            asked_by_name,
            "the policy does not let 'read_file' run",
        ),
    ];
    for (overlay, policy, why) in cases {
        let files = Arc::new(Mutex::new(Files::from([(
            "a.txt".to_owned(),
            "old".to_owned(),
        )])));
        let called = Arc::new(Mutex::new(Vec::new()));
        let mut server = file_server(Arc::clone(&files), false);
        let log = Arc::clone(&called);
        let upstream = move |line: &str| {
            let message: Value = serde_json::from_str(line).unwrap();
            if let Some(name) = message["params"]["name"].as_str() {
                log.lock().unwrap().push(name.to_owned());
            }
            server(line)
        };
        let mut settings = rollback_settings("o.toml", overlay);
        settings.policy = Policy {
            on_failure: None,
            ..policy
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = Journal::open(&path, 1 << 30).unwrap();
        let client = [
            r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
"#
            .to_owned(),
            request(1, "write_file", json!({"path": "a.txt", "content": "new"})),
        ]
        .concat();
        let ScriptRun { end, .. } = run_scripted(
            settings,
            Some(Arc::new(Mutex::new(journal))),
            client.into_bytes(),
            Vec::new(),
            upstream,
        );
        end.unwrap();
        assert_eq!(*called.lock().unwrap(), ["write_file"], "{why}");
        assert_eq!(files.lock().unwrap()["a.txt"], "new");
        let text = std::fs::read_to_string(&path).unwrap();
        let records = mcp_recovery_journal::read_records(&text).unwrap();
        let intent = records.iter().find(|r| r["kind"] == "call.intent").unwrap();
        assert_eq!(intent["before"]["result"], Value::Null);
        let reason = intent["before"]["reason"].as_str().unwrap();
        assert!(reason.contains(why), "{reason}");
    }
}
