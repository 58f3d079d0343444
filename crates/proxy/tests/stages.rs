//! The session's stages end to end against a scripted in-process server (scripted answers to
//! `tools/list` and `tools/call`, every message it gets recorded), without the binary: what the
//! gate refuses is journaled and never forwarded, an intent is on disk before the server sees
//! its call, a failed call rolls the session back with the compensation sent upstream, and
//! notifications and ids reach the server as the session means them to.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::{run_journaled, settings};
use mcp_recovery_proxy::{OnFailure, Policy};
use serde_json::{Map, Value, json};

/// A calendar: `create_event` is compensated by `delete_event` with the id it returned;
/// `purge_calendar` is destructive; `list_events` is read-only.
fn tools() -> Value {
    json!([
        {"name": "create_event", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object", "properties": {"eventId": {"type": "string"}}},
         "annotations": {"readOnlyHint": false, "destructiveHint": false},
         "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
            "compensation": {"toolName": "delete_event",
                "parameterMapping": {"eventId": "$.output.structuredContent.eventId"}}}}},
        {"name": "delete_event", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true}},
        {"name": "purge_calendar", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": false, "destructiveHint": true}},
        {"name": "list_events", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true}},
    ])
}

/// The scripted server: `initialize` at `revision`, the tools above, `create_event` answers
/// an id, `purge_calendar` fails (`isError`), every other call succeeds. With `journal`, each `tools/call`
/// it gets is checked against the journal on disk at that moment: its intent must be there.
fn server(
    revision: &'static str,
    journal: Option<PathBuf>,
) -> impl FnMut(&str) -> Vec<String> + Send + 'static {
    move |line: &str| {
        let message: Value = mcp_recovery_model::json::from_str(line).unwrap();
        let Some(id) = message.get("id").cloned() else {
            return Vec::new();
        };
        let name = message["params"]["name"].as_str().unwrap_or_default();
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({"protocolVersion": revision, "capabilities": {"tools": {}},
                "serverInfo": {"name": "calendar", "version": "1"}}),
            "tools/list" => json!({"tools": tools()}),
            "tools/call" => {
                if let Some(path) = &journal {
                    let text = std::fs::read_to_string(path).unwrap();
                    let records = mcp_recovery_journal::read_records(&text).unwrap();
                    assert!(
                        records.iter().any(|r| r["kind"] == "call.intent"
                            && r["name"] == name
                            && r["request"] == id),
                        "the server got {name} before its intent was on disk"
                    );
                }
                match name {
                    "create_event" => json!({"content": [],
                        "structuredContent": {"eventId": format!("ev-{}", id)}}),
                    "purge_calendar" => {
                        json!({"content": [{"type": "text", "text": "no"}], "isError": true})
                    }
                    _ => json!({"content": [{"type": "text", "text": "done"}]}),
                }
            }
            _ => json!({}),
        };
        vec![json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()]
    }
}

/// What a session did: the client's lines, what the server got, the journal's records.
struct Run {
    client: Vec<Value>,
    /// The client's lines as written.
    raw: Vec<String>,
    received: Vec<Value>,
    records: Vec<Map<String, Value>>,
}

impl Run {
    /// The `tools/call`s the server got, by name (a batch's elements each).
    fn calls(&self) -> Vec<String> {
        self.received
            .iter()
            .flat_map(|m| match m {
                Value::Array(items) => items.clone(),
                other => vec![other.clone()],
            })
            .filter(|m| m["method"] == "tools/call")
            .map(|m| m["params"]["name"].as_str().unwrap().to_owned())
            .collect()
    }

    fn kinds(&self, kind: &str) -> Vec<&Map<String, Value>> {
        self.records.iter().filter(|r| r["kind"] == kind).collect()
    }

    /// The client's line answering `id`.
    fn answer(&self, id: &Value) -> &Value {
        self.client
            .iter()
            .find(|m| m.get("id") == Some(id))
            .unwrap_or_else(|| panic!("no answer to {id} in {:?}", self.client))
    }
}

fn journal_path(dir: &Path) -> PathBuf {
    dir.join("journal.jsonl")
}

fn run(
    dir: &Path,
    policy: Policy,
    script: impl FnMut(&str) -> Vec<String> + Send + 'static,
    client: &[Value],
) -> Run {
    let input: String = client
        .iter()
        .map(|message| format!("{message}\n"))
        .collect();
    let run = run_journaled(dir, settings(policy), input.into_bytes(), script);
    let parse = |line: &String| -> Value { mcp_recovery_model::json::from_str(line).unwrap() };
    Run {
        client: run.client.iter().map(parse).collect(),
        received: run.received.iter().map(parse).collect(),
        raw: run.client,
        records: run.records,
    }
}

