//! The session core against a scripted in-process server: every message the client sends, alone
//! or in a batch, is classified, gated and journaled or refused with a JSON-RPC error; ids are
//! matched by value and answered in the client's spelling.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::{Journaled, run_journaled, settings};
use mcp_recovery_proxy::{Overlays, Policy, PolicyFile, REQUEST_METHODS};
use serde_json::{Map, Value};

/// The server's tools: one destructive, one harmless.
const TOOLS: &str = r#"[{"name":"purge_everything","inputSchema":{"type":"object"}},{"name":"get_state","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]"#;

/// A lenient server speaking `revision`: it answers every request (a batch included, element by
/// element, as a server that accepts batches would), runs every `tools/call` it gets, with or
/// without an id, answers ids respelled as floats (`1e0` as `1.0`) when `respell`, and holds
/// the answers to `hold` until a `test/release` notification arrives.
fn server(revision: &'static str, respell: bool) -> impl FnMut(&str) -> Vec<String> + Send {
    let mut held: Vec<String> = Vec::new();
    move |line: &str| {
        let message: Value = mcp_recovery_model::json::from_str(line).unwrap();
        let messages = match message {
            Value::Array(items) => items,
            other => vec![other],
        };
        let mut out = Vec::new();
        for message in messages {
            let method = message["method"].as_str().unwrap_or_default().to_owned();
            if method == "test/release" {
                out.append(&mut held);
                continue;
            }
            let Some(id) = message.get("id") else {
                continue;
            };
            let id = match id {
                Value::Number(n) if respell => format!("{:?}", n.as_f64().unwrap()),
                other => other.to_string(),
            };
            let result = match method.as_str() {
                "initialize" => format!(
                    r#"{{"protocolVersion":"{revision}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"scripted","version":"1"}}}}"#
                ),
                "tools/list" => format!(r#"{{"tools":{TOOLS}}}"#),
                "tools/call" => r#"{"content":[{"type":"text","text":"done"}]}"#.to_owned(),
                _ => "{}".to_owned(),
            };
            let answer = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
            if message["params"]["name"] == "hold" {
                held.push(answer);
            } else {
                out.push(answer);
            }
        }
        out
    }
}

fn deny_purge() -> Policy {
    Policy {
        deny: vec!["purge_*".into()],
        ..Policy::default()
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

/// A session run: its client lines (raw text), the server's received messages, the journal.
type Run = Journaled;

impl Run {
    /// The `tools/call` requests the server received, by tool name.
    fn calls_received(&self) -> Vec<String> {
        self.received
            .iter()
            .flat_map(|line| {
                let value: Value = mcp_recovery_model::json::from_str(line).unwrap();
                match value {
                    Value::Array(items) => items,
                    other => vec![other],
                }
            })
            .filter(|m| m["method"] == "tools/call")
            .map(|m| m["params"]["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    fn kinds(&self, kind: &str) -> Vec<&Map<String, Value>> {
        self.records.iter().filter(|r| r["kind"] == kind).collect()
    }

    /// The client line that answers `id` (given as JSON text), exactly.
    fn answers_to(&self, id: &str) -> Vec<&String> {
        self.client
            .iter()
            .filter(|line| {
                let spelled = format!("\"id\":{id}");
                line.contains(&format!("{spelled},")) || line.contains(&format!("{spelled}}}"))
            })
            .collect()
    }
}

fn run_session(
    dir: &Path,
    policy: Policy,
    server: impl FnMut(&str) -> Vec<String> + Send + 'static,
    client: &str,
) -> Run {
    run_journaled(dir, settings(policy), client.as_bytes().to_vec(), server)
}

/// Each line is a -32600 error with a null id.
fn assert_invalid_requests<'a>(lines: impl Iterator<Item = &'a String>) {
    for line in lines {
        let error = parse(line);
        assert_eq!(error["error"]["code"], -32600, "{error}");
        assert_eq!(error["id"], Value::Null);
    }
}

fn parse(text: &str) -> Value {
    mcp_recovery_model::json::from_str(text).unwrap()
}

#[test]
fn a_2025_03_26_batch_is_split_gated_journaled_and_answered_as_one_array() {
    let dir = tempfile::tempdir().unwrap();
    let batch = r#"[{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"purge_everything"}},{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"get_state"}},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}},{"jsonrpc":"2.0","id":"b3","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]"#;
    let run = run_session(
        dir.path(),
        deny_purge(),
        server("2025-03-26", false),
        &format!("{INITIALIZE}{batch}\n"),
    );
    assert_eq!(run.calls_received(), ["get_state"], "{:?}", run.received);
    // Each element went upstream alone, never as the array.
    assert!(
        run.received.iter().all(|line| !line.starts_with('[')),
        "{:?}",
        run.received
    );
    let intents = run.kinds("call.intent");
    assert_eq!(intents.len(), 1);
    assert_eq!(intents[0]["name"], "get_state");
    let refusals = run.kinds("approval");
    assert_eq!(refusals.len(), 1);
    assert_eq!(refusals[0]["name"], "purge_everything");
    assert_eq!(refusals[0]["decision"], "deny");
    let arrays: Vec<&String> = run.client.iter().filter(|l| l.starts_with('[')).collect();
    assert_eq!(arrays.len(), 1, "{:?}", run.client);
    let answers = parse(arrays[0]);
    let answers = answers.as_array().unwrap();
    assert_eq!(answers.len(), 4, "{answers:?}");
    let by_id = |id: &str| -> Vec<&Value> { answers.iter().filter(|a| a["id"] == id).collect() };
    assert_eq!(by_id("b1")[0]["result"]["isError"], true);
    assert!(by_id("b3")[0].get("result").is_some());
    // The second "b2" was pending already: refused, the first one answered.
    let b2 = by_id("b2");
    assert_eq!(b2.len(), 2);
    assert!(b2.iter().any(|a| a["error"]["code"] == -32600));
    assert!(
        b2.iter()
            .any(|a| a["result"]["content"][0]["text"] == "done")
    );
    // Nothing else reached the client: the initialize answer and the array.
    assert_eq!(run.client.len(), 2, "{:?}", run.client);
}

#[test]
fn a_batch_of_notifications_gets_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let batch = r#"[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}]"#;
    let run = run_session(
        dir.path(),
        deny_purge(),
        server("2025-03-26", false),
        &format!("{INITIALIZE}{batch}\n"),
    );
    assert_eq!(run.client.len(), 1, "{:?}", run.client);
    assert!(
        run.received
            .iter()
            .any(|l| l.contains("notifications/progress"))
    );
}

#[test]
fn batches_in_any_other_revision_are_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let batch = r#"[{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"purge_everything"}},{"jsonrpc":"2.0","method":"notifications/progress"},{"jsonrpc":"2.0","id":1e0,"method":"tools/call","params":{"name":"get_state"}},7]"#;
    for (revision, initialize) in [
        ("2025-11-25", INITIALIZE),
        ("2025-06-18", INITIALIZE),
        ("none yet", ""),
    ] {
        let client = format!("{initialize}{batch}\n[]\n\"text\"\n42\n");
        let run = run_session(dir.path(), deny_purge(), server(revision, false), &client);
        assert!(
            run.calls_received().is_empty(),
            "{revision}: {:?}",
            run.received
        );
        assert!(
            !run.received
                .iter()
                .any(|l| l.contains("b1") || l.contains("progress"))
        );
        assert!(run.kinds("call.intent").is_empty());
        let refused = run.client.iter().find(|l| l.starts_with('[')).unwrap();
        // The ids exactly as sent, one error per request element (and one for the non-object).
        assert!(refused.contains(r#""id":1e0"#), "{refused}");
        let refused = parse(refused);
        let ids: Vec<&Value> = refused
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["id"])
            .collect();
        assert_eq!(
            ids,
            [&Value::from("b1"), &parse("1e0"), &Value::Null],
            "{revision}"
        );
        assert!(
            refused
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["error"]["code"] == -32600)
        );
        // `[]`, a string and a number: one -32600 each, with a null id.
        assert_invalid_requests(run.client.iter().rev().take(3));
    }
}

#[test]
fn request_methods_sent_as_notifications_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = INITIALIZE.to_owned();
    for method in REQUEST_METHODS {
        client.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{{\"name\":\"purge_everything\"}}}}\n"
        ));
    }
    let run = run_session(
        dir.path(),
        Policy::default(),
        server("2025-11-25", false),
        &client,
    );
    for method in REQUEST_METHODS {
        let forwarded = run
            .received
            .iter()
            .filter(|l| l.contains(&format!("\"method\":\"{method}\"")) && !l.contains("\"id\""))
            .count();
        assert_eq!(forwarded, 0, "{method}: {:?}", run.received);
    }
    assert!(run.calls_received().is_empty());
    assert!(run.kinds("call.intent").is_empty());
    // Notifications get no answer: only initialize's reached the client.
    assert_eq!(run.client.len(), 1, "{:?}", run.client);
}

#[test]
fn ids_that_are_null_or_not_integers_are_invalid_requests() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = INITIALIZE.to_owned();
    for id in ["null", "1.5", "true", "{}", "[1]", "1e-3"] {
        client.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"get_state\"}}}}\n"
        ));
    }
    let run = run_session(
        dir.path(),
        Policy::default(),
        server("2025-11-25", false),
        &client,
    );
    assert!(run.calls_received().is_empty(), "{:?}", run.received);
    assert_eq!(run.client.len(), 7, "{:?}", run.client);
    assert_invalid_requests(run.client.iter().skip(1));
}

