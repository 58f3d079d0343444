//! Plans built from small tool lists and traces: every status, every binding form, LIFO order,
//! both carriers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_recovery_plan::{
    Plan, PlannedCall, Status, Step, ToolList, build_plan, load_tools, parse_trace, resolve_step,
};
use serde_json::{Value, json};

fn tools(value: Value) -> ToolList {
    load_tools(&value).unwrap()
}

fn plan(tools_json: Value, trace: &str) -> Plan {
    build_plan(&tools(tools_json), &parse_trace(trace).unwrap())
}

fn line(name: &str, arguments: Value, result: Value) -> String {
    json!({"name": name, "arguments": arguments, "result": result}).to_string() + "\n"
}

fn ok(structured: Value) -> Value {
    json!({"content": [{"type": "text", "text": structured.to_string()}], "structuredContent": structured})
}

fn only_step(plan: &Plan) -> &Step {
    assert_eq!(plan.steps.len(), 1, "{plan:#?}");
    &plan.steps[0]
}

fn call(step: &Step) -> &PlannedCall {
    step.call
        .as_ref()
        .unwrap_or_else(|| panic!("no call: {step:#?}"))
}

/// `charge_payment` compensated by `refund_payment` (SEP-3172 carrier).
fn payments(parameters: Value) -> Value {
    json!([
        {"name": "charge_payment", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object"},
         "annotations": {"recovery": {"strategy": "compensation",
             "compensatingOperation": {"operationId": "refund_payment", "parameters": parameters}}}},
        {"name": "refund_payment",
         "inputSchema": {"type": "object",
             "properties": {"transactionId": {"type": "string"}, "reason": {"type": "string"},
                            "amount": {"type": "integer"}, "note": {}},
             "required": ["transactionId"]},
         "annotations": {"idempotentHint": true}}
    ])
}

/// The same declaration in the compensate carrier.
fn payments_compensate(mapping: Value) -> Value {
    let mut list = payments(json!({}));
    let charge = &mut list[0];
    charge.as_object_mut().unwrap().remove("annotations");
    charge["_meta"] = json!({"dev.chronomcp/compensate": {"reversibility": "compensable",
        "compensation": {"toolName": "refund_payment", "parameterMapping": mapping}}});
    list
}

#[test]
fn response_body_binding_compensates() {
    let p = plan(
        payments(json!({"transactionId": "$response.body#/transactionId"})),
        &line(
            "charge_payment",
            json!({"amount": 5}),
            ok(json!({"transactionId": "T-1"})),
        ),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Compensate);
    assert_eq!(call(step).name, "refund_payment");
    assert_eq!(
        Value::Object(call(step).arguments.clone()),
        json!({"transactionId": "T-1"})
    );
    assert_eq!(
        step.reason,
        "call 'refund_payment' to undo 'charge_payment'"
    );
}

