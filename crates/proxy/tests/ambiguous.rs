//! Messages the gate and the server would read differently, refused before anything is
//! journaled or forwarded: member names repeated or equal under case folding (a server using
//! Go's `encoding/json` reads `NAME` as `name`, the last one winning), ids a server reading
//! numbers as doubles cannot tell apart, and ids the proxy takes for its own requests.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Journaled, run_journaled, settings};
use mcp_recovery_proxy::Policy;
use serde_json::Value;

const TOOLS: &str = r#"[{"name":"safe_read","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},{"name":"delete_all","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}]"#;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

/// A server that answers every request it gets (each element of a batch too) and runs every
/// `tools/call`.
fn server() -> impl FnMut(&str) -> Vec<String> + Send {
    |line: &str| {
        let message: Value = mcp_recovery_model::json::from_str(line).unwrap();
        let messages = match message {
            Value::Array(items) => items,
            other => vec![other],
        };
        let mut out = Vec::new();
        for message in messages {
            let Some(id) = message.get("id") else {
                continue;
            };
            let result = match message["method"].as_str().unwrap_or_default() {
                "initialize" => r#"{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}"#.to_owned(),
                "tools/list" => format!(r#"{{"tools":{TOOLS}}}"#),
                "tools/call" => r#"{"content":[{"type":"text","text":"done"}]}"#.to_owned(),
                _ => "{}".to_owned(),
            };
            out.push(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
            ));
        }
        out
    }
}

fn deny_delete() -> Policy {
    Policy {
        deny: vec!["delete_all".into()],
        ..Policy::default()
    }
}

fn run(lines: &[&str]) -> Journaled {
    let dir = tempfile::tempdir().unwrap();
    let mut client = INITIALIZE.to_owned();
    for line in lines {
        client.push_str(line);
        client.push('\n');
    }
    run_journaled(
        dir.path(),
        settings(deny_delete()),
        client.into_bytes(),
        server(),
    )
}

fn parse(text: &str) -> Value {
    mcp_recovery_model::json::from_str(text).unwrap()
}

/// Every answer the client got, batches' arrays split.
fn answers(run: &Journaled) -> Vec<Value> {
    run.client
        .iter()
        .flat_map(|line| match parse(line) {
            Value::Array(items) => items,
            other => vec![other],
        })
        .collect()
}

/// Nothing the server got, and no journal record, holds `marker`.
fn never_reached(run: &Journaled, marker: &str) {
    assert!(
        run.received.iter().all(|line| !line.contains(marker)),
        "{marker} reached the server: {:?}",
        run.received
    );
    assert!(
        run.records
            .iter()
            .all(|record| !Value::Object(record.clone()).to_string().contains(marker)),
        "{marker} was journaled"
    );
}

/// The -32600 error the client got for `id`.
fn refusal(run: &Journaled, id: &Value) -> Value {
    let found: Vec<Value> = answers(run)
        .into_iter()
        .filter(|answer| answer["id"] == *id && answer.get("error").is_some())
        .collect();
    assert_eq!(found.len(), 1, "{id}: {:?}", run.client);
    assert_eq!(found[0]["error"]["code"], -32600, "{}", found[0]);
    found[0].clone()
}

fn intents(run: &Journaled) -> Vec<String> {
    run.records
        .iter()
        .filter(|record| record["kind"] == "call.intent")
        .map(|record| record["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn member_names_that_a_case_blind_or_first_wins_server_reads_otherwise_are_refused() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"safe_read","NAME":"delete_all","arguments":{"m":"case-1"}}}"#,
            "1",
            &[r#""name""#, r#""NAME""#],
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","Method":"tools/call","params":{"name":"delete_all","arguments":{"m":"case-2"}}}"#,
            "2",
            &[r#""method""#, r#""Method""#],
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"safe_read","Name":"delete_\u0061ll","arguments":{"m":"case-3"}}}"#,
            "3",
            &[r#""name""#, r#""Name""#],
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"safe_read","name":"delete_all","arguments":{"m":"case-4"}}}"#,
            "4",
            &[r#""name""#],
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"safe_read\",\"arguments\":{\"m\":\"case-5\",\"\u{17f}ize\":1,\"size\":2}}}",
            "5",
            &[r#""\u{17f}ize""#, r#""size""#],
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"safe_read","arguments":{"m":"case-6"},"Arguments":{"x":1}}}"#,
            "6",
            &[r#""arguments""#, r#""Arguments""#],
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","Params":{"name":"delete_all","arguments":{"m":"case-7"}},"params":{"name":"safe_read"}}"#,
            "7",
            &[r#""Params""#, r#""params""#],
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"safe_read","arguments":{"m":"case-8","deep":[{"k":1,"K":2}]}}}"#,
            "8",
            &[r#""k""#, r#""K""#],
        ),
    ];
    let lines: Vec<&str> = cases.iter().map(|(line, _, _)| *line).collect();
    let run = run(&lines);
    for (index, (_, id, named)) in cases.iter().enumerate() {
        never_reached(&run, &format!("case-{}", index + 1));
        let error = refusal(&run, &parse(id));
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("ambiguous member names"), "{message}");
        for name in *named {
            assert!(message.contains(name), "{name} in {message}");
        }
    }
    assert!(intents(&run).is_empty(), "{:?}", run.records);
}

