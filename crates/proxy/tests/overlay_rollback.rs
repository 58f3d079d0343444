//! Rollback through the proxy with recovery only an overlay declares, against a scripted server
//! that keeps state: map bindings build the arrays its inverse tools take, and the state read
//! from the server afterwards is what it was before the workflow.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::{request, rollback_settings};
use mcp_recovery_journal::Journal;
use mcp_recovery_proxy::{ScriptRun, run_scripted};
use serde_json::{Value, json};

const TOOLS: &str = include_str!("../../../fixtures/overlays/graph.tools.json");
const OVERLAY: &str = include_str!("../../../fixtures/overlays/graph.overlay.toml");
const TEXT_OVERLAY: &str = include_str!("../../../fixtures/overlays/graph-text.overlay.toml");

/// Node label → its facts.
type Graph = BTreeMap<String, Vec<String>>;

/// The graph server: adds skip what is already there and report only what they added; adding
/// facts to a node that does not exist fails the call. With `text`, results carry their JSON
/// only as text: in the text item and as FastMCP's `structuredContent.result` string.
fn graph_server(graph: Arc<Mutex<Graph>>, text: bool) -> impl FnMut(&str) -> Vec<String> + Send {
    move |line: &str| {
        let message: Value = mcp_recovery_model::json::from_str(line).unwrap();
        let Some(id) = message.get("id") else {
            return Vec::new();
        };
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "graph", "version": "1"}}),
            "tools/list" => serde_json::from_str(TOOLS).unwrap(),
            "tools/call" if message["params"]["arguments"]["additions"][0]["node"] == "rpc" => {
                return vec![
                    json!({"jsonrpc": "2.0", "id": id,
                           "error": {"code": -32603, "message": "internal error"}})
                    .to_string(),
                ];
            }
            "tools/call" => {
                let result = call(&mut graph.lock().unwrap(), &message["params"]);
                match result.get("structuredContent") {
                    Some(value) if text => {
                        let text = value.to_string();
                        json!({"content": [{"type": "text", "text": text}],
                               "structuredContent": {"result": text}})
                    }
                    _ => result,
                }
            }
            _ => json!({}),
        };
        vec![json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()]
    }
}

fn call(graph: &mut Graph, params: &Value) -> Value {
    let arguments = &params["arguments"];
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let structured = match params["name"].as_str().unwrap() {
        "add_nodes" => {
            let mut added = Vec::new();
            for node in arguments["nodes"].as_array().unwrap() {
                let label = node["label"].as_str().unwrap().to_owned();
                if let std::collections::btree_map::Entry::Vacant(slot) = graph.entry(label) {
                    slot.insert(strings(&node["facts"]));
                    added.push(node.clone());
                }
            }
            json!({"nodes": added})
        }
        "remove_nodes" => {
            for label in strings(&arguments["labels"]) {
                graph.remove(&label);
            }
            json!({})
        }
        "add_facts" => {
            let mut added = Vec::new();
            for addition in arguments["additions"].as_array().unwrap() {
                let node = addition["node"].as_str().unwrap();
                let Some(facts) = graph.get_mut(node) else {
                    return json!({"isError": true,
                        "content": [{"type": "text", "text": format!("no node {node}")}]});
                };
                let mut new = Vec::new();
                for text in strings(&addition["texts"]) {
                    if !facts.contains(&text) {
                        facts.push(text.clone());
                        new.push(text);
                    }
                }
                added.push(json!({"node": node, "newTexts": new}));
            }
            json!({"added": added})
        }
        "remove_facts" => {
            for removal in arguments["removals"].as_array().unwrap() {
                let gone = strings(&removal["facts"]);
                if let Some(facts) = graph.get_mut(removal["label"].as_str().unwrap()) {
                    facts.retain(|f| !gone.contains(f));
                }
            }
            json!({})
        }
        other => panic!("unexpected tool {other}"),
    };
    json!({"content": [], "structuredContent": structured})
}

/// The failing last step of a workflow undoes exactly what the earlier steps added: nodes and
/// facts that were there before stay, those the workflow added are gone; the same whether the
/// server returns structured results or only text that the overlay declares how to read.
#[test]
fn a_failed_workflow_leaves_the_graph_as_it_was() {
    for (overlay, text) in [(OVERLAY, false), (TEXT_OVERLAY, true)] {
        let records = workflow(overlay, text);
        let compensations: Vec<&Value> = records
            .iter()
            .filter(|r| r["kind"] == "compensation.intent")
            .map(|r| &r["arguments"])
            .collect();
        assert_eq!(
            compensations,
            [
                &json!({"removals": [{"label": "old", "facts": ["f1"]}, {"label": "ada", "facts": ["a1"]}]}),
                &json!({"labels": ["ada"]}),
            ],
            "{records:#?}"
        );
    }
}

