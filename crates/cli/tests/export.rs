//! `audit export` end to end: a session through the proxy (the binary's hidden `demo-server`
//! upstream, a failing call and its rollback), exported as OTLP/HTTP JSON to a local receiver
//! and as CSV read back with an RFC 4180 reader; journals written with the journal library for
//! batching, outcomes and hostile names; a tampered journal refused.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(feature = "demo")]

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use common::{bin_in, code, journal_kinds, journal_records};
use mcp_recovery_journal::{Journal, Kind};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");
const SECRET: &str = "Bearer s3cret-token-42";

/// One POST the receiver got.
struct Got {
    path: String,
    content_type: String,
    authorization: Option<String>,
    body: Value,
}

/// A local OTLP/HTTP receiver answering every request with `status` and `answer`.
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<Got>>>,
}

impl Receiver {
    fn start(status: u16, answer: &'static str) -> Receiver {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let collected = Arc::clone(&got);
        std::thread::spawn(move || {
            for mut request in server.incoming_requests() {
                let mut body = String::new();
                request.as_reader().read_to_string(&mut body).unwrap();
                let header = |name: &'static str| {
                    request
                        .headers()
                        .iter()
                        .find(|h| h.field.equiv(name))
                        .map(|h| h.value.as_str().to_owned())
                };
                collected.lock().unwrap().push(Got {
                    path: request.url().to_owned(),
                    content_type: header("Content-Type").unwrap_or_default(),
                    authorization: header("Authorization"),
                    body: serde_json::from_str(&body).unwrap(),
                });
                let response = tiny_http::Response::from_string(answer).with_status_code(status);
                request.respond(response).unwrap();
            }
        });
        Receiver { url, got }
    }

    /// The request bodies received so far, emptied.
    fn take(&self) -> Vec<Got> {
        std::mem::take(&mut *self.got.lock().unwrap())
    }
}

/// The binary with no OpenTelemetry settings from the environment.
fn export_cmd(dir: &Path) -> Command {
    let mut command = bin_in(dir);
    for name in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    ] {
        command.env_remove(name);
    }
    command.args(["audit", "export"]);
    command
}

