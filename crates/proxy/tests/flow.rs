//! The flow of messages under load and out of turn: a flood at a server that reads one line at
//! a time is answered in full, requests waiting at once are capped, an answer that matches no
//! waiting request never reaches the client, a call's late answer is journaled as its outcome,
//! and the server never inherits the proxy's own secrets.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::sync::mpsc::{channel, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use common::{Journaled, run_journaled, settings};
use mcp_recovery_client::Secrets;
use mcp_recovery_proxy::{
    Event, Launch, Line, Policy, PolicyFile, Session, StdioUpstream, Upstream, parse_line,
    run_scripted,
};
use serde_json::{Map, Value, json};

/// Long enough for any of these sessions; only a hang reaches it.
const HANG: Duration = Duration::from_secs(300);

/// The client's side of a session run here: what it writes, kept.
#[derive(Clone, Default)]
struct Output(Arc<Mutex<Vec<u8>>>);

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        out.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every call allowed, each request given `timeout` seconds.
fn allow_all(timeout: Option<u64>) -> Policy {
    Policy {
        allow: vec!["*".into()],
        file: PolicyFile {
            call_timeout_secs: timeout,
            ..PolicyFile::default()
        },
        ..Policy::default()
    }
}

const HANDSHAKE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

/// A server of one tool: it answers `initialize` and `tools/list` at once, and hands every
/// other message to `rest`.
fn server(
    mut rest: impl FnMut(&Value) -> Vec<String> + Send + 'static,
) -> impl FnMut(&str) -> Vec<String> + Send + 'static {
    move |line: &str| {
        let message: Value = mcp_recovery_model::json::from_str(line).unwrap();
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let answer =
            |result: Value| vec![json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()];
        match message["method"].as_str().unwrap_or_default() {
            "initialize" => answer(json!({"protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}})),
            "tools/list" => answer(json!({"tools": [{"name": "create_item",
                "inputSchema": {"type": "object"}}]})),
            _ => rest(&message),
        }
    }
}

fn done(id: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "done"}]}})
        .to_string()
}

fn call(id: u32) -> String {
    common::request(id, "create_item", json!({"id": format!("x{id}")}))
}

/// A session of [`server`] with `rest` answering the other messages, every call allowed.
fn allowing(
    dir: &std::path::Path,
    client: String,
    rest: impl FnMut(&Value) -> Vec<String> + Send + 'static,
) -> Journaled {
    run_journaled(
        dir,
        settings(allow_all(None)),
        client.into_bytes(),
        server(rest),
    )
}

/// The answers the client got for `id`.
fn answers_for(client: &[String], id: &Value) -> Vec<Value> {
    client
        .iter()
        .filter_map(|line| mcp_recovery_model::json::from_str(line).ok())
        .filter(|message| message.get("id") == Some(id))
        .collect()
}

/// The client got one answer for `id`: the refusal of an id still in use.
fn refused_as_in_use(client: &[String], id: &Value) {
    let answers = answers_for(client, id);
    assert_eq!(answers.len(), 1, "{client:?}");
    let message = answers[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("an id still in use"), "{answers:?}");
}

fn outcomes(records: &[Map<String, Value>]) -> Vec<&Map<String, Value>> {
    records
        .iter()
        .filter(|r| r["kind"] == "call.outcome")
        .collect()
}

#[test]
fn a_flood_at_a_server_reading_one_line_at_a_time_is_answered_in_full() {
    const CALLS: usize = 3000;
    // A server that answers each line before it reads the next, echoing its params: once its
    // stdout is full it reads nothing more until the session drains it.
    let script = r#"s/^\{"jsonrpc":"2.0","id":([0-9]+),"method":"ping","params":(.*)\}$/{"jsonrpc":"2.0","id":\1,"result":\2}/"#;
    let launch = Launch {
        program: "sed".into(),
        args: vec!["-u".into(), "-E".into(), script.into()],
        ..Launch::default()
    };
    let (sender, events) = sync_channel(1024);
    let upstream = StdioUpstream::spawn(&launch, &Secrets::default(), sender.clone()).unwrap();
    let client = std::thread::spawn(move || {
        for id in 0..CALLS {
            let pad = "A".repeat(id % 5000);
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"pad":"{pad}"}}}}"#
            );
            sender
                .send(Event::Client(parse_line(line.as_bytes())))
                .unwrap();
        }
        sender.send(Event::Client(Line::Closed(None))).unwrap();
    });
    let output = Output::default();
    let session = Session::new(
        settings(allow_all(Some(600))),
        None,
        events,
        Upstream::Stdio(upstream),
        output.clone(),
    );
    let (ended, end) = channel();
    std::thread::spawn(move || ended.send(session.run().map(|_| ())));
    end.recv_timeout(HANG)
        .expect("the session is wedged")
        .unwrap();
    client.join().unwrap();
    let text = String::from_utf8(output.0.lock().unwrap().clone()).unwrap();
    let answered: Vec<Value> = text
        .lines()
        .map(|line| mcp_recovery_model::json::from_str(line).unwrap())
        .collect();
    assert_eq!(answered.len(), CALLS);
    for (id, answer) in answered.iter().enumerate() {
        assert_eq!(answer["id"], json!(id));
        assert_eq!(answer["result"]["pad"].as_str().unwrap().len(), id % 5000);
    }
}

