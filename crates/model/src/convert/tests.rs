use super::*;
use serde_json::json;

fn sep_tool(parameters: Value) -> Value {
    json!({
        "name": "charge_payment",
        "description": "Charges a card.",
        "inputSchema": {"type": "object"},
        "x-vendor": {"kept": true},
        "annotations": {"recovery": {
            "strategy": "compensation",
            "compensatingOperation": {"operationId": "refund_payment", "parameters": parameters}
        }}
    })
}

fn compensate_tool(entry: Value) -> Value {
    json!({
        "name": "charge_payment",
        "inputSchema": {"type": "object"},
        "_meta": {"dev.chronomcp/compensate": entry}
    })
}

fn pointers(notes: &[ConversionNote]) -> Vec<(&str, NoteKind)> {
    notes.iter().map(|n| (n.pointer.as_str(), n.kind)).collect()
}

/// Asserts that the notes point at `base` followed by each suffix, in order, all of `kind`.
fn assert_notes(notes: &[ConversionNote], base: &str, suffixes: &[&str], kind: NoteKind) {
    let expected: Vec<String> = suffixes.iter().map(|s| format!("{base}{s}")).collect();
    let got: Vec<&str> = notes.iter().map(|n| n.pointer.as_str()).collect();
    assert_eq!(got, expected);
    assert!(notes.iter().all(|n| n.kind == kind), "{notes:?}");
}

#[test]
fn sep_to_compensate_moves_the_declaration() {
    let tool = sep_tool(json!({
        "transactionId": "$response.body#/transactionId",
        "whole": "$response.body",
        "nested": "$request.body#/order/id",
        "odd": "$request.body#/a b/x~1y"
    }));
    let Conversion {
        tool: converted,
        notes,
    } = convert_tool(&tool, Carrier::Compensate);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(
        converted,
        json!({
            "name": "charge_payment",
            "description": "Charges a card.",
            "inputSchema": {"type": "object"},
            "x-vendor": {"kept": true},
            "_meta": {"dev.chronomcp/compensate": {
                "reversibility": "compensable",
                "compensation": {"toolName": "refund_payment", "parameterMapping": {
                    "transactionId": "$.output.structuredContent.transactionId",
                    "whole": "$.output.structuredContent",
                    "nested": "$.input.order.id",
                    "odd": "$.input['a b']['x/y']"
                }}
            }}
        })
    );
    let back = convert_tool(&converted, Carrier::Sep3172);
    assert!(back.notes.is_empty(), "{:?}", back.notes);
    assert_eq!(back.tool, tool);
}

#[test]
fn compensate_to_sep_round_trips() {
    let tool = compensate_tool(json!({
        "reversibility": "compensable",
        "compensation": {"toolName": "refund_payment", "parameterMapping": {
            "transactionId": "$.output.structuredContent.transactionId",
            "all": "$.output.structuredContent",
            "source": "$.input['file name']"
        }}
    }));
    let there = convert_tool(&tool, Carrier::Sep3172);
    assert!(there.notes.is_empty(), "{:?}", there.notes);
    assert_eq!(
        there.tool["annotations"]["recovery"]["compensatingOperation"]["parameters"],
        json!({
            "transactionId": "$response.body#/transactionId",
            "all": "$response.body",
            "source": "$request.body#/file name"
        })
    );
    assert!(there.tool.get("_meta").is_none());
    let back = convert_tool(&there.tool, Carrier::Compensate);
    assert_eq!(back.tool, tool);
}

#[test]
fn member_order_is_kept_where_the_containers_stay() {
    let text = r#"{"name":"t","annotations":{"readOnlyHint":false,"recovery":{"strategy":"compensation","compensatingOperation":{"operationId":"u","parameters":{"id":"$response.body#/id"}}}},"_meta":{"z":1},"inputSchema":{"type":"object"}}"#;
    let tool: Value = serde_json::from_str(text).unwrap();
    let there = convert_tool(&tool, Carrier::Compensate).tool;
    assert_eq!(
        there.to_string(),
        r#"{"name":"t","annotations":{"readOnlyHint":false},"_meta":{"z":1,"dev.chronomcp/compensate":{"reversibility":"compensable","compensation":{"toolName":"u","parameterMapping":{"id":"$.output.structuredContent.id"}}}},"inputSchema":{"type":"object"}}"#
    );
    let back = convert_tool(&there, Carrier::Sep3172).tool;
    assert_eq!(back.to_string(), text);
}

