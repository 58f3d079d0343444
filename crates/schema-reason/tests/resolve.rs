//! The resolver's answers on hand-written schemas, through the public API: existence, types,
//! presence, object shapes and subschemas; and the invariant that no answer is a false "no".

// Test helpers fail loudly by design.
#![allow(clippy::unwrap_used, clippy::panic)]

use Knowledge::{No, Unknown, Yes};
use mcp_recovery_model::{JsonPointer, PointerReading};
use mcp_recovery_schema_reason::{
    Knowledge, TypeSet, object_shape, resolve, resolve_as, resolve_each, resolve_str, subschemas_at,
};
use serde_json::Value;
use serde_json::json;

fn pointer(text: &str) -> JsonPointer {
    JsonPointer::parse(text).unwrap()
}

fn types(text: &str) -> Option<TypeSet> {
    if text == "any" {
        return None;
    }
    Some(
        text.split(" | ")
            .map(|name| TypeSet::from_type_name(name).unwrap())
            .fold(TypeSet::NONE, |set, t| set | t),
    )
}

/// One expectation: `exists`, the displayed types (`"any"` for none), `optional_at`.
fn check(schema: &Value, text: &str, exists: Knowledge, expected: &str, optional: Option<usize>) {
    let got = resolve(schema, &pointer(text));
    assert_eq!(got.exists, exists, "exists of {text} in {schema}: {got:?}");
    if exists != No {
        assert_eq!(
            got.types,
            types(expected),
            "types of {text} in {schema}: {got:?}"
        );
        assert_eq!(
            got.optional_at, optional,
            "optional_at of {text} in {schema}: {got:?}"
        );
    }
}

fn check_all(schema: &Value, cases: &[(&str, Knowledge, &str, Option<usize>)]) {
    for (text, exists, expected, optional) in cases {
        check(schema, text, *exists, expected, *optional);
    }
}

fn fails_at(schema: &Value, text: &str) -> Option<usize> {
    let got = resolve(schema, &pointer(text));
    assert_eq!(got.exists, No, "{text}: {got:?}");
    got.fails_at
}

#[test]
fn type_sets() {
    assert!(TypeSet::NUMBER.intersects(TypeSet::INTEGER));
    assert!(TypeSet::INTEGER.intersects(TypeSet::NUMBER));
    assert_eq!(TypeSet::NUMBER & TypeSet::INTEGER, TypeSet::INTEGER);
    assert!(!TypeSet::STRING.intersects(TypeSet::INTEGER));
    assert!(TypeSet::NUMBER.contains(TypeSet::INTEGER));
    assert!(!TypeSet::INTEGER.contains(TypeSet::NUMBER));
    assert!(!TypeSet::of_value(&json!(1.5)).intersects(TypeSet::INTEGER));
    assert!(TypeSet::of_value(&json!(1.5)).intersects(TypeSet::NUMBER));
    assert_eq!(TypeSet::of_value(&json!(2.0)), TypeSet::INTEGER);
    assert_eq!(TypeSet::of_value(&json!(-3)), TypeSet::INTEGER);
    // Exactly as the text says, beyond what a float holds.
    let number = |text: &str| mcp_recovery_model::json::from_str(text).unwrap();
    assert_eq!(TypeSet::of_value(&number("1e400")), TypeSet::INTEGER);
    assert_eq!(TypeSet::of_value(&number("-25e-1")).to_string(), "number");
    assert_eq!(TypeSet::of_value(&number("1e-400")).to_string(), "number");
    assert_eq!(
        TypeSet::of_value(&number("10000000000000000000000.5")).to_string(),
        "number"
    );
    assert_eq!(TypeSet::of_value(&json!(null)), TypeSet::NULL);
    assert_eq!(TypeSet::of_value(&json!({})), TypeSet::OBJECT);
    assert_eq!(TypeSet::from_type_name("float"), None);
    assert_eq!(
        TypeSet::from_type_keyword(&json!(["string", "null"])),
        Some(TypeSet::STRING | TypeSet::NULL)
    );
    assert_eq!(TypeSet::from_type_keyword(&json!(["string", "x"])), None);
    assert_eq!(
        (TypeSet::STRING | TypeSet::INTEGER).to_string(),
        "string | integer"
    );
    assert_eq!((TypeSet::NUMBER | TypeSet::INTEGER).to_string(), "number");
    assert_eq!(TypeSet::of_value(&json!(0.5)).to_string(), "number");
    assert_eq!(
        TypeSet::ANY.to_string(),
        "string | number | boolean | object | array | null"
    );
    assert_eq!(TypeSet::NONE.to_string(), "nothing");
    assert_eq!(TypeSet::ANY.difference(TypeSet::NUMBER).names().len(), 5);
    assert!(TypeSet::NONE.is_empty());
}

