//! Differential test: the typed model reads exactly the tools the generated schema accepts.
//!
//! Tools are assembled from every member a tool can have, each drawn from values the schema
//! accepts and near misses it rejects (wrong types, `null`, fractional and huge numbers, unknown
//! enum values, values newer protocol revisions add). For each, the verdict of a Draft 2020-12
//! validator over `tool.schema.json` must equal the model's: the tool deserializes and every
//! binding of its recovery metadata parses.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{errors, validator};
use mcp_recovery_model::Tool;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

/// A member drawn mostly from values the schema accepts, sometimes from near misses; `None`
/// leaves it out. The weights keep both verdicts common across a whole tool.
fn member(good: Vec<Value>, bad: Vec<Value>) -> BoxedStrategy<Option<Value>> {
    let mut options: Vec<(u32, BoxedStrategy<Option<Value>>)> = vec![(4, Just(None).boxed())];
    if !good.is_empty() {
        options.push((8, select(good).prop_map(Some).boxed()));
    }
    if !bad.is_empty() {
        options.push((1, select(bad).prop_map(Some).boxed()));
    }
    proptest::strategy::Union::new_weighted(options).boxed()
}

/// Like [`member`] for a member built by a strategy.
fn built(good: BoxedStrategy<Value>, bad: Vec<Value>) -> BoxedStrategy<Option<Value>> {
    let mut options: Vec<(u32, BoxedStrategy<Option<Value>>)> =
        vec![(4, Just(None).boxed()), (8, good.prop_map(Some).boxed())];
    if !bad.is_empty() {
        options.push((1, select(bad).prop_map(Some).boxed()));
    }
    proptest::strategy::Union::new_weighted(options).boxed()
}

/// A number spelled exactly as given (`1e3`, `1000.0`).
fn number(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn object(members: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .filter_map(|(key, value)| Some((key.to_owned(), value?)))
            .collect::<Map<String, Value>>(),
    )
}

fn arb_input_schema() -> impl Strategy<Value = Option<Value>> {
    member(
        vec![
            json!({"type": "object"}),
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
        ],
        vec![
            json!({"type": "array"}),
            json!({}),
            json!({"type": "object", "$schema": 5}),
            json!({"type": "object", "properties": []}),
            json!({"type": "object", "required": [1]}),
            json!({"type": "object", "required": "id"}),
            json!(3),
            json!(null),
            json!(true),
        ],
    )
    .prop_map(|schema| schema.or_else(|| Some(json!({"type": "object"}))))
}

fn arb_output_schema() -> impl Strategy<Value = Option<Value>> {
    member(
        vec![
            json!({"type": "object"}),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema"}),
            json!({}),
        ],
        vec![
            json!({"$schema": 3}),
            json!("object"),
            json!(null),
            json!(true),
        ],
    )
}

fn arb_hint() -> impl Strategy<Value = Option<Value>> {
    member(
        vec![json!(true), json!(false)],
        vec![json!("yes"), json!(null), json!(1)],
    )
}

fn arb_sep_binding() -> impl Strategy<Value = Value> {
    prop_oneof![8 => select(vec![
        json!("$response.body#/id"),
        json!("$request.body#/id"),
        json!("$response.body"),
        json!("order-{$request.body#/id}"),
        json!("plain text"),
        json!(5),
        json!(null),
        json!({"nested": [1]}),
    ]), 1 => select(vec![
        json!("$response.body#/id"),
        json!("$request.body#/id"),
        json!("$response.body"),
        json!("order-{$request.body#/id}"),
        json!("plain text"),
        json!(5),
        json!(null),
        json!({"nested": [1]}),
        json!("$response.bdy#/id"),
        json!("$response.body#id"),
        json!("id-{$response.body#/x"),
    ])]
}