#[test]
fn a_second_request_with_a_pending_id_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let call = |id: &str| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"hold\"}}}}\n"
        )
    };
    let client = format!(
        "{INITIALIZE}{}{}{}{}{}",
        call("1"),
        call("1.0"),
        call("1e0"),
        call("\"1\""),
        "{\"jsonrpc\":\"2.0\",\"method\":\"test/release\"}\n"
    );
    let policy = Policy {
        unlisted_tools: Some(mcp_recovery_proxy::Action::Allow),
        ..Policy::default()
    };
    let run = run_session(dir.path(), policy, server("2025-11-25", false), &client);
    assert_eq!(run.calls_received(), ["hold", "hold"], "{:?}", run.received);
    let intents = run.kinds("call.intent");
    assert_eq!(intents.len(), 2);
    assert_eq!(run.kinds("call.outcome").len(), 2);
    for id in ["1.0", "1e0"] {
        let refused = run.answers_to(id);
        assert_eq!(refused.len(), 1, "{id}: {:?}", run.client);
        let refused = parse(refused[0]);
        assert_eq!(refused["error"]["code"], -32600);
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("an id already pending")
        );
    }
    assert_eq!(run.answers_to("1").len(), 1);
    assert_eq!(run.answers_to("\"1\"").len(), 1);
}