#[test]
fn a_lone_case_variant_of_a_protocol_member_is_refused() {
    // To the proxy a response (id, no method), to a case-blind server a tools/call.
    let line = r#"{"jsonrpc":"2.0","id":9,"Method":"tools/call","params":{"name":"delete_all","arguments":{"m":"lone-method"}}}"#;
    // To the proxy a notification, to such a server a request.
    let notification =
        r#"{"jsonrpc":"2.0","ID":10,"method":"notifications/x","params":{"m":"lone-id"}}"#;
    let call = r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"safe_read","arguments":{"m":"passed"}}}"#;
    let run = run(&[line, notification, call]);
    never_reached(&run, "lone-method");
    never_reached(&run, "lone-id");
    assert_eq!(intents(&run), ["safe_read"]);
    // Neither is a request to the proxy: nothing answers them.
    assert!(
        answers(&run)
            .iter()
            .all(|answer| answer["id"] != 9 && answer["id"] != 10),
        "{:?}",
        run.client
    );
}

#[test]
fn an_ambiguous_id_is_refused_with_a_null_id() {
    let line = r#"{"jsonrpc":"2.0","id":12,"ID":13,"method":"tools/call","params":{"name":"safe_read","arguments":{"m":"two-ids"}}}"#;
    let run = run(&[line]);
    never_reached(&run, "two-ids");
    let error = refusal(&run, &Value::Null);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains(r#""id" and "ID""#),
        "{error}"
    );
}

#[test]
fn in_a_batch_only_the_ambiguous_elements_are_refused() {
    let batch = r#"[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"safe_read","arguments":{"m":"passed"}}},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"safe_read","name":"delete_all","arguments":{"m":"batch-b"}}},{"jsonrpc":"2.0","method":"notifications/x","METHOD":"tools/call","params":{"m":"batch-n"}},{"jsonrpc":"2.0","id":"c","method":"ping","params":{"m":"batch-c","_meta":{"x":1,"X":2}}}]"#;
    let run = run(&[batch]);
    never_reached(&run, "batch-b");
    never_reached(&run, "batch-n");
    never_reached(&run, "batch-c");
    assert_eq!(intents(&run), ["safe_read"]);
    let arrays: Vec<&String> = run.client.iter().filter(|l| l.starts_with('[')).collect();
    assert_eq!(arrays.len(), 1, "{:?}", run.client);
    let array = parse(arrays[0]);
    assert_eq!(array.as_array().unwrap().len(), 3, "{array}");
    refusal(&run, &Value::from("b"));
    refusal(&run, &Value::from("c"));
    assert!(
        array
            .as_array()
            .unwrap()
            .iter()
            .any(|answer| answer["id"] == "a" && answer.get("result").is_some())
    );
}

#[test]
fn numeric_ids_past_two_to_the_53_are_refused() {
    let call = |id: &str, marker: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"safe_read","arguments":{{"m":"{marker}"}}}}}}"#
        )
    };
    let lines = [
        call("9007199254740993", "past-1"),
        call("9007199254740992", "past-2"),
        call("-9007199254740992", "past-3"),
        call("1e16", "past-4"),
        call("9007199254740991", "passed"),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let run = run(&lines);
    for (id, marker) in [
        ("9007199254740993", "past-1"),
        ("9007199254740992", "past-2"),
        ("-9007199254740992", "past-3"),
        ("1e16", "past-4"),
    ] {
        never_reached(&run, marker);
        let error = refusal(&run, &parse(id));
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("2^53 - 1"),
            "{error}"
        );
    }
    assert_eq!(intents(&run), ["safe_read"]);
}

#[test]
fn ids_the_proxy_reserves_for_its_own_requests_are_refused() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":"mcp-recovery-proxy-2","method":"tools/call","params":{"name":"safe_read","arguments":{"m":"own-1"}}}"#,
        r#"{"jsonrpc":"2.0","id":"x-mcp-recovery-proxy-1","method":"ping","params":{"m":"own-2"}}"#,
        r#"[{"jsonrpc":"2.0","id":"mcp-recovery-proxy-3","method":"tools/call","params":{"name":"safe_read","arguments":{"m":"own-3"}}},{"jsonrpc":"2.0","id":"fine","method":"ping"}]"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"mcp-recovery-proxy-1","reason":"own-4"}}"#,
        r#"{"jsonrpc":"2.0","id":"mcp-recovery","method":"tools/call","params":{"name":"safe_read","arguments":{"m":"passed"}}}"#,
    ];
    let run = run(&lines);
    for marker in ["own-1", "own-2", "own-3", "own-4"] {
        never_reached(&run, marker);
    }
    for id in [
        "mcp-recovery-proxy-2",
        "x-mcp-recovery-proxy-1",
        "mcp-recovery-proxy-3",
    ] {
        let error = refusal(&run, &Value::from(id));
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("reserved for the proxy's own requests"),
            "{error}"
        );
    }
    assert_eq!(intents(&run), ["safe_read"]);
    assert!(
        answers(&run)
            .iter()
            .any(|answer| answer["id"] == "fine" && answer.get("result").is_some())
    );
}

#[test]
fn server_results_keep_names_equal_under_folding() {
    let dir = tempfile::tempdir().unwrap();
    let mut answer = server();
    let run = run_journaled(
        dir.path(),
        settings(deny_delete()),
        format!("{INITIALIZE}{}\n", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"safe_read","arguments":{}}}"#).into_bytes(),
        move |line: &str| {
            if line.contains("safe_read") {
                return vec![r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"id":1,"ID":2}}}"#.to_owned()];
            }
            answer(line)
        },
    );
    assert!(
        run.client
            .iter()
            .any(|line| line.contains(r#""structuredContent":{"id":1,"ID":2}"#)),
        "{:?}",
        run.client
    );
}