#[test]
fn both_carriers_give_the_same_plan() {
    let sep = payments(
        json!({"transactionId": "$response.body#/transactionId", "amount": "$request.body#/cents"}),
    );
    let compensate = payments_compensate(
        json!({"transactionId": "$.output.structuredContent.transactionId", "amount": "$.input.cents"}),
    );
    let mut both = sep.clone();
    both[0]["_meta"] = payments_compensate(json!({
        "amount": "$.input.cents", "transactionId": "$['output']['structuredContent']['transactionId']"
    }))[0]["_meta"]
        .clone();
    let traces = [
        line(
            "charge_payment",
            json!({"cents": 500}),
            ok(json!({"transactionId": "T-9"})),
        ),
        line(
            "charge_payment",
            json!({"cents": 500}),
            ok(json!({"other": 1})),
        ),
        line(
            "charge_payment",
            json!({"cents": "500"}),
            ok(json!({"transactionId": "T-9"})),
        ),
        line(
            "charge_payment",
            json!({}),
            json!({"isError": true, "content": []}),
        ),
        line("charge_payment", json!({}), Value::Null),
    ];
    for trace in traces {
        let expected = plan(sep.clone(), &trace);
        for other in [&compensate, &both] {
            let got = plan(other.clone(), &trace);
            let strip = |p: &Plan| {
                p.steps
                    .iter()
                    .map(|s| (s.tool.clone(), s.status, s.call.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(strip(&got), strip(&expected), "{trace}");
            if expected.steps[0].status == Status::Compensate {
                assert_eq!(got, expected, "{trace}");
            }
        }
    }
}

#[test]
fn whole_body_spellings_agree_across_carriers() {
    let mut list = payments(
        json!({"note": "$response.body", "transactionId": "$response.body#/transactionId"}),
    );
    list[0]["_meta"] = payments_compensate(json!({
        "note": "$.output.structuredContent",
        "transactionId": "$.output.structuredContent.transactionId"
    }))[0]["_meta"]
        .clone();
    let p = plan(
        list,
        &line(
            "charge_payment",
            json!({}),
            ok(json!({"transactionId": "T-2"})),
        ),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Compensate, "{}", step.reason);
    assert_eq!(
        call(step).arguments["note"],
        json!({"transactionId": "T-2"})
    );
}

#[test]
fn carriers_that_disagree_make_the_step_unavailable() {
    let mut list = payments(json!({"transactionId": "$response.body#/transactionId"}));
    list[0]["_meta"] =
        payments_compensate(json!({"transactionId": "$.input.transactionId"}))[0]["_meta"].clone();
    let p = plan(
        list,
        &line(
            "charge_payment",
            json!({"transactionId": "X"}),
            ok(json!({"transactionId": "T-1"})),
        ),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Unavailable);
    assert!(
        step.reason.starts_with("carriers disagree"),
        "{}",
        step.reason
    );
    assert!(step.call.is_none());
}

#[test]
fn request_body_makes_move_file_its_own_inverse() {
    let list = json!([{
        "name": "move_file",
        "inputSchema": {"type": "object", "properties": {"source": {"type": "string"}, "destination": {"type": "string"}},
                        "required": ["source", "destination"], "additionalProperties": false},
        "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
            "operationId": "move_file",
            "parameters": {"source": "$request.body#/destination", "destination": "$request.body#/source"}}}}
    }]);
    let p = plan(
        list,
        &line(
            "move_file",
            json!({"source": "/a.txt", "destination": "/b.txt"}),
            json!({"content": []}),
        ),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Compensate, "{}", step.reason);
    assert_eq!(call(step).name, "move_file");
    assert_eq!(
        Value::Object(call(step).arguments.clone()),
        json!({"source": "/b.txt", "destination": "/a.txt"})
    );
}

#[test]
fn templates_insert_scalars_as_text() {
    let p = plan(
        payments(json!({
            "transactionId": "TX-{$response.body#/id}",
            "reason": "undo {$request.body#/order} x{$request.body#/qty} gift={$request.body#/gift}"
        })),
        &line(
            "charge_payment",
            json!({"order": "O-1", "qty": 3, "gift": false}),
            ok(json!({"id": 77})),
        ),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Compensate, "{}", step.reason);
    assert_eq!(
        Value::Object(call(step).arguments.clone()),
        json!({"transactionId": "TX-77", "reason": "undo O-1 x3 gift=false"})
    );
}

#[test]
fn templates_refuse_objects_arrays_and_null() {
    for value in [json!({"a": 1}), json!([1]), Value::Null] {
        let p = plan(
            payments(json!({"transactionId": "TX-{$response.body#/id}"})),
            &line("charge_payment", json!({}), ok(json!({"id": value}))),
        );
        let step = only_step(&p);
        assert_eq!(step.status, Status::Unavailable, "{value}");
        assert!(
            step.reason.contains("parameter 'transactionId'"),
            "{}",
            step.reason
        );
        assert!(
            step.reason.contains("\"TX-{$response.body#/id}\""),
            "{}",
            step.reason
        );
        assert!(
            step.reason.contains("a template inserts only"),
            "{}",
            step.reason
        );
    }
}

#[test]
fn constants_pass_as_they_are() {
    let p = plan(
        payments(
            json!({"transactionId": "$response.body#/id", "reason": "rollback", "amount": 0, "note": {"by": ["saga"]}}),
        ),
        &line("charge_payment", json!({}), ok(json!({"id": "T"}))),
    );
    let step = only_step(&p);
    assert_eq!(
        Value::Object(call(step).arguments.clone()),
        json!({"transactionId": "T", "reason": "rollback", "amount": 0, "note": {"by": ["saga"]}})
    );
}