#[test]
fn answers_are_matched_by_value_and_carry_the_clients_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let client = format!(
        "{INITIALIZE}{}\n{}\n{}\n",
        r#"{"jsonrpc":"2.0","id":1e0,"method":"tools/call","params":{"name":"get_state"}}"#,
        r#"{"jsonrpc":"2.0","id":20E-1,"method":"tools/call","params":{"name":"hold"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2.0}}"#,
    );
    let policy = Policy {
        unlisted_tools: Some(mcp_recovery_proxy::Action::Allow),
        ..Policy::default()
    };
    let run = run_session(dir.path(), policy, server("2025-11-25", true), &client);
    // One answer, in the client's spelling; the server wrote `1.0`.
    assert_eq!(run.answers_to("1e0").len(), 1, "{:?}", run.client);
    assert!(run.answers_to("1.0").is_empty());
    assert_eq!(run.client.len(), 2, "{:?}", run.client);
    let outcomes = run.kinds("call.outcome");
    assert_eq!(outcomes.len(), 2);
    let outcome = |name: &str| *outcomes.iter().find(|o| o["name"] == name).unwrap();
    assert!(outcome("get_state").get("reason").is_none(), "{outcomes:?}");
    assert_eq!(outcome("get_state")["result"]["content"][0]["text"], "done");
    // The cancellation matched `20E-1` by value, and the server heard the request's spelling.
    assert_eq!(outcome("hold")["reason"], "cancelled by the client");
    let cancel = run
        .received
        .iter()
        .find(|l| l.contains("notifications/cancelled"))
        .unwrap();
    assert!(cancel.contains(r#""requestId":20E-1"#), "{cancel}");
}

#[test]
fn names_are_gated_case_insensitively_and_unlisted_ones_refused() {
    let dir = tempfile::tempdir().unwrap();
    let call = |id: u32, name: &str| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{name}\"}}}}\n"
        )
    };
    let client = format!(
        "{INITIALIZE}{}{}{}{}{}",
        call(1, "PURGE_everything"),
        call(2, "Get_State"),
        call(3, "g\u{435}t_state"),
        call(4, "never_listed"),
        call(5, "get_state"),
    );
    let run = run_session(
        dir.path(),
        deny_purge(),
        server("2025-11-25", false),
        &client,
    );
    assert_eq!(run.calls_received(), ["get_state"], "{:?}", run.received);
    let refusals = run.kinds("approval");
    assert_eq!(refusals.len(), 4);
    assert_eq!(refusals[0]["rule"], "--deny 'purge_*'");
    for refusal in &refusals[1..] {
        assert_eq!(refusal["rule"], "unlisted-tools", "{refusal:?}");
        assert_eq!(refusal["decision"], "deny");
        assert_eq!(refusal["by"], "policy");
    }
    let reason = |n: usize| refusals[n]["reason"].as_str().unwrap().to_owned();
    assert!(
        reason(0).contains("looks like the listed 'purge_everything'"),
        "{}",
        reason(0)
    );
    assert!(
        reason(1).contains("looks like the listed 'get_state'"),
        "{}",
        reason(1)
    );
    assert!(
        reason(2).contains("looks like the listed 'get_state'"),
        "{}",
        reason(2)
    );
    assert!(!reason(3).contains("looks like"), "{}", reason(3));
    for id in 1..=4 {
        let answer = parse(run.answers_to(&id.to_string())[0]);
        assert_eq!(answer["result"]["isError"], true, "{answer}");
    }
    // A policy that says so lets unlisted names through (a --deny still holds).
    let allow = Policy {
        unlisted_tools: Some(mcp_recovery_proxy::Action::Allow),
        ..deny_purge()
    };
    let run = run_session(dir.path(), allow, server("2025-11-25", false), &client);
    assert_eq!(
        run.calls_received(),
        ["Get_State", "g\u{435}t_state", "never_listed", "get_state"]
    );
    let file = PolicyFile::parse(
        "unlisted-tools = \"allow\"\n[[tools]]\nmatch = \"NEVER_*\"\naction = \"deny\"\n",
    )
    .unwrap();
    let policy = Policy {
        file,
        ..Policy::default()
    };
    let run = run_session(dir.path(), policy, server("2025-11-25", false), &client);
    assert_eq!(
        run.calls_received(),
        [
            "PURGE_everything",
            "Get_State",
            "g\u{435}t_state",
            "get_state"
        ]
    );
}

