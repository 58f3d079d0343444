use serde_json::{Value, json};

use super::Plain;
use crate::schema_stage::SchemaStage;
use crate::test_tools::{fixture_tools, shapes, variants};

fn surely_valid(root: &Value, instance: &Value) -> bool {
    Plain::new(root).surely_valid(instance)
}

/// The soundness of the check: no value it accepts has a violation under the compiled schema,
/// over every fixture tool and thousands of variants of each.
#[test]
fn what_it_accepts_the_compiled_schema_accepts() {
    let stage = SchemaStage::new();
    let Ok(validator) = stage.compiled() else {
        panic!("the tool schema does not compile");
    };
    let mut tools = fixture_tools();
    assert!(tools.len() >= 50, "{}", tools.len());
    tools.extend(shapes());
    let (mut accepted, mut checked) = (0usize, 0usize);
    for tool in &tools {
        let mut all = vec![tool.clone()];
        variants(tool, 3, &mut all);
        for value in all {
            checked += 1;
            if surely_valid(&stage.schema, &value) {
                accepted += 1;
                assert!(
                    validator.is_valid(&value),
                    "accepted, but the schema rejects it: {value}"
                );
            }
        }
    }
    // Both answers occur: the variants probe the check, not only its fallback.
    assert!(
        accepted > 1000 && checked - accepted > 1000,
        "{accepted} of {checked}"
    );
}

/// Plain tools pass without the compiled schema; the stage is left uncompiled.
#[test]
fn plain_tools_need_no_compiled_schema() {
    let stage = SchemaStage::new();
    for tool in &shapes()[..2] {
        assert!(surely_valid(&stage.schema, tool), "{tool}");
        assert_eq!(stage.check(tool), Ok(vec![]));
    }
    assert!(stage.validator.get().is_none());
}

/// What the check leaves to the compiled schema: violations, and keywords it does not evaluate.
#[test]
fn it_leaves_the_rest_to_the_compiled_schema() {
    let schema = SchemaStage::new().schema;
    let shapes = shapes();
    let left = [
        // Recovery bindings (patterns, conditions) and the compensate carrier (alternatives).
        shapes[2].clone(),
        shapes[3].clone(),
        json!({"inputSchema": {"type": "object"}}),
        json!({"name": 1, "inputSchema": {"type": "object"}}),
        json!({"name": "a", "inputSchema": {"type": "array"}}),
        json!({"name": "a", "inputSchema": {}}),
        json!({"name": "a", "inputSchema": {"type": "object", "required": [1]}}),
        json!({"name": "a", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}}),
        json!({"name": "a", "inputSchema": {"type": "object"}, "icons": [{"mimeType": "x"}]}),
        json!([]),
    ];
    for tool in left {
        assert!(!surely_valid(&schema, &tool), "{tool}");
    }
}

#[test]
fn keywords_are_evaluated_as_json_schema_defines_them() {
    let root = json!({
        "$id": "https://example.com/s.json",
        "type": "object",
        "properties": {"n": {"type": "integer"}, "k": {"$ref": "#/$defs/K"},
            "e": {"enum": ["a", true, null]}, "c": {"const": "x"}},
        "additionalProperties": {"type": "string"},
        "$defs": {"K": {"type": ["string", "null"]}}
    });
    let yes = [
        json!({}),
        json!({"n": 3, "k": null, "e": true, "c": "x", "other": "s"}),
        json!({"n": -3, "k": "s", "e": "a"}),
    ];
    let no = [
        json!({"n": 1.5}),
        // 1.0 is an integer to JSON Schema; the check leaves it to the compiled schema.
        json!({"n": 1.0}),
        json!({"k": 1}),
        json!({"e": "b"}),
        json!({"e": 1}),
        json!({"c": "y"}),
        json!({"other": 1}),
        json!([]),
    ];
    for value in yes {
        assert!(surely_valid(&root, &value), "{value}");
    }
    for value in no {
        assert!(!surely_valid(&root, &value), "{value}");
    }
    // `$id` below the root moves the base of references; unknown keywords are not evaluated.
    for schema in [
        json!({"properties": {"a": {"$id": "x", "type": "string"}}}),
        json!({"format": "email"}),
        json!({"$ref": "#/$defs/a~1b", "$defs": {"a/b": true}}),
        json!({"$ref": "other.json"}),
        json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}}),
    ] {
        assert!(!surely_valid(&schema, &json!({"a": "s"})), "{schema}");
    }
}