#[test]
fn one_unresolvable_binding_means_no_call_and_every_failure_is_named() {
    let p = plan(
        payments(json!({
            "transactionId": "$response.body#/transactionId",
            "reason": "$request.header.X-Reason",
            "amount": "$request.body#/amount"
        })),
        &line(
            "charge_payment",
            json!({"amount": 5}),
            json!({"content": [{"type": "text", "text": "{\"transactionId\":\"T\"}"}]}),
        ),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Unavailable);
    assert!(step.call.is_none());
    assert!(
        step.reason
            .contains("parameter 'transactionId' bound to \"$response.body#/transactionId\"")
            && step.reason.contains("text content is never parsed"),
        "{}",
        step.reason
    );
    assert!(
        step.reason
            .contains("parameter 'reason' bound to \"$request.header.X-Reason\""),
        "{}",
        step.reason
    );
    assert!(!step.reason.contains("'amount'"), "{}", step.reason);
}

#[test]
fn sources_without_mcp_meaning_are_unavailable() {
    for expression in [
        "$url",
        "$method",
        "$statusCode",
        "$response.header.Location",
        "$request.query.id",
        "$request.path.id",
    ] {
        let p = plan(
            payments(json!({"transactionId": expression})),
            &line("charge_payment", json!({"id": "x"}), ok(json!({"id": "x"}))),
        );
        let step = only_step(&p);
        assert_eq!(step.status, Status::Unavailable, "{expression}");
        assert!(step.reason.contains("no meaning in MCP"), "{}", step.reason);
    }
}

#[test]
fn malformed_bindings_are_unavailable() {
    let p = plan(
        payments(json!({"transactionId": "$response.bdy#/id"})),
        &line("charge_payment", json!({}), ok(json!({"id": "x"}))),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Unavailable);
    assert!(step.reason.contains("malformed binding"), "{}", step.reason);

    let p = plan(
        payments_compensate(json!({"transactionId": "$.output.content[0].text"})),
        &line("charge_payment", json!({}), ok(json!({"id": "x"}))),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Unavailable);
    assert!(step.reason.contains("invalid JSONPath"), "{}", step.reason);
}

#[test]
fn arguments_must_satisfy_the_compensators_input_schema() {
    let p = plan(
        payments(json!({"transactionId": "$response.body#/id"})),
        &line("charge_payment", json!({}), ok(json!({"id": 12345}))),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Unavailable);
    assert!(
        step.reason.contains("inputSchema of 'refund_payment'"),
        "{}",
        step.reason
    );
    assert!(step.reason.contains("/transactionId"), "{}", step.reason);

    // A constant that breaks the schema is just as unavailable.
    let p = plan(
        payments(json!({"transactionId": "$response.body#/id", "amount": "all"})),
        &line("charge_payment", json!({}), ok(json!({"id": "T"}))),
    );
    assert_eq!(only_step(&p).status, Status::Unavailable);
}

#[test]
fn the_schema_draft_comes_from_dollar_schema() {
    let mut list =
        payments(json!({"transactionId": "$response.body#/id", "note": "$response.body#/ids"}));
    list[1]["inputSchema"] = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"note": {"items": [{"type": "string"}], "additionalItems": false}}
    });
    let trace = line(
        "charge_payment",
        json!({}),
        ok(json!({"id": "T", "ids": ["a", "b"]})),
    );
    assert_eq!(
        only_step(&plan(list.clone(), &trace)).status,
        Status::Unavailable
    );
    let trace = line(
        "charge_payment",
        json!({}),
        ok(json!({"id": "T", "ids": ["a"]})),
    );
    assert_eq!(only_step(&plan(list, &trace)).status, Status::Compensate);
}

#[test]
fn remote_references_are_never_fetched() {
    let mut list = payments(json!({"transactionId": "$response.body#/id"}));
    list[1]["inputSchema"] = json!({"type": "object", "properties": {"transactionId": {"$ref": "https://example.invalid/id.json"}}});
    let step = resolve_step(
        &tools(list),
        &parse_trace(&line("charge_payment", json!({}), ok(json!({"id": "T"})))).unwrap()[0],
    );
    assert_eq!(step.status, Status::Unavailable);
    assert!(step.reason.contains("inputSchema"), "{}", step.reason);
}