/// The failed answer the client gets says what the rollback undid and what it left in place,
/// as a text item and in `_meta` (in `error.data` when the server answered with an error).
#[test]
fn the_client_is_told_what_was_undone_and_what_was_not() {
    for failing in ["ghost", "rpc"] {
        let (graph, output) = run(
            OVERLAY,
            false,
            &[
                request(
                    1,
                    "add_nodes",
                    json!({"nodes": [{"label": "ada", "kind": "p", "facts": []}]}),
                ),
                request(
                    2,
                    "remove_facts",
                    json!({"removals": [{"label": "old", "facts": ["f0"]}]}),
                ),
                request(
                    3,
                    "add_facts",
                    json!({"additions": [{"node": failing, "texts": ["x"]}]}),
                ),
            ],
        );
        // ada is gone again; the removed fact stays removed (nothing declares how to undo it).
        assert_eq!(
            graph,
            BTreeMap::from([("old".to_owned(), Vec::new())]),
            "{failing}"
        );
        let answer = output
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .find(|m| m["id"] == 3)
            .unwrap();
        let (told, text) = if failing == "rpc" {
            let told = &answer["error"]["data"]["dev.mcp-recovery/rollback"];
            assert_eq!(answer["error"]["code"], -32603, "{answer:#}");
            (told.clone(), told["text"].as_str().unwrap().to_owned())
        } else {
            let content = answer["result"]["content"].as_array().unwrap();
            assert_eq!(content[0]["text"], "no node ghost", "{answer:#}");
            (
                answer["result"]["_meta"]["dev.mcp-recovery/rollback"].clone(),
                content[1]["text"].as_str().unwrap().to_owned(),
            )
        };
        assert_eq!(told["failed"], "add_facts", "{answer:#}");
        let undone = told["undone"].as_array().unwrap();
        assert_eq!(undone.len(), 1, "{answer:#}");
        assert_eq!(
            (&undone[0]["call"], &undone[0]["compensation"]),
            (&json!("add_nodes"), &json!("remove_nodes")),
            "{answer:#}"
        );
        // A JSON-RPC error says nothing of what the call did: its own outcome is unknown.
        let not_undone: Vec<&str> = told["notUndone"]
            .as_array()
            .unwrap()
            .iter()
            .map(|line| line.as_str().unwrap())
            .collect();
        let expected = if failing == "rpc" { 2 } else { 1 };
        assert_eq!(not_undone.len(), expected, "{answer:#}");
        assert!(
            not_undone
                .last()
                .unwrap()
                .starts_with("'remove_facts' (call ")
                && not_undone
                    .last()
                    .unwrap()
                    .contains("(not-declared): the tool declares no recovery"),
            "{answer:#}"
        );
        assert!(
            failing != "rpc"
                || (not_undone[0].starts_with("'add_facts' (call ")
                    && not_undone[0].contains("(unknown-outcome)")),
            "{answer:#}"
        );
        assert!(
            text.contains("Undone, so their effects no longer stand: 'add_nodes' (call ")
                && text.contains("by 'remove_nodes'")
                && text.contains("(not-declared): the tool declares no recovery"),
            "{text}"
        );
    }
}

/// Runs the workflow against a graph holding one node, checks the graph is as it was, and
/// returns the journal's records.
fn workflow(overlay: &str, text: bool) -> Vec<serde_json::Map<String, Value>> {
    let before: Graph = BTreeMap::from([("old".to_owned(), vec!["f0".to_owned()])]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let (graph, output) = run_journaled(
        overlay,
        text,
        &[
            request(
                1,
                "add_nodes",
                json!({"nodes": [
                    {"label": "ada", "kind": "person", "facts": ["a0"]},
                    {"label": "old", "kind": "person", "facts": []}
                ]}),
            ),
            request(
                2,
                "add_facts",
                json!({"additions": [
                    {"node": "old", "texts": ["f0", "f1"]},
                    {"node": "ada", "texts": ["a1"]}
                ]}),
            ),
            request(
                3,
                "add_facts",
                json!({"additions": [{"node": "ghost", "texts": ["x"]}]}),
            ),
        ],
        &path,
    );
    assert_eq!(graph, before, "text results: {text}");
    assert!(output.contains("no node ghost"), "{output}");
    mcp_recovery_journal::read_records(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Runs `requests` after the handshake against a graph holding the node `old` with the fact
/// `f0`; returns the graph afterwards and what the client received.
fn run(overlay: &str, text: bool, requests: &[String]) -> (Graph, String) {
    let dir = tempfile::tempdir().unwrap();
    run_journaled(overlay, text, requests, &dir.path().join("journal.jsonl"))
}

fn run_journaled(
    overlay: &str,
    text: bool,
    requests: &[String],
    path: &std::path::Path,
) -> (Graph, String) {
    let before: Graph = BTreeMap::from([("old".to_owned(), vec!["f0".to_owned()])]);
    let graph = Arc::new(Mutex::new(before));
    let client = [
        r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.to_owned() + "\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n".to_owned(),
    ]
    .into_iter()
    .chain(requests.iter().cloned())
    .collect::<String>();
    let journal = Journal::open(path, 1 << 30).unwrap();
    let ScriptRun { end, output, .. } = run_scripted(
        rollback_settings("graph.overlay.toml", overlay),
        Some(Arc::new(Mutex::new(journal))),
        client.into_bytes(),
        Vec::new(),
        graph_server(Arc::clone(&graph), text),
    );
    end.unwrap();
    let graph = graph.lock().unwrap().clone();
    (graph, String::from_utf8(output).unwrap())
}