#[test]
fn properties_and_required() {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "count": {"type": "integer"},
            "price": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "owner": {
                "type": "object",
                "properties": {"name": {"type": ["string", "null"]}},
                "required": ["name"]
            },
            "free": {}
        },
        "required": ["id", "owner"],
        "additionalProperties": false
    });
    check_all(
        &schema,
        &[
            ("", Yes, "object", None),
            ("/id", Yes, "string", None),
            ("/count", Yes, "integer", Some(0)),
            ("/price", Yes, "number", Some(0)),
            ("/tags", Yes, "array", Some(0)),
            ("/tags/0", Yes, "string", Some(0)),
            ("/owner/name", Yes, "string | null", None),
            ("/free", Yes, "any", Some(0)),
            ("/free/deep/er", Yes, "any", Some(0)),
            ("/missing", No, "", None),
            ("/id/x", No, "", None),
            ("/owner/other", Yes, "any", Some(1)),
            ("/tags/x", No, "", None),
            ("/tags/01", No, "", None),
            ("/tags/-", No, "", None),
        ],
    );
    assert_eq!(fails_at(&schema, "/missing/x"), Some(0));
    assert_eq!(fails_at(&schema, "/id/x"), Some(1));
    assert_eq!(fails_at(&schema, "/count/0"), Some(1));
    let tags = resolve(&schema, &pointer("/tags"));
    assert_eq!(tags.item_types, Some(TypeSet::STRING));
    assert_eq!(resolve(&schema, &pointer("/id")).item_types, None);
}

#[test]
fn schemas_without_type_allow_anything() {
    check_all(
        &json!({}),
        &[
            ("", Yes, "any", None),
            ("/x", Yes, "any", Some(0)),
            ("/x/0/y", Yes, "any", Some(0)),
        ],
    );
    check_all(
        &json!({"properties": {"a": {"type": "string"}}}),
        &[("/a", Yes, "string", Some(0)), ("/b", Yes, "any", Some(0))],
    );
    // Without `type`, "0" may be an object key or an array index.
    check_all(
        &json!({"items": {"type": "string"}}),
        &[("/0", Yes, "any", Some(0)), ("/x", Yes, "any", Some(0))],
    );
    check_all(
        &json!({"type": "array", "items": {"type": "string"}}),
        &[("/0", Yes, "string", Some(0)), ("/x", No, "", None)],
    );
}

#[test]
fn pattern_and_additional_properties() {
    let schema = json!({
        "type": "object",
        "properties": {"fixed": {"type": "boolean"}},
        "patternProperties": {"^x-": {"type": "string"}, "^n_[0-9]+$": {"type": "integer"}},
        "additionalProperties": false
    });
    check_all(
        &schema,
        &[
            ("/fixed", Yes, "boolean", Some(0)),
            ("/x-trace", Yes, "string", Some(0)),
            ("/n_12", Yes, "integer", Some(0)),
            ("/n_x", No, "", None),
            ("/other", No, "", None),
        ],
    );
    // A property both listed and matched must satisfy both.
    check(
        &json!({"properties": {"x-a": {"type": ["string", "integer"]}},
                "patternProperties": {"^x-": {"type": "string"}}}),
        "/x-a",
        Yes,
        "string",
        Some(0),
    );
    check_all(
        &json!({"type": "object", "additionalProperties": {"type": "number"}}),
        &[("/anything", Yes, "number", Some(0))],
    );
    check_all(
        &json!({"type": "object", "additionalProperties": true}),
        &[("/anything", Yes, "any", Some(0))],
    );
    // Patterns are ECMA-262: look-around and back-references are judged like any other.
    let ahead = json!({
        "type": "object",
        "patternProperties": {"^(?=a)": {"type": "string"}},
        "additionalProperties": false
    });
    check(&ahead, "/abc", Yes, "string", Some(0));
    check(&ahead, "/zzz", No, "", None);
    let not_ahead = json!({
        "type": "object",
        "properties": {"x-id": {"type": "string"}},
        "patternProperties": {"^(?!x-)[a-z]+$": {"type": "integer"}},
        "additionalProperties": false
    });
    check(&not_ahead, "/count", Yes, "integer", Some(0));
    check(&not_ahead, "/x-id", Yes, "string", Some(0));
    check(&not_ahead, "/x-other", No, "", None);
    let behind = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "patternProperties": {"(?<=x)y": {"type": "string"}, "(?<!_)id$": {"type": "integer"}}
    });
    check(&behind, "/a", Yes, "string", Some(0));
    check(&behind, "/xy", Yes, "string", Some(0));
    check(&behind, "/user_id", Yes, "any", Some(0));
    check(&behind, "/userid", Yes, "integer", Some(0));
    let back_reference = json!({
        "type": "object",
        "patternProperties": {"^(.)\\1$": {"type": "boolean"}},
        "additionalProperties": false
    });
    check(&back_reference, "/aa", Yes, "boolean", Some(0));
    check(&back_reference, "/ab", No, "", None);
    // A pattern the engine rejects or gives up on is never a "no".
    for pattern in ["(", "^(a|a)*\\1$"] {
        let odd = json!({
            "type": "object",
            "patternProperties": {pattern: {"type": "string"}},
            "additionalProperties": false
        });
        check(
            &odd,
            &format!("/{}!", "a".repeat(40)),
            Unknown,
            "any",
            Some(0),
        );
    }
}

