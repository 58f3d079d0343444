//! Calls whose answer is not their outcome: a 2025-11-25 server that runs a call as a task
//! (`CreateTaskResult`, the call's own result from `tasks/result`), a 2026-07-28 server that asks
//! for input first (`resultType: input_required`), and calls still unanswered when another one
//! fails. Each is journaled and rolled back by what the call did, checked on the server's state.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use common::{Journaled, request, run_journaled, settings};
use mcp_recovery_proxy::{OnFailure, Policy};
use serde_json::{Map, Value, json};

/// `create_item` makes an item and is undone by `delete_item`; `fail` always fails.
fn tools() -> Value {
    json!([
        {"name": "create_item", "inputSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}, "required": ["name"]},
         "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}},
            "required": ["id"]},
         "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
            "operationId": "delete_item", "parameters": {"id": "$response.body#/id"}}}}},
        {"name": "delete_item", "inputSchema": {"type": "object",
            "properties": {"id": {"type": "string"}}, "required": ["id"]}},
        {"name": "fail", "inputSchema": {"type": "object"}}
    ])
}

/// The server's items, and what it holds back: task results and answers to `slow` calls.
#[derive(Default)]
struct Store {
    items: BTreeSet<String>,
    tasks: HashMap<String, Value>,
    held: Vec<String>,
}

/// A server of `revision` that runs a task-augmented call as a task, asks for input first when
/// a call's `name` argument starts with `ask-` and no `inputResponses` came, and holds the
/// answer to a call whose `name` starts with `slow-` until a `test/release` notification.
fn server(revision: &'static str, store: Arc<Mutex<Store>>) -> impl FnMut(&str) -> Vec<String> {
    move |line: &str| {
        let message: Value = serde_json::from_str(line).unwrap();
        let mut store = store.lock().unwrap();
        if message["method"] == "test/release" {
            return std::mem::take(&mut store.held);
        }
        let Some(id) = message.get("id") else {
            return Vec::new();
        };
        let params = &message["params"];
        let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({"protocolVersion": revision, "capabilities": {"tools": {}},
                "serverInfo": {"name": "items", "version": "1"}}),
            "tools/list" => json!({"tools": tools()}),
            "tasks/result" => match store.tasks.remove(params["taskId"].as_str().unwrap()) {
                Some(result) => result,
                None => {
                    return vec![
                        json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": -32602, "message": "no such task"}})
                        .to_string(),
                    ];
                }
            },
            "tools/call" => {
                let name = params["arguments"]["name"].as_str().unwrap_or_default();
                let result = match params["name"].as_str().unwrap() {
                    "create_item"
                        if name.starts_with("ask-") && params.get("inputResponses").is_none() =>
                    {
                        json!({"resultType": "input_required", "inputRequests": {"ok": {
                            "method": "elicitation/create", "params": {"message": "sure?",
                            "requestedSchema": {"type": "object", "properties": {}}}}}})
                    }
                    "create_item" => {
                        store.items.insert(name.to_owned());
                        json!({"content": [], "structuredContent": {"id": name}})
                    }
                    "delete_item" => {
                        store
                            .items
                            .remove(params["arguments"]["id"].as_str().unwrap());
                        json!({"content": []})
                    }
                    _ => json!({"content": [{"type": "text", "text": "no"}], "isError": true}),
                };
                if params.get("task").is_some() {
                    let task = format!("task-{}", store.tasks.len() + 1);
                    store.tasks.insert(task.clone(), result);
                    json!({"task": {"taskId": task, "status": "working",
                        "createdAt": "2026-12-04T00:00:00Z", "ttl": 60000}})
                } else if name.starts_with("slow-") {
                    store.held.push(answer(result).to_string());
                    return Vec::new();
                } else {
                    result
                }
            }
            _ => json!({}),
        };
        vec![answer(result).to_string()]
    }
}