fn arb_recovery() -> impl Strategy<Value = Option<Value>> {
    let operation = (
        member(vec![json!("refund")], vec![json!(7), json!(null)]),
        built(
            proptest::collection::vec(arb_sep_binding(), 0..3)
                .prop_map(|bindings| {
                    Value::Object(
                        bindings
                            .into_iter()
                            .enumerate()
                            .map(|(i, b)| (format!("p{i}"), b))
                            .collect(),
                    )
                })
                .boxed(),
            vec![json!("$response.body"), json!(null)],
        ),
        member(vec![json!("x")], vec![]),
    )
        .prop_map(|(operation_id, parameters, extra)| {
            object(vec![
                ("operationId", operation_id),
                ("parameters", parameters),
                ("x-extra", extra),
            ])
        });
    built(
        (
            member(
                vec![
                    json!("compensation"),
                    json!("compensation"),
                    json!("manual-only"),
                    json!("retry-elsewhere"),
                ],
                vec![json!(1), json!(null)],
            ),
            built(operation.boxed(), vec![json!(5)]),
        )
            .prop_map(|(strategy, operation)| {
                object(vec![
                    ("strategy", strategy),
                    ("compensatingOperation", operation),
                ])
            })
            .boxed(),
        vec![json!("compensation"), json!(null)],
    )
}

fn arb_count() -> impl Strategy<Value = Option<Value>> {
    member(
        vec![
            number("1000"),
            number("1000.0"),
            number("1e3"),
            number("4294967296"),
            number("18446744073709551615"),
            number("0"),
        ],
        vec![
            number("-1"),
            number("1.5"),
            number("2.5e-1"),
            json!("5"),
            json!(null),
        ],
    )
}

fn arb_compensate() -> impl Strategy<Value = Option<Value>> {
    let call = (
        member(vec![json!("undo")], vec![json!(3)]),
        member(
            vec![
                json!({"id": "$.input.id"}),
                json!({"id": "$.output.structuredContent.id", "all": "$.output.structuredContent"}),
                json!({"id": "$ .input .id"}),
                json!({"id": "$['input']['a b']"}),
                json!({}),
            ],
            vec![
                json!({"id": 3}),
                json!({"id": "$.input[0]"}),
                json!({"id": "$.output.content"}),
                json!({"id": "$.input.id "}),
                json!([]),
            ],
        ),
        arb_count(),
        arb_count(),
    )
        .prop_map(|(tool_name, mapping, timeout, retries)| {
            object(vec![
                ("toolName", tool_name),
                ("parameterMapping", mapping),
                ("timeoutMs", timeout),
                ("maxRetries", retries),
            ])
        });
    built(
        (
            member(
                vec![
                    json!("compensable"),
                    json!("compensable"),
                    json!("readonly"),
                    json!("irreversible"),
                ],
                vec![json!("partial"), json!(null)],
            ),
            built(call.boxed(), vec![json!(null)]),
            member(
                vec![json!(["payments"])],
                vec![json!("payments"), json!([1]), json!(null)],
            ),
            member(vec![json!("n")], vec![json!(3)]),
        )
            .prop_map(|(reversibility, compensation, scope, notes)| {
                object(vec![
                    ("reversibility", reversibility),
                    ("compensation", compensation),
                    ("sideEffectScope", scope),
                    ("notes", notes),
                ])
            })
            .boxed(),
        vec![],
    )
}

fn arb_annotations() -> impl Strategy<Value = Option<Value>> {
    built(
        (
            arb_hint(),
            arb_hint(),
            arb_hint(),
            arb_hint(),
            member(vec![json!("T")], vec![json!(2)]),
            arb_recovery(),
            member(vec![json!("low"), json!(null)], vec![]),
        )
            .prop_map(|(r, d, i, o, title, recovery, extra)| {
                object(vec![
                    ("readOnlyHint", r),
                    ("destructiveHint", d),
                    ("idempotentHint", i),
                    ("openWorldHint", o),
                    ("title", title),
                    ("recovery", recovery),
                    ("x-risk", extra),
                ])
            })
            .boxed(),
        vec![json!(null), json!([])],
    )
}

fn arb_meta() -> impl Strategy<Value = Option<Value>> {
    built(
        (arb_compensate(), member(vec![json!(1)], vec![]))
            .prop_map(|(compensate, other)| {
                object(vec![
                    ("dev.chronomcp/compensate", compensate),
                    ("example.com/other", other),
                ])
            })
            .boxed(),
        vec![json!(null), json!("meta")],
    )
}