#[test]
fn escaped_property_names() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a/b": {"type": "string"},
            "m~n": {"type": "integer"},
            "": {"type": "boolean"},
            "~1": {"type": "null"}
        },
        "required": ["a/b", "m~n"],
        "additionalProperties": false
    });
    check_all(
        &schema,
        &[
            ("/a~1b", Yes, "string", None),
            ("/m~0n", Yes, "integer", None),
            ("/", Yes, "boolean", Some(0)),
            ("/~01", Yes, "null", Some(0)),
            ("/a", No, "", None),
            ("/a~0b", No, "", None),
        ],
    );
    let defs = json!({
        "$defs": {"a/b": {"type": "string"}, "m~n": {"type": "integer"}, "sp ace": {"type": "null"}},
        "type": "object",
        "properties": {
            "p": {"$ref": "#/$defs/a~1b"},
            "q": {"$ref": "#/$defs/m~0n"},
            "r": {"$ref": "#/$defs/sp%20ace"}
        }
    });
    check_all(
        &defs,
        &[
            ("/p", Yes, "string", Some(0)),
            ("/q", Yes, "integer", Some(0)),
            ("/r", Yes, "null", Some(0)),
        ],
    );
    // A fragment that does not decode cannot be judged.
    check(
        &json!({"properties": {"a": {"$ref": "#/%ZZ"}}}),
        "/a",
        Unknown,
        "any",
        Some(0),
    );
}

#[test]
fn items_forms() {
    let draft07 = json!({
        "type": "array",
        "items": [{"type": "string"}, {"type": "integer"}],
        "additionalItems": {"type": "boolean"},
        "minItems": 1
    });
    check_all(
        &draft07,
        &[
            ("/0", Yes, "string", None),
            ("/1", Yes, "integer", Some(0)),
            ("/2", Yes, "boolean", Some(0)),
            ("/99", Yes, "boolean", Some(0)),
        ],
    );
    assert_eq!(
        resolve(&draft07, &JsonPointer::root()).item_types,
        Some(TypeSet::STRING | TypeSet::INTEGER | TypeSet::BOOLEAN)
    );
    let closed = json!({"type": "array", "items": [{"type": "string"}], "additionalItems": false});
    check_all(
        &closed,
        &[("/0", Yes, "string", Some(0)), ("/1", No, "", None)],
    );
    assert_eq!(
        resolve(&closed, &JsonPointer::root()).item_types,
        Some(TypeSet::STRING)
    );

    let draft2020 = json!({
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "number"}],
        "items": {"type": "null"},
        "minItems": 2,
        "maxItems": 4
    });
    check_all(
        &draft2020,
        &[
            ("/0", Yes, "string", None),
            ("/1", Yes, "number", None),
            ("/2", Yes, "null", Some(0)),
            ("/3", Yes, "null", Some(0)),
            ("/4", No, "", None),
        ],
    );
    let tuple_only = json!({"type": "array", "prefixItems": [{"type": "string"}], "items": false});
    check_all(
        &tuple_only,
        &[("/0", Yes, "string", Some(0)), ("/1", No, "", None)],
    );
    let open_tuple = json!({"type": "array", "prefixItems": [{"type": "string"}]});
    check_all(&open_tuple, &[("/5", Yes, "any", Some(0))]);
    assert_eq!(resolve(&open_tuple, &JsonPointer::root()).item_types, None);
    // No item can exist: item types are not reported.
    let empty = json!({"type": "array", "items": false});
    assert_eq!(resolve(&empty, &JsonPointer::root()).item_types, None);
    check(&empty, "/0", No, "", None);
    // Nested arrays.
    let matrix = json!({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}});
    check(&matrix, "/3/4", Yes, "integer", Some(0));
    assert_eq!(
        resolve(&matrix, &pointer("/0")).item_types,
        Some(TypeSet::INTEGER)
    );
}

#[test]
fn local_refs_draft07_and_2020() {
    let draft07 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {
            "user": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "friend": {"$ref": "#/definitions/user"}},
                "required": ["id"],
                "additionalProperties": false
            }
        },
        "type": "object",
        "properties": {"user": {"$ref": "#/definitions/user", "type": "string"}},
        "required": ["user"]
    });
    // Draft-07 ignores the siblings of `$ref` (the `type: string` here).
    check_all(
        &draft07,
        &[
            ("/user", Yes, "object", None),
            ("/user/id", Yes, "integer", None),
            ("/user/friend/friend/id", Yes, "integer", Some(1)),
            ("/user/name", No, "", None),
        ],
    );
    assert_eq!(fails_at(&draft07, "/user/friend/name"), Some(2));

    let draft2020 = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "item": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
            "alias": {"$ref": "#/$defs/item"}
        },
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/alias"}},
            "pinned": {"$ref": "#/$defs/item", "properties": {"sku": {"type": ["string", "null"]}}}
        }
    });
    check_all(
        &draft2020,
        &[
            ("/items/0/sku", Yes, "string", Some(0)),
            ("/pinned/sku", Yes, "string", Some(0)),
            ("/pinned/x", Yes, "any", Some(0)),
        ],
    );
    // 2020-12 applies the siblings of `$ref`.
    let siblings = json!({
        "$defs": {"s": {"type": "string"}},
        "properties": {"a": {"$ref": "#/$defs/s", "type": "integer"}}
    });
    check(&siblings, "/a", No, "", None);

    // Any local pointer works, not only `$defs`.
    let anywhere = json!({
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "boolean"}}},
            "c": {"$ref": "#/properties/a/properties/b"}
        }
    });
    check(&anywhere, "/c", Yes, "boolean", Some(0));
    let whole =
        json!({"type": "object", "properties": {"next": {"$ref": "#"}, "v": {"type": "string"}}});
    check(&whole, "/next/next/next/v", Yes, "string", Some(0));
}

