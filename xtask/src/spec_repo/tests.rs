//! Tests of the spec-repository check.

use serde_json::{Value, json};

use super::cases::{BINDING_PROBES, Case, Kind, document_cases, mutations};
use super::checkout::checkout_schema_ts;
use super::compare::{Comparison, description_differences};
use crate::shared::{compile, definition_validator};

fn comparison(ours: Value, theirs: Value) -> Comparison {
    let defs = |recovery: Value| {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "Recovery": recovery,
                "ToolAnnotations": {"type": "object", "properties": {"readOnlyHint": {"type": "boolean"}}}
            }
        })
    };
    let ours_defs = defs(ours.clone());
    let theirs_defs = defs(theirs);
    Comparison {
        ours_recovery: compile(&ours, "ours").unwrap_or_else(|e| panic!("{e}")),
        ours_annotations: definition_validator(&ours_defs, "ToolAnnotations")
            .unwrap_or_else(|e| panic!("{e}")),
        generated_recovery: definition_validator(&theirs_defs, "Recovery")
            .unwrap_or_else(|e| panic!("{e}")),
        generated_annotations: definition_validator(&theirs_defs, "ToolAnnotations")
            .unwrap_or_else(|e| panic!("{e}")),
    }
}

fn case(name: &str, kind: Kind, value: Value) -> Case {
    Case {
        name: name.to_owned(),
        kind,
        value,
    }
}

fn sample() -> Vec<Case> {
    vec![
        case("ok", Kind::Recovery, json!("$x")),
        case("bad", Kind::Recovery, json!("y")),
        case("a", Kind::Annotations, json!({"readOnlyHint": true})),
        case("b", Kind::Annotations, json!({"readOnlyHint": 1})),
    ]
}

#[test]
fn equal_schemas_agree() {
    let schema = json!({"type": "string", "pattern": "^\\$"});
    let outcome = comparison(schema.clone(), schema).run(&sample(), &[]);
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
}

#[test]
fn a_lost_constraint_is_a_named_difference_unless_excluded() {
    let ours = json!({"type": "string", "pattern": "^\\$"});
    let lost = json!({"type": "string"});
    let outcome = comparison(ours.clone(), lost.clone()).run(&sample(), &[]);
    assert_eq!(outcome.failures.len(), 1, "{:?}", outcome.failures);
    assert!(outcome.failures[0].starts_with("bad: our schema rejects"));

    let excluded = [("bad", "the pattern")];
    let outcome = comparison(ours.clone(), lost).run(&sample(), &excluded);
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);

    // An exclusion that is no longer needed, or names nothing, fails.
    let outcome = comparison(ours.clone(), ours).run(&sample(), &[("bad", "x"), ("gone", "y")]);
    assert_eq!(outcome.failures.len(), 2, "{:?}", outcome.failures);
    assert!(outcome.failures[0].contains("drop the exclusion"));
    assert!(outcome.failures[1].contains("gone does not exist"));
}

#[test]
fn a_comparison_without_rejections_proves_nothing() {
    let schema = json!({});
    let cases = [case("ok", Kind::Recovery, json!(1))];
    let outcome = comparison(schema.clone(), schema).run(&cases, &[]);
    assert!(
        outcome
            .failures
            .iter()
            .any(|f| f.contains("proves nothing")),
        "{:?}",
        outcome.failures
    );
}

#[test]
fn cases_are_found_in_every_document_shape_and_mutated() {
    let recovery = json!({"strategy": "compensation", "compensatingOperation": {"operationId": "r", "parameters": {}}});
    let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"recovery": recovery}});
    let names = |file: &str, document: Value| -> Vec<String> {
        document_cases(file, &document)
            .into_iter()
            .map(|c| c.name)
            .collect()
    };
    assert_eq!(
        names(
            "a.json",
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}})
        ),
        [
            "a.json#/result/tools/0/annotations",
            "a.json#/result/tools/0/annotations/recovery"
        ]
    );
    assert_eq!(names("b.json", json!([tool])).len(), 2);
    assert_eq!(
        names("c.json", tool.clone()),
        ["c.json#/annotations", "c.json#/annotations/recovery"]
    );
    assert_eq!(
        names("d.recovery.json", recovery.clone()),
        ["d.recovery.json#"]
    );
    let mutated = mutations(&case("r", Kind::Recovery, recovery));
    assert!(mutated.len() > BINDING_PROBES.len());
    assert!(
        mutated.iter().any(
            |c| c.value.pointer("/compensatingOperation/parameters/probe") == Some(&Value::Null)
        )
    );
}

#[test]
fn the_checkout_starts_without_the_member_and_gets_it() {
    let module = mcp_recovery_schema::typescript::module().unwrap_or_else(|e| panic!("{e}"));
    let base = checkout_schema_ts(&module).unwrap_or_else(|e| panic!("{e}"));
    assert!(!base.contains("recovery?:"), "{base}");
    assert!(base.contains("export interface Tool {"), "{base}");
    let patched =
        mcp_recovery_schema::spec_repo::patch_schema_ts(&base).unwrap_or_else(|e| panic!("{e}"));
    assert!(patched.contains("  recovery?: Recovery;\n}"), "{patched}");
}

#[test]
fn generated_descriptions_must_match() {
    let ours = json!({"$defs": {"A": {"description": "x", "properties": {"p": {"description": "y"}, "q": {}}}}});
    let same = json!({"$defs": {"A": {"description": "x", "properties": {"p": {"description": "y"}, "q": {}}}}});
    assert!(description_differences(&ours, &same).is_empty());
    let other =
        json!({"$defs": {"A": {"description": "x", "properties": {"p": {"description": "z"}}}}});
    let found = description_differences(&ours, &other);
    assert_eq!(found.len(), 2, "{found:?}");
}