fn initialize(revision: &str) -> [Value; 2] {
    [
        json!({"jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": revision, "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

fn call(id: Value, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
}

fn deny_purge() -> Policy {
    Policy {
        deny: vec!["purge_*".into()],
        ..Policy::default()
    }
}

#[test]
fn a_denied_call_in_a_batch_is_journaled_and_never_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let batch = json!([
        call(json!("a"), "purge_calendar", json!({})),
        call(json!("b"), "list_events", json!({})),
    ]);
    let mut client = initialize("2025-03-26").to_vec();
    client.push(batch);
    let run = run(
        dir.path(),
        deny_purge(),
        server("2025-03-26", None),
        &client,
    );

    assert_eq!(run.calls(), ["list_events"]);
    let denied: Vec<_> = run
        .kinds("approval")
        .into_iter()
        .filter(|r| r["name"] == "purge_calendar")
        .collect();
    assert_eq!(denied.len(), 1, "{:?}", run.records);
    assert_eq!(denied[0]["decision"], "deny");
    assert_eq!(denied[0]["by"], "policy");
    assert_eq!(denied[0]["rule"], "--deny 'purge_*'");
    assert_eq!(denied[0]["request"], "a");
    assert!(
        run.kinds("call.intent")
            .iter()
            .all(|r| r["name"] != "purge_calendar")
    );
    // One array answers the batch: the refusal as a tool error, the other call's result.
    let answers = run.client.last().unwrap().as_array().unwrap();
    assert_eq!(answers.len(), 2);
    let refusal = answers.iter().find(|a| a["id"] == "a").unwrap();
    assert_eq!(refusal["result"]["isError"], true);
    let text = refusal["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("the server was not called"), "{text}");
    assert_eq!(
        answers.iter().find(|a| a["id"] == "b").unwrap()["result"]["content"][0]["text"],
        "done"
    );
}

#[test]
fn an_effectful_call_is_journaled_before_it_is_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = initialize("2025-11-25").to_vec();
    client.push(call(json!(1), "create_event", json!({"title": "x"})));
    let script = server("2025-11-25", Some(journal_path(dir.path())));
    let run = run(dir.path(), Policy::default(), script, &client);

    assert_eq!(run.calls(), ["create_event"]);
    let kinds: Vec<&str> = run
        .records
        .iter()
        .filter(|r| r.get("name") == Some(&json!("create_event")))
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["call.intent", "call.outcome"]);
    let intent = run.kinds("call.intent")[0];
    assert_eq!(intent["class"], "compensable");
    assert_eq!(intent["classSource"], "metadata");
    assert_eq!(intent["arguments"], json!({"title": "x"}));
    assert_eq!(intent["call"], 1);
    let outcome = run.kinds("call.outcome")[0];
    assert_eq!(outcome["result"]["structuredContent"]["eventId"], "ev-1");
    assert_eq!(
        run.answer(&json!(1))["result"]["structuredContent"]["eventId"],
        "ev-1"
    );
}

#[test]
fn a_failed_call_rolls_back_with_the_compensation_sent_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy {
        on_failure: Some(OnFailure::Rollback),
        ..Policy::default()
    };
    let mut client = initialize("2025-11-25").to_vec();
    client.push(call(json!(1), "create_event", json!({"title": "x"})));
    client.push(call(json!(2), "purge_calendar", json!({})));
    let run = run(dir.path(), policy, server("2025-11-25", None), &client);

    assert_eq!(
        run.calls(),
        ["create_event", "purge_calendar", "delete_event"]
    );
    let compensation = run
        .received
        .iter()
        .find(|m| m["params"]["name"] == "delete_event")
        .unwrap();
    assert_eq!(
        compensation["params"]["arguments"],
        json!({"eventId": "ev-1"})
    );
    let intents = run.kinds("compensation.intent");
    assert_eq!(intents.len(), 1);
    assert_eq!(intents[0]["name"], "delete_event");
    assert_eq!(run.kinds("compensation.outcome").len(), 1);
    // The failed call's answer tells the client what the rollback did.
    let failed = run.answer(&json!(2));
    assert_eq!(failed["result"]["isError"], true);
    let meta = &failed["result"]["_meta"][mcp_recovery_proxy::ROLLBACK_META_KEY];
    assert!(meta.is_object(), "{failed}");
    let told = failed["result"]["content"].as_array().unwrap();
    assert_eq!(told.len(), 2, "{failed}");
}

#[test]
fn notifications_pass_but_request_methods_without_an_id_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = initialize("2025-11-25").to_vec();
    client.push(json!({"jsonrpc": "2.0", "method": "tools/call",
        "params": {"name": "create_event", "arguments": {}}}));
    client.push(json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": 1}}));
    let run = run(
        dir.path(),
        Policy::default(),
        server("2025-11-25", None),
        &client,
    );

    assert!(run.calls().is_empty(), "{:?}", run.received);
    let methods: Vec<&str> = run
        .received
        .iter()
        .filter(|m| m.get("id").is_none())
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        ["notifications/initialized", "notifications/progress"]
    );
    assert!(run.kinds("call.intent").is_empty());
}

