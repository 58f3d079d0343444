//! Sessions as OpenTelemetry spans in the OTLP/JSON encoding (`ExportTraceServiceRequest`).
//!
//! One trace per session: a root span for the session, one span per tool call and per
//! compensation (`tools/call {tool}`, the MCP and GenAI tool-execution conventions), one per
//! rollback with its compensations as children, each compensation linked to the call it undoes,
//! approvals as events of what they decided. Every id is taken from a record hash, so exporting
//! the same journal again gives the same ids.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::model::{Approval, Op, OpKind, Outcome, Place, Rollback, Session};

/// `SPAN_KIND_INTERNAL`.
const INTERNAL: u8 = 1;
/// `SPAN_KIND_CLIENT`: the proxy calls the server.
const CLIENT: u8 = 3;
/// `STATUS_CODE_ERROR`.
const ERROR: u8 = 2;

/// Hands the spans of every session to `out`, one at a time in journal order (so that only a
/// batch is ever held), stopping at its first error.
pub fn each_span<E>(
    sessions: &[Session],
    mut out: impl FnMut(Value) -> Result<(), E>,
) -> Result<(), E> {
    for session in sessions {
        session_spans(session, &mut out)?;
    }
    Ok(())
}

/// One request body carrying `spans`.
pub fn request(spans: Vec<Value>) -> Value {
    let resource = object([(
        "attributes",
        Value::Array(vec![
            attribute("service.name", text("mcp-recovery")),
            attribute("service.version", text(env!("CARGO_PKG_VERSION"))),
        ]),
    )]);
    let scope = object([
        ("name", string("mcp-recovery")),
        ("version", string(env!("CARGO_PKG_VERSION"))),
    ]);
    let scope_spans = object([("scope", scope), ("spans", Value::Array(spans))]);
    let resource_spans = object([
        ("resource", resource),
        ("scopeSpans", Value::Array(vec![scope_spans])),
    ]);
    object([("resourceSpans", Value::Array(vec![resource_spans]))])
}

/// The trace id of a session: from the hash of its first record.
pub fn trace_id(session: &Session) -> String {
    session.first.hash[..32].to_owned()
}

/// The span id of the span a record starts.
fn span_id(place: &Place) -> String {
    place.hash[..16].to_owned()
}

/// The session's root span id (the second quarter of its first record's hash, so that a first
/// record which also starts a call gives the two spans different ids).
fn root_id(session: &Session) -> String {
    session.first.hash[16..32].to_owned()
}

fn session_spans<E>(
    session: &Session,
    out: &mut impl FnMut(Value) -> Result<(), E>,
) -> Result<(), E> {
    let trace = trace_id(session);
    let root = root_id(session);
    let mut attributes = vec![
        attribute("mcp.session.id", text(&session.id)),
        attribute("mcp_recovery.journal.seq", int(session.first.seq)),
        attribute("mcp_recovery.record.hash", text(&session.first.hash)),
    ];
    attributes.push(attribute("mcp_recovery.calls", int(call_count(session))));
    out(span(SpanParts {
        trace: &trace,
        id: &root,
        parent: None,
        name: "mcp-recovery session".into(),
        kind: INTERNAL,
        start: session.first.time,
        end: session.last,
        attributes,
        events: session.approvals.iter().map(approval_event).collect(),
        links: Vec::new(),
        failure: None,
    }))?;
    let rollback_ids: Vec<String> = session
        .rollbacks
        .iter()
        .map(|r| span_id(&r.start))
        .collect();
    for (rollback, id) in session.rollbacks.iter().zip(&rollback_ids) {
        out(rollback_span(session, rollback, &trace, id, &root))?;
    }
    let mut calls: HashMap<&str, String> = HashMap::new();
    for op in &session.ops {
        if op.kind == OpKind::Call
            && let Some(call) = &op.call
        {
            calls.insert(call, span_id(&op.start));
        }
    }
    for op in &session.ops {
        let parent = op
            .rollback
            .and_then(|r| rollback_ids.get(r))
            .unwrap_or(&root);
        let link = match (op.kind, &op.call) {
            (OpKind::Compensation, Some(call)) => calls.get(call.as_str()),
            _ => None,
        };
        out(op_span(session, op, &trace, parent, link))?;
    }
    Ok(())
}

