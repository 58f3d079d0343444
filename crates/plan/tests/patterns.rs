//! Pattern evaluation in a plan is bounded: each match stops at the backtracking limit and one
//! budget of pattern checks covers the whole plan, so a catastrophic `pattern` over many bindings
//! costs a bounded amount of work. Work is counted, never timed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_recovery_model::PATTERN_BUDGET;
use mcp_recovery_plan::{Planner, Status, load_tools, parse_trace};
use serde_json::{Value, json};

/// `charge` compensated by `refund`, whose `id` must match `pattern`; the binding copies the
/// charge's `id` argument.
fn tools(pattern: &str) -> Value {
    json!([
        {"name": "charge", "inputSchema": {"type": "object"},
         "annotations": {"recovery": {"strategy": "compensation",
             "compensatingOperation": {"operationId": "refund",
                 "parameters": {"id": "$request.body#/id"}}}}},
        {"name": "refund",
         "inputSchema": {"type": "object",
             "properties": {"id": {"type": "string", "pattern": pattern}},
             "required": ["id"]},
         "annotations": {"idempotentHint": true}}
    ])
}

/// `calls` successful `charge` calls with this `id`.
fn trace(calls: usize, id: &Value) -> String {
    let line = json!({"name": "charge", "arguments": {"id": id},
        "result": {"content": [{"type": "text", "text": "ok"}]}})
    .to_string();
    (0..calls).map(|_| format!("{line}\n")).collect()
}

#[test]
fn a_catastrophic_pattern_over_many_bindings_is_bounded() {
    let list = load_tools(&tools(r"^(a|a)*\1c$")).unwrap();
    let calls = PATTERN_BUDGET * 3;
    let trace = parse_trace(&trace(calls, &json!("a".repeat(40)))).unwrap();
    let mut planner = Planner::for_list(&list);
    let plan = planner.build_plan(&trace);
    assert_eq!(plan.steps.len(), calls);
    // Never more pattern checks than the budget, whatever the number of bindings.
    assert_eq!(planner.pattern_checks(), PATTERN_BUDGET);
    // Within the budget the match gives up and says so; past it the patterns are left out.
    let gave_up = plan
        .steps
        .iter()
        .filter(|s| s.reason.contains("too many backtracking steps"))
        .count();
    let spent = plan
        .steps
        .iter()
        .filter(|s| s.reason.contains("budget of 1000 pattern checks is spent"))
        .count();
    assert_eq!((gave_up, spent), (PATTERN_BUDGET, calls - PATTERN_BUDGET));
    assert!(
        plan.steps.iter().all(|s| s.status == Status::Compensate),
        "{plan:#?}"
    );
}

#[test]
fn patterns_still_judge_within_the_budget_and_other_constraints_past_it() {
    let list = load_tools(&tools("^[0-9]+$")).unwrap();
    let mut planner = Planner::for_list(&list);
    let plan = planner.build_plan(&parse_trace(&trace(2, &json!("12x"))).unwrap());
    assert!(
        plan.steps
            .iter()
            .all(|s| s.status == Status::Unavailable && s.reason.contains("does not match")),
        "{plan:#?}"
    );
    let plan = planner.build_plan(&parse_trace(&trace(1, &json!("123"))).unwrap());
    assert_eq!(plan.steps[0].status, Status::Compensate);
    assert_eq!(plan.steps[0].reason, "call 'refund' to undo 'charge'");
    assert_eq!(planner.pattern_checks(), 3);

    // Past the budget the value is not judged by its pattern, but still by its type.
    let calls = PATTERN_BUDGET + 2;
    let mut planner = Planner::for_list(&list);
    let plan = planner.build_plan(&parse_trace(&trace(calls, &json!("12x"))).unwrap());
    let unjudged = plan
        .steps
        .iter()
        .filter(|s| s.status == Status::Compensate)
        .count();
    assert_eq!(unjudged, 2, "past the budget only");
    let mut planner = Planner::for_list(&list);
    let plan = planner.build_plan(&parse_trace(&trace(calls, &json!(5))).unwrap());
    assert!(
        plan.steps.iter().all(|s| s.status == Status::Unavailable),
        "{plan:#?}"
    );
    assert!(plan.steps[0].reason.contains("is not of type"), "{plan:#?}");
}
