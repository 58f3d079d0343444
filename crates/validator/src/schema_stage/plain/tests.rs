use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::surely_valid;
use crate::schema_stage::SchemaStage;

/// The tools of every JSON fixture that holds a tools array.
fn fixture_tools() -> Vec<Value> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures"),
        &mut files,
    );
    let mut tools = Vec::new();
    for file in files {
        let Ok(document) = serde_json::from_slice::<Value>(&std::fs::read(&file).unwrap()) else {
            continue;
        };
        let array = document
            .pointer("/result/tools")
            .or_else(|| document.get("tools"))
            .or(Some(&document))
            .and_then(Value::as_array);
        tools.extend(array.into_iter().flatten().cloned());
    }
    tools
}

/// Values put in place of a member to probe each keyword.
fn probes() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(1),
        json!(-1),
        json!(1.0),
        json!("x"),
        json!("object"),
        json!([]),
        json!(["x"]),
        json!([1]),
        json!({}),
        json!({"type": "object"}),
        json!({"type": "array"}),
        json!({"src": 1}),
    ]
}

/// `value` with each member (to `depth` levels) removed, and replaced by each probe.
fn variants(value: &Value, depth: usize, out: &mut Vec<Value>) {
    if depth == 0 {
        return;
    }
    let keys: Vec<String> = match value {
        Value::Object(map) => map.keys().cloned().collect(),
        Value::Array(items) => (0..items.len()).map(|i| i.to_string()).collect(),
        _ => return,
    };
    for key in keys {
        let mut removed = value.clone();
        match &mut removed {
            Value::Object(map) => {
                map.shift_remove(&key);
            }
            Value::Array(items) => {
                items.remove(key.parse::<usize>().unwrap());
            }
            _ => unreachable!(),
        }
        out.push(removed);
        let member = match value {
            Value::Object(map) => &map[&key],
            Value::Array(items) => &items[key.parse::<usize>().unwrap()],
            _ => unreachable!(),
        };
        for probe in probes() {
            out.push(with_member(value, &key, probe));
        }
        let mut inner = Vec::new();
        variants(member, depth - 1, &mut inner);
        out.extend(inner.into_iter().map(|v| with_member(value, &key, v)));
    }
}

fn with_member(value: &Value, key: &str, member: Value) -> Value {
    let mut changed = value.clone();
    match &mut changed {
        Value::Object(map) => {
            map.insert(key.to_owned(), member);
        }
        Value::Array(items) => items[key.parse::<usize>().unwrap()] = member,
        _ => unreachable!(),
    }
    changed
}

/// Tools of every shape the schema describes, each valid.
fn shapes() -> Vec<Value> {
    vec![
        json!({"name": "a", "inputSchema": {"type": "object"}}),
        json!({
            "name": "b", "title": "B", "description": "d",
            "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            "outputSchema": {"type": "object", "$schema": "s"},
            "annotations": {"readOnlyHint": false, "destructiveHint": true,
                "idempotentHint": false, "openWorldHint": true, "title": "B"},
            "_meta": {"other": 1},
            "icons": [{"src": "https://x/i.png", "mimeType": "image/png", "sizes": ["48x48"],
                "theme": "dark"}],
            "execution": {"taskSupport": "optional"},
            "extra": [1, 2]
        }),
        json!({
            "name": "c", "inputSchema": {"type": "object"},
            "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
                "operationId": "u", "parameters": {"id": "$response.body#/id"}}}}
        }),
        json!({
            "name": "d", "inputSchema": {"type": "object"},
            "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
                "compensation": {"toolName": "u", "parameterMapping": {"id": "$.output.structuredContent.id"},
                    "timeoutMs": 5, "maxRetries": 0}}}
        }),
    ]
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