fn call_count(session: &Session) -> u64 {
    session
        .ops
        .iter()
        .filter(|op| op.kind == OpKind::Call)
        .count() as u64
}

fn rollback_span(
    session: &Session,
    rollback: &Rollback,
    trace: &str,
    id: &str,
    root: &str,
) -> Value {
    let mut attributes = vec![
        attribute("mcp.session.id", text(&session.id)),
        attribute("mcp_recovery.journal.seq", int(rollback.start.seq)),
        attribute("mcp_recovery.record.hash", text(&rollback.start.hash)),
    ];
    for (name, count) in &rollback.counts {
        attributes.push(attribute(
            &format!("mcp_recovery.rollback.{name}"),
            int_text(count),
        ));
    }
    let mut events: Vec<Value> = rollback.approvals.iter().map(approval_event).collect();
    for (place, details) in &rollback.skips {
        let mut attributes = vec![attribute("mcp_recovery.journal.seq", int(place.seq))];
        for (name, value) in details {
            attributes.push(attribute(&format!("mcp_recovery.skip.{name}"), text(value)));
        }
        events.push(event(
            "mcp_recovery.compensation.skip",
            place.time,
            attributes,
        ));
    }
    span(SpanParts {
        trace,
        id,
        parent: Some(root),
        name: "mcp-recovery rollback".into(),
        kind: INTERNAL,
        start: rollback.start.time,
        end: rollback.end.as_ref().map_or(rollback.last, |p| p.time),
        attributes,
        events,
        links: Vec::new(),
        failure: rollback.failure(),
    })
}

fn op_span(session: &Session, op: &Op, trace: &str, parent: &str, link: Option<&String>) -> Value {
    let mut attributes = vec![
        attribute("mcp.method.name", text("tools/call")),
        attribute("mcp.session.id", text(&session.id)),
        attribute("gen_ai.operation.name", text("execute_tool")),
        attribute("gen_ai.tool.name", text(&op.tool)),
    ];
    if let Some(request) = &op.request {
        attributes.push(attribute("jsonrpc.request.id", text(request)));
    }
    if let Some(transport) = session.transport {
        attributes.push(attribute("network.transport", text(transport)));
    }
    if let Some(error_type) = op.outcome.error_type() {
        attributes.push(attribute("error.type", text(&error_type)));
    }
    if let Outcome::RpcError(code) = &op.outcome
        && !code.is_empty()
    {
        attributes.push(attribute("rpc.response.status_code", text(code)));
    }
    let kind = match op.kind {
        OpKind::Call => "call",
        OpKind::Compensation => "compensation",
    };
    attributes.push(attribute("mcp_recovery.kind", text(kind)));
    attributes.push(attribute("mcp_recovery.outcome", text(&op.outcome.label())));
    if let Some(class) = &op.class {
        attributes.push(attribute("mcp_recovery.class", text(class)));
    }
    if let Some(call) = &op.call {
        attributes.push(attribute("mcp_recovery.call", int_text(call)));
    }
    if let Some(undoes) = &op.undoes {
        attributes.push(attribute("mcp_recovery.compensation.undoes", text(undoes)));
    }
    if let Some(attempt) = &op.attempt {
        attributes.push(attribute(
            "mcp_recovery.compensation.attempt",
            int_text(attempt),
        ));
    }
    if let Some(part) = &op.part {
        attributes.push(attribute("mcp_recovery.compensation.part", int_text(part)));
    }
    attributes.push(attribute("mcp_recovery.journal.seq", int(op.start.seq)));
    attributes.push(attribute("mcp_recovery.record.hash", text(&op.start.hash)));
    if let Some(end) = &op.end {
        attributes.push(attribute("mcp_recovery.outcome.seq", int(end.seq)));
        attributes.push(attribute("mcp_recovery.outcome.hash", text(&end.hash)));
    }
    for (name, body) in [("arguments", &op.arguments), ("result", &op.result)] {
        if let Some(body) = body {
            attributes.push(attribute(
                &format!("mcp_recovery.{name}.size"),
                int(body.size),
            ));
            attributes.push(attribute(
                &format!("mcp_recovery.{name}.sha256"),
                text(&body.sha256),
            ));
        }
    }
    let links = link
        .map(|call| {
            vec![object([
                ("traceId", string(trace)),
                ("spanId", string(call)),
                (
                    "attributes",
                    Value::Array(vec![attribute("mcp_recovery.link", text("compensates"))]),
                ),
            ])]
        })
        .unwrap_or_default();
    span(SpanParts {
        trace,
        id: &span_id(&op.start),
        parent: Some(parent),
        name: format!("tools/call {}", op.tool),
        kind: CLIENT,
        start: op.start.time,
        end: op.end.as_ref().map_or(op.start.time, |p| p.time),
        attributes,
        events: op.approvals.iter().map(approval_event).collect(),
        links,
        failure: op.outcome.failure(),
    })
}