fn run(mut command: Command) -> (i32, String, String) {
    let output: Output = command.output().unwrap();
    (
        code(&output),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Through the proxy (journal, rollback on failure, `reserve_inventory` approved by a command,
/// `get_state` denied): reserve, charge, a denied read, a failing shipment. Gives the journal.
fn proxied_session(dir: &Path) -> PathBuf {
    let journal = dir.join("journal.jsonl");
    let (mut child, mut stdin, mut lines) = common::spawn_piped(
        bin_in(dir)
            .arg("proxy")
            .args(["--journal", journal.to_str().unwrap()])
            .args(["--on-failure", "rollback", "--ask", "reserve_inventory"])
            .args(["--approve-with", "exit 0", "--deny", "get_state"])
            .args(["--", BIN, "demo-server"]),
    );
    let mut id = 0;
    let mut request = move |method: &str, params: Value| -> Value {
        id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        message["params"] = params;
        writeln!(stdin, "{message}").unwrap();
        loop {
            let answer: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            if answer["id"] == id && answer.get("method").is_none() {
                return answer["result"].clone();
            }
        }
    };
    request("initialize", common::initialize_params());
    let reserved = request(
        "tools/call",
        json!({"name": "reserve_inventory", "arguments": {"sku": "sku-widget", "quantity": 3}}),
    );
    let reservation = reserved["structuredContent"]["reservationId"].clone();
    request(
        "tools/call",
        json!({"name": "charge_payment",
               "arguments": {"customerId": "cust-7", "amount": 12, "currency": "EUR"}}),
    );
    let denied = request("tools/call", json!({"name": "get_state", "arguments": {}}));
    assert_eq!(denied["isError"], true, "{denied}");
    let failed = request(
        "tools/call",
        json!({"name": "create_shipment", "arguments":
               {"reservationId": reservation, "address": "a", "simulateFailure": true}}),
    );
    assert_eq!(failed["isError"], true, "{failed}");
    drop(request);
    assert!(child.wait().unwrap().success());
    assert_eq!(journal_kinds(&journal, "compensation.outcome").len(), 2);
    journal
}

/// The spans of a request body.
fn spans_of(body: &Value) -> Vec<Value> {
    body["resourceSpans"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["scopeSpans"].as_array().unwrap().clone())
        .flat_map(|s| s["spans"].as_array().unwrap().clone())
        .collect()
}

/// A span's attributes as key → the JSON of its value (`{"stringValue": …}`).
fn attributes(span: &Value) -> HashMap<String, Value> {
    span["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["key"].as_str().unwrap().to_owned(), a["value"].clone()))
        .collect()
}

fn string_attr(span: &Value, key: &str) -> Option<String> {
    attributes(span)
        .get(key)
        .map(|v| v["stringValue"].as_str().unwrap().to_owned())
}

fn int_attr(span: &Value, key: &str) -> Option<String> {
    attributes(span)
        .get(key)
        .map(|v| v["intValue"].as_str().unwrap().to_owned())
}

fn named<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    let found: Vec<&Value> = spans.iter().filter(|s| s["name"] == name).collect();
    assert_eq!(found.len(), 1, "{name}: {spans:?}");
    found[0]
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The spans of the proxied session: one trace, the tree, names, attributes, statuses,
/// approvals, links, no body; the same ids on a second export (by the environment's endpoint
/// and headers instead of the flags).
#[test]
fn a_proxied_session_becomes_one_trace_of_spans() {
    let dir = tempfile::tempdir().unwrap();
    let journal = proxied_session(dir.path());
    let receiver = Receiver::start(200, "{}");
    let mut command = export_cmd(dir.path());
    command
        .arg(&journal)
        .args(["--otlp", &receiver.url, "--header"])
        .arg(format!("Authorization={SECRET}"));
    let (status, stdout, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("8 spans of 1 sessions"), "{stdout}");
    assert!(!stdout.contains(SECRET) && !stderr.contains(SECRET));
    let got = receiver.take();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, "/v1/traces");
    assert_eq!(got[0].content_type, "application/json");
    assert_eq!(got[0].authorization.as_deref(), Some(SECRET));
    let body = &got[0].body;
    let spans = spans_of(body);
    assert_eq!(
        spans.len(),
        8,
        "session, 4 calls, rollback, 2 compensations"
    );

    let records = journal_records(&journal);
    let session_id = records[0]["session"].as_str().unwrap();
    let trace = spans[0]["traceId"].as_str().unwrap();
    // The ids are the record hashes': the trace's of the session's first record.
    assert_eq!(trace, &records[0]["hash"].as_str().unwrap()[..32]);
    assert!(spans.iter().all(|s| s["traceId"] == trace));
    let mut ids: Vec<&str> = spans
        .iter()
        .map(|s| s["spanId"].as_str().unwrap())
        .collect();
    assert!(
        ids.iter()
            .all(|id| id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()))
    );
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 8, "span ids are unique");

    let root = named(&spans, "mcp-recovery session");
    assert!(root.get("parentSpanId").is_none());
    let rollback = named(&spans, "mcp-recovery rollback");
    assert_eq!(rollback["parentSpanId"], root["spanId"]);
    assert_eq!(
        int_attr(rollback, "mcp_recovery.rollback.compensated").as_deref(),
        Some("2")
    );

    let intent = |name: &str| -> Value {
        journal_kinds(&journal, "call.intent")
            .into_iter()
            .find(|r| r["name"] == name)
            .unwrap()
    };
    for tool in [
        "reserve_inventory",
        "charge_payment",
        "create_shipment",
        "get_state",
    ] {
        let span = named(&spans, &format!("tools/call {tool}"));
        assert_eq!(span["parentSpanId"], root["spanId"], "{tool}");
        assert_eq!(span["kind"], 3, "a client span: the proxy calls the server");
        assert_eq!(
            string_attr(span, "mcp.method.name").as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            string_attr(span, "mcp.session.id").as_deref(),
            Some(session_id)
        );
        assert_eq!(
            string_attr(span, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(string_attr(span, "gen_ai.tool.name").as_deref(), Some(tool));
        assert!(string_attr(span, "jsonrpc.request.id").is_some(), "{tool}");
        assert_eq!(
            string_attr(span, "network.transport").as_deref(),
            Some("pipe")
        );
        let start: u64 = span["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let end: u64 = span["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
        assert!(start > 1_700_000_000_000_000_000 && end >= start, "{span}");
    }
    // A call's span starts at its intent record and names it.
    let charge = named(&spans, "tools/call charge_payment");
    let charge_intent = intent("charge_payment");
    assert_eq!(
        string_attr(charge, "mcp_recovery.record.hash").as_deref(),
        charge_intent["hash"].as_str()
    );
    assert_eq!(
        charge["spanId"],
        charge_intent["hash"].as_str().unwrap()[..16]
    );
    assert_eq!(
        int_attr(charge, "mcp_recovery.journal.seq").unwrap(),
        charge_intent["seq"].to_string()
    );
    assert_eq!(
        int_attr(charge, "mcp_recovery.call").unwrap(),
        charge_intent["call"].to_string()
    );
    assert_eq!(
        string_attr(charge, "mcp_recovery.class").as_deref(),
        Some("compensable")
    );
    assert_eq!(
        string_attr(charge, "jsonrpc.request.id").unwrap(),
        charge_intent["request"].to_string()
    );
    assert_eq!(
        string_attr(charge, "mcp_recovery.arguments.sha256").unwrap(),
        sha256_hex(&charge_intent["arguments"].to_string())
    );
    assert!(
        charge["status"].get("code").is_none(),
        "success leaves the status unset"
    );
    assert!(string_attr(charge, "error.type").is_none());

    // The failing call, and the call the policy refused (never sent).
    let shipment = named(&spans, "tools/call create_shipment");
    assert_eq!(shipment["status"]["code"], 2);
    assert_eq!(
        string_attr(shipment, "error.type").as_deref(),
        Some("tool_error")
    );
    let refused = named(&spans, "tools/call get_state");
    assert_eq!(refused["status"]["code"], 2);
    assert_eq!(refused["events"][0]["name"], "mcp_recovery.approval");
    let decision = |event: &Value, key: &str| -> String {
        event["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == key)
            .unwrap()["value"]["stringValue"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        decision(&refused["events"][0], "mcp_recovery.approval.decision"),
        "deny"
    );
    assert_eq!(
        decision(&refused["events"][0], "mcp_recovery.approval.by"),
        "policy"
    );
    // The approval by command is an event of the call it let through.
    let reserve = named(&spans, "tools/call reserve_inventory");
    let events = reserve["events"].as_array().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(
        decision(&events[0], "mcp_recovery.approval.decision"),
        "allow"
    );
    assert_eq!(decision(&events[0], "mcp_recovery.approval.by"), "command");

    // Compensations: children of the rollback, linked to the call each undoes.
    for (compensator, undone) in [("refund_payment", charge), ("release_inventory", reserve)] {
        let span = named(&spans, &format!("tools/call {compensator}"));
        assert_eq!(span["parentSpanId"], rollback["spanId"], "{compensator}");
        assert_eq!(
            span["links"][0]["spanId"], undone["spanId"],
            "{compensator}"
        );
        assert_eq!(span["links"][0]["traceId"], trace);
        assert_eq!(
            string_attr(span, "gen_ai.tool.name").as_deref(),
            Some(compensator)
        );
        assert_eq!(
            string_attr(span, "mcp_recovery.kind").as_deref(),
            Some("compensation")
        );
        assert!(span["status"].get("code").is_none());
    }

    // No argument or result leaves the journal.
    let text = body.to_string();
    for value in [
        "sku-widget",
        "cust-7",
        "res-1",
        "txn-",
        "simulateFailure",
        "refunded",
    ] {
        assert!(!text.contains(value), "{value} exported: {text}");
    }

    // Again, through the environment: the same request, ids included.
    let mut command = export_cmd(dir.path());
    command
        .arg(&journal)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("{}/", receiver.url))
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "authorization=Bearer%20s3cret-token-42",
        );
    let (status, _, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    let again = receiver.take();
    assert_eq!(again[0].authorization.as_deref(), Some(SECRET));
    assert_eq!(
        again[0].body, *body,
        "a re-export gives the same spans and ids"
    );
}

/// A collector that refuses: exit 2 naming the endpoint and the status, never the header value
/// even when the answer echoes it; no collector at all is a usage error.
#[test]
fn a_refusing_collector_is_named_with_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let journal = synthetic(dir.path(), &[("charge", Outcome::Ok)]);
    let receiver = Receiver::start(401, "token Bearer s3cret-token-42 is not welcome");
    let mut command = export_cmd(dir.path());
    command
        .arg(&journal)
        .args(["--otlp", &receiver.url, "--header"])
        .arg(format!("authorization={SECRET}"));
    let (status, _, stderr) = run(command);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "OTLP export to {}/v1/traces: HTTP 401",
            receiver.url
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret"), "{stderr}");

    let (status, _, stderr) = run({
        let mut command = export_cmd(dir.path());
        command.arg(&journal);
        command
    });
    assert_eq!(status, 2);
    assert!(stderr.contains("no collector"), "{stderr}");

    // The environment's endpoint with the environment's protocol, which is not JSON.
    let (status, _, stderr) = run({
        let mut command = export_cmd(dir.path());
        command
            .arg(&journal)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url)
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
        command
    });
    assert_eq!(status, 2);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL is grpc"),
        "{stderr}"
    );
    assert!(
        receiver.take().len() == 1,
        "only the first run reached the receiver"
    );
}

#[derive(Clone, Copy)]
enum Outcome {
    Ok,
    ToolError,
    RpcError,
    TimedOut,
}

/// A journal of one session written with the journal library: each (tool, outcome) a call.
fn synthetic(dir: &Path, calls: &[(&str, Outcome)]) -> PathBuf {
    let path = dir.join("synthetic.jsonl");
    let mut journal = Journal::open(&path, 64 << 20).unwrap();
    journal.set_sync(false);
    let mut append = |kind: Kind, fields: Value| {
        journal
            .append("s-1", kind, fields.as_object().unwrap().clone())
            .unwrap();
    };
    append(
        Kind::SessionStart,
        json!({"upstream": "test", "onFailure": "report", "version": "0"}),
    );
    for (index, (tool, outcome)) in calls.iter().enumerate() {
        let call = index + 1;
        let fields = json!({"call": call, "request": call + 1, "name": tool,
                            "arguments": {"n": call}, "class": "compensable"});
        append(Kind::CallIntent, fields.clone());
        let mut outcome_fields = fields;
        match outcome {
            Outcome::Ok => outcome_fields["result"] = json!({"content": []}),
            Outcome::ToolError => {
                outcome_fields["result"] = json!({"content": [], "isError": true});
            }
            Outcome::RpcError => {
                outcome_fields["result"] = Value::Null;
                outcome_fields["error"] = json!({"code": -32603, "message": "boom"});
            }
            Outcome::TimedOut => {
                outcome_fields["result"] = Value::Null;
                outcome_fields["reason"] = json!("timed out");
            }
        }
        append(Kind::CallOutcome, outcome_fields);
    }
    path
}

/// More spans than one request carries go in several requests of at most 512; every outcome
/// maps to its status and `error.type`.
#[test]
fn many_spans_go_in_bounded_batches_with_every_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let mut calls = vec![("ok_tool", Outcome::Ok); 600];
    calls[10] = ("failing_tool", Outcome::ToolError);
    calls[20] = ("erring_tool", Outcome::RpcError);
    calls[30] = ("slow_tool", Outcome::TimedOut);
    let journal = synthetic(dir.path(), &calls);
    let receiver = Receiver::start(200, r#"{"partialSuccess": {}}"#);
    let mut command = export_cmd(dir.path());
    command.arg(&journal).args(["--otlp", &receiver.url]);
    let (status, stdout, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("601 spans of 1 sessions"), "{stdout}");
    let got = receiver.take();
    let sizes: Vec<usize> = got.iter().map(|g| spans_of(&g.body).len()).collect();
    assert_eq!(sizes, [512, 89]);
    let spans: Vec<Value> = got.iter().flat_map(|g| spans_of(&g.body)).collect();
    let expect = [
        ("tools/call failing_tool", "tool_error"),
        ("tools/call erring_tool", "-32603"),
        ("tools/call slow_tool", "timeout"),
    ];
    for (name, error_type) in expect {
        let span = named(&spans, name);
        assert_eq!(span["status"]["code"], 2, "{name}");
        assert_eq!(
            string_attr(span, "error.type").as_deref(),
            Some(error_type),
            "{name}"
        );
    }
    assert_eq!(
        string_attr(
            named(&spans, "tools/call erring_tool"),
            "rpc.response.status_code"
        )
        .as_deref(),
        Some("-32603")
    );
    let ok = spans.iter().filter(|s| s["name"] == "tools/call ok_tool");
    assert!(ok.clone().all(|s| s["status"].get("code").is_none()));
    assert_eq!(ok.count(), 597);

    // The signal's own endpoint variable is the whole URL, used as it is.
    let mut command = export_cmd(dir.path());
    command
        .arg(&journal)
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("{}/custom/traces", receiver.url),
        )
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
    let (status, _, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    let paths: Vec<String> = receiver.take().into_iter().map(|g| g.path).collect();
    assert_eq!(paths, ["/custom/traces", "/custom/traces"]);

    // A collector that takes the request but rejects spans says so.
    let rejecting = Receiver::start(
        200,
        r#"{"partialSuccess": {"rejectedSpans": "3", "errorMessage": "full"}}"#,
    );
    let mut command = export_cmd(dir.path());
    command.arg(&journal).args(["--otlp", &rejecting.url]);
    let (status, _, stderr) = run(command);
    assert_eq!(status, 2);
    assert!(stderr.contains("rejected 3 span(s): full"), "{stderr}");
}

/// A minimal RFC 4180 reader: quoted cells with doubled quotes, CRLF row ends.
fn read_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut cell) = (Vec::new(), Vec::new(), String::new());
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "a row ends in CRLF");
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    assert!(
        cell.is_empty() && row.is_empty() && !quoted,
        "the last row is complete"
    );
    rows
}