#[test]
fn requests_past_the_cap_are_refused_saying_it() {
    const SENT: usize = 4100;
    let mut client = String::new();
    for id in 0..SENT {
        client.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"resources/list\"}}\n"
        ));
    }
    // The server never answers: every request forwarded waits until it times out.
    let run = run_scripted(
        settings(allow_all(Some(1))),
        None,
        client.into_bytes(),
        Vec::new(),
        |_| Vec::new(),
    );
    run.end.unwrap();
    let text = String::from_utf8(run.output).unwrap();
    let answers: Vec<Value> = text
        .lines()
        .map(|line| mcp_recovery_model::json::from_str(line).unwrap())
        .collect();
    assert_eq!(answers.len(), SENT);
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|a| {
            a["error"]["message"]
                .as_str()
                .unwrap()
                .contains("4096 requests are waiting for the server's answer, the most allowed")
        })
        .collect();
    assert_eq!(refused.len(), SENT - 4096, "{:?}", refused.first());
    let forwarded = run
        .received
        .iter()
        .filter(|m| m.contains("resources/list"))
        .count();
    assert_eq!(forwarded, 4096);
    let timed_out = answers
        .iter()
        .filter(|a| a["error"]["code"] == json!(-32001))
        .count();
    assert_eq!(timed_out, 4096);
}

#[test]
fn a_second_answer_or_a_stray_one_never_reaches_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let client = format!("{HANDSHAKE}{}{}", call(1), call(2));
    let Journaled {
        client, records, ..
    } = allowing(dir.path(), client, |message| match message.get("id") {
        // Answered twice, then an answer to an id no one sent.
        Some(id) if *id == json!(1) => vec![done(id), done(id), done(&json!(77))],
        Some(id) => vec![done(id)],
        None => Vec::new(),
    });
    assert_eq!(answers_for(&client, &json!(1)).len(), 1, "{client:?}");
    assert_eq!(answers_for(&client, &json!(2)).len(), 1, "{client:?}");
    assert!(answers_for(&client, &json!(77)).is_empty(), "{client:?}");
    let outcomes = outcomes(&records);
    assert_eq!(outcomes.len(), 2);
    assert!(outcomes.iter().all(|r| r["result"].is_object()));
}

#[test]
fn an_answer_under_another_id_spelling_is_dropped_and_the_call_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let client = format!("{HANDSHAKE}{}", call(1));
    let Journaled {
        client, records, ..
    } = run_journaled(
        dir.path(),
        settings(allow_all(Some(1))),
        client.into_bytes(),
        server(|message| match message.get("id") {
            // The id 1 answered as "1": another id.
            Some(id) if *id == json!(1) => vec![done(&json!("1"))],
            _ => Vec::new(),
        }),
    );
    let answers = answers_for(&client, &json!(1));
    assert_eq!(answers.len(), 1, "{client:?}");
    assert_eq!(answers[0]["error"]["code"], json!(-32001));
    assert!(answers_for(&client, &json!("1")).is_empty(), "{client:?}");
    let outcomes = outcomes(&records);
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0]["reason"], "timed out");
}

#[test]
fn the_answer_to_a_cancelled_call_is_journaled_as_its_outcome_not_passed_on() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let client = format!("{HANDSHAKE}{}{cancel}\n{ping}\n", call(1));
    let Journaled {
        client, records, ..
    } = allowing(
        dir.path(),
        client,
        // The call is answered only once the server hears of its cancellation; the ping after
        // it keeps the session open until that answer is in.
        |message| match message["method"].as_str() {
            Some("notifications/cancelled") => vec![done(&message["params"]["requestId"])],
            Some("ping") => {
                vec![json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}).to_string()]
            }
            _ => Vec::new(),
        },
    );
    assert!(answers_for(&client, &json!(1)).is_empty(), "{client:?}");
    assert_eq!(answers_for(&client, &json!(2)).len(), 1, "{client:?}");
    let outcomes = outcomes(&records);
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    assert_eq!(outcomes[0]["result"], Value::Null);
    assert_eq!(outcomes[0]["reason"], "cancelled by the client");
    assert_eq!(outcomes[1]["call"], outcomes[0]["call"]);
    assert_eq!(outcomes[1]["late"], "cancelled by the client");
    assert_eq!(outcomes[1]["result"]["content"][0]["text"], "done");
}