fn approval_event(approval: &Approval) -> Value {
    let mut attributes = vec![
        attribute("mcp_recovery.approval.decision", text(&approval.decision)),
        attribute("mcp_recovery.journal.seq", int(approval.place.seq)),
        attribute("mcp_recovery.record.hash", text(&approval.place.hash)),
    ];
    for (name, value) in &approval.details {
        attributes.push(attribute(
            &format!("mcp_recovery.approval.{name}"),
            text(value),
        ));
    }
    if !approval.deciders.is_empty() {
        let list = |values: Vec<&String>| {
            object([(
                "arrayValue",
                object([(
                    "values",
                    Value::Array(values.into_iter().map(|v| text(v)).collect()),
                )]),
            )])
        };
        let (names, ids): (Vec<&String>, Vec<&String>) =
            approval.deciders.iter().map(|(n, k)| (n, k)).unzip();
        attributes.push(attribute("mcp_recovery.approval.approvers", list(names)));
        attributes.push(attribute("mcp_recovery.approval.key_ids", list(ids)));
    }
    event("mcp_recovery.approval", approval.place.time, attributes)
}

struct SpanParts<'a> {
    trace: &'a str,
    id: &'a str,
    parent: Option<&'a str>,
    name: String,
    kind: u8,
    start: u64,
    end: u64,
    attributes: Vec<Value>,
    events: Vec<Value>,
    links: Vec<Value>,
    failure: Option<String>,
}

fn span(parts: SpanParts<'_>) -> Value {
    let mut span = Map::new();
    span.insert("traceId".into(), string(parts.trace));
    span.insert("spanId".into(), string(parts.id));
    if let Some(parent) = parts.parent {
        span.insert("parentSpanId".into(), string(parent));
    }
    span.insert("name".into(), Value::String(parts.name));
    span.insert("kind".into(), Value::from(parts.kind));
    span.insert(
        "startTimeUnixNano".into(),
        Value::String(parts.start.to_string()),
    );
    span.insert(
        "endTimeUnixNano".into(),
        Value::String(parts.end.max(parts.start).to_string()),
    );
    span.insert("attributes".into(), Value::Array(parts.attributes));
    if !parts.events.is_empty() {
        span.insert("events".into(), Value::Array(parts.events));
    }
    if !parts.links.is_empty() {
        span.insert("links".into(), Value::Array(parts.links));
    }
    // A success leaves the status unset, as the conventions ask of instrumentations.
    let status = match parts.failure {
        Some(message) => object([
            ("code", Value::from(ERROR)),
            ("message", Value::String(message)),
        ]),
        None => Value::Object(Map::new()),
    };
    span.insert("status".into(), status);
    Value::Object(span)
}

fn event(name: &str, time: u64, attributes: Vec<Value>) -> Value {
    object([
        ("timeUnixNano", Value::String(time.to_string())),
        ("name", string(name)),
        ("attributes", Value::Array(attributes)),
    ])
}

fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

fn attribute(key: &str, value: Value) -> Value {
    object([("key", string(key)), ("value", value)])
}

fn string(value: &str) -> Value {
    Value::String(value.to_owned())
}

/// A string `AnyValue`.
fn text(value: &str) -> Value {
    object([("stringValue", Value::String(value.to_owned()))])
}

/// An integer `AnyValue` (int64 is a string in the JSON mapping).
fn int(value: u64) -> Value {
    object([("intValue", Value::String(value.to_string()))])
}

/// An integer `AnyValue` from a journal number's text; a number that is not an int64 stays a
/// string value, keeping its text.
fn int_text(value: &str) -> Value {
    if value.parse::<i64>().is_ok() {
        object([("intValue", Value::String(value.to_owned()))])
    } else {
        text(value)
    }
}