/// CSV of the proxied session: one row per call and compensation; of hostile tool names: each
/// cell reads back as written, a control character escaped, a formula neutralised by a leading
/// `'`.
#[test]
fn csv_rows_read_back_and_never_hold_a_formula() {
    let dir = tempfile::tempdir().unwrap();
    let journal = proxied_session(dir.path());
    let out = dir.path().join("calls.csv");
    let mut command = export_cmd(dir.path());
    command
        .arg(&journal)
        .args(["--format", "csv", "--output"])
        .arg(&out);
    let (status, stdout, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("6 rows written"), "{stdout}");
    let rows = read_csv(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(
        rows[0].join(","),
        "session,seq,time,kind,tool,class,decision,outcome,duration_ms,request,hash"
    );
    let summary: Vec<[&str; 4]> = rows[1..]
        .iter()
        .map(|r| [r[3].as_str(), r[4].as_str(), r[6].as_str(), r[7].as_str()])
        .collect();
    assert_eq!(
        summary,
        [
            ["call", "reserve_inventory", "allow by command", "ok"],
            ["call", "charge_payment", "", "ok"],
            ["call", "get_state", "deny by policy", "refused"],
            ["call", "create_shipment", "", "tool-error"],
            ["compensation", "refund_payment", "", "ok"],
            ["compensation", "release_inventory", "", "ok"],
        ]
    );
    let records = journal_records(&journal);
    for row in &rows[1..] {
        let seq: usize = row[1].parse().unwrap();
        let record = &records[seq - 1];
        assert_eq!(row[0], record["session"].as_str().unwrap());
        assert_eq!(row[2], record["time"].as_str().unwrap());
        assert_eq!(row[10], record["hash"].as_str().unwrap());
        if row[7] != "refused" {
            row[8].parse::<u64>().unwrap();
        }
    }

    let hostile = [
        "=HYPERLINK(\"http://x\",\"y\")",
        "+1",
        "-2",
        "@SUM(A1)",
        "\tx",
        "a,\"b\"\nc",
    ];
    let calls: Vec<(&str, Outcome)> = hostile.iter().map(|t| (*t, Outcome::Ok)).collect();
    let journal = synthetic(dir.path(), &calls);
    let mut command = export_cmd(dir.path());
    command.arg(&journal).args(["--format", "csv"]);
    let (status, stdout, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    let rows = read_csv(&stdout);
    let tools: Vec<&str> = rows[1..].iter().map(|r| r[4].as_str()).collect();
    assert_eq!(
        tools,
        [
            "'=HYPERLINK(\"http://x\",\"y\")",
            "'+1",
            "'-2",
            "'@SUM(A1)",
            "\\tx",
            "a,\"b\"\\nc"
        ]
    );
}

/// An edited record: export refuses, naming the line; `--unverified` exports with a warning.
#[test]
fn a_tampered_journal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let journal = synthetic(
        dir.path(),
        &[("charge", Outcome::Ok), ("ship", Outcome::Ok)],
    );
    let text = std::fs::read_to_string(&journal).unwrap();
    let tampered: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 3 {
                l.replace("\"n\":2", "\"n\":3")
            } else {
                l.to_owned()
            }
        })
        .collect();
    assert_ne!(tampered.join("\n") + "\n", text);
    std::fs::write(&journal, tampered.join("\n") + "\n").unwrap();
    let receiver = Receiver::start(200, "{}");
    for format in ["otlp", "csv"] {
        let mut command = export_cmd(dir.path());
        command.arg(&journal).args(["--format", format]);
        if format == "otlp" {
            command.args(["--otlp", &receiver.url]);
        }
        let (status, stdout, stderr) = run(command);
        assert_eq!(status, 1, "{format}: {stderr}");
        assert!(stdout.is_empty(), "{format}: {stdout}");
        assert!(stderr.contains("broken at line 4"), "{stderr}");
        assert!(stderr.contains("not exported"), "{stderr}");
    }
    assert!(receiver.take().is_empty(), "nothing was sent");
    let mut command = export_cmd(dir.path());
    command
        .arg(&journal)
        .args(["--otlp", &receiver.url, "--unverified"]);
    let (status, _, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("warning") && stderr.contains("line 4"),
        "{stderr}"
    );
    assert_eq!(spans_of(&receiver.take()[0].body).len(), 3);

    // A line that is no record at all: refused, or with --unverified left out and counted.
    std::fs::remove_file(&journal).unwrap();
    let journal = synthetic(
        dir.path(),
        &[("charge", Outcome::Ok), ("ship", Outcome::Ok)],
    );
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str("not a record\n");
    std::fs::write(&journal, text).unwrap();
    for (flag, expected) in [(None, 1), (Some("--unverified"), 0)] {
        let mut command = export_cmd(dir.path());
        command.arg(&journal).args(["--format", "csv"]).args(flag);
        let (status, stdout, stderr) = run(command);
        assert_eq!(status, expected, "{stderr}");
        assert!(stderr.contains("line 6"), "{stderr}");
        if flag.is_some() {
            assert!(stderr.contains("1 line(s) left out"), "{stderr}");
            assert_eq!(read_csv(&stdout).len(), 3, "the header and both calls");
        }
    }
}