/// Runs `requests` after the handshake of `revision` with a proxy that rolls back on failure;
/// returns the run and the items left on the server.
fn run(revision: &'static str, requests: &[String]) -> (Journaled, BTreeSet<String>) {
    let store = Arc::new(Mutex::new(Store::default()));
    let client = handshake(revision, requests);
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy {
        on_failure: Some(OnFailure::Rollback),
        ..Policy::default()
    };
    let run = run_journaled(
        dir.path(),
        settings(policy),
        client,
        server(revision, Arc::clone(&store)),
    );
    let items = store.lock().unwrap().items.clone();
    (run, items)
}

/// What the client sends: the handshake of `revision`, then `requests`.
fn handshake(revision: &str, requests: &[String]) -> Vec<u8> {
    let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": revision, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    [line(init), line(initialized)]
        .into_iter()
        .chain(requests.iter().cloned())
        .collect::<String>()
        .into_bytes()
}

/// A `tools/call` the server should run as a task.
fn task_request(id: u32, name: &str, arguments: Value) -> String {
    let mut line: Value = serde_json::from_str(&request(id, name, arguments)).unwrap();
    line["params"]["task"] = json!({"ttl": 60000});
    format!("{line}\n")
}

fn line(message: Value) -> String {
    format!("{message}\n")
}

fn of_kind<'a>(run: &'a Journaled, kind: &str) -> Vec<&'a Map<String, Value>> {
    run.records.iter().filter(|r| r["kind"] == kind).collect()
}

/// What the client was told about the rollback, from the answer to request `id`.
fn told(run: &Journaled, id: u32) -> Value {
    run.client
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|m| m["id"] == id)
        .unwrap()["result"]["_meta"]["dev.mcp-recovery/rollback"]
        .clone()
}

/// A call run as a task is journaled with the result `tasks/result` brought (under the
/// `tools/call`'s own id), and a later failure undoes it from that result.
#[test]
fn a_call_run_as_a_task_is_undone_from_the_result_of_its_task() {
    let (run, items) = run(
        "2025-11-25",
        &[
            task_request(1, "create_item", json!({"name": "a"})),
            line(json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result",
                "params": {"taskId": "task-1"}})),
            request(3, "fail", json!({})),
        ],
    );
    assert!(items.is_empty(), "{items:?}");
    let outcomes = of_kind(&run, "call.outcome");
    assert_eq!(outcomes[0]["request"], 1);
    assert_eq!(outcomes[0]["result"]["structuredContent"]["id"], "a");
    let sent = of_kind(&run, "compensation.intent");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["arguments"], json!({"id": "a"}));
    assert_eq!(told(&run, 3)["undone"][0]["call"], "create_item");
}

/// A task whose result never came is an unknown outcome: the rollback names it as left in
/// place, sends nothing for it, and the session's end journals its outcome as unknown.
#[test]
fn a_task_whose_result_never_came_is_an_unknown_outcome() {
    let (run, items) = run(
        "2025-11-25",
        &[
            task_request(1, "create_item", json!({"name": "a"})),
            // An error from tasks/result says nothing of the call itself.
            line(json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result",
                "params": {"taskId": "task-9"}})),
            request(3, "fail", json!({})),
        ],
    );
    assert_eq!(items, BTreeSet::from(["a".to_owned()]));
    assert!(of_kind(&run, "compensation.intent").is_empty());
    let not_undone = told(&run, 3)["notUndone"].to_string();
    assert!(
        not_undone.contains("'create_item' (call ") && not_undone.contains("(unknown-outcome)"),
        "{not_undone}"
    );
    let outcomes = of_kind(&run, "call.outcome");
    let first = outcomes.iter().find(|r| r["call"] == 1).unwrap();
    assert_eq!(first["result"], Value::Null);
    assert!(
        first["reason"].as_str().unwrap().contains("task 'task-1'"),
        "{first:?}"
    );
}