#[test]
fn a_pending_id_is_refused_and_a_respelled_id_answered_as_the_client_spelled_it() {
    let dir = tempfile::tempdir().unwrap();
    let held = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut inner = server("2025-11-25", None);
    let hold = Arc::clone(&held);
    // The server spells every numeric id as a float (`1e0` as `1.0`), and answers the first
    // `list_events` only once `create_event` arrived, so it is pending meanwhile.
    let script = move |line: &str| {
        let mut out = Vec::new();
        for answer in inner(line) {
            let mut value: Value = mcp_recovery_model::json::from_str(&answer).unwrap();
            if let Some(n) = value["id"].as_f64() {
                value["id"] = mcp_recovery_model::json::from_str(&format!("{n:?}")).unwrap();
            }
            out.push(value.to_string());
        }
        let message: Value = mcp_recovery_model::json::from_str(line).unwrap();
        if message["params"]["name"] == "list_events" {
            hold.lock().unwrap().append(&mut out);
        } else if message["params"]["name"] == "create_event" {
            out.append(&mut hold.lock().unwrap());
        }
        out
    };
    let mut client = initialize("2025-11-25").to_vec();
    let spelled: Value = mcp_recovery_model::json::from_str("1e0").unwrap();
    client.push(call(spelled, "list_events", json!({})));
    // The id exactly as the client's line carries it.
    let first = client.last().unwrap()["id"].to_string();
    client.push(call(json!(1), "list_events", json!({})));
    client.push(call(json!(2), "create_event", json!({})));
    let run = run(dir.path(), Policy::default(), script, &client);

    // The duplicate (1 is 1e0 by value) never reached the server.
    assert_eq!(run.calls(), ["list_events", "create_event"]);
    let refused = run
        .client
        .iter()
        .find(|m| m["error"]["code"] == -32600)
        .unwrap();
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already pending"),
        "{refused}"
    );
    // Both answers carry the ids as the client spelled them, not the server's `1.0`/`2.0`.
    let answer = |spelled: &str| {
        run.raw
            .iter()
            .filter(|line| line.contains(&format!("\"id\":{spelled},")))
            .count()
    };
    assert_ne!(first, "1");
    assert_eq!(answer(&first), 1, "{:?}", run.raw);
    assert_eq!(answer("2"), 1, "{:?}", run.raw);
    assert_eq!(answer("1.0") + answer("2.0"), 0, "{:?}", run.raw);
}

#[test]
fn a_listed_tool_with_a_broken_declaration_is_still_listed_and_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    // `parameters` is required by SEP-3172: this declaration cannot be read.
    let listed = json!([
        {"name": "create_note", "inputSchema": {"type": "object"},
         "annotations": {"recovery": {"strategy": "compensation",
            "compensatingOperation": {"operationId": "delete_note"}}}},
        {"name": "delete_note", "inputSchema": {"type": "object"}},
    ]);
    let script = move |line: &str| -> Vec<String> {
        let message: Value = mcp_recovery_model::json::from_str(line).unwrap();
        let Some(id) = message.get("id").cloned() else {
            return Vec::new();
        };
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "notes", "version": "1"}}),
            "tools/list" => json!({"tools": listed}),
            _ => json!({"content": [{"type": "text", "text": "done"}]}),
        };
        vec![json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()]
    };
    let policy = Policy {
        unlisted_tools: Some(mcp_recovery_proxy::Action::Deny),
        ..Policy::default()
    };
    let mut client = initialize("2025-11-25").to_vec();
    client.push(call(json!(1), "create_note", json!({})));
    let run = run(dir.path(), policy, script, &client);
    // Listed, so not refused as unlisted: the server gets the call.
    assert_eq!(run.calls(), ["create_note"]);
    assert!(run.answer(&json!(1)).get("error").is_none());
    // Its declaration was not trusted: the intent records no compensable class.
    let intent = run.kinds("call.intent");
    assert_eq!(intent.len(), 1, "{:?}", run.records);
    assert_ne!(intent[0]["class"], "compensable", "{:?}", intent[0]);
}