#[test]
fn missing_compensator_is_unavailable() {
    let mut list = payments(json!({"transactionId": "$response.body#/id"}));
    list.as_array_mut().unwrap().pop();
    let p = plan(
        list,
        &line("charge_payment", json!({}), ok(json!({"id": "T"}))),
    );
    let step = only_step(&p);
    assert_eq!(step.status, Status::Unavailable);
    assert_eq!(
        step.reason,
        "the compensating tool 'refund_payment' is not in the tool list"
    );
}

#[test]
fn outcome_statuses_come_first() {
    // Even a tool the list does not know is reported by its outcome first.
    let trace = line("ghost", json!({}), Value::Null)
        + &line("ghost", json!({}), json!({"isError": true, "content": []}))
        + &line("ghost", json!({}), json!({"content": []}));
    let p = plan(json!([]), &trace);
    let statuses: Vec<Status> = p.steps.iter().map(|s| s.status).collect();
    assert_eq!(
        statuses,
        [Status::NotDeclared, Status::Failed, Status::UnknownOutcome]
    );
    assert_eq!(p.steps[0].reason, "'ghost' is not in the tool list");
}

#[test]
fn declarations_and_hints() {
    let list = json!([
        {"name": "get_order", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
        {"name": "list_items", "inputSchema": {"type": "object"},
         "_meta": {"dev.chronomcp/compensate": {"reversibility": "readonly"}}},
        {"name": "send_email", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false},
         "_meta": {"dev.chronomcp/compensate": {"reversibility": "irreversible", "notes": "mail cannot be recalled"}}},
        {"name": "touch", "inputSchema": {"type": "object"}},
        {"name": "odd", "inputSchema": {"type": "object"},
         "annotations": {"recovery": {"strategy": "manual-only", "compensatingOperation": {"operationId": "x", "parameters": {}}}}},
        {"name": "half", "inputSchema": {"type": "object"},
         "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable"}}},
        {"name": "audit", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true,
         "recovery": {"strategy": "compensation", "compensatingOperation": {"operationId": "unaudit", "parameters": {"id": "$request.body#/id"}}}}},
        {"name": "unaudit", "inputSchema": {"type": "object"}}
    ]);
    let names = [
        "get_order",
        "list_items",
        "send_email",
        "touch",
        "odd",
        "half",
        "audit",
    ];
    let trace: String = names
        .iter()
        .map(|n| line(n, json!({"id": 1}), json!({"content": []})))
        .collect();
    let p = plan(list, &trace);
    let got: Vec<(&str, Status)> = p
        .steps
        .iter()
        .map(|s| (s.tool.as_str(), s.status))
        .collect();
    assert_eq!(
        got,
        [
            ("audit", Status::Compensate),
            ("half", Status::Unavailable),
            ("odd", Status::NotDeclared),
            ("touch", Status::NotDeclared),
            ("send_email", Status::Irreversible),
            ("list_items", Status::ReadOnly),
            ("get_order", Status::ReadOnly),
        ]
    );
    assert!(
        p.steps[2].reason.contains("strategy 'manual-only'"),
        "{}",
        p.steps[2].reason
    );
    assert!(
        p.steps
            .iter()
            .all(|s| (s.status == Status::Compensate) == s.call.is_some())
    );
}

#[test]
fn steps_run_in_reverse_completion_order() {
    let list = json!([
        {"name": "reserve", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
         "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
             "operationId": "release", "parameters": {"reservationId": "$response.body#/reservationId"}}}}},
        {"name": "release", "inputSchema": {"type": "object", "properties": {"reservationId": {"type": "string"}}}}
    ]);
    let trace = line(
        "reserve",
        json!({"sku": "A"}),
        ok(json!({"reservationId": "R-1"})),
    ) + &line(
        "reserve",
        json!({"sku": "B"}),
        ok(json!({"reservationId": "R-2"})),
    ) + &line(
        "reserve",
        json!({"sku": "C"}),
        ok(json!({"reservationId": "R-3"})),
    );
    let p = plan(list, &trace);
    let ids: Vec<&Value> = p.calls().map(|c| &c.arguments["reservationId"]).collect();
    assert_eq!(ids, [&json!("R-3"), &json!("R-2"), &json!("R-1")]);
}