#[test]
fn unjudgeable_refs_are_unknown() {
    let schema = json!({
        "type": "object",
        "properties": {
            "remote": {"$ref": "https://example.com/schemas/thing.json"},
            "relative": {"$ref": "thing.json#/x"},
            "anchor": {"$ref": "#thing"},
            "dangling": {"$ref": "#/$defs/nope"},
            "typed_remote": {"$ref": "https://example.com/a.json", "type": "string"},
            "not_a_string": {"$ref": 7}
        },
        "additionalProperties": false
    });
    check_all(
        &schema,
        &[
            ("/remote", Unknown, "any", Some(0)),
            ("/remote/x", Unknown, "any", Some(0)),
            ("/relative", Unknown, "any", Some(0)),
            ("/anchor", Unknown, "any", Some(0)),
            ("/dangling", Unknown, "any", Some(0)),
            ("/typed_remote", Unknown, "string", Some(0)),
            ("/not_a_string", Unknown, "any", Some(0)),
            ("/other", No, "", None),
        ],
    );
    // A remote schema may require: presence is unknown, not "optional".
    check(
        &json!({"$ref": "https://example.com/x.json"}),
        "/a",
        Unknown,
        "any",
        None,
    );
    // A nested resource with its own `$id` is the base of its local refs.
    let nested = json!({
        "type": "object",
        "properties": {
            "inner": {
                "$id": "https://example.com/inner",
                "$defs": {"n": {"type": "null"}},
                "type": "object",
                "properties": {"z": {"$ref": "#/$defs/n"}}
            }
        },
        "$defs": {"n": {"type": "string"}}
    });
    check(&nested, "/inner/z", Yes, "null", Some(0));
}

#[test]
fn anchors_and_embedded_resources_resolve_within_the_document() {
    // 2020-12 `$anchor`, an embedded resource by its `$id` (relative and absolute, with and
    // without a pointer fragment), an anchor inside that resource.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/schemas/order",
        "type": "object",
        "properties": {
            "by_anchor": {"$ref": "#money"},
            "by_relative_id": {"$ref": "line"},
            "by_absolute_id": {"$ref": "https://example.com/schemas/line"},
            "into_resource": {"$ref": "line#/properties/sku"},
            "resource_anchor": {"$ref": "line#qty"},
            "remote": {"$ref": "https://elsewhere.example/x.json"},
            "missing_anchor": {"$ref": "#nope"}
        },
        "additionalProperties": false,
        "$defs": {
            "money": {"$anchor": "money", "type": "object",
                      "properties": {"amount": {"type": "integer"}}, "required": ["amount"],
                      "additionalProperties": false},
            "line": {
                "$id": "line",
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"$ref": "#qty"}},
                "required": ["sku"],
                "$defs": {"qty": {"$anchor": "qty", "type": "integer"}}
            }
        }
    });
    check_all(
        &schema,
        &[
            ("/by_anchor/amount", Yes, "integer", Some(0)),
            ("/by_anchor/other", No, "", None),
            ("/by_relative_id/sku", Yes, "string", Some(0)),
            ("/by_relative_id/qty", Yes, "integer", Some(0)),
            ("/by_absolute_id/sku", Yes, "string", Some(0)),
            ("/into_resource", Yes, "string", Some(0)),
            ("/resource_anchor", Yes, "integer", Some(0)),
            ("/remote", Unknown, "any", Some(0)),
            ("/remote/deep", Unknown, "any", Some(0)),
            ("/missing_anchor", Unknown, "any", Some(0)),
        ],
    );
    assert_eq!(fails_at(&schema, "/by_anchor/other"), Some(1));

    // Draft-07 names anchors with a fragment-only `$id`.
    let draft07 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"user": {"$ref": "#user"}},
        "definitions": {
            "user": {"$id": "#user", "type": "object", "properties": {"id": {"type": "integer"}},
                     "additionalProperties": false}
        }
    });
    check(&draft07, "/user/id", Yes, "integer", Some(0));
    check(&draft07, "/user/name", No, "", None);

    // A document without any `$id` still resolves its anchors.
    let plain = json!({
        "properties": {"a": {"$ref": "#t"}},
        "$defs": {"t": {"$anchor": "t", "type": "string"}}
    });
    check(&plain, "/a", Yes, "string", Some(0));

    // Shapes and subschemas follow the same references.
    let shape = object_shape(&schema, &schema["properties"]["by_anchor"]);
    assert_eq!(shape.properties, ["amount"]);
    assert!(shape.complete);
    assert_eq!(shape.declares("amount"), Yes);
    assert_eq!(shape.declares("other"), No);
    let found = subschemas_at(&schema, &pointer("/by_relative_id/sku")).unwrap();
    assert!(found.contains(&&json!({"type": "string"})), "{found:?}");
    assert_eq!(subschemas_at(&schema, &pointer("/remote")), None);
}

#[test]
fn reference_cycles_through_anchors_terminate() {
    let schema = json!({
        "$defs": {
            "a": {"$anchor": "a", "$ref": "#b"},
            "b": {"$anchor": "b", "$ref": "#a"},
            "node": {"$anchor": "node", "type": "object",
                     "properties": {"next": {"$ref": "#node"}, "v": {"type": "string"}}}
        },
        "properties": {"loop": {"$ref": "#a"}, "list": {"$ref": "#node"}}
    });
    check(&schema, "/loop", Unknown, "any", Some(0));
    check(&schema, "/loop/x", Unknown, "any", Some(0));
    check(&schema, "/list/next/next/v", Yes, "string", Some(0));
}

