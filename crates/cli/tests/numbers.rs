//! Every number that comes in leaves as the same JSON text: `plan` (bound by value and inserted
//! by a template), `convert`, `lint`, and the journal read back for `rollback`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{codes, lint_json, run_in};
use mcp_recovery_journal::{Journal, Kind};
use mcp_recovery_model::{Carrier, convert_document, json};
use mcp_recovery_plan::{build_plan, load_tools, parse_session_calls, parse_trace};
use proptest::prelude::*;
use serde_json::Value;

/// A tool list whose `undo` compensator receives `n` by value and inside a template, and whose
/// `inputSchema` carries a number of its own.
fn tools(schema_number: &str) -> Value {
    json::from_str(&format!(
        r#"[{{"name": "act", "inputSchema": {{"type": "object", "properties": {{"n": {{"type": "number", "default": {schema_number}}}}}}},
            "annotations": {{"recovery": {{"strategy": "compensation", "compensatingOperation": {{
              "operationId": "undo",
              "parameters": {{"n": "$request.body#/n", "memo": "n={{$request.body#/n}};"}}}}}}}}}},
           {{"name": "undo", "inputSchema": {{"type": "object"}}, "annotations": {{"idempotentHint": true}}}}]"#
    ))
    .unwrap()
}

/// The compensating call's `n` and `memo` as JSON text.
fn planned(tools: &Value, trace: &[mcp_recovery_plan::TracedCall]) -> (String, String) {
    let plan = build_plan(&load_tools(tools).unwrap(), trace);
    // As the cli writes it: `to_value` would re-parse each number and respell its exponent.
    let plan = json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();
    let arguments = &plan["steps"][0]["call"]["arguments"];
    assert!(arguments.is_object(), "{plan}");
    (arguments["n"].to_string(), arguments["memo"].to_string())
}

/// JSON number texts: integers of any length, fractions, exponents with and without a sign in
/// either case, negative zero.
fn number_text() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop_oneof!["0", "[1-9][0-9]{0,40}"],
        proptest::option::of("[0-9]{1,20}"),
        proptest::option::of(("[eE]", prop_oneof!["", "\\+", "-"], "[0-9]{1,4}")),
    )
        .prop_map(|(negative, whole, fraction, exponent)| {
            let mut text = String::new();
            if negative {
                text.push('-');
            }
            text.push_str(&whole);
            if let Some(fraction) = fraction {
                text.push('.');
                text.push_str(&fraction);
            }
            if let Some((e, sign, digits)) = exponent {
                text.push_str(&e);
                text.push_str(&sign);
                text.push_str(&digits);
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn numbers_pass_through_plan_convert_and_the_journal(number in number_text()) {
        // plan: by value and in a template.
        let tools = tools(&number);
        let line = format!(r#"{{"name": "act", "arguments": {{"n": {number}}}, "result": {{"content": []}}}}"#);
        let trace = parse_trace(&line).unwrap();
        let (n, memo) = planned(&tools, &trace);
        prop_assert_eq!(&n, &number);
        prop_assert_eq!(memo, format!("\"n={number};\""));

        // convert: the rest of the document is carried as written.
        let converted = convert_document(&tools, Carrier::Compensate).unwrap();
        let text = converted.document.to_string();
        let needle = format!("\"default\":{number}}}");
        prop_assert!(text.contains(&needle), "{}", text);

        // The journal, read back the way rollback reads it.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut journal = Journal::open(&path, 1 << 20).unwrap();
        let outcome = json::from_str(&format!(
            r#"{{"call": 1, "name": "act", "arguments": {{"n": {number}}}, "result": {{"content": []}}}}"#
        ))
        .unwrap();
        journal
            .append("s-1", Kind::CallOutcome, outcome.as_object().unwrap().clone())
            .unwrap();
        let written = fs::read_to_string(&path).unwrap();
        let needle = format!("\"n\":{number}}}");
        prop_assert!(written.contains(&needle), "{}", written);
        prop_assert!(mcp_recovery_journal::verify(&written).broken.is_none());
        let calls: Vec<_> = parse_session_calls(&written, "s-1")
            .unwrap()
            .into_iter()
            .map(|(_, call)| call)
            .collect();
        let (n, _) = planned(&tools, &calls);
        prop_assert_eq!(n, number);
    }
}

const TOOLS: &str = r#"[{"name": "act", "inputSchema": {"type": "object"},
  "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
    "operationId": "undo",
    "parameters": {"n": "$request.body#/n", "memo": "at {$request.body#/n}"}}}}},
 {"name": "undo", "inputSchema": {"type": "object"}, "annotations": {"idempotentHint": true}}]"#;

/// `plan --format json` over a one-call trace with `arguments.n` written `number`.
fn plan_cli(number: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tools.json"), TOOLS).unwrap();
    fs::write(
        dir.path().join("trace.jsonl"),
        format!(
            r#"{{"name": "act", "arguments": {{"n": {number}}}, "result": {{"content": []}}}}"#
        ),
    )
    .unwrap();
    let output = run_in(
        dir.path(),
        &[
            "plan",
            "--format",
            "json",
            "--tools",
            "tools.json",
            "--trace",
            "trace.jsonl",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn plan_keeps_every_digit_of_a_big_integer() {
    let out = plan_cli("123456789012345678901234");
    assert!(out.contains(r#""n": 123456789012345678901234"#), "{out}");
    assert!(
        out.contains(r#""memo": "at 123456789012345678901234""#),
        "{out}"
    );
}

#[test]
fn plan_inserts_an_exponent_in_a_template_as_written() {
    let out = plan_cli("1e2");
    assert!(out.contains(r#""memo": "at 1e2""#), "{out}");
    assert!(out.contains(r#""n": 1e2"#), "{out}");
}

#[test]
fn plan_accepts_a_number_beyond_every_double() {
    let out = plan_cli("1e400");
    assert!(out.contains(r#""n": 1e400"#), "{out}");
    assert!(out.contains(r#""memo": "at 1e400""#), "{out}");
}

#[test]
fn lint_reads_numbers_of_any_spelling_as_numbers() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tools.json"),
        r#"{"tools": [{"name": "a", "inputSchema": {"type": "object", "properties": {"x": {"type": "number",
          "maximum": 1e400, "minimum": -0, "multipleOf": 1.50, "default": 1E2,
          "examples": [123456789012345678901234]}}}}]}"#,
    )
    .unwrap();
    let (_, report) = lint_json(dir.path(), &["tools.json"]);
    assert!(!codes(&report).iter().any(|c| c == "R001"), "{report}");
}

#[test]
fn convert_writes_numbers_as_read() {
    let dir = tempfile::tempdir().unwrap();
    let document = r#"[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"maximum":1e400,"minimum":-0,"default":1E2,"multipleOf":1.50,"const":123456789012345678901234}}}}]"#;
    fs::write(dir.path().join("tools.json"), document).unwrap();
    let output = run_in(dir.path(), &["convert", "--to", "compensate", "tools.json"]);
    let out = String::from_utf8_lossy(&output.stdout);
    for number in [
        r#""maximum": 1e400"#,
        r#""minimum": -0"#,
        r#""default": 1E2"#,
        r#""multipleOf": 1.50"#,
        r#""const": 123456789012345678901234"#,
    ] {
        assert!(out.contains(number), "{number}: {out}");
    }
}
