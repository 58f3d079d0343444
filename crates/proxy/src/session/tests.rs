//! The session's stages one by one, on their pure parts: argument checks, the unlisted
//! reading of a name, the gate's decision and records, the journal's records, what a rollback
//! keeps of a call and what the client is told about one.

use mcp_recovery_model::Tool;
use mcp_recovery_plan::TracedCall;
use serde_json::{Map, Value, json};

use super::call::call_arguments;
use super::classify::unlisted;
use super::gate::{Gated, approval_record, decide, denial};
use super::journal::{compact, intent_base, intent_record};
use super::rollback::tell;
use super::state::CallContext;
use crate::approval::Verdict;
use crate::classify::{Class, Classification, Source};
use crate::policy::{Action, Decision, Policy};
use crate::wire::members;

fn tools(names: &[&str]) -> Vec<Tool> {
    names
        .iter()
        .map(|name| Tool::from_json(&json!({"name": name, "inputSchema": {"type": "object"}})))
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn call_arguments_need_a_string_name_and_an_object() {
    let call = |params: Value| call_arguments(&json!({"id": 1, "params": params}));
    let (name, arguments) = call(json!({"name": "a", "arguments": {"x": 1}})).unwrap();
    assert_eq!((name.as_str(), arguments.len()), ("a", 1));
    assert!(
        call(json!({"name": "a", "arguments": null}))
            .unwrap()
            .1
            .is_empty()
    );
    assert!(call(json!({"name": "a"})).unwrap().1.is_empty());
    assert_eq!(
        call(json!({"name": 7})).unwrap_err(),
        "tools/call needs a string \"name\""
    );
    assert_eq!(
        call(json!({"name": "a", "arguments": [1]})).unwrap_err(),
        "tools/call \"arguments\" must be an object"
    );
}

#[test]
fn a_name_the_server_does_not_list_is_unlisted_and_its_look_alike_named() {
    let listed = tools(&["delete_file", "read_file"]);
    assert_eq!(unlisted(&listed, "read_file"), None);
    assert_eq!(
        unlisted(&listed, "DELETE_FILE").unwrap(),
        "'DELETE_FILE' is not in the server's tools/list; it looks like the listed 'delete_file'"
    );
    assert_eq!(
        unlisted(&listed, "nope\u{1b}").unwrap(),
        "'nope\\u{1b}' is not in the server's tools/list"
    );
}

#[test]
fn an_unlisted_tool_gets_the_stricter_of_the_two_actions() {
    let allow_all = Policy {
        allow: vec!["*".into()],
        ..Policy::default()
    };
    let listed = decide(&allow_all, "x", Class::Unknown, None);
    assert_eq!(listed.decision.action, Action::Allow);
    assert_eq!(listed.decision.rule, "--allow '*'");
    let unknown = decide(&allow_all, "x", Class::Unknown, Some("why".into()));
    assert_eq!(unknown.decision.action, Action::Deny);
    assert_eq!(unknown.decision.rule, "unlisted-tools");
    // A stricter decision than the unlisted action stays.
    let ask_unlisted = Policy {
        deny: vec!["x".into()],
        unlisted_tools: Some(Action::Ask),
        ..Policy::default()
    };
    let denied = decide(&ask_unlisted, "x", Class::ReadOnly, Some("why".into()));
    assert_eq!(denied.decision.rule, "--deny 'x'");
}

#[test]
fn a_denial_says_which_rule_and_why_the_tool_is_unlisted() {
    let gated = |unlisted: Option<&str>| Gated {
        decision: Decision {
            action: Action::Deny,
            rule: "class destructive".into(),
        },
        unlisted: unlisted.map(str::to_owned),
    };
    let plain = denial(&gated(None));
    assert!(!plain.approved);
    assert_eq!(plain.by, "policy");
    assert_eq!(plain.reason, "denied by class destructive");
    assert_eq!(
        denial(&gated(Some("not listed"))).reason,
        "denied by class destructive: not listed"
    );
}

#[test]
fn intent_and_approval_records_share_the_calls_fields() {
    let classification = Classification {
        class: Class::Destructive,
        source: Source::Hints,
    };
    let mut arguments = Map::new();
    arguments.insert("path".into(), json!("/tmp/x"));
    let base = intent_base(
        &json!(7),
        "rm",
        &arguments,
        classification,
        "class destructive",
    );
    assert_eq!(
        base,
        json!({"name": "rm", "class": "destructive", "classSource": "hints",
            "rule": "class destructive", "request": 7, "arguments": {"path": "/tmp/x"}})
    );
    let mut quorum = Map::new();
    quorum.insert("approvals".into(), json!(["a"]));
    let verdict = Verdict {
        approved: false,
        by: "quorum",
        reason: "expired".into(),
    };
    let record = approval_record(&base, Some(quorum), &verdict);
    assert_eq!(record["decision"], "deny");
    assert_eq!(record["by"], "quorum");
    assert_eq!(record["reason"], "expired");
    assert_eq!(record["approvals"], json!(["a"]));
    assert_eq!(record["name"], "rm");

    let call = CallContext {
        number: 3,
        name: "rm".into(),
        arguments,
        before: Some(members(json!({"name": "stat", "result": null}))),
        after: None,
        scope: None,
    };
    let intent = intent_record(base, &call);
    assert_eq!(intent["call"], 3);
    assert_eq!(intent["before"]["name"], "stat");
    assert_eq!(intent["request"], 7);
}

#[test]
fn a_retained_call_keeps_only_what_the_planner_reads() {
    let result = members(json!({"isError": false, "structuredContent": {"id": 1},
        "content": [{"type": "text", "text": "big"}], "_meta": {"x": 1}}));
    let call = TracedCall::new("create", Map::new(), Some(result));
    let kept = compact(call.clone(), false).result.unwrap();
    let keys: Vec<&String> = kept.keys().collect();
    assert_eq!(keys, ["isError", "structuredContent"]);
    let with_text = compact(call, true).result.unwrap();
    assert!(with_text.contains_key("content"));
    assert!(!with_text.contains_key("_meta"));
}

#[test]
fn the_client_is_told_what_a_rollback_did() {
    let told = (json!({"compensated": 1}), "rolled back".to_owned());
    let mut result = json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true}});
    tell(&mut result, &told);
    assert_eq!(
        result["result"]["content"],
        json!([{"type": "text", "text": "rolled back"}])
    );
    assert_eq!(
        result["result"]["_meta"][crate::rollback::ROLLBACK_META_KEY],
        json!({"compensated": 1})
    );
    let mut error = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "x"}});
    tell(&mut error, &told);
    assert_eq!(
        error["error"]["data"][crate::rollback::ROLLBACK_META_KEY],
        json!({"compensated": 1, "text": "rolled back"})
    );
    // A member in another shape than MCP's is left as the server sent it.
    let mut odd = json!({"id": 1, "error": {"code": -1, "data": "text"}});
    tell(&mut odd, &told);
    assert_eq!(odd["error"]["data"], "text");
}