#[test]
fn cycles_terminate() {
    check_all(
        &json!({"$ref": "#"}),
        &[("", Unknown, "any", None), ("/a/b", Unknown, "any", None)],
    );
    let mutual = json!({
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        "$ref": "#/$defs/a"
    });
    check_all(
        &mutual,
        &[("", Unknown, "any", None), ("/x", Unknown, "any", None)],
    );
    let through_all_of = json!({
        "$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}, {"type": "object"}]},
                  "b": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "object"}]}},
        "$ref": "#/$defs/a"
    });
    // The cycle is unknown, but the other branch of the union admits `/x` outright.
    check(&through_all_of, "/x", Yes, "any", Some(0));
    let tree = json!({
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                },
                "required": ["name", "children"]
            }
        },
        "$ref": "#/$defs/node"
    });
    check_all(
        &tree,
        &[
            ("/children/0/children/1/name", Yes, "string", Some(1)),
            ("/children/0/oops/name", Yes, "any", Some(1)),
            ("/name/x", No, "", None),
        ],
    );
    assert_eq!(
        resolve(&tree, &pointer("/children")).item_types,
        Some(TypeSet::OBJECT)
    );
}

#[test]
fn fan_out_stays_bounded() {
    // Each level refers twice to the next: 2^60 paths without a work cap.
    let mut defs = serde_json::Map::new();
    for level in 0..60 {
        let next = format!("#/$defs/d{}", level + 1);
        defs.insert(
            format!("d{level}"),
            json!({"allOf": [{"$ref": next}, {"$ref": next}], "anyOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("d60".into(), json!({"type": "object"}));
    let schema = json!({"$defs": defs, "$ref": "#/$defs/d0"});
    let got = resolve(&schema, &pointer("/a/b"));
    assert_ne!(got.exists, No);
}

#[test]
fn combinators() {
    let all_of = json!({
        "$defs": {"base": {"type": "object", "properties": {"id": {"type": "number"}}, "required": ["id"]}},
        "allOf": [
            {"$ref": "#/$defs/base"},
            {"properties": {"id": {"type": "integer"}, "note": {"type": "string"}}, "required": ["note"]}
        ]
    });
    check_all(
        &all_of,
        &[
            ("/id", Yes, "integer", None),
            ("/note", Yes, "string", None),
            ("/other", Yes, "any", Some(0)),
        ],
    );
    let closed_part = json!({
        "allOf": [
            {"type": "object", "properties": {"a": {}}, "additionalProperties": false},
            {"properties": {"b": {"type": "string"}}}
        ]
    });
    check_all(
        &closed_part,
        &[("/a", Yes, "any", Some(0)), ("/b", No, "", None)],
    );
    let disjoint = json!({"allOf": [{"type": "string"}, {"type": "integer"}]});
    check(&disjoint, "", No, "", None);

    let any_of = json!({
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false},
            {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "null"}}, "required": ["a", "b"], "additionalProperties": false}
        ]
    });
    check_all(
        &any_of,
        &[
            ("/a", Yes, "string | integer", None),
            ("/b", Yes, "null", Some(0)),
            ("/c", No, "", None),
        ],
    );
    let one_of = json!({
        "oneOf": [
            {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]},
            {"type": "object", "properties": {"y": {"type": "boolean"}}, "additionalProperties": false}
        ]
    });
    // `x` is required in one branch and forbidden in the other: it may be absent.
    check(&one_of, "/x", Yes, "boolean", Some(0));
    // Required in every branch: always present.
    let both = json!({
        "type": "object",
        "properties": {"k": {"type": "string"}},
        "anyOf": [{"required": ["k"]}, {"required": ["k", "j"]}]
    });
    check(&both, "/k", Yes, "string", None);
    let nullable = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
    check(&nullable, "", Yes, "string | null", None);
    check(&nullable, "/x", No, "", None);
    check(&json!({"anyOf": []}), "/x", Unknown, "any", None);
    check(
        &json!({"allOf": {"type": "string"}}),
        "/x",
        Unknown,
        "any",
        None,
    );
}

#[test]
fn boolean_schemas() {
    check_all(
        &json!(true),
        &[("", Yes, "any", None), ("/a/0", Yes, "any", Some(0))],
    );
    check(&json!(false), "", No, "", None);
    assert_eq!(fails_at(&json!(false), "/a"), None);
    let schema = json!({"type": "object", "properties": {"gone": false, "any": true}});
    check_all(
        &schema,
        &[("/gone", No, "", None), ("/any/x", Yes, "any", Some(0))],
    );
    assert_eq!(fails_at(&schema, "/gone/x"), Some(0));
    check(
        &json!({"anyOf": [false, {"type": "string"}]}),
        "",
        Yes,
        "string",
        None,
    );
}

