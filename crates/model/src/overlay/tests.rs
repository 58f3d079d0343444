use super::*;
use crate::overlay_file::*;
use serde_json::json;

fn list() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "create", "inputSchema": {"type": "object"}},
        {"name": "delete", "inputSchema": {"type": "object"},
         "annotations": {"destructiveHint": true}}
    ]}})
}

#[test]
fn json_and_toml_read_alike() {
    let json = Overlay::parse(
        r#"{"server": "s", "tools": {"create": {"annotations": {"idempotentHint": false}}}}"#,
        OverlayFormat::Json,
    )
    .unwrap();
    let toml = Overlay::parse(
        "server = \"s\"\n[tools.create.annotations]\nidempotentHint = false\n",
        OverlayFormat::Toml,
    )
    .unwrap();
    assert_eq!(json.server(), Some("s"));
    assert_eq!(json.tools, toml.tools);
    assert!(json.spans().is_none());
    let spans = toml.spans().unwrap();
    let at = &spans["/tools/create/annotations/idempotentHint"];
    assert_eq!(
        &"server = \"s\"\n[tools.create.annotations]\nidempotentHint = false\n"[at.value.clone()],
        "false"
    );
}

#[test]
fn applies_and_reports() {
    let overlay = Overlay::parse(
        r#"{"tools": {
            "create": {"annotations": {"idempotentHint": false}},
            "delete": {"annotations": {"destructiveHint": false, "idempotentHint": true}},
            "missing": {"annotations": {"readOnlyHint": true}}
        }}"#,
        OverlayFormat::Json,
    )
    .unwrap();
    let mut document = list();
    let applied = overlay.apply(&mut document);
    assert_eq!(
        document["result"]["tools"][0]["annotations"]["idempotentHint"],
        false
    );
    assert_eq!(
        document["result"]["tools"][1]["annotations"]["destructiveHint"],
        true
    );
    assert_eq!(
        document["result"]["tools"][1]["annotations"]["idempotentHint"],
        true
    );
    assert_eq!(applied.origins.len(), 2);
    assert_eq!(
        applied.issues,
        vec![
            OverlayIssue::Conflict {
                tool: "delete".into(),
                field: "/annotations/destructiveHint".into(),
                overlay_pointer: "/tools/delete/annotations/destructiveHint".into(),
                document_pointer: "/result/tools/1/annotations/destructiveHint".into(),
            },
            OverlayIssue::UnknownTool {
                tool: "missing".into(),
                overlay_pointer: "/tools/missing".into()
            },
        ]
    );
    assert_eq!(
        applied
            .overlay_pointer_of("/result/tools/1/annotations/idempotentHint")
            .as_deref(),
        Some("/tools/delete/annotations/idempotentHint")
    );
    assert_eq!(
        applied.overlay_pointer_of("/result/tools/1/annotations/idempotentHintX"),
        None
    );
    assert_eq!(
        applied.overlay_pointer_of("/result/tools/1/annotations"),
        None
    );
}

#[test]
fn equal_carriers_in_other_spellings_do_not_conflict() {
    let mut document = json!([{"name": "t", "inputSchema": {"type": "object"},
        "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
            "compensation": {"toolName": "u", "parameterMapping": {"id": "$.output.structuredContent.id"}}}}}]);
    let overlay = Overlay::parse(
        r#"{"tools": {"t": {"_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
            "compensation": {"toolName": "u", "parameterMapping": {"id": "$['output'].structuredContent.id"},
            "maxRetries": 2}}}}}}"#,
        OverlayFormat::Json,
    )
    .unwrap();
    let applied = overlay.apply(&mut document);
    assert!(applied.issues.is_empty(), "{:?}", applied.issues);
    assert!(applied.origins.is_empty());
}

#[test]
fn structural_errors_name_the_pointer() {
    let cases = [
        (r#"[]"#, ""),
        (r#"{"tool": {}}"#, "/tool"),
        (r#"{"server": 1, "tools": {}}"#, "/server"),
        (r#"{"server": "x"}"#, "/tools"),
        (r#"{"tools": {"a/b": 3}}"#, "/tools/a~1b"),
        (
            r#"{"tools": {"a": {"inputSchema": {}}}}"#,
            "/tools/a/inputSchema",
        ),
        (
            r#"{"tools": {"a": {"annotations": []}}}"#,
            "/tools/a/annotations",
        ),
        (
            r#"{"tools": {"a": {"annotations": {"readonlyHint": true}}}}"#,
            "/tools/a/annotations/readonlyHint",
        ),
        (
            r#"{"tools": {"a": {"_meta": {"x": 1}}}}"#,
            "/tools/a/_meta/x",
        ),
    ];
    for (text, pointer) in cases {
        let error = Overlay::parse(text, OverlayFormat::Json).unwrap_err();
        assert_eq!(error.pointer, pointer, "{text}: {error}");
    }
    let error = Overlay::parse("tools = [", OverlayFormat::Toml).unwrap_err();
    assert!(error.span.is_some(), "{error}");
    let error = Overlay::parse("{", OverlayFormat::Json).unwrap_err();
    assert!(error.message.contains("line 1"), "{error}");
}

#[test]
fn format_from_name() {
    assert_eq!(
        OverlayFormat::from_file_name("a/MEM.TOML"),
        OverlayFormat::Toml
    );
    assert_eq!(OverlayFormat::from_file_name("a.json"), OverlayFormat::Json);
    assert_eq!(OverlayFormat::from_file_name("-"), OverlayFormat::Json);
}

#[test]
fn other_shapes_report_every_tool_unknown() {
    let overlay = Overlay::parse(r#"{"tools": {"a": {}}}"#, OverlayFormat::Json).unwrap();
    let mut document = json!({"prompts": []});
    let applied = overlay.apply(&mut document);
    assert_eq!(applied.issues.len(), 1);
}

#[test]
fn a_member_written_twice_is_refused() {
    let entry = |binding: &str| {
        format!(
            r#"{{"annotations": {{"recovery": {{"strategy": "compensation", "compensatingOperation": {{"operationId": "delete_note", "parameters": {{"noteId": "{binding}"}}}}}}}}}}"#
        )
    };
    let text = format!(
        r#"{{"tools": {{"create_note": {}, "create_note": {}}}}}"#,
        entry("$response.body#/noteId"),
        entry("$request.body#/text")
    );
    let error = Overlay::parse(&text, OverlayFormat::Json).unwrap_err();
    assert!(error.message.contains("member name twice"), "{error}");
    assert!(
        Overlay::parse(
            &text.replacen("create_note", "create_other", 1),
            OverlayFormat::Json
        )
        .is_ok()
    );
}

#[test]
fn toml_values_json_cannot_hold_are_refused_where_they_are() {
    for (value, what) in [
        ("1979-05-27T07:32:00Z", "date-time"),
        ("nan", "float"),
        ("-inf", "float"),
        ("[1, 07:32:00]", "date-time"),
    ] {
        let text = format!(
            "[tools.create_note.annotations.recovery]\nstrategy = \"compensation\"\n\
             compensatingOperation = {{operationId = \"delete_note\", parameters = {{extra = {value}}}}}\n"
        );
        let error = Overlay::parse(&text, OverlayFormat::Toml).unwrap_err();
        assert!(error.message.contains(what), "{value}: {error}");
        assert!(
            error.pointer.starts_with(
                "/tools/create_note/annotations/recovery/compensatingOperation/parameters/extra"
            ),
            "{value}: {}",
            error.pointer
        );
        assert!(error.span.is_some(), "{value}");
    }
}
