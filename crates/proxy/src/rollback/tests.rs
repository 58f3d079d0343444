//! Rollbacks against recorded effects: the plan followed, compensations gated and journaled.

use super::*;

/// Effects that record what was sent and journaled, answering every call with success
/// unless nothing can be sent.
#[derive(Default)]
struct Recorded {
    sent: Vec<String>,
    records: Vec<Map<String, Value>>,
    unsent: Option<String>,
}

impl Effects for Recorded {
    fn call_tool(&mut self, name: &str, _: &Map<String, Value>, _: Duration) -> Reply {
        self.sent.push(name.to_owned());
        Reply::Result(json!({"content": []}))
    }
    fn approve(&mut self, _: &Value) -> Verdict {
        Verdict {
            approved: false,
            by: "test",
            reason: "no approvals here".into(),
        }
    }
    fn journal(&mut self, kind: Kind, fields: Map<String, Value>) -> Result<(), JournalError> {
        let mut record = fields;
        record.insert("kind".into(), Value::from(kind.as_str()));
        record.insert("session".into(), Value::from("s"));
        self.records.push(record);
        Ok(())
    }
    fn unsent(&mut self) -> Option<String> {
        self.unsent.clone()
    }
}

fn tools(idempotent: bool) -> Vec<Tool> {
    let list = json!([
        {"name": "create_order", "inputSchema": {"type": "object"},
         "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
             "operationId": "cancel_order",
             "parameters": {"orderId": "$response.body#/orderId"}}}}},
        {"name": "cancel_order", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": false, "idempotentHint": idempotent}}
    ]);
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| Tool::from_json(t).unwrap())
        .collect()
}

fn calls() -> Vec<(Value, TracedCall)> {
    let call = json!({"name": "create_order", "arguments": {},
        "result": {"content": [], "structuredContent": {"orderId": "o-1"}}});
    vec![(json!(1), TracedCall::from_value(&call).unwrap())]
}

fn run(effects: &mut Recorded, idempotent: bool, prior: &HashMap<String, Prior>) -> Report {
    rollback(
        effects,
        &tools(idempotent),
        &Policy::default(),
        &calls(),
        prior,
        json!({"command": "test"}),
        Duration::from_secs(1),
        None,
    )
    .unwrap()
}

fn record(kind: Kind, extra: Value) -> Map<String, Value> {
    let mut record = map(extra);
    record.insert("kind".into(), Value::from(kind.as_str()));
    record.insert("session".into(), Value::from("s"));
    record.insert("call".into(), json!(1));
    record
}

/// A compensating tool the server did not list is never sent, whatever the policy says
/// about unlisted tools (its arguments cannot be checked against a schema the server never
/// gave): a skip naming it, needing attention.
#[test]
fn a_compensator_the_server_did_not_list_is_not_sent() {
    let listed: Vec<Tool> = tools(true)
        .into_iter()
        .filter(|t| t.name != "cancel_order")
        .collect();
    for unlisted in [None, Some(Action::Ask), Some(Action::Allow)] {
        let policy = Policy {
            unlisted_tools: unlisted,
            ..Policy::default()
        };
        let mut effects = Recorded::default();
        let report = rollback(
            &mut effects,
            &listed,
            &policy,
            &calls(),
            &HashMap::new(),
            json!({"command": "test"}),
            Duration::from_secs(1),
            None,
        )
        .unwrap();
        assert!(effects.sent.is_empty(), "{unlisted:?}");
        assert_eq!((report.compensated, report.skipped), (0, 1));
        assert_eq!(report.attention.len(), 1, "{report:?}");
        assert!(
            report.attention[0].contains("'cancel_order' is not in the tool list"),
            "{report:?}"
        );
        let skip = effects
            .records
            .iter()
            .find(|r| r["kind"] == "compensation.skip")
            .unwrap();
        assert_eq!(skip["status"], "unavailable");
    }
}

/// A compensation that could not be sent leaves no intent: the next run sends it.
#[test]
fn what_was_not_sent_is_sent_by_the_next_run() {
    let mut first = Recorded {
        unsent: Some("no answer within 2000 ms".into()),
        ..Recorded::default()
    };
    let report = run(&mut first, false, &HashMap::new());
    assert!(first.sent.is_empty());
    assert_eq!((report.compensated, report.skipped), (0, 1));
    assert!(report.attention[0].contains("was not sent"), "{report:?}");
    assert!(
        first
            .records
            .iter()
            .all(|r| r["kind"] != "compensation.intent")
    );
    let prior = prior_compensations(&first.records, "s");
    let mut second = Recorded::default();
    let report = run(&mut second, false, &prior);
    assert_eq!(second.sent, ["cancel_order"]);
    assert_eq!(report.compensated, 1);
    assert!(report.attention.is_empty());
}

/// Sent without an answer (no outcome, or a lost one): resent only to an idempotent
/// compensator, else reported; an answered one is never resent.
#[test]
fn an_unknown_outcome_is_resent_only_when_idempotent() {
    let intent = record(Kind::CompensationIntent, json!({"name": "cancel_order"}));
    let lost = record(
        Kind::CompensationOutcome,
        json!({"result": null, "reason": "the server exited"}),
    );
    let answered = record(
        Kind::CompensationOutcome,
        json!({"result": {"content": []}}),
    );
    for history in [vec![intent.clone()], vec![intent.clone(), lost]] {
        let prior = prior_compensations(&history, "s");
        let mut strict = Recorded::default();
        let report = run(&mut strict, false, &prior);
        assert!(strict.sent.is_empty());
        assert!(report.attention[0].contains("not idempotent"), "{report:?}");
        let mut idempotent = Recorded::default();
        let report = run(&mut idempotent, true, &prior);
        assert_eq!(idempotent.sent, ["cancel_order"]);
        assert_eq!(report.compensated, 1);
    }
    let prior = prior_compensations(&[intent, answered], "s");
    let mut again = Recorded::default();
    let report = run(&mut again, true, &prior);
    assert!(again.sent.is_empty());
    assert_eq!(report.already, 1);
}