/// A task id the server gives a second call leaves the first call's outcome unknown, not lost.
#[test]
fn a_task_id_given_twice_leaves_the_first_call_unknown() {
    let store = Arc::new(Mutex::new(Store::default()));
    let mut inner = server("2025-11-25", store);
    let reusing = move |line: &str| -> Vec<String> {
        inner(line)
            .into_iter()
            .map(|answer| answer.replace("task-2", "task-1"))
            .collect()
    };
    let client = handshake(
        "2025-11-25",
        &[
            task_request(1, "create_item", json!({"name": "a"})),
            task_request(2, "create_item", json!({"name": "b"})),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let run = run_journaled(dir.path(), settings(Policy::default()), client, reusing);
    let outcomes = of_kind(&run, "call.outcome");
    assert_eq!(outcomes.len(), 2, "{outcomes:#?}");
    let first = outcomes.iter().find(|r| r["call"] == 1).unwrap();
    assert_eq!(first["result"], Value::Null);
    assert!(
        first["reason"]
            .as_str()
            .unwrap()
            .contains("gave that id to another call"),
        "{first:?}"
    );
}

/// Calls running as tasks are bounded by the rollback window: past it, the oldest one's
/// outcome is journaled as unknown.
#[test]
fn tasks_past_the_rollback_window_are_unknown_outcomes() {
    let client = handshake(
        "2025-11-25",
        &[
            task_request(1, "create_item", json!({"name": "a"})),
            task_request(2, "create_item", json!({"name": "b"})),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let mut settings = settings(Policy::default());
    settings.rollback_window = 1;
    let store = Arc::new(Mutex::new(Store::default()));
    let run = run_journaled(dir.path(), settings, client, server("2025-11-25", store));
    let outcomes = of_kind(&run, "call.outcome");
    assert_eq!(outcomes[0]["call"], 1, "{outcomes:#?}");
    assert!(
        outcomes[0]["reason"]
            .as_str()
            .unwrap()
            .contains("its result is no longer awaited"),
        "{outcomes:#?}"
    );
}

/// A call answered `input_required` did nothing: only its retry is undone, once.
#[test]
fn a_call_that_asked_for_input_is_not_undone_its_retry_is() {
    let mut retry: Value =
        serde_json::from_str(&request(2, "create_item", json!({"name": "ask-b"}))).unwrap();
    retry["params"]["inputResponses"] = json!({"ok": {"action": "accept", "content": {}}});
    let (run, items) = run(
        "2026-07-28",
        &[
            request(1, "create_item", json!({"name": "ask-b"})),
            line(retry),
            request(3, "fail", json!({})),
        ],
    );
    assert!(items.is_empty(), "{items:?}");
    let sent = of_kind(&run, "compensation.intent");
    assert_eq!(sent.len(), 1, "{:#?}", run.records);
    assert_eq!(sent[0]["arguments"], json!({"id": "ask-b"}));
    assert_eq!(sent[0]["call"], 2);
}

/// A call still waiting for its answer when another fails may have taken effect: the rollback
/// names it as an unknown outcome instead of leaving it out.
#[test]
fn a_call_still_unanswered_when_another_fails_is_named() {
    let (run, items) = run(
        "2025-11-25",
        &[
            request(1, "create_item", json!({"name": "slow-c"})),
            request(2, "fail", json!({})),
            line(json!({"jsonrpc": "2.0", "method": "test/release"})),
        ],
    );
    // Its answer came after the rollback: the effect stays, and the journal says so.
    assert_eq!(items, BTreeSet::from(["slow-c".to_owned()]));
    let start = of_kind(&run, "rollback.start");
    assert_eq!(start[0]["calls"], json!([1]));
    let not_undone = told(&run, 2)["notUndone"].to_string();
    assert!(
        not_undone.contains("'create_item' (call ") && not_undone.contains("(unknown-outcome)"),
        "{not_undone}"
    );
    let outcome = of_kind(&run, "call.outcome")
        .into_iter()
        .find(|r| r["call"] == 1)
        .unwrap();
    assert_eq!(outcome["result"]["structuredContent"]["id"], "slow-c");
}