/// A tool that only an overlay declares (here as read-only, so the gate would allow it) is not
/// listed: only the server's tools/list counts, and a call to it is refused as unlisted.
#[test]
fn a_tool_only_an_overlay_declares_counts_as_unlisted() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[tools.overlay_only.annotations]\nreadOnlyHint = true\n\n\
                [tools.get_state.annotations]\ntitle = \"State\"\n";
    let overlay =
        mcp_recovery_model::Overlay::parse(text, mcp_recovery_model::OverlayFormat::Toml).unwrap();
    let mut settings = settings(Policy::default());
    settings.overlays = Overlays::new(vec![mcp_recovery_proxy::NamedOverlay {
        shown: "test.overlay.toml".into(),
        overlay,
        positions: std::collections::HashMap::new(),
    }]);
    let call = |id: u32, name: &str| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{name}\"}}}}\n"
        )
    };
    let client = format!(
        "{INITIALIZE}{}{}",
        call(1, "overlay_only"),
        call(2, "get_state")
    );
    let Journaled {
        received, records, ..
    } = run_journaled(
        dir.path(),
        settings,
        client.into_bytes(),
        server("2025-11-25", false),
    );
    let calls: Vec<String> = received
        .iter()
        .map(|line| parse(line))
        .filter(|m| m["method"] == "tools/call")
        .map(|m| m["params"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(calls, ["get_state"], "{received:?}");
    let refusal = records
        .iter()
        .find(|r| r["kind"] == "approval")
        .expect("the call was refused");
    assert_eq!(refusal["rule"], "unlisted-tools", "{refusal:?}");
    assert_eq!(refusal["decision"], "deny");
}

/// A method spelled like a request method without being it (case, spaces, invisible or
/// fullwidth characters) would reach a server that looks methods up loosely past every gate:
/// refused as a request, dropped as a notification, never forwarded.
#[test]
fn request_methods_respelled_are_never_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = INITIALIZE.to_owned();
    let respelled = [
        "Tools/call",
        "TOOLS/CALL",
        "tools/call ",
        " tools/call",
        "tools/call\\u200b",
        "\\uff54ools/call",
        "tools/\\u0441all",
    ];
    for (index, method) in respelled.iter().enumerate() {
        client.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{index},\"method\":\"{method}\",\"params\":{{\"name\":\"purge_everything\"}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{{\"name\":\"purge_everything\"}}}}\n"
        ));
    }
    let run = run_session(
        dir.path(),
        deny_purge(),
        server("2025-11-25", false),
        &client,
    );
    let forwarded: Vec<&String> = run
        .received
        .iter()
        .filter(|line| line.contains("purge_everything"))
        .collect();
    assert!(forwarded.is_empty(), "{forwarded:?}");
    assert!(run.kinds("call.intent").is_empty());
    // Each request answered with its own id, the notifications not at all.
    assert_eq!(run.client.len(), 1 + respelled.len(), "{:?}", run.client);
    for (index, line) in run.client.iter().skip(1).enumerate() {
        let answer = parse(line);
        assert_eq!(answer["id"], index, "{line}");
        assert_eq!(answer["error"]["code"], -32600, "{line}");
        assert!(line.contains("spelled like 'tools/call'"), "{line}");
    }
}