/// A journal a keyed writer wrote with the journal library, in a directory of its own: a read,
/// then a charge a quorum approved (alice with a signed decision, bob on Slack), under the
/// session name `session`. Its checkpoints are kept in `kept/`. Gives the journal and the
/// public key file.
fn signed_quorum_journal(dir: &Path, session: &str, tool: &str) -> (PathBuf, PathBuf) {
    use mcp_recovery_journal::keys::{self, SecretKey};
    let path = dir.join("signed.jsonl");
    let key = dir.join("journal.key");
    keys::generate(&key).unwrap();
    std::fs::create_dir(dir.join("kept")).unwrap();
    let kept = dir.join("kept").join("checkpoints.jsonl");
    let mut journal = Journal::open(&path, 64 << 20).unwrap();
    journal.set_sync(false);
    journal.set_key(SecretKey::read(&key).unwrap());
    journal.set_checkpoint_sink(Box::new(move |line| {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&kept)
            .unwrap();
        writeln!(file, "{line}").unwrap();
    }));
    let mut append = |kind: Kind, fields: Value| {
        journal
            .append(session, kind, fields.as_object().unwrap().clone())
            .unwrap();
    };
    append(
        Kind::SessionStart,
        json!({"upstream": "test", "onFailure": "report", "version": "0"}),
    );
    let read = json!({"call": 1, "request": 2, "name": "get_state", "arguments": {},
                      "class": "read-only"});
    append(Kind::CallIntent, read.clone());
    let mut outcome = read;
    outcome["result"] = json!({"content": []});
    append(Kind::CallOutcome, outcome);
    let decisions = json!([
        {"approver": "alice", "via": "cli", "key": "0123456789abcdef",
         "statement": {"type": "mcp-recovery/decision"}, "signature": "00",
         "at": "2026-01-01T00:00:00Z"},
        {"approver": "bob", "via": "slack", "slackUser": "UBOB", "decision": "approve",
         "request": "ab", "at": "2026-01-01T00:00:01Z"}
    ]);
    append(
        Kind::Approval,
        json!({"name": tool, "request": 3, "arguments": {"amount": 5}, "decision": "allow",
               "by": "quorum", "rule": "[[approvals]] 'charge_*'", "reason": "approved by 2 of 3",
               "approvalRequest": "ab", "callDigest": "sha256:00",
               "quorum": {"need": 2, "of": ["alice", "bob", "carol"]}, "decisions": decisions}),
    );
    let charge = json!({"call": 2, "request": 3, "name": tool, "arguments": {"amount": 5},
                        "class": "compensable"});
    append(Kind::CallIntent, charge.clone());
    let mut outcome = charge;
    outcome["result"] = json!({"content": []});
    append(Kind::CallOutcome, outcome);
    (path, keys::public_path(&key))
}

