//! A record that had a secret replaced by `***` (`"redacted": true`, as the proxy's journal
//! writes it): a compensating argument read from it that holds `***` is never planned, whichever
//! binding read it and wherever in the value it sits; a `***` in an unmarked record is a value
//! like any other.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_recovery_plan::{Status, TraceLineError, build_plan, load_tools, parse_trace};
use serde_json::{Value, json};

fn tools() -> Value {
    json!([
        {"name": "charge_payment", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object"},
         "annotations": {"recovery": {"strategy": "compensation",
             "compensatingOperation": {"operationId": "refund_payment", "parameters": {
                 "transactionId": "$response.body#/transactionId",
                 "reason": "$request.body#/why",
                 "note": "$response.body#/note"}}}}},
        {"name": "refund_payment",
         "inputSchema": {"type": "object",
             "properties": {"transactionId": {"type": "string"}, "reason": {"type": "string"},
                            "note": {}},
             "required": ["transactionId"]}}
    ])
}

/// The one step for a charge with `why` as its argument and `structured` as its result, the
/// record marked redacted or not.
fn step(why: &str, structured: Value, redacted: Option<bool>) -> mcp_recovery_plan::Step {
    let mut line = json!({"name": "charge_payment", "arguments": {"why": why},
        "result": {"content": [], "structuredContent": structured}});
    if let Some(flag) = redacted {
        line["redacted"] = Value::Bool(flag);
    }
    let plan = build_plan(
        &load_tools(&tools()).unwrap(),
        &parse_trace(&format!("{line}\n")).unwrap(),
    );
    plan.steps.into_iter().next().unwrap()
}

#[test]
fn a_value_that_lost_a_secret_is_never_sent() {
    let note = json!({"by": "ops"});
    let cases = [
        // From the result, from the arguments, inside a member name of a whole object.
        (
            "refund",
            json!({"transactionId": "T-***", "note": note}),
            "transactionId",
        ),
        (
            "key *** expired",
            json!({"transactionId": "T-1", "note": note}),
            "reason",
        ),
        (
            "refund",
            json!({"transactionId": "T-1", "note": {"***": 1}}),
            "note",
        ),
    ];
    for (why, structured, parameter) in cases {
        let step = step(why, structured, Some(true));
        assert_eq!(step.status, Status::Unavailable, "{step:#?}");
        assert!(step.call.is_none());
        assert!(
            step.reason.starts_with(&format!(
                "parameter '{parameter}' would be sent with `***` in it"
            )),
            "{}",
            step.reason
        );
    }
}

#[test]
fn only_a_marked_record_and_only_the_values_sent_count() {
    // A marked record whose `***` is in nothing the compensation sends.
    let clean = json!({"transactionId": "T-1", "note": "fine", "token": "***"});
    // An unmarked record (or one marked false): `***` is what was sent.
    let literal = json!({"transactionId": "T-***", "note": "fine"});
    for (structured, redacted, id) in [
        (clean, Some(true), "T-1"),
        (literal.clone(), None, "T-***"),
        (literal, Some(false), "T-***"),
    ] {
        let step = step("refund", structured, redacted);
        assert_eq!(step.status, Status::Compensate, "{step:#?}");
        assert_eq!(step.call.unwrap().arguments["transactionId"], id);
    }
}

#[test]
fn the_mark_must_be_a_boolean() {
    let line = json!({"name": "t", "result": null, "redacted": "yes"});
    let error = parse_trace(&format!("{line}\n")).unwrap_err();
    assert_eq!(
        error.error,
        TraceLineError::RedactedNotABoolean { found: "string" }
    );
    assert_eq!(
        error.to_string(),
        "trace line 1: \"redacted\" must be a boolean, found string"
    );
}

/// A reader's pattern may stop short of a `***` and read part of a value as if it were whole:
/// no reader reads a marked record whose result holds one.
#[test]
fn a_reader_never_reads_a_record_that_lost_a_secret() {
    let overlay = r#"
[tools.start_job.result]
from = "text"
pattern = "Started job (?<job>[0-9a-f]+)"
schema = { type = "object", required = ["job"], properties.job = { type = "string" } }

[tools.start_job.annotations.recovery]
strategy = "compensation"
compensatingOperation = { operationId = "stop_job", parameters.job = "$response.body#/job" }
"#;
    let mut list = json!({"tools": [
        {"name": "start_job", "inputSchema": {"type": "object"}},
        {"name": "stop_job", "inputSchema": {"type": "object",
            "properties": {"job": {"type": "string"}}, "required": ["job"]}}
    ]});
    mcp_recovery_model::Overlay::parse(overlay, mcp_recovery_model::OverlayFormat::Toml)
        .unwrap()
        .apply(&mut list);
    let tools = load_tools(&list).unwrap();
    let plan = |text: &str, redacted: bool| {
        let line = json!({"name": "start_job", "arguments": {}, "redacted": redacted,
            "result": {"content": [{"type": "text", "text": text}]}});
        let plan = build_plan(&tools, &parse_trace(&format!("{line}\n")).unwrap());
        plan.steps.into_iter().next().unwrap()
    };
    let step = plan("Started job a7f3***", true);
    assert_eq!(step.status, Status::Unavailable, "{step:#?}");
    assert!(step.reason.contains("marked `redacted`"), "{}", step.reason);
    // Unmarked, the same text is read as written; marked, a text without `***` is too.
    for (text, redacted, job) in [
        ("Started job a7f3***", false, "a7f3"),
        ("Started job a7f3b2", true, "a7f3b2"),
    ] {
        let step = plan(text, redacted);
        assert_eq!(step.status, Status::Compensate, "{step:#?}");
        assert_eq!(step.call.unwrap().arguments["job"], job);
    }
}