#[test]
fn type_const_enum() {
    check(
        &json!({"type": ["string", "integer"]}),
        "",
        Yes,
        "string | integer",
        None,
    );
    check(
        &json!({"type": "number", "const": 3}),
        "",
        Yes,
        "integer",
        None,
    );
    check(
        &json!({"enum": ["a", 1, null]}),
        "",
        Yes,
        "string | integer | null",
        None,
    );
    check(&json!({"enum": []}), "", No, "", None);
    check(&json!({"type": "string", "enum": [1, 2]}), "", No, "", None);
    check(&json!({"type": "wat"}), "", Yes, "any", None);
    let fixed = json!({
        "type": "object",
        "properties": {
            "c": {"const": {"mode": "fast", "levels": [1, "two"]}},
            "e": {"enum": [{"k": 1}, {"k": "s", "j": true}]}
        },
        "required": ["c", "e"]
    });
    check_all(
        &fixed,
        &[
            ("/c/mode", Yes, "string", None),
            ("/c/levels/1", Yes, "string", None),
            ("/c/levels/2", No, "", None),
            ("/c/other", No, "", None),
            ("/e/k", Yes, "integer | string", None),
            ("/e/j", Yes, "boolean", Some(1)),
            ("/e/z", No, "", None),
        ],
    );
    assert_eq!(
        resolve(&fixed, &pointer("/c/levels")).item_types,
        Some(TypeSet::INTEGER | TypeSet::STRING)
    );
}

#[test]
fn unmodeled_keywords_never_say_no() {
    // Conditional keywords may require `a`: its presence is unknown, not "optional".
    for (keyword, optional) in [
        (json!({"not": {"required": ["a"]}}), Some(0)),
        (
            json!({"if": {"required": ["x"]}, "then": {"required": ["a"]}}),
            None,
        ),
        (
            json!({"dependentSchemas": {"x": {"properties": {"a": false}}}}),
            None,
        ),
        (json!({"dependentRequired": {"x": ["a"]}}), None),
        (json!({"propertyNames": {"maxLength": 0}}), Some(0)),
        (json!({"unevaluatedProperties": false}), Some(0)),
    ] {
        let mut schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        if let (Value::Object(schema), Value::Object(extra)) = (&mut schema, keyword) {
            schema.extend(extra);
        }
        let exists = if optional.is_some() || schema.get("dependentRequired").is_none() {
            Unknown
        } else {
            // `dependentRequired` can only add requirements, never forbid.
            Yes
        };
        check(&schema, "/a", exists, "string", optional);
        check(&schema, "", Yes, "object", None);
    }
    // Where a structural keyword is certain, the answer stays certain.
    let closed = json!({"type": "object", "additionalProperties": false, "not": {"type": "null"}});
    check(&closed, "/a", No, "", None);
    check(
        &json!({"type": "object", "maxProperties": 0}),
        "/a",
        No,
        "",
        None,
    );
    check(
        &json!({"type": "object", "x-vendor": {"a": 1}}),
        "/a",
        Yes,
        "any",
        Some(0),
    );
    check(
        &json!({"properties": {"a": 3}}),
        "/a",
        Unknown,
        "any",
        Some(0),
    );
}

#[test]
fn name_selectors_never_index_arrays() {
    let names =
        |schema: &Value, text: &str| resolve_as(schema, &pointer(text), PointerReading::Names);
    let schema = json!({"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "object",
            "properties": {"id": {"type": "string"}}, "required": ["id"]}},
        "tuple": {"type": "array", "prefixItems": [{"type": "string"}]},
        "byNumber": {"type": "object", "properties": {"0": {"type": "integer"}}},
        "either": {"anyOf": [{"type": "array"}, {"type": "object"}]},
        "untyped": {},
        "fixed": {"const": ["a"]},
        "listed": {"enum": [{"0": "x"}, ["y"]]}
    }, "required": ["items"]});
    for text in ["/items/0/id", "/items/0", "/tuple/0", "/fixed/0"] {
        // RFC 6901 may index the array; a name selector never does.
        assert_ne!(resolve(&schema, &pointer(text)).exists, No, "{text}");
        let got = names(&schema, text);
        assert_eq!(got.exists, No, "{text}: {got:?}");
        assert_eq!(got.fails_at, Some(1), "{text}: {got:?}");
    }
    for (text, exists, expected) in [
        ("/byNumber/0", Yes, "integer"),
        ("/either/0", Yes, "any"),
        ("/untyped/0", Yes, "any"),
        ("/listed/0", Yes, "string"),
        ("/items", Yes, "array"),
    ] {
        let got = names(&schema, text);
        assert_eq!(got.exists, exists, "{text}: {got:?}");
        assert_eq!(got.types, types(expected), "{text}: {got:?}");
    }
    // Item types of an array at the end of the path are still known.
    assert_eq!(names(&schema, "/items").item_types, types("object"));
}

#[test]
fn integer_is_a_number() {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": "number"}, "i": {"type": "integer"}},
        "required": ["n", "i"]
    });
    let n = resolve(&schema, &pointer("/n")).types.unwrap();
    let i = resolve(&schema, &pointer("/i")).types.unwrap();
    assert!(n.intersects(i) && i.intersects(n));
    assert!(!n.intersects(TypeSet::STRING));
    check(
        &json!({"allOf": [{"type": "number"}, {"type": "integer"}]}),
        "",
        Yes,
        "integer",
        None,
    );
    check(
        &json!({"anyOf": [{"type": "number"}, {"type": "integer"}]}),
        "",
        Yes,
        "number",
        None,
    );
}