#[test]
fn inexpressible_sep_bindings_leave_the_tool_unchanged() {
    let tool = sep_tool(json!({
        "transactionId": "$response.body#/transactionId",
        "reason": "rollback",
        "memo": "undo {$request.body#/order}",
        "everything": "$request.body",
        "etag": "$response.header.ETag",
        "bad": "$response.bdy"
    }));
    let conversion = convert_tool(&tool, Carrier::Compensate);
    assert_eq!(conversion.tool, tool);
    assert_notes(
        &conversion.notes,
        "/annotations/recovery/compensatingOperation/parameters/",
        &["reason", "memo", "everything", "etag", "bad"],
        NoteKind::NotConverted,
    );
    let messages: Vec<String> = conversion.notes.iter().map(ToString::to_string).collect();
    assert!(
        messages[0].starts_with("charge_payment: /annotations/"),
        "{}",
        messages[0]
    );
    assert!(
        messages[0].contains("constant \"rollback\""),
        "{}",
        messages[0]
    );
    assert!(messages[1].contains("template"), "{}", messages[1]);
    assert!(
        messages[2].contains("whole arguments object"),
        "{}",
        messages[2]
    );
    assert!(
        messages[3].contains("$response.header.ETag"),
        "{}",
        messages[3]
    );
    assert!(messages[4].contains("malformed"), "{}", messages[4]);
}

#[test]
fn unknown_strategy_and_malformed_recovery_are_reported() {
    let mut tool = sep_tool(json!({}));
    tool["annotations"]["recovery"]["strategy"] = json!("manual-only");
    let conversion = convert_tool(&tool, Carrier::Compensate);
    assert_eq!(conversion.tool, tool);
    assert_eq!(
        pointers(&conversion.notes),
        [("/annotations/recovery/strategy", NoteKind::NotConverted)]
    );
    tool["annotations"]["recovery"] = json!({"strategy": "compensation"});
    let conversion = convert_tool(&tool, Carrier::Compensate);
    assert_eq!(conversion.tool, tool);
    assert_eq!(
        pointers(&conversion.notes),
        [("/annotations/recovery", NoteKind::NotConverted)]
    );
}

#[test]
fn unknown_sep_fields_keep_the_source() {
    let mut tool = sep_tool(json!({"id": "$response.body#/id"}));
    tool["annotations"]["recovery"]["x-note"] = json!("hi");
    let conversion = convert_tool(&tool, Carrier::Compensate);
    assert_eq!(conversion.tool["annotations"], tool["annotations"]);
    assert_eq!(
        conversion.tool["_meta"]["dev.chronomcp/compensate"]["compensation"]["parameterMapping"],
        json!({"id": "$.output.structuredContent.id"})
    );
    assert_eq!(
        pointers(&conversion.notes),
        [("/annotations/recovery/x-note", NoteKind::KeptInSource)]
    );
}

#[test]
fn reversibility_without_sep_counterpart_is_not_converted() {
    for (entry, needle) in [
        (
            json!({"reversibility": "irreversible", "notes": "email"}),
            "irreversible",
        ),
        (json!({"reversibility": "readonly"}), "readOnlyHint"),
        (
            json!({"reversibility": "compensable"}),
            "without a compensation",
        ),
        (json!({"reversibility": "sometimes"}), "malformed"),
        (
            json!({"reversibility": "compensable", "compensation": {"toolName": "u", "parameterMapping": {"id": "$.output.content[0]"}}}),
            "malformed binding",
        ),
    ] {
        let tool = compensate_tool(entry.clone());
        let conversion = convert_tool(&tool, Carrier::Sep3172);
        assert_eq!(conversion.tool, tool, "{entry}");
        assert_eq!(conversion.notes.len(), 1, "{entry}");
        assert_eq!(conversion.notes[0].kind, NoteKind::NotConverted);
        assert!(
            conversion.notes[0].message.contains(needle),
            "{}",
            conversion.notes[0]
        );
    }
}