#[test]
fn an_id_given_up_unanswered_is_not_reused_until_its_answer_comes() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    // The same id again, as the same number respelled, right after the cancellation.
    let again = call(1).replace(r#""id":1,"#, r#""id":1.0,"#);
    assert_ne!(again, call(1));
    let client = format!("{HANDSHAKE}{}{cancel}\n{again}{ping}\n", call(1));
    let calls = Arc::new(Mutex::new(0));
    let counted = Arc::clone(&calls);
    let Journaled {
        client, records, ..
    } = allowing(
        dir.path(),
        client,
        // The cancelled call is answered only when the ping comes, after the reuse.
        move |message| match message["method"].as_str() {
            Some("tools/call") => {
                *counted.lock().unwrap() += 1;
                Vec::new()
            }
            Some("ping") => vec![
                done(&json!(1)),
                json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}).to_string(),
            ],
            _ => Vec::new(),
        },
    );
    assert_eq!(
        *calls.lock().unwrap(),
        1,
        "the reused id reached the server"
    );
    refused_as_in_use(&client, &json!(1.0));
    let intents = records
        .iter()
        .filter(|r| r["kind"] == "call.intent")
        .count();
    assert_eq!(intents, 1);
    let outcomes = outcomes(&records);
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    assert_eq!(outcomes[1]["late"], "cancelled by the client");
    assert_eq!(outcomes[1]["call"], outcomes[0]["call"]);
}

#[test]
fn the_id_of_any_request_given_up_is_not_taken_by_a_call_until_its_answer_comes() {
    let dir = tempfile::tempdir().unwrap();
    let ping = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let client = format!("{HANDSHAKE}{}\n{cancel}\n{}{}\n", ping(1), call(1), ping(2));
    let Journaled {
        client, records, ..
    } = allowing(
        dir.path(),
        client,
        // The cancelled ping is answered only with the second, after the call reusing its id.
        move |message| match message["id"].as_u64() {
            Some(2) => vec![
                json!({"jsonrpc": "2.0", "id": 1, "result": {}}).to_string(),
                json!({"jsonrpc": "2.0", "id": 2, "result": {}}).to_string(),
            ],
            _ => Vec::new(),
        },
    );
    refused_as_in_use(&client, &json!(1));
    assert!(
        records.iter().all(|r| r["kind"] != "call.intent"),
        "{records:?}"
    );
}

#[test]
fn the_late_answer_to_a_timed_out_call_is_journaled_as_its_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let client = format!("{HANDSHAKE}{}", call(1));
    let Journaled {
        client, records, ..
    } = run_journaled(
        dir.path(),
        settings(allow_all(Some(1))),
        client.into_bytes(),
        // Answered once the proxy says it timed out, with an error.
        server(|message| match message["method"].as_str() {
            Some("notifications/cancelled") => vec![
                json!({"jsonrpc": "2.0", "id": message["params"]["requestId"],
                    "error": {"code": -32000, "message": "too slow"}})
                .to_string(),
            ],
            _ => Vec::new(),
        }),
    );
    let answers = answers_for(&client, &json!(1));
    assert_eq!(answers.len(), 1, "{client:?}");
    assert_eq!(answers[0]["error"]["code"], json!(-32001));
    let outcomes = outcomes(&records);
    assert_eq!(outcomes[0]["reason"], "timed out");
    // The session may end before the late answer is read; when it is, it is journaled.
    if let Some(late) = outcomes.get(1) {
        assert_eq!(late["late"], "timed out");
        assert_eq!(late["error"]["message"], "too slow");
    }
}

#[test]
fn the_server_never_inherits_a_variable_it_is_withheld() {
    // Two variables of this process's environment: one withheld, one not.
    let names: Vec<String> = std::env::vars()
        .map(|(name, _)| name)
        .filter(|name| {
            name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name != "PATH"
        })
        .take(2)
        .collect();
    assert_eq!(names.len(), 2, "the test needs two variables set");
    let script = format!(
        r#"printf '{{"jsonrpc":"2.0","method":"env","params":{{"withheld":"%s","kept":"%s"}}}}\n' "${{{0}-unset}}" "${{{1}+set}}""#,
        names[0], names[1]
    );
    let launch = Launch {
        program: "sh".into(),
        args: vec!["-c".into(), script],
        ..Launch::default()
    };
    let (sender, events) = sync_channel(16);
    let _upstream = StdioUpstream::spawn_withholding(
        &launch,
        std::slice::from_ref(&names[0]),
        &Secrets::default(),
        sender,
    )
    .unwrap();
    let line = match events.recv_timeout(HANG).unwrap() {
        Event::Server(line) | Event::MeteredServer(line, _) => line,
        other => panic!("{other:?}"),
    };
    let Line::Message(message, _) = line else {
        panic!("{line:?}");
    };
    assert_eq!(message["params"]["withheld"], "unset");
    assert_eq!(message["params"]["kept"], "set");
}