/// A schema nested `depth` times through `properties.a`, built without recursion.
fn deep(depth: usize, wrapper: &str) -> Value {
    let mut schema = json!({"type": "string"});
    // `json!` would serialize (deep-copy, recursively) an interpolated `Value`: build by hand.
    for _ in 0..depth {
        let mut map = serde_json::Map::new();
        if wrapper == "allOf" {
            map.insert("allOf".into(), Value::Array(vec![schema]));
        } else {
            let mut properties = serde_json::Map::new();
            properties.insert("a".into(), schema);
            map.insert("type".into(), json!("object"));
            map.insert("properties".into(), Value::Object(properties));
        }
        schema = Value::Object(map);
    }
    schema
}

/// Takes a deep value apart without recursive drops.
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(mut value) = stack.pop() {
        match &mut value {
            Value::Object(map) => stack.extend(std::mem::take(map).into_iter().map(|(_, v)| v)),
            Value::Array(items) => stack.append(items),
            _ => {}
        }
    }
}

#[test]
fn very_deep_schemas_do_not_overflow() {
    let by_properties = deep(10_000, "properties");
    let long = JsonPointer::from_tokens(std::iter::repeat_n("a", 10_000));
    let got = resolve(&by_properties, &long);
    assert_eq!(got.exists, Unknown);
    assert_eq!(got.types, None);
    check(&by_properties, "/a/a/a", Yes, "object", Some(0));
    check(&by_properties, "/b", Yes, "any", Some(0));
    let shape = object_shape(&by_properties, &by_properties);
    assert_eq!(shape.properties, ["a"]);
    assert!(subschemas_at(&by_properties, &long).is_none());
    dismantle(by_properties);

    let by_all_of = deep(10_000, "allOf");
    check(&by_all_of, "", Unknown, "any", None);
    check(&by_all_of, "/x", Unknown, "any", None);
    assert!(!object_shape(&by_all_of, &by_all_of).complete);
    dismantle(by_all_of);
}

#[test]
fn long_pointers_beyond_the_presence_mask() {
    let schema = deep(100, "properties");
    let got = resolve(
        &schema,
        &JsonPointer::from_tokens(std::iter::repeat_n("a", 100)),
    );
    assert_eq!(got.exists, Yes);
    assert_eq!(got.types, Some(TypeSet::STRING));
    assert_eq!(got.optional_at, Some(0));
}

#[test]
fn resolve_str_rejects_malformed_pointers() {
    assert_eq!(resolve_str(&json!({}), "a").exists, No);
    assert_eq!(resolve_str(&json!({}), "/a").exists, Yes);
}

#[test]
fn object_shapes() {
    let input = json!({
        "$defs": {"paths": {"type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"]}},
        "type": "object",
        "allOf": [{"$ref": "#/$defs/paths"}],
        "properties": {"destination": {"type": "string"}},
        "anyOf": [
            {"properties": {"overwrite": {"type": "boolean"}}, "required": ["overwrite", "mode"]},
            {"properties": {"mode": {"type": "string"}}, "required": ["mode"]}
        ],
        "required": ["destination"],
        "additionalProperties": false
    });
    let shape = object_shape(&input, &input);
    assert_eq!(
        shape.properties,
        ["destination", "source", "overwrite", "mode"]
    );
    assert_eq!(shape.required, ["destination", "source", "mode"]);
    assert!(shape.additional_forbidden);
    assert!(shape.complete);
    assert_eq!(shape.declares("mode"), Yes);
    assert_eq!(shape.declares("nope"), No);

    let patterned = json!({
        "type": "object",
        "properties": {"a": {}},
        "patternProperties": {"^x_": {}},
        "additionalProperties": false
    });
    let shape = object_shape(&patterned, &patterned);
    assert!(!shape.additional_forbidden);
    assert_eq!(shape.declares("x_1"), Yes);
    assert_eq!(shape.declares("y"), No);

    let remote =
        json!({"allOf": [{"$ref": "https://example.com/s.json"}], "properties": {"a": {}}});
    let shape = object_shape(&remote, &remote);
    assert!(!shape.complete);
    assert_eq!(shape.declares("b"), Unknown);
    let cyclic = json!({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
    assert!(!object_shape(&cyclic, &cyclic).complete);
    let conditional = json!({"properties": {"a": {}}, "if": {}, "then": {"properties": {"b": {}}}});
    assert!(!object_shape(&conditional, &conditional).complete);

    // A shape for a node inside a larger document: refs go to the root.
    let doc = json!({
        "$defs": {"id": {"properties": {"id": {"type": "string"}}, "required": ["id"]}},
        "properties": {"params": {"$ref": "#/$defs/id", "properties": {"v": {}}}}
    });
    let node = pointer("/properties/params").evaluate(&doc).unwrap();
    let shape = object_shape(&doc, node);
    assert_eq!(shape.properties, ["v", "id"]);
    assert_eq!(shape.required, ["id"]);
    assert!(!shape.additional_forbidden);
}

#[test]
fn subschemas() {
    let schema = json!({
        "$defs": {"n": {"type": "integer", "minimum": 1}},
        "type": "object",
        "properties": {
            "n": {"allOf": [{"$ref": "#/$defs/n"}, {"maximum": 9}]},
            "list": {"type": "array", "items": {"$ref": "#/$defs/n"}},
            "choice": {"anyOf": [{"type": "object", "properties": {"x": {}}}]},
            "closed": {"type": "object", "additionalProperties": false}
        }
    });
    let n = subschemas_at(&schema, &pointer("/n")).unwrap();
    let parts = &schema["properties"]["n"]["allOf"];
    assert_eq!(
        n,
        [
            &schema["$defs"]["n"],
            &parts[0],
            &parts[1],
            &schema["properties"]["n"]
        ]
    );
    let remote = json!({"properties": {"a": {"$ref": "https://example.com/a.json"}}});
    assert!(subschemas_at(&remote, &pointer("/a")).is_none());
    let draft07 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"s": {"type": "string"}},
        "properties": {"a": {"$ref": "#/definitions/s", "type": "integer"}}
    });
    assert_eq!(
        subschemas_at(&draft07, &pointer("/a")).unwrap(),
        [&draft07["definitions"]["s"]]
    );
    let item = subschemas_at(&schema, &pointer("/list/3")).unwrap();
    assert_eq!(
        item,
        [
            &schema["$defs"]["n"],
            &schema["properties"]["list"]["items"]
        ]
    );
    assert_eq!(subschemas_at(&schema, &pointer("/free")).unwrap().len(), 0);
    assert!(subschemas_at(&schema, &pointer("/choice/x")).is_none());
    assert_eq!(
        subschemas_at(&schema, &pointer("/closed/x")).unwrap(),
        [&json!(false)]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Arbitrary schema-like values and pointers never panic.
    #[test]
    fn never_panics(schema in arbitrary_schema(), tokens in proptest::collection::vec("[a-z0-9$#/~]{0,3}", 0..5)) {
        let pointer = JsonPointer::from_tokens(tokens);
        let got = resolve(&schema, &pointer);
        if got.exists == No {
            proptest::prop_assert!(got.optional_at.is_none());
        }
        let _ = object_shape(&schema, &schema);
        let _ = subschemas_at(&schema, &pointer);
    }
}

