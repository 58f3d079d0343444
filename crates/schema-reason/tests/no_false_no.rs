//! The invariant, checked against a validator: for every instance a JSON Schema validator
//! accepts, every value present in it is allowed by the resolver — never "no" at its pointer,
//! and its type inside the resolved type set.

// Test helpers fail loudly by design.
#![allow(clippy::unwrap_used, clippy::panic)]

use mcp_recovery_model::JsonPointer;
use mcp_recovery_schema_reason::{Knowledge, TypeSet, resolve};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const KEYS: [&str; 4] = ["a", "b", "x-a", "0"];
const PATTERNS: [&str; 5] = ["^a", "^(?=x)", "(?<!x)a$", "^(?!a)", "^(.)\\1*$"];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        prop::sample::select(vec![
            "null", "boolean", "integer", "number", "string", "array", "object"
        ])
        .prop_map(|t| json!({"type": t})),
        Just(json!({"type": ["string", "integer"]})),
        Just(json!({"const": {"a": 1}})),
        Just(json!({"enum": [1, "a", [true], {"b": null}]})),
        Just(json!({"$ref": "#/$defs/d"})),
        Just(json!({"$ref": "#d"})),
        Just(json!({"$ref": "https://example.com/remote.json"})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 24, 3, |inner| {
        let key = prop::sample::select(KEYS.to_vec());
        let pattern = prop::sample::select(PATTERNS.to_vec());
        prop_oneof![
            (
                prop::collection::btree_map(key.clone(), inner.clone(), 0..3),
                prop::collection::vec(key, 0..2),
                prop::option::of(inner.clone()),
                prop::option::of((pattern, inner.clone())),
            )
                .prop_map(|(props, required, additional, pattern)| {
                    let mut map = Map::new();
                    map.insert("type".into(), json!("object"));
                    map.insert("properties".into(), json!(props));
                    map.insert("required".into(), json!(required));
                    if let Some(additional) = additional {
                        map.insert("additionalProperties".into(), additional);
                    }
                    if let Some((pattern, schema)) = pattern {
                        map.insert("patternProperties".into(), json!({ pattern: schema }));
                    }
                    Value::Object(map)
                }),
            (inner.clone(), prop::collection::vec(inner.clone(), 0..2), 0u64..3).prop_map(
                |(items, prefix, max)| json!({"type": "array", "items": items, "prefixItems": prefix, "maxItems": max})
            ),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|parts| json!({"allOf": parts})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|parts| json!({"anyOf": parts})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|parts| json!({"oneOf": parts})),
            inner.clone().prop_map(|s| json!({"not": s})),
            (inner.clone(), inner).prop_map(|(a, b)| json!({"if": a, "then": b})),
        ]
    })
}

fn instance() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-2i64..3).prop_map(|n| json!(n)),
        Just(json!(1.5)),
        prop::sample::select(vec!["", "a", "xa", "aa"]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(KEYS.to_vec()), inner, 0..3)
                .prop_map(|m| json!(m)),
        ]
    })
}

/// Every value inside `value` (itself included) with its pointer.
fn values<'v>(value: &'v Value, pointer: JsonPointer, out: &mut Vec<(JsonPointer, &'v Value)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                values(child, pointer.join(key.as_str()), out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                values(child, pointer.join(index.to_string()), out);
            }
        }
        _ => {}
    }
    out.push((pointer, value));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn an_accepted_instance_is_never_ruled_out(body in schema(), def in schema(), value in instance()) {
        let mut root = match body {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("allOf".into(), json!([other]));
                map
            }
        };
        let mut def = def;
        if let Value::Object(map) = &mut def {
            map.insert("$anchor".into(), json!("d"));
        } else {
            def = json!({"$anchor": "d", "allOf": [def]});
        }
        root.insert("$defs".into(), json!({ "d": def }));
        let root = Value::Object(root);
        let Ok(validator) = jsonschema::options().build(&root) else {
            // A remote `$ref` the validator cannot retrieve: nothing to compare against.
            return Ok(());
        };
        if !validator.is_valid(&value) {
            return Ok(());
        }
        let mut found = Vec::new();
        values(&value, JsonPointer::root(), &mut found);
        for (pointer, at) in found {
            let got = resolve(&root, &pointer);
            prop_assert_ne!(got.exists, Knowledge::No, "{} is in {} which {} accepts", pointer, value, root);
            if let Some(types) = got.types {
                prop_assert!(
                    types.contains(TypeSet::of_value(at)),
                    "{} at {} is not in {} ({})", at, pointer, types, root
                );
            }
        }
    }
}