#[test]
fn plan_json_contract() {
    let p = plan(
        payments(json!({"transactionId": "$response.body#/transactionId"})),
        &(line(
            "charge_payment",
            json!({}),
            ok(json!({"transactionId": "T-1"})),
        ) + &line("ship", json!({}), Value::Null)),
    );
    let value = serde_json::to_value(&p).unwrap();
    assert_eq!(
        value,
        json!({"steps": [
            {"tool": "ship", "status": "unknown-outcome", "call": null,
             "reason": "no result was recorded: the call may or may not have taken effect, so it is not compensated automatically"},
            {"tool": "charge_payment", "status": "compensate",
             "call": {"name": "refund_payment", "arguments": {"transactionId": "T-1"}},
             "reason": "call 'refund_payment' to undo 'charge_payment'"}
        ]})
    );
    let back: Plan = serde_json::from_value(value).unwrap();
    assert_eq!(back, p);
}

#[test]
fn table_for_humans() {
    let list = json!([
        {"name": "charge_payment", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
         "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
             "operationId": "refund_payment", "parameters": {"transactionId": "$response.body#/transactionId"}}}}},
        {"name": "refund_payment", "inputSchema": {"type": "object"}},
        {"name": "send_email", "inputSchema": {"type": "object"},
         "_meta": {"dev.chronomcp/compensate": {"reversibility": "irreversible"}}},
        {"name": "get_cart", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}
    ]);
    let trace = line("get_cart", json!({}), ok(json!({"items": 2})))
        + &line(
            "charge_payment",
            json!({"amount": 10}),
            ok(json!({"transactionId": "T-1"})),
        )
        + &line(
            "send_email",
            json!({"to": "a@example.com"}),
            json!({"content": []}),
        )
        + &line(
            "ship_order",
            json!({}),
            json!({"isError": true, "content": []}),
        );
    let p = plan(list, &trace);
    insta::assert_snapshot!(p.render_table());
    let styled = p.render_table_with(|status, cell| format!("<{status}>{cell}</>"));
    assert!(styled.contains("<failed>failed        </>"), "{styled}");
    assert_eq!(
        Plan::default().render_table(),
        "the trace has no calls: nothing to compensate\n"
    );
}

#[test]
fn control_characters_never_reach_the_table() {
    let p = plan(
        json!([]),
        &line("evil\u{1b}[31m\nname", json!({}), Value::Null),
    );
    let table = p.render_table();
    assert!(!table.contains('\u{1b}'));
    assert_eq!(table.lines().count(), 2, "{table}");
}

#[test]
fn hostile_input_schemas_make_the_step_unavailable_without_panicking() {
    let schemas = [
        json!({"$schema": "https://example.invalid/custom-meta", "type": "object"}),
        json!({"type": "object", "properties": {"transactionId": {"pattern": "(?<"}}}),
        json!({"type": "object", "properties": {"transactionId": {"$ref": "#/$defs/missing"}}}),
        json!({"type": "object", "properties": {"transactionId": {"type": "colour"}}}),
        json!(false),
        json!("object"),
    ];
    for schema in schemas {
        let mut list = payments(json!({"transactionId": "$response.body#/id"}));
        list[1]["inputSchema"] = schema.clone();
        let p = plan(
            list,
            &line("charge_payment", json!({}), ok(json!({"id": "T"}))),
        );
        let step = only_step(&p);
        assert_eq!(
            step.status,
            Status::Unavailable,
            "{schema}: {}",
            step.reason
        );
        assert!(
            step.reason.contains("inputSchema"),
            "{schema}: {}",
            step.reason
        );
    }
    // A recursive local reference is fine: it compiles and validates.
    let mut list = payments(json!({"transactionId": "$response.body#/id"}));
    list[1]["inputSchema"] = json!({"type": "object", "properties": {"transactionId": {"type": "string"}, "child": {"$ref": "#"}}});
    let p = plan(
        list,
        &line("charge_payment", json!({}), ok(json!({"id": "T"}))),
    );
    assert_eq!(
        only_step(&p).status,
        Status::Compensate,
        "{}",
        only_step(&p).reason
    );
}