fn arbitrary_schema() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        Just(json!({"type": "string"})),
        Just(json!({"type": ["object", "null"]})),
        Just(json!({"$ref": "#"})),
        Just(json!({"$ref": "#/properties/a"})),
        Just(json!({"$ref": "#/$defs/x"})),
        Just(json!({"$ref": "https://example.com"})),
        Just(json!({"enum": [1, "a", {"a": [null]}]})),
        Just(json!({"const": [1, 2]})),
        Just(json!(3)),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        let keyword = prop_oneof![
            Just("properties"),
            Just("patternProperties"),
            Just("$defs"),
            Just("allOf"),
            Just("anyOf"),
            Just("oneOf"),
            Just("items"),
            Just("prefixItems"),
            Just("additionalProperties"),
            Just("additionalItems"),
            Just("not"),
        ];
        proptest::collection::vec((keyword, proptest::collection::vec(inner, 1..3)), 1..4).prop_map(
            |parts| {
                let mut map = serde_json::Map::new();
                for (keyword, mut schemas) in parts {
                    let value = match keyword {
                        "properties" | "$defs" => {
                            json!({"a": schemas.pop(), "x": schemas.pop()})
                        }
                        "patternProperties" => {
                            json!({"^a": schemas.pop(), "(?=x)": schemas.pop()})
                        }
                        "allOf" | "anyOf" | "oneOf" | "prefixItems" => Value::Array(schemas),
                        _ => schemas.pop().unwrap_or(Value::Bool(true)),
                    };
                    map.insert(keyword.to_owned(), value);
                }
                map.insert("required".into(), json!(["a"]));
                Value::Object(map)
            },
        )
    })
}

/// Inside any item of an array: the item schema of every position decides, the item step itself
/// is never optional, and a fault inside an item is counted after the item's token.
#[test]
fn resolve_each_reads_inside_any_item() {
    let schema = json!({"type": "object", "properties": {"list": {
        "type": "array",
        "prefixItems": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}],
        "items": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}},
                  "required": ["a"], "additionalProperties": false}
    }}, "required": ["list"]});
    let each = |inner: &str| {
        resolve_each(
            &schema,
            &pointer("/list"),
            PointerReading::Pointer,
            &pointer(inner),
        )
    };
    let a = each("/a");
    assert_eq!(a.exists, Yes);
    assert_eq!(a.types, types("integer | string"));
    assert_eq!(a.optional_at, None);
    let b = each("/b");
    assert_eq!(b.exists, Yes);
    assert_eq!(b.optional_at, Some(2));
    // `c` exists in the first position (no additionalProperties there) only.
    assert_eq!(each("/c").exists, Yes);
    let strict = json!({"type": "object", "properties": {"list": {"type": "array",
        "items": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}}}});
    let none = resolve_each(
        &strict,
        &pointer("/list"),
        PointerReading::Pointer,
        &pointer("/c"),
    );
    assert_eq!(none.exists, No);
    assert_eq!(none.fails_at, Some(2));
    // Not an array at all: the item step fails.
    let scalar = json!({"type": "object", "properties": {"list": {"type": "string"}}});
    let none = resolve_each(
        &scalar,
        &pointer("/list"),
        PointerReading::Pointer,
        &pointer(""),
    );
    assert_eq!(none.exists, No);
    assert_eq!(none.fails_at, Some(1));
    // Items of a fixed value are not modelled: unknown, never a false "no".
    let fixed = json!({"const": {"list": [{"a": 1}]}});
    let unknown = resolve_each(
        &fixed,
        &pointer("/list"),
        PointerReading::Pointer,
        &pointer("/z"),
    );
    assert_eq!(unknown.exists, Unknown);
}