#[test]
fn compensate_extras_keep_the_meta_entry() {
    let tool = compensate_tool(json!({
        "reversibility": "compensable",
        "compensation": {"toolName": "u", "parameterMapping": {"id": "$.input.id"}, "timeoutMs": 500, "maxRetries": 2},
        "sideEffectScope": ["payments"],
        "notes": "refunds take a day"
    }));
    let conversion = convert_tool(&tool, Carrier::Sep3172);
    assert_eq!(conversion.tool["_meta"], tool["_meta"]);
    assert_eq!(
        conversion.tool["annotations"],
        json!({"recovery": {"strategy": "compensation", "compensatingOperation": {"operationId": "u", "parameters": {"id": "$request.body#/id"}}}})
    );
    assert_notes(
        &conversion.notes,
        "/_meta/dev.chronomcp~1compensate",
        &[
            "/compensation/timeoutMs",
            "/compensation/maxRetries",
            "/sideEffectScope",
            "/notes",
        ],
        NoteKind::KeptInSource,
    );
    // Converting again changes nothing: the carriers now agree and the extras still need _meta.
    let again = convert_tool(&conversion.tool, Carrier::Sep3172);
    assert_eq!(again.tool, conversion.tool);
}

#[test]
fn existing_targets_are_never_overwritten() {
    let mut tool = sep_tool(json!({"id": "$response.body#/id"}));
    tool["_meta"] = json!({"dev.chronomcp/compensate": {"reversibility": "compensable",
        "compensation": {"toolName": "u", "parameterMapping": {"id": "$.input.id"}}}});
    for to in [Carrier::Compensate, Carrier::Sep3172] {
        let conversion = convert_tool(&tool, to);
        assert_eq!(conversion.tool, tool);
        assert_eq!(conversion.notes.len(), 1);
        assert!(
            conversion.notes[0].message.contains("R116"),
            "{}",
            conversion.notes[0]
        );
    }
    // Agreeing carriers: the redundant source goes.
    tool["_meta"]["dev.chronomcp/compensate"]["compensation"] = json!({"toolName": "refund_payment", "parameterMapping": {"id": "$.output.structuredContent.id"}});
    let conversion = convert_tool(&tool, Carrier::Compensate);
    assert!(conversion.notes.is_empty());
    assert!(conversion.tool.get("annotations").is_none());
    assert_eq!(conversion.tool["_meta"], tool["_meta"]);
    let conversion = convert_tool(&tool, Carrier::Sep3172);
    assert!(conversion.tool.get("_meta").is_none());
    assert_eq!(conversion.tool["annotations"], tool["annotations"]);
}

#[test]
fn tools_without_recovery_are_untouched() {
    for tool in [
        json!({"name": "a", "inputSchema": {"type": "object"}}),
        json!("not a tool"),
        json!(null),
    ] {
        for to in [Carrier::Sep3172, Carrier::Compensate] {
            let conversion = convert_tool(&tool, to);
            assert_eq!(conversion.tool, tool);
            assert!(conversion.notes.is_empty());
        }
    }
}

#[test]
fn documents_keep_their_shape_and_notes_point_into_them() {
    let good = sep_tool(json!({"id": "$response.body#/id"}));
    let bad = sep_tool(json!({"id": 5}));
    for (document, base) in [
        (
            json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [good, bad], "nextCursor": "c"}}),
            "/result/tools",
        ),
        (json!({"tools": [good, bad], "_meta": {"k": 1}}), "/tools"),
        (json!([good, bad]), ""),
    ] {
        let converted = convert_document(&document, Carrier::Compensate).unwrap();
        let tools = converted.document.pointer(base).unwrap();
        assert!(tools[0].get("annotations").is_none());
        assert_eq!(tools[1], bad);
        assert_eq!(converted.notes.len(), 1);
        assert_eq!(
            converted.notes[0].pointer,
            format!("{base}/1/annotations/recovery/compensatingOperation/parameters/id")
        );
        let mut expected = document.clone();
        let mut without_tools = converted.document.clone();
        for value in [&mut expected, &mut without_tools] {
            if let Some(Value::Array(t)) = value.pointer_mut(base) {
                t.clear();
            }
        }
        assert_eq!(without_tools, expected, "everything but the tools is kept");
    }
    assert_eq!(
        convert_document(
            &json!({"jsonrpc": "2.0", "id": 1, "error": {}}),
            Carrier::Sep3172
        ),
        Err(LocateError::JsonRpcError { error: json!({}) })
    );
    assert_eq!(
        convert_document(&json!({"tool": []}), Carrier::Sep3172).map(|_| ()),
        Err(LocateError::UnknownObject {
            keys: vec!["tool".to_owned()],
            more: false
        })
    );
    assert_eq!(
        convert_document(&json!(4), Carrier::Sep3172).map(|_| ()),
        Err(LocateError::NotAContainer { found: "integer" })
    );
}