/// What the server sends that is neither a request, a notification nor an answer the proxy can
/// match never reaches the client: an array outside 2025-03-26, an answer with a member that
/// folds to `method`. The call stays unanswered (and is given up in time), never answered with
/// nothing journaled. In a 2025-03-26 session a batch of answers is taken element by element.
#[test]
fn server_messages_the_proxy_cannot_match_never_reach_the_client() {
    let answering = |revision: &'static str, shape: &'static str| {
        let mut inner = server(revision, false);
        move |line: &str| {
            let answers = inner(line);
            if !line.contains("\"tools/call\"") {
                return answers;
            }
            answers
                .into_iter()
                .map(|answer| match shape {
                    "batch" => format!("[{answer}]"),
                    _ => answer.replacen("{\"jsonrpc\"", "{\"Method\":\"x\",\"jsonrpc\"", 1),
                })
                .collect()
        }
    };
    let call = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"get_state\"}}\n";
    let mut policy = Policy::default();
    policy.file.call_timeout_secs = Some(1);
    for shape in ["batch", "method"] {
        let dir = tempfile::tempdir().unwrap();
        let client = INITIALIZE.replace("2025-03-26", "2025-11-25") + call;
        let run = run_session(
            dir.path(),
            policy.clone(),
            answering("2025-11-25", shape),
            &client,
        );
        let answers = run.answers_to("7");
        assert_eq!(answers.len(), 1, "{shape}: {:?}", run.client);
        assert!(!answers[0].contains("\"done\""), "{shape}: {}", answers[0]);
        let outcomes = run.kinds("call.outcome");
        assert_eq!(outcomes.len(), 1, "{shape}");
        assert!(
            outcomes[0]["result"].is_null(),
            "{shape}: {:?}",
            outcomes[0]
        );
        assert_eq!(outcomes[0]["reason"], "timed out", "{shape}");
    }
    let dir = tempfile::tempdir().unwrap();
    let run = run_session(
        dir.path(),
        policy,
        answering("2025-03-26", "batch"),
        &format!("{INITIALIZE}{call}"),
    );
    let answers = run.answers_to("7");
    assert_eq!(answers.len(), 1, "{:?}", run.client);
    assert!(answers[0].contains("\"done\""), "{}", answers[0]);
    let outcomes = run.kinds("call.outcome");
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0]["result"]["content"][0]["text"], "done");
}

/// A line too long to read is answered with the id it leads with, so the client's request
/// ends; nothing of it is forwarded.
#[test]
fn a_request_too_long_to_read_is_answered_with_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = INITIALIZE.to_owned();
    client.push_str(
        "{\"jsonrpc\":\"2.0\",\"id\":\"long\",\"method\":\"tools/call\",\"params\":{\"name\":\"get_state\",\"arguments\":{\"x\":\"",
    );
    client.push_str(&"a".repeat(65 << 20));
    client.push_str("\"}}}\n");
    let run = run_session(
        dir.path(),
        Policy::default(),
        server("2025-11-25", false),
        &client,
    );
    assert!(run.calls_received().is_empty());
    let answers = run.answers_to("\"long\"");
    assert_eq!(answers.len(), 1, "{:?}", run.client);
    let answer = parse(answers[0]);
    assert_eq!(answer["error"]["code"], -32600);
    assert!(answers[0].contains("64 MiB"), "{}", answers[0]);
}