/// `audit export --key` and `--checkpoints` verify as `audit verify` does: a journal rewritten
/// with every hash recomputed and its checkpoints left out, or cut back before a kept
/// checkpoint, is not exported (it would be without them, its chain being sound).
#[test]
fn export_verifies_checkpoints_like_audit_verify() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, public) = signed_quorum_journal(dir.path(), "s-1", "charge_payment");
    let kept = dir.path().join("kept");
    let export = |journal: &Path, flags: &[&str]| {
        let mut command = export_cmd(dir.path());
        command.arg(journal).args(["--format", "csv"]).args(flags);
        run(command)
    };
    let key = ["--key", public.to_str().unwrap()];
    let both = [&key[..], &["--checkpoints", kept.to_str().unwrap()]].concat();
    let (status, _, stderr) = export(&journal, &both);
    assert_eq!(status, 0, "{stderr}");

    // Rewritten without the key: the amount changed, the checkpoints left out.
    let text = std::fs::read_to_string(&journal).unwrap();
    let rewritten = dir.path().join("rewritten.jsonl");
    let mut forged = Journal::open(&rewritten, 64 << 20).unwrap();
    for mut record in mcp_recovery_journal::read_records(&text).unwrap() {
        if record["kind"] == "checkpoint" {
            continue;
        }
        if record.contains_key("arguments") && record["name"] == "charge_payment" {
            record["arguments"]["amount"] = json!(5000);
        }
        let kind = Kind::parse(record["kind"].as_str().unwrap()).unwrap();
        forged.append("s-1", kind, record).unwrap();
    }
    drop(forged);
    let (status, _, stderr) = export(&rewritten, &[]);
    assert_eq!(status, 0, "the chain alone holds: {stderr}");
    let (status, stdout, stderr) = export(&rewritten, &key);
    assert_eq!(status, 1, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("broken at line 1") && stderr.contains("not exported"),
        "{stderr}"
    );
    let (status, _, stderr) = export(&rewritten, &[&key[..], &["--unverified"]].concat());
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("exported unverified"), "{stderr}");

    // Cut back to an earlier checkpoint: signed still, but not what was kept.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, lines[..lines.len() - 2].concat()).unwrap();
    let (status, _, stderr) = export(&cut, &key);
    assert_eq!(status, 0, "{stderr}");
    let (status, _, stderr) = export(&cut, &both);
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("it was cut back"), "{stderr}");
}