#[test]
fn array_index_tokens_have_no_counterpart() {
    for pointer in ["/items/0/id", "/items/-", "/12"] {
        let binding = format!("$response.body#{pointer}");
        let tool = sep_tool(json!({ "id": binding }));
        let conversion = convert_tool(&tool, Carrier::Compensate);
        assert_eq!(conversion.tool, tool, "{pointer}");
        assert_eq!(conversion.notes.len(), 1, "{pointer}");
        assert_eq!(conversion.notes[0].kind, NoteKind::NotConverted);
        assert!(conversion.notes[0].message.contains("index an array"));
    }
    for path in ["$.output.structuredContent.items['0'].id", "$.input['7']"] {
        let tool = json!({
            "name": "t",
            "inputSchema": {"type": "object"},
            "_meta": {"dev.chronomcp/compensate": {
                "reversibility": "compensable",
                "compensation": {"toolName": "u", "parameterMapping": {"id": path}}
            }}
        });
        let conversion = convert_tool(&tool, Carrier::Sep3172);
        assert_eq!(conversion.tool, tool, "{path}");
        assert_eq!(conversion.notes.len(), 1, "{path}");
        assert_eq!(conversion.notes[0].kind, NoteKind::NotConverted);
    }
}

#[test]
fn carrier_names() {
    for carrier in [Carrier::Sep3172, Carrier::Compensate] {
        assert_eq!(carrier.cli_name().parse::<Carrier>(), Ok(carrier));
    }
    assert!("openapi".parse::<Carrier>().is_err());
}

proptest::proptest! {
    #[test]
    fn expressible_declarations_round_trip(
        bindings in proptest::collection::vec(
            (".{1,6}", proptest::bool::ANY, proptest::collection::vec(".{0,5}", 0..3)),
            0..4,
        ),
    ) {
        let mut parameters = Map::new();
        for (parameter, response, tokens) in bindings {
            // Tokens that may index an array have no counterpart (see `array_like`).
            let tokens: Vec<String> = tokens
                .into_iter()
                .map(|t| if t == "-" || crate::array_index(&t).is_some() { format!("k{t}") } else { t })
                .collect();
            let expression = if response {
                if tokens.is_empty() {
                    "$response.body".to_owned()
                } else {
                    RuntimeExpression::body(BodySide::Response, crate::JsonPointer::from_tokens(tokens)).to_string()
                }
            } else {
                let tokens = if tokens.is_empty() { vec!["id".to_owned()] } else { tokens };
                RuntimeExpression::body(BodySide::Request, crate::JsonPointer::from_tokens(tokens)).to_string()
            };
            parameters.insert(parameter, Value::String(expression));
        }
        let tool = sep_tool(Value::Object(parameters));
        let there = convert_tool(&tool, Carrier::Compensate);
        proptest::prop_assert!(there.notes.is_empty(), "{:?}", there.notes);
        proptest::prop_assert!(there.tool.get("annotations").is_none());
        let back = convert_tool(&there.tool, Carrier::Sep3172);
        proptest::prop_assert!(back.notes.is_empty(), "{:?}", back.notes);
        proptest::prop_assert_eq!(&back.tool, &tool);
        let again = convert_tool(&back.tool, Carrier::Compensate);
        proptest::prop_assert_eq!(again.tool, there.tool);
    }
}