fn arb_icons() -> impl Strategy<Value = Option<Value>> {
    member(
        vec![
            json!([]),
            json!([{"src": "a.png"}]),
            json!([{"src": "a.png", "theme": "dark", "sizes": ["48x48"], "mimeType": "image/png"}]),
            json!([{"src": "a.png", "theme": "high-contrast"}]),
        ],
        vec![
            json!([{"src": "a.png", "theme": 3}]),
            json!([{"sizes": []}]),
            json!([{"src": "a.png", "sizes": "48x48"}]),
            json!([{"src": "a.png", "mimeType": null}]),
            json!("a.png"),
            json!(null),
        ],
    )
}

fn arb_execution() -> impl Strategy<Value = Option<Value>> {
    member(
        vec![
            json!({}),
            json!({"taskSupport": "optional"}),
            json!({"taskSupport": "always"}),
            json!({"x-mode": "fast"}),
        ],
        vec![
            json!({"taskSupport": 1}),
            json!({"taskSupport": null}),
            json!(3),
            json!(null),
        ],
    )
}

prop_compose! {
    fn arb_tool()(
        name in member(vec![json!("t")], vec![json!(3), json!(null)])
            .prop_map(|name| name.or_else(|| Some(json!("t")))),
        text in (member(vec![json!("T")], vec![json!(1), json!(null)]), member(vec![json!("D")], vec![json!(false)])),
        schemas in (arb_input_schema(), arb_output_schema()),
        annotations in arb_annotations(),
        meta in arb_meta(),
        icons in arb_icons(),
        execution in arb_execution(),
        extra in member(vec![json!({"kept": true})], vec![]),
    ) -> Value {
        object(vec![
            ("name", name),
            ("title", text.0),
            ("description", text.1),
            ("inputSchema", schemas.0),
            ("outputSchema", schemas.1),
            ("annotations", annotations),
            ("_meta", meta),
            ("icons", icons),
            ("execution", execution),
            ("x-vendor", extra),
        ])
    }
}

/// The model's verdict: the tool deserializes and every binding it declares parses.
fn model_accepts(tool: &Value) -> Result<(), String> {
    let typed: Tool = serde_json::from_value(tool.clone()).map_err(|e| e.to_string())?;
    for declared in typed.declared_recovery() {
        for binding in declared.compensation.iter().flat_map(|c| &c.bindings) {
            if let Err(e) = &binding.binding {
                return Err(format!("binding {}: {e}", binding.parameter));
            }
        }
    }
    Ok(())
}

static SCHEMA: std::sync::LazyLock<jsonschema::Validator> =
    std::sync::LazyLock::new(|| validator(mcp_recovery_schema::TOOL_SCHEMA));

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn the_model_reads_exactly_what_the_schema_accepts(tool in arb_tool()) {
        let schema = &*SCHEMA;
        let by_schema = schema.is_valid(&tool);
        let by_model = model_accepts(&tool);
        prop_assert_eq!(
            by_schema,
            by_model.is_ok(),
            "{}\nschema: {:?}\nmodel: {:?}",
            tool,
            errors(schema, &tool),
            by_model
        );
    }
}

#[test]
fn the_generator_reaches_both_verdicts() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = arb_tool();
    let mut accepted = 0;
    for _ in 0..400 {
        let tool = strategy.new_tree(&mut runner).unwrap().current();
        accepted += usize::from(SCHEMA.is_valid(&tool));
    }
    assert!((20..380).contains(&accepted), "{accepted} of 400 accepted");
}

#[test]
fn the_reported_disagreements_are_settled() {
    let schema = validator(mcp_recovery_schema::TOOL_SCHEMA);
    let base = |compensation: Value| {
        json!({
            "name": "t",
            "inputSchema": {"type": "object"},
            "_meta": {"dev.chronomcp/compensate": {
                "reversibility": "compensable",
                "compensation": compensation
            }}
        })
    };
    for text in ["1000.0", "3.0", "4294967296", "1e3"] {
        let tool = base(json!({
            "toolName": "u",
            "parameterMapping": {},
            "timeoutMs": number(text),
            "maxRetries": number(text)
        }));
        assert!(schema.is_valid(&tool), "{text}");
        assert_eq!(model_accepts(&tool), Ok(()), "{text}");
    }
    let unknown = json!({
        "name": "t",
        "inputSchema": {"type": "object"},
        "annotations": {"recovery": {"strategy": "manual-only"}}
    });
    assert!(schema.is_valid(&unknown));
    assert_eq!(model_accepts(&unknown), Ok(()));
}