/// Who approved a quorum call reaches both exports: every approver and key id (`slack:USER`
/// for a Slack decision) in the CSV `decision` cell and as the approval event's arrays.
#[test]
fn exports_name_every_approver_of_a_quorum() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, _) = signed_quorum_journal(dir.path(), "s-1", "charge_payment");
    let mut command = export_cmd(dir.path());
    command.arg(&journal).args(["--format", "csv"]);
    let (status, stdout, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    let rows = read_csv(&stdout);
    let charge = rows.iter().find(|r| r[4] == "charge_payment").unwrap();
    assert_eq!(
        charge[6],
        "allow by quorum: alice (0123456789abcdef), bob (slack:UBOB)"
    );

    let receiver = Receiver::start(200, "{}");
    let mut command = export_cmd(dir.path());
    command.arg(&journal).args(["--otlp", &receiver.url]);
    let (status, _, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    let spans: Vec<Value> = receiver
        .take()
        .iter()
        .flat_map(|g| spans_of(&g.body))
        .collect();
    let event = &named(&spans, "tools/call charge_payment")["events"][0];
    assert_eq!(event["name"], "mcp_recovery.approval");
    let values = |key: &str| -> Vec<String> {
        attributes(event)[key]["arrayValue"]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["stringValue"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(values("mcp_recovery.approval.approvers"), ["alice", "bob"]);
    assert_eq!(
        values("mcp_recovery.approval.key_ids"),
        ["0123456789abcdef", "slack:UBOB"]
    );
    assert_eq!(
        string_attr(event, "mcp_recovery.approval.by").as_deref(),
        Some("quorum")
    );
}

/// Session and tool names carrying terminal escapes, a bell, an OSC 8 hyperlink and
/// bidirectional overrides reach the CSV escaped, as everywhere else: no such character is
/// written raw.
#[test]
fn csv_cells_hold_no_control_or_bidirectional_character() {
    let dir = tempfile::tempdir().unwrap();
    let session = "s\u{1b}[31mRED\u{202e}evil\u{7}";
    let tool = "refund_\u{1b}]8;;http://x\u{7}charge\u{2066}";
    let (journal, _) = signed_quorum_journal(dir.path(), session, tool);
    let mut command = export_cmd(dir.path());
    command.arg(&journal).args(["--format", "csv"]);
    let (status, stdout, stderr) = run(command);
    assert_eq!(status, 0, "{stderr}");
    let raw: Vec<char> = stdout
        .replace("\r\n", "")
        .chars()
        .filter(|c| mcp_recovery_base::text::is_unsafe_char(*c))
        .collect();
    assert!(raw.is_empty(), "{raw:?} in {stdout:?}");
    let rows = read_csv(&stdout);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[2][0], "s\\u{1b}[31mRED\\u{202e}evil\\u{7}");
    assert_eq!(
        rows[2][4],
        "refund_\\u{1b}]8;;http://x\\u{7}charge\\u{2066}"
    );
}
